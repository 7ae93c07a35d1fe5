"""Bars as pandas DataFrames: reading files through libtickgrad's readers, inspecting, and frames handed back to it."""
from __future__ import annotations

import os
import re
import warnings
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np
import pandas as pd

from . import _core

PathLike = Union[str, "os.PathLike[str]"]
BarsLike = Union[pd.DataFrame, PathLike, Sequence[PathLike]]

BAR_FIELDS = ("open", "high", "low", "close", "volume")


def _paths(arg: Any, name: str) -> List[str]:
    if isinstance(arg, (str, os.PathLike)):
        return [os.fspath(arg)]
    if isinstance(arg, (list, tuple)) and not arg:
        raise ValueError(f"{name}: an empty {type(arg).__name__}; want a file, a folder, a glob, or a list of them")
    if isinstance(arg, (list, tuple)) and arg and all(isinstance(p, (str, os.PathLike)) for p in arg):
        return [os.fspath(p) for p in arg]
    raise TypeError(f"{name}: want a path, a list of paths or a DataFrame, got {type(arg).__name__}")


_DUPLICATES = ("error", "first", "last")
_ADJUST = ("difference", "ratio", "none")


def _reader_args(columns: Optional[Union[str, Dict[str, Any]]], tz: Optional[str], price_scale: Optional[float],
                 nulls: str, duplicates: str = "error", allow_ohlc: bool = False, skip_bad_files: bool = False,
                 checks: bool = True, roll: Optional[str] = None, adjust: str = "difference",
                 by: Optional[str] = None, quotes: Optional[PathLike] = None) -> tuple:
    if isinstance(columns, dict):
        columns = ",".join(f"{k}={v}" for k, v in columns.items())
    if columns is not None and not isinstance(columns, str):
        raise TypeError(f"columns: want a str such as 'ts=Date,close=Adj Close' or a dict, got {type(columns).__name__}")
    if tz is not None and not isinstance(tz, str):
        raise TypeError(f"tz: want a zone name such as 'America/New_York', got {type(tz).__name__}")
    if price_scale is None:
        price_scale = 0.0
    if not isinstance(price_scale, (int, float)) or isinstance(price_scale, bool) or not price_scale >= 0:
        raise ValueError(f"price_scale: want a positive number, got {price_scale!r}")
    if nulls not in ("error", "nan"):
        raise ValueError(f"nulls: want 'error' or 'nan', got {nulls!r}")
    if duplicates not in _DUPLICATES:
        raise ValueError(f"duplicates: want 'error', 'first' or 'last', got {duplicates!r}")
    if roll is not None and not isinstance(roll, str):
        raise TypeError(f"roll: want 'volume', 'open_interest' or 'calendar:N', got {type(roll).__name__}")
    if adjust not in _ADJUST:
        raise ValueError(f"adjust: want 'difference', 'ratio' or 'none', got {adjust!r}")
    if by is not None and not isinstance(by, str):
        raise TypeError(f"by: want a bar recipe such as 'volume:1e4' or 'time:1m', got {type(by).__name__}")
    if quotes is not None and not isinstance(quotes, (str, os.PathLike)):
        raise TypeError(f"quotes: want the path of a quote tick file, got {type(quotes).__name__}")
    return (columns, tz, float(price_scale), nulls == "nan", _DUPLICATES.index(duplicates), bool(allow_ohlc),
            bool(skip_bad_files), not checks, roll, _ADJUST.index(adjust), by or None,
            os.fspath(quotes) if quotes is not None else None)


# The command line's hints in the library's messages, as the keywords of this package's calls.
_FLAG_HINTS = (("--nulls nan", 'nulls="nan"'), ("--allow-ohlc 1", "allow_ohlc=True"),
               ("--duplicates first or last", 'duplicates="first" or "last"'),
               ("--duplicates first", 'duplicates="first"'), ("--duplicates last", 'duplicates="last"'),
               ("--duplicates", "duplicates="),
               ("--roll volume|open_interest|calendar[:N] (and --adjust difference|ratio|none)",
                'roll="volume", "open_interest" or "calendar:N" (and adjust="difference", "ratio" or "none")'),
               ("--by RECIPE", "by=RECIPE"))
# The source name a DataFrame's bars carry in the library's messages.
_FRAME_SOURCE = "DataFrame"


