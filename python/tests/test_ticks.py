"""tickgrad.read_ticks, make_bars and write_bars: the records and bars `tickgrad bars` reads and makes, Parquet and CSV
written and read back exactly, training on ticks with by=, and the errors that say what to give."""
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import tickgrad
from conftest import run_cli

T0 = 1704205800000  # 2024-01-02 14:30:00 UTC, in ms


@pytest.fixture(scope="module")
def ticks(tmp_path_factory):
    """20,000 trades 1.5 s apart (a cent random walk, sizes 1-20, sides B, S and none) and quotes every 3 s."""
    folder = tmp_path_factory.mktemp("ticks")
    rng = np.random.default_rng(7)
    n = 20000
    price = np.round(100 + np.cumsum(rng.choice([-0.01, 0.01], n)), 2)
    size = rng.integers(1, 21, n)
    side = rng.choice(["B", "S", ""], n)
    trades = folder / "t.csv"
    with open(trades, "w") as f:
        f.write("ts,price,size,side\n")
        for i in range(n):
            f.write(f"{T0 + i * 1500},{price[i]:.2f},{size[i]},{side[i]}\n")
    mid = np.round(100 + np.cumsum(rng.choice([-0.01, 0.01], n // 2)), 2)
    quotes = folder / "q.csv"
    with open(quotes, "w") as f:
        f.write("ts,bid,ask,bid_size,ask_size\n")
        for i in range(n // 2):
            f.write(f"{T0 - 1000 + i * 3000},{mid[i] - 0.01:.2f},{mid[i] + 0.01:.2f},5,7\n")
    return trades, quotes, price, size, side


def test_read_ticks_gives_every_record(ticks):
    trades, quotes, price, size, side = ticks
    t = tickgrad.read_ticks(trades)
    assert list(t.columns) == ["price", "size", "side", "flags"] and len(t) == len(price)
    assert str(t.index.tz) == "UTC" and t.index[0] == pd.Timestamp(T0, unit="ms", tz="UTC")
    assert (t.index.asi8[1:] - t.index.asi8[:-1] == 1_500_000_000).all()
    assert np.array_equal(t["price"].to_numpy(), price.astype(float))
    assert np.array_equal(t["size"].to_numpy(), size.astype(float))
    assert t["side"].dtype == np.int8 and t["flags"].dtype == np.uint8
    want_side = np.select([side == "B", side == "S"], [1, -1], 0)
    assert np.array_equal(t["side"].to_numpy(), want_side)
    assert t.attrs["kind"] == "trades" and t.attrs["counts"]["records"] == len(price)
    q = tickgrad.read_ticks(quotes, "quotes")
    assert list(q.columns) == ["bid", "ask", "bid_size", "ask_size"] and len(q) == len(price) // 2
    assert ((q["ask"] - q["bid"]).round(6) == 0.02).all() and (q["ask_size"] == 7).all()


def test_read_ticks_counts_drops_and_names_bad_records(tmp_path):
    path = tmp_path / "odd.csv"
    path.write_text("ts,price,size,side,flags\n"
                    "2024-01-02 14:30:00,100,1,buy,\n"
                    "2024-01-02 14:30:02,101,2,sell,suspicious\n"
                    "2024-01-02 14:30:01,102,1,,\n"      # older than the one before: dropped and counted
                    "2024-01-02 14:30:03,103,4,N,cancelled\n")
    with pytest.warns(UserWarning, match="line 4"):
        t = tickgrad.read_ticks(path)
    assert t["price"].tolist() == [100, 101, 103] and t["flags"].tolist() == [0, 1, 2]
    assert t["side"].tolist() == [1, -1, 0] and t.attrs["counts"]["out_of_order"] == 1
    with pytest.raises(tickgrad.Error, match=r"line 4: .*2024-01-02 14:30:01"):
        tickgrad.read_ticks(path, out_of_order="error")
    bad = tmp_path / "bad.csv"
    bad.write_text("ts,price,size\n2024-01-02 14:30:00,100,1\n2024-01-02 14:30:01,0,1\n")
    with pytest.raises(tickgrad.Error, match="bad.csv: line 3: price 0 is not a positive number"):
        tickgrad.read_ticks(bad)
    with pytest.raises(ValueError, match="kind: want 'trades' or 'quotes'"):
        tickgrad.read_ticks(path, "bars")
    with pytest.raises(ValueError, match="out_of_order"):
        tickgrad.read_ticks(path, out_of_order="sort")


def test_make_bars_equals_the_command_file(ticks, cli, tmp_path):
    trades, quotes = ticks[0], ticks[1]
    for recipe, q in (("volume:400", None), ("time:5m", quotes), ("tick_imbalance:50", quotes)):
        out = tmp_path / f"{recipe.replace(':', '_')}.csv"
        args = ["bars", "--data", trades, "--by", recipe, "--out", out] + (["--quotes", q] if q else [])
        run_cli(cli, *args)
        want = tickgrad.read_bars(out, duplicates="first")
        got = tickgrad.make_bars(trades, recipe, q)
        assert got.attrs["format"] == "ticks" and got.attrs["report"]["bars"] == len(got)
        assert got.attrs["report"]["trade_counts"]["records"] == 20000
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        if q:
            assert {"bid", "ask", "spread_mean", "mid"} <= set(got.columns)


def test_read_bars_by_equals_make_bars_and_tick_files_need_it(ticks):
    trades, quotes = ticks[0], ticks[1]
    pd.testing.assert_frame_equal(tickgrad.read_bars(trades, by="time:1m", quotes=quotes),
                                  tickgrad.make_bars(trades, "time:1m", quotes), check_exact=True, check_like=True)
    with pytest.raises(tickgrad.Error, match=r"t.csv holds trade ticks, not bars: pass by=RECIPE"):
        tickgrad.read_bars(trades)
    with pytest.raises(tickgrad.Error, match="unknown kind 'renko'"):
        tickgrad.make_bars(trades, "renko:4")
    with pytest.raises(ValueError, match="by: want a recipe"):
        tickgrad.make_bars(trades, "")


def test_parquet_and_csv_written_read_back_exactly(ticks, tmp_path):
    trades, quotes = ticks[0], ticks[1]
    bars = tickgrad.make_bars(trades, "dollar:2e5", quotes, out=tmp_path / "b.parquet")
    assert math.isnan(bars["bid"].iloc[0]) or bars["bid"].notna().all()
    back = tickgrad.read_bars(tmp_path / "b.parquet")
    assert back.attrs["format"] == "parquet"
    pd.testing.assert_frame_equal(back, bars, check_exact=True)
    # a frame with categories (missing values, an empty and a non-ASCII name), NaN and extreme numbers
    n = 300
    frame = pd.DataFrame({
        "open": np.full(n, 10.0), "high": np.full(n, 11.0), "low": np.full(n, 9.0), "close": np.linspace(9.5, 10.5, n),
        "volume": [math.nan if i % 5 == 0 else float(i) for i in range(n)], "instrument": [i % 4 for i in range(n)],
        "x": [math.nan if i % 7 == 0 else (-1) ** i * 10.0 ** (i % 300 - 150) for i in range(n)],
        "venue": pd.Categorical([None if i % 11 == 0 else ["", "Z\u00fcrich", "b"][i % 3] for i in range(n)]),
    }, index=pd.date_range("2024-01-02", periods=n, freq="1min", tz="UTC", name="ts"))
    for name in ("f.parquet", "f.csv"):
        path = tickgrad.write_bars(frame, tmp_path / name)
        back = tickgrad.read_bars(path)
        for col in ("open", "high", "low", "close", "volume", "x"):
            assert np.array_equal(back[col].to_numpy(), frame[col].to_numpy(), equal_nan=True), (name, col)
        if name.endswith(".parquet"):  # CSV reads an empty name as missing
            assert back["venue"].astype(object).where(back["venue"].notna(), None).tolist() == \
                frame["venue"].astype(object).where(frame["venue"].notna(), None).tolist()
        assert (back.index == frame.index).all() and back["instrument"].tolist() == frame["instrument"].tolist()


def test_train_on_ticks_keeps_the_recipe(ticks, tmp_path):
    trades = ticks[0]
    s = dict(hidden=8, window=8, epochs=1, threads=1, horizons=2, verbose=False)
    run = tickgrad.train("mlp", str(trades), by="volume:400", out=str(tmp_path / "r"), **s)
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert config["bar_recipe"] == "volume:400" and run.config["bar_recipe"] == "volume:400"
    bars = tickgrad.make_bars(trades, "volume:400")
    frame_run = tickgrad.train("mlp", bars, out=str(tmp_path / "f"), **s)
    a, b = (tmp_path / "r" / "weights.safetensors").read_bytes(), (tmp_path / "f" / "weights.safetensors").read_bytes()
    assert a == b, "training on ticks by= and on make_bars' frame gave different weights"
    assert frame_run.config["bar_recipe"] == ""
    # a backtest of the tick run reads its ticks by the recipe in config.json: the frame run's backtest on the bars
    on_ticks, on_bars = tickgrad.backtest(run=run, out=False), tickgrad.backtest(bars, run=frame_run, out=False)
    pd.testing.assert_frame_equal(pd.DataFrame(on_ticks.equity), pd.DataFrame(on_bars.equity), check_exact=True)
    with pytest.raises(tickgrad.Error, match="t.csv holds trade ticks, not bars: give --by RECIPE"):
        tickgrad.train("mlp", str(trades), out=str(tmp_path / "n"), **s)  # train's messages name the flags


def test_lean_spy_ticks(shared_data):
    spy = shared_data / "lean" / "tick" / "equity" / "spy"
    if not spy.is_dir():
        pytest.skip(f"no Lean SPY ticks at {spy}")
    try:
        t = tickgrad.read_ticks(spy / "20131007_trade.zip")
    except tickgrad.Error as e:
        if "libzip" in str(e):
            pytest.skip(f"a build without libzip: {e}")
        raise
    assert len(t) > 100000 and t["price"].between(160, 180).all()
    assert t.index[0].tz_convert("America/New_York").hour >= 4
    bars = tickgrad.make_bars(spy, "time:1m")
    report = bars.attrs["report"]
    assert len(bars) == 4128 and report["trade_counts"]["records"] == 1887460 and report["excluded"] == 10
    assert bars["trade_count"].sum() == report["trades"] == 1887460 - 10
