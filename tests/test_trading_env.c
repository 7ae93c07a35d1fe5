/* The trading env: rewards by hand (fills at the next open, costs), no look-ahead, segments and truncation,
 * in-order evaluation, the statistics, continuous actions, errors, no heap calls per step, a planted edge. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "env/env_internal.h"
#include "support/check.h"
#include "support/heap_count.h"
#include "tickgrad/rl.h"
#include "tickgrad/synth.h"


#define DAY_NS (86400LL * 1000000000LL)
#define NBARS 80

/* Hand-made daily bars: wavy opens, closes away from the next open (gaps), so a fill at the close
 * and a fill at the next open give different rewards. */
static void hand_bars(tg_bars *b, int n) {
  tg_bars_init(b);
  for (int r = 0; r < n; r++) {
    double o = 100.0 * exp(0.02 * sin(1.7 * r) + 0.001 * r), c = o * exp(0.004 * cos(0.9 * r) + 0.001);
    double h = fmax(o, c) * 1.002, l = fmin(o, c) * 0.998;
    CHECK_OK(tg_bars_push(b, 1700000000LL * 1000000000LL + r * DAY_NS, o, h, l, c, 1000.0 + r, 0));
  }
}

/* Output buffers for n instances of obs_dim floats. */
typedef struct bufs {
  int n, od;
  float *obs, *final_obs, *reward;
  uint8_t *term, *trunc;
  double *ep_return;
  int32_t *ep_length;
  tg_env_out out;
} bufs;

static void bufs_new(bufs *b, const tg_env *e) {
  tg_env_spec sp = tg_env_spec_of(e);
  b->n = sp.n;
  b->od = sp.obs_dim;
  size_t m = (size_t)sp.n, o = m * (size_t)sp.obs_dim;
  b->obs = calloc(o, sizeof(float));
  b->final_obs = calloc(o, sizeof(float));
  b->reward = calloc(m, sizeof(float));
  b->term = calloc(m, 1);
  b->trunc = calloc(m, 1);
  b->ep_return = calloc(m, sizeof(double));
  b->ep_length = calloc(m, sizeof(int32_t));
  b->out = (tg_env_out){b->obs, b->final_obs, b->reward, b->term, b->trunc, b->ep_return, b->ep_length};
}

static void bufs_free(bufs *b) {
  free(b->obs);
  free(b->final_obs);
  free(b->reward);
  free(b->term);
  free(b->trunc);
  free(b->ep_return);
  free(b->ep_length);
}

static tg_trading_cfg hand_cfg(void) {
  tg_trading_cfg c = tg_trading_defaults();
  c.window = 3;
  c.features = "logret,range";
  c.cost_bps = 10.0;      /* 1e-3 */
  c.slippage = 0.0005;    /* cost per unit traded: 0.0015 */
  c.episode_len = 100000; /* the whole training split, from its first decision bar */
  return c;
}

