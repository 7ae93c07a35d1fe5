/* Covariate features (col:, known:, static:, cat:): spec tokens, their inputs from the bars' extra columns, leads. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "data/dataset/features_internal.h"
#include "data/readers/timeconv.h"

static const char *k_kind_names[4] = {"col", "known", "static", "cat"};

static const char *kind_name(tg_fkind kind) { return k_kind_names[kind - TG_F_COL]; }

int tg_fcov_kind(const char *name, size_t len) {
  for (int k = 0; k < 4; k++)
    if (strlen(k_kind_names[k]) == len && memcmp(name, k_kind_names[k], len) == 0) return TG_F_COL + k;
  return -1;
}

tg_status tg_fcov_parse(const char *tok, tg_fkind kind, int leads, tg_fitem *it) {
  const char *name = tok + strcspn(tok, ":");
  if (*name == ':') name++; /* the spec's tokenizer dropped the spaces after it (and kept quoted ones) */
  if (!*name)
    return tg_error(TG_ERR_INVALID, "features: '%s' names no column (write %s:NAME, NAME an extra column of the bars)",
                    tok, kind_name(kind));
  memset(it, 0, sizeof *it);
  it->kind = kind;
  it->ncols = kind == TG_F_KNOWN ? 1 + leads : 1;
  char suffix[16] = "";
  if (it->ncols > 1) snprintf(suffix, sizeof suffix, "@+%d", leads);
  size_t len = strlen(name), room = TG_NAME_MAX - 1 - strlen(suffix);
  if (len > room)
    return tg_error(TG_ERR_INVALID, "features: '%s': the column name is %zu bytes; a feature column's name holds at "
                    "most %zu%s", tok, len, room, *suffix ? " (with its leads' \"@+H\")" : "");
  memcpy(it->cname, name, len + 1);
  return TG_OK;
}

void tg_fcov_free(tg_fcov *c) {
  if (c->map)
    for (int i = 0; i < c->n_cat; i++) tg_free(c->map[i]);
  tg_free(c->map);
  tg_free(c->num_src);
  tg_free(c->codes);
  tg_free(c->card);
  tg_free(c->num);
  tg_free(c->cat);
  memset(c, 0, sizeof *c);
}

/* TG_ERR_INVALID for a token whose column the bars lack, listing the columns they have. */
static tg_status unknown_column(const tg_fitem *it, const tg_bars *bars) {
  if (bars->n_cols == 0)
    return tg_error(TG_ERR_INVALID, "features: '%s:%s': the bars have no extra columns (%s bars keep the further "
                    "columns of a CSV or Parquet file)", kind_name(it->kind), it->cname,
                    bars->format[0] ? bars->format : "these");
  char list[600];
  return tg_error(TG_ERR_INVALID, "features: '%s:%s': the bars have no extra column '%s' (extra columns: %s)",
                  kind_name(it->kind), it->cname, it->cname, tg_bars_column_names(bars, list, sizeof list));
}

/* v as the shortest of %.15g and %.17g that reads back as v. */
static const char *num_text(double v, char *buf, size_t n) {
  snprintf(buf, n, "%.15g", v);
  if (strtod(buf, NULL) != v) snprintf(buf, n, "%.17g", v);
  return buf;
}

/* Numbers finite or NaN and within float32's range (features are float32); a static: column one value per instrument
 * (missing values aside). */
