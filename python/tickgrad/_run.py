"""Run folders of `tickgrad train`: tickgrad.Run opens one (config, metrics, checkpoints, report) and resumes it."""
from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Union

import numpy as np
import pandas as pd

from . import _core

if TYPE_CHECKING:
    from ._predict import Predictor

PathLike = Union[str, "os.PathLike[str]"]
EpochCallback = Callable[[Dict[str, Any]], Any]

CHECKPOINTS = {"weights": "weights.safetensors", "state": "state.safetensors", "best": "best.safetensors",
               "trainer": "trainer.json"}


def _row(header: str, row: str) -> Dict[str, Any]:
    """One metrics.csv row (the library's header and row text) as a dict: epoch an int, the rest floats (NaN where
    the file's cell is empty)."""
    out: Dict[str, Any] = {}
    for key, text in zip(header.strip().split(","), row.strip().split(",")):
        out[key] = int(text) if key == "epoch" else (float(text) if text else math.nan)
    return out


def _epoch_hook(on_epoch: Optional[EpochCallback]) -> Optional[Callable[[str, str], Any]]:
    if on_epoch is None:
        return None
    if not callable(on_epoch):
        raise TypeError(f"on_epoch: want a callable taking the epoch's metrics dict, got {type(on_epoch).__name__}")
    return lambda header, row: on_epoch(_row(header, row))


def _progress(progress: Optional[bool]) -> bool:
    """None: a progress bar when sys.stderr is a terminal."""
    if progress is None:
        try:
            return bool(sys.stderr is not None and sys.stderr.isatty())
        except (AttributeError, ValueError):
            return False
    return bool(progress)


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """What a training call reports (tg_train_result): epochs completed in all (with those before a resume), the best
    validation epoch, whether early stopping ended the run, optimizer steps in all, the windows of the splits, and
    the last and the best epoch's metrics rows (dicts with metrics.csv's columns); interrupted: a stop (Ctrl-C,
    or stop_after_step) ended the run after a step, mid-epoch, with a checkpoint that resume continues."""
    epochs_run: int
    best_epoch: int
    stopped_early: bool
    steps: int
    train_windows: int
    val_windows: int
    last: Optional[Dict[str, Any]]
    best: Optional[Dict[str, Any]]
    interrupted: bool = False

    @classmethod
    def _of(cls, res: Dict[str, Any]) -> "TrainResult":
        rows = {k: (_row(*res[k]) if res[k] is not None else None) for k in ("last", "best")}
        return cls(res["epochs_run"], res["best_epoch"], bool(res["stopped_early"]), res["steps"],
                   res["train_windows"], res["val_windows"], rows["last"], rows["best"], bool(res["interrupted"]))


def interrupted(folder: str) -> BaseException:
    """tickgrad.Interrupted for a run that Ctrl-C stopped with a checkpoint; ``.run`` is its Run."""
    e = _core.Interrupted(f"stopped by Ctrl-C at the end of a step, with a checkpoint in {folder}; "
                          f"tickgrad.Run({folder!r}).resume() continues it")
    e.run = Run(folder)
    return e


def _finished(res: Dict[str, Any]) -> "Run":
    """The Run of a training call's result, or tickgrad.Interrupted raised when Ctrl-C stopped it."""
    if res["interrupted"] and res["ctrl_c"]:
        raise interrupted(res["out"])
    return Run(res["out"], _result=TrainResult._of(res))


