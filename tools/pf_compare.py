"""pytorch-forecasting's TemporalFusionTransformer on the same windows tickgrad trains on, scored as `tickgrad evaluate`.

tickgrad writes its prepared windows once (`tickgrad train --model tft ... --export-windows W.safetensors`):
normalised features, targets, the position -> row map, the instrument of each row, the window starts of every split
and the per-horizon target scales. This script builds pytorch-forecasting's TFT of the same sizes (hidden, heads,
encoder, decoder, quantiles, dropout; hidden_continuous_size = hidden so every real variable is embedded to the model
width, as tickgrad does), feeds it exactly those windows in its own input format and trains it as tickgrad trains:
Adam with tickgrad's learning-rate schedule (linear warm-up over 5% of an epoch's steps, then a half cosine to
final_lr_frac * lr at the last step; --schedule constant for the old comparison), clip, batch, epochs, shuffled
training windows with the last partial batch dropped. It keeps the weights of the epoch with the best validation loss
(the mean pinball loss in target-std units, tickgrad's) and scores them on the validation and test windows with
tickgrad's evaluation (src/train/eval_acc.c): pinball per horizon and quantile, the zero and naive forecasts, q-risk,
interval coverage and calibration. Per epoch it prints seconds and the validation loss and q-risks; at the end one
JSON line, "# {...}", holding "splits" {"val", "test"} with the keys of RUN/evaluation.json.

Run: .venv/bin/python tools/pf_compare.py W.safetensors [--epochs 5] [--batch 32] [--lr 1e-3]
     [--clip 1.0] [--threads 2] [--seed 1] [--schedule cosine|constant] [--final-lr-frac 0.05]
     [--max-train-batches N]
Needs torch, safetensors and pytorch-forecasting (pip install pytorch-forecasting in .venv).
tools/forecast_compare.sh runs both sides over seeds and prints the table.
"""
import argparse
import copy
import json
import math
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


def pinball(e, q):
    return torch.maximum(q * e, (q - 1) * e)


def naive_quantiles(t, qs):
    """The training split's quantiles per horizon [dec, Q] in original units (linear interpolation, as tickgrad)."""
    enc = int(t["meta_enc"])
    rows = t["rows"][t["train_starts"] + enc - 1]
    y = t["y"][rows].double()  # [W, dec] original units
    return torch.stack([torch.quantile(y, q, dim=0, interpolation="linear") for q in qs], dim=1)


def scores(pred, y, scale, qs, naive):
    """tickgrad evaluate's numbers for pred [W, dec, Q] and y [W, dec], both scaled by scale [dec]."""
    pred, y = pred.double(), y.double()
    scale = scale.double()
    qt = torch.tensor(qs, dtype=torch.float64)
    e = y.unsqueeze(-1) - pred                                           # [W, dec, Q]
    pin = pinball(e, qt)                                                 # scaled units
    yo = y * scale.view(1, -1)                                           # original units
    ql = pinball(yo.unsqueeze(-1) - pred * scale.view(1, -1, 1), qt).sum(dim=(0, 1))
    zero_ql = pinball(yo.unsqueeze(-1), qt).sum(dim=(0, 1))
    naive_ql = pinball(yo.unsqueeze(-1) - naive.unsqueeze(0), qt).sum(dim=(0, 1))
    naive_pin = pinball(y.unsqueeze(-1) - (naive / scale.view(-1, 1)).unsqueeze(0), qt)
    denom = yo.abs().sum()
    out = {"windows": int(y.shape[0]), "loss": float(pin.mean()), "zero_loss": float(pinball(y.unsqueeze(-1), qt).mean()),
           "naive_loss": float(naive_pin.mean()), "pinball": pin.mean(dim=0).tolist(),
           "qrisk": (2 * ql / denom).tolist(), "zero_qrisk": (2 * zero_ql / denom).tolist(),
           "naive_qrisk": (2 * naive_ql / denom).tolist(), "intervals": [],
           "below": (y.unsqueeze(-1) < pred).double().mean(dim=(0, 1)).tolist(),
           "below_by_horizon": (y.unsqueeze(-1) < pred).double().mean(dim=0).tolist()}
    for lo, q in enumerate(qs):
        hi = next((j for j in range(lo + 1, len(qs)) if abs(qs[j] - (1 - q)) < 1e-6), None) if q < 0.5 else None
        if hi is None:
            continue
        inside = ((pred[..., lo] <= y) & (y <= pred[..., hi])).double().mean()
        n_in = ((naive[:, lo].view(1, -1) <= yo) & (yo <= naive[:, hi].view(1, -1))).double().mean()
        out["intervals"].append({"lo": q, "hi": qs[hi], "nominal": qs[hi] - q, "coverage": float(inside),
                                 "naive_coverage": float(n_in)})
    return out


