"""tickgrad.train and tickgrad.Run: against `tickgrad train` on the same bars, callbacks, resume, the GIL, bad input."""
import json
import os
import threading
import time

import numpy as np
import pandas as pd
import pytest
from safetensors.numpy import load_file

import tickgrad
from conftest import run_cli

BARS = 1500
MLP = dict(model="mlp", hidden=8, window=8, epochs=2, threads=1, horizons=4)
TFT = dict(model="tft", hidden=8, heads=2, enc_len=16, epochs=2, threads=1, horizons=2, batch=16)


@pytest.fixture(scope="module")
def market(tmp_path_factory):
    """The same bars as a DataFrame and as the command's synth file."""
    path = tmp_path_factory.mktemp("data") / "m.csv"
    return tickgrad.synth(BARS, signal=0.3, seed=5), path


def cli_args(settings: dict) -> list:
    args = []
    for k, v in settings.items():
        v = ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)
        args += ["--" + k.replace("_", "-"), v]
    return args


def assert_same_weights(a, b):
    for name in ("weights.safetensors", "best.safetensors"):
        wa, wb = load_file(str(a / name)), load_file(str(b / name))
        assert sorted(wa) == sorted(wb), name
        for key in wa:
            assert wa[key].dtype == wb[key].dtype and wa[key].shape == wb[key].shape, key
            assert wa[key].tobytes() == wb[key].tobytes(), f"{name}: {key} differs"


LOSSES = ["train_loss", "val_loss", "val_qrisk50", "val_qrisk90", "naive_qrisk50", "naive_qrisk90", "lr", "grad_norm"]


def loss_columns(run_dir) -> pd.DataFrame:
    frame = pd.read_csv(run_dir / "metrics.csv")
    return frame[["epoch"] + [c for c in LOSSES if c in frame.columns]]


@pytest.mark.parametrize("settings", [MLP, TFT, dict(MLP, quantiles=[0.2, 0.5, 0.8], seed=9, lr=3e-3)],
                         ids=["mlp", "tft", "mlp-quantiles-seed"])
def test_frame_training_equals_the_command(cli, market, tmp_path, settings):
    df, path = market
    if not path.exists():
        run_cli(cli, "synth", "--bars", BARS, "--signal", "0.3", "--seed", "5", "--out", path)
    run_cli(cli, "train", "--data", path, "--out", tmp_path / "cli", *cli_args(settings))
    s = dict(settings)
    run = tickgrad.train(s.pop("model"), df, out=str(tmp_path / "py"), verbose=False, **s)
    assert run.path == str(tmp_path / "py") and run.result.epochs_run == settings["epochs"]
    assert_same_weights(tmp_path / "cli", tmp_path / "py")
    pd.testing.assert_frame_equal(loss_columns(tmp_path / "cli"), loss_columns(tmp_path / "py"))
    cfg_cli = json.loads((tmp_path / "cli" / "config.json").read_text())
    cfg_py = json.loads((tmp_path / "py" / "config.json").read_text())
    assert cfg_py["data"] == [] and cfg_cli["data"] == [str(path)]
    for cfg in (cfg_cli, cfg_py):
        cfg.pop("data"), cfg.pop("out"), cfg.pop("run_id")  # each run its own id
    assert cfg_py == cfg_cli


def test_data_path_is_recorded_as_the_command_does(cli, market, tmp_path):
    df, path = market
    if not path.exists():
        run_cli(cli, "synth", "--bars", BARS, "--signal", "0.3", "--seed", "5", "--out", path)
    s = dict(MLP, epochs=1)
    run = tickgrad.train(s.pop("model"), str(path), out=str(tmp_path / "p"), verbose=False, **s)
    assert run.config["data"] == [str(path)]
    assert json.loads((tmp_path / "p" / "config.json").read_text())["data"] == [str(path)]


def same_row(a: dict, b: dict) -> bool:
    return list(a) == list(b) and all(x == y or (np.isnan(x) and np.isnan(y)) for x, y in zip(a.values(), b.values()))


def small(tmp_path, name="r", **over):
    s = {**MLP, "epochs": 3, **over}
    return s.pop("model"), dict(out=str(tmp_path / name), verbose=False, **s)


