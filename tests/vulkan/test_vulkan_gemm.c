/* The Vulkan kernels of the GEMM ops against the CPU's, forward and backward: matmul in every transpose, batched, with a
 * shared B (whose gradient sums over the batches) and 4-d; linear with and without a bias and with one gradient
 * wanted; stacked_linear with several groups and a bias per group, and with one input per group. Sizes that are no
 * multiple of the 16-wide tile, and a linear of 1.1M rows: more tiles than one dispatch's workgroups span, and a weight
 * gradient whose K is longer than one dispatch takes (lavapipe ends a loop at 65535 iterations); column sums of more
 * rows than one dispatch's lanes may loop over. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "backend/vulkan/vk_gemm.h"
#include "backend/vulkan/vk_memory.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"
#include "vulkan/vk_test.h"

/* matmul of a [batch.., a0, a1] and b [(batch..,) b0, b1] (b_nd 2: shared), ta / tb transposing them. */
static void check_matmul(const char *label, int nd, const int64_t *as, int b_nd, const int64_t *bs, int ta, int tb,
                         int ga, int gb) {
  vk_pair in[2];
  vk_pair_new(&in[0], "a", nd, as);
  vk_pair_new(&in[1], "b", b_nd, bs);
  vk_pair_fill(&in[0], 11, -1.0f, 1.0f);
  vk_pair_fill(&in[1], 12, -1.0f, 1.0f);
  int64_t out[4];
  for (int d = 0; d < nd - 2; d++) out[d] = as[d];
  out[nd - 2] = ta ? as[nd - 1] : as[nd - 2];
  out[nd - 1] = tb ? bs[b_nd - 2] : bs[b_nd - 1];
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = ta, attr.i[1] = tb;
  vk_check_op(label, TG_OP_MATMUL, in, 2, nd, out, (int[]){ga, gb}, &attr);
  vk_pair_free(&in[0]);
  vk_pair_free(&in[1]);
}

/* linear (groups 0) of x [rows, in] and w [out, in], or stacked_linear of x [rows, G, in] and w [G, out, in]. */
static void check_linear(const char *label, int64_t rows, int64_t groups, int64_t nin, int64_t nout, int bias,
                         int gx) {
  vk_pair in[3];
  int op = groups ? TG_OP_STACKED_LINEAR : TG_OP_LINEAR;
  if (groups) {
    vk_pair_new(&in[0], "x", 3, (int64_t[]){rows, groups, nin});
    vk_pair_new(&in[1], "w", 3, (int64_t[]){groups, nout, nin});
    vk_pair_new(&in[2], "bias", 2, (int64_t[]){groups, nout});
  } else {
    vk_pair_new(&in[0], "x", 2, (int64_t[]){rows, nin});
    vk_pair_new(&in[1], "w", 2, (int64_t[]){nout, nin});
    vk_pair_new(&in[2], "bias", 1, (int64_t[]){nout});
  }
  for (int k = 0; k < 3; k++) vk_pair_fill(&in[k], 20 + (uint64_t)k, -1.0f, 1.0f);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = bias;
  int64_t out3[3] = {rows, groups, nout}, out2[2] = {rows, nout};
  vk_check_op(label, op, in, bias ? 3 : 2, groups ? 3 : 2, groups ? out3 : out2, (int[]){gx, 1, 1}, &attr);
  for (int k = 0; k < 3; k++) vk_pair_free(&in[k]);
}

