/* Feature specs ("logret,vol:10,rsi:14,...") parsed into columns, then computed per instrument into one [n, f] array. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "data/features_internal.h"
#include "data/timeconv.h"

#define MAX_ITEMS 64
#define PARAM_MIN 2
#define PARAM_MAX 100000

typedef struct fdef {
  const char *name;
  int nparam;     /* parameters it takes (all optional) */
  int defaults[3];
  int ncols;      /* 0: one per instrument */
  int scale;      /* normalise its columns */
} fdef;

static const fdef k_defs[TG_F_KIND_COUNT] = {
    [TG_F_LOGRET] = {"logret", 0, {0}, 1, 1},
    [TG_F_RANGE] = {"range", 0, {0}, 1, 1},
    [TG_F_BODY] = {"body", 0, {0}, 1, 1},
    [TG_F_WICKS] = {"wicks", 0, {0}, 2, 1},
    [TG_F_LOGVOL_Z] = {"logvol_z", 1, {20}, 1, 1},
    [TG_F_VOL] = {"vol", 1, {20}, 1, 1},
    [TG_F_RSI] = {"rsi", 1, {14}, 1, 1},
    [TG_F_MACD] = {"macd", 3, {12, 26, 9}, 2, 1},
    [TG_F_DIST_MEAN] = {"dist_mean", 1, {20}, 1, 1},
    [TG_F_TOD] = {"tod", 0, {0}, 2, 0},
    [TG_F_DOW] = {"dow", 0, {0}, 2, 0},
    [TG_F_INST] = {"inst", 0, {0}, 0, 0},
};

#define VALID_NAMES                                                                                         \
  "logret, range, body, wicks, logvol_z[:W], vol[:W], rsi[:N], macd[:FAST:SLOW:SIGNAL], dist_mean[:W], tod, " \
  "dow, inst"

void tg_features_free(tg_features *fx) {
  tg_free(fx->x);
  tg_free(fx->names);
  tg_free(fx->warmup);
  tg_free(fx->scale);
  tg_free(fx->first_valid);
  memset(fx, 0, sizeof *fx);
}

static int warmup_of(const tg_fitem *it) {
  switch (it->kind) {
    case TG_F_LOGRET: return 1;
    case TG_F_LOGVOL_Z: case TG_F_DIST_MEAN: return it->p[0] - 1;
    case TG_F_VOL: case TG_F_RSI: return it->p[0];
    case TG_F_MACD: return it->p[1] - 1 + it->p[2] - 1;
    default: return 0;
  }
}

/* Parses one token ("vol:10") into it. tok is trimmed and non-empty. */
static tg_status parse_token(const char *tok, tg_fitem *it) {
  char name[32];
  size_t len = strcspn(tok, ":");
  if (len >= sizeof name) len = sizeof name - 1;
  memcpy(name, tok, len);
  name[len] = '\0';
  int kind = -1;
  for (int k = 0; k < TG_F_KIND_COUNT; k++)
    if (strcmp(name, k_defs[k].name) == 0) kind = k;
  if (kind < 0)
    return tg_error(TG_ERR_INVALID, "features: unknown feature '%s' (valid names: " VALID_NAMES ")", tok);
  const fdef *d = &k_defs[kind];
  memset(it, 0, sizeof *it);
  it->kind = (tg_fkind)kind;
  memcpy(it->p, d->defaults, sizeof it->p);
  const char *q = tok + strcspn(tok, ":");
  int np = 0;
  while (*q == ':') {
    q++;
    if (np == d->nparam)
      return tg_error(TG_ERR_INVALID, "features: '%s': %s takes %d parameter%s (valid names: " VALID_NAMES ")",
                      tok, d->name, d->nparam, d->nparam == 1 ? "" : "s");
    char *end;
    long v = isdigit((unsigned char)*q) ? strtol(q, &end, 10) : -1;
    if (v < 0 || (*end != ':' && *end != '\0'))
      return tg_error(TG_ERR_INVALID, "features: '%s': parameter %d is not a whole number (valid names: " VALID_NAMES ")",
                      tok, np + 1);
    if (v < PARAM_MIN || v > PARAM_MAX)
      return tg_error(TG_ERR_INVALID, "features: '%s': parameter %d is %ld (must be %d..%d; valid names: " VALID_NAMES ")",
                      tok, np + 1, v, PARAM_MIN, PARAM_MAX);
    it->p[np++] = (int)v;
    q = end;
  }
  if (it->kind == TG_F_MACD && it->p[0] >= it->p[1])
    return tg_error(TG_ERR_INVALID, "features: '%s': the fast EMA (%d) must be shorter than the slow one (%d) "
                    "(valid names: " VALID_NAMES ")", tok, it->p[0], it->p[1]);
  it->warmup = warmup_of(it);
  return TG_OK;
}

