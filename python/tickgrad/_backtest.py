"""Backtests (rule strategies, explicit targets, forecaster and policy runs), walk-forward folds and sweeps."""
from __future__ import annotations

import math
import os
import tempfile
import time
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from . import _core
from ._data import BarsLike, PathLike, _paths, to_bars, write_bars_csv
from ._predict import RunLike, run_path
from ._settings import flag_text, model_list, settings_pairs

_SPLITS = ("all", "train", "val", "test")
_TRADE_COLUMNS = ("entry_bar", "exit_bar", "entry_time", "exit_time", "side", "open", "size", "entry_price",
                  "exit_price", "entry_value", "exit_value", "fees", "pnl", "return")


def _utc(ns: np.ndarray) -> pd.DatetimeIndex:
    return pd.DatetimeIndex(np.asarray(ns).view("datetime64[ns]")).tz_localize("UTC")


class Backtest:
    """A finished backtest: the engine's result (tg_backtest) over the bars of one instrument.

    stats: the strategy's statistics (tg_bt_stats as a dict: total_return, annual_return, annual_vol, sharpe,
    sortino, max_drawdown, dd_* (the deepest drawdown's bars, duration and recovery), calmar, trades, win_rate,
    avg_trade_pnl, avg_trade_return, exposure, turnover, ...); buy_and_hold: the same for buy and hold over the same
    bars and costs; equity: a DataFrame indexed by the bars' times (UTC) with close, target (the decisions),
    units, position (fraction of equity held), equity, drawdown and bh_equity, whose columns view the library's
    arrays (read-only, no copy); trades: one row per round trip (entry_time, exit_time as UTC Timestamps, side
    +1 / -1, open (still open at the end), size, prices, values, fees, pnl, return); name: the strategy's label;
    text: the statistics table the command prints; out: the folder of the files written (None when none);
    files: their paths (trades, equity, backtest_json, report when a run's report.html was rewritten).
    """

    def __init__(self, result: "_core.BacktestResult", out: Optional[str], files: Dict[str, str]) -> None:
        self._r = result
        self.name: str = result.name
        self.source: str = result.source
        self.text: str = result.text
        self.options: Dict[str, float] = result.opts
        self.stats: Dict[str, Any] = result.stats()
        self.buy_and_hold: Dict[str, Any] = result.buy_and_hold()
        curves = result.curves()
        index = _utc(curves.pop("ts"))
        index.name = "ts"
        self.equity: pd.DataFrame = pd.DataFrame({k: np.asarray(v) for k, v in curves.items()}, index=index, copy=False)
        rows = result.trades()
        trades = pd.DataFrame(rows, columns=list(_TRADE_COLUMNS))
        for col in ("entry_time", "exit_time"):
            trades[col] = pd.to_datetime(trades[col].astype("int64"), unit="ns", utc=True)
        trades["open"] = trades["open"].astype(bool)
        self.trades: pd.DataFrame = trades
        self.out = out
        self.files = files

    def __repr__(self) -> str:
        s = self.stats
        return (f"Backtest({self.name!r}, bars={s['bars']}, total_return={s['total_return']:.4g}, "
                f"sharpe={s['sharpe']:.3g}, max_drawdown={s['max_drawdown']:.4g}, trades={s['trades']})")


def _number(name: str, v: Any, lo: float, hi: float) -> float:
    if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool):
        raise TypeError(f"{name}: want a number, got {type(v).__name__}")
    v = float(v)
    if not (lo <= v <= hi) or not math.isfinite(v):
        raise ValueError(f"{name}: {v!r} is outside [{lo:g}, {hi:g}]")
    return v


def _fc_args(rule: str, horizon: int, long_only: bool, sized: bool, class_map: Optional[str], threshold: float,
             weights: str) -> tuple:
    if rule not in ("band", "median"):
        raise ValueError(f"rule: want 'band' or 'median', got {rule!r}")
    if not isinstance(horizon, (int, np.integer)) or isinstance(horizon, bool) or not 0 <= horizon <= 8:
        raise ValueError(f"horizon: want 0 (the longest) or 1..8, got {horizon!r}")
    if class_map is not None and not isinstance(class_map, str):
        if isinstance(class_map, Mapping):
            class_map = ",".join(f"{k}={v:g}" for k, v in class_map.items())
        else:
            raise TypeError(f"class_map: want 'name=pos,...' or a dict, got {type(class_map).__name__}")
    threshold = _number("threshold", threshold, 0.0, 1.0)
    if weights not in ("best", "last"):
        raise ValueError(f"weights: want 'best' or 'last', got {weights!r}")
    return (rule, int(horizon), int(bool(long_only)), int(bool(sized)), class_map, threshold, weights)


