#!/usr/bin/env python3
"""safetensors interop between tickgrad and PyTorch (run by hand, not in CI).

1. Writes reference/data/torch_saved.safetensors, torch_f16.safetensors and torch_bf16.safetensors with
   torch + safetensors.torch.save_file. tests/test_checkpoint.c loads the first two and recomputes the
   values (keep the formulas below and test_torch_interop() in that file in step); tests/test_safetensors_bf16.c
   loads the third and checks it against its own copy of BF16_INPUT_BITS, BF16_RAW_BITS and the float64 values
   of torch's rounding (keep those in step too).
2. Runs <build>/test_checkpoint and <build>/test_safetensors_bf16 with TG_INTEROP_DIR=<tmp>, which makes them
   also write tickgrad_tensors.safetensors (tg_safetensors_save), tickgrad_weights.safetensors
   (tg_store_save) and tickgrad_bf16.safetensors (BF16 tensors) there, then loads them with safetensors and
   compares every value exactly (bf16 bit for bit).

Usage: .venv/bin/python reference/safetensors_interop.py [--build build-c] [--no-write]
Prints PASS or FAIL (exit status 0 or 1). CTest runs it with --no-write as `safetensors_interop`
(tests/safetensors_interop_test.sh), skipped where no python with torch is found.
"""
import argparse
import math
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


# f32 inputs as bit patterns (each exact) that torch narrows to bf16: ties to even both ways and in both signs,
# near-ties, the largest finite values (round to inf), infinities, NaNs, subnormals (ties too), -0, 0, pi, 0.1.
BF16_INPUT_BITS = [
    0x3F800000, 0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0xBF818000, 0xBF808000, 0x7F7FFFFF,
    0x7F7F8000, 0x7F7F7FFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
    0x00000001, 0x00008000, 0x00018000, 0x00010000, 0x807FFFFF, 0x80000000, 0x00000000, 0x40490FDB,
    0x3DCCCCCD,
]
# bf16 bit patterns stored as they are: NaN payloads and signs (0x7F81 signalling), infinities, subnormals,
# -0, the largest finite, the smallest normal, 1.0
BF16_RAW_BITS = [0x7FC1, 0xFFC0, 0x7F81, 0xFFFF, 0x7F80, 0xFF80, 0x0001, 0x8001, 0x8000, 0x7F7F, 0x0080, 0x3F80]


def f32_of_bits(bits):
    return torch.tensor([b - (1 << 32) if b >= 1 << 31 else b for b in bits], dtype=torch.int32).view(torch.float32)


def bf16_of_bits(bits):
    return torch.tensor([b - (1 << 16) if b >= 1 << 15 else b for b in bits], dtype=torch.int16).view(torch.bfloat16)


def bits_of(t):
    """Unsigned bit patterns of a float32 or bfloat16 tensor, as a list."""
    if t.dtype == torch.bfloat16:
        return [b & 0xFFFF for b in t.view(torch.int16).flatten().tolist()]
    return [b & 0xFFFFFFFF for b in t.view(torch.int32).flatten().tolist()]


def torch_bf16_tensors():
    """The tensors of torch_bf16.safetensors. torch narrows every NaN to one pattern of its own (0xFFFF on its
    vectorised CPU path, 0x7FC0 on its scalar one), so tickgrad's test only requires NaN there."""
    src = f32_of_bits(BF16_INPUT_BITS)
    return {"src": src, "narrowed": src.to(torch.bfloat16), "raw": bf16_of_bits(BF16_RAW_BITS).reshape(3, 4)}


def write_torch_files():
    os.makedirs(DATA, exist_ok=True)
    save_file(torch_tensors(), os.path.join(DATA, "torch_saved.safetensors"),
              metadata={"source": "torch", "note": "written by reference/safetensors_interop.py"})
    save_file({"h": torch.arange(4, dtype=torch.float16), "x": torch.arange(2, dtype=torch.float32)},
              os.path.join(DATA, "torch_f16.safetensors"))
    save_file(torch_bf16_tensors(), os.path.join(DATA, "torch_bf16.safetensors"),
              metadata={"source": "torch", "note": "written by reference/safetensors_interop.py"})
    back = load_file(os.path.join(DATA, "torch_bf16.safetensors"))
    for k, v in torch_bf16_tensors().items():
        check(back[k].dtype == v.dtype and bits_of(back[k]) == bits_of(v), f"torch round trip bf16 {k}")
    # read back our own file with safetensors as a sanity check of the writer
    back = load_file(os.path.join(DATA, "torch_saved.safetensors"))
    for k, v in torch_tensors().items():
        check(torch.equal(back[k], v), f"torch round trip {k}")
    print("wrote", os.path.relpath(os.path.join(DATA, "torch_saved.safetensors"), ROOT),
          "torch_f16.safetensors and torch_bf16.safetensors")


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


