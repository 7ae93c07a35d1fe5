"""DQN and PPO agent runs from Python: what ``tickgrad train --model dqn|ppo`` does, over the same library calls
(tg_agent_run_defaults / tg_agent_run_set / tg_agent_run_check / tg_agent_run).

tickgrad.train() calls train_agent for models "dqn" and "ppo"; resume_agent continues a run bitwise.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import pandas as pd

from . import _core
from ._data import write_bars_csv
from ._run import interrupted

__all__ = ["train_agent", "resume_agent"]

# Settings that describe the environment (the command's env flags, "-" -> "_") -> tg_agent_env members.
_ENV_KEYS = {
    "envs": "n", "data_tz": "data_tz", "tz": "tz", "window": "window", "episode_len": "episode_len",
    "cost_bps": "cost_bps", "slippage": "slippage", "synth_signal": "synth_signal", "synth_bars": "synth_bars",
    "synth_seed": "synth_seed", "env_seed": "seed", "copy_windows": "copy_windows",
}
# Settings of the run itself, not of the agent.
_RUN_KEYS = ("out", "device", "stop_after", "threads")


def _setting_text(key: str, value: Any) -> str:
    """A setting's value as the command line would give it (bools 1/0, lists joined by commas)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return ",".join(_setting_text(key, v) for v in value)
    if isinstance(value, (int, float, str)):
        return str(value)
    if hasattr(value, "item"):  # numpy scalars
        return str(value.item())
    raise TypeError(f"{key}: want a number, a str or a list, got {type(value).__name__}")


def _env_of(env: Any) -> Tuple[Dict[str, Any], Any]:
    """The tg_agent_env settings of env ("cartpole", "trading" or a tickgrad.envs env) and the env's data."""
    if isinstance(env, str):
        if env not in ("cartpole", "trading"):
            raise ValueError(f"env: want 'cartpole', 'trading' or a tickgrad.envs environment, got {env!r}")
        return {"kind": env}, None
    from . import envs  # gymnasium is needed only here
    base = getattr(env, "unwrapped", env)
    if isinstance(base, envs.CartPoleEnv):
        base = base._vec
    if isinstance(base, envs.TradingEnv):
        base = base._vec
    if isinstance(base, envs.CartPoleVectorEnv):
        if base.max_steps != 500:
            raise ValueError("env: agent runs use CartPole-v1's 500-step limit (max_steps=500)")
        return {"kind": "cartpole", "seed": base._seed}, None
    if isinstance(base, envs.TradingVectorEnv):
        s = base.settings
        if s["continuous"] or s["features"] is not None or s["split"] != "train":
            raise ValueError("env: agent runs train on the discrete trading env with the default features and the "
                             "'train' split (continuous, features and split are not settings of an agent run)")
        d = {"kind": "trading", "window": int(s["window"]), "cost_bps": float(s["cost_bps"]),
             "slippage": float(s["slippage"]), "episode_len": int(s["episode_len"]), "seed": int(s["seed"])}
        if s["tz"]:
            d["tz"] = s["tz"]
        if s.get("data_tz"):
            d["data_tz"] = s["data_tz"]
        return d, base.data
    raise TypeError(f"env: want 'cartpole', 'trading' or a tickgrad.envs environment, got {type(env).__name__}")


def _data_paths(data: Any, out: str) -> List[str]:
    """Bar files for an agent run: a path or list of paths (the run's env.json records them, so resume reads them
    again); a DataFrame is written to OUT/bars.csv first (bit for bit what the library reads back), and that file
    is the run's data."""
    if isinstance(data, pd.DataFrame):
        os.makedirs(out, exist_ok=True)
        return [write_bars_csv(data, os.path.join(out, "bars.csv"))]
    if isinstance(data, (str, os.PathLike)):
        return [os.fspath(data)]
    if isinstance(data, (list, tuple)) and all(isinstance(p, (str, os.PathLike)) for p in data) and data:
        return [os.fspath(p) for p in data]
    raise TypeError(f"data: want a DataFrame, a path or a list of paths, got {type(data).__name__}")


def _run(model: Optional[str], resume: Optional[str], env: Optional[Dict[str, Any]], pairs: List[Tuple[str, str]],
         out: Optional[str], stop_after: Optional[int], device: Optional[str], threads: Optional[int],
         verbose: bool, progress: Optional[Callable[[str], Any]]) -> str:
    if stop_after is not None and (not isinstance(stop_after, int) or isinstance(stop_after, bool) or stop_after < 1):
        raise ValueError(f"stop_after: want an int >= 1, got {stop_after!r}")
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
        raise ValueError(f"threads: want an int >= 1, got {threads!r}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress: want a callable given each log line, got {type(progress).__name__}")
    if device is not None and not isinstance(device, str):
        raise TypeError(f"device: want a str such as 'cpu' or 'cuda:0', got {type(device).__name__}")
    folder, _, _, ctrl_c = _core.agent_run(model, resume, env, pairs, out, int(stop_after or 0), device,
                                           int(threads or 0), bool(verbose), progress)
    if ctrl_c:
        raise interrupted(folder)
    return folder


