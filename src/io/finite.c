/* The finiteness check of a safetensors file's float tensors, used by every opener of a trained run's weights. */
#include <math.h>
#include <stdint.h>
#include "base/bf16.h"
#include "io/finite.h"

/* Index of the first value of t that is not finite, -1 when all are. */
static int64_t first_bad(const tg_tensor *t, float *value) {
  int64_t n = tg_numel(t);
  for (int64_t i = 0; i < n; i++) {
    float v = t->dtype == TG_F32 ? ((const float *)t->data)[i] : tg_f32_from_bf16(((const uint16_t *)t->data)[i]);
    if (!isfinite(v)) {
      *value = v;
      return i;
    }
  }
  return -1;
}

tg_status tg_safetensors_check_finite(const tg_safetensors *f, const char *what) {
  for (int k = 0; k < tg_safetensors_count(f); k++) {
    const tg_tensor *t = tg_safetensors_at(f, k);
    if (t->dtype != TG_F32 && t->dtype != TG_BF16) continue;
    float v = 0;
    int64_t i = first_bad(t, &v);
    if (i >= 0)
      return tg_error(TG_ERR_NUMERIC, "%s: tensor '%s' holds %s at index %lld (of %lld values): these weights are "
                      "unusable (did the run diverge? its last good epoch's weights are in best.safetensors)", what,
                      t->name, isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf", (long long)i, (long long)tg_numel(t));
  }
  return TG_OK;
}

tg_status tg_weights_check_finite(const char *path) {
  tg_safetensors *f = NULL;
  tg_status st = tg_safetensors_load(path, &f);
  if (st == TG_OK) st = tg_safetensors_check_finite(f, path);
  tg_safetensors_free(f);
  return st;
}
