/* The Vulkan kernels of the elementwise ops against the CPU's on the same inputs, forward and backward: the binary ops
 * with and without broadcasting (each side the smaller one, one or both gradients wanted), scale and every activation
 * over a range that reaches their branches (softplus past its threshold, elu and gelu far into the negatives, tanh
 * past exp's overflow), sizes past one dispatch's 65535 workgroups. Backward adds into gradients that start
 * non-zero, as the graph's do. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"
#include "vulkan/vk_test.h"

/* a [ra, n / ra] op b [rb, n / rb]-like shapes: na and nb elements, the larger being the output. */
static void check_binary(const char *name, int op, int64_t rows, int64_t cols, int a_small, int b_small, int ga,
                         int gb) {
  vk_pair in[2];
  int64_t full[2] = {rows, cols}, tail[1] = {cols};
  vk_pair_new(&in[0], "a", a_small ? 1 : 2, a_small ? tail : full);
  vk_pair_new(&in[1], "b", b_small ? 1 : 2, b_small ? tail : full);
  vk_pair_fill(&in[0], 1, -2.0f, 2.0f);
  vk_pair_fill(&in[1], 2, op == TG_OP_DIV ? 0.5f : -2.0f, 2.0f); /* a divisor away from 0 */
  char label[64];
  snprintf(label, sizeof label, "%s %s%s, grads %d%d", name, a_small ? "a broadcast" : "a full",
           b_small ? " b broadcast" : " b full", ga, gb);
  vk_pair *big = a_small ? &in[1] : &in[0];
  vk_check_op(label, op, in, 2, big->ndim, big->shape, (int[]){ga, gb}, NULL);
  vk_pair_free(&in[0]);
  vk_pair_free(&in[1]);
}

static void check_unary(const char *name, int op, float lo, float hi, float s, int64_t n) {
  vk_pair in;
  vk_pair_new(&in, "x", 1, (int64_t[]){n});
  vk_pair_fill(&in, 3, lo, hi);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.f[0] = s;
  char label[64];
  snprintf(label, sizeof label, "%s over [%g, %g)", name, lo, hi);
  vk_check_op(label, op, &in, 1, 1, in.shape, (int[]){1}, &attr);
  vk_pair_free(&in);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  const struct { const char *name; int op; } bin[] = {
      {"add", TG_OP_ADD}, {"sub", TG_OP_SUB}, {"mul", TG_OP_MUL}, {"div", TG_OP_DIV}};
  for (int i = 0; i < 4; i++) {
    check_binary(bin[i].name, bin[i].op, 37, 300, 0, 0, 1, 1);
    check_binary(bin[i].name, bin[i].op, 37, 300, 0, 1, 1, 1); /* b [300] repeated over 37 rows */
    check_binary(bin[i].name, bin[i].op, 37, 300, 1, 0, 1, 1);
    check_binary(bin[i].name, bin[i].op, 37, 300, 0, 1, 0, 1); /* only the broadcast side's gradient */
    check_binary(bin[i].name, bin[i].op, 37, 300, 1, 0, 0, 1);
  }
  check_binary("add", TG_OP_ADD, 17, 1 << 20, 0, 0, 1, 1); /* 17M elements: more than one dispatch covers */
  check_binary("div", TG_OP_DIV, 70000, 3, 0, 1, 1, 1);      /* a broadcast gradient summed over 70000 repetitions */
  const struct { const char *name; int op; float lo, hi, s; } un[] = {
      {"scale", TG_OP_SCALE, -3, 3, -1.75f}, {"relu", TG_OP_RELU, -3, 3, 0},   {"tanh", TG_OP_TANH, -6, 6, 0},
      {"tanh", TG_OP_TANH, -1e-3f, 1e-3f, 0}, {"tanh", TG_OP_TANH, -80, 80, 0}, /* past 44: exp(2|x|) overflows */
      {"sigmoid", TG_OP_SIGMOID, -30, 30, 0},
      {"elu", TG_OP_ELU, -12, 3, 1.0f},      {"elu", TG_OP_ELU, -1e-3f, 1e-3f, 0.5f},
      {"silu", TG_OP_SILU, -30, 30, 0},      {"softplus", TG_OP_SOFTPLUS, -40, 40, 0},
      {"exp", TG_OP_EXP, -20, 20, 0},        {"log", TG_OP_LOG, 1e-3f, 50, 0}, {"sqrt", TG_OP_SQRT, 1e-3f, 50, 0},
      {"gelu", TG_OP_GELU, -12, 12, 0}};
  for (size_t i = 0; i < sizeof un / sizeof *un; i++) check_unary(un[i].name, un[i].op, un[i].lo, un[i].hi, un[i].s, 5000);
  check_unary("gelu", TG_OP_GELU, -5, 5, 0, (int64_t)17 << 20);
  vk_report("elementwise ops", "");
  return tg_test_finish();
}
