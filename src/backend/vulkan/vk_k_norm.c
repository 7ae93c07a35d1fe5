/* Vulkan kernels of layernorm, rmsnorm and gate_add_norm, forward and backward (shaders/norm.comp): a workgroup per
 * row, then, for the affine's gradients, a workgroup per (slot, column) over the rows' statistics kept in the device's
 * scratch buffer. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "ops/gate_norm_args.h"
#include "ops/norm_args.h"

enum {
  HAS_GAMMA = 1, HAS_BETA = 2, WANT_DX = 4, WANT_DGAMMA = 8, WANT_DBETA = 16, WRITE_STATS = 32, RMS = 64, GATED = 128,
  WANT_DA = 256
};

/* The shader's push constants (shaders/norm.comp). */
typedef struct norm_args {
  uint64_t x, a, gamma, beta, y, dy, dx, da, dgamma, dbeta, stats;
  uint32_t rows, d, slots, mode, flags;
  float eps;
} norm_args;

/* One call of any of the three, as the shader sees it: x [rows, d] (gate_add_norm: the skip), a [rows, 2d] or NULL,
 * gamma and beta [slots, d] or NULL, and the gradients wanted (NULL: not). */
typedef struct norm_call {
  int64_t rows, d, slots;
  const float *x, *a, *gamma, *beta, *dy;
  float *y, *dx, *da, *dgamma, *dbeta;
  unsigned kind; /* 0, RMS or GATED */
  double eps;
} norm_call;

static tg_status norm_fwd(const tg_kernel_args *ka, const norm_call *c) {
  tg_status st = tg_vk_fits(ka->node_name, (c->a ? 2 : 1) * c->rows * c->d);
  if (st != TG_OK || c->rows == 0 || c->d == 0) return st;
  norm_args p = {.x = tg_vk_addr(c->x), .a = tg_vk_addr(c->a), .gamma = tg_vk_addr(c->gamma),
                 .beta = tg_vk_addr(c->beta), .y = tg_vk_addr(c->y), .rows = (uint32_t)c->rows, .d = (uint32_t)c->d,
                 .slots = (uint32_t)c->slots, .eps = (float)c->eps,
                 .flags = c->kind | (c->gamma ? HAS_GAMMA : 0) | (c->beta ? HAS_BETA : 0)};
  return tg_vk_dispatch(ka->out->device.index, TG_VK_K_norm, &p, sizeof p, tg_vk_groups((uint64_t)c->rows, 1));
}

static tg_status norm_bwd(const tg_kernel_args *ka, const norm_call *c) {
  tg_status st = tg_vk_fits(ka->node_name, (c->a ? 2 : 1) * c->rows * c->d);
  int cols = c->dgamma || c->dbeta, dev = ka->out->device.index;
  if (st != TG_OK || c->rows == 0 || c->d == 0 || (!c->dx && !c->da && !cols)) return st;
  void *stats = NULL; /* [rows, 2]: each row's mean and rstd, for the column sums */
  if (cols && (st = tg_vk_scratch(dev, sizeof(float) * 2 * (size_t)c->rows, &stats)) != TG_OK) return st;
  norm_args p = {.x = tg_vk_addr(c->x), .a = tg_vk_addr(c->a), .gamma = tg_vk_addr(c->gamma),
                 .beta = tg_vk_addr(c->beta), .dy = tg_vk_addr(c->dy), .dx = tg_vk_addr(c->dx),
                 .da = tg_vk_addr(c->da), .dgamma = tg_vk_addr(c->dgamma), .dbeta = tg_vk_addr(c->dbeta),
                 .stats = tg_vk_addr(stats), .rows = (uint32_t)c->rows, .d = (uint32_t)c->d,
                 .slots = (uint32_t)c->slots, .mode = 1, .eps = (float)c->eps};
  p.flags = c->kind | (c->gamma ? HAS_GAMMA : 0) | (c->beta ? HAS_BETA : 0) | (c->dx ? WANT_DX : 0) |
            (c->da ? WANT_DA : 0) | (c->dgamma ? WANT_DGAMMA : 0) | (c->dbeta ? WANT_DBETA : 0) |
            (cols ? WRITE_STATS : 0);
  if ((st = tg_vk_dispatch(dev, TG_VK_K_norm, &p, sizeof p, tg_vk_groups((uint64_t)c->rows, 1))) != TG_OK || !cols)
    return st;
  p.mode = 2;
  return tg_vk_dispatch(dev, TG_VK_K_norm, &p, sizeof p, tg_vk_groups((uint64_t)(c->slots * c->d), 1));
}

static norm_call ln_call(const tg_kernel_args *a) {
  tg_ln_args l = tg_ln_args_of(a);
  return (norm_call){.rows = l.rows, .d = l.D, .slots = 1, .x = l.x, .gamma = l.gamma, .beta = l.beta, .dy = l.dy,
                     .y = l.y, .dx = l.dx, .dgamma = l.dgamma, .dbeta = l.dbeta, .eps = l.eps};
}

static norm_call rms_call(const tg_kernel_args *a) {
  tg_rms_args r = tg_rms_args_of(a);
  return (norm_call){.rows = r.rows, .d = r.D, .slots = 1, .x = r.x, .gamma = r.w, .dy = r.dy, .y = r.y, .dx = r.dx,
                     .dgamma = r.dw, .kind = RMS, .eps = r.eps};
}

static norm_call gan_call(const tg_kernel_args *a) {
  tg_gan_args g = tg_gan_args_of(a);
  return (norm_call){.rows = g.rows, .d = g.D, .slots = g.S, .x = g.skip, .a = g.a, .gamma = g.gamma,
                     .beta = g.beta, .dy = g.dy, .y = g.y, .dx = g.dskip, .da = g.da, .dgamma = g.dgamma,
                     .dbeta = g.dbeta, .kind = GATED, .eps = g.eps};
}

tg_status tg_vk_layernorm_fwd(const tg_kernel_args *a) { norm_call c = ln_call(a); return norm_fwd(a, &c); }
tg_status tg_vk_layernorm_bwd(const tg_kernel_args *a) { norm_call c = ln_call(a); return norm_bwd(a, &c); }
tg_status tg_vk_rmsnorm_fwd(const tg_kernel_args *a) { norm_call c = rms_call(a); return norm_fwd(a, &c); }
tg_status tg_vk_rmsnorm_bwd(const tg_kernel_args *a) { norm_call c = rms_call(a); return norm_bwd(a, &c); }
tg_status tg_vk_gate_add_norm_fwd(const tg_kernel_args *a) { norm_call c = gan_call(a); return norm_fwd(a, &c); }
tg_status tg_vk_gate_add_norm_bwd(const tg_kernel_args *a) { norm_call c = gan_call(a); return norm_bwd(a, &c); }
