/* The trading market environment: one instrument's bars, fills at the next open, log-equity rewards net of costs. */
/*
 * Mechanics (see also rl.h). Decision bars t run over the last rows of the split's windows, so the
 * feature window t-L+1 .. t and the two opens the reward reads (t+1, t+2) all lie inside the split.
 * At decision bar t an instance holds p_old (filled at an earlier open) and chooses p_new:
 *   - the order fills at open[t+1]; trading |p_new - p_old| units costs cost = cost_bps * 1e-4 +
 *     slippage of log equity per unit (commission and a fixed fraction of the price);
 *   - p_new is then held from open[t+1] to open[t+2]: reward
 *       r_t = p_new * log(open[t+2] / open[t+1]) - cost * |p_new - p_old|,
 *     the change of log equity of a position kept at p_new of equity (for p = 1 exactly the asset's
 *     log return), net of costs. Summed over an episode the rewards are its log return;
 *   - the next observation is at bar t+1: features rows t-L+2 .. t+1, p_new, and the unrealised log
 *     return p_new * log(close[t+1] / open[e]), e the bar of the last fill that changed the position.
 * Nothing the reward of step t reads (open[t+1], open[t+2]) is in the observation at t, and nothing
 * the observation at t reads lies after bar t (features are causal; normalisation is fitted on the
 * training split's rows only).
 * Episodes start flat. Training: decisions ep_first .. ep_first + episode_len - 1, ep_first drawn
 * uniformly over the split's decision bars from Philox (seed, stream i, counter = episode number of
 * instance i). Evaluation: every decision bar of the split in order. After the last decision the
 * episode is truncated and the instance autoresets (gymnasium 0.29 vector semantics).
 * Each instance records the rewards and positions of its current and its last completed episode
 * (two preallocated buffers of episode_len, swapped at the end), for tg_env_trading_episode_stats.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "env/env_internal.h"
#include "tickgrad/rng.h"

#define YEAR_NS (365.25 * 86400.0 * 1e9)

typedef struct trading {
  tg_dataset ds;
  int L, F, continuous, omit_window;
  int train;             /* 1: random segments of the training split; 0: the split in order */
  double cost;           /* log equity lost per unit of position traded */
  uint64_t seed;
  int64_t rows;
  double *oret;          /* [rows] log(open[t+1] / open[t]); 0 for the last bar */
  double *lclose, *lopen; /* [rows] log close, log open */
  int64_t *ts;           /* [rows] */
  int64_t first, last;   /* the split's decision bars */
  int64_t ep_len;        /* decisions per episode */
  double bars_per_year;
  /* per instance, [n] each */
  int64_t *t, *ep_first, *ep_last, *entry, *last_first;
  double *pos, *ret;
  int32_t *len, *last_len;
  uint64_t *episodes;
  uint8_t *cur;          /* which of the two record buffers holds the current episode */
  double *rec_r, *rec_p; /* [2, n, ep_len] rewards and positions of the current / last episode */
} trading;

static const tg_env_kind TRADING;

static trading *tr_of(const tg_env *e) { return (trading *)e->impl; }

tg_trading_cfg tg_trading_defaults(void) {
  tg_trading_cfg c;
  memset(&c, 0, sizeof c);
  c.window = 32;
  c.cost_bps = 1.0;
  c.slippage = 0.0;
  c.split = TG_TRAIN;
  c.episode_len = 256;
  c.seed = 1;
  return c;
}

/* ---- episodes and observations ---- */

static double *rec(const trading *tr, const double *base, int n, int i, int which) {
  return (double *)base + ((size_t)which * (size_t)n + (size_t)i) * (size_t)tr->ep_len;
}

