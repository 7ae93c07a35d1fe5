"""tickgrad: train and run market models on bars, from Python, over the compiled libtickgrad.

Data: read_bars, inspect.  Training: train, Run.  See docs/PYTHON.md for the whole API.
"""
from ._core import (DeviceError, Error, FileError, FormatError, InvalidError, NumericError, OutOfMemoryError,
                    ShapeError, UnsupportedError)
from ._core import version as _library_version
from ._data import inspect, read_bars, synth
from ._run import Run, TrainResult
from ._train import train

__version__ = _library_version()

__all__ = [
    "read_bars", "inspect", "synth",
    "train", "Run", "TrainResult",
    "Error", "InvalidError", "ShapeError", "DeviceError", "OutOfMemoryError", "FileError", "FormatError",
    "UnsupportedError", "NumericError",
]
