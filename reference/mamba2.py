"""The Mamba-2 forecaster in plain PyTorch (no mamba_ssm): tickgrad's src/models/mamba2.c twin.

Same architecture and parameter names ("mamba2.<...>") as the tickgrad graph, so a state_dict
loads into a tickgrad store by name and back (models.md section 2, Mamba2Simple-style path):

  u = Linear(n_past -> d_model)(past)                               # past [B, L, n_past]
  per layer: u = u + Dropout(Mixer(RMSNorm(u)))                     # RMSNorm eps 1e-5, with weight
  Mixer: [z | xBC | dt] = in_proj(h) (no bias); xBC = SiLU(causal depthwise conv1d(xBC) + bias)
         x, B, C = split(xBC); dt = softplus(dt + dt_bias); A = -exp(A_log)
         y = SSD(x, dt, A, B, C) + D x; y = RMSNorm(y * SiLU(z)) * w (over all of d_inner)
         out_proj (no bias)
  pred = Linear(d_model -> horizons * nq)(RMSNorm(u[:, -1])) reshaped [B, horizons, nq]

Importable: build(cfg) returns the module (cfg: a dict or object with the tg_forecast_cfg fields
below; missing ones take tickgrad's defaults). The SSD runs sequentially (the oracle) or in chunks
(faster; forward(past, ssd="chunked")). Both are exact in float64.

CLI: python reference/mamba2.py --write-ref   writes reference/data/mamba2_ref.safetensors for a
small config: inputs, initial weights, forward output, pinball loss (tg_pinball_loss: mean over
B x horizons x nq of max(q e, (q - 1) e), e = target - pred) and every parameter gradient, computed
in float64 and stored as float32; the config is in the metadata. tests/test_mamba2.c reads it.
"""
import argparse
import json
import math
import os
import types

import torch
import torch.nn.functional as F
from torch import nn

DEFAULTS = dict(d_model=128, n_layers=2, d_state=64, headdim=32, expand=2, d_conv=4, ngroups=1, chunk=64,
                seq_len=128, n_past=16, horizons=8, nq=3, q=[0.1, 0.5, 0.9], dropout=0.1)

# The small config of the reference file (seq_len is deliberately not a multiple of chunk).
REF_CFG = dict(d_model=32, n_layers=2, d_state=16, headdim=16, expand=2, d_conv=4, ngroups=1, chunk=8,
               seq_len=24, n_past=5, horizons=4, nq=3, q=[0.1, 0.5, 0.9], dropout=0.0, batch=2)


def make_cfg(cfg=None):
    """cfg (dict or object) over DEFAULTS, as a namespace."""
    merged = dict(DEFAULTS)
    if cfg is not None:
        src = cfg if isinstance(cfg, dict) else vars(cfg)
        merged.update({k: v for k, v in src.items() if v is not None})
    return types.SimpleNamespace(**merged)


