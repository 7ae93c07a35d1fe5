"""One Double DQN training step in plain PyTorch: the twin of tickgrad's dqn_step benchmark case.

The same step as bench/bench_rl_step.c (tickgrad's rl_dqn_net_learn): draw a batch of 64 with
replacement from a full replay buffer of 10,000 random transitions, the Double DQN target
y = r + gamma * (1 - terminated) * Q_target(s', argmax_a Q(s', a)) without gradients, Q(s, a) of the
online network, the Huber loss (delta 1), backward, Adam. Q-network 64 -> 256 -> 256 -> 256 -> 3,
ReLU, PyTorch's default Linear init; the target network starts as a copy.

bench/torch_cases.py's dqn_step calls make_step at the benchmark's thread count. Run alone it times
the step:  python reference/dqn_step.py [--threads N] [--reps N]

With --write-reference it instead writes reference/data/dqn_step.safetensors for tests/test_dqn.c: a
small Q-network (4 -> 16 -> 16 -> 3) trained three Double DQN + Huber + Adam steps on stored batches,
with a Polyak target update (tau 0.5) after the second; the test replays it in tickgrad from the
stored initial weights and must match every loss and the final online and target weights.
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

OBS, HIDDEN, ACTIONS, BATCH, CAPACITY = 64, (256, 256, 256), 3, 64, 10000


def q_network():
    layers, width = [], OBS
    for h in HIDDEN:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    layers.append(torch.nn.Linear(width, ACTIONS))
    return torch.nn.Sequential(*layers)


def replay(device="cpu"):
    """A full buffer of random transitions: normal observations and rewards, one in ten terminated."""
    g = torch.Generator().manual_seed(5)
    obs = torch.randn(CAPACITY, OBS, generator=g)
    next_obs = torch.randn(CAPACITY, OBS, generator=g)
    actions = torch.randint(0, ACTIONS, (CAPACITY,), generator=g)
    rewards = torch.randn(CAPACITY, generator=g)
    terminated = (torch.rand(CAPACITY, generator=g) < 0.1).float()
    return [t.to(device) for t in (obs, next_obs, actions, rewards, terminated)]


def make_step(compile_=False, device="cpu", batch=BATCH, gamma=0.99, lr=2.5e-4, wrap=None):
    """Returns step(): one full training step, returning the loss tensor. wrap(f), when given, wraps the forward
    and loss (the benchmark's autocast)."""
    torch.manual_seed(1)
    q = q_network().to(device)
    target = q_network().to(device)
    target.load_state_dict(q.state_dict())
    opt = torch.optim.Adam(q.parameters(), lr=lr)  # eps 1e-8, as tickgrad's default
    obs, next_obs, actions, rewards, terminated = replay(device)

    def loss_of(s, s2, a, r, d):
        with torch.no_grad():
            a2 = q(s2).argmax(dim=1, keepdim=True)                # online net picks the action
            v2 = target(s2).gather(1, a2).squeeze(1)              # target net values it
            y = r + gamma * v2 * (1.0 - d)
        q_sa = q(s).gather(1, a.unsqueeze(1)).squeeze(1)
        return F.smooth_l1_loss(q_sa, y)                          # Huber, delta 1

    fwd = torch.compile(loss_of) if compile_ else loss_of
    if wrap:
        fwd = wrap(fwd)

    def step():
        idx = torch.randint(0, CAPACITY, (batch,), device=device)  # uniform, with replacement
        loss = fwd(obs[idx], next_obs[idx], actions[idx], rewards[idx], terminated[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss
    return step


def write_reference(path):
    """Initial weights, three batches, the three losses and the final weights of a small run."""
    import copy
    from safetensors.torch import save_file
    torch.manual_seed(1234)
    obs, hidden, acts, batch, gamma, lr, tau = 4, (16, 16), 3, 8, 0.99, 1e-2, 0.5
    layers, width = [], obs
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    layers.append(torch.nn.Linear(width, acts))
    q = torch.nn.Sequential(*layers)
    target = copy.deepcopy(q)
    opt = torch.optim.Adam(q.parameters(), lr=lr)
    out = {f"init.q.{k}": v.detach().clone() for k, v in q.state_dict().items()}
    losses = []
    for k in range(3):
        s, s2 = torch.randn(batch, obs), torch.randn(batch, obs)
        a = torch.randint(0, acts, (batch,))
        r = torch.randn(batch)
        d = (torch.arange(batch) % 4 == 3).float()  # two terminated rows
        out.update({f"b{k}.s": s, f"b{k}.s2": s2, f"b{k}.a": a.to(torch.int32), f"b{k}.r": r, f"b{k}.d": d})
        with torch.no_grad():
            y = r + gamma * target(s2).gather(1, q(s2).argmax(dim=1, keepdim=True)).squeeze(1) * (1.0 - d)
        loss = F.smooth_l1_loss(q(s).gather(1, a.unsqueeze(1)).squeeze(1), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if k == 1:  # Polyak, as CleanRL writes it
            for tp, qp in zip(target.parameters(), q.parameters()):
                tp.data.copy_(tau * qp.data + (1.0 - tau) * tp.data)
    out.update({f"final.q.{k}": v.detach().clone() for k, v in q.state_dict().items()})
    out.update({f"final_target.q.{k}": v.detach().clone() for k, v in target.state_dict().items()})
    out["losses"] = torch.tensor(losses, dtype=torch.float32)
    save_file({k: v.contiguous() for k, v in out.items()}, path, metadata={"written_by": "reference/dqn_step.py"})
    print(f"wrote {path}: losses {losses}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write-reference", action="store_true",
                    help="write reference/data/dqn_step.safetensors for tests/test_dqn.c and exit")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--reps", type=int, default=500)
    a = ap.parse_args()
    if a.write_reference:
        import os
        write_reference(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "dqn_step.safetensors"))
        return
    torch.set_num_threads(a.threads)
    step = make_step()
    for _ in range(a.warmup):
        step()
    times = []
    for _ in range(a.reps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e6)
    print(f"dqn_step {statistics.median(times):.3f}")


if __name__ == "__main__":
    main()
