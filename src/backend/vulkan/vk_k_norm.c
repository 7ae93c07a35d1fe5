/* Vulkan kernels of layernorm, forward and backward (shaders/layernorm.comp): a workgroup per row, then, for gamma's
 * and beta's gradients, a workgroup per column over the rows' statistics kept in the device's scratch buffer. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "ops/norm_args.h"

enum { HAS_GAMMA = 1, HAS_BETA = 2, WANT_DX = 4, WANT_DGAMMA = 8, WANT_DBETA = 16, WRITE_STATS = 32 };

typedef struct ln_args {
  uint64_t x, gamma, beta, y, dy, dx, dgamma, dbeta, stats;
  uint32_t rows, d, mode, flags;
  float eps;
} ln_args;

static tg_status ln_prepare(const tg_kernel_args *a, const tg_ln_args *l, ln_args *p) {
  tg_status st = tg_vk_fits(a->node_name, l->rows * l->D);
  if (st != TG_OK) return st;
  *p = (ln_args){.x = tg_vk_addr(l->x), .gamma = tg_vk_addr(l->gamma), .beta = tg_vk_addr(l->beta),
                 .rows = (uint32_t)l->rows, .d = (uint32_t)l->D, .eps = (float)l->eps,
                 .flags = (l->gamma ? HAS_GAMMA : 0) | (l->beta ? HAS_BETA : 0)};
  return TG_OK;
}

tg_status tg_vk_layernorm_fwd(const tg_kernel_args *a) {
  tg_ln_args l = tg_ln_args_of(a);
  ln_args p;
  tg_status st = ln_prepare(a, &l, &p);
  if (st != TG_OK || l.rows == 0 || l.D == 0) return st;
  p.y = tg_vk_addr(l.y);
  return tg_vk_dispatch(a->out->device.index, TG_VK_K_layernorm, &p, sizeof p, tg_vk_groups((uint64_t)l.rows, 1));
}

tg_status tg_vk_layernorm_bwd(const tg_kernel_args *a) {
  tg_ln_args l = tg_ln_args_of(a);
  ln_args p;
  tg_status st = ln_prepare(a, &l, &p);
  int cols = l.dgamma || l.dbeta, dev = a->out->device.index;
  if (st != TG_OK || l.rows == 0 || l.D == 0 || (!l.dx && !cols)) return st;
  void *stats = NULL; /* [rows, 2]: each row's mean and rstd, for the column sums */
  if (cols && (st = tg_vk_scratch(dev, sizeof(float) * 2 * (size_t)l.rows, &stats)) != TG_OK) return st;
  p.dy = tg_vk_addr(l.dy), p.dx = tg_vk_addr(l.dx), p.dgamma = tg_vk_addr(l.dgamma), p.dbeta = tg_vk_addr(l.dbeta);
  p.stats = tg_vk_addr(stats);
  p.flags |= (l.dx ? WANT_DX : 0) | (l.dgamma ? WANT_DGAMMA : 0) | (l.dbeta ? WANT_DBETA : 0) | (cols ? WRITE_STATS : 0);
  p.mode = 1;
  if ((st = tg_vk_dispatch(dev, TG_VK_K_layernorm, &p, sizeof p, tg_vk_groups((uint64_t)l.rows, 1))) != TG_OK || !cols)
    return st;
  p.mode = 2;
  return tg_vk_dispatch(dev, TG_VK_K_layernorm, &p, sizeof p, tg_vk_groups((uint64_t)l.D, 1));
}
