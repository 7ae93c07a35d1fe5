/* CUDA kernels of ppo_loss, mirroring k_ppo.c: one block per call, per-sample math from ppo_row.h. */
#include <math.h>
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_rows.cuh"
#include "ops/ppo_row.h"
extern "C" { /* the kernel declarations are called from C (the op table) */
#include "backend/cuda/cuda_kernels.h"
}

/* A minibatch is small (hundreds to a few thousand samples), so one block of PPO_THREADS threads
 * takes it all: thread t handles samples t, t + PPO_THREADS, ...; sums go through group_reduce in a
 * fixed order (no atomics), so results repeat bitwise. The advantage statistics are recomputed by
 * the backward rather than stored. No scratch memory. */
#define PPO_THREADS 256

static_assert(PPO_THREADS % 32 == 0, "whole warps");

/* Inputs as k_ppo.c: 0 policy [B, A] (logits or Gaussian means), 1 value [B] or [B, 1], 2 actions
 * ([B] i32/i64, or [B, A] f32 for the Gaussian), 3 old_logp, 4 adv, 5 returns, 6 old_value [B],
 * 7 log_std [A] (Gaussian only). */
struct PpoIn {
  const float *pol, *value, *old_logp, *adv, *ret, *old_value; /* [B, A], then [B] each */
  const float *log_std;                                        /* [A] or NULL */
  const void *actions;                                         /* [B] i32/i64 or [B, A] f32 */
  int i32, norm_adv, gauss;
  int64_t B, A;
  tg_ppo_coef c;
};

static PpoIn ppo_in_of(const tg_kernel_args *a) {
  PpoIn p;
  p.pol = (const float *)a->in[0]->data;
  p.value = (const float *)a->in[1]->data;
  p.actions = a->in[2]->data;
  p.i32 = a->in[2]->dtype == TG_I32;
  p.old_logp = (const float *)a->in[3]->data;
  p.adv = (const float *)a->in[4]->data;
  p.ret = (const float *)a->in[5]->data;
  p.old_value = (const float *)a->in[6]->data;
  p.gauss = a->attr->i[2] != 0;
  p.log_std = p.gauss ? (const float *)a->in[7]->data : NULL;
  p.B = a->in[0]->shape[0];
  p.A = a->in[0]->shape[1];
  p.c.clip = a->attr->f[0];
  p.c.vf = a->attr->f[1];
  p.c.ent = a->attr->f[2];
  p.c.clip_vloss = (int)a->attr->i[0];
  p.norm_adv = (int)a->attr->i[1];
  return p;
}

/* Categorical: sample i's action, or -1 for one outside [0, A) (recorded as a fault; the sample is
 * skipped). Gaussian: 0 (its actions are floats). */
static __device__ int64_t ppo_action(const PpoIn &p, int64_t i, tg_cuda_fault *fault) {
  if (p.gauss) return 0;
  int64_t act = p.i32 ? ((const int32_t *)p.actions)[i] : ((const int64_t *)p.actions)[i];
  if (act >= 0 && act < p.A) return act;
  tg_cuda_report_fault(fault, TG_OP_PPO_LOSS, act, p.A);
  return -1;
}

/* Sample i's policy part (log pi(action), entropy); act from ppo_action. */
static __device__ tg_ppo_pol ppo_pol(const PpoIn &p, int64_t i, int64_t act) {
  if (p.gauss) return tg_ppo_gauss_pol(p.pol + i * p.A, p.log_std, (const float *)p.actions + i * p.A, p.A);
  return tg_ppo_cat_pol(p.pol + i * p.A, p.A, act);
}

/* Mean and unbiased std (+ 1e-8) of the advantages over the block; every thread gets both. */
static __device__ void ppo_adv_stats(const PpoIn &p, double *mean, double *sd) {
  *mean = 0.0;
  *sd = 1.0;
  if (!p.norm_adv) return;
  double s = 0.0;
  for (int64_t i = threadIdx.x; i < p.B; i += PPO_THREADS) s += p.adv[i];
  double m = group_reduce<PPO_THREADS>(s, SumOp()) / (double)p.B;
  double q = 0.0;
  for (int64_t i = threadIdx.x; i < p.B; i += PPO_THREADS) {
    double d = (double)p.adv[i] - m;
    q += __dmul_rn(d, d);
  }
  q = group_reduce<PPO_THREADS>(q, SumOp());
  *mean = m;
  *sd = sqrt(q / (double)(p.B - 1)) + 1e-8;
}

