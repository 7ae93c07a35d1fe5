"""The Temporal Fusion Transformer exactly as src/models/tft.c builds it, in plain PyTorch.

Parameter names and shapes equal tickgrad's ("tft.<module>.<param>", see param_dict), so weights
map 1:1 in both directions. Conventions (the same as tft.c's header comment):

* every real variable j has its own Linear(1 -> d): xi_j = x_j * embed.weight[j] + embed.bias[j];
* GRN(a, c) = LayerNorm(skip(a) + GLU(Dropout(fc2(ELU(fc1(a) + ctx(c)))))), hidden width d,
  skip = identity, or Linear when the sizes differ; GLU(x) = first half * sigmoid(second half) of
  one Linear(h -> 2 out); LayerNorm eps 1e-5;
* VSN: weights = softmax(GRN_v(flattened [m*d] input, c_s)), per-variable GRNs with separate weights
  (stacked as [m, ...] tensors), output = sum_j weight_j * GRN_j(xi_j); the static VSN has one
  variable (weight 1, no softmax);
* encoder and decoder LSTMs (gates i, f, g, o; one bias [4d]); the decoder starts from the
  encoder's final (h, c);
* attention: queries = decoder positions, keys/values = all enc+dec positions, decoder step i sees
  key j <= enc + i (diagonal included); per-head Q/K, one shared V, no biases; heads averaged before
  the output projection (no bias);
* dropout (p = cfg["dropout"]) on every GLU input inside GRNs, the post-LSTM and post-attention GLU
  inputs, each head's output and the attention output; none in the final gate.

Use:
  import tft; model = tft.build(cfg); pred = model(past, future, inst)
  python reference/tft.py --write-ref      # writes reference/data/tft_ref.safetensors
tests/test_tft.c rebuilds the stored config in tickgrad and must match the forward output, the
pinball loss and every parameter gradient to 1e-4 (relative to each tensor's largest value).
"""
import argparse
import json
import math
import os

import torch
import torch.nn.functional as F
from torch import nn

LN_EPS = 1e-5

DEFAULTS = dict(hidden=64, heads=4, enc_len=64, dec_len=8, n_past=16, n_future=4, n_static=1, nq=3,
                quantiles=[0.1, 0.5, 0.9], dropout=0.1, vol_col=None)
# vol_col: None, or the past column (the normalised logret) whose recent volatility scales the quantiles
# (tickgrad's tft.vol_scale 1; config.json's tft.vol_scale, the column found by name in inference.json's features).


def glu(x):
    """First half * sigmoid(second half) over the last dim."""
    a, b = x.chunk(2, dim=-1)
    return a * torch.sigmoid(b)


class GRN(nn.Module):
    """Gated residual network n_in -> n_out with hidden width n_hidden and an optional context."""

    def __init__(self, n_in, n_hidden, n_out, n_ctx=0, dropout=0.0):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.ctx = nn.Linear(n_ctx, n_hidden, bias=False) if n_ctx else None
        self.fc2 = nn.Linear(n_hidden, n_hidden)
        self.glu = nn.Linear(n_hidden, 2 * n_out)
        self.norm = nn.LayerNorm(n_out, eps=LN_EPS)
        self.skip = nn.Linear(n_in, n_out) if n_in != n_out else None
        self.drop = nn.Dropout(dropout)

    def forward(self, a, c=None):
        """a [..., T?, n_in]; c [B, n_ctx] is broadcast over the dims between batch and features."""
        h = self.fc1(a)
        if self.ctx is not None:
            ch = self.ctx(c)
            h = h + ch.reshape(ch.shape[0], *([1] * (h.dim() - 2)), ch.shape[-1])
        h = self.fc2(F.elu(h))
        skip = a if self.skip is None else self.skip(a)
        return self.norm(skip + glu(self.glu(self.drop(h))))


class VarGRNs(nn.Module):
    """m separate GRNs d -> d (no context), weights stacked [m, ...]; x [..., m, d]."""

    def __init__(self, m, d, dropout=0.0):
        super().__init__()
        self.fc1 = _StackedLinear(m, d, d)
        self.fc2 = _StackedLinear(m, d, d)
        self.glu = _StackedLinear(m, d, 2 * d)
        self.norm = _StackedNorm(m, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.fc2(F.elu(self.fc1(x)))
        return self.norm(x + glu(self.glu(self.drop(h))))


class _StackedLinear(nn.Module):
    """m Linear(n_in -> n_out) applied to x [..., m, n_in]: weight [m, n_out, n_in], bias [m, n_out]."""

    def __init__(self, m, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(m, n_out, n_in))
        self.bias = nn.Parameter(torch.zeros(m, n_out))

    def forward(self, x):
        return torch.einsum("...mi,moi->...mo", x, self.weight) + self.bias


class _StackedNorm(nn.Module):
    """LayerNorm over d with a separate affine per variable: weight, bias [m, d]."""

    def __init__(self, m, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(m, d))
        self.bias = nn.Parameter(torch.zeros(m, d))

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:], eps=LN_EPS) * self.weight + self.bias


