"""pytorch-forecasting's TemporalFusionTransformer on the same windows tickgrad trains on.

tickgrad writes its prepared windows once (`tickgrad train --model tft ... --export-windows W.safetensors`):
normalised features, targets, the position -> row map, the instrument of each row, the training and
validation window starts and the per-horizon target scales. This script builds pytorch-forecasting's
TFT of the same sizes (hidden, heads, encoder, decoder, quantiles, dropout; hidden_continuous_size =
hidden so every real variable is embedded to the model width, as tickgrad does), feeds it exactly
those windows in its own input format, trains it with the same optimiser settings (Adam, lr, clip,
batch, epochs, shuffled training windows) and prints, per epoch, seconds and the validation q-risk
P50/P90 in original target units, computed as tickgrad computes them.

Run: .venv/bin/python tools/pf_compare.py W.safetensors [--epochs 5] [--batch 32] [--lr 1e-3]
     [--clip 1.0] [--threads 2] [--seed 1] [--max-train-batches N]
Needs torch, safetensors and pytorch-forecasting (pip install pytorch-forecasting in .venv).
"""
import argparse
import json
import sys
import time

import torch
from safetensors import safe_open


def load(path):
    with safe_open(path, "pt") as f:
        meta = f.metadata()
        t = {k: f.get_tensor(k) for k in f.keys()}
    return t, meta


def windows(t, meta, starts):
    """Past [W, enc, F], future reals [W, dec, F] (known columns only, others 0), inst [W], y [W, dec]."""
    enc, dec = int(meta["enc_len"]), int(meta["dec_len"])
    fut_cols = [int(c) for c in meta["future_cols"].split(",")]
    rows = t["rows"][starts.unsqueeze(1) + torch.arange(enc + dec).unsqueeze(0)]  # [W, enc+dec]
    x = t["x"]
    past = x[rows[:, :enc]]
    fut = torch.zeros(len(starts), dec, x.shape[1])
    fut[:, :, fut_cols] = x[rows[:, enc:]][:, :, fut_cols]
    y = t["y"][rows[:, enc - 1]] / t["y_scale"]  # [W, dec] scaled like tickgrad's loss
    inst = t["inst"][rows[:, 0]].long()
    return past, fut, inst, y


def batch_dict(past, fut, inst, enc, dec):
    b = past.shape[0]
    return {
        "encoder_cont": past, "decoder_cont": fut,
        "encoder_cat": inst.view(b, 1, 1).expand(b, enc, 1), "decoder_cat": inst.view(b, 1, 1).expand(b, dec, 1),
        "encoder_lengths": torch.full((b,), enc, dtype=torch.long),
        "decoder_lengths": torch.full((b,), dec, dtype=torch.long),
        "target_scale": torch.tensor([[0.0, 1.0]]).expand(b, 2),
    }


def q_risk(pred, y, scale, qs):
    """R_q = 2 sum QL / sum |y| in original units; pred [W, dec, Q], y [W, dec] (scaled)."""
    pred, y = pred * scale.view(1, -1, 1), y * scale.view(1, -1)
    denom = y.abs().sum()
    out = []
    for i, q in enumerate(qs):
        e = y - pred[..., i]
        out.append(float(2 * torch.maximum(q * e, (q - 1) * e).sum() / denom))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("windows")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-train-batches", type=int, default=0)
    a = ap.parse_args()
    from pytorch_forecasting import TemporalFusionTransformer
    from pytorch_forecasting.data import TorchNormalizer
    from pytorch_forecasting.metrics import QuantileLoss

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    t, meta = load(a.windows)
    enc, dec = int(meta["enc_len"]), int(meta["dec_len"])
    hidden, heads = int(meta["hidden"]), int(meta["heads"])
    qs = [float(q) for q in meta["quantiles"].split(",")]
    names = meta["features"].split(",")
    fut_names = [names[int(c)] for c in meta["future_cols"].split(",")]
    n_inst = int(t["inst"].max()) + 1
    model = TemporalFusionTransformer(
        hidden_size=hidden, lstm_layers=1, dropout=float(meta["dropout"]), output_size=len(qs),
        loss=QuantileLoss(qs), attention_head_size=heads, max_encoder_length=enc,
        static_categoricals=["inst"], x_categoricals=["inst"], embedding_sizes={"inst": (n_inst, hidden)},
        time_varying_reals_encoder=names, time_varying_reals_decoder=fut_names, x_reals=names,
        hidden_continuous_size=hidden, learning_rate=a.lr,
        output_transformer=TorchNormalizer(method="identity", center=False))  # targets come scaled, as tickgrad's
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    loss_fn = QuantileLoss(qs)
    tr = windows(t, meta, t["train_starts"])
    va = windows(t, meta, t["val_starts"])
    ntr, nva = len(t["train_starts"]), len(t["val_starts"])
    print(f"# pytorch-forecasting TFT: {params} parameters, hidden {hidden}, heads {heads}, encoder {enc}, "
          f"decoder {dec}, {len(names)} reals ({len(fut_names)} known), {ntr} train / {nva} val windows, "
          f"batch {a.batch}, threads {a.threads}, torch {torch.__version__}")
    print("epoch,train_loss,val_qrisk_p50,val_qrisk_p90,seconds,train_seconds,samples_per_s")
    i50, i90 = qs.index(0.5), qs.index(0.9)
    results = []
    for epoch in range(1, a.epochs + 1):
        t0 = time.perf_counter()
        model.train()
        perm = torch.randperm(ntr)
        total, n = 0.0, 0
        for k in range(0, ntr - a.batch + 1, a.batch):  # the last partial batch is dropped, as tickgrad does
            if a.max_train_batches and n >= a.max_train_batches:
                break
            idx = perm[k:k + a.batch]
            out = model(batch_dict(tr[0][idx], tr[1][idx], tr[2][idx], enc, dec))["prediction"]
            loss = loss_fn.loss(out, tr[3][idx]).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip)
            opt.step()
            total += float(loss)
            n += 1
        t_train = time.perf_counter() - t0
        model.eval()
        preds = []
        with torch.no_grad():
            for k in range(0, nva, 256):
                sl = slice(k, k + 256)
                preds.append(model(batch_dict(va[0][sl], va[1][sl], va[2][sl], enc, dec))["prediction"])
        qr = q_risk(torch.cat(preds), va[3], t["y_scale"], qs)
        secs = time.perf_counter() - t0
        results.append({"epoch": epoch, "p50": qr[i50], "p90": qr[i90], "seconds": secs})
        print(f"{epoch},{total / max(n, 1):.6f},{qr[i50]:.6f},{qr[i90]:.6f},{secs:.2f},{t_train:.2f},"
              f"{n * a.batch / t_train:.1f}", flush=True)
    print("# " + json.dumps({"peer": "pytorch-forecasting", "params": params, "epochs": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