static __device__ tg_ppo_sample ppo_sample(const PpoIn &p, int64_t i, double mean, double sd) {
  tg_ppo_sample s = {p.old_logp[i], tg_ppo_norm_adv(p.adv[i], mean, sd), p.ret[i], p.value[i], p.old_value[i]};
  return s;
}

static __global__ void __launch_bounds__(PPO_THREADS) k_ppo_fwd(PpoIn p, tg_cuda_fault *fault, float *out) {
  /* out: [TG_PPO_NSTATS] */
  double mean, sd;
  ppo_adv_stats(p, &mean, &sd);
  double t[TG_PPO_TERMS] = {0.0, 0.0, 0.0, 0.0, 0.0};
  for (int64_t i = threadIdx.x; i < p.B; i += PPO_THREADS) {
    int64_t act = ppo_action(p, i, fault);
    if (act < 0) continue;
    double r[TG_PPO_TERMS];
    tg_ppo_sample s = ppo_sample(p, i, mean, sd);
    tg_ppo_terms(ppo_pol(p, i, act), &s, &p.c, r);
    for (int k = 0; k < TG_PPO_TERMS; k++) t[k] += r[k];
  }
  for (int k = 0; k < TG_PPO_TERMS; k++) t[k] = group_reduce<PPO_THREADS>(t[k], SumOp());
  if (threadIdx.x == 0) tg_ppo_write_stats(t, p.B, &p.c, out);
}

static __global__ void __launch_bounds__(PPO_THREADS)
    k_ppo_bwd(PpoIn p, const float *og, float *dp, float *dv, float *dls, tg_cuda_fault *fault) {
  /* og: [TG_PPO_NSTATS]; dp: [B, A] or NULL; dv: [B] or NULL; dls: [A] or NULL (Gaussian) */
  double mean, sd;
  ppo_adv_stats(p, &mean, &sd);
  tg_ppo_seed g = tg_ppo_seed_of(og, &p.c, p.B);
  for (int64_t i = threadIdx.x; i < p.B; i += PPO_THREADS) {
    int64_t act = ppo_action(p, i, fault);
    if (act < 0) continue;
    tg_ppo_sample s = ppo_sample(p, i, mean, sd);
    if (dv) dv[i] += (float)(g.v * tg_ppo_value_grad(&s, &p.c));
    if (!dp) continue;
    double dlogp = tg_ppo_dlogp(ppo_pol(p, i, act), &s, &p.c, &g);
    if (p.gauss)
      tg_ppo_gauss_grad_mu(p.pol + i * p.A, p.log_std, (const float *)p.actions + i * p.A, p.A, dlogp, dp + i * p.A);
    else
      tg_ppo_cat_grad(p.pol + i * p.A, p.A, act, dlogp, g.ent, dp + i * p.A);
  }
  if (!dls) return; /* uniform over the block: every thread takes the same branch */
  for (int64_t d = 0; d < p.A; d++) { /* d log_std[d]: each thread's samples, then the block, in order */
    double acc = 0.0;
    for (int64_t i = threadIdx.x; i < p.B; i += PPO_THREADS) {
      tg_ppo_sample s = ppo_sample(p, i, mean, sd);
      double dlogp = tg_ppo_dlogp(ppo_pol(p, i, 0), &s, &p.c, &g);
      acc += tg_ppo_gauss_grad_ls(p.pol + i * p.A, p.log_std, (const float *)p.actions + i * p.A, d, dlogp, g.ent);
    }
    acc = group_reduce<PPO_THREADS>(acc, SumOp());
    if (threadIdx.x == 0) dls[d] += (float)acc;
  }
}

tg_status tg_cuda_ppo_loss_fwd(const tg_kernel_args *a) {
  int dev = tg_cuda_dev_of(a);
  k_ppo_fwd<<<1, PPO_THREADS, 0, tg_cuda_stream(dev)>>>(ppo_in_of(a), tg_cuda_fault_slot(dev), (float *)a->out->data);
  return tg_cuda_launched("k_ppo_fwd", a->node_name);
}

tg_status tg_cuda_ppo_loss_bwd(const tg_kernel_args *a) {
  float *dp = a->in_grad[0], *dv = a->in_grad[1]; /* [B, A], [B]; either may be NULL */
  float *dls = a->n_in > 7 ? a->in_grad[7] : NULL; /* [A] (Gaussian) or NULL */
  if (!dp && !dv && !dls) return TG_OK;
  int dev = tg_cuda_dev_of(a);
  k_ppo_bwd<<<1, PPO_THREADS, 0, tg_cuda_stream(dev)>>>(ppo_in_of(a), a->out_grad, dp, dv, dls, tg_cuda_fault_slot(dev));
  return tg_cuda_launched("k_ppo_bwd", a->node_name);
}
