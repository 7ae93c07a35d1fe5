/* Features one bar at a time (live data): per-instrument state through the same per-bar update as tg_features_compute. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "data/dataset/features_internal.h"
#include "data/readers/timeconv.h"

struct tg_feature_stream {
  tg_fplan plan;              /* plan.tz points at tz */
  char *tz;                   /* the zone's name (NULL: UTC) */
  char (*names)[TG_NAME_MAX]; /* [f] */
  tg_finst *inst;             /* [k] */
  uint32_t *ids;              /* [k] */
  int *input_col;             /* [n_num + n_cat] the feature column of each covariate input */
  tg_vocab *vocab;            /* [n_cat] each cat: item's vocabulary, in input order */
  int32_t *cat;               /* [n_cat] a bar's ids */
};

void tg_feature_stream_free(tg_feature_stream *s) {
  if (!s) return;
  if (s->inst)
    for (int j = 0; j < s->plan.k; j++) tg_finst_free(&s->inst[j]);
  tg_free(s->inst);
  tg_free(s->names);
  tg_free(s->ids);
  tg_free(s->input_col);
  tg_vocabs_free(s->vocab, s->plan.n_cat);
  tg_free(s->cat);
  tg_free(s->tz);
  tg_free(s);
}

static tg_status check_ids(const uint32_t *ids, int k) {
  if (k < 1 || !ids)
    return tg_error(TG_ERR_INVALID, "feature stream: %d instrument ids%s (need at least 1)", k, ids ? "" : " (NULL)");
  for (int j = 1; j < k; j++)
    if (ids[j] <= ids[j - 1])
      return tg_error(TG_ERR_INVALID, "feature stream: instrument ids must be strictly ascending (as tg_layout.ids): "
                      "ids[%d] = %u follows ids[%d] = %u", j, ids[j], j - 1, ids[j - 1]);
  return TG_OK;
}

/* The covariate inputs' columns, and a copy of each cat: item's vocabulary from opts. */
static tg_status covariate_parts(tg_feature_stream *s, const tg_feature_opts *opts) {
  const tg_fplan *p = &s->plan;
  int n = 0;
  s->input_col = tg_calloc((size_t)(p->n_num + p->n_cat) + 1, sizeof *s->input_col);
  s->vocab = tg_calloc((size_t)p->n_cat + 1, sizeof *s->vocab);
  s->cat = tg_calloc((size_t)p->n_cat + 1, sizeof *s->cat);
  if (!s->input_col || !s->vocab || !s->cat) return tg_error(TG_ERR_NOMEM, "feature stream: out of memory");
  for (int c = 0; c < p->f; c++) { /* numeric covariate columns in column order, then the cat: ones (last) */
    const tg_fitem *it = tg_fplan_item(p, c);
    if (it->kind >= TG_F_COL) s->input_col[n++] = c;
  }
  for (int i = 0; i < p->ni; i++) {
    const tg_fitem *it = &p->items[i];
    if (it->kind != TG_F_CAT) continue;
    const tg_vocab *v = opts ? tg_vocab_find(opts->vocab, opts->n_vocab, it->cname) : NULL;
    if (!v)
      return tg_error(TG_ERR_INVALID, "feature stream: 'cat:%s' needs the vocabulary of column '%s' in "
                      "tg_feature_opts.vocab (the dataset's tg_norm.vocab)", it->cname, it->cname);
    tg_vocab *copy = NULL;
    tg_status st = tg_vocabs_copy(v, 1, &copy);
    if (st != TG_OK) return st;
    s->vocab[it->in] = *copy;
    tg_free(copy);
  }
  return TG_OK;
}

/* The stream's own copy of the zone name, the names and the per-instrument states (plan made already). */
static tg_status alloc_parts(tg_feature_stream *s, const char *tz, const uint32_t *ids) {
  const tg_fplan *p = &s->plan;
  if (p->zone) {
    size_t len = strlen(tz);
    if (!(s->tz = tg_malloc(len + 1))) return tg_error(TG_ERR_NOMEM, "feature stream: out of memory");
    memcpy(s->tz, tz, len + 1);
    s->plan.tz = s->tz;
  }
  s->names = tg_calloc((size_t)p->f, sizeof *s->names);
  s->inst = tg_calloc((size_t)p->k, sizeof *s->inst);
  s->ids = tg_malloc((size_t)p->k * sizeof *s->ids);
  if (!s->names || !s->inst || !s->ids)
    return tg_error(TG_ERR_NOMEM, "feature stream: out of memory for %d instruments", p->k);
  memcpy(s->ids, ids, (size_t)p->k * sizeof *ids);
  for (int c = 0; c < p->f; c++) {
    int32_t warm;
    uint8_t scale, role;
    tg_fplan_column(p, ids, c, s->names[c], &warm, &scale, &role);
  }
  for (int j = 0; j < p->k; j++) {
    tg_status st = tg_finst_init(&s->inst[j], p);
    if (st != TG_OK) return st;
  }
  return TG_OK;
}

tg_status tg_feature_stream_new(const tg_feature_opts *opts, const uint32_t *ids, int k, tg_feature_stream **out) {
  *out = NULL;
  tg_status st = check_ids(ids, k);
  if (st != TG_OK) return st;
  tg_feature_stream *s = tg_calloc(1, sizeof *s);
  if (!s) return tg_error(TG_ERR_NOMEM, "feature stream: out of memory");
  const char *tz = opts ? opts->tz : NULL;
  st = tg_fplan_make(opts ? opts->spec : NULL, tz, opts ? opts->leads : 0, k, &s->plan);
  if (st == TG_OK) st = alloc_parts(s, tz, ids);
  if (st == TG_OK) st = covariate_parts(s, opts);
  if (st != TG_OK) {
    tg_feature_stream_free(s);
    return st;
  }
  *out = s;
  return TG_OK;
}

