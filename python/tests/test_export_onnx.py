"""ONNX export (tickgrad export, Run.export_onnx), checked by the real runtime: onnx.checker passes on every file and
ONNX Runtime's outputs equal tickgrad's own (the predictor's forecasts, the policies' network outputs) at batch sizes
other than the ones the runs trained with. Skips where onnx or onnxruntime is not installed."""
import fcntl
import json
import shutil

import numpy as np
import pytest

import tickgrad
from conftest import run_cli

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

# Tiny models, one epoch on the synthetic market (batch 64, the trainer's default).
FORECASTERS = {
    "mlp": ["--window", "8", "--hidden", "16"],
    "transformer": ["--d-model", "16", "--heads", "2", "--layers", "1", "--seq-len", "16"],
    "patchtst": ["--d-model", "16", "--heads", "2", "--layers", "1", "--seq-len", "16", "--patch-len", "4",
                 "--stride", "4"],
    "tft": ["--hidden", "8", "--heads", "2", "--enc-len", "12"],
    "mamba2": ["--d-model", "16", "--layers", "1", "--d-state", "8", "--chunk", "8", "--seq-len", "16"],
}
# Worst difference allowed, relative to the largest output of the kind (every kind, the TFT's unrolled LSTM and
# Mamba-2's scan included; docs/EXPORT.md)
RTOL = 1e-5