def _pythonic(e: "_core.Error", frame_sorted: Optional[bool] = None) -> "_core.Error":
    """The library's error e as this package says it. Reading files: keywords for the command line's flags. A
    DataFrame's bars (frame_sorted: whether its rows were already in time order): its rows by position from 0
    (``DataFrame row 1500``, as ``frame.iloc[1500]``; the library counts from 1 after sorting by time), and in place of
    a flag, what to do to the frame (a frame's bars are checked with every reader option at its default)."""
    msg = str(e)
    if frame_sorted is None:
        for flag, keyword in _FLAG_HINTS:
            msg = msg.replace("give " + flag, "pass " + keyword)
        msg = msg.replace("set nulls to NaN", 'pass nulls="nan"')
        msg = msg.replace("--by RECIPE", "by=RECIPE").replace("as --quotes", "as quotes=").replace("--by ", "by=")
        return type(e)(msg)
    where = "row" if frame_sorted else "row (of the frame sorted by time)"
    msg = re.sub(_FRAME_SOURCE + r": row (\d+)", lambda m: f"{_FRAME_SOURCE} {where} {int(m.group(1)) - 1}", msg)
    msg = re.sub(r" \(give --[^)]*\)", "", msg)
    return type(e)(msg + "; fix or drop such rows of the DataFrame")


def _read(paths: List[str], columns=None, tz=None, price_scale=None, nulls="error", duplicates="error",
          allow_ohlc=False, skip_bad_files=False, checks=True, roll=None, adjust="difference", by=None,
          quotes=None) -> "_core.Bars":
    try:
        bars, warned = _core.read_bars(paths, *_reader_args(columns, tz, price_scale, nulls, duplicates, allow_ohlc,
                                                            skip_bad_files, checks, roll, adjust, by, quotes))
    except _core.Error as e:
        raise _pythonic(e) from None
    for line in warned.splitlines():
        warnings.warn(line, stacklevel=3)
    return bars


def bars_to_frame(bars: "_core.Bars") -> pd.DataFrame:
    """The library's bars as a DataFrame whose numeric columns view the library's memory (no copy)."""
    ts = np.asarray(bars.field("ts")).view("datetime64[ns]")
    data: Dict[str, Any] = {name: np.asarray(bars.field(name)) for name in BAR_FIELDS}
    inst = bars.field("instrument")
    if inst is not None:
        data["instrument"] = np.asarray(inst)
    for name, values in bars.columns():
        while name in data:  # an extra column named like a bar field ("volume" beside "Volume BTC")
            name += ".1"
        if isinstance(values, tuple):
            codes, names = values
            codes = np.asarray(codes).astype(np.int64)
            codes[codes == 0xFFFFFFFF] = -1
            data[name] = pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object))
        else:
            data[name] = np.asarray(values)
    index = pd.DatetimeIndex(ts, name="ts").tz_localize("UTC")
    frame = pd.DataFrame(data, index=index, copy=False)
    frame.attrs["source"] = bars.source
    frame.attrs["format"] = bars.format
    return frame


def read_bars(path: Union[PathLike, Sequence[PathLike]], *, columns: Optional[Union[str, Dict[str, Any]]] = None,
              tz: Optional[str] = None, price_scale: Optional[float] = None, nulls: str = "error",
              duplicates: str = "error", allow_ohlc: bool = False, skip_bad_files: bool = False,
              roll: Optional[str] = None, adjust: str = "difference", by: Optional[str] = None,
              quotes: Optional[PathLike] = None) -> pd.DataFrame:
    """Reads bar files (CSV, Databento DBN, Parquet: the format is found from the content) into a DataFrame.

    path: a file, a folder (every file in it), a glob such as ``"bars/es_*.csv"``, or a list of them; several
    files are concatenated and sorted by time (rows found out of order are sorted with a warning).

    Reader options, as the command's ``inspect`` flags: ``columns`` maps CSV columns ("ts=Date,close=Adj Close",
    by position "ts=0,open=1,...", or a dict); ``tz`` the zone of naive timestamps (default UTC);
    ``price_scale`` multiplies prices (Lean equities: 0.0001); ``nulls`` "error" (default) or "nan".
    The bars are checked as every command checks them (an error naming the file, row and value): bars of one
    instrument sharing a time (``duplicates`` "first" or "last" keeps one), high below open/close/low or low above
    open/close (``allow_ohlc=True`` lets them through), negative volume, prices that are not positive numbers a log
    return can be taken of. ``skip_bad_files=True`` skips the files of a folder or glob that cannot be read, with a
    warning naming each. gzip and zstd compressed files are read as they are. ``by``: the files are trade ticks,
    made into bars by this recipe as they are read ("volume:1e4", "time:1m"; ``quotes`` a quote tick file merged in),
    as every command's ``--by`` does; make_bars does the same with the tick options and the pass's counts.

    Several futures contracts in one source (Lean futures files, a ``contract`` column, DBN contracts of one root)
    are an error naming them unless ``roll`` says how to stitch them: "volume", "open_interest" or "calendar:N";
    ``adjust`` "difference" (default), "ratio" or "none" back-adjusts the prices before each roll. The stitched
    frame keeps each bar's ``contract`` (docs/TICKS.md, "Continuous futures").

    Returns a DataFrame indexed by a UTC ``DatetimeIndex`` named ``ts`` with float64 columns open, high, low,
    close, volume (NaN where the source has none), ``instrument`` (uint32 ids, as the library gives them) when
    the source names instruments, then every extra column the file has (numbers as float64 with NaN for missing,
    text as a pandas Categorical). ``frame.attrs`` holds ``source`` and ``format``. The numeric columns view the
    library's memory; nothing is copied.
    """
    return bars_to_frame(_read(_paths(path, "path"), columns, tz, price_scale, nulls, duplicates, allow_ohlc,
                               skip_bad_files, True, roll, adjust, by, quotes))


