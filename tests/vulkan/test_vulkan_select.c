/* The Vulkan kernels of the ops that select by index against the CPU's: gather_rows (i32 and i64 indices with repeats,
 * D of 1, more indices than one backward dispatch walks), max_last and argmax_last (ties and NaNs: the first wins),
 * softmax_cross_entropy (short and long rows), window_rows (f32 and i64 rows, bitwise); and the faults: an index,
 * label or window row outside its range is an error with the CPU's words, and the next call runs clean. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"
#include "vulkan/vk_test.h"

/* n values in [0, bound) from seed, with repeats. */
static int64_t *draw_indices(int64_t n, int64_t bound, uint64_t seed) {
  int64_t *v = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = (int64_t)((seed >> 33) % (uint64_t)bound);
  }
  return v;
}

/* gather_rows of table [V, D] by indices of dtype and shape [n0, n1]. */
static void check_gather(const char *label, int64_t V, int64_t D, tg_dtype dtype, int64_t n0, int64_t n1) {
  vk_pair in[2];
  int64_t *idx = draw_indices(n0 * n1, V, 61);
  vk_pair_new(&in[0], "table", 2, (int64_t[]){V, D});
  vk_pair_fill(&in[0], 62, -2.0f, 2.0f);
  vk_pair_new_index(&in[1], "idx", dtype, 2, (int64_t[]){n0, n1}, idx);
  vk_check_op(label, TG_OP_GATHER_ROWS, in, 2, 2, (int64_t[]){n0 * n1, D}, (int[]){1, 0}, NULL);
  vk_pair_free(&in[0]);
  vk_pair_free(&in[1]);
  free(idx);
}

/* max_last (forward and backward) and argmax_last (bitwise) of x [rows, d] with ties (values rounded to a coarse grid)
 * and, where nan_every > 0, a NaN in every nan_every-th row (at a row-dependent column, twice in some rows). */
static void check_max(const char *label, int64_t rows, int64_t d, int nan_every) {
  vk_pair x;
  vk_pair_new(&x, "x", 2, (int64_t[]){rows, d});
  vk_pair_fill(&x, 63, -4.0f, 4.0f);
  for (int64_t i = 0; i < x.n; i++) x.host[i] = roundf(x.host[i]); /* 9 values: many ties */
  for (int64_t r = 0; nan_every > 0 && r < rows; r += nan_every) {
    x.host[r * d + (r * 7) % d] = NAN;
    if (r % 2 == 0) x.host[r * d + (r * 3) % d] = NAN;
  }
  vk_pair_upload(&x);
  char what[96];
  snprintf(what, sizeof what, "max_last, %s", label);
  vk_check_op(what, TG_OP_MAX_LAST, &x, 1, 1, (int64_t[]){rows}, (int[]){1}, NULL);
  snprintf(what, sizeof what, "argmax_last, %s", label);
  vk_check_fwd_exact(what, TG_OP_ARGMAX_LAST, &x, 1, TG_I64, 1, (int64_t[]){rows}, NULL);
  vk_pair_free(&x);
}

/* softmax_cross_entropy of logits [rows, c] against labels of dtype. */
static void check_xent(const char *label, int64_t rows, int64_t c, tg_dtype dtype, float spread) {
  vk_pair in[2];
  int64_t *labels = draw_indices(rows, c, 64);
  vk_pair_new(&in[0], "logits", 2, (int64_t[]){rows, c});
  vk_pair_fill(&in[0], 65, -spread, spread);
  vk_pair_new_index(&in[1], "labels", dtype, 1, (int64_t[]){rows}, labels);
  vk_check_op(label, TG_OP_SOFTMAX_XENT, in, 2, 0, NULL, (int[]){1, 0}, NULL);
  vk_pair_free(&in[0]);
  vk_pair_free(&in[1]);
  free(labels);
}

/* window_rows of t [n] (f32 or i64 rows in [w - 1, rows)) into windows of w rows, bitwise. */
static void check_window(const char *label, int64_t n, int64_t w, int64_t rows, tg_dtype dtype) {
  int64_t *ends = draw_indices(n, rows - w + 1, 68);
  vk_pair t;
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = w, attr.i[1] = rows;
  for (int64_t i = 0; i < n; i++) ends[i] += w - 1;
  if (dtype == TG_I64) {
    vk_pair_new_index(&t, "t", TG_I64, 1, (int64_t[]){n}, ends);
  } else {
    vk_pair_new(&t, "t", 1, (int64_t[]){n});
    for (int64_t i = 0; i < n; i++) t.host[i] = (float)ends[i];
    vk_pair_upload(&t);
  }
  vk_check_fwd_exact(label, TG_OP_WINDOW_ROWS, &t, 1, TG_I64, 2, (int64_t[]){n, w}, &attr);
  vk_pair_free(&t);
  free(ends);
}

