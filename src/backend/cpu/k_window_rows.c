/* CPU kernel for window_rows: each window's last row t [N] -> the rows of its window [N, W] (i64). */
#include <math.h>
#include "backend/cpu/cpu_kernels.h"
#include "ops/index_errors.h"

/* t's element i as a double (f32 or i64 rows). */
static double t_at(const tg_tensor *t, int64_t i) {
  return t->dtype == TG_F32 ? (double)((const float *)t->data)[i] : (double)((const int64_t *)t->data)[i];
}

/* TG_OK if every t is an integer in [W-1, rows); otherwise an error naming the node, position and value. */
static tg_status check_rows(const tg_kernel_args *a, const tg_tensor *t, int64_t N, int64_t W, int64_t rows) {
  for (int64_t i = 0; i < N; i++) {
    double v = t_at(t, i);
    if (!(v >= (double)(W - 1) && v < (double)rows && v == floor(v))) return tg_window_bad_row(a, i, v);
  }
  return TG_OK;
}

tg_status tg_cpu_window_rows_fwd(const tg_kernel_args *a) {
  const tg_tensor *t = a->in[0];
  int64_t W = a->attr->i[0], rows = a->attr->i[1], N = tg_numel(t);
  tg_status st = check_rows(a, t, N, W, rows);
  if (st != TG_OK) return st;
  int64_t *out = a->out->data; /* [N, W] */
  for (int64_t i = 0; i < N; i++) {
    int64_t first = (int64_t)t_at(t, i) - W + 1;
    for (int64_t k = 0; k < W; k++) out[i * W + k] = first + k;
  }
  return TG_OK;
}
