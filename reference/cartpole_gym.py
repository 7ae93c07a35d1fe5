"""Writes data/cartpole_gym.csv: CartPole-v1 trajectories from gymnasium 0.29.1's own environment,
checked step by step against the update of models.md section 3.4, for tests/test_cartpole.c.

Three episodes, each from a state set on env.unwrapped after reset (so gymnasium's RNG plays no part):
  0  start (0.01, -0.02, 0.03, 0.04), actions a_t = 1 if t % 3 else 0, until termination;
  1  start (0, 0, 0, 0), always pushing right (action 1), until termination;
  2  start (0.01, -0.02, 0.03, 0.04), a balancing policy, until gymnasium's TimeLimit truncates at 500.
Values are float64 written with %.17g (they read back exactly); obs0..obs3 are the float32
observation gymnasium returned. Run: .venv/bin/python reference/cartpole_gym.py [golden.py]
With a path to cartpole_golden.py (default ../shared/reference/cartpole_golden.py when present),
its step function is checked too.
"""
import contextlib
import importlib.util
import io
import math
import os
import sys

import gymnasium as gym
import numpy as np

# models.md 3.4, in gymnasium's operation order
G, MC, MP, L, F, TAU = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
TM, PML = MP + MC, MP * L
TH_LIM, X_LIM = 12 * 2 * math.pi / 360, 2.4
START = (0.01, -0.02, 0.03, 0.04)
# The golden script rounds PML * thd * thd in another order than gymnasium. A balanced pole is
# unstable, so that last-bit difference grows about 40x every 50 steps (past 1e-12 near step 150): the
# golden update is compared on the first GOLDEN_STEPS steps of each episode, gymnasium's order on all.
GOLDEN_STEPS = 100


def euler_step(s, a):
    x, xd, th, thd = s
    f = F if a == 1 else -F
    c, si = math.cos(th), math.sin(th)
    temp = (f + PML * (thd * thd) * si) / TM
    thacc = (G * si - c * temp) / (L * (4.0 / 3.0 - MP * (c * c) / TM))
    xacc = temp - PML * thacc * c / TM
    s = (x + TAU * xd, xd + TAU * xacc, th + TAU * thd, thd + TAU * thacc)
    return s, s[0] < -X_LIM or s[0] > X_LIM or s[2] < -TH_LIM or s[2] > TH_LIM


def load_golden(path):
    """The golden script's step(s, a), or None. Importing it runs its prints: they are swallowed."""
    if not path or not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("cartpole_golden", path)
    mod = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(mod)
    return mod.step


def pattern(t, s):
    return 1 if t % 3 else 0


def push_right(t, s):
    return 1


def balance(t, s):
    x, xd, th, thd = s
    return 1 if th + 0.3 * thd + 0.03 * x + 0.2 * xd > 0 else 0


def run_episode(ep, start, policy, golden, rows, worst):
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    env.unwrapped.state = np.array(start, dtype=np.float64)
    mine, gold = tuple(start), tuple(start)
    t = 0
    while True:
        a = policy(t, tuple(float(v) for v in env.unwrapped.state))
        obs, reward, term, trunc, _ = env.step(a)
        state = tuple(float(v) for v in env.unwrapped.state)
        mine, my_term = euler_step(mine, a)
        assert my_term == term, f"episode {ep} step {t + 1}: termination differs"
        worst[0] = max(worst[0], max(abs(p - q) for p, q in zip(state, mine)))
        if golden and t < GOLDEN_STEPS:
            gold, g_term = golden(gold, a)
            assert g_term == term, f"episode {ep} step {t + 1}: golden termination differs"
            worst[1] = max(worst[1], max(abs(p - q) for p, q in zip(state, gold)))
        assert reward == 1.0
        rows.append((ep, t + 1, a) + state + tuple(float(o) for o in obs) + (reward, int(term), int(trunc)))
        t += 1
        if term or trunc:
            env.close()
            return t, term, trunc


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    golden_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "shared", "reference",
                                                                       "cartpole_golden.py")
    golden = load_golden(golden_path)
    rows, worst = [], [0.0, 0.0]
    runs = [(0, START, pattern), (1, (0.0, 0.0, 0.0, 0.0), push_right), (2, START, balance)]
    for ep, start, policy in runs:
        n, term, trunc = run_episode(ep, start, policy, golden, rows, worst)
        print(f"episode {ep}: {n} steps, terminated {term}, truncated {trunc}")
    assert rows[-1][-1] == 1 and sum(r[0] == 2 for r in rows) == 500, "episode 2 must truncate at 500"
    for w, what in ((worst[0], "models.md 3.4 update"), (worst[1], "cartpole_golden.py")):
        assert w <= 1e-12, f"gymnasium and the {what} differ by {w}"
    print(f"gymnasium vs models.md update: max |diff| {worst[0]:.3g}")
    print(f"gymnasium vs cartpole_golden.py: " + (f"max |diff| {worst[1]:.3g}" if golden else "not found, skipped"))
    out = os.path.join(here, "data", "cartpole_gym.csv")
    with open(out, "w") as f:
        f.write(f"# gymnasium {gym.__version__} CartPole-v1, written by reference/cartpole_gym.py\n")
        f.write("episode,t,action,x,x_dot,theta,theta_dot,obs0,obs1,obs2,obs3,reward,terminated,truncated\n")
        for r in rows:
            f.write(",".join(f"{v:.17g}" if isinstance(v, float) else str(v) for v in r) + "\n")
    print(f"wrote {len(rows)} steps to {out}")


if __name__ == "__main__":
    main()
