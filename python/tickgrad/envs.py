"""tickgrad's environments as gymnasium environments: CartPole-v1 and the bar-by-bar trading market.

The library steps n instances of an environment in one call (C, the GIL released). This module offers them as

- ``CartPoleVectorEnv`` / ``TradingVectorEnv``: ``gymnasium.vector.VectorEnv`` s over one library env of
  ``num_envs`` instances. ``step()`` returns views of buffers allocated once in C (obs, rewards, terminations,
  truncations): no copy and no allocation per step. **The returned arrays are overwritten by the next step**
  (as gymnasium's own vector envs do with shared memory); keep ``arr.copy()`` of what you store, or construct
  the env with ``copy=True`` to get fresh arrays each step.
- ``CartPoleEnv`` / ``TradingEnv``: single ``gymnasium.Env`` s (one instance). As gymnasium's contract for a single
  env says, stepping past the end of an episode is the caller's error: ``step()`` after ``terminated`` or
  ``truncated`` raises ``RuntimeError`` until ``reset()``.

Autoreset: an instance whose episode ended is reset in the same step (gymnasium's ``AutoresetMode.SAME_STEP``):
the returned observation is the new episode's first, ``infos["final_obs"][i]`` the true last one (an object array,
``infos["_final_obs"]`` its mask), ``infos["final_info"]`` / ``infos["_final_info"]`` the finished episodes' info,
and ``infos["episode"] = {"r": returns, "l": lengths}`` with the mask ``infos["_episode"]`` (the layout of
gymnasium's RecordEpisodeStatistics).

Seeding: instance i of a vector env built with ``seed`` draws its resets from stream i of that seed's counter RNG;
a single env with ``seed`` is instance 0 of the vector env with the same seed. ``reset(seed=s)`` rebuilds the
library env with seed s (its buffers then change; ``reset()`` without a seed keeps them).

Registered ids (importing tickgrad.envs registers them): ``tickgrad/CartPole-v1`` and ``tickgrad/Trading-v0``,
with vector entry points, so ``gymnasium.make_vec("tickgrad/CartPole-v1", num_envs=256)`` is the C-backed
vector env.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from . import _core
from ._data import to_bars

__all__ = ["CartPoleEnv", "CartPoleVectorEnv", "TradingEnv", "TradingVectorEnv"]

_SPLITS = {"train": 0, "val": 1, "test": 2}
# The synthetic market an agent run trains on without --data (tg_agent_env_defaults).
_SYNTH_DEFAULTS = {"synth_bars": 20000, "synth_signal": 0.3, "synth_seed": 1}


class _LibraryEnv:
    """The library env of a vector env and numpy views of its step buffers (made once)."""

    def __init__(self, make, n: int, seed: int):
        self.make = make
        self.rebuild(n, seed)

    def rebuild(self, n: int, seed: int) -> None:
        self.env = self.make(n, seed)
        a = self.env.arrays
        self.obs = np.asarray(a["obs"])
        self.final_obs = np.asarray(a["final_obs"])
        self.reward = np.asarray(a["reward"])
        self.terminated = np.asarray(a["terminated"])
        self.truncated = np.asarray(a["truncated"])
        self.ep_return = np.asarray(a["ep_return"])
        self.ep_length = np.asarray(a["ep_length"])
        self.done_idx = np.asarray(a["done_idx"])  # starts with the instances that finished in the last step
        self.try_step = self.env.try_step


def _discrete_actions(actions: Any, n: int, n_actions: int) -> np.ndarray:
    """actions as a C-contiguous int32 [n] array (no copy when it already is one); ValueError naming the problem."""
    if type(actions) is np.ndarray and actions.dtype == np.int32 and actions.flags.c_contiguous:
        a = actions
    else:
        a = np.asarray(actions)
        if a.dtype.kind not in "iu":
            raise ValueError(f"actions: want integers (0 .. {n_actions - 1}), got dtype {a.dtype}")
        if a.size and (a.min() < 0 or a.max() >= n_actions):
            bad = np.flatnonzero((a.reshape(-1) < 0) | (a.reshape(-1) >= n_actions))[0]
            raise ValueError(f"actions: instance {bad}: action {a.reshape(-1)[bad]} is out of range "
                             f"(0 .. {n_actions - 1})")
        a = np.ascontiguousarray(a, dtype=np.int32)
    if a.shape != (n,):
        raise ValueError(f"actions: want shape ({n},) (one action per instance), got {a.shape}")
    return a


def _continuous_actions(actions: Any, n: int) -> np.ndarray:
    a = np.asarray(actions)
    if a.dtype.kind not in "fiu":
        raise ValueError(f"actions: want numbers (target positions in [-1, 1]), got dtype {a.dtype}")
    if a.shape == (n, 1):
        a = a.reshape(n)
    if a.shape != (n,):
        raise ValueError(f"actions: want shape ({n},) or ({n}, 1) (one position per instance), got {a.shape}")
    a = np.ascontiguousarray(a, dtype=np.float32)
    if not np.all(np.isfinite(a)):
        bad = int(np.flatnonzero(~np.isfinite(a))[0])
        raise ValueError(f"actions: instance {bad}: action {a[bad]} is not finite")
    return a


class _TickgradVectorEnv(VectorEnv):
    """A vector env over one library env (see the module's docstring for buffers, autoreset and seeding)."""

    metadata: Dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def _setup(self, make, num_envs: int, seed: int, copy: bool) -> None:
        if not isinstance(num_envs, (int, np.integer)) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs: want an int >= 1, got {num_envs!r}")
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed: want an int >= 0, got {seed!r}")
        self.num_envs = int(num_envs)
        self.copy = bool(copy)
        self._seed = int(seed)
        self._lib = _LibraryEnv(make, self.num_envs, self._seed)
        e = self._lib.env
        self._n_actions = e.n_actions
        self._action_shape = (self.num_envs,)
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (e.obs_dim,), np.float32)
        if e.n_actions > 0:
            self.single_action_space = spaces.Discrete(e.n_actions)
        else:
            lo, hi = e.action_range
            self.single_action_space = spaces.Box(np.float32(lo), np.float32(hi), (1,), np.float32)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        self.closed = False

    @property
    def library_env(self) -> "_core.Env":
        """The underlying library environment (tickgrad._core.Env): its buffers, test hooks and trading queries."""
        return self._lib.env

    def reset(self, *, seed: Optional[int] = None,
              options: Optional[Dict[str, Any]] = None) -> Tuple[np.ndarray, Dict[str, Any]]:
        """Resets every instance. seed: an int rebuilds the library env with that seed (instance i draws from
        stream i of it; a list of per-instance seeds is refused); None continues the current streams. options:
        ignored. Returns (obs [num_envs, obs_dim] float32, {}): the obs buffer itself unless copy=True."""
        if seed is not None:
            if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
                raise ValueError(f"seed: want one int >= 0 for all instances (instance i uses stream i of it), "
                                 f"got {seed!r}")
            self._seed = int(seed)
            self._lib.rebuild(self.num_envs, self._seed)
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(self._seed)
        self._lib.env.reset()
        obs = self._lib.obs
        return (obs.copy() if self.copy else obs), {}

    def step(self, actions: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Dict[str, Any]]:
        """Steps every instance with actions [num_envs] (ints; floats in [-1, 1] for a continuous trading env).

        Returns (obs [num_envs, obs_dim] float32, rewards [num_envs] float32, terminations and truncations
        [num_envs] bool, infos): views of the env's buffers, overwritten by the next step (copies with
        copy=True). Actions that are an int32 C-contiguous array are used without a copy. A bad action
        (out of range, wrong shape or dtype) raises ValueError naming the instance and no instance is stepped. Finished instances are already reset (SAME_STEP autoreset); infos then
        holds final_obs, final_info and episode statistics for them (see the module docstring)."""
        lib = self._lib
        done = lib.try_step(actions)  # steps at once when actions are a C-contiguous int32 (float32) [num_envs]
        if done is None:
            if self._n_actions > 0:
                a = _discrete_actions(actions, self.num_envs, self._n_actions)
            else:
                a = _continuous_actions(actions, self.num_envs)
            done = lib.env.step(a)
        infos: Dict[str, Any] = self._final_infos(done) if done else {}
        if self.copy:
            return lib.obs.copy(), lib.reward.copy(), lib.terminated.copy(), lib.truncated.copy(), infos
        return lib.obs, lib.reward, lib.terminated, lib.truncated, infos

    def _final_infos(self, done: int) -> Dict[str, Any]:
        """The SAME_STEP infos of the `done` instances whose episode just ended (fresh arrays: they outlive the
        step). The library lists those instances first in done_idx, so the cost is a few numpy calls and one
        item per finished instance, whatever num_envs."""
        lib = self._lib
        mask = lib.terminated | lib.truncated
        idx = lib.done_idx[:done]
        final = np.empty(self.num_envs, dtype=object)  # None where the episode goes on
        for i, row in zip(idx.tolist(), lib.final_obs.take(idx, axis=0)):  # rows of one copy of the finished rows
            final[i] = row
        # the library writes 0 to the episode statistics of the instances that go on
        return {"final_obs": final, "_final_obs": mask, "final_info": {}, "_final_info": mask,
                "episode": {"r": lib.ep_return.copy(), "l": lib.ep_length.copy()}, "_episode": mask}

    def close_extras(self, **kwargs: Any) -> None:
        self._lib = None  # type: ignore[assignment]


