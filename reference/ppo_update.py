"""One PPO minibatch update in plain PyTorch (CleanRL's ppo.py): the twin of tickgrad's ppo_update.

The update tickgrad's rl_ppo_net_learn does (bench/bench_ppo.c times it): separate actor and critic
MLPs (tanh, CleanRL's layer_init: orthogonal weights with gain sqrt 2, actor head 0.01, critic
head 1, zero biases), a categorical policy over the logits, then on one minibatch
  ratio = exp(logp_new - logp_old), advantages normalised per minibatch (mean, std + 1e-8),
  pg_loss = mean(max(-A ratio, -A clamp(ratio, 1 - eps, 1 + eps))),
  v_loss = 0.5 mean(max((V - R)^2, (V_old + clamp(V - V_old, -eps, eps) - R)^2)),
  loss = pg_loss - ent_coef mean(entropy) + vf_coef v_loss,
with approx_kl and clipfrac under no_grad, backward, clip_grad_norm_(0.5), Adam(eps 1e-5).

Uses:
  bench/torch_cases.py's ppo_update calls make_step at the benchmark's thread count (64 -> 256 ->
    64 -> 64 -> 3 / 1, minibatch 256). Run alone it times that step:
      python reference/ppo_update.py time [--threads N] [--reps N]
  python reference/ppo_update.py write   writes reference/data/ppo_update.safetensors for
    tests/test_ppo.c: a small pair of networks (obs 5, hidden 16-16, 3 actions), a minibatch of 32,
    the loss parts of the first update, the gradients before clipping and the weights after three
    updates (CI does not run this; it needs torch and safetensors).
"""
import argparse
import math
import os
import statistics
import time

import torch

CLIP, VF, ENT, MAX_GRAD_NORM, LR, EPS = 0.2, 0.5, 0.01, 0.5, 2.5e-4, 1e-5


def mlp(obs, hidden, out, head_gain):
    """Linear/tanh layers as CleanRL's Agent, named like its nn.Sequential (0, 2, 4, ...)."""
    layers, width = [], obs
    for h in hidden:
        lin = torch.nn.Linear(width, h)
        torch.nn.init.orthogonal_(lin.weight, math.sqrt(2))
        torch.nn.init.constant_(lin.bias, 0.0)
        layers += [lin, torch.nn.Tanh()]
        width = h
    head = torch.nn.Linear(width, out)
    torch.nn.init.orthogonal_(head.weight, head_gain)
    torch.nn.init.constant_(head.bias, 0.0)
    layers.append(head)
    return torch.nn.Sequential(*layers)


class Agent(torch.nn.Module):
    def __init__(self, obs, hidden, actions):
        super().__init__()
        self.actor = mlp(obs, hidden, actions, 0.01)
        self.critic = mlp(obs, hidden, 1, 1.0)


def ppo_loss(agent, obs, actions, old_logp, adv, returns, old_values):
    """CleanRL's minibatch loss; returns (loss, pg_loss, v_loss, entropy, approx_kl, clipfrac)."""
    logits = agent.actor(obs)
    value = agent.critic(obs).view(-1)
    dist = torch.distributions.Categorical(logits=logits)
    newlogprob = dist.log_prob(actions)
    entropy = dist.entropy()
    logratio = newlogprob - old_logp
    ratio = logratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean()
        clipfrac = ((ratio - 1.0).abs() > CLIP).float().mean()
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg_loss = torch.max(-adv * ratio, -adv * torch.clamp(ratio, 1 - CLIP, 1 + CLIP)).mean()
    v_unclipped = (value - returns) ** 2
    v_clipped = old_values + torch.clamp(value - old_values, -CLIP, CLIP)
    v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - returns) ** 2).mean()
    ent = entropy.mean()
    loss = pg_loss - ENT * ent + v_loss * VF
    return loss, pg_loss, v_loss, ent, approx_kl, clipfrac


def update(agent, opt, mb):
    """One minibatch update: loss, backward, global grad-norm clip, Adam. Returns the loss parts."""
    parts = ppo_loss(agent, *mb)
    opt.zero_grad(set_to_none=True)
    parts[0].backward()
    torch.nn.utils.clip_grad_norm_(agent.parameters(), MAX_GRAD_NORM)
    opt.step()
    return parts