/* Starts instance i's next episode: flat, at a fresh segment (training) or the split's first bar. */
static void start_episode(trading *tr, int i) {
  uint64_t k = tr->episodes[i]++;
  int64_t first = tr->first;
  if (tr->train) {
    uint32_t w[4];
    tg_philox(tr->seed, (uint64_t)i, k, w);
    uint64_t span = (uint64_t)(tr->last - tr->first + 1 - tr->ep_len + 1); /* possible starts */
    first += (int64_t)((((uint64_t)w[0] << 32) | w[1]) % span);
  }
  tr->ep_first[i] = first;
  tr->ep_last[i] = first + tr->ep_len - 1;
  tr->t[i] = first;
  tr->pos[i] = 0.0;
  tr->entry[i] = first;
  tr->ret[i] = 0.0;
  tr->len[i] = 0;
}

/* Instance i's observation at its current bar: [L, F] features (omit_window: the bar's row t as a
 * float, exact since rows < 2^24), position, unrealised. */
static void write_obs(const trading *tr, int i, float *o) {
  int64_t t = tr->t[i];
  if (!tr->omit_window) {
    size_t w = (size_t)tr->L * (size_t)tr->F;
    memcpy(o, tr->ds.fx.x + (size_t)(t - tr->L + 1) * (size_t)tr->F, w * sizeof(float));
    o += w;
  } else {
    *o++ = (float)t;
  }
  double p = tr->pos[i];
  o[0] = (float)p;
  o[1] = p != 0.0 ? (float)(p * (tr->lclose[t] - tr->lopen[tr->entry[i]])) : 0.0f;
}

static tg_status trading_reset(tg_env *e, float *obs) {
  trading *tr = tr_of(e);
  int od = e->spec.obs_dim;
  for (int i = 0; i < e->spec.n; i++) {
    start_episode(tr, i);
    write_obs(tr, i, obs + (size_t)i * (size_t)od);
  }
  return TG_OK;
}

/* The position an action asks for. */
static double target_position(const trading *tr, const void *actions, int i) {
  if (tr->continuous) return (double)((const float *)actions)[i];
  return (double)(((const int32_t *)actions)[i] - 1);
}

static tg_status trading_step(tg_env *e, const void *actions, const tg_env_out *out) {
  trading *tr = tr_of(e);
  int n = e->spec.n, od = e->spec.obs_dim;
  for (int i = 0; i < n; i++) {
    int64_t t = tr->t[i];
    double p_old = tr->pos[i], p_new = target_position(tr, actions, i);
    double traded = fabs(p_new - p_old);
    double r = p_new * tr->oret[t + 1] - tr->cost * traded;
    if (traded > 0) tr->entry[i] = t + 1;
    tr->pos[i] = p_new;
    rec(tr, tr->rec_r, n, i, tr->cur[i])[tr->len[i]] = r;
    rec(tr, tr->rec_p, n, i, tr->cur[i])[tr->len[i]] = p_new;
    tr->ret[i] += r;
    tr->len[i]++;
    tr->t[i] = t + 1;
    int done = t == tr->ep_last[i];
    out->reward[i] = (float)r;
    out->terminated[i] = 0;
    out->truncated[i] = (uint8_t)done;
    float *o = out->obs + (size_t)i * (size_t)od;
    if (out->final_obs) write_obs(tr, i, out->final_obs + (size_t)i * (size_t)od);
    if (out->ep_return) out->ep_return[i] = done ? tr->ret[i] : 0.0;
    if (out->ep_length) out->ep_length[i] = done ? tr->len[i] : 0;
    if (done) {
      tr->last_first[i] = tr->ep_first[i];
      tr->last_len[i] = tr->len[i];
      tr->cur[i] ^= 1;
      start_episode(tr, i);
    }
    write_obs(tr, i, o);
  }
  return TG_OK;
}

static void trading_destroy(tg_env *e) {
  trading *tr = tr_of(e);
  if (!tr) return;
  tg_dataset_free(&tr->ds);
  void *owned[] = {tr->oret, tr->lclose, tr->lopen, tr->ts, tr->t, tr->ep_first, tr->ep_last, tr->entry,
                   tr->last_first, tr->pos, tr->ret, tr->len, tr->last_len, tr->episodes, tr->cur, tr->rec_r,
                   tr->rec_p};
  for (size_t k = 0; k < sizeof owned / sizeof owned[0]; k++) free(owned[k]);
  free(tr);
}

