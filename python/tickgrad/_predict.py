"""A trained forecaster run's forecasts: bar by bar (push) or over a whole series (predict), over tg_predictor."""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Union

import numpy as np
import pandas as pd

from . import _core
from ._data import BarsLike, to_bars

RunLike = Union[str, "os.PathLike[str]", Any]

_PRICE_FIELDS = ("open", "high", "low", "close")


def run_path(run: RunLike, arg: str = "run") -> str:
    """The folder of a run given as a path (str / PathLike) or as an object with a ``.path`` (a Run)."""
    if isinstance(run, (str, os.PathLike)):
        return os.fspath(run)
    path = getattr(run, "path", None)
    if isinstance(path, (str, os.PathLike)):
        return os.fspath(path)
    raise TypeError(f"{arg}: want a run folder (str or PathLike) or a Run, got {type(run).__name__}")


def _check_weights(weights: str) -> str:
    if weights not in ("best", "last"):
        raise ValueError(f"weights: want 'best' or 'last', got {weights!r}")
    return weights


def forecast_columns(info: Mapping[str, Any]) -> List[str]:
    """The forecast columns `tickgrad predict` writes: p_<class> for a classifier, else h<H>_q<q> per horizon."""
    if info["classes"]:
        return [f"p_{c}" for c in info["classes"]]
    return [f"h{h + 1}_q{q:g}" for h in range(info["horizons"]) for q in info["quantiles"]]


def _time_ns(ts: Any) -> int:
    if isinstance(ts, (int, np.integer)) and not isinstance(ts, bool):
        return int(ts)
    try:
        t = pd.Timestamp(ts)
    except (ValueError, TypeError) as e:
        raise ValueError(f"bar: ts {ts!r} is not a time ({e})") from None
    if t is pd.NaT:
        raise ValueError("bar: ts is missing (NaT)")
    return (t.tz_localize("UTC") if t.tz is None else t.tz_convert("UTC")).value


def _bar_get(bar: Any, key: str) -> Any:
    """bar[key] for a mapping / Series, getattr for a namedtuple or object; KeyError when it has none."""
    if isinstance(bar, Mapping) or isinstance(bar, pd.Series):
        if key in bar:
            return bar[key]
        raise KeyError(key)
    if hasattr(bar, key):
        return getattr(bar, key)
    raise KeyError(key)


