"""Ctrl-C while tickgrad.train runs: the run stops at the end of the step with a checkpoint, tickgrad.Interrupted (a
KeyboardInterrupt) is raised carrying the Run, and its resume ends bitwise where an uninterrupted run ends."""
import os
import signal
import subprocess
import sys

import tickgrad

SETTINGS = dict(epochs=60, hidden=16, window=8, horizons=4, dropout=0.2, patience=0, threads=1)
SCRIPT = """
import sys, tickgrad
settings = eval(sys.argv[2])
df = tickgrad.synth(2000, seed=2, signal=0.3)
try:
    tickgrad.train("mlp", df, out=sys.argv[1], **settings)
    print("NOT INTERRUPTED", flush=True)
except tickgrad.Interrupted as e:
    print("INTERRUPTED", e.run.path, flush=True)
    run = e.run.resume(data=df, verbose=False)
    print("RESUMED", run.result.epochs_run, run.result.interrupted, flush=True)
"""


def test_ctrl_c_stops_with_a_checkpoint_and_resume_is_bitwise(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    p = subprocess.Popen([sys.executable, "-c", SCRIPT, str(tmp_path / "cut"), repr(SETTINGS)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    lines = []
    for line in p.stdout:
        lines.append(line)
        if line.startswith("epoch   2/"):
            p.send_signal(signal.SIGINT)
            break
    out, err = p.communicate(timeout=300)
    lines += out.splitlines(keepends=True)
    text = "".join(lines)
    assert p.returncode == 0, text + err
    assert "stopping at the end of this step with a checkpoint" in err
    assert "interrupted: stopped after step" in text and "INTERRUPTED " + str(tmp_path / "cut") in text, text
    assert "RESUMED 60 False" in text, text
    whole = tickgrad.train("mlp", tickgrad.synth(2000, seed=2, signal=0.3), out=str(tmp_path / "whole"),
                           verbose=False, **SETTINGS)
    for name in ("weights.safetensors", "best.safetensors"):
        assert (tmp_path / "cut" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    a = tickgrad.Run(tmp_path / "cut").metrics[["train_loss", "val_loss"]]
    assert a.equals(whole.metrics[["train_loss", "val_loss"]])
