"""tickgrad.envs: the C environments as gymnasium envs, against gymnasium's CartPole and the documented trading
reward; the vector envs' shared buffers; agent runs from Python (train, resume bitwise)."""
import os

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="tickgrad.envs needs gymnasium (pip install gymnasium)")

import tickgrad  # noqa: E402
from tickgrad import _agents, envs  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402


@pytest.fixture(scope="module")
def bars():
    return tickgrad.synth(3000, signal=0.3, seed=7)


def test_check_env_cartpole():
    check_env(envs.CartPoleEnv(seed=3), skip_render_check=True)


def test_check_env_trading(bars):
    check_env(envs.TradingEnv(bars, window=8, episode_len=40), skip_render_check=True)
    check_env(envs.TradingEnv(bars, window=4, continuous=True), skip_render_check=True)


def test_spaces_and_registration(bars):
    v = envs.TradingVectorEnv(3, bars, window=8)
    f = v.library_env.trading_info()["features"]
    assert v.single_observation_space.shape == (8 * f + 2,) and v.single_observation_space.dtype == np.float32
    assert v.single_action_space == gymnasium.spaces.Discrete(3)
    assert v.observation_space.shape == (3, 8 * f + 2)
    c = envs.TradingEnv(bars, window=8, continuous=True)
    assert isinstance(c.action_space, gymnasium.spaces.Box) and c.action_space.shape == (1,)
    assert envs.CartPoleEnv().action_space == gymnasium.spaces.Discrete(2)
    assert v.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    vec = gymnasium.make_vec("tickgrad/CartPole-v1", num_envs=256)
    assert isinstance(vec.unwrapped, envs.CartPoleVectorEnv) and vec.num_envs == 256
    obs, _ = vec.reset(seed=1)
    assert obs.shape == (256, 4)
    single = gymnasium.make("tickgrad/CartPole-v1")
    assert isinstance(single.unwrapped, envs.CartPoleEnv)
    t = gymnasium.make_vec("tickgrad/Trading-v0", num_envs=2, data=bars, window=4)
    assert isinstance(t.unwrapped, envs.TradingVectorEnv) and t.unwrapped.settings["window"] == 4


def _controller(obs):
    """A balancing push (keeps episodes long enough to reach truncation)."""
    return (obs[:, 2] + 0.5 * obs[:, 3] > 0).astype(np.int32)