/* Rewards by hand: a decision at t fills at open[t+1] and earns p * log(open[t+2] / open[t+1]). */
static void test_rewards(void) {
  tg_bars b;
  hand_bars(&b, NBARS);
  tg_trading_cfg c = hand_cfg();
  tg_env *e = NULL;
  CHECK_OK(tg_env_trading_new(1, &b, &c, &e));
  if (!e) return;
  tg_trading_info in;
  CHECK_OK(tg_env_trading_info(e, &in));
  CHECK(in.window == 3 && in.f == 2 && in.rows == NBARS && in.episode_len == in.steps && in.steps >= 12);
  CHECK(fabs(in.cost - 0.0015) < 1e-15);
  tg_env_spec sp = tg_env_spec_of(e);
  CHECK(sp.obs_dim == 3 * 2 + 2 && sp.n_actions == 3);
  bufs o;
  bufs_new(&o, e);
  CHECK_OK(tg_env_reset(e, o.obs));
  const tg_tensor *fx = tg_env_trading_features(e);
  CHECK(fx && fx->shape[0] == NBARS && fx->shape[1] == 2);
  /* actions: 0 short, 1 flat, 2 long */
  static const int32_t acts[] = {1, 2, 2, 1, 1, 0, 2, 2, 0, 1, 0, 0};
  int n_acts = (int)(sizeof acts / sizeof acts[0]);
  double p_old = 0, ret = 0, worst = 0;
  int64_t entry = -1;
  for (int k = 0; k < n_acts; k++) {
    int64_t t;
    CHECK_OK(tg_env_trading_bar(e, 0, &t, NULL));
    CHECK(t == in.first_bar + k);
    /* the observation at t: feature rows t-2..t, the position held, its unrealised return */
    const float *x = (const float *)fx->data;
    CHECK(memcmp(o.obs, x + (t - 2) * 2, 6 * sizeof(float)) == 0);
    CHECK(o.obs[6] == (float)p_old);
    double unreal = p_old != 0 ? p_old * log(b.close[t] / b.open[entry]) : 0.0;
    CHECK_MSG(fabsf(o.obs[7] - (float)unreal) <= 1e-7f, "step %d: unrealised %g, expected %g", k, o.obs[7], unreal);
    double p = acts[k] - 1;
    double want = p * log(b.open[t + 2] / b.open[t + 1]) - 0.0015 * fabs(p - p_old);
    double at_close = p * log(b.close[t + 1] / b.close[t]) - 0.0015 * fabs(p - p_old); /* the wrong fill */
    CHECK_OK(tg_env_step(e, &acts[k], &o.out));
    CHECK_MSG(fabs(o.reward[0] - want) <= 1e-7, "step %d: reward %.9g, expected %.9g", k, o.reward[0], want);
    if (p != 0) CHECK(fabs(want - at_close) > 1e-3); /* so a fill at the close would fail the check above */
    if (p == 0 && p_old == 0) CHECK(o.reward[0] == 0.0f);
    if (k == 8) /* long -> short: two units of turnover */
      CHECK(acts[7] == 2 && fabs(o.reward[0] - (-log(b.open[t + 2] / b.open[t + 1]) - 2 * 0.0015)) <= 1e-7);
    if (p != p_old) entry = t + 1;
    ret += want;
    worst = fmax(worst, fabs(o.reward[0] - want));
    p_old = p;
    CHECK(!o.term[0] && !o.trunc[0] && o.ep_length[0] == 0);
  }
  /* run to the end of the split: the episode's return is the sum of the rewards */
  int32_t flat = 1;
  int64_t steps = n_acts;
  while (!o.trunc[0] && steps < in.steps + 5) {
    CHECK_OK(tg_env_step(e, &flat, &o.out));
    if (steps == n_acts) ret += -0.0015 * fabs(p_old); /* closing the position */
    steps++;
  }
  CHECK(steps == in.steps && o.ep_length[0] == in.steps);
  CHECK_MSG(fabs(o.ep_return[0] - ret) < 1e-12, "episode return %.15g, expected %.15g", o.ep_return[0], ret);
  printf("rewards: %lld decisions, max |reward - by hand| %.3g\n", (long long)steps, worst);
  bufs_free(&o);
  tg_env_free(e);
  tg_bars_free(&b);
}

/* Long through the first decisions of the test split, with and without costs, step by step. */
static void test_costs(void) {
  tg_bars b;
  hand_bars(&b, NBARS);
  tg_trading_cfg c = hand_cfg();
  c.split = TG_TEST;
  for (int with_cost = 0; with_cost < 2; with_cost++) {
    c.cost_bps = with_cost ? 2.5 : 0.0;
    c.slippage = 0.0;
    tg_env *e = NULL;
    CHECK_OK(tg_env_trading_new(1, &b, &c, &e));
    if (!e) continue;
    tg_trading_info in;
    CHECK_OK(tg_env_trading_info(e, &in));
    bufs o;
    bufs_new(&o, e);
    CHECK_OK(tg_env_reset(e, o.obs));
    int64_t t = in.first_bar;
    int32_t a[3] = {2, 2, 0}; /* long, long, short */
    double cost = with_cost ? 2.5e-4 : 0.0;
    double want[3] = {log(b.open[t + 2] / b.open[t + 1]) - cost, log(b.open[t + 3] / b.open[t + 2]),
                      -log(b.open[t + 4] / b.open[t + 3]) - 2 * cost};
    for (int k = 0; k < 3; k++) {
      CHECK_OK(tg_env_step(e, &a[k], &o.out));
      CHECK_MSG(fabs(o.reward[0] - want[k]) <= 1e-7, "cost %g step %d: %.9g vs %.9g", cost, k, o.reward[0], want[k]);
    }
    bufs_free(&o);
    tg_env_free(e);
  }
  tg_bars_free(&b);
}