class RMSNorm(nn.Module):
    def __init__(self, n, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class CausalConv1d(nn.Module):
    """Depthwise causal conv along time: weight [C, K] (tickgrad's layout), bias [C]."""

    def __init__(self, channels, k):
        super().__init__()
        bound = 1.0 / math.sqrt(k)  # PyTorch Conv1d default (fan_in = k for a depthwise conv)
        self.weight = nn.Parameter(torch.empty(channels, k).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(channels).uniform_(-bound, bound))

    def forward(self, x):  # x [B, L, C]
        k = self.weight.shape[1]
        xt = F.pad(x.transpose(1, 2), (k - 1, 0))
        return F.conv1d(xt, self.weight.unsqueeze(1), self.bias, groups=x.shape[2]).transpose(1, 2)


def ssd_sequential(x, dt, A, Bm, Cm, D):
    """h_t = exp(dt_t A) h_{t-1} + dt_t x_t B_t^T; y_t = h_t C_t + D x_t (models.md 2.3).
    x [B, L, H, P], dt [B, L, H], A [H], Bm/Cm [B, L, G, N], D [H] -> y [B, L, H, P]."""
    b, seq, heads, p = x.shape
    rep = heads // Bm.shape[2]
    Bh = Bm.repeat_interleave(rep, dim=2)  # [B, L, H, N]
    Ch = Cm.repeat_interleave(rep, dim=2)
    h = x.new_zeros(b, heads, p, Bm.shape[3])
    ys = []
    for t in range(seq):
        decay = torch.exp(dt[:, t] * A)  # [B, H]
        h = decay[:, :, None, None] * h + (dt[:, t, :, None] * x[:, t])[..., None] * Bh[:, t, :, None, :]
        ys.append(torch.einsum("bhpn,bhn->bhp", h, Ch[:, t]) + D[:, None] * x[:, t])
    return torch.stack(ys, dim=1)


def ssd_chunked(x, dt, A, Bm, Cm, D, chunk):
    """The chunked SSD (models.md 2.4, stable segsum), L padded up to a multiple of chunk."""
    b, seq, heads, p = x.shape
    rep = heads // Bm.shape[2]
    Bh, Ch = Bm.repeat_interleave(rep, dim=2), Cm.repeat_interleave(rep, dim=2)
    pad = (-seq) % chunk
    if pad:  # dt = 0 on padding: no decay, no input; outputs are dropped
        x, Bh, Ch = (F.pad(t, (0, 0, 0, 0, 0, pad)) for t in (x, Bh, Ch))
        dt = F.pad(dt, (0, 0, 0, pad))
    nc = (seq + pad) // chunk
    xr = (x * dt[..., None]).reshape(b, nc, chunk, heads, p)  # X-bar
    Br, Cr = Bh.reshape(b, nc, chunk, heads, -1), Ch.reshape(b, nc, chunk, heads, -1)
    a = (dt * A).reshape(b, nc, chunk, heads).permute(0, 3, 1, 2)  # [B, H, nc, Q]
    acum = torch.cumsum(a, dim=-1)
    # stable segsum[l, s] = sum_{s < k <= l} a_k (a masked cumsum, ssd_minimal's segsum), -inf for s > l
    ae = a[..., :, None].expand(*a.shape, chunk)  # [..., k, s] = a_k
    ae = ae.masked_fill(~torch.tril(torch.ones(chunk, chunk, dtype=torch.bool), -1), 0)  # keep k > s
    seg = torch.cumsum(ae, dim=-2)  # [..., l, s]
    seg = seg.masked_fill(~torch.tril(torch.ones(chunk, chunk, dtype=torch.bool)), float("-inf"))
    Lmask = torch.exp(seg)  # [B, H, nc, l, s]
    y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", Cr, Br, Lmask, xr)
    decay_states = torch.exp(acum[..., -1:] - acum)  # [B, H, nc, Q]
    states = torch.einsum("bclhn,bhcl,bclhp->bchpn", Br, decay_states, xr)
    s_in = x.new_zeros(b, heads, p, Bh.shape[3])
    entering = []
    for c in range(nc):
        entering.append(s_in)
        s_in = torch.exp(acum[:, :, c, -1])[..., None, None] * s_in + states[:, c]
    entering = torch.stack(entering, dim=1)  # [B, nc, H, P, N]
    y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", Cr, entering, torch.exp(acum))
    y = (y_diag + y_off).reshape(b, nc * chunk, heads, p)[:, :seq]
    return y + D[:, None] * x[:, :seq]


class Mixer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, e = cfg.d_model, cfg.expand * cfg.d_model
        self.E, self.P, self.G, self.N = e, cfg.headdim, cfg.ngroups, cfg.d_state
        self.H = e // cfg.headdim
        self.chunk = cfg.chunk
        conv_ch = e + 2 * self.G * self.N
        self.in_proj = nn.Linear(d, 2 * e + 2 * self.G * self.N + self.H, bias=False)
        self.conv1d = CausalConv1d(conv_ch, cfg.d_conv)
        dt = torch.exp(torch.rand(self.H) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3)).clamp(min=1e-4)
        self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))
        self.A_log = nn.Parameter(torch.log(torch.empty(self.H).uniform_(1, 16)))
        self.D = nn.Parameter(torch.ones(self.H))
        self.norm = RMSNorm(e)
        self.out_proj = nn.Linear(e, d, bias=False)
        bound = 1.0 / math.sqrt(e * cfg.n_layers)  # kaiming_uniform(a=sqrt 5) / sqrt(n_layers)
        with torch.no_grad():
            self.out_proj.weight.uniform_(-bound, bound)

    def forward(self, h, ssd="sequential"):
        b, seq, _ = h.shape
        gn = self.G * self.N
        z, xbc, dt = torch.split(self.in_proj(h), [self.E, self.E + 2 * gn, self.H], dim=-1)
        xbc = F.silu(self.conv1d(xbc))
        x, Bm, Cm = torch.split(xbc, [self.E, gn, gn], dim=-1)
        x = x.reshape(b, seq, self.H, self.P)
        Bm, Cm = Bm.reshape(b, seq, self.G, self.N), Cm.reshape(b, seq, self.G, self.N)
        dt = F.softplus(dt + self.dt_bias)
        A = -torch.exp(self.A_log)
        if ssd == "sequential":
            y = ssd_sequential(x, dt, A, Bm, Cm, self.D)
        else:
            y = ssd_chunked(x, dt, A, Bm, Cm, self.D, self.chunk)
        y = self.norm(y.reshape(b, seq, self.E) * F.silu(z))
        return self.out_proj(y)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm = RMSNorm(cfg.d_model)
        self.mixer = Mixer(cfg)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, u, ssd="sequential"):
        return u + self.drop(self.mixer(self.norm(u), ssd))


