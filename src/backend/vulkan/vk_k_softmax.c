/* Vulkan kernels of softmax, log_softmax and causal_softmax over the last dim, forward and backward
 * (shaders/softmax.comp). */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_kernels.h"
#include "ops/norm_args.h"

typedef struct softmax_args {
  uint64_t x, y, dy, dx;
  uint32_t rows, d, mode, causal, tq;
  int32_t offset;
} softmax_args;

/* mode: 0 softmax, 1 log_softmax, + 2 for the backward; causal: causal_softmax (x [..., Tq, Tk], attr i[0] the
 * offset of the last visible key). */
static tg_status softmax_run(const tg_kernel_args *a, uint32_t mode, int causal) {
  int64_t rows, d;
  tg_norm_dims(a->out, &rows, &d);
  tg_status st = tg_vk_fits(a->node_name, rows * d);
  if (st != TG_OK) return st;
  if (rows == 0 || d == 0 || (mode >= 2 && !a->in_grad[0])) return TG_OK;
  softmax_args p = {.x = tg_vk_addr(a->in[0]->data), .y = tg_vk_addr(a->out->data), .rows = (uint32_t)rows,
                    .d = (uint32_t)d, .mode = mode, .causal = (uint32_t)causal, .tq = 1};
  if (causal) { /* an offset past either end sees every key or none: clamped so the shader's int never overflows */
    int64_t tq = a->out->shape[a->out->ndim - 2], off = a->attr->i[0];
    off = off > d ? d : off < -tq - 1 ? -tq - 1 : off;
    if (tq > INT32_MAX || d > INT32_MAX)
      return tg_error(TG_ERR_UNSUPPORTED, "%s: %lld queries of %lld keys, more than the Vulkan kernel takes",
                      a->node_name, (long long)tq, (long long)d);
    p.tq = (uint32_t)tq, p.offset = (int32_t)off;
  }
  if (mode >= 2) p.x = 0, p.dy = tg_vk_addr(a->out_grad), p.dx = tg_vk_addr(a->in_grad[0]);
  return tg_vk_dispatch(a->out->device.index, TG_VK_K_softmax, &p, sizeof p, tg_vk_groups((uint64_t)rows, 1));
}

tg_status tg_vk_softmax_fwd(const tg_kernel_args *a) { return softmax_run(a, 0, 0); }
tg_status tg_vk_softmax_bwd(const tg_kernel_args *a) { return softmax_run(a, 2, 0); }
tg_status tg_vk_log_softmax_fwd(const tg_kernel_args *a) { return softmax_run(a, 1, 0); }
tg_status tg_vk_log_softmax_bwd(const tg_kernel_args *a) { return softmax_run(a, 3, 0); }
tg_status tg_vk_causal_softmax_fwd(const tg_kernel_args *a) { return softmax_run(a, 0, 1); }
tg_status tg_vk_causal_softmax_bwd(const tg_kernel_args *a) { return softmax_run(a, 2, 1); }