/* State: the seed, then per instance t, ep_first, ep_last, entry, last_first, pos, ret, len, last_len, episodes,
 * cur [n] each, then the record buffers [2, n, ep_len] twice. The market itself is rebuilt from the
 * same bars and config. */
#define TR_I64_ARRAYS 5
static void i64_arrays(const trading *tr, int64_t **a) {
  a[0] = tr->t, a[1] = tr->ep_first, a[2] = tr->ep_last, a[3] = tr->entry, a[4] = tr->last_first;
}

static size_t trading_state_size(const tg_env *e) {
  size_t n = (size_t)e->spec.n;
  return sizeof(uint64_t) + n * (TR_I64_ARRAYS * sizeof(int64_t) + 2 * sizeof(double) + 2 * sizeof(int32_t) + sizeof(uint64_t) + 1) +
         2 * 2 * n * (size_t)tr_of(e)->ep_len * sizeof(double);
}

static void trading_save(const tg_env *e, unsigned char *p) {
  const trading *tr = tr_of(e);
  size_t n = (size_t)e->spec.n, r = 2 * n * (size_t)tr->ep_len;
  int64_t *a[TR_I64_ARRAYS];
  i64_arrays(tr, a);
  p = tg_env_put(p, &tr->seed, sizeof tr->seed);
  for (int k = 0; k < TR_I64_ARRAYS; k++) p = tg_env_put(p, a[k], n * sizeof(int64_t));
  p = tg_env_put(p, tr->pos, n * sizeof(double));
  p = tg_env_put(p, tr->ret, n * sizeof(double));
  p = tg_env_put(p, tr->len, n * sizeof(int32_t));
  p = tg_env_put(p, tr->last_len, n * sizeof(int32_t));
  p = tg_env_put(p, tr->episodes, n * sizeof(uint64_t));
  p = tg_env_put(p, tr->cur, n);
  p = tg_env_put(p, tr->rec_r, r * sizeof(double));
  tg_env_put(p, tr->rec_p, r * sizeof(double));
}

static void trading_load(tg_env *e, const unsigned char *p) {
  trading *tr = tr_of(e);
  size_t n = (size_t)e->spec.n, r = 2 * n * (size_t)tr->ep_len;
  int64_t *a[TR_I64_ARRAYS];
  i64_arrays(tr, a);
  p = tg_env_get(p, &tr->seed, sizeof tr->seed);
  for (int k = 0; k < TR_I64_ARRAYS; k++) p = tg_env_get(p, a[k], n * sizeof(int64_t));
  p = tg_env_get(p, tr->pos, n * sizeof(double));
  p = tg_env_get(p, tr->ret, n * sizeof(double));
  p = tg_env_get(p, tr->len, n * sizeof(int32_t));
  p = tg_env_get(p, tr->last_len, n * sizeof(int32_t));
  p = tg_env_get(p, tr->episodes, n * sizeof(uint64_t));
  p = tg_env_get(p, tr->cur, n);
  p = tg_env_get(p, tr->rec_r, r * sizeof(double));
  tg_env_get(p, tr->rec_p, r * sizeof(double));
}

static const tg_env_kind TRADING = {"trading",          trading_reset, trading_step, trading_destroy,
                                    trading_state_size, trading_save,  trading_load};

/* ---- construction ---- */

