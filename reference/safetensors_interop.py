#!/usr/bin/env python3
"""safetensors interop between tickgrad and PyTorch (run by hand, not in CI).

1. Writes reference/data/torch_saved.safetensors and reference/data/torch_f16.safetensors with
   torch + safetensors.torch.save_file. tests/test_checkpoint.c loads them and recomputes the
   values (keep the formulas below and test_torch_interop() in that file in step).
2. Runs <build>/test_checkpoint with TG_INTEROP_DIR=<tmp>, which makes the test also write
   tickgrad_tensors.safetensors (tg_safetensors_save) and tickgrad_weights.safetensors
   (tg_store_save) there, then loads both with safetensors and compares every value exactly.

Usage: .venv/bin/python reference/safetensors_interop.py [--build build-c] [--no-write]
Prints PASS or FAIL (exit status 0 or 1).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "reference", "data")

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("  mismatch:", what)


def torch_tensors():
    """The tensors of torch_saved.safetensors; test_checkpoint.c recomputes each value."""
    return {
        "a": torch.arange(12, dtype=torch.float32).reshape(3, 4) / 4 - 1,  # k/4 - 1
        "b": torch.arange(-3, 2, dtype=torch.int32),  # k - 3
        "c": torch.arange(4, dtype=torch.int64) * 3_000_000_000_000 - 5,  # k*3e12 - 5
        "s": torch.tensor(2.5, dtype=torch.float32),  # scalar
        "e": torch.zeros(0, 3, dtype=torch.float32),  # empty
        "n.dotted.name": torch.arange(6, dtype=torch.float32).reshape(1, 2, 3) * -0.125,
    }


def write_torch_files():
    os.makedirs(DATA, exist_ok=True)
    save_file(torch_tensors(), os.path.join(DATA, "torch_saved.safetensors"),
              metadata={"source": "torch", "note": "written by reference/safetensors_interop.py"})
    save_file({"h": torch.arange(4, dtype=torch.float16), "x": torch.arange(2, dtype=torch.float32)},
              os.path.join(DATA, "torch_f16.safetensors"))
    # read back our own file with safetensors as a sanity check of the writer
    back = load_file(os.path.join(DATA, "torch_saved.safetensors"))
    for k, v in torch_tensors().items():
        check(torch.equal(back[k], v), f"torch round trip {k}")
    print("wrote", os.path.relpath(os.path.join(DATA, "torch_saved.safetensors"), ROOT), "and torch_f16.safetensors")


def expect_tickgrad_tensors():
    """What tests/test_checkpoint.c (interop_write) writes with tg_safetensors_save."""
    k6 = torch.arange(6, dtype=torch.float32)
    return {
        "f": (k6 * 0.5 - 1.25).reshape(2, 3),
        "i32": torch.tensor([k * 1000003 - 7 for k in range(4)], dtype=torch.int32),
        "i64": torch.tensor([(k + 1) * 10**15 + k for k in range(2)] + [-(2**62)], dtype=torch.int64),
        "scalar": torch.tensor(3.5, dtype=torch.float32),
        "empty": torch.zeros(0, 4, dtype=torch.float32),
    }


def expect_tickgrad_weights():
    """tg_store_save of the store in interop_write: value k of each parameter is k/8 - 1 (w) or k/16 (b)."""
    return {
        "layer.w": (torch.arange(12, dtype=torch.float32) / 8 - 1).reshape(3, 4),
        "layer.b": torch.arange(4, dtype=torch.float32) / 16,
    }


def read_tickgrad_files(build):
    exe = os.path.join(build, "test_checkpoint")
    if not os.path.exists(exe):
        print(f"  {exe} not found; build first (cmake --build {build})")
        failures.append("test_checkpoint binary missing")
        return
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TG_INTEROP_DIR=tmp, TG_SOURCE_DIR=ROOT)
        r = subprocess.run([exe], env=env, capture_output=True, text=True)
        print("  test_checkpoint:", (r.stdout.strip().splitlines() or ["(no output)"])[-1])
        check(r.returncode == 0, "test_checkpoint exit status")
        tpath = os.path.join(tmp, "tickgrad_tensors.safetensors")
        wpath = os.path.join(tmp, "tickgrad_weights.safetensors")
        if not (os.path.exists(tpath) and os.path.exists(wpath)):
            failures.append("test_checkpoint wrote no interop files")
            return
        got = load_file(tpath)
        want = expect_tickgrad_tensors()
        check(sorted(got) == sorted(want), f"tensor names {sorted(got)}")
        for k, v in want.items():
            if k in got:
                check(got[k].dtype == v.dtype and got[k].shape == v.shape and torch.equal(got[k], v),
                      f"tensor {k}: {got[k]} vs {v}")
        with safe_open(tpath, framework="pt") as f:
            meta = f.metadata()
        check(meta.get("written_by") == "tickgrad", f"metadata {meta}")
        check(meta.get("note") == 'quote " backslash \\ newline \n tab \t unicode \u00e9',
              f"escaped metadata {meta.get('note')!r}")
        got = load_file(wpath)
        want = expect_tickgrad_weights()
        check(sorted(got) == sorted(want), f"weight names {sorted(got)}")
        for k, v in want.items():
            if k in got:
                check(torch.equal(got[k], v), f"weight {k}")
        with safe_open(wpath, framework="pt") as f:
            meta = f.metadata()
        check(meta == {"format": "tickgrad-weights", "version": "1"}, f"weights metadata {meta}")
        # safetensors requires the header padded to 8 bytes and data offsets that tile the buffer
        for p in (tpath, wpath):
            with open(p, "rb") as fh:
                n = int.from_bytes(fh.read(8), "little")
            check((8 + n) % 8 == 0, f"{os.path.basename(p)} header length {n} not padded to 8")
        print("  read tickgrad_tensors.safetensors and tickgrad_weights.safetensors")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=None, help="CMake build folder with test_checkpoint")
    ap.add_argument("--no-write", action="store_true", help="do not rewrite reference/data files")
    args = ap.parse_args()
    if not args.no_write:
        write_torch_files()
    build = args.build
    if build is None:
        build = next((os.path.join(ROOT, b) for b in ("build", "build-c") if os.path.isdir(os.path.join(ROOT, b))),
                     os.path.join(ROOT, "build"))
    read_tickgrad_files(os.path.abspath(build))
    print("PASS" if not failures else f"FAIL ({len(failures)} problems)")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