class CartPoleVectorEnv(_TickgradVectorEnv):
    """num_envs CartPole-v1 instances stepped together in C (gymnasium's dynamics in float64, explicit Euler).

    Observation Box (4,) float32 per instance (x, x_dot, theta, theta_dot; gymnasium's bounds); actions Discrete(2) per
    instance (0 push left, 1 push right); reward 1 per step including the last; termination at |x| > 2.4 or
    |theta| > 12 degrees; truncation after max_steps. copy=False (default): step() returns views overwritten by
    the next step; copy=True returns copies."""

    def __init__(self, num_envs: int = 1, seed: int = 0, max_steps: int = 500, copy: bool = False):
        if not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
            raise ValueError(f"max_steps: want an int >= 1, got {max_steps!r}")
        self.max_steps = int(max_steps)
        self._setup(lambda n, s: _core.cartpole_env(n, s, self.max_steps), num_envs, seed, copy)
        # gymnasium's CartPole-v1 bounds: twice the termination thresholds for x and theta
        high = np.array([2.4 * 2, np.finfo(np.float32).max, 12 * 2 * np.pi / 360 * 2, np.finfo(np.float32).max],
                        dtype=np.float32)
        self.single_observation_space = spaces.Box(-high, high, dtype=np.float32)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.spec = None


