"""Environment steps per second from Python: tickgrad's C-stepped CartPole vector env against gymnasium's own
CartPole-v1 vector envs, at 1, 16 and 256 instances, with random actions drawn beforehand.

Peers: gymnasium.make_vec("CartPole-v1", num_envs=n) (CartPole registers a vector entry point: gymnasium's
numpy-vectorised CartPoleVectorEnv) and SyncVectorEnv over n gymnasium.make("CartPole-v1") for reference.
steps/s = instances x steps / seconds, best of several repetitions; the ratio is tickgrad over make_vec.

Usage: PYTHONPATH=python python bench/python_env_bench.py [--steps N] [--reps R] [--sizes 1,16,256]
"""
import argparse
import platform
import re
import sys
import time

import gymnasium
import numpy as np

from tickgrad import envs


def isa_line() -> str:
    try:
        flags = set()
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
        have = [x for x in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if x in flags]
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
        model = m.group(1).strip() if m else platform.processor()
    except OSError:
        have, model = [], platform.processor()
    return f"# CPU: {model}; ISA: {' '.join(have) if have else 'none of avx2/avx512f/avx512_bf16/amx_bf16'}"


class _RawStep:
    """The library env's own step (Env.step into the shared buffers), bypassing the gymnasium API."""

    def __init__(self, vec):
        self.vec = vec
        self.step = vec.library_env.step

    def reset(self, seed=None):
        self.vec.reset(seed=seed)
        self.step = self.vec.library_env.step


def steps_per_second(env, actions: np.ndarray, reps: int) -> float:
    """Best of reps timings of len(actions) vector steps; instances x steps / seconds."""
    n = actions.shape[1]
    best = float("inf")
    for _ in range(reps):
        env.reset(seed=0)
        step = env.step
        t0 = time.perf_counter()
        for a in actions:
            step(a)
        best = min(best, time.perf_counter() - t0)
    return n * len(actions) / best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=0, help="vector steps per repetition (default: 2000, 256 at n 256 "
                    "for the Sync peer)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sizes", default="1,16,256")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(isa_line())
    print("# command: PYTHONPATH=python " + " ".join([sys.executable.split("/")[-1]] + sys.argv))
    print(f"# gymnasium {gymnasium.__version__}, numpy {np.__version__}, python {platform.python_version()}")
    probe = gymnasium.make_vec("CartPole-v1", num_envs=2)
    mode = probe.unwrapped.spec.kwargs.get("vectorization_mode") if probe.unwrapped.spec else "?"
    print(f"# gymnasium.make_vec('CartPole-v1') gives {type(probe.unwrapped).__module__}."
          f"{type(probe.unwrapped).__name__} (vectorization_mode {mode!r})")
    probe.close()
    print("# C step only: tickgrad's library step called alone from Python (no gymnasium API, no infos), the most "
          "the gymnasium API over it can reach")
    print(f"{'n':>5} {'tickgrad steps/s':>17} {'C step only':>14} {'make_vec steps/s':>17} {'Sync steps/s':>14} "
          f"{'ratio vs make_vec':>18} {'ratio vs Sync':>14}")
    rng = np.random.default_rng(0)
    for n in sizes:
        steps = args.steps or 2000
        actions = rng.integers(0, 2, (steps, n)).astype(np.int32)
        actions64 = actions.astype(np.int64)
        tg = envs.CartPoleVectorEnv(n, seed=0)
        tg_sps = steps_per_second(tg, actions, args.reps)
        c_sps = steps_per_second(_RawStep(tg), actions, args.reps)
        mv = gymnasium.make_vec("CartPole-v1", num_envs=n)
        mv_sps = steps_per_second(mv, actions64, args.reps)
        mv.close()
        sync_steps = min(steps, max(200, 50000 // n))
        sync = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1") for _ in range(n)])
        sync_sps = steps_per_second(sync, actions64[:sync_steps], max(2, args.reps // 2))
        sync.close()
        print(f"{n:>5} {tg_sps:>17,.0f} {c_sps:>14,.0f} {mv_sps:>17,.0f} {sync_sps:>14,.0f} {tg_sps / mv_sps:>17.1f}x "
              f"{tg_sps / sync_sps:>13.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