def tickgrad_nan_bf16(bits):
    """tickgrad's narrowing of a float32 NaN: sign and top payload bits kept, quiet bit set."""
    return (bits >> 16) | 0x0040


def check_tickgrad_bf16(path):
    """tickgrad_bf16.safetensors, which tests/test_safetensors_bf16.c (interop_write) writes: "packed" is
    tg_bf16_pack of BF16_INPUT_BITS, "rounded" tg_f32_round_bf16 of the same, "raw" BF16_RAW_BITS [3, 4] as they
    are, "widened" tg_bf16_unpack of those [12]."""
    got = load_file(path)
    check(sorted(got) == ["packed", "raw", "rounded", "widened"], f"bf16 tensor names {sorted(got)}")
    if sorted(got) != ["packed", "raw", "rounded", "widened"]:
        return
    src = f32_of_bits(BF16_INPUT_BITS)
    ref = bits_of(src.to(torch.bfloat16))
    want = [tickgrad_nan_bf16(b) if math.isnan(v) else r for b, v, r in zip(BF16_INPUT_BITS, src.tolist(), ref)]
    check(got["packed"].dtype == torch.bfloat16 and list(got["packed"].shape) == [len(BF16_INPUT_BITS)],
          f"packed is {got['packed'].dtype} {list(got['packed'].shape)}")
    check(bits_of(got["packed"]) == want,
          f"packed bits {[hex(b) for b in bits_of(got['packed'])]} vs {[hex(b) for b in want]}")
    check(got["rounded"].dtype == torch.float32 and bits_of(got["rounded"]) == [b << 16 for b in want],
          f"rounded bits {[hex(b) for b in bits_of(got['rounded'])]}")
    check(got["raw"].dtype == torch.bfloat16 and list(got["raw"].shape) == [3, 4] and
          bits_of(got["raw"]) == BF16_RAW_BITS, f"raw bits {[hex(b) for b in bits_of(got['raw'])]}")
    widened = bits_of(bf16_of_bits(BF16_RAW_BITS).to(torch.float32))
    check(widened == [b << 16 for b in BF16_RAW_BITS], f"torch widens bf16 as {[hex(b) for b in widened]}")
    check(got["widened"].dtype == torch.float32 and bits_of(got["widened"]) == widened,
          f"widened bits {[hex(b) for b in bits_of(got['widened'])]}")
    with open(path, "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
    check((8 + n) % 8 == 0, f"tickgrad_bf16.safetensors header length {n} not padded to 8")
    print("  read tickgrad_bf16.safetensors")


def run_test(build, name, tmp):
    """Runs <build>/<name> with TG_INTEROP_DIR=tmp; False when it is missing."""
    exe = os.path.join(build, name)
    if not os.path.exists(exe):
        print(f"  {exe} not found; build first (cmake --build {build})")
        failures.append(f"{name} binary missing")
        return False
    env = dict(os.environ, TG_INTEROP_DIR=tmp, TG_SOURCE_DIR=ROOT)
    r = subprocess.run([exe], env=env, capture_output=True, text=True)
    print(f"  {name}:", (r.stdout.strip().splitlines() or ["(no output)"])[-1])
    check(r.returncode == 0, f"{name} exit status")
    return True


def read_tickgrad_files(build):
    with tempfile.TemporaryDirectory() as tmp:
        if run_test(build, "test_safetensors_bf16", tmp):
            bpath = os.path.join(tmp, "tickgrad_bf16.safetensors")
            if os.path.exists(bpath):
                check_tickgrad_bf16(bpath)
            else:
                failures.append("test_safetensors_bf16 wrote no interop file")
        if not run_test(build, "test_checkpoint", tmp):
            return
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
