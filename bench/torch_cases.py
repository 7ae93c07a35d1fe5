"""The PyTorch peer of each tickgrad benchmark case: same shapes, same threads, warm-up, median.

Usage: python bench/torch_cases.py CASE [--threads N] [--warmup N] [--reps N] [--compile]
                                        [--device cpu|cuda] [--batch N]
Prints "CASE MEDIAN_US", or "CASE unavailable: REASON" when the case cannot run here (--compile
without a working toolchain, --device cuda without a usable GPU); that is not a failure (exit 0).

--device cpu (the default) is the CPU case mlp_step: a fixed batch, as before. --device cuda is the
peer of tickgrad's mlp_step_cuda_*: the model, a table of 65536 rows and the batch draws
(torch.randint on the device + index_select) all on the GPU, and each timed step ends with
loss.item(), which waits for the GPU, as tickgrad's step reads its loss back.
"""
import argparse
import statistics
import sys
import time

import torch

TABLE_ROWS = 65536


def mlp_step(compile_, device="cpu", batch=64):
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 3)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.functional.mse_loss
    if device == "cpu":
        x = torch.randn(batch, 256)
        y = torch.randn(batch, 3)

        def data():
            return x, y
    else:  # resident table, batch rows drawn on the device: no host-to-device copy per step
        xt = torch.randn(TABLE_ROWS, 256, device=device)
        yt = torch.randn(TABLE_ROWS, 3, device=device)

        def data():
            idx = torch.randint(0, TABLE_ROWS, (batch,), device=device)
            return xt.index_select(0, idx), yt.index_select(0, idx)

    fwd = (lambda xb, yb: loss_fn(model(xb), yb))
    if compile_:  # compiled forward+loss; backward through the compiled graph
        fwd = torch.compile(fwd)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = fwd(*data())
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
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--batch", type=int, default=64)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    cuda = a.device == "cuda"
    if cuda:
        if not torch.cuda.is_available():
            print(f"{a.case} unavailable: no CUDA (torch {torch.__version__} built for CUDA "
                  f"{torch.version.cuda or 'none'})")
            return 0
        torch.set_float32_matmul_precision("highest")  # plain FP32 GEMMs (no TF32), as tickgrad's cuBLAS calls
        print(f"# torch {torch.__version__} on {torch.cuda.get_device_name(0)}", file=sys.stderr)
    try:
        step = CASES[a.case](a.compile, a.device, a.batch)
        for _ in range(a.warmup):
            loss = step()
        if cuda:
            loss.item()
    except Exception as e:  # torch.compile needs a C++ toolchain and may fail; report, do not hide
        print(f"{a.case} unavailable: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
        return 0
    times = []
    for _ in range(a.reps):
        t0 = time.perf_counter()
        loss = step()
        if cuda:
            loss.item()  # waits for the step's kernels, as tickgrad's tg_step_run reads the loss back
        times.append((time.perf_counter() - t0) * 1e6)
    print(f"{a.case} {statistics.median(times):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
