/* Benchmark case dqn_step: one Double DQN training step (replay draw, target network, Huber, Adam) on the CPU. */
#include <stdlib.h>
#include "bench.h"
#include "agents/dqn_internal.h"
#include "tickgrad/tickgrad.h"

#define OBS 64        /* observation width (the issue fixes the network, not the input) */
#define ACTIONS 3
#define BATCH 64
#define CAPACITY 10000

/* A full replay buffer of random transitions: normal observations, uniform actions, normal rewards,
 * one in ten terminated. */
static void fill_replay(rl_replay *r) {
  for (int64_t i = 0; i < CAPACITY; i++) {
    float s[OBS], s2[OBS], rew = tg_rng_normal(5, 3, (uint64_t)i);
    int32_t a = (int32_t)(tg_rng_uniform(5, 2, (uint64_t)i) * ACTIONS);
    uint8_t term = tg_rng_uniform(5, 4, (uint64_t)i) < 0.1f;
    for (int k = 0; k < OBS; k++) {
      s[k] = tg_rng_normal(5, 0, (uint64_t)(i * OBS + k));
      s2[k] = tg_rng_normal(5, 1, (uint64_t)(i * OBS + k));
    }
    rl_replay_add(r, 1, s, s2, &a, &rew, &term);
  }
}

typedef struct dqn_ctx {
  rl_dqn_net net;
  rl_replay rb;
} dqn_ctx;

static int dqn_one_step(void *ctx) {
  dqn_ctx *d = ctx;
  float loss;
  return rl_dqn_net_learn(&d->net, &d->rb, &loss, NULL) != TG_OK;
}

int bench_dqn_step(int warmup, int reps, double *median_us) {
  rl_dqn_net_cfg c = {0};
  c.dev = tg_cpu(0);
  c.obs_dim = OBS;
  c.n_actions = ACTIONS;
  c.n_hidden = 3;
  c.hidden[0] = c.hidden[1] = c.hidden[2] = 256;
  c.batch = BATCH;
  c.n_act = 1;
  c.double_q = 1;
  c.huber = 1;
  c.gamma = 0.99f;
  c.optim = tg_optim_defaults(TG_ADAM);
  c.optim.lr = 2.5e-4f;
  c.seed = 1;
  c.precision = bench_precision;
  dqn_ctx d;
  if (rl_replay_init(&d.rb, CAPACITY, OBS, 1) != TG_OK) return 1;
  fill_replay(&d.rb);
  if (rl_dqn_net_open(&d.net, &c) != TG_OK) {
    rl_replay_free(&d.rb);
    return 1;
  }
  /* a step runs the training graph and the Double DQN target's two forward graphs */
  tg_graph *graphs[3] = {d.net.train, d.net.next, d.net.tgt};
  int rc = bench_time_step("dqn_step", dqn_one_step, &d, graphs, 3, warmup, reps, median_us);
  rl_dqn_net_close(&d.net);
  rl_replay_free(&d.rb);
  return rc;
}
