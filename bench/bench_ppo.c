/* Benchmark case ppo_update: one PPO minibatch update (actor and critic 256-64-64 tanh, 3 actions, minibatch 256). */
#include <math.h>
#include <stdlib.h>
#include "bench.h"
#include "agents/ppo_internal.h"
#include "tickgrad/tickgrad.h"

#define MB 256
#define OBS 64
#define ACTIONS 3

/* A fixed minibatch: observations and advantages N(0, 1), actions uniform, old log-probabilities
 * near log(1/3) (ratios around 1, some clipped), returns and old values N(0, 1). */
static void fill_minibatch(rl_ppo_mb *mb) {
  for (int i = 0; i < MB * OBS; i++) mb->obs[i] = tg_rng_normal(9, 0, (uint64_t)i);
  for (int i = 0; i < MB; i++) {
    mb->action[i] = (int32_t)(tg_rng_uniform(9, 1, (uint64_t)i) * ACTIONS) % ACTIONS;
    mb->logp[i] = (float)(-log((double)ACTIONS) + 0.2 * tg_rng_normal(9, 2, (uint64_t)i));
    mb->adv[i] = tg_rng_normal(9, 3, (uint64_t)i);
    mb->ret[i] = tg_rng_normal(9, 4, (uint64_t)i);
    mb->value[i] = tg_rng_normal(9, 5, (uint64_t)i);
  }
}

static int ppo_one_step(void *ctx) { return rl_ppo_net_learn(ctx, NULL) != TG_OK; }

/* forward both networks, the fused PPO loss (clipped surrogate, clipped value loss, entropy, KL and
 * clip-fraction diagnostics), backward, global grad-norm clip 0.5, Adam (eps 1e-5) */
int bench_ppo_update(int warmup, int reps, double *median_us) {
  rl_ppo_net_cfg c = {0};
  c.dev = tg_cpu(0);
  c.obs_dim = OBS;
  c.n_actions = ACTIONS;
  c.n_hidden = 3;
  c.hidden[0] = 256;
  c.hidden[1] = 64;
  c.hidden[2] = 64;
  c.n_act = 1;
  c.mb = MB;
  c.coefs = (tg_ppo_coefs){0.2f, 0.5f, 0.01f, 1, 1};
  c.optim = tg_optim_defaults(TG_ADAM);
  c.optim.lr = 2.5e-4f;
  c.optim.eps = 1e-5f;
  c.optim.clip_norm = 0.5f;
  c.seed = 1;
  c.precision = bench_precision;
  rl_ppo_net n;
  if (rl_ppo_net_open(&n, &c) != TG_OK) return 1;
  fill_minibatch(&n.hb);
  int rc = bench_time_step("ppo_update", ppo_one_step, &n, &n.train, 1, warmup, reps, median_us);
  rl_ppo_net_close(&n);
  return rc;
}
