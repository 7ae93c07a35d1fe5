/* CPU kernels of ppo_loss: PPO's clipped loss, its parts and diagnostics, and its gradients (ppo_row.h). */
#include <math.h>
#include "backend/cpu/cpu_kernels.h"
#include "ops/index_errors.h"
#include "ops/ppo_row.h"

/* Inputs: 0 policy [B, A] (categorical: logits; Gaussian: means), 1 value [B] or [B, 1], 2 actions
 * (categorical: [B] i32/i64; Gaussian: [B, A] f32), 3 old_logp [B], 4 adv [B], 5 returns [B],
 * 6 old_value [B], 7 log_std [A] (Gaussian only). attr: f[0] clip, f[1] vf_coef, f[2] ent_coef,
 * i[0] clip_vloss, i[1] norm_adv, i[2] Gaussian. */

typedef struct ppo_view {
  const float *pol, *value, *old_logp, *adv, *ret, *old_value; /* [B, A], then [B] each */
  const float *log_std;                                        /* [A] (Gaussian) or NULL */
  const tg_tensor *actions;                                    /* [B] i32/i64 or [B, A] f32 */
  int64_t B, A;
  int gauss;
  tg_ppo_coef c;
  double mean, sd; /* advantage normalisation: (adv - mean) / sd (0 and 1 when off) */
} ppo_view;

static int64_t ppo_action(const ppo_view *v, int64_t i) {
  return v->actions->dtype == TG_I32 ? ((const int32_t *)v->actions->data)[i]
                                     : ((const int64_t *)v->actions->data)[i];
}

/* Categorical: every action in [0, A), or an error naming the node, the row and the value. */
static tg_status ppo_check_actions(const tg_kernel_args *a, const ppo_view *v) {
  for (int64_t i = 0; !v->gauss && i < v->B; i++) {
    int64_t act = ppo_action(v, i);
    if (act < 0 || act >= v->A) return tg_ppo_bad_action(a, i, act);
  }
  return TG_OK;
}

/* Mean and unbiased std (+ 1e-8) of the advantages, in double, in row order. */
static void ppo_adv_stats(ppo_view *v, int norm) {
  v->mean = 0.0;
  v->sd = 1.0;
  if (!norm) return;
  double s = 0.0, q = 0.0;
  for (int64_t i = 0; i < v->B; i++) s += v->adv[i];
  v->mean = s / (double)v->B;
  for (int64_t i = 0; i < v->B; i++) {
    double d = (double)v->adv[i] - v->mean;
    q += d * d;
  }
  v->sd = sqrt(q / (double)(v->B - 1)) + 1e-8;
}

static ppo_view ppo_view_of(const tg_kernel_args *a) {
  ppo_view v;
  v.pol = (const float *)a->in[0]->data;
  v.value = (const float *)a->in[1]->data;
  v.actions = a->in[2];
  v.old_logp = (const float *)a->in[3]->data;
  v.adv = (const float *)a->in[4]->data;
  v.ret = (const float *)a->in[5]->data;
  v.old_value = (const float *)a->in[6]->data;
  v.gauss = a->attr->i[2] != 0;
  v.log_std = v.gauss ? (const float *)a->in[7]->data : NULL;
  v.B = a->in[0]->shape[0];
  v.A = a->in[0]->shape[1];
  v.c.clip = a->attr->f[0];
  v.c.vf = a->attr->f[1];
  v.c.ent = a->attr->f[2];
  v.c.clip_vloss = (int)a->attr->i[0];
  ppo_adv_stats(&v, (int)a->attr->i[1]);
  return v;
}

static tg_ppo_sample ppo_sample(const ppo_view *v, int64_t i) {
  tg_ppo_sample s = {v->old_logp[i], tg_ppo_norm_adv(v->adv[i], v->mean, v->sd), v->ret[i], v->value[i],
                     v->old_value[i]};
  return s;
}

/* Sample i's policy part (log pi(action), entropy). */
static tg_ppo_pol ppo_pol(const ppo_view *v, int64_t i) {
  if (v->gauss)
    return tg_ppo_gauss_pol(v->pol + i * v->A, v->log_std, (const float *)v->actions->data + i * v->A, v->A);
  return tg_ppo_cat_pol(v->pol + i * v->A, v->A, ppo_action(v, i));
}

tg_status tg_cpu_ppo_loss_fwd(const tg_kernel_args *a) {
  ppo_view v = ppo_view_of(a);
  tg_status st = ppo_check_actions(a, &v);
  if (st != TG_OK) return st;
  double t[TG_PPO_TERMS] = {0, 0, 0, 0, 0};
  for (int64_t i = 0; i < v.B; i++) {
    double r[TG_PPO_TERMS];
    tg_ppo_sample s = ppo_sample(&v, i);
    tg_ppo_terms(ppo_pol(&v, i), &s, &v.c, r);
    for (int k = 0; k < TG_PPO_TERMS; k++) t[k] += r[k];
  }
  tg_ppo_write_stats(t, v.B, &v.c, (float *)a->out->data); /* [TG_PPO_NSTATS] */
  return TG_OK;
}

/* Gaussian: d objective / d log_std[d] summed over the samples in row order (recomputing each
 * sample's dlogp per d keeps the kernel free of scratch memory; A is the action dimension, small). */
static void ppo_grad_log_std(const ppo_view *v, const tg_ppo_seed *g, float *dls /* [A] */) {
  const float *x = (const float *)v->actions->data; /* [B, A] */
  for (int64_t d = 0; d < v->A; d++) {
    double acc = 0.0;
    for (int64_t i = 0; i < v->B; i++) {
      tg_ppo_sample s = ppo_sample(v, i);
      double dlogp = tg_ppo_dlogp(ppo_pol(v, i), &s, &v->c, g);
      acc += tg_ppo_gauss_grad_ls(v->pol + i * v->A, v->log_std, x + i * v->A, d, dlogp, g->ent);
    }
    dls[d] += (float)acc;
  }
}

tg_status tg_cpu_ppo_loss_bwd(const tg_kernel_args *a) {
  float *dp = a->in_grad[0], *dv = a->in_grad[1]; /* [B, A], [B]; either may be NULL */
  float *dls = a->n_in > 7 ? a->in_grad[7] : NULL; /* [A] (Gaussian) or NULL */
  if (!dp && !dv && !dls) return TG_OK;
  ppo_view v = ppo_view_of(a);
  tg_status st = ppo_check_actions(a, &v);
  if (st != TG_OK) return st;
  tg_ppo_seed g = tg_ppo_seed_of(a->out_grad, &v.c, v.B);
  const float *x = (const float *)v.actions->data; /* Gaussian: [B, A] */
  for (int64_t i = 0; i < v.B; i++) {
    tg_ppo_sample s = ppo_sample(&v, i);
    if (dv) dv[i] += (float)(g.v * tg_ppo_value_grad(&s, &v.c));
    if (!dp) continue;
    double dlogp = tg_ppo_dlogp(ppo_pol(&v, i), &s, &v.c, &g);
    if (v.gauss) tg_ppo_gauss_grad_mu(v.pol + i * v.A, v.log_std, x + i * v.A, v.A, dlogp, dp + i * v.A);
    else tg_ppo_cat_grad(v.pol + i * v.A, v.A, ppo_action(&v, i), dlogp, g.ent, dp + i * v.A);
  }
  if (dls) ppo_grad_log_std(&v, &g, dls);
  return TG_OK;
}