def test_on_epoch_rows_equal_metrics_and_run_reopens(tmp_path):
    df = tickgrad.synth(BARS, seed=2)
    rows = []
    model, kw = small(tmp_path)
    run = tickgrad.train(model, df, on_epoch=rows.append, **kw)
    assert [r["epoch"] for r in rows] == [1, 2, 3]
    metrics = run.metrics
    assert list(rows[0]) == ["epoch"] + list(metrics.columns)
    for r in rows:
        got = pd.Series({k: v for k, v in r.items() if k != "epoch"}, dtype=float)
        want = metrics.loc[r["epoch"]].astype(float)
        pd.testing.assert_series_equal(got, want, check_names=False, check_exact=True)
    assert same_row(run.result.last, rows[-1]) and same_row(run.result.best, rows[run.result.best_epoch - 1])
    again = tickgrad.Run(tmp_path / "r")
    assert again.model == "mlp" and again.config == run.config and again.result is None
    pd.testing.assert_frame_equal(again.metrics, metrics)
    assert set(again.checkpoints) == {"weights", "state", "best", "trainer"}
    assert again.report and again.report.endswith("report.html")
    assert isinstance(again.inference, dict)
    w = again.weights("last")
    ref = load_file(str(tmp_path / "r" / "weights.safetensors"))
    assert sorted(w) == sorted(ref) and all(np.array_equal(w[k], ref[k]) for k in ref)
    assert "mlp" in repr(again) and "epochs=3" in repr(again)


def test_on_epoch_true_stops_and_exceptions_propagate(tmp_path):
    df = tickgrad.synth(BARS, seed=2)
    model, kw = small(tmp_path, "stop")
    run = tickgrad.train(model, df, on_epoch=lambda m: m["epoch"] == 1, **kw)
    assert run.result.epochs_run == 1 and len(run.metrics) == 1 and "weights" in run.checkpoints

    class Boom(Exception):
        pass

    def boom(m):
        raise Boom(f"epoch {m['epoch']}")

    model, kw = small(tmp_path, "boom")
    with pytest.raises(Boom, match="epoch 1"):
        tickgrad.train(model, df, on_epoch=boom, **kw)
    assert len(tickgrad.Run(tmp_path / "boom").metrics) == 1


def test_resume_after_stop_after_equals_an_uninterrupted_run(tmp_path):
    df = tickgrad.synth(BARS, seed=4)
    model, kw = small(tmp_path, "full")
    tickgrad.train(model, df, **kw)
    model, kw = small(tmp_path, "part")
    part = tickgrad.train(model, df, stop_after=1, **kw)
    assert part.result.epochs_run == 1
    with pytest.raises(ValueError, match=r"trained on a DataFrame .*resume\(data=frame\)"):
        part.resume()
    done = tickgrad.Run(part.path).resume(data=df, verbose=False)
    assert done.result.epochs_run == 3
    assert_same_weights(tmp_path / "full", tmp_path / "part")
    pd.testing.assert_frame_equal(loss_columns(tmp_path / "full"), loss_columns(tmp_path / "part"))


def test_resume_takes_only_device_threads_stop_after(tmp_path):
    df = tickgrad.synth(BARS, seed=4)
    model, kw = small(tmp_path, "r", epochs=2)
    run = tickgrad.train(model, df, stop_after=1, **kw)
    with pytest.raises(TypeError, match="lr"):
        run.resume(df, lr=0.1)  # not a parameter of resume
    with pytest.raises(TypeError, match="stop_after"):
        run.resume(df, stop_after="2")
    with pytest.raises(tickgrad.FileError, match="config.json"):
        tickgrad.Run(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="threads"):
        run.resume(df, threads=-3)  # the library validates the values that may change


def test_resume_of_a_file_run_takes_no_data(cli, market, tmp_path):
    df, path = market
    if not path.exists():
        run_cli(cli, "synth", "--bars", BARS, "--signal", "0.3", "--seed", "5", "--out", path)
    model, kw = small(tmp_path, "f", epochs=2)
    run = tickgrad.train(model, str(path), stop_after=1, **kw)
    with pytest.raises(ValueError, match="only for runs trained on a DataFrame"):
        run.resume(df)
    assert run.resume(verbose=False).result.epochs_run == 2


