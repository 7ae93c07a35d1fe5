"""The README's Python example runs as written (one epoch instead of six, its run folder in a temporary one)."""
import os
import re

import pytest

from conftest import REPO


def test_readme_example_runs(shared_data, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib", reason="the README's example plots with pandas, which needs matplotlib")
    text = (REPO / "README.md").read_text()
    code = re.search(r"## From Python.*?```python\n(.*?)```", text, re.S).group(1)
    assert "tickgrad.read_bars(" in code and "tickgrad.train(" in code and "tickgrad.backtest(" in code
    data = re.search(r'read_bars\("([^"]+)"\)', code).group(1)
    assert (REPO / data).resolve() == (shared_data / "parquet-ohlcv/es_201312_1m.snappy.parquet").resolve()
    code = code.replace("epochs=6", "epochs=1").replace('"runs/', f'"{tmp_path}/runs/')
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["run"].result.epochs_run == 1
    assert os.path.getsize(tmp_path / "runs/es-tft/equity.png") > 1000
    assert len(scope["bt"].equity) > 1000
