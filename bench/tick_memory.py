"""Peak resident memory of `tickgrad bars` on a trade file and on one 10x longer: streaming keeps it flat.

Writes a synthetic trade CSV (ts in epoch ns, price, size, side) of N rows and one of 10 N rows (the same random walk,
continued) into a temporary folder, runs `tickgrad bars --by volume:V` on each with V scaled so both give the same
number of bars (memory is bounded by the bars produced, not by the ticks read), and prints each run's peak RSS
(getrusage of the child) and the ratio. Goal: at most 1.2.
Usage: python bench/tick_memory.py TICKGRAD [--rows N]
"""
import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile


def write_trades(path, rows, seed=5):
    rng = random.Random(seed)
    ts, price = 1_700_000_000_000_000_000, 100.0
    with open(path, "w") as f:
        f.write("ts,price,size,side\n")
        buf = []
        for i in range(rows):
            ts += rng.randint(1, 2_000_000)
            price = max(1.0, price + rng.choice((-0.01, 0.0, 0.01)))
            buf.append(f"{ts},{price:.2f},{rng.randint(1, 500)},{'buy' if rng.random() < 0.5 else 'sell'}\n")
            if len(buf) == 65536:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))


def peak_rss_kib(cmd):
    """Runs cmd; its peak resident set in KiB (Linux ru_maxrss)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if status != 0:
        sys.exit(f"tick_memory: {' '.join(cmd)} failed:\n{err}")
    return usage.ru_maxrss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tickgrad")
    ap.add_argument("--rows", type=int, default=500_000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        small, big = os.path.join(d, "small.csv"), os.path.join(d, "big.csv")
        write_trades(small, a.rows)
        write_trades(big, 10 * a.rows)
        per_bar = 250 * 500  # about 500 trades of mean size 250 a bar in the small file
        rss = []
        for path, scale in ((small, 1), (big, 10)):
            rss.append(peak_rss_kib([a.tickgrad, "--threads", "1", "bars", "--data", path, "--by",
                                     f"volume:{per_bar * scale}", "--out", os.path.join(d, "bars.csv")]))
            size = os.path.getsize(path) / 2**20
            print(f"tick_memory {os.path.basename(path)}: {size:.0f} MiB of trades, peak RSS {rss[-1] / 1024:.1f} MiB")
        print(f"tick_memory ratio (10x rows / 1x rows): {rss[1] / rss[0]:.2f} (goal <= 1.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
