"""PatchTST exactly as src/models/patchtst.c builds it, in plain PyTorch.

Parameter names and shapes equal tickgrad's ("patchtst.<module>.<param>", see param_dict), so weights map 1:1 in both
directions. The architecture (the same as tg_patchtst_cfg's comment in include/tickgrad/models.h):

  xn = (x - mean) / sqrt(var + 1e-5)                   per channel over the window's L steps (biased var), no affine
  patches = xn.unfold(L, patch_len, stride)            [B, C, N, P], N = (L - P) // S + 1
  x = embed(patches) + pos_embed                       embed Linear(P -> d); pos_embed a LEARNED [N, d]
  per layer, over each (window, channel)'s N patches, NOT causal:
             x = x + Dropout(MHA(norm1(x)))            n_heads heads, softmax(q k^T / sqrt(d_head)) v; qkv one
                                                       Linear(d -> 3d), rows q | k | v, each head-major; attn.out
             x = x + Dropout(ff2(GELU(ff1(norm2(x)))))  d_ff = 4 d; GELU exact (erf)
  pred = head(flatten over C, N, d of norm_f(x)) reshaped [B, horizons, nq]

LayerNorm eps 1e-5 with weight and bias; every Linear has a bias.

Use:
  import patchtst; model = patchtst.build(cfg); pred = model(past)
  python reference/patchtst.py --write-ref   # writes reference/data/patchtst_ref.safetensors
tests/test_patchtst.c rebuilds the stored config in tickgrad and must match the forward output, the pinball loss and
every parameter gradient to 1e-4 (relative to each tensor's largest value).
"""
import argparse
import json
import math
import os

import torch
import torch.nn.functional as F
from torch import nn

LN_EPS = 1e-5

DEFAULTS = dict(d_model=64, n_heads=4, n_layers=2, seq_len=64, patch_len=16, stride=8, n_past=16, horizons=8, nq=3,
                quantiles=[0.1, 0.5, 0.9], dropout=0.1)


def n_patches(c):
    return (c["seq_len"] - c["patch_len"]) // c["stride"] + 1


class Attention(nn.Module):
    """Multi-head self-attention over every step: qkv Linear(d -> 3d), out Linear(d -> d)."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.sdpa = False  # True: torch's fused scaled_dot_product_attention (the bench peer), same maths

    def forward(self, h):
        B, T, d = h.shape
        q, k, v = (t.reshape(B, T, self.heads, self.dh).transpose(1, 2) for t in self.qkv(h).split(d, dim=-1))
        if self.sdpa:
            o = F.scaled_dot_product_attention(q, k, v)
        else:
            o = torch.softmax((q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(self.dh)), dim=-1) @ v
        return self.out(o.transpose(1, 2).reshape(B, T, d))


class Block(nn.Module):
    """Pre-norm residual block: attention, then the GELU MLP (d -> 4d -> d)."""

    def __init__(self, d, heads, dropout):
        super().__init__()
        self.norm1 = nn.LayerNorm(d, eps=LN_EPS)
        self.attn = Attention(d, heads)
        self.norm2 = nn.LayerNorm(d, eps=LN_EPS)
        self.ff1 = nn.Linear(d, 4 * d)
        self.ff2 = nn.Linear(4 * d, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.drop(self.attn(self.norm1(x)))
        return x + self.drop(self.ff2(F.gelu(self.ff1(self.norm2(x)))))


class PatchTST(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        c = dict(DEFAULTS, **cfg)
        self.cfg = c
        d, n = c["d_model"], n_patches(c)
        assert d % c["n_heads"] == 0, "d_model must be a multiple of n_heads"
        assert 1 <= c["patch_len"] <= c["seq_len"], "patch_len must be in 1..seq_len"
        self.embed = nn.Linear(c["patch_len"], d)
        self.pos_embed = nn.Parameter(torch.zeros(n, d))
        self.layers = nn.ModuleList(Block(d, c["n_heads"], c["dropout"]) for _ in range(c["n_layers"]))
        self.norm_f = nn.LayerNorm(d, eps=LN_EPS)
        self.head = nn.Linear(c["n_past"] * n * d, c["horizons"] * c["nq"])
        self.reset_parameters()

    def reset_parameters(self, gen=None):
        """tickgrad's initialisation kinds (not its random streams): see models.h."""
        with torch.no_grad():
            for name, t in self.named_parameters():
                leaf = name.rsplit(".", 1)[-1]
                if name == "pos_embed":
                    t.normal_(0.0, 0.02, generator=gen)
                elif "norm" in name.rsplit(".", 2)[-2] and leaf == "weight":
                    t.fill_(1.0)
                elif leaf == "bias":
                    t.zero_()
                else:  # Linear: U(+-1/sqrt(fan_in))
                    b = 1.0 / math.sqrt(t.shape[-1])
                    t.uniform_(-b, b, generator=gen)

    def use_sdpa(self, on=True):
        for blk in self.layers:
            blk.attn.sdpa = on
        return self

    def forward(self, past):
        """past [B, L, n_past] -> [B, horizons, nq]."""
        c = self.cfg
        B, L, C = past.shape
        x = F.layer_norm(past.transpose(1, 2), (L,), eps=LN_EPS)  # [B, C, L], each channel over its window
        x = x.unfold(2, c["patch_len"], c["stride"])  # [B, C, N, P]
        x = self.embed(x) + self.pos_embed
        x = x.reshape(B * C, x.shape[2], x.shape[3])
        for blk in self.layers:
            x = blk(x)
        y = self.head(self.norm_f(x).reshape(B, -1))
        return y.reshape(B, c["horizons"], c["nq"])


