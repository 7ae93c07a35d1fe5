/* The Vulkan kernels of the sequence ops against the CPU's, forward and backward: conv1d_causal with and without a
 * bias, kernels longer than the sequence, each gradient alone; ssd_scan (Mamba-2's scan) with and without D, one
 * chunk and several (the last one short), grouped B and C, each gradient alone. */
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

/* ssd_scan of x [b, l, h, p] with dt [b, l, h] in (0.01, 0.3), A [h] in (-2, -0.2), Bm and Cm [b, l, g, n] and D [h]
 * where asked, in chunks of q steps; want: dx, ddt, dA, dB, dC, dD. */
static void check_ssd(const char *label, int64_t b, int64_t l, int64_t h, int64_t p, int64_t g, int64_t n, int64_t q,
                      int has_d, const int *want) {
  vk_pair in[6];
  vk_pair_new(&in[0], "x", 4, (int64_t[]){b, l, h, p});
  vk_pair_fill(&in[0], 84, -1.0f, 1.0f);
  vk_pair_new(&in[1], "dt", 3, (int64_t[]){b, l, h});
  vk_pair_fill(&in[1], 85, 0.01f, 0.3f);
  vk_pair_new(&in[2], "A", 1, (int64_t[]){h});
  vk_pair_fill(&in[2], 86, -2.0f, -0.2f);
  vk_pair_new(&in[3], "B", 4, (int64_t[]){b, l, g, n});
  vk_pair_fill(&in[3], 87, -1.0f, 1.0f);
  vk_pair_new(&in[4], "C", 4, (int64_t[]){b, l, g, n});
  vk_pair_fill(&in[4], 88, -1.0f, 1.0f);
  if (has_d) vk_pair_new(&in[5], "D", 1, (int64_t[]){h}), vk_pair_fill(&in[5], 89, 0.5f, 1.5f);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = q, attr.i[1] = has_d;
  vk_check_op(label, TG_OP_SSD_SCAN, in, 5 + has_d, 4, in[0].shape, want, &attr);
  for (int i = 0; i < 5 + has_d; i++) vk_pair_free(&in[i]);
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
  check_ssd("ssd_scan", 2, 20, 4, 8, 2, 6, 8, 1, (int[]){1, 1, 1, 1, 1, 1});
  check_ssd("ssd_scan without D, one chunk", 1, 9, 2, 5, 1, 3, 16, 0, (int[]){1, 1, 1, 1, 1});
  check_ssd("ssd_scan, a state wider than a workgroup", 2, 40, 2, 32, 1, 16, 16, 1, (int[]){1, 1, 1, 1, 1, 1});
  check_ssd("ssd_scan, dB and dD only", 2, 13, 2, 4, 2, 4, 4, 1, (int[]){0, 0, 0, 1, 0, 1});
  check_ssd("ssd_scan, dx, ddt and dA only", 3, 13, 3, 4, 3, 4, 5, 0, (int[]){1, 1, 1, 0, 0});
  vk_report("sequence ops", "");
  return tg_test_finish();
}
