/* Vulkan kernels of softmax_cross_entropy (shaders/xent.comp): each row's loss into the device's scratch, then their
 * mean as the mean op takes it; the backward a workgroup per row. A label outside the classes is a fault, raised here
 * with the CPU's message. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_fault.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "ops/index_errors.h"

typedef struct xent_args {
  uint64_t x, labels, t, gy, dx, fault;
  uint32_t rows, c, mode, wide, op;
  float scale;
} xent_args;

static tg_status xent_prepare(const tg_kernel_args *a, xent_args *p) {
  int64_t N = a->in[0]->shape[0], C = a->in[0]->shape[1];
  tg_status st = tg_vk_fits(a->node_name, N * C);
  if (st == TG_OK) st = tg_vk_fits(a->node_name, 2 * N);
  void *fault = NULL;
  if (st == TG_OK) st = tg_vk_fault_slot(a->out->device.index, &fault);
  *p = (xent_args){.x = tg_vk_addr(a->in[0]->data), .labels = tg_vk_addr(a->in[1]->data), .fault = tg_vk_addr(fault),
                   .rows = (uint32_t)N, .c = (uint32_t)C, .wide = a->in[1]->dtype == TG_I64,
                   .op = TG_OP_SOFTMAX_XENT, .scale = N > 0 ? (float)(1.0 / (double)N) : 0.0f};
  return st;
}

tg_status tg_vk_softmax_xent_fwd(const tg_kernel_args *a) {
  xent_args p;
  tg_status st = xent_prepare(a, &p);
  int dev = a->out->device.index;
  void *terms = NULL; /* [rows]: each row's loss */
  if (st == TG_OK && p.rows > 0) { /* no classes: every label is outside them */
    st = tg_vk_scratch(dev, sizeof(float) * p.rows, &terms);
    p.t = tg_vk_addr(terms);
    if (st == TG_OK) st = tg_vk_dispatch(dev, TG_VK_K_xent, &p, sizeof p, tg_vk_groups(p.rows, 1));
    if (st == TG_OK) st = tg_vk_fault_raise_as(a, tg_xent_bad_label);
  }
  return st != TG_OK ? st : tg_vk_mean_of(dev, a->node_name, terms, terms ? p.rows : 0, a->out->data);
}

tg_status tg_vk_softmax_xent_bwd(const tg_kernel_args *a) {
  if (!a->in_grad[0]) return TG_OK;
  xent_args p;
  tg_status st = xent_prepare(a, &p);
  if (st != TG_OK || p.rows == 0) return st;
  p.gy = tg_vk_addr(a->out_grad), p.dx = tg_vk_addr(a->in_grad[0]), p.mode = 1;
  st = tg_vk_dispatch(a->out->device.index, TG_VK_K_xent, &p, sizeof p, tg_vk_groups(p.rows, 1));
  return st != TG_OK ? st : tg_vk_fault_raise_as(a, tg_xent_bad_label);
}
