"""Peers of tickgrad's ticks_* benchmark cases: pandas and polars build the same bars from the same Lean tick zips.

Each peer does what `tickgrad bars` does, timed from the zips to the bars: read every SPY trade zip's CSV (the zip
inflated by Python's zipfile), drop the suspicious rows and those of size 0, prices / 10,000, New York milliseconds
since midnight of the zip's date to UTC nanoseconds, the tick rule's side (the sign of the last price change), then
bars with the columns tickgrad's carry: open, high, low, close, volume, trade_count, vwap, buy_volume, sell_volume.
Time bars are 1-minute intervals. Volume and dollar bars use the usual vectorised rule, bar = floor((cumulative size
or notional before the trade) / threshold); tickgrad starts each bar's count at 0 after the trade that crossed the
threshold, so the peers' bars drift from tickgrad's by that overshoot and their counts differ slightly (printed).
Prints "CASE PEER MEDIAN_US BARS" per peer.
Usage: python bench/tick_peers.py CASE [--warmup N] [--reps N]
"""
import argparse
import glob
import io
import os
import statistics
import sys
import time
import zipfile

SHARED = os.environ.get("TG_SHARED_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
SPY = os.path.join(SHARED, "lean", "tick", "equity", "spy")
NY = "America/New_York"
CASES = {"ticks_spy_time": ("time", 60), "ticks_spy_volume": ("volume", 1e5), "ticks_spy_dollar": ("dollar", 1.7e7)}


def day_csvs():
    """(date 'YYYYMMDD', CSV bytes) of every trade zip, in date order."""
    out = []
    for z in sorted(glob.glob(os.path.join(SPY, "*_trade.zip"))):
        with zipfile.ZipFile(z) as zf:
            out.append((os.path.basename(z)[:8], zf.read(zf.namelist()[0])))
    return out


def pandas_bars(kind, size):
    import numpy as np
    import pandas as pd
    days = []
    for date, raw in day_csvs():
        df = pd.read_csv(io.BytesIO(raw), header=None, usecols=[0, 1, 2, 5], names=["ms", "price", "size", "susp"])
        df = df[(df["susp"] == 0) & (df["size"] > 0)]
        local = pd.Timestamp(date) + pd.to_timedelta(df["ms"].to_numpy(), unit="ms")
        df = pd.DataFrame({"ts": local.tz_localize(NY).tz_convert("UTC"), "price": df["price"].to_numpy() / 10000.0,
                           "size": df["size"].to_numpy(dtype=np.float64)})
        days.append(df)
    t = pd.concat(days, ignore_index=True)
    side = np.sign(t["price"].diff()).replace(0.0, np.nan).ffill().fillna(0.0)
    t["notional"] = t["price"] * t["size"]
    t["buy"] = t["size"].where(side > 0, 0.0)
    t["sell"] = t["size"].where(side < 0, 0.0)
    if kind == "time":
        key = t["ts"].dt.floor("1min")
    else:
        amount = t["size"] if kind == "volume" else t["notional"]
        key = ((amount.cumsum() - amount) // size).astype(np.int64)
    g = t.groupby(key, sort=False)
    bars = g.agg(ts=("ts", "first"), open=("price", "first"), high=("price", "max"), low=("price", "min"),
                 close=("price", "last"), volume=("size", "sum"), trade_count=("price", "size"),
                 notional=("notional", "sum"), buy_volume=("buy", "sum"), sell_volume=("sell", "sum"))
    bars["vwap"] = bars["notional"] / bars["volume"]
    return len(bars)


def polars_bars(kind, size):
    import polars as pl
    days = []
    for date, raw in day_csvs():
        df = pl.read_csv(raw, has_header=False, columns=[0, 1, 2, 5])
        df.columns = ["ms", "price", "size", "susp"]
        midnight = pl.lit(date).str.strptime(pl.Datetime("ns"), "%Y%m%d")
        df = df.filter((pl.col("susp") == 0) & (pl.col("size") > 0)).select(
            ts=(midnight + pl.duration(milliseconds=pl.col("ms"))).dt.replace_time_zone(NY).dt.convert_time_zone("UTC"),
            price=pl.col("price") / 10000.0, size=pl.col("size").cast(pl.Float64))
        days.append(df)
    t = pl.concat(days)
    side = pl.col("price").diff().sign()
    t = t.with_columns(side=pl.when(side == 0).then(None).otherwise(side).forward_fill().fill_null(0.0),
                       notional=pl.col("price") * pl.col("size"))
    if kind == "time":
        key = pl.col("ts").dt.truncate("1m")
    else:
        amount = pl.col("size") if kind == "volume" else pl.col("notional")
        key = ((amount.cum_sum() - amount) // size).cast(pl.Int64)
    bars = t.with_columns(key=key).group_by("key", maintain_order=True).agg(
        ts=pl.col("ts").first(), open=pl.col("price").first(), high=pl.col("price").max(),
        low=pl.col("price").min(), close=pl.col("price").last(), volume=pl.col("size").sum(),
        trade_count=pl.len(), vwap=pl.col("notional").sum() / pl.col("size").sum(),
        buy_volume=pl.col("size").filter(pl.col("side") > 0).sum(),
        sell_volume=pl.col("size").filter(pl.col("side") < 0).sum())
    return bars.height


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    if not glob.glob(os.path.join(SPY, "*_trade.zip")):
        print(f"skipped: no Lean SPY trade zips under {SPY}")
        return 0
    kind, size = CASES[a.case]
    for name, fn in (("pandas", pandas_bars), ("polars", polars_bars)):
        times, n = [], 0
        for r in range(a.warmup + a.reps):
            t0 = time.perf_counter()
            n = fn(kind, size)
            if r >= a.warmup:
                times.append((time.perf_counter() - t0) * 1e6)
        print(f"{a.case} {name} {statistics.median(times):.1f} {n}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