/* The observation at t does not change when every bar after t does (t in the test split, so the
 * normalisation, fitted on the training split, is the same). */
static void test_no_lookahead(void) {
  tg_bars a, b;
  hand_bars(&a, NBARS);
  hand_bars(&b, NBARS);
  tg_trading_cfg c = hand_cfg();
  c.split = TG_TEST;
  tg_env *ea = NULL, *eb = NULL;
  CHECK_OK(tg_env_trading_new(1, &a, &c, &ea));
  if (!ea) return;
  tg_trading_info in;
  CHECK_OK(tg_env_trading_info(ea, &in));
  int64_t t0 = in.first_bar + 3;
  for (int64_t r = t0 + 1; r < NBARS; r++) { /* a different future: every price after t0 moves */
    double f = exp(0.05 * cos(3.1 * (double)r));
    b.open[r] *= f;
    b.high[r] *= f * 1.01;
    b.low[r] *= f * 0.99;
    b.close[r] *= f * 1.003;
    b.volume[r] += 777;
  }
  CHECK_OK(tg_env_trading_new(1, &b, &c, &eb));
  if (!eb) return;
  bufs oa, ob;
  bufs_new(&oa, ea);
  bufs_new(&ob, eb);
  CHECK_OK(tg_env_reset(ea, oa.obs));
  CHECK_OK(tg_env_reset(eb, ob.obs));
  int32_t acts[4] = {2, 0, 2, 2};
  int same_before = 1;
  for (int k = 0; k < 4; k++) {
    same_before &= memcmp(oa.obs, ob.obs, sizeof(float) * (size_t)oa.od) == 0;
    CHECK_OK(tg_env_step(ea, &acts[k], &oa.out));
    CHECK_OK(tg_env_step(eb, &acts[k], &ob.out));
  }
  int64_t ta, tb;
  CHECK_OK(tg_env_trading_bar(ea, 0, &ta, NULL));
  CHECK_OK(tg_env_trading_bar(eb, 0, &tb, NULL));
  CHECK(ta == t0 + 1 && tb == t0 + 1);
  CHECK_MSG(same_before, "an observation at or before bar %lld changed with the bars after it", (long long)t0);
  /* the rewards of the last two steps read open[t0+1], open[t0+2]: those differ, as they should */
  CHECK(oa.reward[0] != ob.reward[0]);
  /* and the observation at t0+1 sees bar t0+1 */
  CHECK(memcmp(oa.obs, ob.obs, sizeof(float) * (size_t)oa.od) != 0);
  bufs_free(&oa);
  bufs_free(&ob);
  tg_env_free(ea);
  tg_env_free(eb);
  tg_bars_free(&a);
  tg_bars_free(&b);
}

static tg_status synth_bars(double signal, uint64_t seed, int64_t n, tg_bars *out) {
  tg_synth_config s = tg_synth_defaults();
  s.signal = signal;
  s.seed = seed;
  s.bars = n;
  return tg_synth_generate(&s, out);
}

/* Training episodes: random contiguous segments of episode_len decisions inside the training split,
 * truncated at their end, instance i's segments the same for any n; no heap calls per step. */
