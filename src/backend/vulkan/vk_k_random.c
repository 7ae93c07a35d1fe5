/* Vulkan kernels of the ops that draw random numbers (shaders/random.comp): dropout, forward and backward, and
 * sample_rows, with the CPU's and CUDA's bits (the same Philox counters, keys and thresholds). */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_kernels.h"

enum { MODE_DROPOUT, MODE_SAMPLE };
enum { ACTIVE = 1, ADD = 2, OFFSET_ON_DEVICE = 4 };

typedef struct random_args {
  uint64_t src, dst, out, offset_dev;
  uint32_t n, mode, flags;
  float p, scale;
  uint32_t rows;
  uint32_t seed[2], stream[2], offset[2];
} random_args;

_Static_assert(sizeof(random_args) == 80, "random_args must match random.comp's push constants");

/* The push constants every mode shares: the key's parts, and where the run counter comes from. */
static random_args random_base(const tg_kernel_args *a, uint32_t n, uint32_t mode) {
  return (random_args){.offset_dev = tg_vk_addr(a->rng_offset_dev), .n = n, .mode = mode,
                       .flags = a->rng_offset_dev ? OFFSET_ON_DEVICE : 0,
                       .seed = {(uint32_t)a->seed, (uint32_t)(a->seed >> 32)},
                       .stream = {(uint32_t)a->rng_stream, (uint32_t)(a->rng_stream >> 32)},
                       .offset = {(uint32_t)a->rng_offset, (uint32_t)(a->rng_offset >> 32)}};
}

static tg_status dropout_run(const tg_kernel_args *a, const float *src, float *dst, int add) {
  int64_t n = tg_numel(a->in[0]);
  tg_status st = tg_vk_fits(a->node_name, n + 3);
  if (st != TG_OK || n == 0) return st;
  random_args p = random_base(a, (uint32_t)n, MODE_DROPOUT);
  p.src = tg_vk_addr(src), p.dst = tg_vk_addr(dst);
  p.p = a->attr->f[0], p.scale = 1.0f / (1.0f - p.p);
  p.flags |= (a->attr->i[0] ? ACTIVE : 0) | (add ? ADD : 0);
  return tg_vk_dispatch(a->out->device.index, TG_VK_K_random, &p, sizeof p, tg_vk_groups(((uint64_t)n + 3) / 4, 256));
}

tg_status tg_vk_dropout_fwd(const tg_kernel_args *a) { return dropout_run(a, a->in[0]->data, a->out->data, 0); }
tg_status tg_vk_dropout_bwd(const tg_kernel_args *a) {
  return a->in_grad[0] ? dropout_run(a, a->out_grad, a->in_grad[0], 1) : TG_OK;
}

tg_status tg_vk_sample_rows_fwd(const tg_kernel_args *a) {
  int64_t b = tg_numel(a->out), rows = a->attr->i[0];
  tg_status st = tg_vk_fits(a->node_name, 2 * b);
  if (st != TG_OK || b == 0) return st;
  if (rows <= 0 || rows > (int64_t)UINT32_MAX)
    return tg_error(TG_ERR_UNSUPPORTED, "%s: sample_rows on Vulkan draws from 1 to %u rows, not %lld", a->node_name,
                    UINT32_MAX, (long long)rows);
  random_args p = random_base(a, (uint32_t)b, MODE_SAMPLE);
  p.out = tg_vk_addr(a->out->data), p.rows = (uint32_t)rows;
  return tg_vk_dispatch(a->out->device.index, TG_VK_K_random, &p, sizeof p, tg_vk_groups((uint64_t)b, 256));
}
