"""The comparison table of tools/forecast_compare.sh: per data set and split, tickgrad and pytorch-forecasting over seeds.

usage: python3 tools/forecast_table.py OUT
Reads OUT/NAME-tickgrad-SEED/evaluation.json (written by training's end, tickgrad evaluate's numbers) and the last
line of OUT/NAME-pf-SEED.log (tools/pf_compare.py, the same numbers computed the same way) and prints, per NAME and
split: the mean pinball loss of each seed and their mean, the 10-90% interval's coverage, q-risk P50 and P90, the
pinball loss per horizon (mean over seeds) and the two baselines (zero forecast, training quantiles).
"""
import glob
import json
import os
import re
import statistics
import sys


def runs(out):
    """{name: {side: {seed: scores}}} with scores the evaluation.json-like dict."""
    found = {}
    for path in glob.glob(os.path.join(out, "*-tickgrad-*", "evaluation.json")):
        m = re.match(r"(.+)-tickgrad-(\d+)$", os.path.basename(os.path.dirname(path)))
        with open(path, encoding="utf-8") as f:
            found.setdefault(m.group(1), {}).setdefault("tickgrad", {})[int(m.group(2))] = json.load(f)
    for path in glob.glob(os.path.join(out, "*-pf-*.log")):
        m = re.match(r"(.+)-pf-(\d+)\.log$", os.path.basename(path))
        with open(path, encoding="utf-8") as f:
            last = [line for line in f if line.startswith("# {")]
        if last:
            found.setdefault(m.group(1), {}).setdefault("pytorch-forecasting", {})[int(m.group(2))] = json.loads(last[-1][2:])
    return found


def widest(split):
    return split["intervals"][0]["coverage"] if split.get("intervals") else float("nan")


def mean(xs):
    return statistics.fmean(xs) if xs else float("nan")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    for name, sides in sorted(runs(out).items()):
        print(f"\n### {name}\n")
        print("| split | side | seeds | pinball per seed | mean | 10-90% coverage | q-risk P50 | q-risk P90 | pinball per "
              "horizon (mean) | zero forecast | training quantiles |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for split in ("val", "test"):
            for side in ("tickgrad", "pytorch-forecasting"):
                seeds = sides.get(side, {})
                rows = [(s, seeds[s]["splits"][split]) for s in sorted(seeds) if split in seeds[s]["splits"]]
                if not rows:
                    continue
                q = seeds[rows[0][0]]["quantiles"]
                i50, i90 = q.index(0.5), q.index(0.9)
                per_h = [mean([mean(r["pinball"][h]) for _, r in rows]) for h in range(len(rows[0][1]["pinball"]))]
                losses = " / ".join("%.4f" % r["loss"] for _, r in rows)
                print(f"| {split} | {side} | {' '.join(str(s) for s, _ in rows)} | "
                      f"{losses} | **{mean([r['loss'] for _, r in rows]):.4f}** | "
                      f"{mean([widest(r) for _, r in rows]):.3f} | {mean([r['qrisk'][i50] for _, r in rows]):.4f} | "
                      f"{mean([r['qrisk'][i90] for _, r in rows]):.4f} | {' '.join(f'{v:.4f}' for v in per_h)} | "
                      f"{rows[0][1]['zero_loss']:.4f} | {rows[0][1]['naive_loss']:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