class RealEmbed(nn.Module):
    """One Linear(1 -> d) per real variable: x [..., m] -> [..., m, d]."""

    def __init__(self, m, d):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(m, d))
        self.bias = nn.Parameter(torch.zeros(m, d))

    def forward(self, x):
        return x.unsqueeze(-1) * self.weight + self.bias


class VSN(nn.Module):
    """Variable selection over m embedded variables with context c_s."""

    def __init__(self, m, d, dropout=0.0):
        super().__init__()
        self.m = m
        self.grn_v = GRN(m * d, d, m, n_ctx=d, dropout=dropout)
        self.var_grn = VarGRNs(m, d, dropout)

    def forward(self, xi, c):
        """xi [B, T, m, d], c [B, d] -> ([B, T, d], weights [B, T, m])."""
        w = torch.softmax(self.grn_v(xi.flatten(-2), c), dim=-1)
        return (w.unsqueeze(-1) * self.var_grn(xi)).sum(-2), w


class LSTM(nn.Module):
    """One LSTM layer, batch first, gates i f g o, a single bias [4 Hd] (tickgrad's lstm op)."""

    def __init__(self, n_in, hd):
        super().__init__()
        self.hd = hd
        self.w_ih = nn.Parameter(torch.empty(4 * hd, n_in))
        self.w_hh = nn.Parameter(torch.empty(4 * hd, hd))
        self.bias = nn.Parameter(torch.zeros(4 * hd))
        self.fused = False  # True: torch's own LSTM kernel (cuDNN on a GPU), same maths

    def forward(self, x, h, c):
        """x [B, T, I], h, c [B, Hd] -> (h over time [B, T, Hd], final h, final c)."""
        if self.fused:
            zero = torch.zeros_like(self.bias)
            out, hn, cn = torch._VF.lstm(x, (h.unsqueeze(0).contiguous(), c.unsqueeze(0).contiguous()),
                                           [self.w_ih, self.w_hh, self.bias, zero], True, 1, 0.0,
                                           self.training, False, True)
            return out, hn[0], cn[0]
        xw = x @ self.w_ih.t() + self.bias
        hs = []
        for t in range(x.shape[1]):
            i, f, g, o = (xw[:, t] + h @ self.w_hh.t()).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            hs.append(h)
        return torch.stack(hs, dim=1), h, c


class GateAddNorm(nn.Module):
    """LayerNorm(skip + GLU(Dropout(x))): glu Linear(d -> 2d), norm LayerNorm(d)."""

    def __init__(self, d, dropout=0.0):
        super().__init__()
        self.glu = nn.Linear(d, 2 * d)
        self.norm = nn.LayerNorm(d, eps=LN_EPS)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, skip):
        return self.norm(skip + glu(self.glu(self.drop(x))))


class Attention(nn.Module):
    """Interpretable multi-head attention: decoder queries over all positions."""

    def __init__(self, d, heads, dropout=0.0):
        super().__init__()
        self.heads, self.da = heads, d // heads
        self.q = nn.Linear(d, d, bias=False)        # heads x d_attn rows, head-major
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, self.da, bias=False)  # shared by every head
        self.out = nn.Linear(self.da, d, bias=False)
        self.drop = nn.Dropout(dropout)

    def forward(self, theta, enc):
        """theta [B, T, d] (T = enc + dec) -> ([B, dec, d], attention [B, heads, dec, T])."""
        B, T, _ = theta.shape
        dec = T - enc
        q = self.q(theta[:, enc:]).reshape(B, dec, self.heads, self.da).transpose(1, 2)
        k = self.k(theta).reshape(B, T, self.heads, self.da).transpose(1, 2)
        v = self.v(theta)
        s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(self.da))
        i = torch.arange(dec, device=theta.device).unsqueeze(1)
        j = torch.arange(T, device=theta.device).unsqueeze(0)
        s = s.masked_fill(j > enc + i, float("-inf"))
        att = torch.softmax(s, dim=-1)
        heads = self.drop(att @ v.unsqueeze(1))             # [B, H, dec, da]
        return self.drop(self.out(heads.mean(dim=1))), att


