/* Reads RUN/inference.json: feature names, normalisation, target scales, classes, instruments, warm-up, bar interval. */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/json.h"
#include "data/readers/timeconv.h"
#include "io/ckpt_set.h"
#include "predict/predict_internal.h"
#include "base/files.h"

#define META_FORMAT "tickgrad-forecast-inference-1"

void pr_meta_free(pr_meta *m) {
  tg_free(m->names);
  tg_free(m->mean);
  tg_free(m->std);
  tg_free(m->ids);
  tg_free(m->classes);
  if (m->vocab) tg_vocabs_free(m->vocab, m->n_vocab);
  tg_schedule_free(&m->sched);
  memset(m, 0, sizeof *m);
}

/* An array member of exactly n numbers (n < 0: any length, *n_out receives it). */
static tg_status numbers(const tg_json *root, const char *key, const char *path, int n, double *out, int cap,
                         int *n_out) {
  const tg_json *a = tg_json_get(root, key);
  if (!a || a->type != TG_JSON_ARRAY || (n >= 0 && a->count != n) || a->count > cap)
    return tg_error(TG_ERR_FORMAT, "%s: \"%s\" must be an array of %d numbers", path, key, n >= 0 ? n : cap);
  int i = 0;
  for (const tg_json *e = a->first; e; e = e->next, i++) {
    if (e->type != TG_JSON_INT && e->type != TG_JSON_REAL)
      return tg_error(TG_ERR_FORMAT, "%s: \"%s\"[%d] is %s, not a number", path, key, i, tg_json_type_name(e->type));
    out[i] = e->num;
  }
  if (n_out) *n_out = a->count;
  return TG_OK;
}

static tg_status integer(const tg_json *root, const char *key, const char *path, int64_t lo, int64_t *out) {
  const tg_json *v = tg_json_get(root, key);
  if (!v || v->type != TG_JSON_INT || v->i < lo)
    return tg_error(TG_ERR_FORMAT, "%s: \"%s\" must be an integer >= %lld", path, key, (long long)lo);
  *out = v->i;
  return TG_OK;
}

/* A classifier's "classes" (absent for a quantile forecaster). */
static tg_status classes(const tg_json *root, const char *path, pr_meta *m) {
  const tg_json *a = tg_json_get(root, "classes");
  if (!a) return TG_OK;
  if (a->type != TG_JSON_ARRAY || a->count < 2 || a->count > TG_MAX_CLASSES)
    return tg_error(TG_ERR_FORMAT, "%s: \"classes\" must be an array of 2..%d names", path, TG_MAX_CLASSES);
  m->classes = tg_calloc((size_t)a->count, sizeof *m->classes);
  if (!m->classes) return tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
  int k = 0;
  for (const tg_json *e = a->first; e; e = e->next, k++) {
    if (e->type != TG_JSON_STRING || e->len >= TG_NAME_MAX)
      return tg_error(TG_ERR_FORMAT, "%s: \"classes\"[%d] must be a name of under %d bytes", path, k, TG_NAME_MAX);
    memcpy(m->classes[k], e->str, e->len + 1);
  }
  m->C = a->count;
  return TG_OK;
}