int tg_feature_stream_width(const tg_feature_stream *s) { return s->plan.f; }

const char *tg_feature_stream_name(const tg_feature_stream *s, int col) {
  return col >= 0 && col < s->plan.f ? s->names[col] : NULL;
}

int tg_feature_stream_warmup(const tg_feature_stream *s) { return s->plan.warmup_max; }

void tg_feature_stream_reset(tg_feature_stream *s) {
  for (int j = 0; j < s->plan.k; j++) tg_finst_reset(&s->inst[j], &s->plan);
}

int tg_feature_stream_n_inputs(const tg_feature_stream *s) { return s->plan.n_num + s->plan.n_cat; }

int tg_feature_stream_n_num_inputs(const tg_feature_stream *s) { return s->plan.n_num; }

const char *tg_feature_stream_input_name(const tg_feature_stream *s, int i) {
  return i >= 0 && i < s->plan.n_num + s->plan.n_cat ? s->names[s->input_col[i]] : NULL;
}

/* The checks a bar passes before it changes anything: instrument, time, prices, then the covariate inputs. */
static tg_status check_bar(const tg_feature_stream *s, int inst, const tg_fbar *b) {
  if (inst < 0 || inst >= s->plan.k)
    return tg_error(TG_ERR_INVALID, "feature stream: instrument index %d is out of range (0..%d)", inst, s->plan.k - 1);
  const tg_finst *in = &s->inst[inst];
  char t[48], prev[48];
  if (in->i > 0 && b->ts < in->last_ts)
    return tg_error(TG_ERR_INVALID, "feature stream: instrument %d: bar at %s is earlier than its previous bar at %s",
                    inst, tg_format_time(b->ts, t, sizeof t), tg_format_time(in->last_ts, prev, sizeof prev));
  int bad = tg_fbar_bad(b);
  if (bad) {
    char where[128];
    snprintf(where, sizeof where, "feature stream: instrument %d, bar %lld at %s", inst, (long long)in->i,
             tg_format_time(b->ts, t, sizeof t));
    return tg_fbar_error(b, bad, where);
  }
  const tg_fplan *p = &s->plan;
  if ((p->n_num > 0 && !b->num) || (p->n_cat > 0 && !b->cat))
    return tg_error(TG_ERR_INVALID, "feature stream: the spec takes %d numeric and %d category inputs per bar; %s is "
                    "NULL", p->n_num, p->n_cat, p->n_num > 0 && !b->num ? "num_inputs" : "cat_inputs");
  for (int i = 0; i < p->n_num; i++)
    if (isinf(b->num[i]) || fabs(b->num[i]) > FLT_MAX)
      return tg_error(TG_ERR_NUMERIC, "feature stream: instrument %d, bar at %s: input '%s' is %g (finite and within "
                      "float32's range, the features' type, or NaN where missing)", inst,
                      tg_format_time(b->ts, t, sizeof t), tg_feature_stream_input_name(s, i), b->num[i]);
  for (int i = 0; i < p->ni; i++) {
    const tg_fitem *it = &p->items[i];
    double v = it->kind == TG_F_STATIC ? b->num[it->in] : NAN, was = in->st[i].a;
    if (!isnan(v) && !isnan(was) && v != was)
      return tg_error(TG_ERR_INVALID, "feature stream: 'static:%s' varies within instrument %u: %.17g, then %.17g at %s",
                      it->cname, s->ids[inst], was, v, tg_format_time(b->ts, t, sizeof t));
  }
  return TG_OK;
}

static tg_status push(tg_feature_stream *s, int inst, const tg_fbar *b, float *row, int *valid) {
  tg_status st = check_bar(s, inst, b);
  if (st != TG_OK) return st;
  tg_finst *in = &s->inst[inst];
  int64_t i = in->i;
  if ((st = tg_feature_bar(&s->plan, in, inst, b, row)) != TG_OK) return st;
  if (valid) *valid = i >= s->plan.warmup_max && (s->plan.n_num == 0 || tg_finst_covariates_seen(&s->plan, in));
  return TG_OK;
}

tg_status tg_feature_stream_push(tg_feature_stream *s, int inst, int64_t ts, double open, double high, double low,
                                 double close, double volume, float *row, int *valid) {
  if (s->plan.n_num + s->plan.n_cat > 0)
    return tg_error(TG_ERR_INVALID, "feature stream: the spec has covariates (%d inputs, the first '%s'): use "
                    "tg_feature_stream_push_ex", s->plan.n_num + s->plan.n_cat, tg_feature_stream_input_name(s, 0));
  tg_fbar b = {.ts = ts, .open = open, .high = high, .low = low, .close = close, .volume = volume};
  return push(s, inst, &b, row, valid);
}

tg_status tg_feature_stream_push_ex(tg_feature_stream *s, int inst, int64_t ts, double open, double high, double low,
                                    double close, double volume, const double *num_inputs,
                                    const char *const *cat_inputs, float *row, int *valid) {
  tg_fbar b = {.ts = ts, .open = open, .high = high, .low = low, .close = close, .volume = volume,
               .num = num_inputs, .cat = s->plan.n_cat > 0 && cat_inputs ? s->cat : NULL};
  if (b.cat)
    for (int i = 0; i < s->plan.n_cat; i++) s->cat[i] = tg_vocab_id(&s->vocab[i], cat_inputs[i]);
  return push(s, inst, &b, row, valid);
}