static void test_segments(void) {
  tg_bars b;
  CHECK_OK(synth_bars(0.0, 3, 3000, &b));
  tg_trading_cfg c = tg_trading_defaults();
  c.window = 8;
  c.episode_len = 50;
  c.seed = 17;
  tg_env *e4 = NULL, *e1 = NULL;
  CHECK_OK(tg_env_trading_new(4, &b, &c, &e4));
  CHECK_OK(tg_env_trading_new(1, &b, &c, &e1));
  if (!e4 || !e1) return;
  tg_trading_info in;
  CHECK_OK(tg_env_trading_info(e4, &in));
  CHECK(in.episode_len == 50 && in.steps > 1000 && in.f == 16);
  CHECK(tg_env_spec_of(e4).obs_dim == 8 * 16 + 2);
  bufs o4, o1;
  bufs_new(&o4, e4);
  bufs_new(&o1, e1);
  long heap0 = tg_test_heap_calls();
  CHECK_OK(tg_env_reset(e4, o4.obs));
  CHECK_OK(tg_env_reset(e1, o1.obs));
  int64_t rows[4], prev[4], start[4], row1;
  CHECK_OK(tg_env_trading_rows(e4, rows));
  for (int i = 0; i < 4; i++) prev[i] = start[i] = rows[i];
  int bad_order = 0, bad_range = 0, episodes = 0, bad_len = 0, n_mismatch = 0, distinct = 0;
  int64_t seen_starts[64];
  for (int s = 0; s < 1000; s++) {
    int32_t a[4];
    for (int i = 0; i < 4; i++) a[i] = (int32_t)((s / 7 + i) % 3);
    CHECK_OK(tg_env_step(e4, a, &o4.out));
    CHECK_OK(tg_env_step(e1, a, &o1.out));
    CHECK_OK(tg_env_trading_rows(e4, rows));
    CHECK_OK(tg_env_trading_bar(e1, 0, &row1, NULL));
    n_mismatch += row1 != rows[0] || o1.reward[0] != o4.reward[0] ||
                  memcmp(o1.obs, o4.obs, sizeof(float) * (size_t)o1.od) != 0;
    for (int i = 0; i < 4; i++) {
      if (o4.term[i]) bad_order++;
      if (o4.trunc[i]) {
        episodes++;
        bad_len += o4.ep_length[i] != 50 || prev[i] != start[i] + 49;
        bad_range += start[i] < in.first_bar || start[i] + 49 > in.last_bar;
        if (distinct < 64) seen_starts[distinct++] = start[i];
        start[i] = rows[i];
        /* the fresh episode is flat; final_obs holds the old one's last observation */
        bad_order += o4.obs[(size_t)i * (size_t)o4.od + (size_t)o4.od - 2] != 0.0f;
      } else {
        bad_order += rows[i] != prev[i] + 1;
      }
      prev[i] = rows[i];
    }
  }
  long heap = tg_test_heap_calls() - heap0;
  CHECK_MSG(heap == 0, "%ld heap calls in reset and 2000 steps", heap);
  CHECK_MSG(episodes == 80, "%d episodes in 1000 steps of 4 instances, expected 80", episodes);
  CHECK(bad_order == 0 && bad_range == 0 && bad_len == 0);
  CHECK_MSG(n_mismatch == 0, "instance 0 differs between n = 1 and n = 4 in %d steps", n_mismatch);
  int dup = 0;
  for (int i = 0; i < distinct; i++)
    for (int j = 0; j < i; j++) dup += seen_starts[i] == seen_starts[j];
  CHECK_MSG(dup <= 2, "%d repeated segment starts among %d", dup, distinct);
  bufs_free(&o4);
  bufs_free(&o1);
  tg_env_free(e4);
  tg_env_free(e1);
  tg_bars_free(&b);
}

/* Evaluation: every decision bar of the split once, in order, then truncation and a restart; always
 * long gives buy and hold's statistics. */
