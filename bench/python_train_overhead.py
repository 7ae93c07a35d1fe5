"""The cost of training from Python: the same run through `tickgrad train` and through tickgrad.train.

Run from the repository root, after building the command and the extension module:
    PYTHONPATH=python .venv/bin/python bench/python_train_overhead.py --cli build/tickgrad
Writes `tickgrad synth` bars to a temporary folder, then trains each case (mlp, tft; a few epochs, threads=1) on
that file through the command (a subprocess) and through tickgrad.train(..., verbose=False) on the same path,
alternating, and prints the best of N wall times of each, the ratio python/command and the overhead in %.
The subprocess time includes the command's start (process, library load); the Python time includes the config
handling in Python. A process pays its start (libraries loaded, `tickgrad --version` is timed as "command start")
and first-use costs (kernels set up) in every run, while the Python process pays them once: short runs favour
Python, so the cases are sized to take seconds. The goal is within 2%. Prints the CPU's ISA line (no assertion: speed is reported, not tested).
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import tickgrad

CASES = {
    "mlp": dict(model="mlp", hidden=128, window=32, epochs=4, threads=1, device="cpu"),
    "tft": dict(model="tft", hidden=16, heads=2, enc_len=32, horizons=4, epochs=1, threads=1, device="cpu"),
}


def isa_line() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        flags = []
    have = [x for x in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if x in flags]
    return "ISA: " + (" ".join(have) if have else "none of avx2 avx512f avx512_bf16 amx_bf16")


def cli_args(settings: dict) -> list:
    out = []
    for k, v in settings.items():
        out += ["--" + k.replace("_", "-"), str(v)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default="build/tickgrad", help="the tickgrad command (default build/tickgrad)")
    ap.add_argument("--bars", type=int, default=20000, help="synthetic bars (default 20000)")
    ap.add_argument("--reps", type=int, default=3, help="runs of each, best taken (default 3, at least 3)")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    a = ap.parse_args()
    reps = max(a.reps, 3)
    tmp = tempfile.mkdtemp(prefix="tg-train-bench-")
    try:
        data = os.path.join(tmp, "bars.csv")
        subprocess.run([a.cli, "synth", "--bars", str(a.bars), "--signal", "0.3", "--seed", "3", "--out", data],
                       check=True, capture_output=True)
        print(isa_line())
        print(f"python {sys.version.split()[0]}, tickgrad {tickgrad.__version__}, {a.bars} bars, best of {reps}")
        start = float("inf")
        for _ in range(reps):
            t0 = time.perf_counter()
            subprocess.run([a.cli, "--version"], check=True, capture_output=True)
            start = min(start, time.perf_counter() - t0)
        print(f"command start ({a.cli} --version): {start:.3f} s")
        for name in a.cases.split(","):
            settings = CASES[name]
            best_cli = best_py = float("inf")
            cmd = None
            for r in range(reps):
                out = os.path.join(tmp, f"{name}-cli-{r}")
                cmd = [a.cli, "train", "--data", data, "--out", out, *cli_args(settings)]
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                best_cli = min(best_cli, time.perf_counter() - t0)
                s = dict(settings)
                t0 = time.perf_counter()
                tickgrad.train(s.pop("model"), data, out=os.path.join(tmp, f"{name}-py-{r}"), verbose=False,
                               progress=False, **s)
                best_py = min(best_py, time.perf_counter() - t0)
            ratio = best_py / best_cli
            print(f"{name}: command {best_cli:.3f} s, python {best_py:.3f} s, python/command {ratio:.4f} "
                  f"(overhead {100 * (ratio - 1):+.2f}%)")
            print(f"  command: {shlex.join(cmd)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
