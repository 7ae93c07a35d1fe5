/* Vulkan kernels of conv1d_causal, the depthwise causal convolution (shaders/conv.comp): an invocation per output
 * element forward and for dx, a workgroup per weight (and bias) element for their gradients. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_kernels.h"

enum { HAS_BIAS = 1, WANT_DW = 2, WANT_DBIAS = 4 };

typedef struct conv_args {
  uint64_t x, w, bias, y, dy, dx, dw, dbias;
  uint32_t rows, l, c, k, mode, flags;
} conv_args;

/* x [B, L, C], w [C, K], bias [C] where attr.i[0]. */
static tg_status conv_prepare(const tg_kernel_args *a, conv_args *p) {
  const tg_tensor *x = a->in[0];
  int64_t B = x->shape[0], L = x->shape[1], C = x->shape[2], K = a->in[1]->shape[1];
  tg_status st = tg_vk_fits(a->node_name, B * L * C + K);
  int has_bias = a->attr->i[0] != 0;
  *p = (conv_args){.x = tg_vk_addr(x->data), .w = tg_vk_addr(a->in[1]->data),
                   .bias = has_bias ? tg_vk_addr(a->in[2]->data) : 0, .rows = (uint32_t)(B * L), .l = (uint32_t)L,
                   .c = (uint32_t)C, .k = (uint32_t)K, .flags = has_bias ? HAS_BIAS : 0};
  return st;
}

tg_status tg_vk_conv1d_causal_fwd(const tg_kernel_args *a) {
  conv_args p;
  tg_status st = conv_prepare(a, &p);
  if (st != TG_OK || (uint64_t)p.rows * p.c == 0) return st;
  p.y = tg_vk_addr(a->out->data);
  return tg_vk_dispatch(a->out->device.index, TG_VK_K_conv, &p, sizeof p, tg_vk_groups((uint64_t)p.rows * p.c, 256));
}

tg_status tg_vk_conv1d_causal_bwd(const tg_kernel_args *a) {
  conv_args p;
  tg_status st = conv_prepare(a, &p);
  float *dx = a->in_grad[0], *dw = a->in_grad[1], *dbias = p.flags & HAS_BIAS ? a->in_grad[2] : NULL;
  int dev = a->out->device.index;
  if (st != TG_OK || (uint64_t)p.rows * p.c == 0) return st;
  if (p.rows > 256u * 65535u && (dw || dbias)) /* a lane's row loop would pass lavapipe's 65,535 iterations */
    return tg_error(TG_ERR_UNSUPPORTED, "%s: conv1d_causal's weight gradient over %u rows, more than a Vulkan "
                    "workgroup sums", a->node_name, p.rows);
  p.dy = tg_vk_addr(a->out_grad), p.dx = tg_vk_addr(dx), p.dw = tg_vk_addr(dw), p.dbias = tg_vk_addr(dbias);
  if (dx) {
    p.mode = 1;
    if ((st = tg_vk_dispatch(dev, TG_VK_K_conv, &p, sizeof p, tg_vk_groups((uint64_t)p.rows * p.c, 256))) != TG_OK)
      return st;
  }
  if (!dw && !dbias) return TG_OK;
  p.mode = 2;
  p.flags |= (dw ? WANT_DW : 0) | (dbias ? WANT_DBIAS : 0);
  return tg_vk_dispatch(dev, TG_VK_K_conv, &p, sizeof p, tg_vk_groups((uint64_t)p.c * (p.k + 1), 1));
}
