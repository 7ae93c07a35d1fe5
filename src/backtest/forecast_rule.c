/* Decisions from a forecaster: each bar's quantile forecast (tg_predictor, causal) turned into a target position. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tickgrad/backtest.h"
#include "tickgrad/dataset.h"

tg_fc_rule tg_fc_rule_defaults(void) {
  tg_fc_rule r;
  memset(&r, 0, sizeof r);
  r.kind = TG_FC_BAND;
  r.allow_short = 1;
  return r;
}

tg_status tg_fc_rule_parse(const char *text, tg_fc_rule_kind *out) {
  if (text && strcmp(text, "band") == 0) *out = TG_FC_BAND;
  else if (text && strcmp(text, "median") == 0) *out = TG_FC_MEDIAN;
  else return tg_error(TG_ERR_INVALID, "forecast rule '%s': want band or median", text ? text : "(null)");
  return TG_OK;
}

double tg_bt_round_trip(const tg_bt_opts *o) { return 2.0 * (o->commission + o->cost_bps * 1e-4 + o->slippage); }

/* The quantiles of one horizon: the lowest, the highest and the one nearest 0.5. */
typedef struct fc_q {
  int lo, hi, mid;
} fc_q;

static fc_q pick_quantiles(const tg_predictor_info *in) {
  fc_q k = {0, 0, 0};
  for (int j = 1; j < in->nq; j++) {
    if (in->q[j] < in->q[k.lo]) k.lo = j;
    if (in->q[j] > in->q[k.hi]) k.hi = j;
    if (fabsf(in->q[j] - 0.5f) < fabsf(in->q[k.mid] - 0.5f)) k.mid = j;
  }
  return k;
}

/* The position for one forecast row f [nq]. */
static double decide(const tg_fc_rule *r, fc_q k, const float *f) {
  double lo = f[k.lo], hi = f[k.hi], mid = f[k.mid], side = 0.0;
  if (r->kind == TG_FC_BAND) side = lo > r->cost ? 1.0 : hi < -r->cost ? -1.0 : 0.0;
  else side = mid > r->cost ? 1.0 : mid < -r->cost ? -1.0 : 0.0;
  if (side < 0 && !r->allow_short) side = 0.0;
  if (side == 0.0 || !r->sized) return side;
  double spread = fabs(hi - lo), size = spread > 0 ? fabs(mid) / spread : 1.0; /* |.|: an untrained model's quantiles may cross */
  return side * (size < 1.0 ? size : 1.0);
}

static int named(const char *name, const char *const *list) {
  for (; *list; list++)
    if (strcmp(name, *list) == 0) return 1;
  return 0;
}

tg_status tg_fc_class_positions(const tg_fc_rule *r, const tg_predictor_info *in, double *positions) {
  static const char *const LONG[] = {"up", "buy", "long", NULL}, *const SHORT[] = {"down", "sell", "short", NULL};
  if (!(r->threshold >= 0 && r->threshold <= 1))
    return tg_error(TG_ERR_INVALID, "backtest: threshold %g: want a probability in [0, 1]", r->threshold);
  for (int k = 0; k < in->n_classes; k++)
    positions[k] = r->class_map ? 0.0 : named(in->classes[k], LONG) ? 1.0 : named(in->classes[k], SHORT) ? -1.0 : 0.0;
  for (const char *m = r->class_map; m && *m;) {
    const char *end = strchr(m, ','), *eq = strchr(m, '=');
    if (!end) end = m + strlen(m);
    int k = 0;
    while (eq && eq < end && k < in->n_classes &&
           !(strlen(in->classes[k]) == (size_t)(eq - m) && strncmp(in->classes[k], m, (size_t)(eq - m)) == 0))
      k++;
    char num[64];
    snprintf(num, sizeof num, "%.*s", eq && eq < end ? (int)(end - eq - 1) : 0, eq ? eq + 1 : "");
    char *stop = NULL;
    double v = strtod(num, &stop);
    if (!eq || eq > end || k == in->n_classes || !num[0] || *stop || !isfinite(v)) {
      char have[512] = "";
      for (int j = 0; j < in->n_classes; j++)
        snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", j ? ", " : "", in->classes[j]);
      return tg_error(TG_ERR_INVALID, "backtest: class map '%s': '%.*s' is not class=position with one of the "
                      "classes %s and a finite number", r->class_map, (int)(end - m), m, have);
    }
    positions[k] = v;
    m = *end ? end + 1 : end;
  }
  return TG_OK;
}

/* A classifier's position from its probabilities p [C]. */
static double decide_class(const tg_fc_rule *r, const double *positions, const float *p, int C) {
  int k = 0;
  for (int j = 1; j < C; j++)
    if (p[j] > p[k]) k = j;
  double pos = p[k] >= r->threshold ? positions[k] : 0.0;
  if (pos < 0 && !r->allow_short) pos = 0.0;
  return r->sized ? pos * p[k] : pos;
}

tg_status tg_fc_targets(tg_predictor *p, const tg_bars *bars, int64_t from, const tg_fc_rule *rule, double *target,
                        int64_t *forecasts) {
  const tg_predictor_info *in = tg_predictor_get_info(p);
  if (!in || !bars || !rule || !target || from < 0 || from > bars->n)
    return tg_error(TG_ERR_INVALID, "backtest: forecast targets need a predictor, bars, a rule, a target array and "
                    "0 <= from <= bars");
  double positions[TG_MAX_CLASSES];
  if (in->n_classes) {
    tg_status st = tg_fc_class_positions(rule, in, positions);
    if (st != TG_OK) return st;
  }
  int h = rule->horizon ? rule->horizon : in->horizons;
  if (!in->n_classes && (h < 1 || h > in->horizons))
    return tg_error(TG_ERR_INVALID, "backtest: horizon %d: the run forecasts 1..%d bars ahead", h, in->horizons);
  if (!(rule->cost >= 0)) return tg_error(TG_ERR_INVALID, "backtest: the round-trip cost must be >= 0");
  float f[TG_MAX_HORIZONS * TG_MAX_QUANTILES + TG_MAX_CLASSES];
  fc_q k = pick_quantiles(in);
  int64_t got = 0;
  tg_predictor_reset(p);
  for (int64_t t = 0; t < bars->n; t++) {
    tg_pbar b;
    int ready = 0;
    tg_status st = tg_predictor_bar_at(p, bars, t, 1, &b); /* known: leads from the file's later bars */
    if (st == TG_OK) st = tg_predictor_push(p, &b, f, &ready);
    if (st != TG_OK) return tg_error(st, "backtest: %s, bar %lld: %s", bars->source, (long long)t + 1, tg_last_error());
    if (t < from) continue;
    if (!ready) target[t - from] = 0.0;
    else if (in->n_classes) target[t - from] = decide_class(rule, positions, f, in->n_classes);
    else target[t - from] = decide(rule, k, f + (size_t)(h - 1) * (size_t)in->nq);
    got += ready;
  }
  if (forecasts) *forecasts = got;
  return TG_OK;
}
