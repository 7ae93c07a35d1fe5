/* Vulkan kernels of max_last (forward and backward) and argmax_last (forward), shaders/argmax.comp: a workgroup per
 * row finds its first maximum, a NaN counting as the maximum, as the CPU's. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_kernels.h"

enum { MODE_MAX, MODE_ARGMAX, MODE_MAX_GRAD };

typedef struct argmax_args {
  uint64_t x, y, gy, gx;
  uint32_t rows, d, mode;
} argmax_args;

static tg_status argmax_run(const tg_kernel_args *a, uint32_t mode) {
  const tg_tensor *x = a->in[0];
  int64_t d = x->ndim > 0 ? x->shape[x->ndim - 1] : 1, rows = d > 0 ? tg_numel(x) / d : 0;
  tg_status st = tg_vk_fits(a->node_name, 2 * tg_numel(x));
  if (st != TG_OK || rows == 0) return st;
  argmax_args p = {.x = tg_vk_addr(x->data), .y = tg_vk_addr(a->out->data), .gy = tg_vk_addr(a->out_grad),
                   .gx = tg_vk_addr(a->in_grad[0]), .rows = (uint32_t)rows, .d = (uint32_t)d, .mode = mode};
  return tg_vk_dispatch(a->out->device.index, TG_VK_K_argmax, &p, sizeof p, tg_vk_groups((uint64_t)rows, 1));
}

tg_status tg_vk_max_last_fwd(const tg_kernel_args *a) { return argmax_run(a, MODE_MAX); }
tg_status tg_vk_max_last_bwd(const tg_kernel_args *a) { return a->in_grad[0] ? argmax_run(a, MODE_MAX_GRAD) : TG_OK; }
tg_status tg_vk_argmax_last_fwd(const tg_kernel_args *a) { return argmax_run(a, MODE_ARGMAX); }
