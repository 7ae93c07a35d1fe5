/* Vulkan kernels of ppo_loss (shaders/ppo.comp), in float: the rollout vectors copied side by side into the device's
 * scratch (so the shader takes one address for them), the advantages' statistics, the per-sample terms and their sums
 * forward; the per-sample gradients and the log_std sums backward. A bad categorical action is a fault, raised here in
 * the CPU's words. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_fault.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "ops/index_errors.h"

enum { CLIP_VLOSS = 1, NORM_ADV = 2, GAUSS = 4, WIDE = 8, WANT_DP = 16, WANT_DV = 32, WANT_DLS = 64 };
enum { MODE_ADV, MODE_TERMS, MODE_SUMS, MODE_GRAD, MODE_DLS };

typedef struct ppo_args {
  uint64_t pol, value, actions, log_std, og, dp, dv, dls, work, fault;
  uint32_t b, a, mode, flags, op;
  float clip, vf, ent;
} ppo_args;

_Static_assert(sizeof(ppo_args) <= TG_VK_PUSH_MAX, "ppo_args exceeds the push constants");

/* Inputs: 0 pol [B, A], 1 value, 2 actions, 3 old_logp, 4 adv, 5 returns, 6 old_value [B] each, 7 log_std [A]
 * (Gaussian). Fills the work buffer's rollout part and the advantages' statistics. */
static tg_status ppo_prepare(const tg_kernel_args *a, ppo_args *p) {
  int64_t B = a->in[0]->shape[0], A = a->in[0]->shape[1], m = A > 5 ? A : 5;
  int dev = a->out->device.index, gauss = a->attr->i[2] != 0;
  tg_status st = tg_vk_fits(a->node_name, 4 * B + 2 + B * m);
  if (st == TG_OK) st = tg_vk_fits(a->node_name, 2 * B * A);
  void *work = NULL, *fault = NULL;
  if (st == TG_OK) st = tg_vk_scratch(dev, sizeof(float) * (size_t)(4 * B + 2 + B * m), &work);
  if (st == TG_OK) st = tg_vk_fault_slot(dev, &fault);
  const int rollout[4] = {3, 4, 5, 6}; /* old_logp, adv, returns, old_value */
  for (int k = 0; k < 4 && st == TG_OK && B > 0; k++)
    st = tg_vk_copy(dev, (float *)work + k * B, a->in[rollout[k]]->data, sizeof(float) * (size_t)B);
  *p = (ppo_args){.pol = tg_vk_addr(a->in[0]->data), .value = tg_vk_addr(a->in[1]->data),
                  .actions = tg_vk_addr(a->in[2]->data), .log_std = gauss ? tg_vk_addr(a->in[7]->data) : 0,
                  .work = tg_vk_addr(work), .fault = tg_vk_addr(fault), .b = (uint32_t)B, .a = (uint32_t)A,
                  .mode = MODE_ADV, .op = TG_OP_PPO_LOSS, .clip = a->attr->f[0], .vf = a->attr->f[1],
                  .ent = a->attr->f[2]};
  p->flags = (a->attr->i[0] ? CLIP_VLOSS : 0) | (a->attr->i[1] ? NORM_ADV : 0) | (gauss ? GAUSS : 0) |
             (!gauss && a->in[2]->dtype == TG_I64 ? WIDE : 0);
  if (st == TG_OK && B > 0) st = tg_vk_dispatch(dev, TG_VK_K_ppo, p, sizeof *p, 1);
  return st;
}

tg_status tg_vk_ppo_loss_fwd(const tg_kernel_args *a) {
  ppo_args p;
  tg_status st = ppo_prepare(a, &p);
  int dev = a->out->device.index;
  if (st != TG_OK || p.b == 0) return st;
  p.og = tg_vk_addr(a->out->data), p.mode = MODE_TERMS;
  if ((st = tg_vk_dispatch(dev, TG_VK_K_ppo, &p, sizeof p, tg_vk_groups(p.b, 256))) != TG_OK) return st;
  p.mode = MODE_SUMS;
  if ((st = tg_vk_dispatch(dev, TG_VK_K_ppo, &p, sizeof p, 1)) != TG_OK) return st;
  return tg_vk_fault_raise_as(a, tg_ppo_bad_action);
}

tg_status tg_vk_ppo_loss_bwd(const tg_kernel_args *a) {
  float *dp = a->in_grad[0], *dv = a->in_grad[1], *dls = a->n_in > 7 ? a->in_grad[7] : NULL;
  if (!dp && !dv && !dls) return TG_OK;
  ppo_args p;
  tg_status st = ppo_prepare(a, &p);
  int dev = a->out->device.index;
  if (st != TG_OK || p.b == 0) return st;
  p.og = tg_vk_addr(a->out_grad), p.dp = tg_vk_addr(dp), p.dv = tg_vk_addr(dv), p.dls = tg_vk_addr(dls);
  p.flags |= (dp ? WANT_DP : 0) | (dv ? WANT_DV : 0) | (dls ? WANT_DLS : 0);
  p.mode = MODE_GRAD;
  if ((st = tg_vk_dispatch(dev, TG_VK_K_ppo, &p, sizeof p, tg_vk_groups(p.b, 256))) != TG_OK) return st;
  if (dls) {
    p.mode = MODE_DLS;
    if ((st = tg_vk_dispatch(dev, TG_VK_K_ppo, &p, sizeof p, tg_vk_groups(p.a, 1))) != TG_OK) return st;
  }
  return tg_vk_fault_raise_as(a, tg_ppo_bad_action);
}