static void test_eval_order(void) {
  tg_bars b;
  CHECK_OK(synth_bars(0.0, 5, 3000, &b));
  tg_trading_cfg c = tg_trading_defaults();
  c.window = 16;
  c.split = TG_VAL;
  tg_env *e = NULL;
  CHECK_OK(tg_env_trading_new(1, &b, &c, &e));
  if (!e) return;
  tg_trading_info in;
  CHECK_OK(tg_env_trading_info(e, &in));
  CHECK(in.episode_len == in.steps && in.steps > 300);
  bufs o;
  bufs_new(&o, e);
  CHECK_OK(tg_env_reset(e, o.obs));
  tg_trading_stats st;
  CHECK_STATUS(tg_env_trading_episode_stats(e, 0, &st), TG_ERR_INVALID);
  int64_t expect = in.first_bar, visited = 0, bad = 0, prev_ts = INT64_MIN;
  int32_t longa = 2;
  double sum = 0;
  for (;;) {
    int64_t row, ts;
    CHECK_OK(tg_env_trading_bar(e, 0, &row, &ts));
    bad += row != expect || ts != b.ts[row] || ts <= prev_ts;
    prev_ts = ts;
    CHECK_OK(tg_env_step(e, &longa, &o.out));
    sum += o.reward[0];
    visited++;
    expect++;
    if (o.trunc[0]) break;
    if (visited > in.steps) break;
  }
  CHECK_MSG(visited == in.steps && bad == 0, "visited %lld of %lld bars, %lld out of order", (long long)visited,
            (long long)in.steps, (long long)bad);
  CHECK(expect == in.last_bar + 1);
  int64_t row;
  CHECK_OK(tg_env_trading_bar(e, 0, &row, NULL));
  CHECK(row == in.first_bar); /* autoreset: the split again from its start */
  CHECK_OK(tg_env_trading_episode_stats(e, 0, &st));
  CHECK(st.steps == in.steps && st.trades == 1 && st.turnover == 1.0 && st.exposure == 1.0);
  CHECK_MSG(fabs(st.total_log_return - o.ep_return[0]) < 1e-12, "%.15g vs %.15g", st.total_log_return, o.ep_return[0]);
  CHECK(fabs(st.total_log_return - sum) < 1e-4);
  CHECK_MSG(fabs(st.sharpe - st.bh_sharpe) < 1e-9 && fabs(st.total_log_return - st.bh_log_return) < 1e-12,
            "always long: sharpe %g vs buy and hold %g", st.sharpe, st.bh_sharpe);
  /* the market's own log return over those opens, less one entry cost */
  double mkt = log(b.open[in.last_bar + 2] / b.open[in.first_bar + 1]) - 1e-4;
  CHECK_MSG(fabs(st.bh_log_return - mkt) < 1e-9, "%.12g vs %.12g", st.bh_log_return, mkt);
  /* 1-minute bars, 390 a day on weekdays: roughly 252 * 390 bars a year */
  CHECK_MSG(st.bars_per_year > 0.7 * 252 * 390 && st.bars_per_year < 1.3 * 252 * 390, "%g bars a year", st.bars_per_year);
  bufs_free(&o);
  tg_env_free(e);
  tg_bars_free(&b);
}

/* tg_trading_stats_compute on a series worked out by hand. */
static void test_stats_known(void) {
  const double r[4] = {0.01, -0.005, 0.02, 0.0}, p[4] = {1, 1, -1, 0}, bh[4] = {0.01, -0.005, -0.02, 0.003};
  tg_trading_stats s;
  CHECK_OK(tg_trading_stats_compute(r, p, bh, 4, 252, &s));
  CHECK(s.steps == 4 && s.trades == 3 && s.turnover == 4.0 && s.exposure == 0.75);
  CHECK(fabs(s.total_log_return - 0.025) < 1e-15 && fabs(s.bh_log_return - -0.012) < 1e-15);
  CHECK_MSG(fabs(s.sharpe - 8.9490080882023939) < 1e-9, "sharpe %.12g", s.sharpe);
  CHECK_MSG(fabs(s.bh_sharpe - -3.6963022877478022) < 1e-9, "bh sharpe %.12g", s.bh_sharpe);
  const double zero[3] = {0, 0, 0};
  CHECK_OK(tg_trading_stats_compute(zero, zero, zero, 3, 252, &s));
  CHECK(s.sharpe == 0 && s.trades == 0 && s.exposure == 0);
  CHECK_STATUS(tg_trading_stats_compute(r, p, bh, 0, 252, &s), TG_ERR_INVALID);
}

