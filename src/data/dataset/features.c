/* Feature specs ("logret,vol:10,rsi:14,col:x,...") parsed into a plan, then computed bar by bar per instrument into one [n, f] array. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "data/dataset/features_internal.h"
#include "data/readers/timeconv.h"

#define PARAM_MIN 2
#define PARAM_MAX 100000

typedef struct fdef {
  const char *name;
  int nparam;     /* parameters it takes (all optional) */
  int defaults[3];
  int ncols;      /* 0: one per instrument */
  int scale;      /* normalise its columns */
} fdef;

static const fdef k_defs[TG_F_BUILTIN_COUNT] = {
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
  "dow, inst, col:NAME, known:NAME, static:NAME, cat:NAME"

void tg_features_free(tg_features *fx) {
  tg_free(fx->x);
  tg_free(fx->names);
  tg_free(fx->warmup);
  tg_free(fx->scale);
  tg_free(fx->role);
  tg_free(fx->card);
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

/* Parses one token ("vol:10", "col:x") into it. tok is trimmed and non-empty. */
static tg_status parse_token(const char *tok, int leads, tg_fitem *it) {
  char name[32];
  size_t len = strcspn(tok, ":");
  int cov = tg_fcov_kind(tok, len);
  if (cov >= 0) return tg_fcov_parse(tok, (tg_fkind)cov, leads, it);
  if (len >= sizeof name) len = sizeof name - 1;
  memcpy(name, tok, len);
  name[len] = '\0';
  int kind = -1;
  for (int k = 0; k < TG_F_BUILTIN_COUNT; k++)
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
  if (it->kind == TG_F_LOGVOL_Z || it->kind == TG_F_VOL || it->kind == TG_F_DIST_MEAN) it->ring = it->p[0] + 1;
  if (it->kind == TG_F_MACD)
    for (int j = 0; j < 3; j++) it->alpha[j] = 2.0 / (it->p[j] + 1.0);
  return TG_OK;
}

/* Column c's name: the kind's column names plus parameters ("vol_10", "macd_signal_12_26_9"). */
static void column_name(const tg_fitem *it, int c, const uint32_t *ids, char *out) {
  static const char *two[TG_F_BUILTIN_COUNT][2] = {
      [TG_F_WICKS] = {"wick_up", "wick_lo"}, [TG_F_MACD] = {"macd", "macd_signal"},
      [TG_F_TOD] = {"tod_sin", "tod_cos"},   [TG_F_DOW] = {"dow_sin", "dow_cos"}};
  if (it->kind >= TG_F_BUILTIN_COUNT) { /* covariates: "NAME", leads "NAME@+h" (the parser checked the length) */
    char tmp[TG_NAME_MAX + 16];
    if (c == 0) snprintf(tmp, sizeof tmp, "%s", it->cname);
    else snprintf(tmp, sizeof tmp, "%s@+%d", it->cname, c);
    size_t len = strlen(tmp) < TG_NAME_MAX ? strlen(tmp) : TG_NAME_MAX - 1;
    memcpy(out, tmp, len);
    out[len] = '\0';
    return;
  }
  const fdef *d = &k_defs[it->kind];
  if (it->kind == TG_F_INST) {
    snprintf(out, TG_NAME_MAX, "inst=%u", ids[c]);
    return;
  }
  const char *base = two[it->kind][0] ? two[it->kind][c] : d->name;
  if (d->nparam == 1) snprintf(out, TG_NAME_MAX, "%s_%d", base, it->p[0]);
  else if (d->nparam == 3) snprintf(out, TG_NAME_MAX, "%s_%d_%d_%d", base, it->p[0], it->p[1], it->p[2]);
  else snprintf(out, TG_NAME_MAX, "%s", base);
}

/* 1 when name is "NAME@+h" of known: item k's leads. */
static int is_lead_of(const char *name, const tg_fitem *k) {
  size_t len = strlen(k->cname);
  if (k->kind != TG_F_KNOWN || k->ncols < 2 || strncmp(name, k->cname, len) != 0 || strncmp(name + len, "@+", 2) != 0)
    return 0;
  const char *d = name + len + 2;
  if (*d < '1' || *d > '9' || strspn(d, "0123456789") != strlen(d) || strlen(d) > 9) return 0;
  return atoi(d) < k->ncols;
}

/* An error when item n's columns take a name an earlier item's have (a covariate named like a built-in column, or
 * two tokens over one extra column). */
static tg_status check_names(const tg_fitem *items, int n, const char *tok) {
  const tg_fitem *it = &items[n];
  for (int j = 0; j < n; j++) {
    const tg_fitem *o = &items[j];
    if (o->kind == TG_F_INST || it->kind == TG_F_INST || (o->kind < TG_F_BUILTIN_COUNT && it->kind < TG_F_BUILTIN_COUNT))
      continue;
    if (o->kind >= TG_F_BUILTIN_COUNT && it->kind >= TG_F_BUILTIN_COUNT) {
      if (strcmp(o->cname, it->cname) == 0)
        return tg_error(TG_ERR_INVALID, "features: '%s' repeats the column '%s' of an earlier token (each extra "
                        "column once: col:, known:, static: or cat:)", tok, it->cname);
      if (is_lead_of(it->cname, o) || is_lead_of(o->cname, it))
        return tg_error(TG_ERR_INVALID, "features: '%s': a column \"%s\" and a lead of known:%s would share a name",
                        tok, is_lead_of(it->cname, o) ? it->cname : o->cname, is_lead_of(it->cname, o) ? o->cname
                        : it->cname);
      continue;
    }
    const tg_fitem *b = o->kind < TG_F_BUILTIN_COUNT ? o : it, *c = b == o ? it : o; /* built-in, covariate */
    for (int q = 0; q < b->ncols; q++) {
      char x[TG_NAME_MAX];
      column_name(b, q, NULL, x);
      if (strcmp(x, c->cname) == 0 || is_lead_of(x, c))
        return tg_error(TG_ERR_INVALID, "features: '%s': the feature column '%s' would appear twice (a built-in "
                        "feature has that name)", tok, x);
    }
  }
  return TG_OK;
}

/* The next comma-separated token of the spec at *q into out (room for all of the spec), CSV-style: text between
 * double quotes keeps its commas and spaces, and "" in it is one quote (col:"weird ""q"", é" names the column
 * weird "q", é); spaces outside quotes around the token and after its first ':' are dropped. Advances *q past the comma; sets *last at the
 * end of the spec. TG_ERR_INVALID for a quote left open. */
static tg_status next_token(const char *spec, const char **q, char *out, int *last) {
  const char *p = *q;
  size_t n = 0, keep = 0; /* keep: the length up to the last character that is not a space outside quotes */
  while (isspace((unsigned char)*p)) p++;
  int colon = 0; /* the first ':' outside quotes was written: spaces right after it are dropped ("col: x") */
  for (; *p && *p != ','; p++) {
    if (*p != '"') {
      if (colon == 1 && isspace((unsigned char)*p)) continue;
      if (colon == 1) colon = 2;
      if (*p == ':' && !colon) colon = 1;
      out[n++] = *p;
      if (!isspace((unsigned char)*p)) keep = n;
      continue;
    }
    if (colon == 1) colon = 2;
    for (p++;; p++) { /* quoted: up to the quote not doubled */
      if (!*p) return tg_error(TG_ERR_INVALID, "features: a quote is left open in \"%s\"", spec);
      if (*p == '"' && p[1] != '"') break;
      if (*p == '"') p++;
      out[n++] = *p;
    }
    keep = n;
  }
  out[keep] = '\0';
  *last = *p != ',';
  *q = *p ? p + 1 : p;
  return TG_OK;
}

/* Splits spec on commas into items; sets *nitems and the total column count. cat: items' columns come last. */
static tg_status parse_spec(const char *spec, int k, int leads, tg_fplan *pl) {
  tg_fitem *items = pl->items;
  size_t len = strlen(spec);
  char *buf = tg_malloc(len + 1);
  if (!buf) return tg_error(TG_ERR_NOMEM, "features: out of memory");
  tg_status st = TG_OK;
  int n = 0, cols = 0, last = 0;
  const char *q = spec;
  char *p = buf;
  for (;;) {
    if ((st = next_token(spec, &q, buf, &last)) != TG_OK) break;
    if (!*p) {
      st = tg_error(TG_ERR_INVALID, "features: empty name in \"%s\" (valid names: " VALID_NAMES ")", spec);
      break;
    }
    if (n == TG_F_MAX_ITEMS) {
      st = tg_error(TG_ERR_INVALID, "features: more than %d names in the spec", TG_F_MAX_ITEMS);
      break;
    }
    if ((st = parse_token(p, leads, &items[n])) != TG_OK) break;
    for (int j = 0; j < n && items[n].kind < TG_F_BUILTIN_COUNT; j++)
      if (items[j].kind == items[n].kind && memcmp(items[j].p, items[n].p, sizeof items[n].p) == 0) {
        st = tg_error(TG_ERR_INVALID, "features: '%s' repeats an earlier feature (valid names: " VALID_NAMES ")", p);
        break;
      }
    if (st != TG_OK) break;
    if (items[n].kind < TG_F_BUILTIN_COUNT)
      items[n].ncols = k_defs[items[n].kind].ncols ? k_defs[items[n].kind].ncols : k;
    if ((st = check_names(items, n, p)) != TG_OK) break;
    if (items[n].kind != TG_F_CAT) {
      items[n].col = cols;
      cols += items[n].ncols;
    }
    if (items[n].kind == TG_F_COL || items[n].kind == TG_F_KNOWN || items[n].kind == TG_F_STATIC) {
      items[n].in = pl->n_num;
      pl->n_num += items[n].ncols;
    }
    n++;
    if (last) break;
  }
  tg_free(buf);
  for (int i = 0; i < n && st == TG_OK; i++)
    if (items[i].kind == TG_F_CAT) {
      items[i].col = cols++;
      items[i].in = pl->n_cat++;
    }
  pl->ni = n;
  pl->f = cols;
  return st;
}

tg_status tg_fplan_make(const char *spec, const char *tz, int leads, int k, tg_fplan *out) {
  memset(out, 0, sizeof *out);
  if (!spec) spec = TG_FEATURES_DEFAULT;
  if (k < 1) return tg_error(TG_ERR_INVALID, "features: %d instruments (need at least 1)", k);
  if (leads < 0 || leads > TG_FEATURES_MAX_LEADS)
    return tg_error(TG_ERR_INVALID, "features: leads %d (must be 0..%d)", leads, TG_FEATURES_MAX_LEADS);
  if (!tg_tz_is_utc(tz)) {
    tg_status st = tg_tz_zone_get(tz, &out->zone); /* loads the zone now, so no bar waits for its file */
    if (st != TG_OK) return st;
    out->tz = tz;
  }
  out->k = k;
  out->leads = leads;
  tg_status st = parse_spec(spec, k, leads, out);
  if (st != TG_OK) return st;
  for (int i = 0; i < out->ni; i++) {
    const tg_fitem *it = &out->items[i];
    if (it->warmup > out->warmup_max) out->warmup_max = it->warmup;
    out->calendar |= it->kind == TG_F_TOD || it->kind == TG_F_DOW;
    out->returns |= it->kind == TG_F_LOGRET || it->kind == TG_F_VOL;
  }
  return TG_OK;
}

const tg_fitem *tg_fplan_item(const tg_fplan *p, int col) {
  for (int i = 0; i < p->ni; i++)
    if (col >= p->items[i].col && col < p->items[i].col + p->items[i].ncols) return &p->items[i];
  return &p->items[0];
}

void tg_fplan_column(const tg_fplan *p, const uint32_t *ids, int col, char name[TG_NAME_MAX], int32_t *warmup,
                     uint8_t *scale, uint8_t *role) {
  const tg_fitem *it = tg_fplan_item(p, col);
  column_name(it, col - it->col, ids, name);
  *warmup = it->warmup;
  switch (it->kind) {
    case TG_F_KNOWN: *role = col == it->col ? TG_FEATURE_KNOWN : TG_FEATURE_KNOWN_LEAD; break;
    case TG_F_STATIC: *role = TG_FEATURE_STATIC; break;
    case TG_F_CAT: *role = TG_FEATURE_CATEGORY; break;
    default: *role = TG_FEATURE_OBSERVED; break;
  }
  *scale = it->kind == TG_F_CAT ? 0 : it->kind >= TG_F_BUILTIN_COUNT ? 1 : (uint8_t)k_defs[it->kind].scale;
}

int tg_fbar_bad(const tg_fbar *b) {
  double px[4] = {b->open, b->high, b->low, b->close};
  for (int j = 0; j < 4; j++)
    if (!(isfinite(px[j]) && px[j] > 0.0)) return 1 + j;
  if (!(isfinite(b->volume) && b->volume >= 0.0)) return 5;
  if (b->high < b->low) return 6;
  return 0;
}

tg_status tg_fbar_error(const tg_fbar *b, int bad, const char *where) {
  static const char *nm[4] = {"open", "high", "low", "close"};
  double px[4] = {b->open, b->high, b->low, b->close};
  if (bad >= 1 && bad <= 4)
    return tg_error(TG_ERR_NUMERIC, "%s: %s is %g; prices must be finite and > 0", where, nm[bad - 1], px[bad - 1]);
  if (bad == 5) return tg_error(TG_ERR_NUMERIC, "%s: volume is %g; it must be finite and >= 0", where, b->volume);
  return tg_error(TG_ERR_NUMERIC, "%s: high %g is below low %g", where, b->high, b->low);
}

static tg_fbar bar_at(const tg_bars *b, int64_t r) {
  tg_fbar x = {.ts = b->ts[r], .open = b->open[r], .high = b->high[r], .low = b->low[r], .close = b->close[r],
               .volume = b->volume[r]};
  return x;
}

static tg_status check_bars(const tg_bars *b) {
  for (int64_t i = 0; i < b->n; i++) {
    tg_fbar x = bar_at(b, i);
    int bad = tg_fbar_bad(&x);
    if (bad) {
      char where[96], t[TG_TIME_TEXT];
      snprintf(where, sizeof where, "features: bar %lld (%s)", (long long)i, tg_format_time(b->ts[i], t, sizeof t));
      return tg_fbar_error(&x, bad, where);
    }
  }
  return TG_OK;
}

/* The output arrays and each column's name, warm-up and scale flag. */
static tg_status alloc_out(const tg_fplan *p, const tg_layout *lay, tg_features *out) {
  int64_t n = lay->n;
  int f = p->f;
  out->n = n;
  out->f = f;
  out->k = lay->k;
  out->warmup_max = p->warmup_max;
  out->x = tg_malloc((size_t)n * (size_t)f * sizeof(float));
  out->names = tg_calloc((size_t)f, sizeof *out->names);
  out->warmup = tg_calloc((size_t)f, sizeof *out->warmup);
  out->scale = tg_calloc((size_t)f, sizeof *out->scale);
  out->role = tg_calloc((size_t)f, sizeof *out->role);
  out->card = tg_calloc((size_t)f, sizeof *out->card);
  out->first_valid = tg_calloc((size_t)lay->k, sizeof *out->first_valid);
  if (!out->x || !out->names || !out->warmup || !out->scale || !out->role || !out->card || !out->first_valid)
    return tg_error(TG_ERR_NOMEM, "features: out of memory for %lld x %d features", (long long)n, f);
  out->n_cat = p->n_cat;
  for (int c = 0; c < f; c++)
    tg_fplan_column(p, lay->ids, c, out->names[c], &out->warmup[c], &out->scale[c], &out->role[c]);
  return TG_OK;
}

/* Each instrument's bars, in time order, through the per-bar update the stream uses. */
static tg_status compute_rows(const tg_fplan *p, tg_finst *s, tg_fcov *cov, const tg_bars *bars,
                              const tg_layout *lay, tg_features *out) {
  out->first_valid_row = 0;
  for (int j = 0; j < lay->k; j++) {
    tg_finst_reset(s, p);
    int64_t p0 = lay->seg[j], m = lay->seg[j + 1] - p0;
    for (int64_t q = 0; q < m; q++) {
      int64_t r = lay->rows[p0 + q];
      tg_fbar b = bar_at(bars, r);
      if (cov) tg_fcov_row(cov, r, &b);
      tg_status st = tg_feature_bar(p, s, j, &b, out->x + r * (int64_t)p->f);
      if (st != TG_OK) return st;
    }
    out->first_valid[j] = m > p->warmup_max ? lay->rows[p0 + p->warmup_max] : lay->n;
    if (out->first_valid[j] > out->first_valid_row) out->first_valid_row = out->first_valid[j];
  }
  return TG_OK;
}

tg_status tg_features_compute(const tg_bars *bars, const tg_layout *lay, const tg_feature_opts *opts,
                              tg_features *out) {
  memset(out, 0, sizeof *out);
  if (!bars || !lay || lay->n != bars->n)
    return tg_error(TG_ERR_INVALID, "features: the layout does not belong to these bars");
  tg_fplan plan;
  tg_status st = tg_fplan_make(opts ? opts->spec : NULL, opts ? opts->tz : NULL, opts ? opts->leads : 0, lay->k, &plan);
  if (st != TG_OK) return st;
  if ((st = check_bars(bars)) != TG_OK) return st;
  tg_fcov cov;
  int has_cov = plan.n_num + plan.n_cat > 0;
  memset(&cov, 0, sizeof cov);
  if (has_cov && (st = tg_fcov_bind(&plan, bars, lay, opts ? opts->vocab : NULL, opts ? opts->n_vocab : 0, &cov)) != TG_OK) return st;
  tg_finst s;
  if ((st = tg_finst_init(&s, &plan)) != TG_OK) {
    tg_fcov_free(&cov);
    return st;
  }
  st = alloc_out(&plan, lay, out);
  if (st == TG_OK) st = compute_rows(&plan, &s, has_cov ? &cov : NULL, bars, lay, out);
  if (st == TG_OK && has_cov) tg_fcov_finish(&plan, &cov, lay, out);
  tg_finst_free(&s);
  tg_fcov_free(&cov);
  if (st != TG_OK) tg_features_free(out);
  return st;
}