def _trading_maker(data: Any, window: int, cost_bps: float, slippage: float, split: str, episode_len: int,
                   continuous: bool, features: Optional[str], tz: Optional[str], reader_options: Dict[str, Any]):
    if split not in _SPLITS:
        raise ValueError(f"split: want 'train', 'val' or 'test', got {split!r}")
    if data is None:
        if reader_options:
            raise ValueError(f"{', '.join(reader_options)}: reader options need data (a path or a DataFrame)")
        bars = _core.agent_env_bars(dict(_SYNTH_DEFAULTS, kind="trading"))
    else:
        reader_options = dict(reader_options)
        if "data_tz" in reader_options:  # the reader's zone of naive times (tz is the time features' zone)
            reader_options["tz"] = reader_options.pop("data_tz")
        bars = to_bars(data, **reader_options)
    settings = dict(window=int(window), cost_bps=float(cost_bps), slippage=float(slippage), split=_SPLITS[split],
                    episode_len=int(episode_len), continuous=bool(continuous), features=features, tz=tz)

    def make(n: int, seed: int) -> "_core.Env":
        return _core.trading_env(n, bars, seed=seed, **settings)
    return make, bars


class TradingVectorEnv(_TickgradVectorEnv):
    """num_envs instances of the bar-by-bar trading market over one instrument's bars, stepped together in C.

    data: a DataFrame (as tickgrad.read_bars returns), a path or list of paths (read with reader_options as
    read_bars takes them, its tz given as data_tz="America/New_York" for naive times), or None for the synthetic
    market the agents train on (20000 bars, planted lag-1 signal 0.3, seed 1). Settings as tg_trading_cfg
    (tickgrad/rl.h): window (bars of features per observation), cost_bps, slippage, split ("train": random
    segments of episode_len decisions; "val", "test": the split in order, one episode), episode_len, continuous (actions a target position in [-1, 1] instead of
    0 short / 1 flat / 2 long), features (a feature spec; None: the default), tz (zone of the time features),
    seed (segment starts).

    Observation Box(-inf, inf, (window * features + 2,), float32): the normalised feature window, the position
    held and its unrealised log return. Reward r_t = p_new * log(open[t+2] / open[t+1]) - cost * |p_new - p_old|
    with cost = cost_bps * 1e-4 + slippage. copy as for CartPoleVectorEnv."""

    def __init__(self, num_envs: int = 1, data: Any = None, *, window: int = 32, cost_bps: float = 1.0,
                 slippage: float = 0.0, split: str = "train", episode_len: int = 256, continuous: bool = False,
                 features: Optional[str] = None, tz: Optional[str] = None, seed: int = 1, copy: bool = False,
                 **reader_options: Any):
        make, self.bars = _trading_maker(data, window, cost_bps, slippage, split, episode_len, continuous, features,
                                         tz, reader_options)
        self.settings = dict(window=window, cost_bps=cost_bps, slippage=slippage, split=split,
                             episode_len=episode_len, continuous=continuous, features=features, tz=tz, seed=seed,
                             data_tz=reader_options.get("data_tz"))
        self.data = data
        self._setup(make, num_envs, seed, copy)
        self.spec = None