/* Continuous target positions: clipped to [-1, 1], scaled rewards and costs, NaN refused. */
static void test_continuous(void) {
  tg_bars b;
  hand_bars(&b, NBARS);
  tg_trading_cfg c = hand_cfg();
  c.continuous = 1;
  c.split = TG_VAL;
  tg_env *e = NULL;
  CHECK_OK(tg_env_trading_new(2, &b, &c, &e));
  if (!e) return;
  tg_env_spec sp = tg_env_spec_of(e);
  CHECK(sp.n_actions == 0 && sp.action_lo == -1.0f && sp.action_hi == 1.0f);
  tg_trading_info in;
  CHECK_OK(tg_env_trading_info(e, &in));
  bufs o;
  bufs_new(&o, e);
  CHECK_OK(tg_env_reset(e, o.obs));
  int64_t t = in.first_bar;
  double lr = log(b.open[t + 2] / b.open[t + 1]);
  float a[2] = {0.5f, 3.0f};
  CHECK_OK(tg_env_step(e, a, &o.out));
  CHECK(fabs(o.reward[0] - (0.5 * lr - 0.5 * 0.0015)) <= 1e-7);
  CHECK(fabs(o.reward[1] - (lr - 0.0015)) <= 1e-7); /* clipped to 1 */
  CHECK(o.obs[sp.obs_dim - 2] == 0.5f && o.obs[2 * sp.obs_dim - 2] == 1.0f);
  float bad[2] = {0.0f, NAN};
  CHECK_STATUS(tg_env_step(e, bad, &o.out), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "instance 1") != NULL, "%s", tg_last_error());
  int64_t rows[2];
  CHECK_OK(tg_env_trading_rows(e, rows));
  CHECK(rows[0] == t + 1 && rows[1] == t + 1); /* nothing stepped */
  bufs_free(&o);
  tg_env_free(e);
  tg_bars_free(&b);
}

/* omit_window: obs [t, position, unrealised] with t the decision row (tg_env_trading_rows); the window
 * rows t-L+1 .. t of the feature table, then the last two floats, are exactly the copying env's obs,
 * and final_obs carries the final row the same way; no heap calls per step. */
static void test_omit_window(void) {
  tg_bars b;
  CHECK_OK(synth_bars(0.2, 9, 3000, &b));
  tg_trading_cfg c = tg_trading_defaults();
  c.window = 5;
  c.episode_len = 30;
  c.seed = 4;
  tg_env *ec = NULL, *eo = NULL;
  CHECK_OK(tg_env_trading_new(3, &b, &c, &ec));
  c.omit_window = 1;
  CHECK_OK(tg_env_trading_new(3, &b, &c, &eo));
  if (!ec || !eo) return;
  tg_trading_info in;
  CHECK_OK(tg_env_trading_info(eo, &in));
  CHECK(in.omit_window == 1 && tg_env_spec_of(eo).obs_dim == 3);
  const tg_tensor *fx = tg_env_trading_features(eo);
  int L = in.window, F = in.f, W = L * F;
  CHECK(tg_env_spec_of(ec).obs_dim == W + 2 && fx && fx->shape[0] == in.rows && fx->shape[1] == F);
  bufs oc, oo;
  bufs_new(&oc, ec);
  bufs_new(&oo, eo);
  CHECK_OK(tg_env_reset(ec, oc.obs));
  CHECK_OK(tg_env_reset(eo, oo.obs));
  const float *tab = fx->data; /* [rows, F] */
  int64_t rows[3];
  int bad = 0, bad_final = 0, ends = 0;
  long heap0 = tg_test_heap_calls();
  for (int s = 0; s < 200; s++) {
    CHECK_OK(tg_env_trading_rows(eo, rows));
    for (int i = 0; i < 3; i++) {
      const float *o = oo.obs + 3 * i, *cp = oc.obs + (size_t)(W + 2) * (size_t)i;
      int64_t t = (int64_t)o[0];
      bad += (float)rows[i] != o[0] || o[1] != cp[W] || o[2] != cp[W + 1] ||
             memcmp(tab + (t - L + 1) * F, cp, sizeof(float) * (size_t)W) != 0;
    }
    int32_t a[3] = {(s / 3) % 3, (s / 5 + 1) % 3, s % 3};
    CHECK_OK(tg_env_step(ec, a, &oc.out));
    CHECK_OK(tg_env_step(eo, a, &oo.out));
    for (int i = 0; i < 3; i++) {
      if (!oo.trunc[i]) continue;
      ends++;
      const float *f = oo.final_obs + 3 * i, *cf = oc.final_obs + (size_t)(W + 2) * (size_t)i;
      int64_t t = (int64_t)f[0];
      bad_final += f[0] == oo.obs[3 * i] || f[1] != cf[W] || f[2] != cf[W + 1] ||
                   memcmp(tab + (t - L + 1) * F, cf, sizeof(float) * (size_t)W) != 0;
    }
  }
  CHECK_MSG(bad == 0 && bad_final == 0 && ends >= 12, "%d observations and %d of %d final observations differ", bad,
            bad_final, ends);
  CHECK_MSG(tg_test_heap_calls() == heap0, "%ld heap calls while stepping", tg_test_heap_calls() - heap0);
  bufs_free(&oc);
  bufs_free(&oo);
  tg_env_free(ec);
  tg_env_free(eo);
  tg_bars_free(&b);
}

