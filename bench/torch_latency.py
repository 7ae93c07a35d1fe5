"""PyTorch eager batch-1 twins of `tickgrad_bench latency CASE`: one prediction per call, each call timed alone.

Usage: python bench/torch_latency.py CASE [--calls N] [--min-calls N] [--budget-s S] [--warmup N] [--check-only]
Prints "CASE P50_US P99_US P99.9_US CALLS MEAN_US MAX_US" (nearest-rank percentiles, as tickgrad_bench).

One thread (torch.set_num_threads(1)), modules in eval(), every call under torch.inference_mode(), inputs
made before timing (a table of observations or bars cycled through), each call timed with
time.perf_counter_ns. Calls: --calls (default 100,000), fewer when that would take longer than --budget-s
(default 60 s, estimated from the warm-up) but never fewer than --min-calls (default 10,000).

Cases (the models of reference/ at the sizes tickgrad's cases use; the weights are fresh, values do not
matter for latency):
  dqn_policy_cartpole        int(argmax(net(obs[None]))) for CleanRL's Q-network 4-120-84-2 (ReLU)
  dqn_policy_trading         the same for 514-120-84-3 (window 32 x 16 features + position, unrealised)
  dqn_policy_trading_gather  the window sliced from a feature table by the bar's row, concatenated, then the net
  mamba2_stream              one recurrent step of reference/mamba2.py's forecaster (d_model 128, 2 layers,
                             d_state 64, headdim 32): in_proj, conv state shifted by one, h = exp(dt A) h +
                             dt x B^T, y = C h + D x, gated RMSNorm, out_proj, the head; checked against the
                             full forward (sequential SSD) on a short sequence before timing
  mamba2_step_raw            the same step (tickgrad's case without the feature stream has the same twin)
  tft_batch1, tft_forward_b1 reference/tft.py at the defaults (hidden 64, 4 heads, encoder 64, 8 horizons),
                             torch's fused LSTM, forward at batch 1
  mlp_batch1, mlp_forward_b1 the MLP baseline: 16 x 16 features flattened -> 64 ReLU -> 24, batch 1
  transformer_batch1, transformer_forward_b1  reference/transformer.py at its defaults over a 64-bar window, batch 1
"""
import argparse
import copy
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))

N_PAST, HORIZONS, NQ = 16, 8, 3  # the default feature spec's columns; tickgrad's default horizons, quantiles
TABLE = 1024                     # distinct inputs cycled through, as tickgrad_bench's OBS_TABLE


def q_net(sizes):
    """CleanRL's Q-network: Linear layers of sizes with ReLU between them."""
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers).eval()


def dqn_policy(obs_dim, n_actions):
    net = q_net([obs_dim, 120, 84, n_actions])
    obs = [torch.randn(1, obs_dim) for _ in range(TABLE)]
    state = {"i": 0}

    def call():
        i = state["i"] = (state["i"] + 1) % TABLE
        return int(net(obs[i]).argmax(dim=1))  # the action as a host integer, as tg_dqn_policy_act returns it
    return call


def dqn_policy_gather(window=32, rows=20000):
    """The CLI's default trading observation: the policy slices the window out of its feature table."""
    net = q_net([window * N_PAST + 2, 120, 84, 3])
    table = torch.randn(rows, N_PAST)
    obs = [(window + i, torch.randn(1, 2)) for i in range(TABLE)]  # (the bar's row, [position, unrealised])
    state = {"i": 0}

    def call():
        i = state["i"] = (state["i"] + 1) % TABLE
        t, rest = obs[i]
        x = torch.cat([table[t - window + 1:t + 1].reshape(1, -1), rest], dim=1)
        return int(net(x).argmax(dim=1))
    return call