def test_cartpole_matches_gymnasium_step_for_step():
    n, steps, limit = 8, 400, 120
    vec = envs.CartPoleVectorEnv(n, seed=11, max_steps=limit)
    lib = vec.library_env
    obs, _ = vec.reset()
    gyms = [gymnasium.make("CartPole-v1", max_episode_steps=limit) for _ in range(n)]

    def sync(i):  # the gymnasium env i starts an episode in the state of the C instance i
        gyms[i].reset(seed=i)
        gyms[i].unwrapped.state = np.array(lib.cartpole_get_state(i), dtype=np.float64)

    for i in range(n):
        sync(i)
        assert np.array_equal(np.array(gyms[i].unwrapped.state, dtype=np.float32), obs[i])
    rng = np.random.default_rng(0)
    seen_term = seen_trunc = 0
    length = np.zeros(n, dtype=int)
    for t in range(steps):
        act = np.where(np.arange(n) < n // 2, rng.integers(0, 2, n), _controller(obs)).astype(np.int32)
        obs, rew, term, trunc, info = vec.step(act)
        for i in range(n):
            g_obs, g_rew, g_term, g_trunc, _ = gyms[i].step(int(act[i]))
            assert (bool(term[i]), bool(trunc[i])) == (g_term, g_trunc), f"step {t} instance {i}"
            assert rew[i] == g_rew
            if g_term or g_trunc:
                assert info["_final_obs"][i]
                np.testing.assert_allclose(info["final_obs"][i], g_obs, rtol=1e-6, atol=1e-7)
                assert info["_episode"][i] and info["episode"]["l"][i] == length[i] + 1
                length[i] = -1
                seen_term += g_term
                seen_trunc += g_trunc
                sync(i)
                assert np.array_equal(np.array(gyms[i].unwrapped.state, dtype=np.float32), obs[i])
            else:
                assert not info or not info["_final_obs"][i]
                np.testing.assert_allclose(obs[i], g_obs, rtol=1e-6, atol=1e-7)
        length += 1
    assert seen_term > 0 and seen_trunc > 0, (seen_term, seen_trunc)


def test_episode_stats_and_final_obs():
    vec = envs.CartPoleVectorEnv(4, seed=2)
    vec.reset()
    returns = np.zeros(4)
    ended = 0
    for _ in range(200):
        _, rew, term, trunc, info = vec.step(np.zeros(4, dtype=np.int32))
        returns += rew
        if info:
            m = info["_episode"]
            assert np.array_equal(m, term | trunc)
            np.testing.assert_array_equal(info["episode"]["r"][m], returns[m])
            np.testing.assert_array_equal(info["episode"]["l"][m], returns[m])  # reward 1 per step
            assert all(info["final_obs"][i] is None for i in np.flatnonzero(~m))
            assert all(abs(info["final_obs"][i][2]) > 0.2094 or abs(info["final_obs"][i][0]) > 2.4
                       for i in np.flatnonzero(m))
            returns[m] = 0
            ended += m.sum()
    assert ended > 10


def test_vector_equals_single_envs(bars):
    n = 5
    for seed in (0, 9):
        vec = envs.CartPoleVectorEnv(n, seed=seed, copy=True)
        single = envs.CartPoleEnv(seed=seed)
        v_obs, _ = vec.reset()
        s_obs, _ = single.reset()
        assert np.array_equal(v_obs[0], s_obs)
        rng = np.random.default_rng(seed)
        for _ in range(300):  # many episodes: instance 0 of the vector env is the single env with that seed
            a = rng.integers(0, 2, n)
            v_obs, v_rew, v_term, v_trunc, info = vec.step(a)
            s_obs, s_rew, s_term, s_trunc, _ = single.step(int(a[0]))
            assert (v_rew[0], v_term[0], v_trunc[0]) == (s_rew, s_term, s_trunc)
            if s_term or s_trunc:
                assert np.array_equal(info["final_obs"][0], s_obs)
                s_obs, _ = single.reset()
            assert np.array_equal(v_obs[0], s_obs)
    # the trading market the same way (instance 0's segments come from stream 0 of the seed)
    vec = envs.TradingVectorEnv(3, bars, window=8, episode_len=30, seed=4, copy=True)
    single = envs.TradingEnv(bars, window=8, episode_len=30, seed=4)
    v_obs, _ = vec.reset()
    s_obs, _ = single.reset()
    assert np.array_equal(v_obs[0], s_obs)
    rng = np.random.default_rng(1)
    for _ in range(100):
        a = rng.integers(0, 3, 3)
        v_obs, v_rew, v_term, v_trunc, info = vec.step(a)
        s_obs, s_rew, s_term, s_trunc, _ = single.step(int(a[0]))
        assert (v_rew[0], bool(v_trunc[0])) == (np.float32(s_rew), s_trunc)
        if s_trunc:
            assert np.array_equal(info["final_obs"][0], s_obs)
            s_obs, _ = single.reset()
        assert np.array_equal(v_obs[0], s_obs)
    # reset(seed=...) gives the same episodes again
    a1, _ = envs.CartPoleEnv().reset(seed=5)
    a2, _ = envs.CartPoleEnv(seed=123).reset(seed=5)
    assert np.array_equal(a1, a2)


@pytest.mark.parametrize("continuous", [False, True])
def test_trading_rewards_follow_the_formula(bars, continuous):
    n, cost_bps, slippage = 4, 5.0, 2e-4
    vec = envs.TradingVectorEnv(n, bars, window=8, cost_bps=cost_bps, slippage=slippage, episode_len=25, seed=3,
                                continuous=continuous)
    lib = vec.library_env
    cost = cost_bps * 1e-4 + slippage
    assert lib.trading_info()["cost"] == pytest.approx(cost)
    open_ = bars["open"].to_numpy()
    obs, _ = vec.reset()
    p_old = np.zeros(n)
    rng = np.random.default_rng(2)
    ends = 0
    for _ in range(120):
        rows = np.array([lib.trading_bar(i)[0] for i in range(n)])
        if continuous:
            a = rng.uniform(-1.2, 1.2, n).astype(np.float32)  # clipped to [-1, 1] by the env
            p_new = np.clip(a, -1, 1).astype(np.float64)
        else:
            a = rng.integers(0, 3, n)
            p_new = a - 1.0
        np.testing.assert_allclose(obs[:, -2], p_old, atol=1e-6)  # the observation holds the position
        want = p_new * np.log(open_[rows + 2] / open_[rows + 1]) - cost * np.abs(p_new - p_old)
        obs, rew, term, trunc, info = vec.step(a)
        np.testing.assert_allclose(rew, want, rtol=1e-5, atol=1e-7)
        assert not term.any()
        p_old = np.where(trunc, 0.0, p_new)  # a new episode starts flat
        ends += trunc.sum()
    assert ends >= n * 3


def test_step_returns_views_of_the_same_buffers():
    vec = envs.CartPoleVectorEnv(6, seed=1)
    obs0, _ = vec.reset()
    first = vec.step(np.ones(6, dtype=np.int32))
    second = vec.step(np.zeros(6, dtype=np.int64))
    for a, b in zip(first[:4], second[:4]):
        assert a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
        assert np.shares_memory(a, b)
    assert np.shares_memory(obs0, second[0])
    assert second[0].dtype == np.float32 and second[2].dtype == np.bool_ and second[1].shape == (6,)
    lib_obs = np.asarray(vec.library_env.arrays["obs"])
    assert np.shares_memory(lib_obs, second[0])
    cp = envs.CartPoleVectorEnv(6, seed=1, copy=True)
    c0, _ = cp.reset()
    c1 = cp.step(np.ones(6, dtype=np.int32))
    c2 = cp.step(np.zeros(6, dtype=np.int32))
    for a, b in zip(c1[:4], c2[:4]):
        assert not np.shares_memory(a, b)
    assert not np.shares_memory(c0, c2[0])
    before = c1[0].copy()
    cp.step(np.ones(6, dtype=np.int32))
    assert np.array_equal(c1[0], before)  # a copy is not overwritten by the next step


def test_int32_actions_are_not_copied():
    a = np.zeros(4, dtype=np.int32)
    assert envs._discrete_actions(a, 4, 2) is a
    b = envs._discrete_actions([1, 0, 1, 1], 4, 2)
    assert b.dtype == np.int32 and b.flags.c_contiguous


def test_bad_actions_raise_value_error_naming_them(bars):
    vec = envs.CartPoleVectorEnv(4, seed=1)
    vec.reset()
    with pytest.raises(ValueError, match=r"instance 2.*3"):
        vec.step(np.array([0, 1, 3, 0]))
    with pytest.raises(ValueError, match=r"instance 1.*-1"):
        vec.step(np.array([0, -1, 1, 0], dtype=np.int32))  # checked by the library
    with pytest.raises(ValueError, match=r"actions: want shape \(4,\)"):
        vec.step(np.zeros(5, dtype=np.int32))
    with pytest.raises(ValueError, match=r"actions: want shape \(4,\)"):
        vec.step(np.zeros((4, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="actions: want integers"):
        vec.step(np.zeros(4, dtype=np.float64))
    single = envs.CartPoleEnv()
    single.reset()
    with pytest.raises(ValueError, match="action"):
        single.step(2)
    with pytest.raises(ValueError, match="action"):
        single.step(0.5)
    t = envs.TradingVectorEnv(2, bars, window=4, continuous=True)
    t.reset()
    with pytest.raises(ValueError, match="instance 1.*not finite"):
        t.step(np.array([0.5, np.nan]))
    # nothing was stepped by a refused call
    obs_before = vec.reset()[0].copy()
    with pytest.raises(ValueError):
        vec.step(np.array([0, 1, 7, 0]))
    assert np.array_equal(vec.step(np.zeros(4, dtype=np.int32))[0].shape, obs_before.shape)


def test_bad_settings(bars):
    with pytest.raises(ValueError, match="split"):
        envs.TradingVectorEnv(1, bars, split="later")
    with pytest.raises(ValueError, match="window"):
        envs.TradingVectorEnv(1, bars, window=0)
    with pytest.raises(ValueError, match="num_envs"):
        envs.CartPoleVectorEnv(0)


def test_trading_val_split_runs_in_order(bars):
    vec = envs.TradingVectorEnv(1, bars, window=8, split="val")
    info = vec.library_env.trading_info()
    vec.reset()
    assert vec.library_env.trading_bar(0)[0] == info["first_bar"]
    for k in range(info["steps"]):
        _, _, _, trunc, _ = vec.step(np.ones(1, dtype=np.int32))
        assert bool(trunc[0]) == (k == info["steps"] - 1)
    assert vec.library_env.episode_stats(0)["steps"] == info["steps"]


def _small_ppo(out, **more):
    return dict(total_timesteps=1024, num_steps=64, hidden=[16, 16], out=str(out), **more)


def test_train_agent_and_resume_bitwise(tmp_path):
    lines = []
    whole = _agents.train_agent("ppo", "cartpole", None, _small_ppo(tmp_path / "whole"), verbose=False,
                                progress=lines.append)
    assert whole == str(tmp_path / "whole")
    for f in ("config.json", "env.json", "metrics.csv", "weights.safetensors"):
        assert os.path.isfile(os.path.join(whole, f)), f
    assert lines and any("return" in ln or "iter" in ln for ln in lines), lines[:5]
    split = _agents.train_agent("ppo", envs.CartPoleEnv(seed=1), None, _small_ppo(tmp_path / "split", stop_after=2),
                                verbose=False)
    again = _agents.resume_agent(split, verbose=False)
    assert again == split
    for f in ("weights.safetensors", "optim.safetensors"):
        with open(os.path.join(whole, f), "rb") as a, open(os.path.join(split, f), "rb") as b:
            assert a.read() == b.read(), f"{f} differs between the whole and the resumed run"
    with pytest.raises(tickgrad.InvalidError, match="already holds a run"):
        _agents.train_agent("ppo", "cartpole", None, _small_ppo(tmp_path / "whole"), verbose=False)


def test_train_agent_settings_errors(tmp_path):
    with pytest.raises(ValueError, match="learning_rate"):
        _agents.train_agent("ppo", "cartpole", None, {"learning_rate": "fast", "out": str(tmp_path / "a")},
                            verbose=False)
    with pytest.raises(ValueError, match="model"):
        _agents.train_agent("sac", "cartpole", None, {}, verbose=False)
    with pytest.raises(ValueError, match="env"):
        _agents.train_agent("ppo", "pong", None, {}, verbose=False)
    with pytest.raises(ValueError, match="data"):
        _agents.train_agent("ppo", "cartpole", "bars.csv", {}, verbose=False)
    with pytest.raises(ValueError, match="path"):
        _agents.resume_agent(str(tmp_path))


def test_train_agent_trading_env_instance(tmp_path, capsys):
    env = envs.TradingEnv(window=8, cost_bps=2.0, episode_len=64, seed=3)
    out = _agents.train_agent("dqn", env, None, dict(total_timesteps=300, learning_starts=100, buffer_size=500,
                                                     hidden=16, synth_bars=3000, out=str(tmp_path / "dqn")),
                              verbose=True)
    import json
    with open(os.path.join(out, "env.json")) as f:
        e = json.load(f)
    text = json.dumps(e)
    assert '"trading"' in text and '"window": 8' in text and "64" in text, text
    assert "test" in capsys.readouterr().out  # the evaluation table reached sys.stdout


def test_trading_env_from_a_file_with_reader_options(bars, tmp_path):
    path = tmp_path / "bars.csv"
    naive = bars.copy()
    naive.index = naive.index.tz_convert("America/New_York").tz_localize(None)
    naive.to_csv(path)
    from_frame = envs.TradingVectorEnv(2, bars, window=4, seed=2)
    from_file = envs.TradingVectorEnv(2, str(path), window=4, seed=2, data_tz="America/New_York")
    assert from_file.settings["data_tz"] == "America/New_York"
    a, _ = from_frame.reset()
    b, _ = from_file.reset()
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="reader options need data"):
        envs.TradingVectorEnv(1, None, data_tz="UTC")


def test_infos_have_the_layout_of_gymnasium_same_step():
    """The autoreset infos are laid out as gymnasium's SyncVectorEnv lays them out in SAME_STEP mode."""
    def first_infos(vec):
        vec.reset(seed=0)
        for _ in range(60):
            info = vec.step(np.zeros(3, dtype=np.int32))[4]
            if info:
                return info
        raise AssertionError("no episode ended")
    ref = first_infos(gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1") for _ in range(3)],
                                                     autoreset_mode=AutoresetMode.SAME_STEP))
    ours = first_infos(envs.CartPoleVectorEnv(3))
    assert set(ref) <= set(ours) and set(ours) - set(ref) == {"episode", "_episode"}
    for k in ref:
        assert type(ours[k]) is type(ref[k]), k
        if isinstance(ref[k], np.ndarray):
            assert ours[k].dtype == ref[k].dtype and ours[k].shape == ref[k].shape, k
    m = ours["_final_obs"]
    assert all(isinstance(ours["final_obs"][i], np.ndarray) and ours["final_obs"][i].shape == (4,)
               for i in np.flatnonzero(m))


@pytest.mark.parametrize("make", ["cartpole", "trading"])
def test_single_env_refuses_to_step_past_the_end(bars, make):
    """gymnasium's contract for a single env: stepping after terminated or truncated is the caller's error."""
    env = envs.CartPoleEnv(seed=3) if make == "cartpole" else envs.TradingEnv(bars, window=8, episode_len=5, seed=2)
    env.reset()
    for steps in range(1, 1000):
        _, _, term, trunc, _ = env.step(0)
        if term or trunc:
            break
    assert term or trunc
    with pytest.raises(RuntimeError, match=r"episode ended \((terminated|truncated)\) after %d steps; call reset" % steps):
        env.step(0)
    with pytest.raises(RuntimeError):  # still refused, nothing stepped
        env.step(1)
    env.reset()
    env.step(0)  # a new episode steps again
