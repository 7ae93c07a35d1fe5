#!/usr/bin/env python3
"""Cross-checks tickgrad's Parquet reader against pyarrow (run by hand, not in CI).

    .venv/bin/python tools/crosscheck_parquet.py [--build build-pq] [--data ../shared/data]

Every *.parquet under the data folder is read by pyarrow.parquet.read_table, and by tickgrad through
the dump mode of the test binary (TG_DUMP_PARQUET=dir test_parquet file...), which writes each file's
readable numeric columns as CSV (%.17g for floating point, integers as integers, nulls empty) and a
status file naming the columns it refused and why. Every numeric column both sides read is compared
value by value. A file is PASS when every compared value is equal and tickgrad's refusals are errors
of the expected kind (corrupt/malformed files, unsupported codecs or nested columns); FAIL otherwise.

    .venv/bin/python tools/crosscheck_parquet.py --make-seeds fuzz/corpus/parquet

writes the small seed files of the fuzzer (also read by tests/test_parquet.c, which recomputes the
values from the same formulas). pyarrow's version changes their bytes: copy only the files a change adds.
"""
import argparse
import csv
import decimal
import glob
import math
import os
import subprocess
import sys
import tempfile


def make_seeds(out):
    import datetime

    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(out, exist_ok=True)

    # 1: bars, 3 row groups (20, 20, 10), v1 pages, snappy, dictionary-encoded prices, UTC microseconds
    n = 50
    opens = [100 + 0.25 * (i % 8) for i in range(n)]
    t = pa.table({
        "ts": pa.array([1_600_000_000_000_000 + i * 60_000_000 for i in range(n)], pa.timestamp("us", tz="UTC")),
        "Open": pa.array(opens, pa.float64()),
        "High": pa.array([o + 1 for o in opens], pa.float64()),
        "Low": pa.array([o - 1 for o in opens], pa.float64()),
        "Close": pa.array([100.5 + 0.25 * (i % 5) for i in range(n)], pa.float64()),
        "Volume": pa.array([i * 10 for i in range(n)], pa.int64()),
    })
    pq.write_table(t, f"{out}/bars_v1_snappy.parquet", row_group_size=20, compression="snappy",
                   data_page_version="1.0", use_dictionary=True, write_statistics=False)

    # 2: bars with nulls in close, naive local milliseconds across New York's 2021 spring-forward,
    #    v2 pages, zstd, volume as int32
    n = 40
    base = datetime.datetime(2021, 3, 13, 20, 0)
    t = pa.table({
        "time": pa.array([base + datetime.timedelta(hours=i) for i in range(n)], pa.timestamp("ms")),
        "open": pa.array([50 + i * 0.5 for i in range(n)], pa.float64()),
        "high": pa.array([51 + i * 0.5 for i in range(n)], pa.float64()),
        "low": pa.array([49 + i * 0.5 for i in range(n)], pa.float64()),
        "close": pa.array([None if i % 7 == 3 else 50.25 + i * 0.5 for i in range(n)], pa.float64()),
        "volume": pa.array([1000 + i for i in range(n)], pa.int32()),
    })
    pq.write_table(t, f"{out}/bars_v2_zstd_nulls.parquet", compression="zstd", data_page_version="2.0",
                   write_statistics=False)

    # 3: many types, gzip, page CRCs, v1 pages
    n = 30
    t = pa.table({
        "b": pa.array([i % 3 == 0 for i in range(n)], pa.bool_()),
        "i32": pa.array([i * 1000 - 15000 for i in range(n)], pa.int32()),
        "i64": pa.array([i * 10**12 - 3 for i in range(n)], pa.int64()),
        "f32": pa.array([i * 0.5 - 3 for i in range(n)], pa.float32()),
        "f64": pa.array([i * 0.1 for i in range(n)], pa.float64()),
        "u32": pa.array([4_000_000_000 + i for i in range(n)], pa.uint32()),
        "u64": pa.array([2**63 + i for i in range(n)], pa.uint64()),
        "d32": pa.array([18000 + i for i in range(n)], pa.date32()),
        "tns": pa.array([1_600_000_000_123_456_789 + i for i in range(n)], pa.timestamp("ns", tz="UTC")),
        "dec": pa.array([decimal.Decimal(i * 125 - 1000).scaleb(-2) for i in range(n)], pa.decimal128(18, 2)),
        "h": pa.array([i * 0.5 for i in range(n)], pa.float16()) if hasattr(pa, "float16") else None,
        "s": pa.array([str(i) for i in range(n)], pa.string()),
        "opt": pa.array([None if i % 4 == 0 else i * 3 for i in range(n)], pa.int64()),
    })
    pq.write_table(t, f"{out}/types_gzip_crc.parquet", compression="gzip", data_page_version="1.0",
                   write_page_checksum=True, write_statistics=False)

    # 4: delta binary packed and byte stream split, v2 pages, no dictionary, no compression
    n = 300
    cols = {
        "d32": pa.array([(i * i * 7919) % 100003 - 50000 for i in range(n)], pa.int32()),
        "d64": pa.array([i**3 * 1_000_003 - 2**40 + (2**62 if i == 150 else 0) for i in range(n)], pa.int64()),
        "sf": pa.array([math.sin(i) for i in range(n)], pa.float32()),
        "sd": pa.array([i / 7 for i in range(n)], pa.float64()),
        "si32": pa.array([i * 77 - 9000 for i in range(n)], pa.int32()),
        "si64": pa.array([i * 10**11 - 7 for i in range(n)], pa.int64()),
        "flag": pa.array([(i // 5) % 2 == 0 for i in range(n)], pa.bool_()),
        "idec": pa.array([decimal.Decimal(i * 3 - 100).scaleb(-1) for i in range(n)], pa.decimal128(9, 1)),
    }
    enc = {"d32": "DELTA_BINARY_PACKED", "d64": "DELTA_BINARY_PACKED", "sf": "BYTE_STREAM_SPLIT",
           "sd": "BYTE_STREAM_SPLIT", "si32": "BYTE_STREAM_SPLIT", "si64": "BYTE_STREAM_SPLIT", "flag": "RLE"}
    pq.write_table(pa.table(cols), f"{out}/delta_split_v2.parquet", compression="none", data_page_version="2.0",
                   use_dictionary=False, column_encoding=enc, write_statistics=False,
                   store_decimal_as_integer=True)

    # 5: the smallest: one required INT64 column, plain, uncompressed
    pq.write_table(pa.table({"x": pa.array([1, -2, 3, 1 << 40, -(1 << 62)], pa.int64())}), f"{out}/tiny.parquet",
                   compression="none", use_dictionary=False, write_statistics=False)
    # 6: bars with extra columns, v2 pages, snappy, row groups of 25: a dictionary-encoded string column with nulls
    #    (a dictionary per row group), string columns in PLAIN, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY (with
    #    nulls), numbers with nulls, and columns kept out with a warning (a list, a date)
    n = 60
    sectors = ["tech", "energy", "banks", "énergie"]
    t = pa.table({
        "ts": pa.array([1_700_000_000_000_000 + i * 3_600_000_000 for i in range(n)], pa.timestamp("us", tz="UTC")),
        "open": pa.array([10 + i * 0.5 for i in range(n)], pa.float64()),
        "high": pa.array([11 + i * 0.5 for i in range(n)], pa.float64()),
        "low": pa.array([9 + i * 0.5 for i in range(n)], pa.float64()),
        "close": pa.array([10.25 + i * 0.5 for i in range(n)], pa.float64()),
        "volume": pa.array([100 + i for i in range(n)], pa.int64()),
        "sector": pa.array([None if i % 10 == 7 else sectors[(i * 7) % 4] for i in range(n)], pa.string()),
        "note": pa.array([f"n{i % 7}" for i in range(n)], pa.string()),
        "score": pa.array([None if i % 6 == 5 else i * 0.5 - 3 for i in range(n)], pa.float32()),
        "count": pa.array([i * 3 - 20 for i in range(n)], pa.int32()),
        "tags": pa.array([[i, i + 1] for i in range(n)], pa.list_(pa.int32())),
        "day": pa.array([19000 + i for i in range(n)], pa.date32()),
        "memo": pa.array([f"m{i * i % 11}" for i in range(n)], pa.string()),
        "sym": pa.array([None if i % 9 == 4 else f"SYM{i % 5}" + "x" * (i % 3) for i in range(n)], pa.string()),
    })
    pq.write_table(t, f"{out}/bars_extra_v2.parquet", row_group_size=25, compression="snappy",
                   data_page_version="2.0", use_dictionary=["sector"], write_statistics=False,
                   column_encoding={"memo": "DELTA_LENGTH_BYTE_ARRAY", "sym": "DELTA_BYTE_ARRAY"})
    for f in sorted(glob.glob(f"{out}/*.parquet")):
        md = pq.ParquetFile(f).metadata
        print(f"{f}: {os.path.getsize(f)} bytes, {md.num_rows} rows, {md.num_row_groups} row groups")


def tickgrad_dump(binary, files, outdir):
    env = dict(os.environ, TG_DUMP_PARQUET=outdir)
    r = subprocess.run([binary] + files, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"{binary} failed in dump mode ({r.returncode})")


def dump_name(path):
    return os.path.basename(path)


def short(msg):
    """A tickgrad message without its leading path and trailing column note."""
    if ".parquet: " in msg:
        msg = msg.split(".parquet: ", 1)[1]
    return msg.split(" (column '")[0]


def read_status(path):
    """{column: (status, message)} and the file-level error (or None)."""
    cols, file_err = {}, None
    if not os.path.exists(path):
        return cols, "no status file"
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t", 2)
            if len(parts) < 3:
                continue
            name, status, msg = parts
            if name == "*file*":
                file_err = (status, short(msg))
            else:
                cols[name] = (status, short(msg))
    return cols, file_err


def arrow_columns(table):
    """Flat numeric columns as python lists of int/float/None, by dotted path."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = {}

    def visit(prefix, arr):
        t = arr.type
        name = prefix
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                f = t.field(i)
                visit(f"{prefix}.{f.name}", pc.struct_field(arr, [i]))
            return
        if pa.types.is_timestamp(t) or pa.types.is_date64(t) or pa.types.is_time64(t):
            out[name] = arr.cast(pa.int64()).to_pylist()
        elif pa.types.is_date32(t) or pa.types.is_time32(t):
            out[name] = arr.cast(pa.int32()).to_pylist()
        elif pa.types.is_boolean(t):
            out[name] = [None if v is None else int(v) for v in arr.to_pylist()]
        elif pa.types.is_integer(t) or pa.types.is_floating(t):
            out[name] = arr.to_pylist()
        elif pa.types.is_decimal(t):
            out[name] = [None if v is None else float(v) for v in arr.to_pylist()]

    for name in table.column_names:
        visit(name, table[name].combine_chunks() if table[name].num_chunks else table[name])
    return out


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return int(a) == int(b)


def parse_cell(s):
    if s == "":
        return None
    if s == "-0":  # %.17g of a negative zero
        return -0.0
    if any(c in s for c in ".eEn") or s in ("inf", "-inf"):
        return float(s)
    return int(s)


EXPECTED_ERRORS = ("corrupt", "malformed")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--build", default=os.path.join(root, "build-pq"))
    ap.add_argument("--data", default=os.path.join(root, "..", "shared", "data"))
    ap.add_argument("--make-seeds", metavar="DIR")
    args = ap.parse_args()
    if args.make_seeds:
        make_seeds(args.make_seeds)
        return 0
    import pyarrow.parquet as pq

    files = sorted(glob.glob(os.path.join(args.data, "**", "*.parquet"), recursive=True))
    if not files:
        print(f"no Parquet files under {args.data}")
        return 1
    binary = os.path.join(args.build, "test_parquet")
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        tickgrad_dump(binary, files, tmp)
        for path in files:
            rel = os.path.relpath(path, args.data)
            base = os.path.join(tmp, dump_name(path))
            status, file_err = read_status(base + ".status")
            expect_error = any(k in os.path.basename(path) for k in EXPECTED_ERRORS)
            try:
                table = pq.read_table(path)
                arrow = arrow_columns(table)
                arrow_err = None
            except Exception as e:  # pyarrow refuses it too
                arrow, arrow_err = {}, f"{type(e).__name__}: {e}"
            if file_err:
                kind, msg = file_err
                ok = expect_error or arrow_err is not None or kind == "unsupported"
                fails += not ok
                print(f"{'PASS' if ok else 'FAIL'} {rel}: tickgrad {kind}: {msg}"
                      + (f" | pyarrow: {arrow_err}" if arrow_err else " | pyarrow reads it"))
                continue
            tg = {}
            if os.path.exists(base + ".csv"):
                with open(base + ".csv", newline="") as f:
                    rows = list(csv.reader(f))
                header, body = rows[0], rows[1:]
                for j, name in enumerate(header):
                    tg[name] = [parse_cell(r[j] if j < len(r) else "") for r in body]
            compared, bad, notes = 0, [], []
            for name, values in arrow.items():
                if name not in tg:
                    st = status.get(name, ("missing", "not dumped"))
                    notes.append(f"{name}: tickgrad {st[0]} ({st[1]})")
                    if st[0] not in ("unsupported",) and not expect_error:
                        bad.append(f"{name}: pyarrow reads it, tickgrad says {st[0]}: {st[1]}")
                    continue
                mine = tg[name]
                if len(mine) != len(values):
                    bad.append(f"{name}: {len(mine)} rows vs pyarrow's {len(values)}")
                    continue
                diff = [i for i, (a, b) in enumerate(zip(mine, values)) if not same(a, b)]
                if diff:
                    i = diff[0]
                    bad.append(f"{name}: {len(diff)} values differ, first at row {i}: {mine[i]!r} vs {values[i]!r}")
                compared += 1
            for name, (st, msg) in status.items():
                if st != "ok" and name not in arrow:
                    notes.append(f"{name}: tickgrad {st} ({msg})")
            if expect_error:
                errs = [n for n, (s, _) in status.items() if s != "ok"]
                if not errs:
                    bad.append("a corrupt file read without any error")
            ok = not bad
            fails += not ok
            nrows = len(next(iter(tg.values()))) if tg else 0
            print(f"{'PASS' if ok else 'FAIL'} {rel}: {compared} numeric columns equal over {nrows} rows"
                  + (f"; not compared: {'; '.join(notes)}" if notes else "")
                  + (f"; pyarrow: {arrow_err}" if arrow_err else ""))
            for b in bad:
                print(f"    {b}")
    print(f"{len(files) - fails} of {len(files)} files PASS" + ("" if not fails else f", {fails} FAIL"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
