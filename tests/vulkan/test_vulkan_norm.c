/* The Vulkan kernels of the normalisations against the CPU's, forward and backward: layernorm and rmsnorm with and
 * without their affine and with each gradient alone, gate_add_norm with one affine slot, several slots and none, over
 * short and long rows and more rows than one dispatch's workgroups. */
#include <string.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"
#include "vulkan/vk_test.h"

/* layernorm of x [rows, d] (+ 3 around it, so the mean matters) with gamma and beta where given; want: dx, dgamma,
 * dbeta. */
static void check_layernorm(const char *label, int64_t rows, int64_t d, int gamma, int beta, const int *want) {
  vk_pair in[3];
  int n = 1;
  vk_pair_new(&in[0], "x", 2, (int64_t[]){rows, d});
  vk_pair_fill(&in[0], 52, 1.0f, 5.0f);
  if (gamma) vk_pair_new(&in[n], "gamma", 1, (int64_t[]){d}), vk_pair_fill(&in[n], 53, 0.5f, 1.5f), n++;
  if (beta) vk_pair_new(&in[n], "beta", 1, (int64_t[]){d}), vk_pair_fill(&in[n], 54, -1.0f, 1.0f), n++;
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = gamma, attr.i[1] = beta, attr.f[0] = 1e-5f;
  vk_check_op(label, TG_OP_LAYERNORM, in, n, 2, in[0].shape, want, &attr);
  for (int k = 0; k < n; k++) vk_pair_free(&in[k]);
}

/* rmsnorm of x [rows, d] (values of both signs) with its weight where given; want: dx, dw. */
static void check_rmsnorm(const char *label, int64_t rows, int64_t d, int weight, const int *want) {
  vk_pair in[2];
  vk_pair_new(&in[0], "x", 2, (int64_t[]){rows, d});
  vk_pair_fill(&in[0], 55, -2.0f, 3.0f);
  if (weight) vk_pair_new(&in[1], "w", 1, (int64_t[]){d}), vk_pair_fill(&in[1], 56, 0.5f, 1.5f);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = weight, attr.f[0] = 1e-6f;
  vk_check_op(label, TG_OP_RMSNORM, in, 1 + weight, 2, in[0].shape, want, &attr);
  for (int k = 0; k < 1 + weight; k++) vk_pair_free(&in[k]);
}

/* gate_add_norm of a [rows, 2d] (value | gate) and skip [rows, d], with gamma and beta [slots, d] when slots > 0;
 * want: da, dskip, dgamma, dbeta. */
static void check_gan(const char *label, int64_t rows, int64_t d, int64_t slots, const int *want) {
  vk_pair in[4];
  int n = slots > 0 ? 4 : 2;
  vk_pair_new(&in[0], "a", 2, (int64_t[]){rows, 2 * d});
  vk_pair_fill(&in[0], 57, -3.0f, 3.0f);
  vk_pair_new(&in[1], "skip", 2, (int64_t[]){rows, d});
  vk_pair_fill(&in[1], 58, 0.0f, 4.0f);
  if (slots > 0) {
    vk_pair_new(&in[2], "gamma", 2, (int64_t[]){slots, d});
    vk_pair_fill(&in[2], 59, 0.5f, 1.5f);
    vk_pair_new(&in[3], "beta", 2, (int64_t[]){slots, d});
    vk_pair_fill(&in[3], 60, -1.0f, 1.0f);
  }
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = slots > 0, attr.f[0] = 1e-5f;
  vk_check_op(label, TG_OP_GATE_ADD_NORM, in, n, 2, in[1].shape, want, &attr);
  for (int k = 0; k < n; k++) vk_pair_free(&in[k]);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  check_layernorm("layernorm", 300, 64, 1, 1, (int[]){1, 1, 1});
  check_layernorm("layernorm without gamma and beta", 66000, 16, 0, 0, (int[]){1}); /* rows past 65535 groups */
  check_layernorm("layernorm long rows, gamma only", 3, 3000, 1, 0, (int[]){1, 1});
  check_layernorm("layernorm, dgamma and dbeta only", 2000, 5, 1, 1, (int[]){0, 1, 1});
  check_layernorm("layernorm, dx only", 40, 33, 1, 1, (int[]){1, 0, 0});
  check_rmsnorm("rmsnorm", 300, 64, 1, (int[]){1, 1});
  check_rmsnorm("rmsnorm without a weight", 66000, 16, 0, (int[]){1});
  check_rmsnorm("rmsnorm long rows, dw only", 3, 3000, 1, (int[]){0, 1});
  check_gan("gate_add_norm", 256, 64, 1, (int[]){1, 1, 1, 1});
  check_gan("gate_add_norm, 7 slots", 70, 16, 7, (int[]){1, 1, 1, 1});
  check_gan("gate_add_norm without an affine", 66000, 8, 0, (int[]){1, 1});
  check_gan("gate_add_norm long rows, dskip and dbeta only", 4, 3000, 2, (int[]){0, 1, 0, 1});
  check_gan("gate_add_norm, da and dgamma only", 500, 12, 5, (int[]){1, 0, 1, 0});
  vk_report("normalisations", "");
  return tg_test_finish();
}
