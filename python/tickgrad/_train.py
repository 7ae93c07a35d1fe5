"""tickgrad.train: `tickgrad train` from Python (the same settings by the same names, the same library calls)."""
from __future__ import annotations

import os
import re
import textwrap
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import pandas as pd

from . import _core
from ._data import to_bars
from ._settings import FLAG_LINES, keyword, model_list, settings_pairs
from ._run import EpochCallback, Run, _epoch_hook, _finished, _progress

AGENTS = ("dqn", "ppo")
# run control that is a keyword of train() but no setting of config.json
CONTROL = ("stop_after",)


def _settings_pairs(settings: Dict[str, Any]) -> List[Tuple[str, str]]:
    return settings_pairs(settings, "train", list(CONTROL) + ["config", "on_epoch", "verbose", "progress", "data"])


def _data_args(data: Any) -> Tuple[Optional[List[str]], Any]:
    """(paths for config.json's "data", bars of a frame): a path or list of paths is read by the library as the command
    reads --data; a DataFrame becomes bars (tickgrad._data.to_bars)."""
    if data is None:
        return None, None
    if isinstance(data, (pd.DataFrame, _core.Bars)):
        return None, to_bars(data)
    if isinstance(data, (str, os.PathLike)):
        return [os.fspath(data)], None
    if isinstance(data, (list, tuple)) and data and all(isinstance(p, (str, os.PathLike)) for p in data):
        return [os.fspath(p) for p in data], None
    raise TypeError(f"data: want a DataFrame, a path or a list of paths, got {type(data).__name__}")


def train(model: str, data: Any = None, *, on_epoch: Optional[EpochCallback] = None, verbose: bool = True,
          progress: Optional[bool] = None, config: Optional[str] = None, **settings: Any) -> Run:
    # the docstring is built at import from the library's list of settings (below)
    if not isinstance(model, str):
        raise TypeError(f"model: want a name such as 'tft', 'mlp', 'dqn', got {type(model).__name__}")
    if model in AGENTS:
        if on_epoch is not None:
            raise TypeError(f"on_epoch: {model} runs report per-update metrics in metrics.csv; on_epoch is for "
                            "forecasters")
        env = settings.pop("env", None)
        if config is not None:
            settings["config"] = config
        from . import _agents  # noqa: PLC0415 (agents load lazily)
        folder = _agents.train_agent(model, env, data, settings, bool(verbose), progress if callable(progress) else None)
        return Run(folder)
    stop_after = settings.pop("stop_after", None)
    if stop_after is not None and (not isinstance(stop_after, (int, np.integer)) or isinstance(stop_after, bool)):
        raise TypeError(f"stop_after: want an int, got {type(stop_after).__name__}")
    if config is not None and not isinstance(config, (str, os.PathLike)):
        raise TypeError(f"config: want the path of a JSON config file, got {type(config).__name__}")
    pairs = [("--model", model)] + _settings_pairs(settings)
    paths, bars = _data_args(data)
    res = _core.train(model, os.fspath(config) if config is not None else None, pairs, paths, bars, None,
                      int(stop_after or 0), bool(verbose), _progress(progress), _epoch_hook(on_epoch))
    return _finished(res)


def _doc() -> str:
    groups: Dict[str, List[str]] = {}
    args: Dict[str, str] = {}
    for flag, arg, text in FLAG_LINES:
        if flag in ("--model", "--data"):
            continue
        key = keyword(flag)
        args.setdefault(key, arg)
        text = re.sub(r"--([a-z][a-z0-9-]*)", lambda m: keyword("--" + m.group(1)), text)  # flags named in help
        if text and text not in groups.setdefault(key, []):
            groups[key].append(text)
    width = max(len(f"{k}={a}") for k, a in args.items()) + 2
    lines = [textwrap.fill("; ".join(groups[k]), 116, initial_indent=f"    {f'{k}={args[k]}':<{width}}",
                           subsequent_indent=" " * (4 + width)) for k in groups]
    return f"""Trains a forecaster as ``tickgrad train`` does and returns its Run (tickgrad.Run).

model: {model_list('"')} (a quantile forecaster of forward log returns 1..H bars ahead, or
a classifier with a labels target); "dqn" and "ppo" train agents (their settings: ``tickgrad train --model dqn
--help``; ``env=`` names the environment).
data: a DataFrame (as read_bars or synth give), a path (file, folder, glob) or a list of paths; paths are recorded
in config.json's "data" as the command's --data; a DataFrame's bars are handed to the library directly (then
config.json holds no data paths and resume needs ``data=`` again). None: the config file's "data".

Every setting of the command is a keyword by the same name (the flag without "--", "-" as "_"); lists are
comma-joined (``quantiles=[0.1, 0.5, 0.9]``), numbers keep full precision. The library checks each (ValueError
naming it); an unknown keyword is a TypeError. ``config=PATH`` loads a JSON config file as --config (keys as in
RUN/config.json); keywords override it. ``stop_after=N`` stops with a checkpoint after N epochs in all.

Settings:
{chr(10).join(lines)}
    stop_after=N{' ' * max(width - 12, 1)}stop with a checkpoint after N epochs in all (run control)

verbose: the plan and one line per epoch on sys.stdout as they happen (False: silent). progress: a progress bar
within each epoch on sys.stderr (None: when sys.stderr is a terminal).
on_epoch(metrics: dict): called after each epoch with its row (the keys and values of metrics.csv's columns);
returning a true value stops the run after that epoch with a checkpoint; an exception raised in it stops the run
and is raised again from train(). The GIL is released while the library trains.

Writes the run folder (``out``, default runs/<model>-<timestamp>): config.json, metrics.csv, weights, state and
best checkpoints, trainer.json, telemetry.csv, report.html. Returns Run(out) with ``result`` (a TrainResult).
"""


train.__doc__ = _doc()
