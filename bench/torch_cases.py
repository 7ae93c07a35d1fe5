"""The PyTorch peer of each tickgrad benchmark case: same shapes, same threads, warm-up, median.

Usage: python bench/torch_cases.py CASE [--threads N] [--warmup N] [--reps N] [--compile] [--autocast]
                                        [--device cpu|cuda] [--batch N]
Prints "CASE MEDIAN_US", or "CASE unavailable: REASON" when the case cannot run here (--compile
without a working toolchain, --device cuda without a usable GPU); that is not a failure (exit 0).

--autocast: mixed precision as PyTorch's AMP docs describe it for the CPU: the forward and the loss under
torch.autocast(device, dtype=torch.bfloat16) (autocast picks the ops that run in bf16: matmuls, linears, the
LSTM; losses and reductions stay fp32), backward outside it, the optimizer on the fp32 parameters (the master
weights; bf16 needs no GradScaler). Without it every case runs fp32 eager, as before.

--device cpu (the default) is the CPU case mlp_step: a fixed batch, as before. --device cuda is the
peer of tickgrad's mlp_step_cuda_*: the model, a table of 65536 rows and the batch draws
(torch.randint on the device + index_select) all on the GPU, and each timed step ends with
loss.item(), which waits for the GPU, as tickgrad's step reads its loss back.
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))

TABLE_ROWS = 65536


def amp(fwd, autocast, device="cpu"):
    """fwd under torch.autocast(device, bfloat16) when autocast, else fwd itself."""
    if not autocast:
        return fwd

    def fwd_bf16(*args):
        with torch.autocast(device, dtype=torch.bfloat16):
            return fwd(*args)
    return fwd_bf16


def mlp_step(compile_, device="cpu", batch=64, autocast=False):
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
    fwd = amp(fwd, autocast, device)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = fwd(*data())
        loss.backward()
        opt.step()
        return loss
    return step


N_PAST, N_FUTURE, HORIZONS = 16, 4, 8  # as bench/bench_forecast_step.c


def forecast_step(model, inputs, target, quantiles, compile_, autocast=False):
    """One training step: forward, tickgrad's pinball loss, backward, clip 1.0, Adam (as tickgrad's case)."""
    import tft  # reference/tft.py: pinball_loss is tg_pinball_loss's definition
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    fwd = (lambda: tft.pinball_loss(model(*inputs), target, quantiles))
    if compile_:
        fwd = torch.compile(fwd)
    fwd = amp(fwd, autocast, inputs[0].device.type)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = fwd()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss
    return step


def bf16_lstm_works(device):
    """Whether torch's fused LSTM runs under bf16 autocast here (on the CPU oneDNN's bf16 LSTM needs AVX-512)."""
    import tft
    lstm = tft.LSTM(4, 4).to(device)
    lstm.fused = True
    torch.nn.init.normal_(lstm.w_ih)
    torch.nn.init.normal_(lstm.w_hh)
    x, h = torch.randn(2, 3, 4, device=device), torch.zeros(2, 4, device=device)
    try:
        with torch.autocast(device, dtype=torch.bfloat16):
            lstm(x, h, h)
        return True
    except RuntimeError as e:
        print(f"# tft_step --autocast: torch's bf16 LSTM fails here ({str(e).splitlines()[0][:80]}), so the LSTMs "
              f"run in fp32 outside autocast (as tickgrad's lstm op does under bf16)", file=sys.stderr)
        return False


def lstm_outside_autocast(model):
    """Every tft.LSTM of model runs in fp32 with autocast off, its inputs cast back to fp32."""
    import tft
    for m in model.modules():
        if isinstance(m, tft.LSTM):
            def fwd32(x, h, c, fwd=m.forward):
                with torch.autocast(x.device.type, enabled=False):
                    return fwd(x.float(), h.float(), c.float())
            m.forward = fwd32


def tft_step(compile_, device="cpu", batch=32, autocast=False):
    """reference/tft.py at the issue's defaults, with torch's own fused LSTM kernel."""
    import tft
    torch.manual_seed(1)
    model = tft.build(dict(tft.DEFAULTS), fused_lstm=True).to(device).train()
    if autocast and not bf16_lstm_works(device):
        lstm_outside_autocast(model)
    c = model.cfg
    past = torch.randn(batch, c["enc_len"], N_PAST, device=device)
    fut = torch.randn(batch, c["dec_len"], N_FUTURE, device=device)
    inst = torch.zeros(batch, dtype=torch.long, device=device)
    y = torch.randn(batch, HORIZONS, device=device)
    return forecast_step(model, (past, fut, inst), y, c["quantiles"], compile_, autocast)


def mamba2_step(compile_, device="cpu", batch=8, autocast=False):
    """reference/mamba2.py at the issue's defaults, with its chunked (vectorised) SSD."""
    import mamba2
    torch.manual_seed(1)
    net = mamba2.build(dict(mamba2.DEFAULTS)).to(device).train()
    c = net.cfg
    model = (lambda past: net(past, ssd="chunked"))
    model.parameters = net.parameters
    past = torch.randn(batch, c.seq_len, N_PAST, device=device)
    y = torch.randn(batch, HORIZONS, device=device)
    return forecast_step(model, (past,), y, c.q, compile_, autocast)