class _TickgradEnv(gymnasium.Env):
    """A single env: instance 0 of a library env of one instance."""

    metadata: Dict[str, Any] = {"render_modes": []}

    def _setup(self, vec: _TickgradVectorEnv) -> None:
        self._vec = vec
        self.observation_space = vec.single_observation_space
        self.action_space = vec.single_action_space
        self._discrete = isinstance(self.action_space, spaces.Discrete)
        self._action = np.zeros(1, dtype=np.int32 if self._discrete else np.float32)
        self._pending = False  # an episode ended and the library has already reset the instance
        self._ended = ""  # "terminated" or "truncated" once the episode ended: step() refuses until reset()
        self._steps = 0  # steps of the current episode

    @property
    def library_env(self) -> "_core.Env":
        """The underlying library environment (one instance)."""
        return self._vec.library_env

    def reset(self, *, seed: Optional[int] = None,
              options: Optional[Dict[str, Any]] = None) -> Tuple[np.ndarray, Dict[str, Any]]:
        """Starts an episode. seed: rebuilds the env with that seed (None: the next episode of the current one)."""
        super().reset(seed=seed)
        if seed is None and self._pending:
            # the library already started the next episode when the last one ended (autoreset): take it, so that
            # this env's episodes are those of instance 0 of the vector env with the same seed
            self._pending = False
            self._ended, self._steps = "", 0
            return self._vec._lib.obs[0].copy(), {}
        self._pending = False
        self._ended, self._steps = "", 0
        obs, _ = self._vec.reset(seed=seed)
        return obs[0].copy(), {}

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, Dict[str, Any]]:
        """One step: (obs, reward, terminated, truncated, info). After the episode ends (terminated or truncated)
        step() raises RuntimeError until reset()."""
        if self._ended:
            raise RuntimeError(f"{type(self).__name__}.step: the episode ended ({self._ended}) after "
                               f"{self._steps} steps; call reset() before stepping again")
        a = self._action
        if self._discrete:
            if isinstance(action, (bool, float)) or not isinstance(action, (int, np.integer)):
                if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
                    action = int(action)
                else:
                    raise ValueError(f"action: want an int in 0 .. {self.action_space.n - 1}, got {action!r}")
            if not 0 <= action < self.action_space.n:
                raise ValueError(f"action: instance 0: action {action} is out of range "
                                 f"(0 .. {self.action_space.n - 1})")
            a[0] = action
        else:
            x = np.asarray(action, dtype=np.float32).reshape(-1)
            if x.shape != (1,):
                raise ValueError(f"action: want one target position, got shape {np.shape(action)}")
            a[0] = x[0]
        lib = self._vec._lib
        done = lib.env.step(a)
        self._pending = bool(done)
        self._steps += 1
        term, trunc = bool(lib.terminated[0]), bool(lib.truncated[0])
        if done:
            self._ended = "terminated" if term else "truncated"
        obs = (lib.final_obs[0] if done else lib.obs[0]).copy()
        return obs, float(lib.reward[0]), term, trunc, {}


