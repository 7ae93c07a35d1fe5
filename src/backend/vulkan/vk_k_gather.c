/* Vulkan kernels of gather_rows (shaders/gather.comp): a gather forward, a deterministic scatter-add backward whose
 * index loop is split over dispatches (lavapipe ends a loop at 65,535 iterations); a bad index is a fault, raised here
 * with the CPU's message. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_fault.h"
#include "backend/vulkan/vk_kernels.h"
#include "ops/index_errors.h"

/* Indices one backward dispatch walks. */
#define GATHER_CHUNK 32768u
/* Invocations the backward aims for: buckets of rows times columns. */
#define GATHER_INVOCATIONS 65536

typedef struct gather_args {
  uint64_t w, idx, out, gy, gw, fault;
  uint32_t V, d, dt, n, mode, wide, op, nb, i0, i1;
} gather_args;

/* The push constants common to both directions, after checking the sizes fit the shader's 32-bit indices. */
static tg_status gather_prepare(const tg_kernel_args *a, gather_args *p) {
  const tg_tensor *table = a->in[0], *idx = a->in[1];
  int64_t V = table->shape[0], D = table->shape[1], N = tg_numel(idx), Dt = D > 0 ? D : 1;
  tg_status st = tg_vk_fits(a->node_name, V * D);
  if (st == TG_OK) st = tg_vk_fits(a->node_name, N * Dt);
  if (st == TG_OK) st = tg_vk_fits(a->node_name, 2 * N);
  void *fault = NULL;
  if (st == TG_OK) st = tg_vk_fault_slot(a->out->device.index, &fault);
  *p = (gather_args){.w = tg_vk_addr(table->data), .idx = tg_vk_addr(idx->data), .fault = tg_vk_addr(fault),
                     .V = (uint32_t)V, .d = (uint32_t)D, .dt = (uint32_t)Dt, .n = (uint32_t)N,
                     .wide = idx->dtype == TG_I64, .op = TG_OP_GATHER_ROWS};
  return st;
}

tg_status tg_vk_gather_rows_fwd(const tg_kernel_args *a) {
  gather_args p;
  tg_status st = gather_prepare(a, &p);
  if (st != TG_OK || p.n == 0) return st;
  p.out = tg_vk_addr(a->out->data);
  st = tg_vk_dispatch(a->out->device.index, TG_VK_K_gather, &p, sizeof p, tg_vk_groups((uint64_t)p.n * p.dt, 256));
  return st != TG_OK ? st : tg_vk_fault_raise_as(a, tg_gather_bad_index);
}

tg_status tg_vk_gather_rows_bwd(const tg_kernel_args *a) {
  if (!a->in_grad[0]) return TG_OK;
  gather_args p;
  tg_status st = gather_prepare(a, &p);
  if (st != TG_OK || p.n == 0) return st;
  p.gy = tg_vk_addr(a->out_grad), p.gw = tg_vk_addr(a->in_grad[0]), p.mode = 1;
  p.nb = 1; /* buckets: a power of two, about GATHER_INVOCATIONS / dt, no more than V needs */
  while (p.nb < p.V && (uint64_t)p.nb * p.dt < GATHER_INVOCATIONS) p.nb *= 2;
  for (uint32_t i0 = 0; i0 < p.n && st == TG_OK; i0 += GATHER_CHUNK) {
    p.i0 = i0, p.i1 = p.n - i0 < GATHER_CHUNK ? p.n : i0 + GATHER_CHUNK;
    st = tg_vk_dispatch(a->out->device.index, TG_VK_K_gather, &p, sizeof p,
                        tg_vk_groups((uint64_t)p.nb * p.dt, 256));
  }
  return st != TG_OK ? st : tg_vk_fault_raise_as(a, tg_gather_bad_index);
}