def test_the_gil_is_released_while_training(tmp_path):
    df = tickgrad.synth(30000, seed=1)
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        marks = []
        model, kw = small(tmp_path, epochs=10, hidden=32, patience=0)
        tickgrad.train(model, df, on_epoch=lambda m: marks.append((m["epoch"], len(ticks), time.perf_counter())), **kw)
        t1 = len(ticks)
    finally:
        stop.set()
        counter.join()
    # the counter advances during epochs 2..10, which run entirely in the library: a tick every few ms of them
    # (with the GIL held through an epoch it could not tick at all until the epoch's callback)
    ms = (marks[-1][2] - marks[0][2]) * 1000
    assert len(marks) == 10 and ms > 20 and marks[-1][1] - marks[0][1] > ms / 20, (marks, t1)


def test_verbose_lines_reach_sys_stdout(tmp_path, capsys):
    df = tickgrad.synth(BARS, seed=1)
    model, kw = small(tmp_path, epochs=2)
    kw["verbose"] = True
    tickgrad.train(model, df, progress=False, **kw)
    out = capsys.readouterr().out
    assert "training mlp" in out and "done: 2 epochs" in out
    model, kw = small(tmp_path, "quiet", epochs=1)
    tickgrad.train(model, df, progress=True, **kw)
    captured = capsys.readouterr()
    assert captured.out == "" and "epoch 1 [" in captured.err  # the progress bar goes to sys.stderr


def test_bad_input_names_itself(tmp_path):
    df = tickgrad.synth(500, seed=1)
    with pytest.raises(ValueError, match="model 'lstm'"):
        tickgrad.train("lstm", df, verbose=False, out=str(tmp_path / "a"))
    with pytest.raises(TypeError, match=r"'hiden'.*'hidden'"):
        tickgrad.train("mlp", df, hiden=8)
    with pytest.raises(ValueError, match=r"^lr: .*lr"):
        tickgrad.train("mlp", df, lr=-1.0, out=str(tmp_path / "b"))
    with pytest.raises(ValueError, match="quantiles"):
        tickgrad.train("mlp", df, quantiles=[0.9, 0.1], out=str(tmp_path / "c"))
    with pytest.raises(ValueError, match="heads"):
        tickgrad.train("mlp", df, heads=2, out=str(tmp_path / "d"))  # a tft / transformer setting
    with pytest.raises(TypeError, match="data"):
        tickgrad.train("mlp", 42)
    with pytest.raises(ValueError, match="close"):
        tickgrad.train("mlp", df.drop(columns=["close"]), out=str(tmp_path / "e"))
    with pytest.raises(ValueError, match="no data"):
        tickgrad.train("mlp", out=str(tmp_path / "f"))
    with pytest.raises(TypeError, match="epochs"):
        tickgrad.train("mlp", df, epochs=object())
    assert not (tmp_path / "b").exists()


def test_config_file_then_keywords_override(tmp_path):
    df = tickgrad.synth(BARS, seed=1)
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"model": "mlp", "epochs": 1, "mlp": {"hidden": 8}, "lr": 0.002}))
    run = tickgrad.train("mlp", df, config=str(cfg), lr=0.004, out=str(tmp_path / "r"), verbose=False, threads=1)
    assert run.config["epochs"] == 1 and run.config["mlp"]["hidden"] == 8 and run.config["lr"] == 0.004


def test_help_lists_every_setting():
    doc = tickgrad.train.__doc__
    for key in ("lr=", "epochs=", "hidden=", "d_model=", "heads=", "seq_len=", "quantiles=", "recompute=",
                "precision=", "stop_after=", "features=", "target="):
        assert key in doc, key
    assert "--" not in doc.split("Settings:")[1].split("verbose:")[0]


def test_agents_train_and_resume_through_train_and_run(tmp_path):
    small = dict(total_timesteps=1024, num_steps=64, hidden=[16, 16], verbose=False)
    whole = tickgrad.train("ppo", env="cartpole", out=str(tmp_path / "whole"), **small)
    assert whole.is_agent and whole.model == "ppo" and len(whole.metrics) > 0
    split = tickgrad.train("ppo", env="cartpole", out=str(tmp_path / "split"), stop_after=2, **small)
    assert split.metrics["iteration"].iloc[-1] == 2 and whole.metrics["iteration"].iloc[-1] == 4
    again = split.resume(verbose=False)
    assert again.path == split.path
    for name in ("weights.safetensors", "optim.safetensors"):
        assert (tmp_path / "whole" / name).read_bytes() == (tmp_path / "split" / name).read_bytes(), name
    with pytest.raises(TypeError, match="on_epoch"):
        tickgrad.train("dqn", env="cartpole", on_epoch=print, out=str(tmp_path / "dqn"))