/* Bad actions and configurations fail naming what is wrong. */
static void test_errors(void) {
  tg_bars b;
  hand_bars(&b, NBARS);
  tg_trading_cfg c = hand_cfg();
  tg_env *e = NULL;
  CHECK_OK(tg_env_trading_new(2, &b, &c, &e));
  if (e) {
    bufs o;
    bufs_new(&o, e);
    CHECK_OK(tg_env_reset(e, o.obs));
    int64_t before[2], after[2];
    CHECK_OK(tg_env_trading_rows(e, before));
    int32_t a[2] = {2, 3};
    CHECK_STATUS(tg_env_step(e, a, &o.out), TG_ERR_INVALID);
    CHECK_MSG(strstr(tg_last_error(), "instance 1") && strstr(tg_last_error(), "action 3"), "%s", tg_last_error());
    CHECK_OK(tg_env_trading_rows(e, after));
    CHECK(before[0] == after[0] && before[1] == after[1]);
    CHECK_STATUS(tg_env_trading_bar(e, 2, NULL, NULL), TG_ERR_INVALID);
    CHECK_STATUS(tg_env_cartpole_get_state(e, 0, (double[4]){0}), TG_ERR_INVALID);
    bufs_free(&o);
    tg_env_free(e);
  }
  tg_trading_cfg bad = c;
  bad.window = 0;
  CHECK_STATUS(tg_env_trading_new(1, &b, &bad, &e), TG_ERR_INVALID);
  CHECK(e == NULL && strstr(tg_last_error(), "window"));
  bad = c;
  bad.split = 3;
  CHECK_STATUS(tg_env_trading_new(1, &b, &bad, &e), TG_ERR_INVALID);
  bad = c;
  bad.cost_bps = -1;
  CHECK_STATUS(tg_env_trading_new(1, &b, &bad, &e), TG_ERR_INVALID);
  bad = c;
  bad.window = 40; /* no window of 40 bars fits the 12-bar test split */
  bad.split = TG_TEST;
  CHECK_STATUS(tg_env_trading_new(1, &b, &bad, &e), TG_ERR_INVALID);
  CHECK_STATUS(tg_env_trading_new(0, &b, &c, &e), TG_ERR_INVALID);
  tg_bars two;
  tg_bars_init(&two);
  CHECK_OK(tg_bars_reserve(&two, NBARS, 1)); /* with an instrument column */
  for (int r = 0; r < NBARS; r++)
    CHECK_OK(tg_bars_push(&two, b.ts[r], b.open[r], b.high[r], b.low[r], b.close[r], 1.0, (uint32_t)(r % 2)));
  CHECK_STATUS(tg_env_trading_new(1, &two, &c, &e), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "instrument") != NULL, "%s", tg_last_error());
  tg_bars_free(&two);
  tg_bars_free(&b);
}

/* A policy acting on the observation alone (the sign of the last bar's return): on a market with a
 * planted lag-1 signal it earns a clear edge out of sample; on a random walk none beyond noise. */
static double momentum_t_stat(double signal, uint64_t seed, tg_trading_stats *st) {
  tg_bars b;
  CHECK_OK(synth_bars(signal, seed, 20000, &b));
  tg_trading_cfg c = tg_trading_defaults();
  c.window = 4;
  c.features = "logret";
  c.cost_bps = 0.0;
  c.split = TG_TEST;
  tg_env *e = NULL;
  CHECK_OK(tg_env_trading_new(1, &b, &c, &e));
  if (!e) return 0;
  bufs o;
  bufs_new(&o, e);
  CHECK_OK(tg_env_reset(e, o.obs));
  do {
    int32_t a = o.obs[3] > 0 ? 2 : 0; /* the last row's logret (normalised: mean ~0, so its sign survives) */
    CHECK_OK(tg_env_step(e, &a, &o.out));
  } while (!o.trunc[0]);
  CHECK_OK(tg_env_trading_episode_stats(e, 0, st));
  bufs_free(&o);
  tg_env_free(e);
  tg_bars_free(&b);
  return st->sharpe / sqrt(st->bars_per_year) * sqrt((double)st->steps); /* per-step mean / se */
}

