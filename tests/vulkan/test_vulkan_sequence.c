/* The Vulkan kernels of the sequence ops against the CPU's, forward and backward: conv1d_causal with and without a
 * bias, kernels longer than the sequence, each gradient alone. */
#include <string.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"
#include "vulkan/vk_test.h"

/* conv1d_causal of x [b, l, c] with w [c, k] and a bias where asked; want: dx, dw, dbias. */
static void check_conv(const char *label, int64_t b, int64_t l, int64_t c, int64_t k, int bias, const int *want) {
  vk_pair in[3];
  vk_pair_new(&in[0], "x", 3, (int64_t[]){b, l, c});
  vk_pair_fill(&in[0], 81, -2.0f, 2.0f);
  vk_pair_new(&in[1], "w", 2, (int64_t[]){c, k});
  vk_pair_fill(&in[1], 82, -1.0f, 1.0f);
  if (bias) vk_pair_new(&in[2], "bias", 1, (int64_t[]){c}), vk_pair_fill(&in[2], 83, -1.0f, 1.0f);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = bias;
  vk_check_op(label, TG_OP_CONV1D_CAUSAL, in, 2 + bias, 3, in[0].shape, want, &attr);
  for (int i = 0; i < 2 + bias; i++) vk_pair_free(&in[i]);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  check_conv("conv1d_causal", 4, 50, 24, 4, 1, (int[]){1, 1, 1});
  check_conv("conv1d_causal without a bias", 3, 17, 5, 3, 0, (int[]){1, 1});
  check_conv("conv1d_causal, kernel longer than the sequence", 2, 3, 7, 5, 1, (int[]){1, 1, 1});
  check_conv("conv1d_causal, many rows", 300, 256, 3, 4, 1, (int[]){1, 1, 1}); /* 76,800 rows per weight sum */
  check_conv("conv1d_causal, dw only", 2, 40, 9, 4, 1, (int[]){0, 1, 0});
  check_conv("conv1d_causal, dx and dbias only", 2, 40, 9, 4, 1, (int[]){1, 0, 1});
  vk_report("sequence ops", "");
  return tg_test_finish();
}
