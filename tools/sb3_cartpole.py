"""stable-baselines3's DQN and PPO on gymnasium's CartPole-v1 with CleanRL's CartPole hyperparameters (the ones
tickgrad's defaults copy), for the side-by-side in docs/RL.md.

Prints one CSV row per run: algo, seed, env_steps, seconds, env_steps_per_s, mean_return_last100.
Run: .venv/bin/python tools/sb3_cartpole.py dqn|ppo [--seeds 1,2,3] [--steps 500000] [--threads 1]
Needs stable-baselines3 and gymnasium (pip install into .venv). Differences SB3 cannot be told to drop:
its DQN loss is Huber (CleanRL: MSE), and it always clips DQN gradients (max_grad_norm, set here so
large that it never acts).
"""
import argparse
import time

import torch


def make_dqn(seed):
    import gymnasium as gym
    from stable_baselines3 import DQN
    env = gym.make("CartPole-v1")
    return DQN("MlpPolicy", env, learning_rate=2.5e-4, buffer_size=10_000, learning_starts=10_000, batch_size=128,
               tau=1.0, gamma=0.99, train_freq=10, gradient_steps=1, target_update_interval=500,
               exploration_fraction=0.5, exploration_initial_eps=1.0, exploration_final_eps=0.05,
               max_grad_norm=1e10, policy_kwargs=dict(net_arch=[120, 84]), seed=seed, device="cpu", verbose=0)


def make_ppo(seed, steps):
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    env = make_vec_env("CartPole-v1", n_envs=4, seed=seed)
    return PPO("MlpPolicy", env, learning_rate=lambda left: 2.5e-4 * left, n_steps=128, batch_size=128, n_epochs=4,
               gamma=0.99, gae_lambda=0.95, clip_range=0.2, clip_range_vf=0.2, normalize_advantage=True,
               ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5,
               policy_kwargs=dict(net_arch=dict(pi=[64, 64], vf=[64, 64]), activation_fn=torch.nn.Tanh,
                                  ortho_init=True, optimizer_kwargs=dict(eps=1e-5)),
               seed=seed, device="cpu", verbose=0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("algo", choices=["dqn", "ppo"])
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--steps", type=int, default=500_000)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    print("algo, seed, env_steps, seconds, env_steps_per_s, mean_return_last100", flush=True)
    for seed in [int(s) for s in a.seeds.split(",")]:
        model = make_dqn(seed) if a.algo == "dqn" else make_ppo(seed, a.steps)
        t0 = time.perf_counter()
        model.learn(total_timesteps=a.steps)
        dt = time.perf_counter() - t0
        rets = [e["r"] for e in model.ep_info_buffer]  # the last 100 finished episodes
        mean = sum(rets) / len(rets) if rets else float("nan")
        print(f"sb3-{a.algo}, {seed}, {model.num_timesteps}, {dt:.1f}, {model.num_timesteps / dt:.0f}, {mean:.1f}",
              flush=True)


if __name__ == "__main__":
    main()