/* tg_vk_col_sums of x [rows, 2] in [0, 1) into sums that start at 1: each within 1e-4 relative of the double sum. */
static void check_col_sums(int64_t rows) {
  enum { NCOL = 2 };
  vk_pair x, s;
  vk_pair_new(&x, "x", 2, (int64_t[]){rows, NCOL});
  vk_pair_new(&s, "s", 1, (int64_t[]){NCOL});
  vk_pair_fill(&x, 31, 0.0f, 1.0f);
  vk_pair_fill(&s, 32, 1.0f, 1.0f);
  tg_kernel_args a = {.out = &s.td, .node_name = "col_sums"};
  CHECK_OK(tg_vk_col_sums(&a, x.dev, s.dev, rows, NCOL));
  float got[NCOL];
  CHECK_OK(tg_vk_to_host(0, got, s.dev, sizeof got));
  for (int j = 0; j < NCOL; j++) {
    double want = 1.0;
    for (int64_t r = 0; r < rows; r++) want += x.host[r * NCOL + j];
    CHECK_MSG(fabs(got[j] - want) <= 1e-4 * want, "col_sums of %lld rows, column %d: %.9g, want %.9g",
              (long long)rows, j, (double)got[j], want);
  }
  vk_pair_free(&x);
  vk_pair_free(&s);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  check_matmul("matmul nn", 2, (int64_t[]){37, 23}, 2, (int64_t[]){23, 19}, 0, 0, 1, 1);
  check_matmul("matmul nt", 2, (int64_t[]){37, 23}, 2, (int64_t[]){19, 23}, 0, 1, 1, 1);
  check_matmul("matmul tn", 2, (int64_t[]){23, 37}, 2, (int64_t[]){23, 19}, 1, 0, 1, 1);
  check_matmul("matmul tt", 2, (int64_t[]){23, 37}, 2, (int64_t[]){19, 23}, 1, 1, 1, 1);
  check_matmul("matmul batched nt", 3, (int64_t[]){5, 17, 8}, 3, (int64_t[]){5, 17, 8}, 0, 1, 1, 1);
  check_matmul("matmul shared b", 3, (int64_t[]){5, 17, 9}, 2, (int64_t[]){9, 33}, 0, 0, 1, 1);
  check_matmul("matmul shared b, a transposed", 3, (int64_t[]){5, 9, 17}, 2, (int64_t[]){9, 33}, 1, 0, 1, 1);
  check_matmul("matmul 4-d", 4, (int64_t[]){2, 3, 16, 8}, 4, (int64_t[]){2, 3, 8, 16}, 0, 0, 1, 1);
  check_matmul("matmul grad b only", 3, (int64_t[]){4, 6, 5}, 3, (int64_t[]){4, 5, 7}, 0, 0, 0, 1);
  check_matmul("matmul one row", 3, (int64_t[]){40, 1, 1}, 3, (int64_t[]){40, 1, 64}, 0, 0, 1, 1);
  check_matmul("matmul k 0", 2, (int64_t[]){4, 0}, 2, (int64_t[]){0, 5}, 0, 0, 1, 1);
  check_linear("linear with bias", 70, 0, 33, 21, 1, 1);
  check_linear("linear without bias", 70, 0, 33, 21, 0, 1);
  check_linear("linear, weight gradients only", 9, 0, 64, 64, 1, 0);
  /* more row tiles than one dispatch spans; the weight gradient's K (and the bias's sum) longer than one dispatch's */
  /* float sums of 1.1M terms in two orders differ by about sqrt(K) eps relative (1.9e-4 seen): that check gets 1e-3 */
  double tol = vk_set_bwd_tol(1e-3);
  check_linear("linear over 1.1M rows", 1100000, 0, 3, 2, 1, 1);
  vk_set_bwd_tol(tol);
  check_linear("stacked_linear", 50, 6, 12, 10, 1, 1);
  check_linear("stacked_linear without bias", 50, 6, 12, 10, 0, 1);
  check_linear("stacked_linear one input per group", 50, 7, 1, 16, 1, 1);
  /* past 256 x 65535 rows: more than col_sums.comp's 256 lanes sum in one dispatch within lavapipe's loop limit */
  check_col_sums(256 * 65535 + 1000);
  vk_report("GEMM ops", "; 1e-3 for the weight gradient of K 1.1M");
  return tg_test_finish();
}