def train_agent(model: str, env: Any = "cartpole", data: Any = None, settings: Optional[Dict[str, Any]] = None,
                verbose: bool = True, progress: Optional[Callable[[str], Any]] = None) -> str:
    """Trains a DQN or PPO agent as ``tickgrad train --model dqn|ppo`` does; returns the run folder.

    model: "dqn" or "ppo". env: "cartpole", "trading", or a tickgrad.envs environment (its kind and settings are
    taken from it: CartPole's seed; the trading env's window, cost_bps, slippage, episode_len, tz, seed, data).
    data: the trading env's bars: a path or list of paths, or a DataFrame (written to OUT/bars.csv, which env.json
    records, so that resume finds them); None: the synthetic market. settings: the command's flags by
    name without "--" and with "_" for "-": agent settings as config.json names them (total_timesteps,
    learning_rate, hidden=[64, 64] or "64,64", num_envs, ...), env settings (envs, window, cost_bps, slippage,
    episode_len, synth_signal, synth_bars, synth_seed, env_seed, tz, data_tz, copy_windows) and the run's own
    (out: the run folder, default runs/<model>-<env>-<UTC timestamp>; device: "cpu" or "cuda[:N]"; stop_after:
    stop with a checkpoint after this many DQN steps / PPO iterations; threads: CPU threads).
    verbose: the library's log (progress lines, the evaluation table) to sys.stdout. progress: a callable given
    each log line as it is written (also when verbose is False).

    The folder holds env.json, config.json, metrics.csv, checkpoints and report.html (tickgrad.Run reads it).
    Bad settings raise ValueError naming them (the library's message).
    """
    if not isinstance(model, str) or model not in ("dqn", "ppo"):
        raise ValueError(f"model: want 'dqn' or 'ppo', got {model!r}")
    settings = dict(settings or {})
    e, env_data = _env_of(env)
    if data is not None and env_data is not None:
        raise ValueError("data: given twice (as data and as the env's data)")
    data = data if data is not None else env_data
    if data is not None:
        if e["kind"] != "trading":
            raise ValueError("data: only the trading env reads bars (env is cartpole)")
    run = {k: settings.pop(k) for k in _RUN_KEYS if k in settings}
    if isinstance(data, pd.DataFrame) and run.get("out") is None:  # the library's default name, needed first here
        run["out"] = time.strftime(f"runs/{model}-{e['kind']}-%Y%m%d-%H%M%S", time.gmtime())
    if data is not None:
        e["data"] = _data_paths(data, os.fspath(run.get("out") or ""))
    pairs: List[Tuple[str, str]] = []
    for key, value in settings.items():
        if not isinstance(key, str):
            raise TypeError(f"settings: keys are setting names (str), got {key!r}")
        k = key.replace("-", "_")
        if k == "env":
            raise ValueError("settings: give the environment as env=..., not as a setting")
        if k in ("data", "model", "resume"):
            raise ValueError(f"settings: {k} is an argument of its own, not a setting")
        if k in _ENV_KEYS:
            member = _ENV_KEYS[k]
            if member in ("tz", "data_tz"):
                e[member] = str(value)
            elif member in ("cost_bps", "slippage", "synth_signal"):
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise TypeError(f"{k}: want a number, got {type(value).__name__}")
                e[member] = float(value)
            else:
                if isinstance(value, bool):
                    value = int(value)
                if not isinstance(value, int):
                    raise TypeError(f"{k}: want an int, got {type(value).__name__}")
                e[member] = value
            continue
        pairs.append((k, _setting_text(k, value)))
    out = run.get("out")
    return _run(model, None, e, pairs, None if out is None else os.fspath(out), run.get("stop_after"),
                run.get("device"), run.get("threads"), verbose, progress)


def resume_agent(path: str, stop_after: Optional[int] = None, device: Optional[str] = None,
                 threads: Optional[int] = None, verbose: bool = True,
                 progress: Optional[Callable[[str], Any]] = None) -> str:
    """Continues the agent run in path bitwise as if never interrupted (``tickgrad train --resume``): its
    env.json and config.json are the settings; stop_after (steps / iterations in all), device and threads as in
    train_agent. Returns the run folder."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path: want a run folder, got {type(path).__name__}")
    path = os.fspath(path)
    if not os.path.isfile(os.path.join(path, "env.json")):
        raise ValueError(f"path: {path} holds no agent run (no env.json)")
    return _run(None, path, None, [], None, stop_after, device, threads, verbose, progress)
