"""tickgrad: train and run market models on bars, from Python, over the compiled libtickgrad.

Data: read_bars, inspect, synth; ticks: read_ticks, make_bars; write_bars (CSV or Parquet).  Training: train, Run (resume, predictor).  Forecasts: Predictor.
Evaluation: backtest, walkforward, sweep.  Environments: tickgrad.envs (gymnasium).
See docs/PYTHON.md for the whole API.
"""
from ._core import (DeviceError, Error, FileError, FormatError, Interrupted, InvalidError, NumericError,
                    OutOfMemoryError, ShapeError, UnsupportedError)
from ._core import version as _library_version
from ._data import inspect, read_bars, synth
from ._ticks import make_bars, read_ticks, write_bars
from ._predict import Predictor
from ._backtest import Backtest, Sweep, WalkForward, backtest, sweep, walkforward
from ._run import Run, TrainResult
from ._train import train

__version__ = _library_version()

__all__ = [
    "read_bars", "inspect", "synth", "read_ticks", "make_bars", "write_bars",
    "train", "Run", "TrainResult",
    "Predictor", "backtest", "Backtest", "walkforward", "WalkForward", "sweep", "Sweep",
    "Error", "InvalidError", "ShapeError", "DeviceError", "OutOfMemoryError", "FileError", "FormatError",
    "UnsupportedError", "NumericError", "Interrupted",
]
