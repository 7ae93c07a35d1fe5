/* Benchmark case dqn_step: one Double DQN training step (replay draw, target network, Huber, Adam) on the CPU. */
#include <stdlib.h>
#include "bench.h"
#include "agents/rl_internal.h"
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
  rl_dqn_net net;
  rl_replay rb;
  double *times = malloc(sizeof(double) * (size_t)reps);
  if (!times || rl_replay_init(&rb, CAPACITY, OBS, 1) != TG_OK) return 1;
  fill_replay(&rb);
  if (rl_dqn_net_open(&net, &c) != TG_OK) return 1;
  for (int r = -warmup; r < reps; r++) {
    double t0 = bench_now_us();
    float loss;
    if (rl_dqn_net_learn(&net, &rb, &loss, NULL) != TG_OK) return 1;
    if (r >= 0) times[r] = bench_now_us() - t0;
  }
  *median_us = bench_median(times, reps);
  rl_dqn_net_close(&net);
  rl_replay_free(&rb);
  free(times);
  return 0;
}