static tg_status check_cfg(int n, const tg_bars *bars, const tg_trading_cfg *c) {
  const char *fn = "tg_env_trading_new";
  if (n < 1) return tg_error(TG_ERR_INVALID, "%s: n = %d instances, expected >= 1", fn, n);
  if (!bars || bars->n < 1) return tg_error(TG_ERR_INVALID, "%s: no bars", fn);
  if (c->window < 1) return tg_error(TG_ERR_INVALID, "%s: window = %d bars, expected >= 1", fn, c->window);
  if (!(c->cost_bps >= 0) || !isfinite(c->cost_bps))
    return tg_error(TG_ERR_INVALID, "%s: cost_bps = %g, expected a finite value >= 0", fn, c->cost_bps);
  if (!(c->slippage >= 0 && c->slippage < 1))
    return tg_error(TG_ERR_INVALID, "%s: slippage = %g, expected a fraction of the price in [0, 1)", fn, c->slippage);
  if (c->split < TG_TRAIN || c->split > TG_TEST)
    return tg_error(TG_ERR_INVALID, "%s: split = %d, expected 0 (train), 1 (validation) or 2 (test)", fn, c->split);
  if (c->split == TG_TRAIN && c->episode_len < 1)
    return tg_error(TG_ERR_INVALID, "%s: episode_len = %d decisions, expected >= 1", fn, c->episode_len);
  if (c->continuous != 0 && c->continuous != 1)
    return tg_error(TG_ERR_INVALID, "%s: continuous = %d, expected 0 (short/flat/long) or 1 (target position)", fn,
                    c->continuous);
  if (!(c->bars_per_year >= 0) || !isfinite(c->bars_per_year))
    return tg_error(TG_ERR_INVALID, "%s: bars_per_year = %g, expected >= 0 (0: from the bars)", fn, c->bars_per_year);
  for (int64_t r = 1; bars->instrument && r < bars->n; r++)
    if (bars->instrument[r] != bars->instrument[0])
      return tg_error(TG_ERR_INVALID, "%s: the bars hold instruments %u and %u (row %lld); the trading env takes one "
                      "instrument's bars", fn, bars->instrument[0], bars->instrument[r], (long long)r);
  return TG_OK;
}

static tg_status build_data(trading *tr, const tg_bars *bars, const tg_trading_cfg *c) {
  tg_dataset_opts o;
  memset(&o, 0, sizeof o);
  o.features.spec = c->features;
  o.features.tz = c->tz;
  o.targets.nh = 1;
  o.targets.horizons[0] = 2; /* a decision at t reads open[t+2]: windows keep 2 bars ahead inside the split */
  o.splits.window = c->window;
  o.splits.frac_train = c->frac_train;
  o.splits.frac_val = c->frac_val;
  tg_status st = tg_dataset_build(bars, &o, &tr->ds);
  if (st != TG_OK) {
    char why[768];
    snprintf(why, sizeof why, "%s", tg_last_error());
    return tg_error(st, "tg_env_trading_new: the bars' dataset (window %d, features '%s'): %s", c->window,
                    c->features ? c->features : TG_FEATURES_DEFAULT, why);
  }
  const tg_layout *lay = &tr->ds.layout;
  for (int64_t p = 0; p < lay->n; p++)
    if (lay->rows[p] != p) return tg_error(TG_ERR_INVALID, "tg_env_trading_new: bars are not one instrument in time order");
  static const char *names[3] = {"train", "validation", "test"};
  const tg_split *sp = &tr->ds.splits.s[c->split];
  if (sp->count < 1)
    return tg_error(TG_ERR_INVALID, "tg_env_trading_new: the %s split has no window of %d bars with 2 bars after it "
                    "(%lld bars in all); give more bars, other split fractions or a shorter window", names[c->split],
                    c->window, (long long)bars->n);
  tr->L = c->window;
  tr->F = tr->ds.fx.f;
  tr->rows = bars->n;
  /* One instrument and fixed-horizon log-return targets (no reach): the split is one run, begin[0] .. end[0]-1, with
   * no holes, so every decision bar from first to last has its window. */
  if (tg_split_n_runs(sp, 1) != 1 || sp->count != sp->end[0] - sp->begin[0])
    return tg_error(TG_ERR_INVALID, "tg_env_trading_new: the %s split's windows have holes (%lld of %lld starts); the "
                    "trading market needs one unbroken run", names[c->split], (long long)sp->count,
                    (long long)(sp->end[0] - sp->begin[0]));
  tr->first = sp->begin[0] + c->window - 1;
  tr->last = sp->end[0] - 1 + c->window - 1;
  int64_t steps = tr->last - tr->first + 1;
  tr->ep_len = c->split == TG_TRAIN && c->episode_len < steps ? c->episode_len : steps;
  return TG_OK;
}