def minibatch(n, obs, actions, device="cpu", seed=9):
    """Observations, advantages, returns and old values N(0, 1); actions uniform; old log-probs
    near log(1/actions), so ratios sit around 1 and some are clipped."""
    g = torch.Generator().manual_seed(seed)
    o = torch.randn(n, obs, generator=g)
    a = torch.randint(0, actions, (n,), generator=g)
    lp = -math.log(actions) + 0.2 * torch.randn(n, generator=g)
    adv, ret, val = torch.randn(n, generator=g), torch.randn(n, generator=g), torch.randn(n, generator=g)
    return [t.to(device) for t in (o, a, lp, adv, ret, val)]


def make_step(compile_=False, device="cpu", batch=256, obs=64, hidden=(256, 64, 64), actions=3, wrap=None):
    """Returns step(): one update on a fixed minibatch (as the tickgrad case), returning the loss. wrap(f), when
    given, wraps the loss function (the benchmark's autocast)."""
    torch.manual_seed(1)
    agent = Agent(obs, hidden, actions).to(device)
    opt = torch.optim.Adam(agent.parameters(), lr=LR, eps=EPS)
    mb = minibatch(batch, obs, actions, device)
    loss_fn = torch.compile(ppo_loss) if compile_ else ppo_loss
    if wrap:
        loss_fn = wrap(loss_fn)

    def step():
        parts = loss_fn(agent, *mb)
        opt.zero_grad(set_to_none=True)
        parts[0].backward()
        torch.nn.utils.clip_grad_norm_(agent.parameters(), MAX_GRAD_NORM)
        opt.step()
        return parts[0]
    return step


def write_reference():
    from safetensors.torch import save_file
    torch.manual_seed(1234)
    torch.use_deterministic_algorithms(True)
    obs, hidden, actions, n, steps = 5, (16, 16), 3, 32, 3
    agent = Agent(obs, hidden, actions)
    opt = torch.optim.Adam(agent.parameters(), lr=1e-2, eps=EPS)  # a large lr so three steps move far
    mb = minibatch(n, obs, actions, seed=4)
    mb[4] = 3.0 * mb[4]  # returns far from the values: a gradient norm above the clip, so clipping acts
    out = {k: v.clone() for k, v in zip(("obs", "actions", "old_logp", "adv", "returns", "old_values"), mb)}
    out["actions"] = out["actions"].to(torch.int64)
    for name, p in agent.named_parameters():
        out[f"init.{name}"] = p.detach().clone()
    stats = []
    for step in range(steps):
        parts = ppo_loss(agent, *mb)
        opt.zero_grad(set_to_none=True)
        parts[0].backward()
        if step == 0:  # before clipping
            for name, p in agent.named_parameters():
                out[f"step0.grad.{name}"] = p.grad.detach().clone()
        norm = torch.nn.utils.clip_grad_norm_(agent.parameters(), MAX_GRAD_NORM)
        opt.step()
        stats.append([float(x.detach()) for x in parts] + [float(norm)])
    for name, p in agent.named_parameters():
        out[f"final.{name}"] = p.detach().clone()
    out["stats"] = torch.tensor(stats, dtype=torch.float32)  # [steps, 7]: the six loss parts, grad norm
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "ppo_update.safetensors")
    save_file({k: v.contiguous() for k, v in out.items()}, path,
              metadata={"torch": torch.__version__, "lr": "0.01", "adam_eps": str(EPS), "steps": str(steps),
                        "clip": str(CLIP), "vf_coef": str(VF), "ent_coef": str(ENT),
                        "max_grad_norm": str(MAX_GRAD_NORM)})
    print(f"wrote {path} (torch {torch.__version__}); stats per step {stats}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["time", "write"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--reps", type=int, default=500)
    a = ap.parse_args()
    if a.what == "write":
        write_reference()
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
    print(f"ppo_update {statistics.median(times):.3f}")


if __name__ == "__main__":
    main()