static void test_planted_edge(void) {
  tg_trading_stats s1, s0;
  double t1 = momentum_t_stat(0.3, 11, &s1), t0 = momentum_t_stat(0.0, 11, &s0);
  printf("momentum on the test split: signal 0.3: t %.2f, sharpe %.2f (buy and hold %.2f); signal 0: t %.2f\n", t1,
         s1.sharpe, s1.bh_sharpe, t0);
  CHECK_MSG(t1 > 6, "planted signal: t-stat %.2f", t1);
  CHECK_MSG(fabs(t0) < 3.5, "random walk: t-stat %.2f", t0);
  CHECK(s1.sharpe > s1.bh_sharpe && s1.sharpe > 0);
}

/* The state as bytes: a second env over the same bars and config, loaded from a save, steps exactly
 * as the saved one goes on to, and reports the same episode statistics. */
static void test_state_bytes(void) {
  tg_bars b;
  CHECK_OK(synth_bars(0.2, 8, 3000, &b));
  tg_trading_cfg c = tg_trading_defaults();
  c.window = 8;
  c.episode_len = 40;
  tg_env *ea = NULL, *eb = NULL;
  CHECK_OK(tg_env_trading_new(3, &b, &c, &ea));
  c.seed = 999; /* the seed is part of the state */
  CHECK_OK(tg_env_trading_new(3, &b, &c, &eb));
  if (!ea || !eb) return;
  bufs oa, ob;
  bufs_new(&oa, ea);
  bufs_new(&ob, eb);
  CHECK_OK(tg_env_reset(ea, oa.obs));
  for (int s = 0; s < 97; s++) {
    int32_t a[3] = {s % 3, (s / 2) % 3, (s / 5) % 3};
    CHECK_OK(tg_env_step(ea, a, &oa.out));
  }
  size_t size = tg_env_bytes(ea);
  unsigned char *saved = malloc(size);
  CHECK_OK(tg_env_write_bytes(ea, saved, size));
  CHECK_OK(tg_env_read_bytes(eb, saved, size));
  int diff = 0;
  for (int s = 97; s < 400; s++) {
    int32_t a[3] = {s % 3, (s / 2) % 3, (s / 5) % 3};
    CHECK_OK(tg_env_step(ea, a, &oa.out));
    CHECK_OK(tg_env_step(eb, a, &ob.out));
    diff += memcmp(oa.obs, ob.obs, sizeof(float) * 3 * (size_t)oa.od) != 0 || memcmp(oa.reward, ob.reward, 3 * sizeof(float)) != 0 ||
            memcmp(oa.ep_return, ob.ep_return, 3 * sizeof(double)) != 0;
  }
  CHECK_MSG(diff == 0, "%d of 303 steps differ after a load", diff);
  tg_trading_stats sa, sb;
  CHECK_OK(tg_env_trading_episode_stats(ea, 2, &sa));
  CHECK_OK(tg_env_trading_episode_stats(eb, 2, &sb));
  CHECK(memcmp(&sa, &sb, sizeof sa) == 0);
  tg_env *cp = NULL;
  CHECK_OK(tg_env_cartpole_new(3, 1, 0, &cp));
  CHECK_STATUS(tg_env_read_bytes(cp, saved, size), TG_ERR_INVALID);
  free(saved);
  bufs_free(&oa);
  bufs_free(&ob);
  tg_env_free(ea);
  tg_env_free(eb);
  tg_env_free(cp);
  tg_bars_free(&b);
}

int main(void) {
  test_rewards();
  test_costs();
  test_no_lookahead();
  test_segments();
  test_eval_order();
  test_stats_known();
  test_continuous();
  test_omit_window();
  test_errors();
  test_planted_edge();
  test_state_bytes();
  return tg_test_finish();
}