/* "leads" and the cat: columns' "vocab" (both absent in runs without covariates). */
static tg_status covariates(const tg_json *root, const char *path, pr_meta *m) {
  const tg_json *l = tg_json_get(root, "leads"), *a = tg_json_get(root, "vocab");
  if (l && (l->type != TG_JSON_INT || l->num < 0 || l->num > TG_FEATURES_MAX_LEADS))
    return tg_error(TG_ERR_FORMAT, "%s: \"leads\" must be a whole number in 0..%d", path, TG_FEATURES_MAX_LEADS);
  m->leads = l ? (int)l->num : 0;
  if (!a || a->count == 0) return TG_OK;
  if (a->type != TG_JSON_ARRAY) return tg_error(TG_ERR_FORMAT, "%s: \"vocab\" must be an array", path);
  m->vocab = tg_calloc((size_t)a->count, sizeof *m->vocab);
  if (!m->vocab) return tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
  for (const tg_json *e = a->first; e; e = e->next) {
    const tg_json *col = tg_json_get(e, "column"), *names = tg_json_get(e, "names");
    tg_vocab *v = &m->vocab[m->n_vocab++];
    if (!col || col->type != TG_JSON_STRING || col->len >= TG_NAME_MAX || !names || names->type != TG_JSON_ARRAY)
      return tg_error(TG_ERR_FORMAT, "%s: \"vocab\"[%d] must be {\"column\": name, \"names\": [...]}", path,
                      m->n_vocab - 1);
    memcpy(v->column, col->str, col->len + 1);
    v->names = tg_calloc((size_t)(names->count ? names->count : 1), sizeof *v->names);
    if (!v->names) return tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
    for (const tg_json *n = names->first; n; n = n->next) {
      if (n->type != TG_JSON_STRING || n->len >= TG_NAME_MAX || (v->n && strcmp(v->names[v->n - 1], n->str) >= 0))
        return tg_error(TG_ERR_FORMAT, "%s: the vocabulary of '%s' must be names of under %d bytes in ascending "
                        "order", path, v->column, TG_NAME_MAX);
      memcpy(v->names[v->n++], n->str, n->len + 1);
    }
  }
  return TG_OK;
}

/* "schedule": {"tz": zone, "runs": [[dow, first_ns, step_ns, count], ...]} (optional: runs from before it have none). */
static tg_status schedule(const tg_json *root, const char *path, pr_meta *m) {
  const tg_json *sc = tg_json_get(root, "schedule");
  if (!sc) return TG_OK;
  const tg_json *tz = tg_json_get(sc, "tz"), *runs = tg_json_get(sc, "runs");
  if (!tz || tz->type != TG_JSON_STRING || tz->len >= sizeof m->sched.tz || !runs || runs->type != TG_JSON_ARRAY)
    return tg_error(TG_ERR_FORMAT, "%s: \"schedule\" must hold \"tz\" (a zone name) and \"runs\" (an array)", path);
  memcpy(m->sched.tz, tz->str, tz->len + 1);
  m->sched.runs = tg_malloc((size_t)(runs->count > 0 ? runs->count : 1) * sizeof *m->sched.runs);
  if (!m->sched.runs) return tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
  for (const tg_json *e = runs->first; e; e = e->next) {
    int64_t v[4] = {-1, -1, -1, -1}, k = 0;
    for (const tg_json *x = e->type == TG_JSON_ARRAY ? e->first : NULL; x && k < 4; x = x->next, k++)
      v[k] = x->type == TG_JSON_INT ? x->i : -1;
    if (e->type != TG_JSON_ARRAY || e->count != 4 || v[0] < 0 || v[0] > 6 || v[1] < 0 || v[1] >= TG_NS_PER_DAY ||
        v[2] < 0 || v[3] < 1 || (v[3] > 1 && v[2] == 0) || (v[2] > 0 && v[3] - 1 > (TG_NS_PER_DAY - 1 - v[1]) / v[2]))
      return tg_error(TG_ERR_FORMAT, "%s: \"schedule\" run %d must be [weekday 0-6, first ns, step ns, count] inside "
                      "one day", path, m->sched.n);
    m->sched.runs[m->sched.n++] = (tg_sched_run){(int)v[0], v[1], v[2], v[3]};
  }
  return tg_tz_check(m->sched.tz[0] ? m->sched.tz : NULL);
}

