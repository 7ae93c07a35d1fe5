/* The feature columns, each computed over one instrument's bars in time order, reading only bars <= t for row t. */
#include <math.h>
#include "data/features_internal.h"
#include "data/timeconv.h"

#define TWO_PI 6.283185307179586

#define OUT(i, c) x[s->rows[i] * (int64_t)f + it->col + (c)] /* column c of the item at bar i */

static int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
static int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

/* Rolling sums over the last w values of v (window ending at i, i >= w-1), kept about a shift k and
 * recomputed exactly every w steps so rounding cannot drift. Uses v[<= i] only. */
typedef struct roll {
  double k, s1, s2;
} roll;

static void roll_step(roll *r, const double *v, int64_t i, int w) {
  if ((i - (w - 1)) % w == 0) {
    r->k = v[i - w + 1];
    r->s1 = r->s2 = 0.0;
    for (int64_t j = i - w + 1; j <= i; j++) {
      double d = v[j] - r->k;
      r->s1 += d;
      r->s2 += d * d;
    }
  } else {
    double din = v[i] - r->k, dout = v[i - w] - r->k;
    r->s1 += din - dout;
    r->s2 += din * din - dout * dout;
  }
}

static double roll_mean(const roll *r, int w) { return r->k + r->s1 / w; }

/* Variance with ddof 0 or 1. */
static double roll_var(const roll *r, int w, int ddof) {
  double v = (r->s2 - r->s1 * r->s1 / w) / (w - ddof);
  return v > 0.0 ? v : 0.0;
}

static void calc_bar_shape(const tg_fitem *it, const tg_fseries *s, float *x, int f) {
  for (int64_t i = 0; i < s->m; i++) {
    double o = s->open[i], h = s->high[i], l = s->low[i], c = s->close[i], rg = h - l;
    switch (it->kind) {
      case TG_F_RANGE: OUT(i, 0) = (float)(rg / c); break;
      case TG_F_BODY: OUT(i, 0) = rg > 0.0 ? (float)((c - o) / rg) : 0.0f; break;
      default: /* wicks */
        OUT(i, 0) = rg > 0.0 ? (float)((h - (o > c ? o : c)) / rg) : 0.0f;
        OUT(i, 1) = rg > 0.0 ? (float)(((o < c ? o : c) - l) / rg) : 0.0f;
        break;
    }
  }
}

/* z-score of log(1 + volume) over the last W bars (population std; 0 when the window is constant). */
static void calc_logvol_z(const tg_fitem *it, const tg_fseries *s, float *x, int f) {
  int w = it->p[0];
  double *lv = s->tmp; /* [m] */
  roll r = {0};
  for (int64_t i = 0; i < s->m; i++) {
    lv[i] = log1p(s->volume[i]);
    if (i < w - 1) continue;
    roll_step(&r, lv, i, w);
    double mean = roll_mean(&r, w), sd = sqrt(roll_var(&r, w, 0));
    OUT(i, 0) = sd > 1e-9 * fabs(mean) + 1e-12 ? (float)((lv[i] - mean) / sd) : 0.0f;
  }
}

/* Sample std of the last W log returns: bar i uses returns of bars i-W+1 .. i. */
static void calc_vol(const tg_fitem *it, const tg_fseries *s, float *x, int f) {
  int w = it->p[0];
  double *ret = s->tmp; /* [m] ret[i] = log(c[i]/c[i-1]), ret[0] unused */
  roll r = {0};
  ret[0] = 0.0;
  for (int64_t i = 1; i < s->m; i++) {
    ret[i] = log(s->close[i] / s->close[i - 1]);
    if (i < w) continue;
    roll_step(&r, ret + 1, i - 1, w);
    OUT(i, 0) = (float)sqrt(roll_var(&r, w, 1));
  }
}

/* close / mean(last W closes) - 1 */
static void calc_dist_mean(const tg_fitem *it, const tg_fseries *s, float *x, int f) {
  int w = it->p[0];
  roll r = {0};
  for (int64_t i = w - 1; i < s->m; i++) {
    roll_step(&r, s->close, i, w);
    OUT(i, 0) = (float)(s->close[i] / roll_mean(&r, w) - 1.0);
  }
}

/* Wilder's RSI: the first averages are plain means of the first N changes, then
 * avg = (avg * (N-1) + x) / N. Output RSI / 100. */