def build(cfg):
    """A PatchTST for cfg (keys of DEFAULTS; missing ones take the defaults)."""
    return PatchTST(cfg)


def param_dict(model):
    """tickgrad's names -> parameters."""
    return {f"patchtst.{n}": p for n, p in model.named_parameters()}


def pinball_loss(pred, target, quantiles):
    """tg_pinball_loss: mean over elements and quantiles of max(q e, (q - 1) e), e = target - pred."""
    q = torch.tensor(quantiles, dtype=pred.dtype, device=pred.device)
    e = target.unsqueeze(-1) - pred
    return torch.maximum(q * e, (q - 1.0) * e).mean()


# 3 overlapping patches (the last steps past the final patch unread, as in PatchTST without end padding)
REF_CFG = dict(d_model=8, n_heads=2, n_layers=2, seq_len=11, patch_len=4, stride=3, n_past=3, horizons=2, nq=3,
               quantiles=[0.1, 0.5, 0.9], dropout=0.0, batch=2)


def write_ref(path, seed=20240612):
    """Random inputs and weights (rounded to f32), the f64 forward, loss and gradients, saved f32."""
    from safetensors.torch import save_file

    cfg = dict(REF_CFG)
    gen = torch.Generator().manual_seed(seed)
    model = build(cfg).double()
    with torch.no_grad():  # perturb every parameter so no bias or norm is trivially 0 or 1
        model.reset_parameters(gen)
        for _, t in model.named_parameters():
            t.add_(0.2 * (torch.rand(t.shape, generator=gen, dtype=t.dtype) - 0.5))
            t.copy_(t.float().double())
    B, L = cfg["batch"], cfg["seq_len"]
    past = (torch.randn(B, L, cfg["n_past"], generator=gen, dtype=torch.float64) * 2.0 + 0.5).float().double()
    target = torch.randn(B, cfg["horizons"], generator=gen, dtype=torch.float64).float().double()
    model.eval()  # dropout is 0 anyway
    pred = model(past)
    loss = pinball_loss(pred, target, cfg["quantiles"])
    loss.backward()
    with torch.no_grad():  # torch's fused attention gives the same numbers
        err_sdpa = (model.use_sdpa(True)(past) - pred).abs().max().item()
        model.use_sdpa(False)
    assert err_sdpa < 1e-12, f"sdpa {err_sdpa:.3g}"

    out = {"in.past": past, "in.target": target, "out.pred": pred.detach(), "out.loss": loss.detach().reshape(1)}
    params = param_dict(model)
    for n, p in params.items():
        out[f"init.{n}"] = p.detach()
        out[f"grad.{n}"] = p.grad.detach()
    out = {k: v.float().contiguous() for k, v in out.items()}
    meta = {"torch": torch.__version__, "seed": str(seed), "config": json.dumps(cfg),
            "params": str(len(params)), "numel": str(sum(p.numel() for p in params.values()))}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    save_file(out, path, metadata=meta)
    print(f"wrote {path}: {len(params)} parameters, {meta['numel']} values, loss {loss.item():.9g}, "
          f"{os.path.getsize(path)} bytes")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write-ref", action="store_true", help="write reference/data/patchtst_ref.safetensors")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                                                  "patchtst_ref.safetensors"))
    ap.add_argument("--count", action="store_true", help="print the default config's parameter count")
    a = ap.parse_args()
    if a.count:
        m = build(dict(DEFAULTS))
        print(f"default config: {sum(p.numel() for p in m.parameters())} parameters in "
              f"{len(list(m.parameters()))} tensors")
    if a.write_ref:
        write_ref(a.out)
    if not (a.count or a.write_ref):
        ap.print_help()


if __name__ == "__main__":
    main()