def lr_at(step, a, steps_per_epoch):
    """tickgrad's schedule (src/ops/lr_schedule.h) at a 0-based step."""
    warm = max(1, round(0.05 * steps_per_epoch))
    if step < warm:
        return a.lr * (step + 1) / warm
    if a.schedule == "constant":
        return a.lr
    total = a.epochs * steps_per_epoch
    progress = min(max((step - warm) / max(total - warm, 1), 0.0), 1.0)
    return a.lr * (a.final_lr_frac + (1 - a.final_lr_frac) * 0.5 * (1 + math.cos(math.pi * progress)))


def predict(model, data, enc, dec):
    preds = []
    with torch.no_grad():
        for k in range(0, len(data[0]), 256):
            sl = slice(k, k + 256)
            preds.append(model(batch_dict(data[0][sl], data[1][sl], data[2][sl], enc, dec))["prediction"])
    return torch.cat(preds)


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
    ap.add_argument("--schedule", choices=["cosine", "constant"], default="cosine")
    ap.add_argument("--final-lr-frac", type=float, default=0.05)
    a = ap.parse_args()
    from pytorch_forecasting import TemporalFusionTransformer
    from pytorch_forecasting.data import TorchNormalizer
    from pytorch_forecasting.metrics import QuantileLoss

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    t, meta = load(a.windows)
    enc, dec = int(meta["enc_len"]), int(meta["dec_len"])
    t["meta_enc"] = enc
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
    te = windows(t, meta, t["test_starts"]) if "test_starts" in t else None
    ntr, nva = len(t["train_starts"]), len(t["val_starts"])
    steps = ntr // a.batch
    naive = naive_quantiles(t, qs)
    print(f"# pytorch-forecasting TFT: {params} parameters, hidden {hidden}, heads {heads}, encoder {enc}, "
          f"decoder {dec}, {len(names)} reals ({len(fut_names)} known), {ntr} train / {nva} val windows, "
          f"batch {a.batch}, threads {a.threads}, seed {a.seed}, schedule {a.schedule}, torch {torch.__version__}")
    print("epoch,train_loss,val_loss,val_qrisk_p50,val_qrisk_p90,lr,seconds,train_seconds,samples_per_s")
    i50, i90 = qs.index(0.5), qs.index(0.9)
    results, best, best_state, best_epoch, step = [], math.inf, None, 0, 0
    for epoch in range(1, a.epochs + 1):
        t0 = time.perf_counter()
        model.train()
        perm = torch.randperm(ntr)
        total, n, lr = 0.0, 0, a.lr
        for k in range(0, ntr - a.batch + 1, a.batch):  # the last partial batch is dropped, as tickgrad does
            if a.max_train_batches and n >= a.max_train_batches:
                break
            lr = lr_at(step, a, steps)
            for g in opt.param_groups:
                g["lr"] = lr
            idx = perm[k:k + a.batch]
            out = model(batch_dict(tr[0][idx], tr[1][idx], tr[2][idx], enc, dec))["prediction"]
            loss = loss_fn.loss(out, tr[3][idx]).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip)
            opt.step()
            total += loss.detach().item()
            n += 1
            step += 1
        t_train = time.perf_counter() - t0
        model.eval()
        sv = scores(predict(model, va, enc, dec), va[3], t["y_scale"], qs, naive)
        if sv["loss"] < best - 1e-4:  # tickgrad's early-stopping rule picks the best epoch the same way
            best, best_state, best_epoch = sv["loss"], copy.deepcopy(model.state_dict()), epoch
        secs = time.perf_counter() - t0
        results.append({"epoch": epoch, "val_loss": sv["loss"], "p50": sv["qrisk"][i50], "p90": sv["qrisk"][i90],
                        "seconds": secs})
        print(f"{epoch},{total / max(n, 1):.6f},{sv['loss']:.6f},{sv['qrisk'][i50]:.6f},{sv['qrisk'][i90]:.6f},"
              f"{lr:.3g},{secs:.2f},{t_train:.2f},{n * a.batch / t_train:.1f}", flush=True)
    model.load_state_dict(best_state)
    model.eval()
    splits = {"val": scores(predict(model, va, enc, dec), va[3], t["y_scale"], qs, naive)}
    if te is not None:
        splits["test"] = scores(predict(model, te, enc, dec), te[3], t["y_scale"], qs, naive)
    print("# " + json.dumps({"peer": "pytorch-forecasting", "params": params, "seed": a.seed, "best_epoch": best_epoch,
                             "quantiles": qs, "epochs": results, "splits": splits}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
