/* The Vulkan backend's optimizer entries (shaders/optim.comp): the sum of squares, the whole update on the device
 * (its scalars included, so a recorded step replays it), and the dropout run counter. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_memory.h"
#include "backend/vulkan/vk_optim.h"

enum { MODE_PARTIALS, MODE_SCALARS, MODE_UPDATE, MODE_COUNTER };
#define PARTS 256 /* workgroups of the partial sums: a fixed summation order */

typedef struct optim_args {
  uint64_t values, grads, m, v, bf16, sc, part;
  uint32_t n, mode, kind, flags, sched;
  float lr, momentum, beta1, beta2, eps, wd, clip;
  uint32_t warmup, total;
  float final_frac;
  uint32_t bf16_off;
} optim_args;

_Static_assert(sizeof(optim_args) <= TG_VK_PUSH_MAX, "optim_args exceeds the push constants");
/* the shader's word offsets into tg_optim_scalars */
_Static_assert(offsetof(tg_optim_scalars, step) == 0 && offsetof(tg_optim_scalars, sumsq) == 8 &&
                   offsetof(tg_optim_scalars, norm) == 16 && offsetof(tg_optim_scalars, lr) == 20 &&
                   offsetof(tg_optim_scalars, gscale) == 24 && offsetof(tg_optim_scalars, bc1) == 32 &&
                   offsetof(tg_optim_scalars, bc2) == 40 && offsetof(tg_optim_scalars, skipped) == 48,
               "tg_optim_scalars' layout is not the one shaders/optim.comp writes");

/* Steps counted in 32 bits by the schedule: the shader's warm-up and total. */
static uint32_t steps32(int64_t s) { return s < 0 ? 0 : s > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)s; }

/* The partial sums of squares of g [n] into part [PARTS + 2] (the device's scratch). */
static tg_status ssq_partials(int dev, const float *g, size_t n, optim_args *p) {
  void *part = NULL;
  tg_status st = tg_vk_fits("optimizer", (int64_t)n);
  if (st == TG_OK) st = tg_vk_scratch(dev, sizeof(float) * (PARTS + 2), &part);
  if (st != TG_OK) return st;
  p->grads = tg_vk_addr(g), p->part = tg_vk_addr(part), p->n = (uint32_t)n, p->mode = MODE_PARTIALS;
  return tg_vk_dispatch(dev, TG_VK_K_optim, p, sizeof *p, PARTS);
}

tg_status tg_vk_sum_squares(tg_device d, const float *g, size_t n, double *out) {
  optim_args p = {0};
  tg_status st = ssq_partials(d.index, g, n, &p);
  float part[PARTS];
  if (st == TG_OK) st = tg_vk_to_host(d.index, part, (const void *)(uintptr_t)p.part, sizeof part);
  if (st != TG_OK) return st;
  double total = 0.0;
  for (int i = 0; i < PARTS; i++) total += part[i];
  *out = total;
  return TG_OK;
}

tg_status tg_vk_optim_update(tg_device d, const tg_optim_update *u) {
  int dev = d.index;
  optim_args p = {.sc = tg_vk_addr(u->scalars), .kind = (uint32_t)u->kind, .sched = (uint32_t)u->schedule.kind,
                  .lr = u->lr, .momentum = u->momentum, .beta1 = u->beta1, .beta2 = u->beta2, .eps = u->eps,
                  .clip = u->clip_norm, .warmup = steps32(u->schedule.warmup_steps),
                  .total = steps32(u->schedule.total_steps), .final_frac = u->schedule.final_frac};
  tg_status st = ssq_partials(dev, u->grads, u->numel, &p);
  if (st != TG_OK) return st;
  p.mode = MODE_SCALARS;
  if ((st = tg_vk_dispatch(dev, TG_VK_K_optim, &p, sizeof p, 1)) != TG_OK) return st;
  p.mode = MODE_UPDATE;
  for (int i = 0; i < u->n_seg && st == TG_OK; i++) {
    const tg_optim_seg *s = &u->segs[i];
    if (s->numel == 0) continue;
    p.values = tg_vk_addr(u->values + s->offset), p.grads = tg_vk_addr(u->grads + s->offset);
    p.m = u->m ? tg_vk_addr(u->m + s->offset) : 0, p.v = u->v ? tg_vk_addr(u->v + s->offset) : 0;
    p.bf16 = tg_vk_addr(u->values_bf16), p.bf16_off = (uint32_t)s->offset, p.flags = u->values_bf16 ? 1u : 0u;
    p.n = (uint32_t)s->numel, p.wd = s->wd;
    if (u->kind == TG_SGD && u->momentum != 0.0f && !u->m)
      return tg_error(TG_ERR_INVALID, "optimizer: momentum %g needs a momentum buffer", (double)u->momentum);
    if (u->kind == TG_SGD && u->momentum == 0.0f) p.momentum = 0.0f;
    st = tg_vk_dispatch(dev, TG_VK_K_optim, &p, sizeof p, tg_vk_groups(s->numel, 256));
  }
  return st;
}

tg_status tg_vk_advance_counter(tg_device d, uint64_t *c) {
  optim_args p = {.sc = tg_vk_addr(c), .mode = MODE_COUNTER};
  return tg_vk_dispatch(d.index, TG_VK_K_optim, &p, sizeof p, 1);
}
