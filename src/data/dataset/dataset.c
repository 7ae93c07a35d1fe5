/* The dataset in one call (layout, features, targets, splits, normalisation, tensor views) and window index expansion. */
#include <string.h>
#include "base/alloc.h"
#include "data/dataset/features_internal.h"
#include "tickgrad/dataset.h"

#define DEFAULT_WINDOW 64

void tg_dataset_free(tg_dataset *ds) {
  tg_norm_free(&ds->norm);
  tg_splits_free(&ds->splits);
  tg_targets_free(&ds->y);
  tg_features_free(&ds->fx);
  tg_layout_free(&ds->layout);
  memset(ds, 0, sizeof *ds);
}

/* Each instrument's warm-up in bars from the features' first valid rows (covariates may delay them past warmup_max),
 * at least the caller's. */
static tg_status instrument_warmups(const tg_layout *lay, const tg_features *fx, const int64_t *given, int64_t **out) {
  *out = tg_malloc(((size_t)lay->k + 1) * sizeof **out);
  if (!*out) return tg_error(TG_ERR_NOMEM, "dataset: out of memory");
  for (int j = 0; j < lay->k; j++) {
    int64_t p0 = lay->seg[j], m = lay->seg[j + 1] - p0, q = 0;
    while (q < m && lay->rows[p0 + q] != fx->first_valid[j]) q++; /* m when it has no valid row */
    (*out)[j] = given && given[j] > q ? given[j] : q;
  }
  return TG_OK;
}

/* The cat: columns' vocabularies: the options', or fitted on the training rows and the features recoded with them. */
static tg_status vocabularies(const tg_bars *bars, const tg_feature_opts *fo, tg_dataset *ds, tg_vocab **v, int *n) {
  *v = NULL;
  *n = 0;
  if (ds->fx.n_cat == 0) return TG_OK;
  if (fo->vocab) {
    tg_status st = tg_vocabs_copy(fo->vocab, fo->n_vocab, v);
    if (st == TG_OK) *n = fo->n_vocab;
    return st;
  }
  tg_status st = tg_vocab_fit(bars, &ds->fx, &ds->layout, &ds->splits, v, n);
  if (st == TG_OK) st = tg_features_recode(&ds->fx, bars, *v, *n);
  if (st != TG_OK) {
    tg_vocabs_free(*v, *n);
    *v = NULL;
    *n = 0;
  }
  return st;
}

tg_status tg_dataset_build(const tg_bars *bars, const tg_dataset_opts *opts, tg_dataset *out) {
  memset(out, 0, sizeof *out);
  tg_dataset_opts o;
  if (opts) o = *opts;
  else memset(&o, 0, sizeof o);
  tg_vocab *vocab = NULL;
  int n_vocab = 0;
  tg_status st = tg_layout_build(bars, &out->layout);
  if (st == TG_OK) st = tg_features_compute(bars, &out->layout, &o.features, &out->fx);
  if (st == TG_OK) st = tg_targets_compute(bars, &out->layout, &o.targets, &out->y);
  if (st == TG_OK) {
    tg_split_opts so = o.splits;
    int64_t *warm = NULL;
    if (so.window == 0) so.window = DEFAULT_WINDOW;
    if (so.horizon < out->y.hmax) so.horizon = out->y.hmax;
    if (so.warmup < out->fx.warmup_max) so.warmup = out->fx.warmup_max;
    if (o.targets.kind != TG_TARGET_LOGRET) so.reach = out->y.reach; /* log returns keep the fixed horizon */
    if (!so.target) so.target = &o.targets; /* named in messages about dropped windows */
    out->window = so.window;
    st = instrument_warmups(&out->layout, &out->fx, so.warmup_inst, &warm);
    so.warmup_inst = warm;
    if (st == TG_OK) st = tg_splits_make(bars, &out->layout, &so, &out->splits);
    tg_free(warm);
  }
  if (st == TG_OK) st = vocabularies(bars, &o.features, out, &vocab, &n_vocab);
  if (st == TG_OK && !o.no_normalize) {
    st = tg_norm_fit_times(&out->fx, &out->layout, &out->splits, bars->ts, &out->norm);
    if (st == TG_OK) st = tg_norm_apply(&out->norm, &out->fx);
  }
  if (st == TG_OK) {
    out->norm.vocab = vocab;
    out->norm.n_vocab = n_vocab;
  } else {
    tg_vocabs_free(vocab, n_vocab);
  }
  if (st == TG_OK) {
    int64_t xs[2] = {out->fx.n, out->fx.f}, ys[2] = {out->y.n, out->y.nh};
    st = tg_tensor_view(&out->x, "features", tg_cpu(0), TG_F32, 2, xs, out->fx.x);
    if (st == TG_OK) st = tg_tensor_view(&out->y_ret, "target_returns", tg_cpu(0), TG_F32, 2, ys, out->y.ret);
    if (st == TG_OK) st = tg_tensor_view(&out->y_cls, "target_classes", tg_cpu(0), TG_I32, 1, ys, out->y.cls);
  }
  if (st != TG_OK) tg_dataset_free(out);
  return st;
}

