#!/usr/bin/env python3
"""Cross-check tickgrad's DBN reader against Databento's own decoder, bar by bar.

Run by hand (not in CI), from anywhere:

    .venv/bin/pip install databento-dbn
    .venv/bin/python tools/crosscheck_dbn.py [--build build-dbn] [--shared ../shared/data]

It runs tickgrad's test binary (test_dbn) with TG_DUMP_BARS set, which writes every bar tickgrad
read from every DBN file in the shared data folder, in file order, to a CSV. It then decodes every
DBN file it finds in that folder (recognised by content: "DBN", a zstd frame, or a legacy DBZ
skippable frame) with databento_dbn.DBNDecoder and compares ts_event, instrument_id, the four
prices (Databento's pretty_* floats) and the volume exactly. Prints one line per file and a final
PASS or FAIL (exit status 0 or 1).
"""
import argparse
import csv
import os
import struct
import subprocess
import sys
import tempfile

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
OHLCV_RTYPES = {0x11, 0x20, 0x21, 0x22, 0x23, 0x24}


def kind_of(head):
    """'dbn', 'zstd', 'dbz' or None from a file's first bytes."""
    if head[:3] == b"DBN":
        return "dbn"
    if head[:4] == ZSTD_MAGIC:
        return "zstd"
    if len(head) >= 12 and (struct.unpack("<I", head[:4])[0] & 0xFFFFFFF0) == 0x184D2A50:
        return "dbz" if head[8:11] == b"DBZ" else "zstd"
    return None


def find_test_binary(root, build):
    candidates = [build] if build else ["build-dbn", "build", "build-dbn-asan"]
    for c in candidates:
        for p in (os.path.join(root, c, "test_dbn"), os.path.join(c, "test_dbn")):
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    return None


def tickgrad_bars(binary, shared):
    """{relative path: [row tuples]} from the test binary's dump."""
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "bars.csv")
        env = dict(os.environ, TG_SHARED_DATA=shared, TG_DUMP_BARS=dump)
        run = subprocess.run([binary], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        last = run.stdout.strip().splitlines()[-1:] or [""]
        print(f"{binary}: exit {run.returncode}: {last[0]}")
        if run.returncode != 0:
            print(run.stdout[-3000:])
        out = {}
        if not os.path.exists(dump):
            return out, run.returncode
        with open(dump, newline="") as f:
            for row in csv.DictReader(f):
                out.setdefault(row["file"], []).append(
                    (int(row["ts"]), int(row["instrument"]), float(row["open"]), float(row["high"]),
                     float(row["low"]), float(row["close"]), float(row["volume"])))
        return out, run.returncode


def databento_bars(dbn, path, kind):
    """The OHLCV bars Databento's decoder gives, as row tuples, or raises."""
    with open(path, "rb") as f:
        raw = f.read()
    comp = dbn.Compression.ZSTD if kind == "zstd" else dbn.Compression.NONE
    dec = dbn.DBNDecoder(compression=comp)
    dec.write(raw)
    rows = []
    for r in dec.decode():
        if isinstance(r, dbn.Metadata):
            continue
        rtype = int(r.rtype.value) if hasattr(r.rtype, "value") else int(r.rtype)
        if rtype not in OHLCV_RTYPES:
            raise ValueError(f"record of rtype 0x{rtype:02X}, which tickgrad refuses")
        rows.append((r.ts_event, r.instrument_id, r.pretty_open, r.pretty_high, r.pretty_low, r.pretty_close,
                     float(r.volume)))
    return rows


def first_difference(a, b):
    if len(a) != len(b):
        return f"{len(a)} bars from tickgrad, {len(b)} from databento-dbn"
    names = ("ts", "instrument", "open", "high", "low", "close", "volume")
    for i, (x, y) in enumerate(zip(a, b)):
        for name, u, v in zip(names, x, y):
            if u != v and not (u != u and v != v):  # NaN equals NaN here
                return f"bar {i}: {name} is {u!r} in tickgrad, {v!r} in databento-dbn"
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", help="build folder holding test_dbn (default: build-dbn, then build)")
    ap.add_argument("--shared", default=os.path.join(root, "..", "shared", "data"), help="shared data folder")
    args = ap.parse_args()
    try:
        import databento_dbn as dbn
    except ImportError:
        print("databento_dbn is not installed: .venv/bin/pip install databento-dbn")
        return 1
    shared = os.path.abspath(args.shared)
    binary = find_test_binary(root, args.build)
    if not binary:
        print("no test_dbn binary found; build first (cmake --build build-dbn) or pass --build")
        return 1
    try:
        from importlib.metadata import version
        ref = version("databento-dbn")
    except Exception:
        ref = "?"
    print(f"databento-dbn {ref}, shared data {shared}")
    ours, rc = tickgrad_bars(binary, shared)

    files = []
    for d, subdirs, names in os.walk(shared):
        subdirs.sort()
        for n in sorted(names):
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                k = kind_of(f.read(12))
            if k:
                files.append((os.path.relpath(p, shared), p, k))

    failed = 0 if rc == 0 else 1
    seen = set()
    bars_total = 0
    for rel, path, kind in files:
        seen.add(rel)
        if kind == "dbz":
            ok = rel not in ours
            print(f"{'ok  ' if ok else 'FAIL'} {rel}: legacy DBZ; tickgrad refuses it by design"
                  f"{'' if ok else ', yet the dump holds bars for it'}")
            failed += not ok
            continue
        try:
            theirs = databento_bars(dbn, path, kind)
        except Exception as e:  # the reference cannot read it: neither should tickgrad
            ok = rel not in ours
            print(f"{'ok  ' if ok else 'FAIL'} {rel}: databento-dbn refuses it ({e})"
                  f"{'' if ok else '; tickgrad read it'}")
            failed += not ok
            continue
        mine = ours.get(rel)
        if mine is None and not theirs:
            mine = []  # an empty file writes no rows; the test itself checks that it loaded
        if mine is None:
            print(f"FAIL {rel}: databento-dbn reads {len(theirs)} bars, tickgrad's dump has none")
            failed += 1
            continue
        diff = first_difference(mine, theirs)
        if diff:
            print(f"FAIL {rel}: {diff}")
            failed += 1
        else:
            bars_total += len(theirs)
            print(f"ok   {rel}: {len(theirs)} bar{'' if len(theirs) == 1 else 's'} identical")
    for rel in sorted(set(ours) - seen):
        print(f"FAIL {rel}: in tickgrad's dump but not found as a DBN file")
        failed += 1
    print(f"{len(files)} files, {bars_total} bars compared, {failed} failures")
    print("PASS" if failed == 0 and files else "FAIL")
    return 0 if failed == 0 and files else 1


if __name__ == "__main__":
    sys.exit(main())