class Predictor:
    """A trained forecaster run (any model kind) opened for live-style prediction (tg_predictor).

    ``run``: the run folder (str / PathLike) or a Run; ``weights``: "best" (the best validation epoch,
    RUN/best.safetensors) or "last" (RUN/weights.safetensors). The model runs on the host CPU in the run's precision.

    ``push(bar)`` takes bars one at a time (each instrument's in time order; instruments may interleave) and returns
    each bar's forecast once that instrument is warm; ``predict(data)`` runs a whole series at once, as
    ``tickgrad predict --data`` does. ``info`` describes the run. Not thread-safe: one Predictor per thread.
    """

    def __init__(self, run: RunLike, weights: str = "best") -> None:
        self._path = run_path(run)
        self._p = _core.Predictor(self._path, _check_weights(weights))
        self._info: Dict[str, Any] = self._p.info()
        self._columns = forecast_columns(self._info)
        n_num = self._info["n_num_inputs"]
        self._num_inputs = self._info["inputs"][:n_num]
        self._cat_inputs = self._info["inputs"][n_num:]
        self._out_len = len(self._columns)

    @property
    def path(self) -> str:
        """The run folder."""
        return self._path

    @property
    def info(self) -> Dict[str, Any]:
        """The run as the predictor sees it: kind (its model, "tft", "mlp", ...), horizons and quantiles
        (a quantile forecaster; 0 and [] for a classifier), classes (a classifier's names, in the order of its
        probabilities), n_features, warmup (bars before the features are valid), window (feature rows a forecast
        reads), first_bar (0-based bar of an instrument with the first forecast), bar_ns (the training data's median
        bar interval), precision, instruments (the ids it was trained on), inputs (names of the extra inputs a bar
        brings: the numbers first, n_num_inputs of them, then category names) and run (the folder)."""
        return dict(self._info)

    @property
    def columns(self) -> List[str]:
        """The forecast columns, as `tickgrad predict` names them (h1_q0.1, ... or p_<class>)."""
        return list(self._columns)

    def push(self, bar: Any) -> Optional[np.ndarray]:
        """Takes the next bar; returns its forecast, or None while its instrument warms up.

        bar: a mapping, a pandas Series (a DataFrame row; its ``name`` is the time when it has no ``ts``) or a
        namedtuple / object with attributes: ts (a Timestamp, datetime, date string or int ns UTC; naive times are
        UTC), open, high, low, close, volume (NaN when absent), instrument (an id the run was trained on; default 0)
        and the run's extra inputs (``info["inputs"]``) by name (a missing one is NaN / an unseen name).

        Returns a new float32 array: [horizons, n_quantiles] quantiles of the forward log return 1..H bars ahead, or
        a classifier's class probabilities [n_classes]. A bar the library refuses (an unknown instrument, a time
        before the instrument's last bar, a price that is not finite and positive) raises tickgrad.InvalidError /
        NumericError and is not taken. A forecast is never NaN: a bar whose features or forecast are not finite (a
        price so extreme that a feature overflows) raises NumericError naming the bar; that bar has been taken.
        """
        try:
            ts = _bar_get(bar, "ts")
        except KeyError:
            name = getattr(bar, "name", None) if isinstance(bar, pd.Series) else None
            if name is None:
                raise ValueError("bar: no 'ts' (the bar's time)") from None
            ts = name
        prices = []
        for key in _PRICE_FIELDS:
            try:
                prices.append(float(_bar_get(bar, key)))
            except KeyError:
                raise ValueError(f"bar: no '{key}'") from None
            except (TypeError, ValueError):
                raise ValueError(f"bar: '{key}' is not a number") from None
        try:
            volume = _bar_get(bar, "volume")
            volume = float("nan") if volume is None else float(volume)
        except KeyError:
            volume = float("nan")
        try:
            inst = _bar_get(bar, "instrument")
        except KeyError:
            inst = 0
        if not isinstance(inst, (int, np.integer)) or isinstance(inst, bool) or inst < 0:
            raise ValueError(f"bar: instrument {inst!r} is not a uint32 id")
        numbers = []
        for key in self._num_inputs:
            try:
                v = _bar_get(bar, key)
            except KeyError:
                v = None
            numbers.append(None if v is None or (isinstance(v, float) and np.isnan(v)) else float(v))
        names = []
        for key in self._cat_inputs:
            try:
                v = _bar_get(bar, key)
            except KeyError:
                v = None
            names.append(None if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v))
        out = np.empty(self._out_len, dtype=np.float32)
        ready = self._p.push(_time_ns(ts), int(inst), *prices, volume, numbers, names, out)
        if not ready:
            return None
        if self._info["classes"]:
            return out
        return out.reshape(self._info["horizons"], len(self._info["quantiles"]))

    def features(self) -> Optional[np.ndarray]:
        """The normalised feature row [n_features] float32 the model read for the last pushed bar (a copy), or None
        when that push made none (warm-up). A window of an instrument's last ``info["window"]`` rows is what the
        models without a recurrent or split predictor read (tg_predictor_features)."""
        raw = self._p.features()
        return None if raw is None else np.frombuffer(raw, dtype=np.float32).copy()

    def raw_features(self) -> Optional[np.ndarray]:
        """The same row before normalisation [n_features] float32 (a copy), or None: the values a window of an
        exported model (Run.export_onnx, docs/EXPORT.md) takes, oldest bar first (tg_predictor_raw_features)."""
        raw = self._p.raw_features()
        return None if raw is None else np.frombuffer(raw, dtype=np.float32).copy()

    def future(self) -> Optional[np.ndarray]:
        """A model with known-future inputs (the tft): the decoder rows [horizons, n_future] float32 of the last
        forecast's window (the next bars' calendar, then known: inputs normalised), a copy; None otherwise. With the
        window of raw_features() rows and the instrument's index, the inputs of an exported tft (docs/EXPORT.md)."""
        raw = self._p.future()
        return None if raw is None else np.frombuffer(raw, dtype=np.float32).reshape(self._info["horizons"], -1).copy()

    def reset(self) -> None:
        """Forgets every bar: the next push starts each instrument afresh."""
        self._p.reset()

    def predict(self, data: BarsLike, as_frame: bool = True, **reader_options: Any) -> Union[pd.DataFrame, np.ndarray]:
        """Forecasts every bar of data, in order, from a fresh state (what ``tickgrad predict --data`` writes).

        data: a DataFrame (as read_bars returns) or a path / paths read with reader_options (columns, tz,
        price_scale, nulls). A lead input "NAME@+h" that the data lacks as a column is column NAME h bars later of
        the same instrument, as the command does. The predictor is reset first and holds the last bar's state after.

        as_frame=True: a DataFrame indexed by the bars' times (UTC), columns instrument and close (as the command
        writes them) then the forecast columns (h1_q0.1, ... or p_<class>), NaN while an instrument warms up.
        as_frame=False: the float32 ndarray [n, horizons, n_quantiles] (a classifier: [n, n_classes]), NaN rows in
        warm-up.

        Copies: none of the forecasts. The library fills one float32 block it allocates, the GIL released for the
        whole loop; the ndarray views it, and so do the DataFrame's forecast columns (one float32 block). The index
        and the instrument and close columns are copies of the bars' (small beside the forecasts).
        """
        bars = to_bars(data, **reader_options)
        pred, _ready = self._p.predict(bars)
        values = np.asarray(pred)  # [n, out_len], a view of the library's block
        if not as_frame:
            if self._info["classes"]:
                return values
            return values.reshape(len(values), self._info["horizons"], len(self._info["quantiles"]))
        frame = pd.DataFrame(values, columns=self._columns, copy=False)
        index = pd.DatetimeIndex(np.asarray(bars.field("ts")).view("datetime64[ns]"), name="ts").tz_localize("UTC")
        frame.index = index
        inst = bars.field("instrument")
        frame.insert(0, "instrument", np.zeros(len(frame), np.uint32) if inst is None else np.array(inst))
        frame.insert(1, "close", np.array(bars.field("close")))
        return frame

    def close(self) -> None:
        """Frees the predictor now (it is freed when garbage-collected otherwise)."""
        self._p.close()

    def __repr__(self) -> str:
        i = self._info
        what = f"classes={i['classes']}" if i["classes"] else f"horizons={i['horizons']}, quantiles={i['quantiles']}"
        return f"Predictor({self._path!r}, kind={i['kind']!r}, {what})"


def read_inference(run: RunLike) -> Dict[str, Any]:
    """RUN/inference.json as a dict (feature names, normalisation, target scales, instruments)."""
    with open(os.path.join(run_path(run), "inference.json")) as f:
        return json.load(f)
