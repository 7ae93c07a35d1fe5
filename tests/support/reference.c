/* Comparing a model with its PyTorch twin's reference file: tensors by name, config integers, relative errors. */
#include "support/reference.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "support/check.h"

const tg_tensor *tg_test_ref_need(const tg_safetensors *f, const char *name) {
  const tg_tensor *t = tg_safetensors_find(f, name);
  CHECK_MSG(t != NULL, "reference tensor '%s' missing", name);
  return t;
}

int64_t tg_test_json_int(const tg_json *o, const char *key) {
  const tg_json *v = tg_json_get(o, key);
  CHECK_MSG(v && v->type == TG_JSON_INT, "config key '%s' missing or not an integer", key);
  return v && v->type == TG_JSON_INT ? v->i : 0;
}

double tg_test_rel_err(const float *got, const tg_tensor *want) {
  const float *w = want->data;
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < tg_numel(want); i++) {
    double dd = fabs((double)got[i] - w[i]);
    diff = isnan(dd) ? INFINITY : fmax(diff, dd);
    scale = fmax(scale, fabs((double)w[i]));
  }
  return diff / (scale > 0 ? scale : 1);
}

long long tg_test_param_count(const tg_store *s) {
  long long n = 0;
  for (int i = 0; i < tg_store_count(s); i++) n += (long long)tg_store_param(s, i).numel;
  return n;
}

int tg_test_ref_load_params(tg_store *s, const tg_safetensors *f) {
  int ok = 1;
  for (int i = 0; i < tg_store_count(s); i++) {
    tg_param_info pi = tg_store_param(s, i);
    char key[TG_NAME_MAX + 8];
    snprintf(key, sizeof key, "init.%s", pi.name);
    const tg_tensor *src = tg_test_ref_need(f, key);
    tg_tensor dst = tg_store_tensor(s, i, 0);
    int same = src && tg_shape_eq(src, &dst);
    CHECK_MSG(src == NULL || same, "parameter %s: shape differs from the reference", pi.name);
    if (same) memcpy(dst.data, src->data, tg_nbytes(&dst));
    ok &= same;
  }
  return ok;
}

double tg_test_ref_check(const char *what, const float *got, const tg_tensor *want, double tol) {
  if (!got || !want) return INFINITY;
  double e = tg_test_rel_err(got, want);
  CHECK_MSG(e <= tol, "%s: relative error %.3g > %.0e", what, e, tol);
  return e;
}

double tg_test_ref_check_grads(tg_store *s, const tg_safetensors *f, double tol, char *worst_name, size_t n) {
  double worst = 0;
  for (int i = 0; i < tg_store_count(s); i++) {
    const char *pn = tg_store_param(s, i).name;
    char key[TG_NAME_MAX + 8];
    snprintf(key, sizeof key, "grad.%s", pn);
    tg_tensor gt = tg_store_tensor(s, i, 1);
    double e = tg_test_ref_check(key, gt.data, tg_test_ref_need(f, key), tol);
    if (e >= worst) {
      worst = e;
      if (worst_name) snprintf(worst_name, n, "%s", pn);
    }
  }
  return worst;
}