static tg_status check_numbers(const tg_fitem *it, const tg_bar_column *c, const tg_bars *bars, const tg_layout *lay) {
  char t[TG_TIME_TEXT];
  for (int64_t r = 0; r < bars->n; r++) {
    if (isinf(c->values[r]))
      return tg_error(TG_ERR_NUMERIC, "features: '%s:%s': column '%s' is %g at bar %lld (%s); a covariate's numbers "
                      "must be finite, or NaN where missing", kind_name(it->kind), it->cname, c->name, c->values[r],
                      (long long)r, tg_format_time(bars->ts[r], t, sizeof t));
    if (fabs(c->values[r]) > FLT_MAX)
      return tg_error(TG_ERR_NUMERIC, "features: '%s:%s': column '%s' is %g at bar %lld (%s), beyond float32's range "
                      "(+-%g): features are float32, and the column's mean and std on the training rows would not be "
                      "finite; rescale the column", kind_name(it->kind), it->cname, c->name, c->values[r], (long long)r,
                      tg_format_time(bars->ts[r], t, sizeof t), (double)FLT_MAX);
  }
  if (it->kind != TG_F_STATIC) return TG_OK;
  for (int j = 0; j < lay->k; j++) {
    int64_t first = -1;
    for (int64_t q = lay->seg[j]; q < lay->seg[j + 1]; q++) {
      int64_t r = lay->rows[q];
      double v = c->values[r];
      if (isnan(v)) continue;
      if (first < 0) first = r;
      else if (v != c->values[first]) {
        char a[32], b[32], t2[48];
        return tg_error(TG_ERR_INVALID, "features: 'static:%s': column '%s' varies within instrument %u: %s at %s "
                        "(bar %lld) and %s at %s (bar %lld); static: needs one value per instrument (col: takes one "
                        "that varies)", it->cname, c->name, lay->ids[j], num_text(c->values[first], a, sizeof a),
                        tg_format_time(bars->ts[first], t, sizeof t), (long long)first, num_text(v, b, sizeof b),
                        tg_format_time(bars->ts[r], t2, sizeof t2), (long long)r);
      }
    }
  }
  return TG_OK;
}

/* The id map of a cat: column: through v's vocabulary of the column, or one built from the names of every row. */
static tg_status bind_category(const tg_fitem *it, const tg_bar_column *c, const tg_bars *bars, const tg_vocab *v,
                               int n_v, tg_fcov *out) {
  tg_vocab own;
  memset(&own, 0, sizeof own);
  const tg_vocab *vv = v ? tg_vocab_find(v, n_v, it->cname) : NULL;
  if (v && !vv)
    return tg_error(TG_ERR_INVALID, "features: 'cat:%s': tg_feature_opts.vocab holds no vocabulary of column '%s' "
                    "(%d vocabularies given)", it->cname, it->cname, n_v);
  tg_status st = TG_OK;
  if (!vv) {
    uint8_t *used = tg_calloc((size_t)c->cats.n + 1, 1);
    if (!used) return tg_error(TG_ERR_NOMEM, "features: out of memory for the names of column '%s'", c->name);
    for (int64_t r = 0; r < bars->n; r++)
      if (c->codes[r] != TG_CATEGORY_MISSING) used[c->codes[r]] = 1;
    st = tg_vocab_from_codes(c, used, &own);
    tg_free(used);
    vv = &own;
  }
  if (st == TG_OK) st = tg_vocab_code_map(c, vv, &out->map[it->in]);
  out->codes[it->in] = c->codes;
  out->card[it->in] = vv->n + 1;
  tg_vocab_free(&own);
  return st;
}

/* A number column that the reader kept as names: the first bar whose value is not a number, and where it is. */
static tg_status not_numbers(const tg_fitem *it, const tg_bar_column *c, const tg_bars *bars) {
  int64_t r = 0;
  const char *name = NULL;
  for (; r < bars->n; r++) {
    if (c->codes[r] == TG_CATEGORY_MISSING) continue;
    name = tg_categories_name(&c->cats, c->codes[r]);
    char *end = NULL;
    if (!name || (strtod(name, &end), end == name || *end)) break;
  }
  char ts[48];
  if (r == bars->n)
    return tg_error(TG_ERR_INVALID, "features: '%s:%s': column '%s' holds categories (names), not numbers; use cat:%s",
                    kind_name(it->kind), it->cname, c->name, it->cname);
  return tg_error(TG_ERR_INVALID, "features: '%s:%s': column '%s' of %s holds categories (names), not numbers: "
                  "bar %lld (%s) is '%.40s'; fix the value, or use cat:%s for names", kind_name(it->kind), it->cname, c->name,
                  bars->source[0] ? bars->source : "the bars", (long long)r + 1, tg_format_time(bars->ts[r], ts, sizeof ts),
                  name ? name : "", it->cname);
}