static tg_status check_index_tensor(const tg_tensor *t, const char *what, int ndim, int64_t d0, int64_t d1) {
  char buf[96];
  if (!t || !t->data || (t->dtype != TG_I32 && t->dtype != TG_I64) || t->ndim != ndim || t->shape[0] != d0 ||
      (ndim == 2 && t->shape[1] != d1) || t->device.kind != TG_CPU)
    return tg_error(TG_ERR_SHAPE, "window index: %s '%s' is %s %s (need host i32 or i64 [%lld%s%lld])", what,
                    t ? t->name : "", t ? tg_dtype_name(t->dtype) : "none", t ? tg_shape_str(t, buf, sizeof buf) : "",
                    (long long)d0, ndim == 2 ? ", " : "", ndim == 2 ? (long long)d1 : 0LL);
  return TG_OK;
}

tg_status tg_window_index(const tg_layout *lay, int window, const int64_t *starts, int64_t b, tg_tensor *idx,
                          tg_tensor *last) {
  if (!lay || window < 1 || b < 0 || (b > 0 && !starts))
    return tg_error(TG_ERR_INVALID, "window index: bad arguments (window %d, batch %lld)", window, (long long)b);
  tg_status st = check_index_tensor(idx, "idx", 2, b, window);
  if (st == TG_OK && last) st = check_index_tensor(last, "last", 1, b, 0);
  if (st != TG_OK) return st;
  if ((idx->dtype == TG_I32 || (last && last->dtype == TG_I32)) && lay->n > INT32_MAX)
    return tg_error(TG_ERR_SHAPE, "window index: %lld rows do not fit i32 indices; use i64", (long long)lay->n);
  int64_t L = window;
  for (int64_t i = 0; i < b; i++) {
    int64_t p = starts[i];
    if (p < 0 || p + L > lay->n || lay->inst[lay->rows[p]] != lay->inst[lay->rows[p + L - 1]])
      return tg_error(TG_ERR_INVALID, "window index: window %lld starts at position %lld; %lld bars from there %s",
                      (long long)i, (long long)p, (long long)L,
                      p < 0 || p + L > lay->n ? "leave the series" : "cross into another instrument");
    const int64_t *rows = lay->rows + p; /* [L] */
    if (idx->dtype == TG_I64) {
      int64_t *o = (int64_t *)idx->data + i * L;
      for (int64_t l = 0; l < L; l++) o[l] = rows[l];
    } else {
      int32_t *o = (int32_t *)idx->data + i * L;
      for (int64_t l = 0; l < L; l++) o[l] = (int32_t)rows[l];
    }
    if (last && last->dtype == TG_I64) ((int64_t *)last->data)[i] = rows[L - 1];
    else if (last) ((int32_t *)last->data)[i] = (int32_t)rows[L - 1];
  }
  return TG_OK;
}