static tg_status parse(const tg_json *root, const char *path, pr_meta *m) {
  const tg_json *fmt = tg_json_get(root, "format"), *names = tg_json_get(root, "features");
  if (!fmt || fmt->type != TG_JSON_STRING || strcmp(fmt->str, META_FORMAT) != 0)
    return tg_error(TG_ERR_FORMAT, "%s: not a file this version wrote (\"format\" is not \"%s\")", path, META_FORMAT);
  if (!names || names->type != TG_JSON_ARRAY || names->count < 1)
    return tg_error(TG_ERR_FORMAT, "%s: \"features\" must be a non-empty array of names", path);
  int64_t v = 0;
  tg_status st = integer(root, "bar_ns", path, 0, &m->bar_ns);
  if (st == TG_OK) st = integer(root, "warmup", path, 0, &v);
  if (st != TG_OK) return st;
  m->warmup = (int)v;
  m->f = names->count;
  const tg_json *inst = tg_json_get(root, "instruments");
  m->k = inst && inst->type == TG_JSON_ARRAY ? inst->count : 0;
  if (m->k < 1) return tg_error(TG_ERR_FORMAT, "%s: \"instruments\" must be a non-empty array of ids", path);
  m->names = tg_calloc((size_t)m->f, sizeof *m->names);
  m->mean = tg_malloc((size_t)m->f * sizeof *m->mean);
  m->std = tg_malloc((size_t)m->f * sizeof *m->std);
  m->ids = tg_malloc((size_t)m->k * sizeof *m->ids);
  double *idv = tg_malloc((size_t)m->k * sizeof *idv);
  if (!m->names || !m->mean || !m->std || !m->ids || !idv) {
    tg_free(idv);
    return tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
  }
  int c = 0;
  for (const tg_json *e = names->first; e && st == TG_OK; e = e->next, c++) {
    if (e->type != TG_JSON_STRING || e->len >= TG_NAME_MAX)
      st = tg_error(TG_ERR_FORMAT, "%s: \"features\"[%d] must be a name of under %d bytes", path, c, TG_NAME_MAX);
    else memcpy(m->names[c], e->str, e->len + 1);
  }
  if (st == TG_OK) st = numbers(root, "mean", path, m->f, m->mean, m->f, NULL);
  if (st == TG_OK) st = numbers(root, "std", path, m->f, m->std, m->f, NULL);
  if (st == TG_OK) st = numbers(root, "target_scales", path, -1, m->scale, TG_MAX_HORIZONS, &m->h);
  if (st == TG_OK) st = numbers(root, "instruments", path, m->k, idv, m->k, NULL);
  for (int j = 0; st == TG_OK && j < m->k; j++) {
    if (idv[j] < 0 || idv[j] > 4294967295.0 || idv[j] != (double)(uint32_t)idv[j] || (j && idv[j] <= idv[j - 1]))
      st = tg_error(TG_ERR_FORMAT, "%s: \"instruments\" must be ascending ids in 0..2^32-1", path);
    else m->ids[j] = (uint32_t)idv[j];
  }
  for (int j = 0; st == TG_OK && j < m->f; j++) /* the JSON reader holds no NaN or infinity: "> 0" is the range */
    if (!(m->std[j] > 0))
      st = tg_error(TG_ERR_FORMAT, "%s: \"std\"[%d] (%s) is %g; it must be a positive number", path, j, m->names[j],
                    m->std[j]);
  if (st == TG_OK && m->h < 1)
    st = tg_error(TG_ERR_FORMAT, "%s: \"target_scales\" is empty; it holds one scale per horizon (at least one)", path);
  for (int h = 0; st == TG_OK && h < m->h; h++)
    if (!(m->scale[h] > 0))
      st = tg_error(TG_ERR_FORMAT, "%s: \"target_scales\"[%d] (horizon %d) is %g; it must be a positive number "
                    "(the training split's target std)", path, h, h + 1, m->scale[h]);
  tg_free(idv);
  if (st == TG_OK) st = classes(root, path, m);
  if (st == TG_OK) st = covariates(root, path, m);
  if (st == TG_OK) st = schedule(root, path, m);
  return st;
}

tg_status pr_meta_read(const char *run, pr_meta *m) {
  memset(m, 0, sizeof *m);
  char path[1100];
  snprintf(path, sizeof path, "%s/inference.json", run);
  if (!tg_file_exists(path))
    return tg_error(TG_ERR_IO, "%s: no such file (a forecaster run trained by this version writes it at the start of "
                    "training)", path);
  tg_json_doc *doc = NULL;
  tg_status st = tg_json_parse_file(path, &doc);
  if (st == TG_OK) st = parse(tg_json_root(doc), path, m); /* each value in its range */
  if (st == TG_OK) st = tg_ckpt_check_run_files(run);      /* and config.json and inference.json as the run wrote them */
  tg_json_free(doc);
  if (st != TG_OK) pr_meta_free(m);
  return st;
}