def _instrument_ids(col: pd.Series) -> np.ndarray:
    if pd.api.types.is_integer_dtype(col.dtype):
        v = col.to_numpy()
        if len(v) and (v.min() < 0 or v.max() > 0xFFFFFFFF):
            raise ValueError("instrument: integer ids must lie in [0, 2^32)")
        return v.astype(np.uint32)
    if isinstance(col.dtype, pd.CategoricalDtype) or col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
        if col.isna().any():
            raise ValueError("instrument: missing values; every bar needs its instrument")
        text = col.astype(str)
        uniq, inverse = np.unique(text.to_numpy(), return_inverse=True)
        ids = np.array([_core.instrument_id(u) for u in uniq], dtype=np.uint32)
        return ids[inverse]
    raise TypeError(f"instrument: want integer ids or names, got dtype {col.dtype}")


def _times(frame: pd.DataFrame, tz: Optional[str]) -> np.ndarray:
    if isinstance(frame.index, pd.DatetimeIndex):
        idx = frame.index
    elif "ts" in frame.columns:
        idx = pd.DatetimeIndex(pd.to_datetime(frame["ts"]))
    else:
        raise ValueError("data: want a DatetimeIndex or a 'ts' column holding the bar times")
    if idx.tz is None:
        idx = idx.tz_localize(tz or "UTC")
    if idx.isna().any():
        raise ValueError("data: a bar time is missing (NaT)")
    return np.ascontiguousarray(idx.tz_convert("UTC").as_unit("ns").asi8)


def frame_to_bars(frame: pd.DataFrame, tz: Optional[str] = None) -> "_core.Bars":
    """A DataFrame as the library's bars (copied once): the columns read_bars gives, by the same names."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"data: want a DataFrame, got {type(frame).__name__}")
    ts = _times(frame, tz)
    lower: Dict[str, Any] = {}
    for c in frame.columns:
        key = str(c).lower()
        if key in BAR_FIELDS + ("instrument",) and key in lower:
            raise ValueError(f"data: columns '{lower[key]}' and '{c}' both name the bar field '{key}' (names differ "
                             f"only in case); drop or rename one, e.g. frame.drop(columns=['{c}'])")
        lower.setdefault(key, c)
    fields = []
    for name in BAR_FIELDS:
        if name not in lower:
            if name == "volume":
                fields.append(np.full(len(frame), np.nan))
                continue
            raise ValueError(f"data: no '{name}' column (have {', '.join(map(str, frame.columns))})")
        col = frame[lower[name]]
        if not pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype):
            raise TypeError(f"data: column '{lower[name]}' holds {col.dtype}, want numbers")
        fields.append(np.ascontiguousarray(col.to_numpy(dtype=np.float64, na_value=np.nan)))
    taken = {lower[n] for n in BAR_FIELDS if n in lower} | ({"ts"} if "ts" in frame.columns else set())
    inst = None
    if "instrument" in lower:
        inst = np.ascontiguousarray(_instrument_ids(frame[lower["instrument"]]))
        taken.add(lower["instrument"])
    extras = []
    for name in frame.columns:
        if name in taken:
            continue
        col = frame[name]
        if pd.api.types.is_bool_dtype(col.dtype) or pd.api.types.is_numeric_dtype(col.dtype):
            extras.append((str(name), np.ascontiguousarray(col.to_numpy(dtype=np.float64, na_value=np.nan))))
        elif isinstance(col.dtype, pd.CategoricalDtype) or col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
            if col.dtype == object:
                odd = col.map(lambda v: not (v is None or isinstance(v, (str, bytes, int, float, np.generic))))
                if odd.any():
                    at = int(np.flatnonzero(odd.to_numpy())[0])
                    raise TypeError(f"data: column '{name}' holds {type(col.iloc[at]).__name__} values (first at "
                                    f"DataFrame row {at}, {frame.index[at]}); want numbers or names")
            cat = col.astype("category") if not isinstance(col.dtype, pd.CategoricalDtype) else col
            names = [str(c) for c in cat.cat.categories]
            codes = cat.cat.codes.to_numpy().astype(np.int64)
            codes[codes < 0] = 0xFFFFFFFF
            extras.append((str(name), np.ascontiguousarray(codes.astype(np.uint32)), names))
        else:
            warnings.warn(f"data: column '{name}' ({col.dtype}) is neither numbers nor names; left out", stacklevel=3)
    try:  # the frame's attrs may still name the file it was read from: errors name the frame itself
        bars = _core.bars_from_arrays(ts, *fields, inst, extras, _FRAME_SOURCE)
    except _core.Error as e:
        raise _pythonic(e, frame_sorted=bool(np.all(ts[1:] >= ts[:-1]))) from None
    if bars.reordered:
        warnings.warn(f"data: {bars.reordered} bars were out of time order and have been sorted", stacklevel=3)
    return bars


def write_bars_csv(data: BarsLike, path: PathLike) -> str:
    """Bars written as a CSV file that the library's reader gives back bit for bit (times as UTC ISO 8601 with
    nanoseconds, numbers with 17 significant digits, missing values empty): for the calls whose run must find its
    bars again by path (an agent run's env.json, a policy's backtest). Returns the path."""
    frame = bars_to_frame(to_bars(data))
    idx = frame.index
    frac = idx.asi8 % 1_000_000_000
    out = frame.copy()
    out.index = pd.Index([f"{t}.{n:09d}Z" for t, n in zip(idx.strftime("%Y-%m-%dT%H:%M:%S"), frac)], name="ts")
    path = os.fspath(path)
    tmp = f"{path}.tmp.{os.getpid()}"
    out.to_csv(tmp, float_format="%.17g")
    os.replace(tmp, path)
    return path


def to_bars(data: BarsLike, *, columns=None, tz=None, price_scale=None, nulls="error", duplicates="error",
            allow_ohlc=False, skip_bad_files=False, checks=True, roll=None, adjust="difference", by=None,
            quotes=None) -> "_core.Bars":
    """The library's bars of data: a DataFrame (as read_bars returns) or a path / paths read with the options."""
    if isinstance(data, pd.DataFrame):
        return frame_to_bars(data, tz)
    if isinstance(data, _core.Bars):
        return data
    return _read(_paths(data, "data"), columns, tz, price_scale, nulls, duplicates, allow_ohlc, skip_bad_files, checks,
                 roll, adjust, by, quotes)


