/* The feature columns as per-bar updates of one instrument's state: row t reads bars <= t of its own instrument only. */
#include <math.h>
#include <string.h>
#include "base/intmath.h"
#include "base/alloc.h"
#include "data/dataset/features_internal.h"
#include "data/readers/timeconv.h"

#define TWO_PI 6.283185307179586


tg_status tg_finst_init(tg_finst *s, const tg_fplan *p) {
  memset(s, 0, sizeof *s);
  size_t slots = 0;
  for (int i = 0; i < p->ni; i++) slots += (size_t)p->items[i].ring;
  s->st = tg_calloc((size_t)(p->ni > 0 ? p->ni : 1), sizeof *s->st);
  s->pool = slots ? tg_malloc(slots * sizeof(double)) : NULL;
  if (!s->st || (slots && !s->pool)) {
    tg_finst_free(s);
    return tg_error(TG_ERR_NOMEM, "features: out of memory for an instrument's state (%zu bytes)",
                    slots * sizeof(double) + (size_t)p->ni * sizeof *s->st);
  }
  tg_finst_reset(s, p);
  return TG_OK;
}

void tg_finst_reset(tg_finst *s, const tg_fplan *p) {
  double *ring = s->pool;
  for (int i = 0; i < p->ni; i++) {
    memset(&s->st[i], 0, sizeof s->st[i]);
    s->st[i].ring = p->items[i].ring ? ring : NULL;
    ring += p->items[i].ring;
    if (p->items[i].kind >= TG_F_COL) s->st[i].a = NAN; /* covariates: no value yet */
  }
  s->i = 0;
  s->last_ts = 0;
  s->prev_close = 0.0;
  s->tz_from = s->tz_until = 0;
  s->tz_off = 0;
}

int tg_finst_covariates_seen(const tg_fplan *p, const tg_finst *s) {
  for (int i = 0; i < p->ni; i++)
    if (p->items[i].kind >= TG_F_COL && p->items[i].kind != TG_F_CAT && isnan(s->st[i].a)) return 0;
  return 1;
}

void tg_finst_free(tg_finst *s) {
  tg_free(s->st);
  tg_free(s->pool);
  memset(s, 0, sizeof *s);
}

/* Rolling sums over the last w values, kept about a shift (r->a) and recomputed exactly each time the
 * count of values is a multiple of w, so rounding cannot drift. Adds v, the n-th value (n >= 1); returns
 * 1 when the window is full (n >= w), and then r->a, r->b, r->c are the shift, sum and sum of squares
 * of the last w values about it. Ring [w+1]: after the write, slot + 1 holds the value w back. */
static int roll_push(tg_fitem_state *r, int w, int64_t n, double v) {
  int size = w + 1, h = r->slot;
  r->ring[h] = v;
  r->slot = h + 1 == size ? 0 : h + 1;
  if (++r->phase == w) r->phase = 0;
  if (n < w) return 0;
  int old = r->slot; /* the value n - w (1-based), leaving the window */
  if (r->phase == 0) {
    int j = old + 1 == size ? 0 : old + 1; /* the oldest of the last w */
    double k = r->ring[j], s1 = 0.0, s2 = 0.0;
    for (int t = 0; t < w; t++) {
      double d = r->ring[j] - k;
      s1 += d;
      s2 += d * d;
      j = j + 1 == size ? 0 : j + 1;
    }
    r->a = k, r->b = s1, r->c = s2;
  } else {
    double din = v - r->a, dout = r->ring[old] - r->a;
    r->b += din - dout;
    r->c += din * din - dout * dout;
  }
  return 1;
}

static double roll_mean(const tg_fitem_state *r, int w) { return r->a + r->b / w; }

/* Variance with ddof 0 or 1. */
static double roll_var(const tg_fitem_state *r, int w, int ddof) {
  double v = (r->c - r->b * r->b / w) / (w - ddof);
  return v > 0.0 ? v : 0.0;
}