static void calc_rsi(const tg_fitem *it, const tg_fseries *s, float *x, int f) {
  int n = it->p[0];
  double gain = 0.0, loss = 0.0;
  for (int64_t i = 1; i < s->m; i++) {
    double d = s->close[i] - s->close[i - 1];
    double g = d > 0.0 ? d : 0.0, l = d < 0.0 ? -d : 0.0;
    if (i <= n) {
      gain += g;
      loss += l;
      if (i < n) continue;
      gain /= n;
      loss /= n;
    } else {
      gain = (gain * (n - 1) + g) / n;
      loss = (loss * (n - 1) + l) / n;
    }
    double rsi = loss > 0.0 ? 1.0 - 1.0 / (1.0 + gain / loss) : (gain > 0.0 ? 1.0 : 0.5);
    OUT(i, 0) = (float)rsi;
  }
}

/* MACD of close normalised by close, and its signal EMA; EMAs seeded with the first value. */
static void calc_macd(const tg_fitem *it, const tg_fseries *s, float *x, int f) {
  double af = 2.0 / (it->p[0] + 1.0), as = 2.0 / (it->p[1] + 1.0), ag = 2.0 / (it->p[2] + 1.0);
  double ef = 0.0, es = 0.0, sig = 0.0;
  int64_t macd_from = it->p[1] - 1; /* the slow EMA has seen S bars */
  for (int64_t i = 0; i < s->m; i++) {
    double c = s->close[i];
    ef = i == 0 ? c : ef + af * (c - ef);
    es = i == 0 ? c : es + as * (c - es);
    double macd = (ef - es) / c;
    if (i < macd_from) continue;
    sig = i == macd_from ? macd : sig + ag * (macd - sig);
    if (i < it->warmup) continue;
    OUT(i, 0) = (float)macd;
    OUT(i, 1) = (float)sig;
  }
}

/* Time of day and day of week in zone tz. */
static tg_status calc_calendar(const tg_fitem *it, const tg_fseries *s, const char *tz, float *x, int f) {
  for (int64_t i = 0; i < s->m; i++) {
    int off = 0;
    tg_status st = tg_tz_offset_at_utc(tz, floor_div(s->ts[i], TG_NS_PER_S), &off);
    if (st != TG_OK) return st;
    int64_t local = s->ts[i] + (int64_t)off * TG_NS_PER_S;
    double a;
    if (it->kind == TG_F_TOD) a = TWO_PI * (double)floor_mod(local, TG_NS_PER_DAY) / (double)TG_NS_PER_DAY;
    else a = TWO_PI * (double)floor_mod(floor_div(local, TG_NS_PER_DAY) + 3, 7) / 7.0; /* 1970-01-01: Thu */
    OUT(i, 0) = (float)sin(a);
    OUT(i, 1) = (float)cos(a);
  }
  return TG_OK;
}

tg_status tg_feature_calc(const tg_fitem *it, const tg_fseries *s, const char *tz, float *x, int f) {
  switch (it->kind) {
    case TG_F_LOGRET:
      for (int64_t i = 1; i < s->m; i++) OUT(i, 0) = (float)log(s->close[i] / s->close[i - 1]);
      return TG_OK;
    case TG_F_RANGE:
    case TG_F_BODY:
    case TG_F_WICKS: calc_bar_shape(it, s, x, f); return TG_OK;
    case TG_F_LOGVOL_Z: calc_logvol_z(it, s, x, f); return TG_OK;
    case TG_F_VOL: calc_vol(it, s, x, f); return TG_OK;
    case TG_F_RSI: calc_rsi(it, s, x, f); return TG_OK;
    case TG_F_MACD: calc_macd(it, s, x, f); return TG_OK;
    case TG_F_DIST_MEAN: calc_dist_mean(it, s, x, f); return TG_OK;
    case TG_F_TOD:
    case TG_F_DOW: return calc_calendar(it, s, tz, x, f);
    case TG_F_INST:
      for (int64_t i = 0; i < s->m; i++)
        for (int c = 0; c < it->ncols; c++) OUT(i, c) = c == s->inst ? 1.0f : 0.0f;
      return TG_OK;
    default: return tg_error(TG_ERR_INVALID, "features: internal: unknown kind %d", (int)it->kind);
  }
}
