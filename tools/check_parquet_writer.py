#!/usr/bin/env python3
"""tickgrad's Parquet writer read by pyarrow and polars: every value exactly as the library holds it.

Usage: tools/check_parquet_writer.py TICKGRAD [TICKS [QUOTES]]   (run by hand in a venv with pyarrow and polars;
       CI does not install them)

Makes bars with `TICKGRAD bars --by ... --out x.parquet` and `--out x.csv` from synthetic ticks (or the TICKS and
QUOTES given: a tick CSV, DBN file or Lean zip folder) for several recipes, quotes merged (so bid/ask hold NaN before
the first quote), and compares every value the two readers give with the CSV's (17 significant digits: Python's
float() gives the double back exactly), bit for bit, NaN where the CSV is empty; checks the schema (ts
timestamp[ns, tz=UTC], the rest float64). When the tickgrad Python package imports, also writes frames with
category columns (missing values, an empty name, non-ASCII names, 300 names) and an instrument column through
tickgrad.write_bars and compares them the same way. Prints one line per file and exits 1 at the first mismatch.
"""
import csv
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

import pyarrow.parquet as pq
import polars as pl


def bits(v):
    return struct.pack("<d", v)


def ns_of(text):
    """'2024-01-02 14:30:49.500000000' (UTC) as ns since the epoch, exactly."""
    import datetime
    date, _, frac = text.partition(".")
    t = datetime.datetime.strptime(date, "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 1_000_000_000 + (int(frac.ljust(9, "0")) if frac else 0)


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    cols = {h: [r[i] for r in body] for i, h in enumerate(head)}
    out = {"ts": [ns_of(t) for t in cols.pop("ts")]}
    for name, texts in cols.items():
        out[name] = [float(t) if t != "" else math.nan for t in texts]
    return out


def same_values(want, got, what):
    if len(want) != len(got):
        raise SystemExit(f"FAIL: {what}: {len(got)} values, want {len(want)}")
    for i, (a, b) in enumerate(zip(want, got)):
        if isinstance(a, float):
            ok = b is not None and (bits(a) == bits(b) or (math.isnan(a) and math.isnan(b)))
        else:
            ok = a == b
        if not ok:
            raise SystemExit(f"FAIL: {what}: row {i}: {b!r}, want {a!r}")


def check_file(parquet, want, categories=()):
    """want: column name -> list of values (ts as int ns, numbers as float, categories as str or None)."""
    table = pq.read_table(parquet)
    names = table.column_names
    if names != list(want):
        raise SystemExit(f"FAIL: {parquet}: columns {names}, want {list(want)}")
    ts_type = str(table.schema.field("ts").type)
    if ts_type != "timestamp[ns, tz=UTC]":
        raise SystemExit(f"FAIL: {parquet}: ts is {ts_type}, want timestamp[ns, tz=UTC]")
    frame = pl.read_parquet(parquet)
    if str(frame.schema["ts"]) not in ("Datetime(time_unit='ns', time_zone='UTC')", "Datetime(time_unit='ns', time_zone='UTC', )"):
        raise SystemExit(f"FAIL: {parquet}: polars reads ts as {frame.schema['ts']}")
    for name, values in want.items():
        arrow_col = table.column(name)
        if name == "ts":
            arrow_vals = arrow_col.cast("int64").to_pylist()
            polars_vals = frame["ts"].dt.epoch("ns").to_list()
        elif name in categories:
            kind = str(arrow_col.type)
            if kind not in ("string", "large_string", "dictionary<values=string, indices=int32, ordered=0>"):
                raise SystemExit(f"FAIL: {parquet}: column {name} is {kind}, want strings")
            arrow_vals = arrow_col.to_pylist()
            polars_vals = frame[name].cast(pl.Utf8).to_list()
        else:
            kind = str(arrow_col.type)
            want_kind = "int64" if name == "instrument" else "double"
            if kind != want_kind:
                raise SystemExit(f"FAIL: {parquet}: column {name} is {kind}, want {want_kind}")
            arrow_vals = arrow_col.to_pylist()
            polars_vals = frame[name].to_list()
        same_values(values, arrow_vals, f"{parquet}: pyarrow column {name}")
        same_values(values, polars_vals, f"{parquet}: polars column {name}")
    print(f"ok  {os.path.basename(parquet)}: {table.num_rows} rows x {len(names)} columns, pyarrow and polars exact")


def synthetic_ticks(folder):
    rnd = random.Random(11)
    trades, quotes = os.path.join(folder, "t.csv"), os.path.join(folder, "q.csv")
    p = 100.0
    with open(trades, "w") as f:
        f.write("ts,price,size,side\n")
        for i in range(200_000):
            p = round(p + rnd.choice((-0.01, 0.01)), 2)
            side = rnd.choice(("B", "S", ""))
            f.write(f"{1704205800000000000 + i * 250_000_123},{p:.2f},{rnd.uniform(0.1, 40):.6f},{side}\n")
    p = 100.0
    with open(quotes, "w") as f:
        f.write("ts,bid,ask,bid_size,ask_size\n")
        for i in range(50_000):
            p = round(p + rnd.choice((-0.01, 0.01)), 2)
            f.write(f"{1704205860000000000 + i * 1_000_000_007},{p - 0.01:.2f},{p + 0.01:.2f},3,4\n")
    return trades, quotes


def from_bars_command(tickgrad, folder, trades, quotes):
    for recipe in ("time:1m", "volume:500", "dollar:2e5", "tick_imbalance:100", "volume_run:50"):
        stem = os.path.join(folder, recipe.replace(":", "_"))
        for ext in ("csv", "parquet"):
            cmd = [tickgrad, "bars", "--data", trades, "--by", recipe, "--out", f"{stem}.{ext}"]
            if quotes:
                cmd += ["--quotes", quotes]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        check_file(f"{stem}.parquet", read_csv(f"{stem}.csv"))


def from_frames(folder):
    try:
        import numpy as np
        import pandas as pd
        import tickgrad
    except ImportError as e:
        print(f"skipped the category and instrument files: {e}")
        return
    rnd = random.Random(5)
    n = 5000
    ts = [1704205800000000000 + i * 60_000_000_017 for i in range(n)]
    prices = [rnd.uniform(50, 150) for _ in range(n)]
    wide = [f"name {k} \u00e9\u6f22" if k != 3 else "" for k in range(300)]
    frame = pd.DataFrame({
        "open": prices, "high": [p + 1 for p in prices], "low": [p - 1 for p in prices], "close": prices,
        "volume": [math.nan if i % 13 == 0 else rnd.uniform(0, 1e9) for i in range(n)],
        "instrument": [i % 3 for i in range(n)],
        "x": [math.nan if i % 9 == 0 else rnd.uniform(-1e300, 1e300) for i in range(n)],
        "venue": pd.Categorical([None if i % 7 == 0 else wide[i % 300] for i in range(n)], categories=wide),
        "side": pd.Categorical(["buy" if i % 2 else "sell" for i in range(n)]),
    }, index=pd.DatetimeIndex(np.array(ts, dtype="datetime64[ns]"), name="ts").tz_localize("UTC"))
    path = os.path.join(folder, "frame.parquet")
    tickgrad.write_bars(frame, path)
    want = {"ts": ts}
    for name in ("open", "high", "low", "close", "volume"):
        want[name] = [float(v) for v in frame[name]]
    want["instrument"] = [int(v) for v in frame["instrument"]]
    want["x"] = [float(v) for v in frame["x"]]
    for name in ("venue", "side"):
        want[name] = [None if pd.isna(v) else str(v) for v in frame[name]]
    check_file(path, want, categories=("venue", "side"))


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    tickgrad = sys.argv[1]
    with tempfile.TemporaryDirectory() as folder:
        if len(sys.argv) > 2:
            trades, quotes = sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None
        else:
            trades, quotes = synthetic_ticks(folder)
        from_bars_command(tickgrad, folder, trades, quotes)
        from_frames(folder)
    print("every value read back exactly by pyarrow and polars")


if __name__ == "__main__":
    main()
