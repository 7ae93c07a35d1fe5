"""Ticks as pandas DataFrames, bars made from them in one pass, and bars written as CSV or Parquet: the library's tick
sources and bar builder (docs/TICKS.md)."""
from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Optional

import numpy as np
import pandas as pd

from . import _core
from ._data import BarsLike, PathLike, _pythonic, bars_to_frame, to_bars

_KINDS = ("trades", "quotes")
_ORDER = ("drop", "error")


def _text(value: Any, name: str, example: str) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{name}: want a str such as {example!r}, got {type(value).__name__}")
    return value


def _order(out_of_order: str) -> bool:
    if out_of_order not in _ORDER:
        raise ValueError(f"out_of_order: want 'drop' or 'error', got {out_of_order!r}")
    return out_of_order == "error"


def _warn(text: str) -> None:
    for line in text.splitlines():
        warnings.warn(line, stacklevel=3)


def read_ticks(path: PathLike, kind: str = "trades", *, tz: Optional[str] = None, out_of_order: str = "drop",
               contract: Optional[str] = None) -> pd.DataFrame:
    """Reads a tick file as the library's tick sources read it (what ``tickgrad bars`` makes bars from).

    path: a CSV file with a header (trades ``ts,price,size[,side][,flags]``, quotes ``ts,bid,ask,bid_size,ask_size``;
    columns found by name), a plain DBN file (trades, tbbo, mbp-1), or Lean AlgoSeek tick zips (one zip, a folder or
    a glob of them, read in date order). kind: "trades" or "quotes". ``tz``: the zone of naive CSV times (default
    UTC; Lean zips are always New York). ``out_of_order``: "drop" (default: a record older than the one before is
    dropped and counted, with a warning naming the first) or "error". ``contract``: the expiry YYYYMM to read from a
    Lean futures zip that holds several.

    Returns a DataFrame indexed by a UTC ``DatetimeIndex`` named ``ts``: trades have float64 ``price`` and ``size``,
    int8 ``side`` (1 buy, -1 sell, 0 not given) and uint8 ``flags`` (1 suspicious, 2 cancelled); quotes have float64
    ``bid``, ``ask``, ``bid_size``, ``ask_size``. Crossed quotes are dropped and counted. ``frame.attrs`` holds
    ``source``, ``kind`` and ``counts`` (records, out_of_order, crossed, skipped). Every record is checked as the
    command checks it: an error names the file, the line and the value.
    """
    if kind not in _KINDS:
        raise ValueError(f"kind: want 'trades' or 'quotes', got {kind!r}")
    path = _text(path, "path", "ticks.csv")
    try:
        cols, counts, warned = _core.read_ticks(path, kind == "quotes", _text(tz, "tz", "America/New_York"),
                                                _order(out_of_order), _text(contract, "contract", "201312"))
    except _core.Error as e:
        raise _pythonic(e) from None
    _warn(warned)
    ts = np.frombuffer(cols.pop("ts"), dtype=np.int64)
    data: Dict[str, Any] = {}
    for name, raw in cols.items():
        dtype = np.int8 if name == "side" else np.uint8 if name == "flags" else np.float64
        data[name] = np.frombuffer(raw, dtype=dtype)
    index = pd.DatetimeIndex(ts.view("datetime64[ns]"), name="ts").tz_localize("UTC")
    frame = pd.DataFrame(data, index=index)
    frame.attrs["source"] = path
    frame.attrs["kind"] = kind
    frame.attrs["counts"] = counts
    return frame


def make_bars(path: PathLike, by: str = "volume:1e4", quotes: Optional[PathLike] = None, *, tz: Optional[str] = None,
              keep_flagged: bool = False, no_tick_rule: bool = False, out_of_order: str = "drop",
              contract: Optional[str] = None, out: Optional[PathLike] = None) -> pd.DataFrame:
    """Bars made from trade ticks in one streaming pass, as ``tickgrad bars --data path --by BY`` makes them.

    path: trade ticks as read_ticks reads them. by: the recipe, e.g. "time:1m", "tick:500", "volume:1e4",
    "dollar:5e6", "tick_imbalance:100,alpha=0.1" (docs/TICKS.md). quotes: a quote tick file merged by time (adds
    the columns bid, ask, spread_mean, mid). ``keep_flagged``: keep suspicious and cancelled trades (default: left out
    and counted); ``no_tick_rule``: a trade without a side counts as neither buy nor sell; ``tz``, ``out_of_order``,
    ``contract`` as read_ticks. ``out``: also write the bars there, as Parquet when it ends in ".parquet", else CSV.

    Returns the bars as read_bars returns a bar file: a DataFrame indexed by UTC ``ts`` with open, high, low, close,
    volume and the extra columns trade_count, vwap, buy_volume, sell_volume (and the quote columns); ``frame.attrs``
    holds ``source``, ``format`` ("ticks") and ``report`` (bars, trades, quotes, excluded, floor_hits, cap_hits and
    each source's counts). The same bars train through ``tickgrad.train(..., data=path, by=by)``.
    """
    path = _text(path, "path", "ticks.csv")
    by = _text(by, "by", "volume:1e4")
    if not by:
        raise ValueError("by: want a recipe such as 'volume:1e4', 'time:1m' or 'dollar:5e6'")
    try:
        bars, report, warned = _core.make_bars(path, _text(quotes, "quotes", "quotes.csv"), by,
                                               _text(tz, "tz", "America/New_York"), bool(keep_flagged),
                                               bool(no_tick_rule), _order(out_of_order),
                                               _text(contract, "contract", "201312"))
        if out is not None:
            _core.write_bars(bars, _text(out, "out", "bars.parquet"))
    except _core.Error as e:
        raise _pythonic(e) from None
    _warn(warned)
    frame = bars_to_frame(bars)
    frame.attrs["report"] = report
    return frame


def write_bars(data: BarsLike, path: PathLike) -> str:
    """Writes bars (a DataFrame as read_bars returns, or a path read as bars) atomically: Parquet when path ends in
    ".parquet" (ts as TIMESTAMP(NANOS, UTC), numbers as DOUBLE, categories as dictionary-encoded strings; pyarrow,
    polars and read_bars read every value back exactly), else CSV (17 significant digits). Returns the path."""
    path = _text(path, "path", "bars.parquet")
    try:
        _core.write_bars(to_bars(data), path)
    except _core.Error as e:
        raise _pythonic(e) from None
    return path
