/* Vulkan kernels of ssd_scan, Mamba-2's scan (shaders/ssd_fwd.comp, ssd_bwd.comp, ssd_sum.comp): ops/ssd_ref.h's
 * chunked forward in four dispatches and its exact backward (a workgroup per (batch, head) pair, then the sums of the
 * pairs' partials), in the workspace layouts CUDA uses. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "ops/ssd_ref.h"

/* The dims every ssd shader takes, in its push constants' order. */
typedef struct ssd_dims32 {
  uint32_t B, L, H, P, G, N, Q, K;
} ssd_dims32;

typedef struct ssd_fwd_args {
  uint64_t x, dt, A, Bm, Cm, D, y, ws;
  ssd_dims32 d;
  uint32_t mode, flags;
} ssd_fwd_args;

typedef struct ssd_bwd_args {
  uint64_t x, dt, A, Bm, Cm, D, dy, dx, ddt, ws;
  ssd_dims32 d;
  uint32_t flags;
} ssd_bwd_args;

typedef struct ssd_sum_args {
  uint64_t ws, dB, dC, dA, dD;
  ssd_dims32 d;
  uint32_t mode, flags;
} ssd_sum_args;

_Static_assert(sizeof(ssd_bwd_args) <= TG_VK_PUSH_MAX, "ssd_bwd_args exceeds the push constants");

/* The node's dims, checked against what the shaders index with 32-bit words and loop over (lavapipe ends a loop at
 * 65,535 iterations: the backward walks L steps in one invocation). ws_floats: the workspace the pass needs. */
static tg_status ssd_dims_checked(const tg_kernel_args *a, const tg_ssd_dims *d, size_t ws_floats, ssd_dims32 *out) {
  tg_status st = tg_vk_fits(a->node_name, (int64_t)ws_floats);
  if (st == TG_OK) st = tg_vk_fits(a->node_name, d->B * d->L * d->H * (d->P > d->N ? d->P : d->N));
  if (st == TG_OK && d->L > 65535)
    st = tg_error(TG_ERR_UNSUPPORTED, "%s: ssd_scan on Vulkan runs sequences of at most 65,535 steps, not %lld",
                  a->node_name, (long long)d->L);
  *out = (ssd_dims32){(uint32_t)d->B, (uint32_t)d->L, (uint32_t)d->H, (uint32_t)d->P,
                      (uint32_t)d->G, (uint32_t)d->N, (uint32_t)d->Q, (uint32_t)d->K};
  return st;
}

/* The pass's workspace of `floats` (tg_ssd_workspace sizes the plan's with these layouts) as a shader's address. */
static tg_status ssd_ws(const tg_kernel_args *a, size_t floats, uint64_t *out) {
  void *ws = NULL;
  tg_status st = tg_vk_workspace(a, sizeof(float) * floats, &ws);
  *out = tg_vk_addr(ws);
  return st;
}

/* Inputs: x, dt, A, Bm, Cm, then D where attr.i[1]. */
static const float *ssd_in(const tg_kernel_args *a, int k) { return (const float *)a->in[k]->data; }