class Run:
    """A training run's folder (what ``tickgrad train`` and ``tickgrad.train`` write).

    ``Run(path)`` opens an existing folder; FileError when it holds no config.json. Attributes: ``path``,
    ``model`` (the kind: "tft", "mlp", ..., "dqn", "ppo"), ``config`` (config.json as a dict), ``metrics``
    (metrics.csv as a DataFrame, indexed by epoch for forecasters), ``checkpoints`` (weights, state, best,
    trainer -> the paths that exist), ``report`` (report.html or None), ``inference`` (inference.json as a dict or
    None), ``result`` (a TrainResult when the Run came from train() or resume(), else None).
    """

    def __init__(self, path: PathLike, *, _result: Optional[TrainResult] = None) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path: want a run folder path, got {type(path).__name__}")
        self.path: str = os.fspath(path)
        cfg = os.path.join(self.path, "config.json")
        if not os.path.isfile(cfg):
            raise _core.FileError(f"{self.path}: not a run folder (no config.json)")
        with open(cfg, encoding="utf-8") as f:
            self.config: Dict[str, Any] = json.load(f)
        self.result: Optional[TrainResult] = _result

    def _file(self, name: str) -> str:
        return os.path.join(self.path, name)

    @property
    def model(self) -> Optional[str]:
        """The model kind: config.json's (a forecaster's: "tft", "mlp", ...), or env.json's ("dqn", "ppo")."""
        if self.is_agent:
            with open(self._file("env.json"), encoding="utf-8") as f:
                return json.load(f).get("model")
        return self.config.get("model")

    @property
    def is_agent(self) -> bool:
        """True for a DQN or PPO run (its folder holds env.json)."""
        return os.path.isfile(self._file("env.json"))

    @property
    def metrics(self) -> pd.DataFrame:
        """metrics.csv as written so far (a forecaster's indexed by epoch; an agent's as it is)."""
        path = self._file("metrics.csv")
        if not os.path.isfile(path):
            raise _core.FileError(f"{path}: no metrics yet")
        frame = pd.read_csv(path)
        if not self.is_agent and "epoch" in frame.columns:
            frame = frame.set_index("epoch")
        return frame

    @property
    def checkpoints(self) -> Dict[str, str]:
        """weights, state, best, trainer -> the paths of those that exist."""
        return {k: self._file(v) for k, v in CHECKPOINTS.items() if os.path.isfile(self._file(v))}

    @property
    def report(self) -> Optional[str]:
        """The path of report.html, or None when it is not written."""
        path = self._file("report.html")
        return path if os.path.isfile(path) else None

    @property
    def inference(self) -> Optional[Dict[str, Any]]:
        """inference.json (what predicting needs: features, scales, quantiles) as a dict; None when absent."""
        path = self._file("inference.json")
        if not os.path.isfile(path):
            return None
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    def weights(self, which: str = "best") -> Dict[str, np.ndarray]:
        """The parameters of a checkpoint by name, read by the library's safetensors reader: which "best"
        (best.safetensors, the best validation epoch) or "last" (weights.safetensors, the latest checkpoint).
        The arrays are read-only views of the file's bytes (f32; i32, i64; bf16 as raw uint16)."""
        files = {"best": "best.safetensors", "last": "weights.safetensors"}
        if which not in files:
            raise ValueError(f"which: want 'best' or 'last', got {which!r}")
        tensors = _core.read_safetensors(self._file(files[which]))
        return {name: np.asarray(a) for name, a in tensors.items()}

    def predictor(self, weights: str = "best") -> "Predictor":
        """This forecaster run opened for live bars (tickgrad.Predictor): push(bar) one at a time, or predict(data)
        over a series; weights "best" (best.safetensors) or "last" (weights.safetensors)."""
        from ._predict import Predictor  # noqa: PLC0415 (the modules import each other)
        return Predictor(self, weights=weights)

    def export_onnx(self, path: PathLike, *, weights: str = "best") -> str:
        """Writes this run's model as an ONNX file at path (``tickgrad export --format onnx``; docs/EXPORT.md) and
        returns the path. A forecaster maps raw feature windows "features" [batch, window, n_features] (the rows
        Predictor.raw_features gives, oldest first) to "quantiles" [batch, horizons, n_quantiles], the normalisation
        and target scales inside the graph; a DQN run maps "obs" [batch, obs_width] to "q_values", a PPO run to
        "logits" and "value". weights: a forecaster's "best" or "last". Written atomically: on an error (an op with no
        ONNX form, weights that are not finite, a run being written, a path that cannot be written) nothing is."""
        if weights not in ("best", "last"):
            raise ValueError(f"weights: want 'best' or 'last', got {weights!r}")
        out = os.fspath(path)
        _core.export_run(self.path, "onnx", out, "last" if weights == "last" else "best")
        return out

    def evaluate(self, data: Any = None, *, weights: str = "best", device: Optional[str] = None) -> Dict[str, Any]:
        """Scores this forecaster out of sample (``tickgrad evaluate``): every window of its train, val and test
        splits once through its ``weights`` ("best" or "last"), the data rebuilt as training built it. Writes
        RUN/evaluation.json and report.html and returns the file as a dict: "weights", "horizons", "quantiles" (a
        classifier: "classes") and "splits" {"train", "val", "test"}, each with "windows", "loss" (mean pinball in
        target-std units; on "val" with the best weights, the run's best validation loss), "zero_loss",
        "naive_loss", "pinball" [horizon][quantile], "qrisk", "zero_qrisk", "naive_qrisk" per quantile, "intervals"
        (coverage against nominal) and "below" (calibration; a classifier: log loss and accuracies). A run trained
        on a DataFrame takes the same bars again as ``data=`` (a DataFrame); one trained on files reads them again."""
        if weights not in ("best", "last"):
            raise ValueError(f"weights: want 'best' or 'last', got {weights!r}")
        if self.is_agent:
            raise ValueError(f"{self.path} is a {self.model} run: evaluate scores forecasters (an agent's greedy "
                             "evaluation is in its metrics)")
        bars = self._bars_again(data, "evaluate")
        _core.evaluate(self.path, bars, weights == "last", device)
        with open(self._file("evaluation.json"), encoding="utf-8") as f:
            return json.load(f)

    def _bars_again(self, data: Any, what: str) -> Any:
        """The bars for a call that rebuilds this run's data: None (read its data paths) or data as Bars."""
        from ._train import _data_args  # noqa: PLC0415 (the modules import each other)
        paths = self.config.get("data") or []
        if data is None and not paths:
            raise ValueError(f"{what}: {self.path} was trained on a DataFrame (its config.json has no data paths): "
                             f"give the same bars again, {what}(data=frame)")
        if data is not None and paths:
            raise ValueError(f"data: {self.path} reads its data paths from config.json ({', '.join(paths)}); data= is "
                             "only for runs trained on a DataFrame")
        if data is None:
            return None
        _, bars = _data_args(data)
        if bars is None:
            raise TypeError(f"data: {what} takes the bars as a DataFrame (the run's data paths are not recorded)")
        return bars

    def resume(self, data: Any = None, *, stop_after: Optional[int] = None, device: Optional[str] = None,
               threads: Optional[int] = None, on_epoch: Optional[EpochCallback] = None, verbose: bool = True,
               progress: Optional[bool] = None) -> "Run":
        """Continues this run exactly as if it had not stopped (``tickgrad train --resume PATH``): its config.json
        is the config; only ``device``, ``threads`` and ``stop_after`` (stop with a checkpoint after that many
        epochs in all) may change. A run trained on a DataFrame has no data paths in config.json: give the same
        bars again as ``data=`` (a DataFrame); a run trained on files reads them again and takes no ``data``.
        on_epoch, verbose and progress as in tickgrad.train. Returns the Run (its ``result`` filled)."""
        if stop_after is not None and (not isinstance(stop_after, (int, np.integer)) or isinstance(stop_after, bool)):
            raise TypeError(f"stop_after: want an int, got {type(stop_after).__name__}")
        if self.is_agent:
            if data is not None or on_epoch is not None:
                raise ValueError(f"{self.path} is a {self.model} run: resume takes no data or on_epoch")
            from . import _agents  # noqa: PLC0415 (agents load lazily)
            folder = _agents.resume_agent(self.path, stop_after, device, threads, verbose, progress if callable(progress) else None)
            return Run(folder)
        from ._train import _settings_pairs  # noqa: PLC0415 (the modules import each other)
        pairs = _settings_pairs({k: v for k, v in (("device", device), ("threads", threads)) if v is not None})
        bars = self._bars_again(data, "resume")
        res = _core.train(None, None, pairs, None, bars, self.path, int(stop_after or 0), bool(verbose),
                          _progress(progress), _epoch_hook(on_epoch))
        return _finished(res)

    def __repr__(self) -> str:
        epochs = 0
        path = self._file("metrics.csv")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                epochs = max(sum(1 for line in f if line.strip()) - 1, 0)
        extra = f", best_epoch={self.result.best_epoch}" if self.result else ""
        return f"Run({self.path!r}, model={self.model!r}, epochs={epochs}{extra})"

    def __fspath__(self) -> str:
        return self.path