tg_status tg_fcov_bind(const tg_fplan *p, const tg_bars *bars, const tg_layout *lay, const tg_vocab *v, int n_v,
                       tg_fcov *out) {
  memset(out, 0, sizeof *out);
  out->n_num = p->n_num;
  out->n_cat = p->n_cat;
  size_t nn = (size_t)p->n_num + 1, nc = (size_t)p->n_cat + 1;
  out->num_src = tg_calloc(nn, sizeof *out->num_src);
  out->num = tg_calloc(nn, sizeof *out->num);
  out->codes = tg_calloc(nc, sizeof *out->codes);
  out->map = tg_calloc(nc, sizeof *out->map);
  out->card = tg_calloc(nc, sizeof *out->card);
  out->cat = tg_calloc(nc, sizeof *out->cat);
  if (!out->num_src || !out->num || !out->codes || !out->map || !out->card || !out->cat) {
    tg_fcov_free(out);
    return tg_error(TG_ERR_NOMEM, "features: out of memory for the covariates");
  }
  tg_status st = TG_OK;
  for (int i = 0; i < p->ni && st == TG_OK; i++) {
    const tg_fitem *it = &p->items[i];
    if (it->kind < TG_F_COL) continue;
    const tg_bar_column *c = tg_bars_column(bars, it->cname);
    if (!c) st = unknown_column(it, bars);
    else if (it->kind == TG_F_CAT && c->kind != TG_COLUMN_CATEGORY)
      st = tg_error(TG_ERR_INVALID, "features: 'cat:%s': column '%s' is numeric; cat: takes a category column (names), "
                    "use col:%s for its numbers", it->cname, c->name, it->cname);
    else if (it->kind != TG_F_CAT && c->kind != TG_COLUMN_NUMERIC)
      st = not_numbers(it, c, bars);
    else if (it->kind == TG_F_CAT)
      st = bind_category(it, c, bars, v, n_v, out);
    else if ((st = check_numbers(it, c, bars, lay)) == TG_OK)
      out->num_src[it->in] = c->values; /* the leads after it stay NULL: tg_fcov_finish fills them */
  }
  if (st != TG_OK) tg_fcov_free(out);
  return st;
}

void tg_fcov_row(tg_fcov *c, int64_t r, tg_fbar *b) {
  for (int i = 0; i < c->n_num; i++) c->num[i] = c->num_src[i] ? c->num_src[i][r] : NAN;
  for (int i = 0; i < c->n_cat; i++) {
    uint32_t code = c->codes[i][r];
    c->cat[i] = code == TG_CATEGORY_MISSING ? 0 : c->map[i][code];
  }
  b->num = c->num;
  b->cat = c->cat;
}

/* NAME@+h of row t = NAME of the instrument's bar t+h (bitwise the same float), NaN past its last bar. */
static void fill_leads(const tg_fitem *it, const tg_layout *lay, tg_features *fx) {
  int64_t f = fx->f;
  for (int j = 0; j < lay->k; j++) {
    int64_t p0 = lay->seg[j], m = lay->seg[j + 1] - p0;
    for (int64_t q = 0; q < m; q++) {
      float *x = fx->x + lay->rows[p0 + q] * f + it->col;
      for (int h = 1; h < it->ncols; h++) x[h] = q + h < m ? fx->x[lay->rows[p0 + q + h] * f + it->col] : NAN;
    }
  }
}

void tg_fcov_finish(const tg_fplan *p, const tg_fcov *c, const tg_layout *lay, tg_features *fx) {
  int64_t f = fx->f;
  for (int i = 0; i < p->ni; i++) {
    const tg_fitem *it = &p->items[i];
    if (it->kind == TG_F_KNOWN && it->ncols > 1) fill_leads(it, lay, fx);
    if (it->kind == TG_F_CAT) fx->card[it->col] = c->card[it->in];
  }
  fx->first_valid_row = 0;
  for (int j = 0; j < lay->k; j++) { /* valid from the warmup_max-th bar once every numeric covariate has a value */
    int64_t p0 = lay->seg[j], m = lay->seg[j + 1] - p0, w = p->warmup_max;
    for (int i = 0; i < p->ni; i++) {
      const tg_fitem *it = &p->items[i];
      if (it->kind < TG_F_COL || it->kind == TG_F_CAT) continue;
      int64_t q = 0;
      while (q < m && isnan(fx->x[lay->rows[p0 + q] * f + it->col])) q++;
      if (q > w) w = q;
    }
    fx->first_valid[j] = w < m ? lay->rows[p0 + w] : lay->n;
    if (fx->first_valid[j] > fx->first_valid_row) fx->first_valid_row = fx->first_valid[j];
  }
}