/* Column c's name: the kind's column names plus parameters ("vol_10", "macd_signal_12_26_9"). */
static void column_name(const tg_fitem *it, int c, const tg_layout *lay, char *out) {
  static const char *two[TG_F_KIND_COUNT][2] = {
      [TG_F_WICKS] = {"wick_up", "wick_lo"}, [TG_F_MACD] = {"macd", "macd_signal"},
      [TG_F_TOD] = {"tod_sin", "tod_cos"},   [TG_F_DOW] = {"dow_sin", "dow_cos"}};
  const fdef *d = &k_defs[it->kind];
  if (it->kind == TG_F_INST) {
    snprintf(out, TG_NAME_MAX, "inst=%u", lay->ids[c]);
    return;
  }
  const char *base = two[it->kind][0] ? two[it->kind][c] : d->name;
  if (d->nparam == 1) snprintf(out, TG_NAME_MAX, "%s_%d", base, it->p[0]);
  else if (d->nparam == 3) snprintf(out, TG_NAME_MAX, "%s_%d_%d_%d", base, it->p[0], it->p[1], it->p[2]);
  else snprintf(out, TG_NAME_MAX, "%s", base);
}

/* Splits spec on commas into items; sets *nitems and the total column count. */
static tg_status parse_spec(const char *spec, const tg_layout *lay, tg_fitem *items, int *nitems, int *ncols) {
  size_t len = strlen(spec);
  char *buf = tg_malloc(len + 1);
  if (!buf) return tg_error(TG_ERR_NOMEM, "features: out of memory");
  memcpy(buf, spec, len + 1);
  tg_status st = TG_OK;
  int n = 0, cols = 0;
  char *p = buf;
  for (;;) {
    char *comma = strchr(p, ',');
    if (comma) *comma = '\0';
    while (isspace((unsigned char)*p)) p++;
    char *e = p + strlen(p);
    while (e > p && isspace((unsigned char)e[-1])) *--e = '\0';
    if (!*p) {
      st = tg_error(TG_ERR_INVALID, "features: empty name in \"%s\" (valid names: " VALID_NAMES ")", spec);
      break;
    }
    if (n == MAX_ITEMS) {
      st = tg_error(TG_ERR_INVALID, "features: more than %d names in the spec", MAX_ITEMS);
      break;
    }
    if ((st = parse_token(p, &items[n])) != TG_OK) break;
    for (int j = 0; j < n; j++)
      if (items[j].kind == items[n].kind && memcmp(items[j].p, items[n].p, sizeof items[n].p) == 0) {
        st = tg_error(TG_ERR_INVALID, "features: '%s' repeats an earlier feature (valid names: " VALID_NAMES ")", p);
        break;
      }
    if (st != TG_OK) break;
    items[n].col = cols;
    items[n].ncols = k_defs[items[n].kind].ncols ? k_defs[items[n].kind].ncols : lay->k;
    cols += items[n].ncols;
    n++;
    if (!comma) break;
    p = comma + 1;
  }
  tg_free(buf);
  *nitems = n;
  *ncols = cols;
  return st;
}

static tg_status check_bars(const tg_bars *b) {
  for (int64_t i = 0; i < b->n; i++) {
    double px[4] = {b->open[i], b->high[i], b->low[i], b->close[i]};
    static const char *nm[4] = {"open", "high", "low", "close"};
    for (int j = 0; j < 4; j++)
      if (!(isfinite(px[j]) && px[j] > 0.0))
        return tg_error(TG_ERR_NUMERIC, "features: bar %lld (ts %lld): %s is %g; prices must be finite and > 0",
                        (long long)i, (long long)b->ts[i], nm[j], px[j]);
    if (!(isfinite(b->volume[i]) && b->volume[i] >= 0.0))
      return tg_error(TG_ERR_NUMERIC, "features: bar %lld (ts %lld): volume is %g; it must be finite and >= 0",
                      (long long)i, (long long)b->ts[i], b->volume[i]);
    if (b->high[i] < b->low[i])
      return tg_error(TG_ERR_NUMERIC, "features: bar %lld (ts %lld): high %g is below low %g", (long long)i,
                      (long long)b->ts[i], b->high[i], b->low[i]);
  }
  return TG_OK;
}