def _costs(cash: float, commission: Optional[float], cost_bps: Optional[float], slippage: Optional[float]) -> tuple:
    return (_number("cash", cash, 1e-9, 1e15), _number("commission", commission or 0.0, 0.0, 1.0),
            _number("cost_bps", cost_bps or 0.0, 0.0, 10000.0), _number("slippage", slippage or 0.0, 0.0, 1.0))


def _default_out(name: str) -> str:
    """The command's default: runs/backtest-<strategy>-<local time>, ':' and ',' turned into '-'."""
    return os.path.join("runs", "backtest-" + name.replace(":", "-").replace(",", "-") + "-" +
                        time.strftime("%Y%m%d-%H%M%S"))


def _write(result: "_core.BacktestResult", out: str, report: bool) -> Dict[str, str]:
    warned = result.write(out, report)
    if warned:
        warnings.warn(f"backtest: {warned}", stacklevel=3)
    files = {"trades": os.path.join(out, "trades.csv"), "equity": os.path.join(out, "equity.csv"),
             "backtest_json": os.path.join(out, "backtest.json")}
    if report and not warned:
        files["report"] = os.path.join(out, "report.html")
    return files


def backtest(data: Optional[BarsLike] = None, *, run: Optional[RunLike] = None, strategy: Optional[str] = None,
             targets: Optional[Union[Sequence[float], np.ndarray]] = None, split: Optional[str] = None,
             rule: str = "band", horizon: int = 0, long_only: bool = False, sized: bool = False,
             class_map: Optional[Union[str, Mapping[str, float]]] = None, threshold: float = 0.0,
             weights: str = "best", cash: float = 100000.0, commission: Optional[float] = None,
             cost_bps: Optional[float] = None, slippage: Optional[float] = None,
             out: Union[PathLike, None, bool] = None, **reader_options: Any) -> Backtest:
    """Backtests on the bars of one instrument, as ``tickgrad backtest`` does (the same library calls).

    What decides, exactly one of:
      strategy: a rule, "buy-and-hold" or "sma-cross:FAST,SLOW" (tg_strategy_parse / tg_strategy_targets);
      targets:  positions in [-1, 1], one per bar of the split (1 fully long, -1 fully short, 0 flat), decided at
                each bar's close and filled at the next bar's open;
      run:      a trained run (folder or Run). A forecaster trades its forecasts by ``rule`` (band or median),
                ``horizon`` (0: the longest), ``long_only``, ``sized``, and for a classifier ``class_map`` ("buy=1,
                sell=-1" or a dict) and ``threshold``, with ``weights`` best or last (tg_predictor_open,
                tg_fc_targets); a DQN or PPO run (its env.json) acts greedily (tg_policy_backtest).

    data: a DataFrame or path(s) read with reader_options (columns, tz, price_scale, nulls). With a run it defaults
    to the run's own data (its config.json). A policy reads its data by path: a DataFrame is written to a temporary
    CSV file that the library reads back bit for bit.
    split: "all", "train", "val" or "test", the trainer's chronological split by bars (a run's fractions); default
    "test" with a run, else "all" (the command's defaults). A run's predictor sees every bar before the split first.
    Costs: cash (default 100000), commission (fraction of traded value), cost_bps, slippage (fraction of the open);
    0 when not given, except that a policy then keeps its env's cost_bps and slippage, as the command does.

    out: the folder of trades.csv, equity.csv and backtest.json. None: where the command writes them (a run's
    folder, whose report.html is rewritten; else runs/backtest-<strategy>-<time> under the working directory);
    False: no files. Bad arguments raise ValueError / TypeError naming them; library failures tickgrad.Error.
    """
    given = [n for n, v in (("strategy", strategy), ("targets", targets), ("run", run)) if v is not None]
    if len(given) != 1:
        raise ValueError("strategy, targets, run: give exactly one" + (f" (got {', '.join(given)})" if given else ""))
    if split is None:
        split = "test" if run is not None else "all"
    if split not in _SPLITS:
        raise ValueError(f"split: want 'all', 'train', 'val' or 'test', got {split!r}")
    fc_given = (rule != "band" or horizon != 0 or long_only or sized or class_map is not None or threshold != 0.0
                or weights != "best")
    if run is None and fc_given:
        raise ValueError("rule, horizon, long_only, sized, class_map, threshold, weights: these go with run")
    if strategy is not None and not isinstance(strategy, str):
        raise TypeError(f"strategy: want 'buy-and-hold' or 'sma-cross:FAST,SLOW', got {type(strategy).__name__}")
    costs = _costs(cash, commission, cost_bps, slippage)
    if out is True:
        out = None
    out_dir = None if out is False or out is None else os.fspath(out)

    if run is not None:
        path = run_path(run)
        if os.path.exists(os.path.join(path, "env.json")):
            if fc_given:
                raise ValueError(f"run: {path} is a policy: it acts itself; rule, horizon, long_only, sized, class_map, "
                                 "threshold and weights are for forecaster runs")
            costs_given = any(v is not None for v in (commission, cost_bps, slippage))
            if isinstance(data, pd.DataFrame):  # the policy reads its bars by path: a file it reads back exactly
                with tempfile.TemporaryDirectory() as tmp:
                    frame = write_bars_csv(data, os.path.join(tmp, "bars.csv"))
                    result = _core.policy_backtest(path, split, [frame], costs, costs_given)
            else:
                paths = [] if data is None else _paths(data, "data")
                result = _core.policy_backtest(path, split, paths, costs, costs_given)
            where = path if out is None else out_dir
            files = _write(result, where, out is None) if where else {}
            return Backtest(result, where, files)
        fc = _fc_args(rule, horizon, long_only, sized, class_map, threshold, weights)
        data_paths, data_tz, f0, f1, by, quotes = _core.run_data(path)
        if data is None:
            opts = dict(reader_options)
            if data_tz and "tz" not in opts:
                opts["tz"] = data_tz
            if by and "by" not in opts:  # ticks: the run's bars made again by its recipe
                opts["by"] = by
                if quotes and "quotes" not in opts:
                    opts["quotes"] = quotes
            bars = to_bars(data_paths, **opts)
        else:
            bars = to_bars(data, **reader_options)
        result = _core.backtest_bars(bars, split, f0, f1, costs, None, None, path, fc)
        where = path if out is None else out_dir
        files = _write(result, where, out is None) if where else {}
        return Backtest(result, where, files)

    if data is None:
        raise ValueError("data: give the bars to backtest (a DataFrame or path(s))")
    bars = to_bars(data, **reader_options)
    tv = None
    if targets is not None:
        tv = np.ascontiguousarray(np.asarray(targets, dtype=np.float64))
        if tv.ndim != 1:
            raise ValueError(f"targets: want one position per bar (1-d), got shape {tv.shape}")
        bad = ~((tv >= -1.0) & (tv <= 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"targets: position {tv[i]!r} at bar {i} is outside [-1, 1]")
    result = _core.backtest_bars(bars, split, 0.0, 0.0, costs, strategy, tv, None, None)
    where = _default_out(result.name) if out is None else out_dir
    files = _write(result, where, False) if where else {}
    return Backtest(result, where, files)


# ---- walk-forward and sweeps ----

def _bars_and_paths(data: BarsLike, reader_options: Mapping[str, Any]):
    bars = to_bars(data, **reader_options)
    paths = None if isinstance(data, pd.DataFrame) else _paths(data, "data")
    return bars, paths


def _fc_bt(rule, horizon, long_only, sized, class_map, threshold, cash, commission, cost_bps, slippage):
    return (_fc_args(rule, horizon, long_only, sized, class_map, threshold, "best"),
            _costs(cash, commission, cost_bps, slippage))


class WalkForward:
    """A finished walk-forward: ``table`` (the rows of OUT/walkforward.csv, one per fold: dates, training and
    backtest numbers), ``out`` (the folder), ``page`` (OUT/walkforward.html), ``csv`` (OUT/walkforward.csv),
    ``folds`` (each fold's run folder, OUT/fold-NN) and ``log`` (what the command prints)."""

    def __init__(self, out: str, log: str) -> None:
        self.out = out
        self.csv = os.path.join(out, "walkforward.csv")
        self.page = os.path.join(out, "walkforward.html")
        self.table: pd.DataFrame = pd.read_csv(self.csv)
        self.folds: List[str] = sorted(os.path.join(out, d) for d in os.listdir(out) if d.startswith("fold-"))
        self.log = log

    def __repr__(self) -> str:
        return f"WalkForward({self.out!r}, folds={len(self.folds)})"


class Sweep:
    """A finished sweep: ``table`` (the rows of OUT/sweep.csv, one per run in run order), ``out``, ``page``
    (OUT/sweep.html, ranked by the metric), ``csv``, ``runs`` (each run's folder, OUT/run-NNN) and ``log``."""

    def __init__(self, out: str, log: str) -> None:
        self.out = out
        self.csv = os.path.join(out, "sweep.csv")
        self.page = os.path.join(out, "sweep.html")
        self.table: pd.DataFrame = pd.read_csv(self.csv)
        self.runs: List[str] = sorted(os.path.join(out, d) for d in os.listdir(out) if d.startswith("run-"))
        self.log = log

    def __repr__(self) -> str:
        return f"Sweep({self.out!r}, runs={len(self.runs)})"


def walkforward(model: str, data: BarsLike, *, folds: int, out: PathLike, train_blocks: int = 3, rolling: bool = False,
                rule: str = "band", horizon: int = 0, long_only: bool = False, sized: bool = False,
                class_map: Optional[Union[str, Mapping[str, float]]] = None, threshold: float = 0.0,
                cash: float = 100000.0, commission: float = 0.0, cost_bps: float = 0.0, slippage: float = 0.0,
                reader_options: Optional[Mapping[str, Any]] = None, verbose: bool = True,
                **settings: Any) -> WalkForward:
    """Walk-forward evaluation of a forecaster (``tickgrad walkforward``, tg_wf_run), the GIL released.

    The bars are cut into folds + train_blocks + 1 equal blocks; fold k trains on train_blocks blocks (anchored:
    growing from block 0; rolling: the last train_blocks only), validates on the next block and is backtested on
    the one after (with the rule and costs given, as ``backtest(run=...)``). model: a forecaster's kind as
    train() takes it; data: a DataFrame or path(s) (reader_options as read_bars takes them); out: a folder that must not
    hold a walk-forward already. settings: training settings by the command's flag names, "-" written "_"
    (epochs=2, lr=1e-3, hidden=16, seed=3, ...). verbose: the library's log on sys.stdout as it runs (it is kept
    in ``.log`` either way). Returns a WalkForward with the table of OUT/walkforward.csv.
    """
    if not isinstance(folds, (int, np.integer)) or isinstance(folds, bool) or not 1 <= folds <= 64:
        raise ValueError(f"folds: want 1..64, got {folds!r}")
    if not isinstance(train_blocks, (int, np.integer)) or isinstance(train_blocks, bool) or not 1 <= train_blocks <= 1000:
        raise ValueError(f"train_blocks: want 1..1000, got {train_blocks!r}")
    if not isinstance(model, str):
        raise TypeError(f"model: want {model_list(chr(39))}, got {type(model).__name__}")
    out = os.fspath(out)
    bars, paths = _bars_and_paths(data, reader_options or {})
    fc, costs = _fc_bt(rule, horizon, long_only, sized, class_map, threshold, cash, commission, cost_bps, slippage)
    log = _core.walkforward(model, bars, paths, settings_pairs(settings), int(folds), int(train_blocks),
                            bool(rolling), out, fc, costs, bool(verbose))
    return WalkForward(out, "\n".join(log))


def sweep(model: str, data: BarsLike, *, grid: Mapping[str, Sequence[Any]], out: PathLike, metric: str = "val_loss",
          backtest: bool = False, rule: str = "band", horizon: int = 0, long_only: bool = False, sized: bool = False,
          class_map: Optional[Union[str, Mapping[str, float]]] = None, threshold: float = 0.0,
          cash: float = 100000.0, commission: float = 0.0, cost_bps: float = 0.0, slippage: float = 0.0,
          reader_options: Optional[Mapping[str, Any]] = None, verbose: bool = True, **settings: Any) -> Sweep:
    """A hyperparameter sweep of a forecaster (``tickgrad sweep``, tg_sweep_run), the GIL released.

    grid: setting (its config.json name: "lr", "mlp.hidden", "dropout", ...) -> values to try; every combination is
    a training run into OUT/run-NNN (the first key varies slowest), checked before anything trains. metric: rank by
    "val_loss" or "val_qrisk50" (lower is better). backtest: also backtest each run's test split with the rule and
    costs given. model, data, out, settings: as walkforward. Returns a Sweep with the table of OUT/sweep.csv.
    """
    if not isinstance(grid, Mapping) or not grid:
        raise ValueError("grid: want a dict of setting -> list of values, e.g. {'lr': [1e-3, 3e-3]}")
    texts = []
    for key, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, np.ndarray)) or len(values) == 0:
            raise ValueError(f"grid: {key!r} wants a non-empty list of values")
        texts.append(f"{key}=" + ",".join(_grid_value(key, v) for v in values))
    if metric not in ("val_loss", "val_qrisk50"):
        raise ValueError(f"metric: want 'val_loss' or 'val_qrisk50', got {metric!r}")
    if not backtest and (rule != "band" or horizon or long_only or sized or class_map is not None or threshold
                         or commission or cost_bps or slippage or cash != 100000.0):
        raise ValueError("rule, horizon, long_only, sized, class_map, threshold and the costs go with backtest=True")
    out = os.fspath(out)
    bars, paths = _bars_and_paths(data, reader_options or {})
    fc, costs = _fc_bt(rule, horizon, long_only, sized, class_map, threshold, cash, commission, cost_bps, slippage)
    log = _core.sweep(model, bars, paths, settings_pairs(settings), texts, metric, bool(backtest), out, fc, costs,
                      bool(verbose))
    return Sweep(out, "\n".join(log))


def _grid_value(key: str, v: Any) -> str:
    text = flag_text(key, v)
    if "," in text:
        raise ValueError(f"grid: {key!r} value {v!r} holds a comma")
    return text
