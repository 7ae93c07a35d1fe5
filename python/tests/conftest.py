"""Fixtures of the package's tests: the command beside it (for like-for-like checks), the shared data, small markets."""
import os
import pathlib
import platform
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

# One set of OpenBLAS kernels for this process and the commands it starts, so that the like-for-like checks compare
# the same arithmetic: OpenBLAS reads the variable when the module loads (after this), and the command, which re-runs
# itself when OpenBLAS falls back to its Prescott kernels, keeps a set variable. Haswell's run on every x86-64 CPU.
if platform.machine() in ("x86_64", "AMD64"):
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")


def pytest_report_header(config):
    import tickgrad

    flags = set()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    isa = " ".join(f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags) or "unknown"
    return f"tickgrad {tickgrad.__version__} from {pathlib.Path(tickgrad.__file__).parent}; ISA {isa}"


@pytest.fixture(scope="session")
def cli() -> pathlib.Path:
    """The `tickgrad` command built from the same sources ($TICKGRAD_CLI, else build/tickgrad of the checkout)."""
    path = pathlib.Path(os.environ.get("TICKGRAD_CLI", REPO / "build" / "tickgrad"))
    if not path.is_file():
        pytest.skip(f"no tickgrad command at {path}: run `make build` (or set TICKGRAD_CLI) for the like-for-like tests")
    return path


@pytest.fixture(scope="session")
def shared_data() -> pathlib.Path:
    """../shared/data beside the checkout ($TG_SHARED_DATA overrides); the test skips where it is absent."""
    path = pathlib.Path(os.environ.get("TG_SHARED_DATA", REPO.parent / "shared" / "data"))
    if not path.is_dir():
        pytest.skip(f"shared data not found at {path} (set TG_SHARED_DATA)")
    return path


def run_cli(cli: pathlib.Path, *args: str) -> str:
    """Runs the command; its stdout, or an assertion naming the command and its stderr."""
    p = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True)
    assert p.returncode == 0, f"tickgrad {' '.join(map(str, args))} exited {p.returncode}: {p.stderr}"
    return p.stdout


@pytest.fixture(scope="session")
def market(cli, tmp_path_factory):
    """1,200 bars of the synthetic market (seed 5, signal 0.3) as the command writes them (a module may define its own)."""
    path = tmp_path_factory.mktemp("market") / "synth.csv"
    run_cli(cli, "synth", "--bars", "1200", "--seed", "5", "--signal", "0.3", "--out", path)
    return path