/* Gathers instrument j's bars into contiguous columns (or points at the bars when there is one). */
static void series_of(const tg_bars *b, const tg_layout *lay, int j, double *cols, tg_fseries *s, int64_t *ts) {
  int64_t p0 = lay->seg[j], m = lay->seg[j + 1] - p0;
  s->m = m;
  s->rows = lay->rows + p0;
  s->inst = j;
  if (lay->k == 1) {
    s->ts = b->ts;
    s->open = b->open, s->high = b->high, s->low = b->low, s->close = b->close, s->volume = b->volume;
    return;
  }
  double *o = cols, *h = cols + m, *l = cols + 2 * m, *c = cols + 3 * m, *v = cols + 4 * m; /* [m] each */
  for (int64_t i = 0; i < m; i++) {
    int64_t r = s->rows[i];
    ts[i] = b->ts[r], o[i] = b->open[r], h[i] = b->high[r], l[i] = b->low[r], c[i] = b->close[r];
    v[i] = b->volume[r];
  }
  s->ts = ts;
  s->open = o, s->high = h, s->low = l, s->close = c, s->volume = v;
}

tg_status tg_features_compute(const tg_bars *bars, const tg_layout *lay, const tg_feature_opts *opts,
                              tg_features *out) {
  memset(out, 0, sizeof *out);
  if (!bars || !lay || lay->n != bars->n)
    return tg_error(TG_ERR_INVALID, "features: the layout does not belong to these bars");
  const char *spec = opts && opts->spec ? opts->spec : TG_FEATURES_DEFAULT;
  const char *tz = opts ? opts->tz : NULL;
  tg_status st = tg_tz_check(tz);
  if (st != TG_OK) return st;
  tg_fitem items[MAX_ITEMS];
  int ni = 0, f = 0;
  if ((st = parse_spec(spec, lay, items, &ni, &f)) != TG_OK) return st;
  if ((st = check_bars(bars)) != TG_OK) return st;
  int64_t n = bars->n, mmax = 0;
  for (int j = 0; j < lay->k; j++)
    if (lay->seg[j + 1] - lay->seg[j] > mmax) mmax = lay->seg[j + 1] - lay->seg[j];
  out->n = n;
  out->f = f;
  out->k = lay->k;
  out->x = tg_malloc((size_t)n * (size_t)f * sizeof(float));
  out->names = tg_calloc((size_t)f, sizeof *out->names);
  out->warmup = tg_calloc((size_t)f, sizeof *out->warmup);
  out->scale = tg_calloc((size_t)f, sizeof *out->scale);
  out->first_valid = tg_calloc((size_t)lay->k, sizeof *out->first_valid);
  size_t scratch_n = (size_t)mmax * (lay->k > 1 ? 6 : 1);
  double *scratch = tg_malloc(scratch_n * sizeof(double)); /* tmp [mmax]; + 5 columns when gathering */
  int64_t *ts = lay->k > 1 ? tg_malloc((size_t)mmax * sizeof *ts) : NULL;  /* [mmax] */
  if (!out->x || !out->names || !out->warmup || !out->scale || !out->first_valid || !scratch || (lay->k > 1 && !ts)) {
    st = tg_error(TG_ERR_NOMEM, "features: out of memory for %lld x %d features", (long long)n, f);
    goto done;
  }
  for (size_t i = 0; i < (size_t)n * (size_t)f; i++) out->x[i] = NAN;
  for (int i = 0; i < ni; i++) {
    if (items[i].warmup > out->warmup_max) out->warmup_max = items[i].warmup;
    for (int c = 0; c < items[i].ncols; c++) {
      column_name(&items[i], c, lay, out->names[items[i].col + c]);
      out->warmup[items[i].col + c] = items[i].warmup;
      out->scale[items[i].col + c] = (uint8_t)k_defs[items[i].kind].scale;
    }
  }
  out->first_valid_row = 0;
  for (int j = 0; j < lay->k && st == TG_OK; j++) {
    tg_fseries s;
    series_of(bars, lay, j, scratch + mmax, &s, ts);
    s.tmp = scratch;
    for (int i = 0; i < ni && st == TG_OK; i++) st = tg_feature_calc(&items[i], &s, tz, out->x, f);
    out->first_valid[j] = s.m > out->warmup_max ? s.rows[out->warmup_max] : n;
    if (out->first_valid[j] > out->first_valid_row) out->first_valid_row = out->first_valid[j];
  }
done:
  tg_free(scratch);
  tg_free(ts);
  if (st != TG_OK) tg_features_free(out);
  return st;
}
