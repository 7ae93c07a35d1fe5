/* Vulkan kernels of softmax and log_softmax over the last dim, forward and backward (shaders/softmax.comp). */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_kernels.h"
#include "ops/norm_args.h"

typedef struct softmax_args {
  uint64_t x, y, dy, dx;
  uint32_t rows, d, mode;
} softmax_args;

/* mode: 0 softmax, 1 log_softmax, + 2 for the backward. */
static tg_status softmax_run(const tg_kernel_args *a, uint32_t mode) {
  int64_t rows, d;
  tg_norm_dims(a->out, &rows, &d);
  tg_status st = tg_vk_fits(a->node_name, rows * d);
  if (st != TG_OK) return st;
  if (rows == 0 || d == 0 || (mode >= 2 && !a->in_grad[0])) return TG_OK;
  softmax_args p = {.x = tg_vk_addr(a->in[0]->data), .y = tg_vk_addr(a->out->data), .rows = (uint32_t)rows, .d = (uint32_t)d,
                    .mode = mode};
  if (mode >= 2) p.x = 0, p.dy = tg_vk_addr(a->out_grad), p.dx = tg_vk_addr(a->in_grad[0]);
  return tg_vk_dispatch(a->out->device.index, TG_VK_K_softmax, &p, sizeof p, tg_vk_groups((uint64_t)rows, 1));
}

tg_status tg_vk_softmax_fwd(const tg_kernel_args *a) { return softmax_run(a, 0); }
tg_status tg_vk_softmax_bwd(const tg_kernel_args *a) { return softmax_run(a, 2); }
tg_status tg_vk_log_softmax_fwd(const tg_kernel_args *a) { return softmax_run(a, 1); }
tg_status tg_vk_log_softmax_bwd(const tg_kernel_args *a) { return softmax_run(a, 3); }
