"""Training settings given as Python keyword arguments, turned into the command's flags (one place for every API).

A setting is named as the command's flag without its dashes, "-" written "_": ``lr=1e-3`` is ``--lr 0.001``,
``hidden=16`` is ``--hidden 16`` (tft.hidden or mlp.hidden by the model, as the command reads it), ``train_frac=0.6``
is ``--train-frac 0.6``. The C side applies each pair with tg_train_config_set_flag, the path `tickgrad train`
takes, so the names, ranges and messages are the library's.
"""
from __future__ import annotations

import math
from typing import Any, List, Mapping, Tuple

import numpy as np


def flag_name(key: str) -> str:
    """"train_frac" -> "--train-frac"."""
    return "--" + key.replace("_", "-")


def flag_value(key: str, value: Any) -> str:
    """A setting's value as the command's text: bools true/false, sequences joined by commas, numbers exactly."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(float(value)):
            raise ValueError(f"{key}: want a finite number, got {value!r}")
        return repr(float(value))
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        return ",".join(flag_value(key, v) for v in value)
    raise TypeError(f"{key}: want a number, a str, a bool or a list of them, got {type(value).__name__}")


def settings_to_flags(settings: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """[(flag, text)] for tg_train_config_set_flag; TypeError / ValueError naming a setting the text cannot be made
    of. Settings with the value None are left out (the default)."""
    pairs = []
    for key, value in settings.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"settings: want names, got {key!r}")
        if value is None:
            continue
        pairs.append((flag_name(key), flag_value(key, value)))
    return pairs