/* z-score of log(1 + volume) over the last W bars (population std; 0 when the window is constant). */
static float logvol_z(const tg_fitem *it, tg_fitem_state *r, int64_t i, double volume) {
  int w = it->p[0];
  double lv = log1p(volume);
  if (!roll_push(r, w, i + 1, lv)) return NAN;
  double mean = roll_mean(r, w), sd = sqrt(roll_var(r, w, 0));
  return sd > 1e-9 * fabs(mean) + 1e-12 ? (float)((lv - mean) / sd) : 0.0f;
}

/* Sample std of the last W log returns: bar i uses the returns of bars i-W+1 .. i. */
static float vol(const tg_fitem *it, tg_fitem_state *r, int64_t i, double ret) {
  int w = it->p[0];
  if (i == 0 || !roll_push(r, w, i, ret)) return NAN;
  return (float)sqrt(roll_var(r, w, 1));
}

/* close / mean(last W closes) - 1 */
static float dist_mean(const tg_fitem *it, tg_fitem_state *r, int64_t i, double close) {
  int w = it->p[0];
  if (!roll_push(r, w, i + 1, close)) return NAN;
  return (float)(close / roll_mean(r, w) - 1.0);
}

/* Wilder's RSI / 100: the first averages (r->a gain, r->b loss) are plain means of the first N
 * changes, then avg = (avg * (N-1) + x) / N. */
static float rsi(const tg_fitem *it, tg_fitem_state *r, int64_t i, double close, double prev) {
  int n = it->p[0];
  if (i == 0) return NAN;
  double d = close - prev;
  double g = d > 0.0 ? d : 0.0, l = d < 0.0 ? -d : 0.0;
  if (i <= n) {
    r->a += g;
    r->b += l;
    if (i < n) return NAN;
    r->a /= n;
    r->b /= n;
  } else {
    r->a = (r->a * (n - 1) + g) / n;
    r->b = (r->b * (n - 1) + l) / n;
  }
  double v = r->b > 0.0 ? 1.0 - 1.0 / (1.0 + r->a / r->b) : (r->a > 0.0 ? 1.0 : 0.5);
  return (float)v;
}

/* MACD of close normalised by close (out[0]) and its signal EMA (out[1]); EMAs (r->a fast, r->b slow,
 * r->c signal) seeded with the first value. */
static void macd(const tg_fitem *it, tg_fitem_state *r, int64_t i, double c, float *out) {
  r->a = i == 0 ? c : r->a + it->alpha[0] * (c - r->a);
  r->b = i == 0 ? c : r->b + it->alpha[1] * (c - r->b);
  double m = (r->a - r->b) / c;
  int64_t macd_from = it->p[1] - 1; /* the slow EMA has seen S bars */
  out[0] = out[1] = NAN;
  if (i < macd_from) return;
  r->c = i == macd_from ? m : r->c + it->alpha[2] * (m - r->c);
  if (i < it->warmup) return;
  out[0] = (float)m;
  out[1] = (float)r->c;
}

/* The zone's offset at UTC second u, from the span cached in s when u is inside it. */
static tg_status utc_offset(const tg_fplan *p, tg_finst *s, int64_t u, int *off) {
  if (!p->zone) {
    *off = 0;
    return TG_OK;
  }
  if (u >= s->tz_from && u < s->tz_until) {
    *off = s->tz_off;
    return TG_OK;
  }
  int64_t from, until;
  if (tg_tz_zone_offset(p->zone, u, off, &from, &until)) {
    s->tz_from = from, s->tz_until = until, s->tz_off = *off;
    return TG_OK;
  }
  return tg_tz_offset_at_utc(p->tz, u, off); /* what only the C library can say; not cached */
}

