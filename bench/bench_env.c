/* Benchmark cases env_*: one vectorised step of CartPole and of the trading env (synthetic market), 1 and 64 instances. */
#include <stdint.h>
#include <stdlib.h>
#include "bench.h"
#include "tickgrad/rl.h"
#include "tickgrad/synth.h"

/* Times `reps` blocks of vectorised steps (each block 4096 / n steps, at least 1) after `warmup`
 * blocks; *median_us is the median time of one vectorised step. Actions follow a fixed pattern;
 * every output is written (final_obs, episode returns and lengths included), as an agent asks. */
static int time_env(tg_env *e, int warmup, int reps, double *median_us) {
  tg_env_spec sp = tg_env_spec_of(e);
  size_t n = (size_t)sp.n, od = (size_t)sp.obs_dim;
  int inner = 4096 / sp.n > 0 ? 4096 / sp.n : 1;
  float *obs = malloc(n * od * sizeof(float)), *fin = malloc(n * od * sizeof(float)), *rew = malloc(n * sizeof(float));
  uint8_t *term = malloc(n), *trunc = malloc(n);
  double *ret = malloc(n * sizeof(double)), *times = malloc((size_t)reps * sizeof(double));
  int32_t *len = malloc(n * sizeof(int32_t)), *acts = malloc((size_t)inner * n * sizeof(int32_t));
  int rc = 1;
  if (!obs || !fin || !rew || !term || !trunc || !ret || !times || !len || !acts) goto done;
  for (int k = 0; k < inner; k++)
    for (size_t i = 0; i < n; i++) acts[(size_t)k * n + i] = (int32_t)(((unsigned)k / 3 + (unsigned)i) % (unsigned)sp.n_actions);
  tg_env_out out = {obs, fin, rew, term, trunc, ret, len};
  if (tg_env_reset(e, obs) != TG_OK) goto done;
  for (int r = -warmup; r < reps; r++) {
    double t0 = bench_now_us();
    for (int k = 0; k < inner; k++)
      if (tg_env_step(e, acts + (size_t)k * n, &out) != TG_OK) goto done;
    if (r >= 0) times[r] = (bench_now_us() - t0) / inner;
  }
  *median_us = bench_median(times, reps);
  rc = 0;
done:
  free(obs);
  free(fin);
  free(rew);
  free(term);
  free(trunc);
  free(ret);
  free(times);
  free(len);
  free(acts);
  return rc;
}

static int bench_cartpole(int n, int warmup, int reps, double *median_us) {
  tg_env *e;
  if (tg_env_cartpole_new(n, 1, 500, &e) != TG_OK) return 1;
  int rc = time_env(e, warmup, reps, median_us);
  tg_env_free(e);
  return rc;
}

/* The default synthetic market (10,000 one-minute bars), default env: window 32 x 16 features, training segments. */
static int bench_trading(int n, int warmup, int reps, double *median_us) {
  tg_synth_config sc = tg_synth_defaults();
  tg_bars b;
  if (tg_synth_generate(&sc, &b) != TG_OK) return 1;
  tg_trading_cfg c = tg_trading_defaults();
  tg_env *e;
  tg_status st = tg_env_trading_new(n, &b, &c, &e);
  tg_bars_free(&b);
  if (st != TG_OK) return 1;
  int rc = time_env(e, warmup, reps, median_us);
  tg_env_free(e);
  return rc;
}

int bench_env_cartpole_1(int warmup, int reps, double *median_us) { return bench_cartpole(1, warmup, reps, median_us); }
int bench_env_cartpole_64(int warmup, int reps, double *median_us) { return bench_cartpole(64, warmup, reps, median_us); }
int bench_env_trading_1(int warmup, int reps, double *median_us) { return bench_trading(1, warmup, reps, median_us); }
int bench_env_trading_64(int warmup, int reps, double *median_us) { return bench_trading(64, warmup, reps, median_us); }
