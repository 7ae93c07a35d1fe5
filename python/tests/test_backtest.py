"""backtest, walkforward and sweep: against the command on the same files, and a hand-checked case."""
import json

import numpy as np
import pandas as pd
import pytest

import tickgrad
from conftest import run_cli

STAT_KEYS = ("total_return", "annual_return", "annual_vol", "sharpe", "sortino", "max_drawdown", "calmar", "trades",
             "win_rate", "avg_trade_pnl", "avg_trade_return", "exposure", "turnover", "final_equity")


@pytest.fixture(scope="module")
def market(cli, tmp_path_factory):
    path = tmp_path_factory.mktemp("market") / "synth.csv"
    run_cli(cli, "synth", "--bars", "1200", "--seed", "7", "--signal", "0.3", "--out", path)
    return path


@pytest.fixture(scope="module")
def mlp_run(cli, market, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "mlp"
    run_cli(cli, "train", "--model", "mlp", "--window", "8", "--hidden", "16", "--epochs", "2", "--data", market,
            "--out", out)
    return out


def same_stats(got: dict, want: dict):
    for key in STAT_KEYS:
        assert got[key] == pytest.approx(want[key], rel=1e-10, abs=1e-12), key


def same_files(a, b, names=("equity.csv", "trades.csv", "backtest.json")):
    for name in names:
        assert (a / name).read_text() == (b / name).read_text(), name


def test_rule_strategy_matches_the_command(cli, market, tmp_path):
    printed = run_cli(cli, "backtest", "--data", market, "--strategy", "sma-cross:5,20", "--cost-bps", "2",
                      "--out", tmp_path / "cli")
    bt = tickgrad.backtest(market, strategy="sma-cross:5,20", cost_bps=2, out=tmp_path / "py")
    want = json.loads((tmp_path / "cli" / "backtest.json").read_text())
    same_stats(bt.stats, want["strategy_stats"])
    same_stats(bt.buy_and_hold, want["buy_and_hold_stats"])
    same_files(tmp_path / "cli", tmp_path / "py")
    assert bt.text in printed and bt.name == "sma-cross:5,20"
    eq = pd.read_csv(tmp_path / "cli" / "equity.csv")
    assert len(bt.equity) == len(eq) and str(bt.equity.index.tz) == "UTC"
    for col in ("close", "position", "equity", "drawdown", "bh_equity"):
        np.testing.assert_allclose(bt.equity[col].to_numpy(), eq[col].to_numpy(), rtol=1e-7, atol=1e-10)  # %.8g
    trades = pd.read_csv(tmp_path / "cli" / "trades.csv")
    assert len(bt.trades) == len(trades) == bt.stats["trades"]
    np.testing.assert_allclose(bt.trades["pnl"].to_numpy(), trades["pnl"].to_numpy(), rtol=1e-10)
    assert (bt.trades["entry_time"] == pd.to_datetime(trades["entry_time"], utc=True)).all()
    assert bt.files["equity"] == str(tmp_path / "py" / "equity.csv")
    # a DataFrame gives the same backtest as its file
    again = tickgrad.backtest(tickgrad.read_bars(market), strategy="sma-cross:5,20", cost_bps=2, out=False)
    same_stats(again.stats, bt.stats) and again.files == {}


def test_forecaster_run_matches_the_command(cli, market, mlp_run, tmp_path):
    run_cli(cli, "backtest", "--run", mlp_run, "--rule", "median", "--commission", "0.0001", "--out", tmp_path / "cli")
    bt = tickgrad.backtest(run=mlp_run, rule="median", commission=0.0001, out=tmp_path / "py")
    assert bt.name == "mlp median h8"
    same_files(tmp_path / "cli", tmp_path / "py")
    want = json.loads((tmp_path / "cli" / "backtest.json").read_text())
    same_stats(bt.stats, want["strategy_stats"])
    # the default split of a run is its test split; given the data it reads the same bars
    assert bt.stats["bars"] == len(tickgrad.read_bars(market)) - int(0.85 * 1200)
    same_stats(tickgrad.backtest(market, run=mlp_run, rule="median", commission=0.0001, out=False).stats, bt.stats)


def test_targets_hand_checked():
    ts = pd.date_range("2024-01-01", periods=4, freq="D", tz="UTC")
    bars = pd.DataFrame({"open": [10.0, 11.0, 12.0, 13.0], "high": [11.0, 12.0, 13.0, 14.0],
                         "low": [9.0, 10.0, 11.0, 12.0], "close": [10.5, 11.5, 12.5, 13.5],
                         "volume": [1.0] * 4}, index=ts)
    bt = tickgrad.backtest(bars, targets=[1, 0, 0, 0], cash=1000.0, commission=0.001, out=False)
    units = 1000.0 / 11.0                    # bought at bar 1's open with the whole equity
    cash1 = 1000.0 - 1000.0 - 1.0            # minus the fee of 0.1% of 1000
    exit_value = units * 12.0
    cash2 = cash1 + exit_value - 0.001 * exit_value
    np.testing.assert_allclose(bt.equity["equity"].to_numpy(), [1000.0, cash1 + units * 11.5, cash2, cash2], rtol=1e-12)
    np.testing.assert_allclose(bt.equity["units"].to_numpy(), [0, units, 0, 0], atol=1e-12)
    assert len(bt.trades) == 1 and bt.stats["trades"] == 1
    t = bt.trades.iloc[0]
    assert t["side"] == 1 and not t["open"] and t["entry_time"] == ts[1] and t["exit_time"] == ts[2]
    assert t["pnl"] == pytest.approx(exit_value - 1000.0 - 1.0 - 0.001 * exit_value, rel=1e-12)
    assert t["return"] == pytest.approx(t["pnl"] / 1000.0, rel=1e-12)
    assert bt.stats["total_return"] == pytest.approx(cash2 / 1000.0 - 1, rel=1e-12)


def test_bad_arguments(market):
    with pytest.raises(ValueError, match="strategy, targets, run"):
        tickgrad.backtest(market, strategy="buy-and-hold", targets=np.zeros(1200), out=False)
    with pytest.raises(ValueError, match="targets"):
        tickgrad.backtest(market, targets=np.zeros(5), out=False)
    with pytest.raises(ValueError, match="targets"):
        tickgrad.backtest(market, targets=np.full(1200, 1.5), out=False)
    with pytest.raises(ValueError, match="rule"):
        tickgrad.backtest(market, run="somewhere", rule="moon", out=False)
    with pytest.raises(ValueError, match="rule"):
        tickgrad.backtest(market, strategy="buy-and-hold", rule="median", out=False)
    with pytest.raises(ValueError, match="strategy"):
        tickgrad.backtest(market, strategy="sma-cross:20,5", out=False)
    with pytest.raises(ValueError, match="split"):
        tickgrad.backtest(market, strategy="buy-and-hold", split="later", out=False)
    with pytest.raises(ValueError, match="cost_bps"):
        tickgrad.backtest(market, strategy="buy-and-hold", cost_bps=-1, out=False)


def test_walkforward_and_sweep_tables(cli, market, tmp_path):
    small = dict(window=8, hidden=8, epochs=1, horizons=2)
    wf = tickgrad.walkforward("mlp", market, folds=2, train_blocks=2, out=tmp_path / "wf", **small)
    assert list(wf.table["fold"]) == [1, 2] and len(wf.folds) == 2
    run_cli(cli, "walkforward", "--folds", "2", "--train-blocks", "2", "--model", "mlp", "--data", market, "--window",
            "8", "--hidden", "8", "--epochs", "1", "--horizons", "2", "--out", tmp_path / "wf-cli")
    assert (tmp_path / "wf-cli" / "walkforward.csv").read_text() == (tmp_path / "wf" / "walkforward.csv").read_text()
    assert (tmp_path / "wf" / "fold-01" / "best.safetensors").exists() and wf.page.endswith("walkforward.html")
    assert {"total_return", "sharpe", "best_val_loss", "bh_total_return"} <= set(wf.table.columns)
    sw = tickgrad.sweep("mlp", market, grid={"lr": [1e-3, 3e-3]}, out=tmp_path / "sweep", **small)
    assert list(sw.table["run"]) == [1, 2] and len(sw.runs) == 2
    assert sorted(sw.table["lr"]) == [1e-3, 3e-3]
    cfg = json.loads((tmp_path / "sweep" / "run-001" / "config.json").read_text())
    assert cfg["mlp"]["window"] == 8 and cfg["epochs"] == 1
    with pytest.raises(ValueError, match="hidden"):
        tickgrad.sweep("mlp", market, grid={"lr": [1e-3]}, out=tmp_path / "bad", hidden=-3)
    with pytest.raises(ValueError, match="grid"):
        tickgrad.sweep("mlp", market, grid={"lr": []}, out=tmp_path / "bad")


def test_policy_run_matches_the_command(cli, market, tmp_path):
    run = tmp_path / "dqn"
    run_cli(cli, "train", "--model", "dqn", "--env", "trading", "--data", market, "--window", "8",
            "--total-timesteps", "500", "--out", run)
    run_cli(cli, "backtest", "--run", run, "--out", tmp_path / "cli")
    bt = tickgrad.backtest(run=run, out=tmp_path / "py")
    assert bt.name == "dqn policy" and bt.options["cost_bps"] == 1.0  # the env's costs, as the command keeps them
    same_files(tmp_path / "cli", tmp_path / "py")
    run_cli(cli, "backtest", "--run", run, "--split", "val", "--cost-bps", "3", "--out", tmp_path / "cli-val")
    val = tickgrad.backtest(run=run, split="val", cost_bps=3, out=tmp_path / "py-val")
    same_files(tmp_path / "cli-val", tmp_path / "py-val")
    assert val.options["cost_bps"] == 3.0
    with pytest.raises(ValueError, match="policy"):
        tickgrad.backtest(run=run, rule="median", out=False)
    # a DataFrame reaches the policy through a file it reads back exactly: the same backtest as the file's
    on_file = tickgrad.backtest(market, run=run, out=False)
    on_frame = tickgrad.backtest(tickgrad.read_bars(market), run=run, out=False)
    assert on_frame.stats == on_file.stats and on_frame.equity.equals(on_file.equity)


def test_quotes_cross_half_the_spread(cli, tmp_path):
    """Bars with bid and ask columns: the buy at bar 1's open pays bar 0's half spread (0.5), as the command does."""
    path = tmp_path / "q.csv"
    path.write_text("ts,open,high,low,close,bid,ask\n2024-01-02 14:30:00,100,100,100,100,99.5,100.5\n"
                    "2024-01-02 14:31:00,110,120,110,120,119,121\n2024-01-02 14:32:00,130,130,125,125,124,126\n"
                    "2024-01-02 14:33:00,120,140,120,140,139.8,140.2\n")
    bt = tickgrad.backtest(path, strategy="buy-and-hold", cash=1100, out=tmp_path / "py")
    assert bt.stats["spread_cost"] == pytest.approx(5.0) and bt.stats["rolls"] == 0
    assert bt.stats["final_equity"] == pytest.approx(1100 - 10 * 110.5 + 10 * 140)
    run_cli(cli, "backtest", "--data", path, "--strategy", "buy-and-hold", "--cash", "1100", "--out", tmp_path / "cli")
    same_files(tmp_path / "cli", tmp_path / "py")