/* A window row that is not an integer or ends no window: the CPU's words, for f32 (3.5) and i64 (1 < w - 1) rows. */
static void check_window_faults(void) {
  vk_pair t;
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = 3, attr.i[1] = 10;
  vk_pair_new(&t, "t", 1, (int64_t[]){4});
  memcpy(t.host, (float[]){2.0f, 9.0f, 3.5f, 4.0f}, sizeof(float) * 4);
  vk_pair_upload(&t);
  CHECK(vk_run_fwd(TG_OP_WINDOW_ROWS, &t, 1, TG_I64, 2, (int64_t[]){4, 3}, &attr) == TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "t 3.5 at flat position 2 of 't' is not a row in [2, 10)"), "window_rows' fault: %s",
            tg_last_error());
  vk_pair_free(&t);
  vk_pair_new_index(&t, "t", TG_I64, 1, (int64_t[]){3}, (int64_t[]){5, 1, 2});
  CHECK(vk_run_fwd(TG_OP_WINDOW_ROWS, &t, 1, TG_I64, 2, (int64_t[]){3, 3}, &attr) == TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "t 1 at flat position 1 of 't' is not a row in [2, 10)"), "window_rows' fault: %s",
            tg_last_error());
  vk_pair_free(&t);
}

/* An index (gather) or label (xent) outside its range: TG_ERR_INVALID with the words the CPU uses, then a clean call. */
static void check_faults(void) {
  vk_pair t, idx, logits, labels;
  vk_pair_new(&t, "table", 2, (int64_t[]){5, 3});
  vk_pair_fill(&t, 66, -1.0f, 1.0f);
  int64_t bad[6] = {0, 1, 2, 4, -1, 3}; /* -1 at [1, 1] */
  vk_pair_new_index(&idx, "idx", TG_I64, 2, (int64_t[]){2, 3}, bad);
  tg_status st = vk_run_fwd(TG_OP_GATHER_ROWS, (vk_pair[]){t, idx}, 2, TG_F32, 2, (int64_t[]){6, 3}, NULL);
  CHECK(st == TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "index -1 at position [1, 1] (flat 4) of 'idx' is outside [0, 5) of table 'table'"),
            "gather_rows' fault: %s", tg_last_error());
  int64_t good[6] = {0, 1, 2, 4, 4, 3};
  vk_pair_free(&idx);
  vk_pair_new_index(&idx, "idx", TG_I32, 2, (int64_t[]){2, 3}, good);
  CHECK_OK(vk_run_fwd(TG_OP_GATHER_ROWS, (vk_pair[]){t, idx}, 2, TG_F32, 2, (int64_t[]){6, 3}, NULL)); /* the record cleared */
  vk_pair_new(&logits, "logits", 2, (int64_t[]){3, 4});
  vk_pair_fill(&logits, 67, -1.0f, 1.0f);
  vk_pair_new_index(&labels, "labels", TG_I32, 1, (int64_t[]){3}, (int64_t[]){0, 3, 4});
  st = vk_run_fwd(TG_OP_SOFTMAX_XENT, (vk_pair[]){logits, labels}, 2, TG_F32, 0, NULL, NULL);
  CHECK(st == TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "label 4 at row 2 of 'labels' is outside [0, 4)"), "softmax_cross_entropy's fault: %s",
            tg_last_error());
  vk_pair_free(&t);
  vk_pair_free(&idx);
  vk_pair_free(&logits);
  vk_pair_free(&labels);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  check_gather("gather_rows, i64", 50, 7, TG_I64, 3, 40);
  check_gather("gather_rows, i32, one column", 9, 1, TG_I32, 10, 10);
  check_gather("gather_rows, more indices than a dispatch walks", 5, 3, TG_I64, 7, 10000);
  check_gather("gather_rows, wide rows", 4, 700, TG_I32, 2, 3);
  check_max("ties", 300, 17, 0);
  check_max("ties and NaNs", 300, 17, 5);
  check_max("long rows with NaNs", 5, 3000, 2);
  check_max("many rows", 70000, 3, 0); /* past 65535 workgroups */
  check_xent("softmax_cross_entropy, i64 labels", 300, 10, TG_I64, 4.0f);
  check_xent("softmax_cross_entropy, i32 labels, long rows", 3, 5000, TG_I32, 30.0f);
  /* increments of 1/70000 added to gradients of up to 0.5: one ulp of those (an exp a bit off the CPU's) is 0.4% of an
   * increment, so this case checks the rows past 65535 workgroups at 1e-2 */
  double tol = vk_set_bwd_tol(1e-2);
  check_xent("softmax_cross_entropy, many rows", 70000, 2, TG_I64, 3.0f);
  vk_set_bwd_tol(tol);
  check_window("window_rows, f32 rows", 300, 32, 5000, TG_F32);
  check_window("window_rows, i64 rows", 70, 1, 9, TG_I64);
  check_faults();
  check_window_faults();
  vk_report("ops that select by index", "");
  return tg_test_finish();
}
