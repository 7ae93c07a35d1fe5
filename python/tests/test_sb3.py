"""stable-baselines3's PPO trains on tickgrad's trading env: the single gymnasium env, and the C vector env through a
small SB3 VecEnv adapter."""
import numpy as np
import pytest

pytest.importorskip("gymnasium", reason="tickgrad.envs needs gymnasium (pip install gymnasium)")
sb3 = pytest.importorskip("stable_baselines3", reason="the SB3 interoperability test needs stable-baselines3 "
                                                      "(pip install stable-baselines3)")

import tickgrad  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv, VecMonitor  # noqa: E402
from tickgrad import envs  # noqa: E402

torch = pytest.importorskip("torch")
torch.set_num_threads(1)  # small networks: threads only contend on a shared machine

STEPS = 4096


class TickgradVecEnv(VecEnv):
    """SB3's VecEnv over a tickgrad vector env: SB3 keeps the previous observation while it steps, so the env returns
    copies (copy=True); a finished instance's last observation goes to infos[i]["terminal_observation"]."""

    def __init__(self, venv: envs._TickgradVectorEnv):
        assert venv.copy
        self.venv = venv
        self._actions = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    def reset(self):
        obs, _ = self.venv.reset()
        return obs

    def step_async(self, actions):
        self._actions = actions

    def step_wait(self):
        obs, rew, term, trunc, info = self.venv.step(self._actions)
        dones = term | trunc
        infos = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i] = {"terminal_observation": info["final_obs"][i],
                        "TimeLimit.truncated": bool(trunc[i] and not term[i])}
        return obs, rew.astype(np.float32), dones, infos

    def close(self):
        self.venv.close()

    def get_attr(self, attr_name, indices=None):
        return [getattr(self.venv, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name, value, indices=None):
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name, *args, indices=None, **kwargs):
        raise NotImplementedError("the instances of a tickgrad vector env have no methods of their own")

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * len(self._get_indices(indices))


@pytest.fixture(scope="module")
def bars():
    return tickgrad.synth(4000, signal=0.3, seed=3)


def _ppo(env):
    return PPO("MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=2, learning_rate=3e-4,
               policy_kwargs=dict(net_arch=[32, 32]), seed=0, device="cpu", verbose=0)


def _acts_in(model, env):
    obs, _ = env.reset(seed=1)
    for _ in range(20):
        action, _ = model.predict(obs, deterministic=True)
        assert env.action_space.contains(np.int64(action))
        obs, reward, term, trunc, _ = env.step(int(action))
        assert np.isfinite(reward) and not term
        if trunc:
            obs, _ = env.reset()


def test_sb3_ppo_on_the_single_trading_env(bars):
    env = envs.TradingEnv(bars, window=8, episode_len=128)
    model = _ppo(env).learn(STEPS)
    assert model.num_timesteps >= STEPS
    assert np.isfinite(model.rollout_buffer.rewards).all() and np.abs(model.rollout_buffer.rewards).sum() > 0
    assert len(model.ep_info_buffer) >= STEPS // 128 - 1  # SB3's Monitor saw the episodes end
    assert all(np.isfinite(e["r"]) and e["l"] == 128 for e in model.ep_info_buffer)
    _acts_in(model, envs.TradingEnv(bars, window=8, split="val"))


def test_sb3_ppo_on_the_vector_trading_env(bars):
    venv = VecMonitor(TickgradVecEnv(envs.TradingVectorEnv(8, bars, window=8, episode_len=128, copy=True)))
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=128, n_epochs=2, policy_kwargs=dict(net_arch=[32, 32]),
                seed=0, device="cpu", verbose=0).learn(STEPS)
    assert model.num_timesteps >= STEPS
    assert np.isfinite(model.rollout_buffer.rewards).all() and np.abs(model.rollout_buffer.rewards).sum() > 0
    assert len(model.ep_info_buffer) >= 8 * (STEPS // (8 * 128)) - 8
    assert all(np.isfinite(e["r"]) and e["l"] == 128 for e in model.ep_info_buffer)
    _acts_in(model, envs.TradingEnv(bars, window=8, split="test"))