def transformer_step(compile_, device="cpu", batch=32, autocast=False):
    """reference/transformer.py at the defaults, its attention through torch's fused scaled_dot_product_attention."""
    import transformer
    torch.manual_seed(1)
    model = transformer.build(dict(transformer.DEFAULTS, n_past=N_PAST, horizons=HORIZONS)).use_sdpa(True)
    model = model.to(device).train()
    c = model.cfg
    past = torch.randn(batch, c["seq_len"], N_PAST, device=device)
    y = torch.randn(batch, HORIZONS, device=device)
    return forecast_step(model, (past,), y, c["quantiles"], compile_, autocast)


def transformer_long_step(compile_, device="cpu", batch=4, autocast=False):
    """transformer_step over a 512-bar window (the same bars a step at batch 4, 8x the attention per bar)."""
    import transformer
    torch.manual_seed(1)
    cfg = dict(transformer.DEFAULTS, n_past=N_PAST, horizons=HORIZONS, seq_len=512)
    model = transformer.build(cfg).use_sdpa(True)
    model = model.to(device).train()
    c = model.cfg
    past = torch.randn(batch, c["seq_len"], N_PAST, device=device)
    y = torch.randn(batch, HORIZONS, device=device)
    return forecast_step(model, (past,), y, c["quantiles"], compile_, autocast)


def patchtst_step(compile_, device="cpu", batch=32, autocast=False):
    """reference/patchtst.py at the defaults (7 patches of 16 steps every 8 over 64), attention through torch's fused
    scaled_dot_product_attention."""
    import patchtst
    torch.manual_seed(1)
    model = patchtst.build(dict(patchtst.DEFAULTS, n_past=N_PAST, horizons=HORIZONS)).use_sdpa(True)
    model = model.to(device).train()
    c = model.cfg
    past = torch.randn(batch, c["seq_len"], N_PAST, device=device)
    y = torch.randn(batch, HORIZONS, device=device)
    return forecast_step(model, (past,), y, c["quantiles"], compile_, autocast)


def dqn_step(compile_, device="cpu", batch=64, autocast=False):
    """reference/dqn_step.py: Double DQN, Q-network 64-256-256-256-3, replay draw, Huber, Adam."""
    import dqn_step as twin
    return twin.make_step(compile_, device, batch, wrap=lambda f: amp(f, autocast, device))


def ppo_update(compile_, device="cpu", batch=256, autocast=False):
    """reference/ppo_update.py: CleanRL's PPO minibatch update, actor and critic 64-256-64-64 tanh, 3 actions."""
    import ppo_update as twin
    return twin.make_step(compile_, device, batch, wrap=lambda f: amp(f, autocast, device))


CASES = {"mlp_step": mlp_step, "tft_step": tft_step, "mamba2_step": mamba2_step, "transformer_step": transformer_step,
         "transformer_long_step": transformer_long_step, "patchtst_step": patchtst_step, "dqn_step": dqn_step,
         "ppo_update": ppo_update}
BATCH = {"mlp_step": 64, "tft_step": 32, "mamba2_step": 8, "transformer_step": 32, "transformer_long_step": 4,
         "patchtst_step": 32, "dqn_step": 64,
         "ppo_update": 256}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--autocast", action="store_true", help="forward and loss under torch.autocast bf16")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--batch", type=int, default=0, help="default: the case's batch (64, 32, 8, 32, 32, 64, 256)")
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
        step = CASES[a.case](a.compile, a.device, a.batch or BATCH[a.case], a.autocast)
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
