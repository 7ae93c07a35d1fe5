/* The Vulkan kernels that draw random numbers against the CPU's, bit for bit: dropout's masks (lengths off the 4-element
 * counter, run counters past 2^12 whose key spills into the high word, p of 0, the inference identity) and its
 * backward, sample_rows (row counts past 2^31), and the run counter read from device memory, as a replayed step
 * reads it. */
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"
#include "vulkan/vk_test.h"

/* dropout of x [n] at p (active: training), forward bitwise, backward within tolerance. */
static void check_dropout(const char *label, int64_t n, float p, int active) {
  vk_pair x;
  vk_pair_new(&x, "x", 1, (int64_t[]){n});
  vk_pair_fill(&x, 71, -3.0f, 3.0f);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = active, attr.f[0] = p;
  vk_check_fwd_exact(label, TG_OP_DROPOUT, &x, 1, TG_F32, 1, x.shape, &attr);
  vk_check_op(label, TG_OP_DROPOUT, &x, 1, 1, x.shape, (int[]){1}, &attr);
  vk_pair_free(&x);
}

static void check_sample(const char *label, int64_t b, int64_t rows) {
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = rows;
  vk_check_fwd_exact(label, TG_OP_SAMPLE_ROWS, NULL, 0, TG_I64, 1, (int64_t[]){b}, &attr);
}

/* The run counter in device memory (rng_offset_dev) wins over the argument, as on CUDA: the mask of run 77 though the
 * argument says 5. */
static void check_offset_on_device(void) {
  vk_pair x, y;
  vk_pair_new(&x, "x", 1, (int64_t[]){4099});
  vk_pair_fill(&x, 72, -1.0f, 1.0f);
  vk_pair_new(&y, "y", 1, (int64_t[]){4099});
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = 1, attr.f[0] = 0.5f;
  uint64_t run = 77, *run_dev = NULL;
  CHECK_OK(tg_vk_alloc(0, sizeof run, (void **)&run_dev));
  CHECK_OK(tg_vk_from_host(0, run_dev, &run, sizeof run));
  tg_kernel_args ah = {.n_in = 1, .in = {&x.th}, .out = &y.th, .attr = &attr, .node_name = "dropout", .seed = 9,
                       .rng_stream = 3, .rng_offset = run};
  tg_kernel_args ad = ah;
  ad.in[0] = &x.td, ad.out = &y.td, ad.rng_offset = 5, ad.rng_offset_dev = run_dev;
  CHECK_OK(tg_cpu_op_kernels(TG_OP_DROPOUT, TG_F32)->fwd(&ah));
  CHECK_OK(tg_vk_op_kernels(TG_OP_DROPOUT)->fwd(&ad));
  float got[4099];
  CHECK_OK(tg_vk_to_host(0, got, y.dev, sizeof got));
  CHECK_MSG(memcmp(got, y.host, sizeof got) == 0, "dropout with the run counter on the device: not the CPU's mask");
  tg_vk_free(0, run_dev);
  vk_pair_free(&x);
  vk_pair_free(&y);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  vk_set_rng(0x0123456789ABCDEFull, 41, 3);
  check_dropout("dropout", 1000003, 0.3f, 1);
  check_dropout("dropout, p 0", 1001, 0.0f, 1);
  check_dropout("dropout, inference (identity)", 1001, 0.5f, 0);
  vk_set_rng(7, (1u << 20) - 1, 5000); /* the key's offset << 20 spills into its high word */
  check_dropout("dropout, run 5000", 70001, 0.9f, 1);
  check_sample("sample_rows", 5001, 1000);
  check_sample("sample_rows, 3e9 rows", 999, 3000000000LL);
  vk_set_rng(11, 2, (1ull << 40) + 9);
  check_sample("sample_rows, run 2^40 + 9", 64, 7);
  check_offset_on_device();
  vk_report("dropout and sample_rows", " (masks and draws bitwise)");
  return tg_test_finish();
}
