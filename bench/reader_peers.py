"""Peers of tickgrad's reader benchmark cases: pandas, pyarrow and polars on the same files.

Each peer produces what tickgrad produces: typed columns with timestamps parsed (and converted to
UTC where the file holds New York local times). Prints "CASE PEER MEDIAN_US" per peer.
Usage: python bench/reader_peers.py CASE [--warmup N] [--reps N]
"""
import argparse
import os
import statistics
import sys
import time

SHARED = os.environ.get("TG_SHARED_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
LEAN_COLS = ["ts", "open", "high", "low", "close", "volume"]
FX_COLS = ["ts", "open", "high", "low", "close", "volume", "ask_open", "ask_high", "ask_low", "ask_close", "ask_size"]


def lean_csv_peers(rel, cols, tz):
    import pandas as pd
    import polars as pl
    path = os.path.join(SHARED, rel)

    def pandas_read():
        df = pd.read_csv(path, header=None, names=cols)
        ts = pd.to_datetime(df["ts"], format="%Y%m%d %H:%M")
        if tz:
            ts = ts.dt.tz_localize(tz).dt.tz_convert("UTC")
        df["ts"] = ts
        return df

    def polars_read():
        df = pl.read_csv(path, has_header=False, new_columns=cols)
        ts = pl.col("ts").cast(pl.Utf8).str.strptime(pl.Datetime("ns"), "%Y%m%d %H:%M")
        if tz:
            ts = ts.dt.replace_time_zone(tz).dt.convert_time_zone("UTC")
        return df.with_columns(ts)

    return {"pandas": pandas_read, "polars": polars_read}


def parquet_peers(rel):
    import polars as pl
    import pyarrow.parquet as pq
    path = os.path.join(SHARED, rel)
    return {"pyarrow": lambda: pq.read_table(path), "polars": lambda: pl.read_parquet(path)}


CASES = {
    "read_spy_hour_csv": lambda: lean_csv_peers("lean/equity/usa/hour/spy.csv", LEAN_COLS, "America/New_York"),
    "read_eurusd_hour_csv": lambda: lean_csv_peers("lean/forex/fxcm/hour/eurusd.csv", FX_COLS, None),
    "read_es_snappy_parquet": lambda: parquet_peers("parquet-ohlcv/es_201312_1m.snappy.parquet"),
    "read_es_zstd_parquet": lambda: parquet_peers("parquet-ohlcv/es_201312_1m.zstd.parquet"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args()
    for peer, fn in CASES[a.case]().items():
        for _ in range(a.warmup):
            fn()
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e6)
        print(f"{a.case} {peer} {statistics.median(times):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