tg_status tg_vk_ssd_scan_fwd(const tg_kernel_args *a) {
  const tg_ssd_dims d = tg_ssd_dims_of(a);
  const size_t total = tg_ssd_fwd_layout_of(&d).total;
  ssd_fwd_args p = {.x = tg_vk_addr(ssd_in(a, 0)), .dt = tg_vk_addr(ssd_in(a, 1)), .A = tg_vk_addr(ssd_in(a, 2)),
                    .Bm = tg_vk_addr(ssd_in(a, 3)), .Cm = tg_vk_addr(ssd_in(a, 4)),
                    .D = a->attr->i[1] ? tg_vk_addr(ssd_in(a, 5)) : 0, .y = tg_vk_addr(a->out->data),
                    .flags = a->attr->i[1] ? 1u : 0u};
  int dev = a->out->device.index;
  tg_status st = ssd_dims_checked(a, &d, total, &p.d);
  if (st != TG_OK || d.B * d.L * d.H * d.P == 0 || (st = ssd_ws(a, total, &p.ws)) != TG_OK) return st;
  const uint64_t pairs = (uint64_t)(d.B * d.H), np = (uint64_t)(d.N * d.P);
  const uint64_t items[4] = {pairs * (uint64_t)d.nc, pairs * (uint64_t)d.nc * np, pairs * np, 0};
  for (uint32_t mode = 0; mode < 3 && st == TG_OK; mode++) {
    p.mode = mode;
    st = tg_vk_dispatch(dev, TG_VK_K_ssd_fwd, &p, sizeof p, tg_vk_groups(items[mode], 256));
  }
  p.mode = 3; /* a workgroup per output row */
  return st != TG_OK ? st : tg_vk_dispatch(dev, TG_VK_K_ssd_fwd, &p, sizeof p, tg_vk_groups(pairs * (uint64_t)d.L, 1));
}

tg_status tg_vk_ssd_scan_bwd(const tg_kernel_args *a) {
  const tg_ssd_dims d = tg_ssd_dims_of(a);
  float *dx = a->in_grad[0], *ddt = a->in_grad[1], *dA = a->in_grad[2]; /* like x, dt, A */
  float *dB = a->in_grad[3], *dC = a->in_grad[4];                        /* [B, L, G, N] each */
  float *dD = a->attr->i[1] ? a->in_grad[5] : NULL;                      /* [H] */
  if (!dx && !ddt && !dA && !dB && !dC && !dD) return TG_OK;
  const size_t total = tg_ssd_bwd_layout_of(&d).total;
  ssd_bwd_args p = {.x = tg_vk_addr(ssd_in(a, 0)), .dt = tg_vk_addr(ssd_in(a, 1)), .A = tg_vk_addr(ssd_in(a, 2)),
                    .Bm = tg_vk_addr(ssd_in(a, 3)), .Cm = tg_vk_addr(ssd_in(a, 4)),
                    .D = a->attr->i[1] ? tg_vk_addr(ssd_in(a, 5)) : 0, .dy = tg_vk_addr(a->out_grad),
                    .dx = tg_vk_addr(dx), .ddt = tg_vk_addr(ddt)};
  p.flags = (a->attr->i[1] ? 1u : 0u) | (dx ? 2u : 0u) | (ddt ? 4u : 0u) | (dB ? 8u : 0u) | (dC ? 16u : 0u);
  int dev = a->out->device.index;
  tg_status st = ssd_dims_checked(a, &d, total, &p.d);
  if (st != TG_OK || d.B * d.H == 0 || (st = ssd_ws(a, total, &p.ws)) != TG_OK) return st;
  if ((st = tg_vk_dispatch(dev, TG_VK_K_ssd_bwd, &p, sizeof p, tg_vk_groups((uint64_t)(d.B * d.H), 1))) != TG_OK)
    return st;
  ssd_sum_args s = {.ws = p.ws, .dB = tg_vk_addr(dB), .dC = tg_vk_addr(dC), .dA = tg_vk_addr(dA),
                    .dD = tg_vk_addr(dD), .d = p.d};
  if (dB || dC) {
    s.mode = 0, s.flags = (dB ? 1u : 0u) | (dC ? 2u : 0u);
    st = tg_vk_dispatch(dev, TG_VK_K_ssd_sum, &s, sizeof s, tg_vk_groups((uint64_t)(d.B * d.L * d.G * d.N), 256));
  }
  if (st == TG_OK && (dA || dD)) {
    s.mode = 1, s.flags = (dA ? 4u : 0u) | (dD ? 8u : 0u);
    st = tg_vk_dispatch(dev, TG_VK_K_ssd_sum, &s, sizeof s, tg_vk_groups((uint64_t)d.H, 256));
  }
  return st;
}