class Mamba2Net(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.horizons, self.nq = cfg.horizons, cfg.nq
        self.embed = nn.Linear(cfg.n_past, cfg.d_model)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm_f = RMSNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.horizons * cfg.nq)
        with torch.no_grad():  # Linear biases start at 0
            self.embed.bias.zero_()
            self.head.bias.zero_()

    def forward(self, past, ssd="sequential"):
        u = self.embed(past)
        for layer in self.layers:
            u = layer(u, ssd)
        return self.head(self.norm_f(u[:, -1])).reshape(past.shape[0], self.horizons, self.nq)


class Forecaster(nn.Module):
    """The top module, so that parameter names start with "mamba2."."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.mamba2 = Mamba2Net(cfg)

    def forward(self, past, ssd="sequential"):
        return self.mamba2(past, ssd)


def build(cfg=None):
    """The forecaster for cfg (dict or object with tg_forecast_cfg's field names; defaults above)."""
    c = make_cfg(cfg)
    e = c.expand * c.d_model
    if e % c.headdim or (e // c.headdim) % c.ngroups:
        raise ValueError(f"mamba2: d_inner {e} must be a multiple of headdim {c.headdim}, heads of ngroups {c.ngroups}")
    return Forecaster(c)


def pinball_loss(pred, target, q):
    """tg_pinball_loss: mean over every element and quantile of max(q e, (q - 1) e), e = target - pred."""
    qs = torch.tensor(q, dtype=pred.dtype)
    e = target[..., None] - pred
    return torch.maximum(qs * e, (qs - 1) * e).mean()


def param_count(cfg=None):
    return sum(p.numel() for p in build(cfg).parameters())


def write_ref(path):
    torch.manual_seed(20240607)
    c = make_cfg(REF_CFG)
    model = build(c).double()
    model.eval()  # dropout 0 anyway
    past = torch.randn(REF_CFG["batch"], c.seq_len, c.n_past, dtype=torch.float64)
    target = torch.randn(REF_CFG["batch"], c.horizons, dtype=torch.float64)
    init = {n: p.detach().clone() for n, p in model.named_parameters()}
    pred = model(past)
    with torch.no_grad():  # self-check: the chunked SSD agrees with the sequential oracle
        err = (model(past, ssd="chunked") - pred).abs().max().item()
    assert err < 1e-10, f"chunked SSD differs from the sequential one by {err}"
    loss = pinball_loss(pred, target, c.q)
    loss.backward()
    out = {"past": past, "target": target, "pred": pred.detach(), "loss": loss.detach().reshape(1)}
    for n, p in model.named_parameters():
        out[f"init.{n}"] = init[n]
        out[f"grad.{n}"] = p.grad.detach()
    out = {k: v.to(torch.float32).contiguous() for k, v in out.items()}
    meta = {k: json.dumps(v) for k, v in REF_CFG.items()}
    meta["config"] = json.dumps(REF_CFG)
    meta["torch"] = torch.__version__
    meta["chunked_vs_sequential_max_abs"] = f"{err:.3e}"
    from safetensors.torch import save_file
    save_file(out, path, metadata=meta)
    print(f"wrote {path}: loss {loss.item():.9g}, {len(init)} parameters "
          f"({sum(v.numel() for v in init.values())} floats), chunked vs sequential {err:.2e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write-ref", action="store_true", help="write reference/data/mamba2_ref.safetensors")
    ap.add_argument("--count", action="store_true", help="print the parameter count of the default config")
    args = ap.parse_args()
    if args.count:
        print(param_count())
    if args.write_ref:
        write_ref(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "mamba2_ref.safetensors"))
    if not (args.count or args.write_ref):
        ap.print_help()


if __name__ == "__main__":
    main()
