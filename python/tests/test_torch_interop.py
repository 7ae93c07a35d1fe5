"""A run's weights in PyTorch: a module built from RUN/best.safetensors, fed the predictor's normalised feature rows,
reproduces the predictor's forecast (the model's scaled output times the target scales of RUN/inference.json).
"""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from conftest import run_cli

HERE = pathlib.Path(__file__).resolve().parent


def twin_check(run: pathlib.Path, data: pathlib.Path) -> int:
    """The twin's forecasts against the predictor's; returns the bars compared."""
    import torch
    import safetensors.torch as st_torch
    import tickgrad

    class TwinMLP(torch.nn.Module):
        """src/models/mlp.c: the window [B, L, F] flattened -> Linear -> ReLU -> (dropout: off) -> Linear."""

        def __init__(self, w: dict, horizons: int, width: int):
            super().__init__()
            self.l1 = torch.nn.Linear(w["mlp.l1.weight"].shape[1], w["mlp.l1.weight"].shape[0])
            self.l2 = torch.nn.Linear(w["mlp.l2.weight"].shape[1], w["mlp.l2.weight"].shape[0])
            self.load_state_dict({"l1.weight": w["mlp.l1.weight"], "l1.bias": w["mlp.l1.bias"],
                                  "l2.weight": w["mlp.l2.weight"], "l2.bias": w["mlp.l2.bias"]})
            self.horizons, self.width = horizons, width

        def forward(self, past):
            y = self.l2(torch.relu(self.l1(past.reshape(past.shape[0], -1))))
            return y.reshape(past.shape[0], self.horizons, self.width)

    weights = st_torch.load_file(str(run / "best.safetensors"))
    assert set(weights) == {"mlp.l1.weight", "mlp.l1.bias", "mlp.l2.weight", "mlp.l2.bias"}
    meta = json.loads((run / "inference.json").read_text())
    p = tickgrad.Predictor(run)
    info = p.info
    H, nq, L, F = info["horizons"], len(info["quantiles"]), info["window"], info["n_features"]
    assert (L, F) == (6, len(meta["features"])) and tuple(weights["mlp.l1.weight"].shape) == (12, L * F)
    twin = TwinMLP(weights, H, nq).eval()
    scales = torch.tensor(meta["target_scales"], dtype=torch.float64).reshape(H, 1)

    rows, windows, want = [], [], []
    for bar in tickgrad.read_bars(data).reset_index().to_dict("records"):
        f = p.push(bar)
        x = p.features()
        if x is not None:
            assert x.shape == (F,) and np.isfinite(x).all()
            rows.append(x)
        if f is not None:
            windows.append(np.stack(rows[-L:]))
            want.append(f)
    assert len(want) == len(rows) - L + 1 > 500
    with torch.no_grad():
        got = (twin(torch.from_numpy(np.stack(windows))).double() * scales).numpy()
    want = np.stack(want).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * float(np.abs(want).max()))
    return len(want)


@pytest.fixture(scope="module")
def mlp_run(cli, tmp_path_factory):
    base = tmp_path_factory.mktemp("torch")
    data = base / "synth.csv"
    run_cli(cli, "synth", "--bars", "1000", "--seed", "11", "--signal", "0.3", "--out", data)
    run_cli(cli, "train", "--model", "mlp", "--window", "6", "--hidden", "12", "--horizons", "4", "--epochs", "2",
            "--data", data, "--out", base / "run")
    return base / "run", data


def test_mlp_in_pytorch_reproduces_the_predictor(mlp_run):
    for mod in ("torch", "safetensors"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not installed: the PyTorch interop test needs torch and safetensors")
    assert twin_check(*mlp_run) > 500


def test_torch_imports_after_tickgrad():
    """The package's library brings no shared library that shadows torch's own (the CUDA toolkit's NCCL did)."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    code = "import tickgrad, torch; print(torch.ones(3).sum().item())"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and p.stdout.strip() == "3.0", p.stderr