class Mamba2Step(torch.nn.Module):
    """Recurrent inference of reference/mamba2.py's Forecaster: one bar [1, n_past] -> forecast [1, H, nq]."""

    def __init__(self, forecaster):
        super().__init__()
        self.net = forecaster.mamba2
        c = forecaster.cfg
        self.E, self.P, self.G, self.N, self.K = c.expand * c.d_model, c.headdim, c.ngroups, c.d_state, c.d_conv
        self.H = self.E // self.P
        self.C = self.E + 2 * self.G * self.N
        self.reset()

    def reset(self):
        p = next(self.net.parameters())
        n = len(self.net.layers)
        self.conv = [p.new_zeros(1, self.K - 1, self.C) for _ in range(n)]  # the last K-1 conv inputs, oldest first
        self.ssm = [p.new_zeros(1, self.H, self.P, self.N) for _ in range(n)]

    def forward(self, x):
        E, H, P, G, N = self.E, self.H, self.P, self.G, self.N
        u = self.net.embed(x)  # [1, d]
        for i, layer in enumerate(self.net.layers):
            m = layer.mixer
            z, xbc, dt = torch.split(m.in_proj(layer.norm(u)), [E, self.C, H], dim=-1)
            win = torch.cat([self.conv[i], xbc[:, None]], dim=1)  # [1, K, C]
            self.conv[i] = win[:, 1:]
            xbc = F.silu((win * m.conv1d.weight.t()).sum(1) + m.conv1d.bias)
            xs, Bm, Cm = torch.split(xbc, [E, G * N, G * N], dim=-1)
            xs = xs.reshape(1, H, P)
            Bh = Bm.reshape(1, G, N).repeat_interleave(H // G, dim=1)  # [1, H, N]
            Ch = Cm.reshape(1, G, N).repeat_interleave(H // G, dim=1)
            dt = F.softplus(dt + m.dt_bias)  # [1, H]
            A = -torch.exp(m.A_log)
            h = torch.exp(dt * A)[..., None, None] * self.ssm[i] + (dt[..., None] * xs)[..., None] * Bh[:, :, None, :]
            self.ssm[i] = h  # [1, H, P, N]
            y = (h @ Ch[..., None]).squeeze(-1) + m.D[:, None] * xs  # [1, H, P]
            u = u + m.out_proj(m.norm(y.reshape(1, E) * F.silu(z)))
        return self.net.head(self.net.norm_f(u)).reshape(1, self.net.horizons, self.net.nq)


def mamba2_model():
    import mamba2
    torch.manual_seed(1)
    return mamba2.build(dict(mamba2.DEFAULTS, n_past=N_PAST, horizons=HORIZONS, nq=NQ)).eval()


def mamba2_check(model, steps=12):
    """The step's forecast after each of `steps` bars equals the full forward over those bars (float64)."""
    m64 = copy.deepcopy(model).double()
    past = torch.randn(1, steps, N_PAST, dtype=torch.float64)
    stepper = Mamba2Step(m64)
    worst = 0.0
    for t in range(steps):
        got = stepper(past[:, t])
        want = m64(past[:, :t + 1], ssd="sequential")
        worst = max(worst, (got - want).abs().max().item() / want.abs().max().item())
    assert worst < 1e-10, f"mamba2 step differs from the full forward by {worst:.3e} (relative)"
    print(f"# mamba2 step matches the full forward over {steps} bars: worst relative difference {worst:.1e}",
          file=sys.stderr)


def mamba2_stream():
    model = mamba2_model()
    mamba2_check(model)
    stepper = Mamba2Step(model)
    bars = [torch.randn(1, N_PAST) for _ in range(TABLE)]
    state = {"i": 0}

    def call():
        i = state["i"] = (state["i"] + 1) % TABLE
        return stepper(bars[i])
    return call


def tft_batch1():
    import tft
    torch.manual_seed(1)
    c = dict(tft.DEFAULTS, n_past=N_PAST, n_future=4, dec_len=HORIZONS, n_static=1)
    model = tft.build(c, fused_lstm=True).eval()
    past = torch.randn(1, c["enc_len"], N_PAST)
    fut = torch.randn(1, c["dec_len"], 4)
    inst = torch.zeros(1, dtype=torch.long)
    return lambda: model(past, fut, inst)


def mlp_batch1(window=16, hidden=64):
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(window * N_PAST, hidden), torch.nn.ReLU(),
                              torch.nn.Dropout(0.1), torch.nn.Linear(hidden, HORIZONS * NQ)).eval()
    past = torch.randn(1, window, N_PAST)
    return lambda: net(past).reshape(1, HORIZONS, NQ)


def transformer_batch1():
    import transformer
    torch.manual_seed(1)
    model = transformer.build(dict(transformer.DEFAULTS, n_past=N_PAST, horizons=HORIZONS)).use_sdpa(True).eval()
    past = torch.randn(1, model.cfg["seq_len"], N_PAST)
    return lambda: model(past)


CASES = {
    "dqn_policy_cartpole": lambda: dqn_policy(4, 2),
    "dqn_policy_trading": lambda: dqn_policy(32 * N_PAST + 2, 3),
    "dqn_policy_trading_gather": dqn_policy_gather,
    "mamba2_stream": mamba2_stream,
    "mamba2_step_raw": mamba2_stream,
    "tft_batch1": tft_batch1,
    "tft_forward_b1": tft_batch1,
    "mlp_batch1": mlp_batch1,
    "mlp_forward_b1": mlp_batch1,
    "transformer_batch1": transformer_batch1,
    "transformer_forward_b1": transformer_batch1,
}


def pct(sorted_us, p):
    """Nearest rank: the smallest value with at least p * n values at or below it."""
    n = len(sorted_us)
    k = math.ceil(p * n - 1e-9) - 1  # the 1e-9: 0.99 * 100000 is a whole number, whatever its rounding
    return sorted_us[min(max(k, 0), n - 1)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--calls", type=int, default=100000)
    ap.add_argument("--min-calls", type=int, default=10000)
    ap.add_argument("--budget-s", type=float, default=60.0)
    ap.add_argument("--warmup", type=int, default=2000)
    ap.add_argument("--check-only", action="store_true", help="mamba2: the self-check only")
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    with torch.inference_mode():
        call = CASES[a.case]()
        if a.check_only:
            return 0
        t0 = time.perf_counter_ns()
        for _ in range(a.warmup):
            call()
        per_call = (time.perf_counter_ns() - t0) / max(a.warmup, 1)
        calls = a.calls
        if per_call * calls > a.budget_s * 1e9:
            calls = max(a.min_calls, int(a.budget_s * 1e9 / per_call))
        calls = min(calls, a.calls) if a.calls >= a.min_calls else a.calls
        ns = [0] * calls
        clock = time.perf_counter_ns
        for r in range(calls):
            t0 = clock()
            call()
            ns[r] = clock() - t0
    us = sorted(x * 1e-3 for x in ns)
    print(f"{a.case} {pct(us, 0.5):.3f} {pct(us, 0.99):.3f} {pct(us, 0.999):.3f} {calls} "
          f"{sum(us) / calls:.3f} {us[-1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
