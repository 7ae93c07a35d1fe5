/* The Vulkan kernels of the shape ops against the CPU's (reshape's are no-ops: the planner aliases its output): concat
 * of three inputs along the first, a middle and the last dim; slice at the start, the middle and the end; transpose of
 * neighbouring and distant dims and of a dim with itself; forward and backward on f32, and the forwards on i64 (moved
 * as 32-bit words), compared bitwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"
#include "vulkan/vk_test.h"

static tg_attr attr3(int64_t i0, int64_t i1, int64_t i2) {
  tg_attr t;
  memset(&t, 0, sizeof t);
  t.i[0] = i0, t.i[1] = i1, t.i[2] = i2;
  return t;
}

static void check_concat(const char *label, int d) {
  int64_t shapes[3][3] = {{4, 3, 5}, {4, 3, 5}, {4, 3, 5}}, out[3] = {4, 3, 5};
  shapes[1][d] = 2, shapes[2][d] = 1, out[d] = shapes[0][d] + 3;
  vk_pair in[3];
  for (int k = 0; k < 3; k++) {
    vk_pair_new(&in[k], "x", 3, shapes[k]);
    vk_pair_fill(&in[k], 60 + (uint64_t)k, -1.0f, 1.0f);
  }
  tg_attr at = attr3(d, 0, 0);
  vk_check_op(label, TG_OP_CONCAT, in, 3, 3, out, (int[]){1, 0, 1}, &at);
  for (int k = 0; k < 3; k++) vk_pair_free(&in[k]);
}

static void check_slice(const char *label, int d, int64_t start, int64_t len) {
  int64_t shape[3] = {4, 6, 5}, out[3] = {4, 6, 5};
  out[d] = len;
  vk_pair x;
  vk_pair_new(&x, "x", 3, shape);
  vk_pair_fill(&x, 70, -1.0f, 1.0f);
  tg_attr at = attr3(d, start, len);
  vk_check_op(label, TG_OP_SLICE, &x, 1, 3, out, (int[]){1}, &at);
  vk_pair_free(&x);
}

static void check_transpose(const char *label, int d0, int d1) {
  int64_t shape[4] = {2, 3, 4, 5}, out[4] = {2, 3, 4, 5};
  out[d0] = shape[d1], out[d1] = shape[d0];
  vk_pair x;
  vk_pair_new(&x, "x", 4, shape);
  vk_pair_fill(&x, 80, -1.0f, 1.0f);
  tg_attr at = attr3(d0, d1, 0);
  vk_check_op(label, TG_OP_TRANSPOSE, &x, 1, 4, out, (int[]){1}, &at);
  vk_pair_free(&x);
}

/* An i64 tensor [2, 3, 4] of distinct values with high words set, through op's forward on both sides, bitwise. */
static void check_i64(const char *label, int op, tg_attr at, int out_ndim, const int64_t *out_shape) {
  int64_t shape[3] = {2, 3, 4}, n = 24, n_out = 1;
  for (int d = 0; d < out_ndim; d++) n_out *= out_shape[d];
  int64_t host[24], *want = calloc((size_t)n_out, 8), *got = calloc((size_t)n_out, 8);
  for (int64_t i = 0; i < n; i++) host[i] = (i + 1) * 0x100000001LL;
  void *dx, *dy;
  CHECK_OK(tg_vk_alloc(0, 8 * (size_t)n, &dx));
  CHECK_OK(tg_vk_alloc(0, 8 * (size_t)n_out, &dy));
  CHECK_OK(tg_vk_from_host(0, dx, host, 8 * (size_t)n));
  tg_tensor xh, yh, xd, yd;
  CHECK_OK(tg_tensor_view(&xh, "x", tg_cpu(0), TG_I64, 3, shape, host));
  CHECK_OK(tg_tensor_view(&yh, "y", tg_cpu(0), TG_I64, out_ndim, out_shape, want));
  CHECK_OK(tg_tensor_view(&xd, "x", (tg_device){TG_VULKAN, 0}, TG_I64, 3, shape, dx));
  CHECK_OK(tg_tensor_view(&yd, "y", (tg_device){TG_VULKAN, 0}, TG_I64, out_ndim, out_shape, dy));
  tg_kernel_args ah = {.n_in = 1, .in = {&xh}, .out = &yh, .attr = &at, .node_name = label};
  tg_kernel_args ad = {.n_in = 1, .in = {&xd}, .out = &yd, .attr = &at, .node_name = label};
  CHECK_OK(tg_cpu_op_kernels(op, TG_F32)->fwd(&ah));
  CHECK_OK(tg_vk_op_kernels(op)->fwd(&ad));
  CHECK_OK(tg_vk_to_host(0, got, dy, 8 * (size_t)n_out));
  CHECK_MSG(memcmp(got, want, 8 * (size_t)n_out) == 0, "%s: the i64 values differ from the CPU's", label);
  tg_vk_free(0, dx), tg_vk_free(0, dy);
  free(want), free(got);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  check_concat("concat along dim 0", 0);
  check_concat("concat along dim 1", 1);
  check_concat("concat along dim 2", 2);
  check_slice("slice dim 0 at the start", 0, 0, 2);
  check_slice("slice dim 1 in the middle", 1, 2, 3);
  check_slice("slice dim 2 at the end", 2, 3, 2);
  check_transpose("transpose 1 2", 1, 2);
  check_transpose("transpose 0 3", 0, 3);
  check_transpose("transpose 3 1", 3, 1);
  check_transpose("transpose 2 2", 2, 2);
  check_i64("i64 slice", TG_OP_SLICE, attr3(1, 1, 2), 3, (int64_t[]){2, 2, 4});
  check_i64("i64 transpose", TG_OP_TRANSPOSE, attr3(0, 2, 0), 3, (int64_t[]){4, 3, 2});
  vk_report("shape ops", "; i64 moved bitwise");
  return tg_test_finish();
}