class CartPoleEnv(_TickgradEnv):
    """CartPole-v1 in C (one instance): gymnasium's dynamics, observation Box (4,) float32, actions Discrete(2).
    seed: the reset draws (instance 0 of CartPoleVectorEnv with that seed)."""

    def __init__(self, seed: int = 0, max_steps: int = 500, render_mode: Optional[str] = None):
        self.render_mode = render_mode
        self._setup(CartPoleVectorEnv(1, seed=seed, max_steps=max_steps))


class TradingEnv(_TickgradEnv):
    """The trading market (one instance) over data (DataFrame, path(s), or None for the synthetic market); the
    settings of TradingVectorEnv. Observation Box (window * features + 2,) float32; actions Discrete(3)
    (0 short, 1 flat, 2 long) or Box([-1], [1]) when continuous."""

    def __init__(self, data: Any = None, *, window: int = 32, cost_bps: float = 1.0, slippage: float = 0.0,
                 split: str = "train", episode_len: int = 256, continuous: bool = False,
                 features: Optional[str] = None, tz: Optional[str] = None, seed: int = 1,
                 render_mode: Optional[str] = None, **reader_options: Any):
        self.render_mode = render_mode
        vec = TradingVectorEnv(1, data, window=window, cost_bps=cost_bps, slippage=slippage, split=split,
                               episode_len=episode_len, continuous=continuous, features=features, tz=tz, seed=seed,
                               **reader_options)
        self._setup(vec)
        self.settings = vec.settings
        self.data = data


def _make_cartpole_vec(num_envs: int = 1, seed: int = 0, max_steps: int = 500, copy: bool = False,
                       **kwargs: Any) -> CartPoleVectorEnv:
    return CartPoleVectorEnv(num_envs, seed=seed, max_steps=max_steps, copy=copy)


def _make_trading_vec(num_envs: int = 1, data: Any = None, **kwargs: Any) -> TradingVectorEnv:
    return TradingVectorEnv(num_envs, data, **kwargs)


def _register() -> None:
    for env_id, entry, vec in (("tickgrad/CartPole-v1", "tickgrad.envs:CartPoleEnv",
                                "tickgrad.envs:_make_cartpole_vec"),
                               ("tickgrad/Trading-v0", "tickgrad.envs:TradingEnv", "tickgrad.envs:_make_trading_vec")):
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point=entry, vector_entry_point=vec,
                               max_episode_steps=None, disable_env_checker=False)


_register()