def inspect(data: BarsLike, **reader_options: Any) -> Dict[str, Any]:
    """What ``tickgrad inspect`` reports about bars, as a dict.

    data: a path (file, folder, glob), a list of paths, or a DataFrame; reader options as read_bars takes them.
    Keys: source, format, rows, instruments, first_ts, last_ts (UTC ns), median_interval_ns, gaps (longer than 3
    median intervals), longest_gaps [(start ns, length ns)], duplicates, reordered, ohlc_violations, nan_prices,
    zero_prices, negative_prices, nan_volume, negative_volume, has_volume, has_instrument, and columns: one dict per
    extra column (name, kind "numeric" or "category", missing, distinct).
    """
    report = to_bars(data, checks=False, **reader_options).inspect()  # reports what the checks would refuse
    for key in ("first_ts", "last_ts"):
        report[key + "_utc"] = pd.Timestamp(report[key], tz="UTC") if report["rows"] else None
    return report


def synth(bars: int = 10000, *, interval: str = "1m", instruments: int = 1, seed: int = 1, signal: float = 0.0,
          correlation: float = 0.0, weekends: bool = False, price: float = 100.0, volatility: float = 0.2,
          regime_bars: float = 2000.0, regime_drift: float = 0.0, start: Optional[Any] = None) -> pd.DataFrame:
    """The built-in synthetic market as a DataFrame (what ``tickgrad synth`` writes, bit for bit).

    Seeded OHLCV bars with regimes, volatility clustering, intraday seasonality and, with ``signal`` in (-1, 1),
    a planted lag-1 predictable component that a model must find (0: a pure random walk). ``bars`` per
    instrument; ``interval`` a pandas offset such as "1m", "5m", "1h", "1d"; ``start`` a date or Timestamp
    (default 2020-01-02 UTC). See tickgrad/synth.h for the model.
    """
    for name, v in (("bars", bars), ("instruments", instruments), ("seed", seed)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"{name}: want an int, got {type(v).__name__}")
    try:
        interval_ns = pd.Timedelta(interval).value
    except (ValueError, TypeError) as e:
        raise ValueError(f"interval: {interval!r} is not a duration such as '1m', '1h', '1d' ({e})") from None
    start_ns = None if start is None else pd.Timestamp(start, tz="UTC").value if pd.Timestamp(start).tz is None \
        else pd.Timestamp(start).tz_convert("UTC").value
    return bars_to_frame(_core.synth(int(bars), int(interval_ns), int(instruments), int(seed), float(signal),
                                     float(correlation), bool(weekends), float(price), float(volatility),
                                     float(regime_bars), float(regime_drift), start_ns))