/* Log prices, one-bar open-to-open log returns, times, and the annualisation. */
static tg_status price_tables(trading *tr, const tg_bars *bars, const tg_trading_cfg *c) {
  size_t m = (size_t)bars->n;
  tr->oret = malloc(m * sizeof(double));
  tr->lclose = malloc(m * sizeof(double));
  tr->lopen = malloc(m * sizeof(double));
  tr->ts = malloc(m * sizeof(int64_t));
  if (!tr->oret || !tr->lclose || !tr->lopen || !tr->ts)
    return tg_error(TG_ERR_NOMEM, "tg_env_trading_new: cannot allocate the price tables of %lld bars", (long long)bars->n);
  for (int64_t r = 0; r < bars->n; r++) {
    tr->lopen[r] = log(bars->open[r]);
    tr->lclose[r] = log(bars->close[r]);
    tr->oret[r] = r + 1 < bars->n ? log(bars->open[r + 1] / bars->open[r]) : 0.0;
    tr->ts[r] = bars->ts[r];
  }
  tr->bars_per_year = c->bars_per_year;
  if (tr->bars_per_year == 0) {
    double span = (double)(bars->ts[bars->n - 1] - bars->ts[0]);
    if (!(span > 0))
      return tg_error(TG_ERR_INVALID, "tg_env_trading_new: the bars span no time; give bars_per_year for the Sharpe ratio");
    tr->bars_per_year = (double)(bars->n - 1) / (span / YEAR_NS);
  }
  return TG_OK;
}

/* Per-instance state and the two record buffers. */
static tg_status instance_tables(trading *tr, int n) {
  size_t m = (size_t)n, r = 2 * m * (size_t)tr->ep_len;
  tr->t = calloc(m, sizeof(int64_t));
  tr->ep_first = calloc(m, sizeof(int64_t));
  tr->ep_last = calloc(m, sizeof(int64_t));
  tr->entry = calloc(m, sizeof(int64_t));
  tr->last_first = calloc(m, sizeof(int64_t));
  tr->pos = calloc(m, sizeof(double));
  tr->ret = calloc(m, sizeof(double));
  tr->len = calloc(m, sizeof(int32_t));
  tr->last_len = calloc(m, sizeof(int32_t));
  tr->episodes = calloc(m, sizeof(uint64_t));
  tr->cur = calloc(m, 1);
  tr->rec_r = calloc(r, sizeof(double));
  tr->rec_p = calloc(r, sizeof(double));
  if (!tr->t || !tr->ep_first || !tr->ep_last || !tr->entry || !tr->last_first || !tr->pos || !tr->ret || !tr->len ||
      !tr->last_len || !tr->episodes || !tr->cur || !tr->rec_r || !tr->rec_p)
    return tg_error(TG_ERR_NOMEM, "tg_env_trading_new: cannot allocate %d instances with episodes of %lld decisions", n,
                    (long long)tr->ep_len);
  return TG_OK;
}