class TFT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        c = dict(DEFAULTS, **cfg)
        self.cfg = c
        d, p = c["hidden"], c["dropout"]
        assert d % c["heads"] == 0, "hidden must be a multiple of heads"
        self.static_embed = nn.Embedding(c["n_static"], d)
        self.static_vsn = GRN(d, d, d, dropout=p)
        self.static_ctx_s = GRN(d, d, d, dropout=p)
        self.static_ctx_e = GRN(d, d, d, dropout=p)
        self.static_ctx_h = GRN(d, d, d, dropout=p)
        self.static_ctx_c = GRN(d, d, d, dropout=p)
        self.past_embed = RealEmbed(c["n_past"], d)
        self.future_embed = RealEmbed(c["n_future"], d)
        self.past_vsn = VSN(c["n_past"], d, p)
        self.future_vsn = VSN(c["n_future"], d, p)
        self.lstm_enc = LSTM(d, d)
        self.lstm_dec = LSTM(d, d)
        self.post_lstm = GateAddNorm(d, p)
        self.enrich = GRN(d, d, d, n_ctx=d, dropout=p)
        self.attn = Attention(d, c["heads"], p)
        self.post_attn = GateAddNorm(d, p)
        self.pos_ff = GRN(d, d, d, dropout=p)
        self.pre_out = GateAddNorm(d, 0.0)
        self.out = nn.Linear(d, c["nq"])
        self.reset_parameters()
        self.taps = {}

    def reset_parameters(self, gen=None):
        """tickgrad's initialisation kinds (not its random streams): see tft.c."""
        with torch.no_grad():
            for name, t in self.named_parameters():
                leaf = name.rsplit(".", 1)[-1]
                if name == "static_embed.weight":
                    t.normal_(0.0, 1.0, generator=gen)
                elif name.endswith("_embed.weight") or name.endswith("_embed.bias"):
                    t.uniform_(-1.0, 1.0, generator=gen)  # a Linear(1 -> d) per variable, as PyTorch inits it
                elif name.startswith("lstm_") and leaf in ("w_ih", "w_hh"):
                    b = 1.0 / math.sqrt(t.shape[-1])
                    t.uniform_(-b, b, generator=gen)
                elif name.startswith("lstm_") and leaf == "bias":
                    t.normal_(0.0, math.sqrt(2.0 / (3.0 * t.shape[-1] / 4)), generator=gen)  # PyTorch's two, summed
                elif ".norm." in name and leaf == "weight":
                    t.fill_(1.0)
                elif leaf == "bias":
                    t.zero_()
                else:  # xavier over the last two dims
                    b = math.sqrt(6.0 / (t.shape[-1] + t.shape[-2]))
                    t.uniform_(-b, b, generator=gen)

    def forward(self, past, future, inst):
        """past [B, enc, n_past], future [B, dec, n_future], inst [B] -> [B, dec, nq]."""
        enc = past.shape[1]
        zeta = self.static_vsn(self.static_embed(inst))
        c_s, c_e = self.static_ctx_s(zeta), self.static_ctx_e(zeta)
        c_h, c_c = self.static_ctx_h(zeta), self.static_ctx_c(zeta)
        x_past, w_past = self.past_vsn(self.past_embed(past), c_s)
        x_fut, w_fut = self.future_vsn(self.future_embed(future), c_s)
        h_enc, h, c = self.lstm_enc(x_past, c_h, c_c)
        h_dec, _, _ = self.lstm_dec(x_fut, h, c)
        phi = self.post_lstm(torch.cat([h_enc, h_dec], 1), torch.cat([x_past, x_fut], 1))
        theta = self.enrich(phi, c_e)
        att_out, att = self.attn(theta, enc)
        delta = self.post_attn(att_out, theta[:, enc:])
        psi = self.pre_out(self.pos_ff(delta), phi[:, enc:])
        self.taps = {"past_vsn_weights": w_past, "future_vsn_weights": w_fut, "attention": att}
        pred = self.out(psi)
        return pred if self.cfg["vol_col"] is None else pred * vol_scale(past[:, :, self.cfg["vol_col"]])[:, None, None]


def vol_scale(x):
    """tft_vol.c: x [B, T] -> sqrt(softplus(100 m) / 100) [B], m the mean square over T."""
    return torch.sqrt(torch.nn.functional.softplus(100.0 * (x * x).mean(dim=1)) / 100.0)