def test_agent_on_a_dataframe_equals_the_agent_on_its_file(tmp_path):
    frame = tickgrad.synth(3000, seed=8, signal=0.3)
    path = tickgrad._data.write_bars_csv(frame, tmp_path / "bars.csv")
    pd.testing.assert_frame_equal(tickgrad.read_bars(path), frame, check_exact=True)
    small = dict(env="trading", window=8, total_timesteps=400, learning_starts=100, verbose=False)
    a = tickgrad.train("dqn", data=frame, out=str(tmp_path / "frame"), **small)
    b = tickgrad.train("dqn", data=path, out=str(tmp_path / "file"), **small)
    assert json.loads((tmp_path / "frame" / "env.json").read_text())["data"] == [str(tmp_path / "frame" / "bars.csv")]
    assert a.is_agent and b.is_agent and (tmp_path / "frame" / "weights.safetensors").read_bytes() == \
        (tmp_path / "file" / "weights.safetensors").read_bytes()


def test_run_predictor_is_the_runs_predictor(tmp_path, market):
    frame, _ = market
    run = tickgrad.train(data=frame, out=str(tmp_path / "run"), verbose=False, **MLP)
    a = run.predictor().predict(frame, as_frame=False)
    b = tickgrad.Predictor(run.path, weights="best").predict(frame, as_frame=False)
    assert a.shape == (len(frame), 4, 3) and np.array_equal(a, b, equal_nan=True)
    assert np.isfinite(a[-1]).all()


def test_a_run_folder_in_use_is_refused(tmp_path):
    df = tickgrad.synth(20000, seed=1)
    started, done = threading.Event(), []

    def first():
        run = tickgrad.train("mlp", df, out=str(tmp_path / "busy"), epochs=20, patience=0, hidden=32, verbose=False,
                             on_epoch=lambda m: started.set())
        done.append(run)

    t = threading.Thread(target=first)
    t.start()
    try:
        assert started.wait(120)
        with pytest.raises(tickgrad.InvalidError, match=rf"busy is in use by process {os.getpid()} \(train\)"):
            tickgrad.train("mlp", df, out=str(tmp_path / "busy"), epochs=1, verbose=False)
    finally:
        t.join()
    assert done and done[0].result.epochs_run == 20 and len(done[0].metrics) == 20


def test_evaluate_scores_every_split_as_the_command_does(cli, market, tmp_path):
    df, path = market
    if not path.exists():
        run_cli(cli, "synth", "--bars", BARS, "--signal", "0.3", "--seed", "5", "--out", path)
    model, kw = small(tmp_path, "e")
    run = tickgrad.train(model, df, **kw)
    with pytest.raises(ValueError, match=r"evaluate\(data=frame\)"):
        run.evaluate()
    ev = run.evaluate(df)
    assert ev["weights"] == "best" and set(ev["splits"]) == {"train", "val", "test"}
    val = ev["splits"]["val"]
    # the trainer's validation pass (bitwise in tests/test_evaluate.c; the rows here carry 8 digits)
    assert val["loss"] == pytest.approx(run.result.best["val_loss"], rel=1e-7)
    assert val["windows"] > 0 and ev["splits"]["test"]["windows"] > 0
    assert len(val["pinball"]) == MLP["horizons"] and len(val["below"]) == 3
    assert val["intervals"][0]["nominal"] == pytest.approx(0.8)
    assert ev["splits"]["test"]["zero_qrisk"][1] == pytest.approx(1.0)
    last = run.evaluate(df, weights="last")
    assert last["weights"] == "last"
    assert last["splits"]["val"]["loss"] == pytest.approx(run.result.last["val_loss"], rel=1e-7)
    # a run trained on the command's file: the command's evaluation.json and the package's are the same text
    fr = tickgrad.train(model, str(path), **{**kw, "out": str(tmp_path / "ef")})
    want = fr.evaluate()
    run_cli(cli, "--threads", "1", "evaluate", "--run", tmp_path / "ef")
    with open(tmp_path / "ef" / "evaluation.json", encoding="utf-8") as f:
        assert json.load(f) == want
    with pytest.raises(ValueError, match="weights"):
        fr.evaluate(weights="middle")