/* sin and cos of the angle of local time `local` (ns): time of day, or day of week (Monday = 0). */
static void calendar(tg_fkind kind, int64_t local, float *out) {
  double a;
  if (kind == TG_F_TOD) a = TWO_PI * (double)tg_floor_mod(local, TG_NS_PER_DAY) / (double)TG_NS_PER_DAY;
  else a = TWO_PI * (double)tg_floor_mod(tg_floor_div(local, TG_NS_PER_DAY) + 3, 7) / 7.0; /* 1970-01-01: Thu */
  out[0] = (float)sin(a);
  out[1] = (float)cos(a);
}

tg_status tg_feature_calendar(int64_t ts, const char *tz, float out[4]) {
  int off = 0;
  tg_status st = tg_tz_offset_at_utc(tz, tg_floor_div(ts, TG_NS_PER_S), &off);
  if (st != TG_OK) return st;
  int64_t local = ts + (int64_t)off * TG_NS_PER_S;
  calendar(TG_F_TOD, local, out);
  calendar(TG_F_DOW, local, out + 2);
  return TG_OK;
}

/* range, body, wicks: the bar's own shape. */
static void bar_shape(tg_fkind kind, const tg_fbar *b, float *out) {
  double o = b->open, h = b->high, l = b->low, c = b->close, rg = h - l;
  switch (kind) {
    case TG_F_RANGE: out[0] = (float)(rg / c); break;
    case TG_F_BODY: out[0] = rg > 0.0 ? (float)((c - o) / rg) : 0.0f; break;
    default: /* wicks */
      out[0] = rg > 0.0 ? (float)((h - (o > c ? o : c)) / rg) : 0.0f;
      out[1] = rg > 0.0 ? (float)(((o < c ? o : c) - l) / rg) : 0.0f;
      break;
  }
}

tg_status tg_feature_bar(const tg_fplan *p, tg_finst *s, int inst, const tg_fbar *b, float *row) {
  int64_t local = 0;
  if (p->calendar) { /* the only step that can fail: before any state changes */
    int off = 0;
    tg_status st = utc_offset(p, s, tg_floor_div(b->ts, TG_NS_PER_S), &off);
    if (st != TG_OK) return st;
    local = b->ts + (int64_t)off * TG_NS_PER_S;
  }
  int64_t i = s->i;
  double c = b->close, ret = p->returns && i > 0 ? log(c / s->prev_close) : 0.0;
  for (int k = 0; k < p->ni; k++) {
    const tg_fitem *it = &p->items[k];
    tg_fitem_state *r = &s->st[k];
    float *out = row + it->col;
    switch (it->kind) {
      case TG_F_LOGRET: out[0] = i > 0 ? (float)ret : NAN; break;
      case TG_F_RANGE:
      case TG_F_BODY:
      case TG_F_WICKS: bar_shape(it->kind, b, out); break;
      case TG_F_LOGVOL_Z: out[0] = logvol_z(it, r, i, b->volume); break;
      case TG_F_VOL: out[0] = vol(it, r, i, ret); break;
      case TG_F_RSI: out[0] = rsi(it, r, i, c, s->prev_close); break;
      case TG_F_MACD: macd(it, r, i, c, out); break;
      case TG_F_DIST_MEAN: out[0] = dist_mean(it, r, i, c); break;
      case TG_F_TOD:
      case TG_F_DOW: calendar(it->kind, local, out); break;
      case TG_F_INST:
        for (int col = 0; col < it->ncols; col++) out[col] = col == inst ? 1.0f : 0.0f;
        break;
      case TG_F_COL:
      case TG_F_KNOWN:
      case TG_F_STATIC: { /* the value, a missing one carried forward; then the leads as given */
        const double *v = b->num + it->in;
        if (!isnan(v[0])) r->a = v[0];
        out[0] = (float)r->a;
        for (int h = 1; h < it->ncols; h++) out[h] = (float)v[h];
        break;
      }
      case TG_F_CAT: out[0] = (float)b->cat[it->in]; break;
      default: break; /* the parser makes no other kind */
    }
  }
  s->i = i + 1;
  s->last_ts = b->ts;
  s->prev_close = c;
  return TG_OK;
}