def build(cfg, fused_lstm=False):
    """A TFT for cfg (keys of DEFAULTS; missing ones take the defaults). fused_lstm: run the LSTMs
    with torch's own kernel (cuDNN on a GPU; the same maths, checked by --write-ref) instead of
    the step-by-step loop."""
    model = TFT(cfg)
    for m in (model.lstm_enc, model.lstm_dec):
        m.fused = fused_lstm
    return model


def param_dict(model):
    """tickgrad's names -> parameters."""
    return {f"tft.{n}": p for n, p in model.named_parameters()}


def pinball_loss(pred, target, quantiles):
    """tg_pinball_loss: mean over elements and quantiles of max(q e, (q - 1) e), e = target - pred."""
    q = torch.tensor(quantiles, dtype=pred.dtype, device=pred.device)
    e = target.unsqueeze(-1) - pred
    return torch.maximum(q * e, (q - 1.0) * e).mean()


REF_CFG = dict(hidden=16, heads=4, enc_len=12, dec_len=4, n_past=5, n_future=3, n_static=3, nq=3,
               quantiles=[0.1, 0.5, 0.9], dropout=0.0, batch=4)


def write_ref(path, seed=20240601):
    """Random inputs and weights (rounded to f32), the f64 forward, loss and gradients, saved f32."""
    from safetensors.torch import save_file

    cfg = dict(REF_CFG)
    gen = torch.Generator().manual_seed(seed)
    model = build(cfg).double()
    with torch.no_grad():  # perturb every parameter so no bias or norm is trivially 0 or 1
        model.reset_parameters(gen)
        for name, t in model.named_parameters():
            t.add_(0.2 * (torch.rand(t.shape, generator=gen, dtype=t.dtype) - 0.5))
            t.copy_(t.float().double())
    B, E, D = cfg["batch"], cfg["enc_len"], cfg["dec_len"]
    past = torch.randn(B, E, cfg["n_past"], generator=gen, dtype=torch.float64).float().double()
    future = torch.randn(B, D, cfg["n_future"], generator=gen, dtype=torch.float64).float().double()
    target = torch.randn(B, D, generator=gen, dtype=torch.float64).float().double()
    inst = torch.tensor([2, 0, 2, 1][:B], dtype=torch.int64)
    model.eval()  # dropout is 0 anyway
    pred = model(past, future, inst)
    loss = pinball_loss(pred, target, cfg["quantiles"])
    loss.backward()
    # the fused (cuDNN-style) LSTM path must agree with the step-by-step one
    for m in (model.lstm_enc, model.lstm_dec):
        m.fused = True
    with torch.no_grad():
        pred2 = model(past, future, inst)
    for m in (model.lstm_enc, model.lstm_dec):
        m.fused = False
    assert torch.allclose(pred, pred2, rtol=0, atol=1e-10), "fused LSTM path differs"

    out = {"in.past": past, "in.future": future, "in.inst": inst, "in.target": target,
           "out.pred": pred.detach(), "out.loss": loss.detach().reshape(1)}
    for k, v in model.taps.items():
        out[f"out.{k}"] = v.detach()
    params = param_dict(model)
    for n, p in params.items():
        out[f"init.{n}"] = p.detach()
        out[f"grad.{n}"] = p.grad.detach()
    out = {k: (v.float() if v.is_floating_point() else v).contiguous() for k, v in out.items()}
    meta = {"torch": torch.__version__, "seed": str(seed), "config": json.dumps(cfg),
            "params": str(len(params)), "numel": str(sum(p.numel() for p in params.values()))}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    save_file(out, path, metadata=meta)
    print(f"wrote {path}: {len(params)} parameters, {meta['numel']} values, loss {loss.item():.9g}, "
          f"{os.path.getsize(path)} bytes")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write-ref", action="store_true", help="write reference/data/tft_ref.safetensors")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                                                  "tft_ref.safetensors"))
    ap.add_argument("--count", action="store_true", help="print the default config's parameter count")
    a = ap.parse_args()
    if a.count:
        cfg = dict(DEFAULTS)
        m = build(cfg)
        print(f"default config: {sum(p.numel() for p in m.parameters())} parameters in "
              f"{len(list(m.parameters()))} tensors")
    if a.write_ref:
        write_ref(a.out)
    if not (a.count or a.write_ref):
        ap.print_help()


if __name__ == "__main__":
    main()
