"""Predictor: bar by bar (push), over a series (predict) and the command's `tickgrad predict` give the same numbers."""
import shutil

import numpy as np
import pandas as pd
import pytest

import tickgrad
from conftest import run_cli

TRAIN = {
    "mlp": ["--model", "mlp", "--window", "8", "--hidden", "16", "--epochs", "2"],
    "tft": ["--model", "tft", "--hidden", "8", "--heads", "2", "--enc-len", "12", "--horizons", "3", "--epochs", "1"],
}


@pytest.fixture(scope="module")
def runs(cli, market, tmp_path_factory):
    made = {}

    def get(kind):
        if kind not in made:
            out = tmp_path_factory.mktemp("runs") / kind
            args = TRAIN["mlp"] + ["--target", "triple-barrier:1,1,8"] if kind == "classifier" else TRAIN[kind]
            run_cli(cli, "train", *args, "--data", market, "--seed", "3", "--out", out)
            made[kind] = out
        return made[kind]
    return get


def command_forecast(cli, run, data, tmp_path):
    out = tmp_path / "pred.csv"
    run_cli(cli, "predict", "--run", run, "--data", data, "--out", out)
    return pd.read_csv(out)


@pytest.mark.parametrize("kind", ["mlp", "tft"])
def test_push_predict_and_command_agree(cli, market, runs, tmp_path, kind):
    run = runs(kind)
    p = tickgrad.Predictor(run)
    info = p.info
    assert info["kind"] == kind and info["classes"] == [] and info["instruments"] == [0]
    want = command_forecast(cli, run, market, tmp_path)
    frame = p.predict(market)
    assert list(frame.columns) == list(want.columns[1:])  # the command's columns after ts
    assert len(frame) == len(want)
    np.testing.assert_allclose(frame["close"].to_numpy(), want["close"].to_numpy(), rtol=1e-11)  # printed %.12g
    cols = p.columns
    got = frame[cols].to_numpy()
    assert got.dtype == np.float32
    # the command prints float32 with 9 significant digits: parsed back to float32 it is the same number
    np.testing.assert_array_equal(got, want[cols].to_numpy().astype(np.float32))
    assert np.isnan(got[: info["first_bar"]]).all() and not np.isnan(got[info["first_bar"]:]).any()

    arr = p.predict(market, as_frame=False)
    assert arr.shape == (len(frame), info["horizons"], len(info["quantiles"]))
    np.testing.assert_array_equal(arr.reshape(len(arr), -1), got)

    bars = tickgrad.read_bars(market)
    p.reset()
    for i, row in enumerate(bars.itertuples()):
        f = p.push(row._asdict() | {"ts": row.Index})
        if i < info["first_bar"]:
            assert f is None
        else:
            assert f.shape == (info["horizons"], len(info["quantiles"]))
            np.testing.assert_array_equal(f.reshape(-1), got[i])


def root(a):
    """The object an array's memory belongs to, through its chain of views."""
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a.obj if isinstance(a, memoryview) else a


def test_forecasts_view_the_library_block(market, runs):
    p = tickgrad.Predictor(runs("mlp"))
    frame = p.predict(market)
    arr = p.predict(market, as_frame=False)
    assert type(root(arr)).__name__ == "Array"  # the block the library filled, not a copy
    for col in p.columns:
        assert type(root(frame[col].to_numpy())).__name__ == "Array", col


def test_classifier_gives_class_probabilities(cli, market, runs, tmp_path):
    run = runs("classifier")
    p = tickgrad.Predictor(run)
    assert p.info["classes"] == ["down", "time", "up"] and p.info["horizons"] == 0
    frame = p.predict(market)
    want = command_forecast(cli, run, market, tmp_path)
    assert list(frame.columns) == ["instrument", "close", "p_down", "p_time", "p_up"] == list(want.columns[1:])
    probs = frame[["p_down", "p_time", "p_up"]].to_numpy()
    ready = ~np.isnan(probs).any(axis=1)
    assert ready.sum() == len(frame) - p.info["first_bar"]
    np.testing.assert_allclose(probs[ready].sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(probs, want[["p_down", "p_time", "p_up"]].to_numpy().astype(np.float32))
    assert p.predict(market, as_frame=False).shape == (len(frame), 3)


def test_bad_bars_and_runs(market, runs, tmp_path):
    p = tickgrad.Predictor(runs("mlp"))
    bar = {"ts": pd.Timestamp("2024-01-02 10:00", tz="UTC"), "open": 100.0, "high": 101.0, "low": 99.0,
           "close": 100.5, "volume": 10.0}
    with pytest.raises(tickgrad.InvalidError, match="instrument 7 is not one"):
        p.push(bar | {"instrument": 7})
    assert p.push(bar) is None
    with pytest.raises(ValueError, match="earlier than its previous bar"):
        p.push(bar | {"ts": bar["ts"] - pd.Timedelta("1min")})
    with pytest.raises(ValueError, match="'close'"):
        p.push({k: v for k, v in bar.items() if k != "close"})
    missing = tmp_path / "no-such-run"
    with pytest.raises(tickgrad.FileError, match=str(missing)):
        tickgrad.Predictor(missing)
    with pytest.raises(ValueError, match="weights"):
        tickgrad.Predictor(runs("mlp"), weights="worst")
    with pytest.raises(TypeError, match="run"):
        tickgrad.Predictor(42)


def test_nan_weights_are_refused(runs, tmp_path):
    run = tmp_path / "nan"
    shutil.copytree(runs("mlp"), run)
    data = bytearray((run / "best.safetensors").read_bytes())
    start = 8 + int.from_bytes(data[:8], "little")
    data[start:start + 4] = np.array([np.nan], dtype="<f4").tobytes()  # the first value of the data section
    (run / "best.safetensors").write_bytes(bytes(data))
    with pytest.raises(tickgrad.NumericError, match=r"best.safetensors: tensor '.*' holds NaN at index 0"):
        tickgrad.Run(run).predictor()


def test_run_object_with_a_path(runs):
    class Run:
        path = runs("mlp")
    assert tickgrad.Predictor(Run()).info["kind"] == "mlp"