tg_status tg_env_trading_new(int n, const tg_bars *bars, const tg_trading_cfg *cfg, tg_env **out) {
  if (!out) return tg_error(TG_ERR_INVALID, "tg_env_trading_new: out is NULL");
  *out = NULL;
  tg_trading_cfg c = cfg ? *cfg : tg_trading_defaults();
  tg_status st = check_cfg(n, bars, &c);
  if (st != TG_OK) return st;
  trading *tr = calloc(1, sizeof *tr);
  if (!tr) return tg_error(TG_ERR_NOMEM, "tg_env_trading_new: cannot allocate the environment");
  tr->continuous = c.continuous;
  tr->omit_window = c.omit_window;
  tr->cost = c.cost_bps * 1e-4 + c.slippage;
  tr->seed = c.seed;
  tr->train = c.split == TG_TRAIN;
  st = build_data(tr, bars, &c);
  if (st == TG_OK) st = price_tables(tr, bars, &c);
  if (st == TG_OK) st = instance_tables(tr, n);
  if (st == TG_OK && (int64_t)tr->L * tr->F + 2 > INT32_MAX)
    st = tg_error(TG_ERR_INVALID, "tg_env_trading_new: window %d x %d features is too large an observation", tr->L, tr->F);
  if (st == TG_OK && tr->omit_window && tr->rows >= TG_TRADING_OMIT_ROWS_MAX)
    st = tg_error(TG_ERR_INVALID, "tg_env_trading_new: omit_window puts the bar's row in a float observation; %lld bars "
                  "reach the limit of 2^24 rows (16777216) that a float holds exactly", (long long)tr->rows);
  tg_env *e = NULL;
  if (st == TG_OK) {
    tg_env_spec spec = {.n = n, .obs_dim = (tr->omit_window ? 1 : tr->L * tr->F) + 2,
                        .n_actions = c.continuous ? 0 : 3, .action_lo = -1.0f, .action_hi = 1.0f};
    st = tg_env_alloc(&TRADING, spec, &e);
  }
  if (st != TG_OK) {
    tg_env tmp = {.impl = tr};
    trading_destroy(&tmp);
    return st;
  }
  e->impl = tr;
  *out = e;
  return TG_OK;
}

/* ---- queries ---- */

static tg_status check_trading(const tg_env *e, const char *fn) {
  if (!e || e->kind != &TRADING)
    return tg_error(TG_ERR_INVALID, "%s: env is %s, expected a trading env", fn, e ? e->kind->name : "NULL");
  return TG_OK;
}

tg_status tg_env_trading_info(const tg_env *e, tg_trading_info *out) {
  tg_status st = check_trading(e, "tg_env_trading_info");
  if (st != TG_OK) return st;
  if (!out) return tg_error(TG_ERR_INVALID, "tg_env_trading_info: out is NULL");
  const trading *tr = tr_of(e);
  out->window = tr->L;
  out->f = tr->F;
  out->rows = tr->rows;
  out->first_bar = tr->first;
  out->last_bar = tr->last;
  out->steps = tr->last - tr->first + 1;
  out->episode_len = tr->ep_len;
  out->bars_per_year = tr->bars_per_year;
  out->cost = tr->cost;
  out->omit_window = tr->omit_window;
  return TG_OK;
}

tg_status tg_env_trading_bar(const tg_env *e, int i, int64_t *row, int64_t *ts) {
  tg_status st = check_trading(e, "tg_env_trading_bar");
  if (st != TG_OK) return st;
  if (i < 0 || i >= e->spec.n)
    return tg_error(TG_ERR_INVALID, "tg_env_trading_bar: instance %d is out of range [0, %d)", i, e->spec.n);
  if (!e->was_reset) return tg_error(TG_ERR_INVALID, "tg_env_trading_bar: call tg_env_reset first");
  int64_t t = tr_of(e)->t[i];
  if (row) *row = t;
  if (ts) *ts = tr_of(e)->ts[t];
  return TG_OK;
}

tg_status tg_env_trading_rows(const tg_env *e, int64_t *rows) {
  tg_status st = check_trading(e, "tg_env_trading_rows");
  if (st != TG_OK) return st;
  if (!rows) return tg_error(TG_ERR_INVALID, "tg_env_trading_rows: rows [%d] is NULL", e->spec.n);
  if (!e->was_reset) return tg_error(TG_ERR_INVALID, "tg_env_trading_rows: call tg_env_reset first");
  memcpy(rows, tr_of(e)->t, (size_t)e->spec.n * sizeof(int64_t));
  return TG_OK;
}

