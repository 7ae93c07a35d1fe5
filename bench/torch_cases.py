"""The PyTorch peer of each tickgrad benchmark case: same shapes, same threads, warm-up, median.

Usage: python bench/torch_cases.py CASE [--threads N] [--warmup N] [--reps N] [--compile]
Prints "CASE MEDIAN_US", or "CASE unavailable: REASON" when --compile cannot run here.
"""
import argparse
import statistics
import sys
import time

import torch


def mlp_step(compile_):
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(64, 256)
    y = torch.randn(64, 3)
    loss_fn = torch.nn.functional.mse_loss

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    if compile_:
        fwd = torch.compile(lambda: loss_fn(model(x), y))

        def step():  # noqa: F811  (compiled forward+loss; backward through the compiled graph)
            opt.zero_grad(set_to_none=True)
            loss = fwd()
            loss.backward()
            opt.step()
            return loss
    return step


CASES = {"mlp_step": mlp_step}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--compile", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    try:
        step = CASES[a.case](a.compile)
        for _ in range(a.warmup):
            step()
    except Exception as e:  # torch.compile needs a C++ toolchain and may fail; report, do not hide
        print(f"{a.case} unavailable: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
        return 0
    times = []
    for _ in range(a.reps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e6)
    print(f"{a.case} {statistics.median(times):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
