"""Training settings given as Python keywords, turned into the command's flags: one place for train, resume,
walkforward and sweep.

A setting is named as the command's flag without its dashes, "-" written "_": ``lr=1e-3`` is ``--lr 0.001``,
``hidden=16`` is ``--hidden 16`` (tft.hidden or mlp.hidden by the model, as the command reads it), ``train_frac=0.6``
is ``--train-frac 0.6``. The names come from the library's settings table itself (tg_train_setting_get, one row per
setting with its flag, type, range, models, help and default: _core.train_settings); the C side applies each pair
with tg_train_config_set_flag, the path `tickgrad train` takes, so ranges and messages are the library's.
"""
from __future__ import annotations

import difflib
import numbers
import os
from typing import Any, Dict, Iterable, List, Mapping, Tuple

import numpy as np
import pandas as pd

from . import _core


ROWS: List[Dict[str, Any]] = _core.train_settings()
"""The library's training settings table (tg_train_setting_get), a dict per row in --help's order: key, flag, type,
arg, lo, hi, lo_open, hi_open, increasing, min_n, max_n, choices, models (() for every model), resumable, help,
default."""
MODELS: Tuple[str, ...] = _core.model_names()


def model_list(quote: str = "") -> str:
    """The model kinds as prose, "tft, mamba2, mlp or transformer" (each in quote)."""
    names = [f"{quote}{m}{quote}" for m in MODELS]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def _flag_lines() -> List[Tuple[str, str, str]]:
    """(flag, argument, help) of every setting as `tickgrad train --help` lists them: the rows of every model, then
    each model's own (a row's help starts "NAME: ", the model's name)."""
    out = [(r["flag"], r["arg"], r["help"]) for r in ROWS if not r["models"]]
    for name in MODELS:
        for r in ROWS:
            if name in r["models"]:
                text = r["help"]
                text = text if text.startswith(name + ": ") else f"{name}: {text}"
                out.append((r["flag"], r["arg"], text))
    return out


def keyword(flag: str) -> str:
    """"--train-frac" -> "train_frac"."""
    return flag[2:].replace("-", "_")


FLAG_LINES = _flag_lines()
# keyword -> flag, for every setting flag but --model and --data (parameters of their own)
SETTINGS: Dict[str, str] = {keyword(f): f for f, _, _ in FLAG_LINES if f not in ("--model", "--data")}


def flag_text(key: str, value: Any) -> str:
    """A Python value as the command's flag text: lists comma-joined, bools 1/0, numbers at full precision."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, (list, tuple, np.ndarray, pd.Series)):
        return ",".join(flag_text(key, v) for v in value)
    raise TypeError(f"{key}: want a number, a str or a list of them, got {type(value).__name__}")


def unknown(key: str, caller: str, others: Iterable[str] = ()) -> TypeError:
    """The TypeError for a keyword that is no setting, with the closest names."""
    close = difflib.get_close_matches(key, list(SETTINGS) + list(others), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else "; help(tickgrad.train) lists them"
    return TypeError(f"{caller}() got an unknown setting {key!r}{hint}")


def settings_pairs(settings: Mapping[str, Any], caller: str = "train", others: Iterable[str] = ()) \
        -> List[Tuple[str, str]]:
    """(flag, text) of each keyword setting, in the order given; TypeError for an unknown one. None is the default."""
    pairs = []
    for key, value in settings.items():
        if key not in SETTINGS:
            raise unknown(key, caller, others)
        if value is not None:
            pairs.append((SETTINGS[key], flag_text(key, value)))
    return pairs