@pytest.fixture(scope="module")
def market_cat(market, tmp_path_factory):
    """The market with a category column (three sessions in turn), which a cat: input embeds."""
    import pandas as pd
    frame = pd.read_csv(market)
    frame["session"] = [("am", "mid", "pm")[(i // 7) % 3] for i in range(len(frame))]
    path = tmp_path_factory.mktemp("market_cat") / "synth_cat.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def runs(cli, market, market_cat, tmp_path_factory):
    made = {}

    def get(kind):
        if kind not in made:
            out = tmp_path_factory.mktemp("runs") / kind
            if kind in FORECASTERS:
                args = ["--model", kind, *FORECASTERS[kind], "--epochs", "1", "--data", market]
            elif kind == "cat":  # the mlp with a category input (its ids index an embedding table)
                args = ["--model", "mlp", *FORECASTERS["mlp"], "--features", "logret,range,vol:10,cat:session",
                        "--epochs", "1", "--data", market_cat]
            elif kind == "tft-wide":  # wide enough that training groups its variable selection by the batch
                args = ["--model", "tft", "--hidden", "48", "--heads", "2", "--enc-len", "64", "--epochs", "1",
                        "--data", market]
            elif kind == "transformer-long":  # a window of 64: its attention runs as the fused op (tr_layers.c)
                args = ["--model", "transformer", "--d-model", "16", "--heads", "2", "--layers", "2", "--seq-len", "64",
                        "--epochs", "1", "--data", market]
            elif kind == "classifier":  # the mlp predicting triple-barrier classes
                args = ["--model", "mlp", *FORECASTERS["mlp"], "--target", "triple-barrier:1,1,8", "--epochs", "1",
                        "--data", market]
            elif kind == "dqn-trading":
                args = ["--model", "dqn", "--env", "trading", "--data", market, "--window", "8", "--episode-len", "64",
                        "--copy-windows", "--total-timesteps", "600", "--learning-starts", "200"]
            else:  # dqn, ppo on CartPole
                args = ["--model", kind, "--total-timesteps", "1024", *(["--learning-starts", "200"] if kind == "dqn" else [])]
            run_cli(cli, "--threads", "1", "train", *args, "--seed", "3", "--out", out)
            made[kind] = out
        return made[kind]
    return get


def worst(got, want):
    """The largest difference relative to the largest output (quantiles near 0 make an element's own ratio meaningless)."""
    return float(np.abs(got.astype(np.float64) - want).max() / np.abs(want).max())


def checked_session(path):
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version >= 17
    return model, ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def predictor_windows(run, market):
    """Every forecast the predictor gives over the market, and the inputs of each: the raw feature window [window, F],
    and for the tft the decoder rows and the instrument's index."""
    p = tickgrad.Predictor(run)
    L = p.info["window"]
    rows, feeds, want = [], {"features": [], "future": [], "instrument": []}, []
    for row in tickgrad.read_bars(market).itertuples():
        f = p.push(row._asdict() | {"ts": row.Index})
        raw = p.raw_features()
        if raw is not None:
            rows.append(raw)
        if f is not None:
            feeds["features"].append(np.stack(rows[-L:]))
            if p.future() is not None:
                feeds["future"].append(p.future())
                feeds["instrument"].append(0)  # the market's one instrument, index 0
            want.append(f)
    return {k: np.array(v, dtype=np.int64 if k == "instrument" else np.float32) for k, v in feeds.items() if v}, \
        np.stack(want)


def mamba2_windows(run, market, seq_len, count):
    """Mamba-2's predictor runs recurrently from an instrument's first valid bar, so its forecast equals the window
    model's only over the first seq_len rows: each of count windows starts the predictor afresh one bar later."""
    p = tickgrad.Predictor(run)
    bars = list(tickgrad.read_bars(market).itertuples())
    windows, want = [], []
    for start in range(count):
        p.reset()
        rows = []
        for row in bars[start:]:
            f = p.push(row._asdict() | {"ts": row.Index})
            if p.raw_features() is not None:
                rows.append(p.raw_features())
            if len(rows) == seq_len:
                windows.append(np.stack(rows))
                want.append(f)
                break
    return {"features": np.stack(windows)}, np.stack(want)


@pytest.mark.parametrize("kind", ["mlp", "transformer", "transformer-long", "patchtst", "tft", "tft-wide", "mamba2",
                                  "classifier", "cat"])
def test_forecaster_matches_the_predictor(runs, market, market_cat, tmp_path, kind):
    run = tickgrad.Run(runs(kind))
    path = run.export_onnx(tmp_path / f"{kind}.onnx")
    model, sess = checked_session(path)
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta["tickgrad.kind"] == {"classifier": "mlp", "cat": "mlp", "tft-wide": "tft",
                                     "transformer-long": "transformer"}.get(kind, kind)
    assert "inside the graph" in meta["tickgrad.normalisation"]
    assert meta["tickgrad.features"].split(",") == run.inference["features"]
    out = "probabilities" if kind == "classifier" else "quantiles"
    assert [d.dim_param for d in model.graph.input[0].type.tensor_type.shape.dim][0] == "batch"
    if kind == "mamba2":
        feeds, want = mamba2_windows(run.path, market, int(meta["tickgrad.window"]), 80)
    else:
        feeds, want = predictor_windows(run.path, market_cat if kind == "cat" else market)
    assert len(want) > 64  # more than the batch the run trained with
    got = sess.run([out], feeds)[0]
    assert got.shape == want.shape
    one = np.concatenate([sess.run([out], {k: v[i:i + 1] for k, v in feeds.items()})[0] for i in range(5)])
    w = max(worst(got, want), worst(one, want[:5]))
    print(f"\nonnx {kind}: {len(want)} windows, worst difference {w:.3g} of the largest {'probability' if kind == 'classifier' else 'quantile'}")
    assert w <= RTOL


def test_cli_export_equals_python(cli, runs, tmp_path):
    run = runs("mlp")
    run_cli(cli, "export", "--run", run, "--format", "onnx", "--out", tmp_path / "cli.onnx")
    tickgrad.Run(run).export_onnx(tmp_path / "py.onnx")
    assert (tmp_path / "cli.onnx").read_bytes() == (tmp_path / "py.onnx").read_bytes()


@pytest.mark.parametrize("kind", ["dqn", "ppo", "dqn-trading"])
def test_policy_matches_the_network(runs, tmp_path, kind):
    run = runs(kind)
    model_kind = kind.split("-")[0]
    path = tickgrad.Run(run).export_onnx(tmp_path / f"{kind}.onnx")
    model, sess = checked_session(path)
    env = json.loads((run / "config.json").read_text())["env"]
    n, obs_dim, A = 300, env["obs_dim"], env["n_actions"]
    obs = np.random.default_rng(7).normal(size=(n, obs_dim)).astype(np.float32)
    values, value = tickgrad._core.policy_values(model_kind, str(run), obs.tobytes(), n, obs_dim, A)
    want = np.frombuffer(values, dtype=np.float32).reshape(n, A)
    names = ["q_values"] if model_kind == "dqn" else ["logits", "value"]
    got = sess.run(names, {"obs": obs})
    w = worst(got[0], want)
    if model_kind == "ppo":
        w = max(w, worst(got[1].reshape(-1), np.frombuffer(value, dtype=np.float32)))
    assert (got[0].argmax(axis=1) == want.argmax(axis=1)).mean() > 0.99  # the greedy actions (ties aside)
    print(f"\nonnx {kind}: batch {n}, worst difference {w:.3g} of the largest output")
    assert w <= RTOL


def test_bad_inputs_write_nothing(cli, runs, tmp_path):
    run = runs("mlp")
    out = tmp_path / "m.onnx"
    out.write_bytes(b"kept")  # an older file at the path survives every failure
    lock = open(run / ".lock", "a")
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a training process holds it while it writes the run
    try:
        with pytest.raises(tickgrad.InvalidError, match="in use"):
            tickgrad.Run(run).export_onnx(out)
    finally:
        lock.close()
    nan = tmp_path / "nan"
    shutil.copytree(run, nan)
    data = bytearray((nan / "best.safetensors").read_bytes())
    start = 8 + int.from_bytes(data[:8], "little")
    data[start:start + 4] = np.array([np.nan], dtype="<f4").tobytes()
    (nan / "best.safetensors").write_bytes(bytes(data))
    with pytest.raises(tickgrad.NumericError, match=r"best.safetensors: tensor '.*' holds NaN at index 0"):
        tickgrad.Run(nan).export_onnx(out)
    with pytest.raises(tickgrad.FileError, match="no-such-folder"):
        tickgrad.Run(run).export_onnx(tmp_path / "no-such-folder" / "m.onnx")
    with pytest.raises(tickgrad.InvalidError, match="unknown format 'tflite'"):
        tickgrad._core.export_run(str(run), "tflite", str(out), "best")
    import subprocess
    p = subprocess.run([str(cli), "export", "--run", str(run), "--format", "tflite", "--out", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "unknown format 'tflite' (known: onnx)" in p.stderr
    assert out.read_bytes() == b"kept"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["m.onnx", "nan"]  # no temporary left behind