const tg_tensor *tg_env_trading_features(const tg_env *e) {
  if (check_trading(e, "tg_env_trading_features") != TG_OK) return NULL;
  return &tr_of(e)->ds.x;
}

/* ---- statistics ---- */

/* Mean and annualised Sharpe of x[k] - (k == 0) * first_cost, k < T. */
static void sharpe_of(const double *x, double first_cost, int64_t T, double bars_per_year, double *sum, double *sharpe) {
  double s = 0;
  for (int64_t k = 0; k < T; k++) s += x[k] - (k == 0 ? first_cost : 0.0);
  double mean = s / (double)T, ss = 0;
  for (int64_t k = 0; k < T; k++) {
    double d = x[k] - (k == 0 ? first_cost : 0.0) - mean;
    ss += d * d;
  }
  double sd = T > 1 ? sqrt(ss / (double)(T - 1)) : 0.0;
  *sum = s;
  *sharpe = sd > 0 ? mean / sd * sqrt(bars_per_year) : 0.0;
}

/* The buy-and-hold side takes its step returns as given (bh_entry_cost charged at the first step). */
static tg_status stats_with_entry(const double *reward, const double *position, const double *bh, double bh_entry_cost,
                                  int64_t T, double bars_per_year, tg_trading_stats *out) {
  if (!reward || !position || !bh || !out || T < 1 || !(bars_per_year > 0))
    return tg_error(TG_ERR_INVALID, "tg_trading_stats_compute: need rewards, positions and buy-and-hold returns of "
                    "T >= 1 steps (T = %lld) and bars_per_year > 0 (%g)", (long long)T, bars_per_year);
  memset(out, 0, sizeof *out);
  out->steps = T;
  out->bars_per_year = bars_per_year;
  sharpe_of(reward, 0.0, T, bars_per_year, &out->total_log_return, &out->sharpe);
  sharpe_of(bh, bh_entry_cost, T, bars_per_year, &out->bh_log_return, &out->bh_sharpe);
  double prev = 0, expo = 0;
  for (int64_t k = 0; k < T; k++) {
    double d = fabs(position[k] - prev);
    out->trades += d > 0;
    out->turnover += d;
    expo += fabs(position[k]);
    prev = position[k];
  }
  out->exposure = expo / (double)T;
  return TG_OK;
}

tg_status tg_trading_stats_compute(const double *reward, const double *position, const double *bh, int64_t T,
                                   double bars_per_year, tg_trading_stats *out) {
  return stats_with_entry(reward, position, bh, 0.0, T, bars_per_year, out);
}

tg_status tg_env_trading_episode_stats(const tg_env *e, int i, tg_trading_stats *out) {
  tg_status st = check_trading(e, "tg_env_trading_episode_stats");
  if (st != TG_OK) return st;
  if (i < 0 || i >= e->spec.n)
    return tg_error(TG_ERR_INVALID, "tg_env_trading_episode_stats: instance %d is out of range [0, %d)", i, e->spec.n);
  const trading *tr = tr_of(e);
  if (tr->last_len[i] < 1)
    return tg_error(TG_ERR_INVALID, "tg_env_trading_episode_stats: instance %d has not finished an episode yet", i);
  int last = tr->cur[i] ^ 1;
  /* buy and hold over the same decisions: long 1 filled at open[first+1], step k earns oret[first+k+1] */
  return stats_with_entry(rec(tr, tr->rec_r, e->spec.n, i, last), rec(tr, tr->rec_p, e->spec.n, i, last),
                          tr->oret + tr->last_first[i] + 1, tr->cost, tr->last_len[i], tr->bars_per_year, out);
}
