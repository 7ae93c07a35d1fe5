/* PPO's loss for one sample, written once for the CPU and CUDA kernels: its terms and gradients in float64. */
#ifndef TG_PPO_ROW_H
#define TG_PPO_ROW_H

#include <math.h>
#include <stdint.h>
#include "base/philox.h" /* TG_HD */

/* Products that feed a sum round as on the CPU (nvcc would otherwise fuse them into FMAs). */
#ifdef __CUDA_ARCH__
#define TG_PPO_MUL(a, b) __dmul_rn((a), (b))
#else
#define TG_PPO_MUL(a, b) ((a) * (b))
#endif

/* The op's output, f32 [TG_PPO_NSTATS]: out[0] is the loss, the rest are its parts and diagnostics
 * (the indices are public in graph.h). Per-sample terms, summed over the minibatch: */
enum { TG_PPO_T_PG, TG_PPO_T_V, TG_PPO_T_ENT, TG_PPO_T_KL, TG_PPO_T_CLIP, TG_PPO_TERMS };

typedef struct tg_ppo_coef {
  double clip;    /* ratio clip epsilon, also the value clip */
  double vf, ent; /* value and entropy coefficients */
  int clip_vloss;
} tg_ppo_coef;

/* d objective / d (sum over samples of each term), already divided by the minibatch size B:
 * pg = (g_loss + g_pg) / B; v = (vf g_loss + g_v) * 0.5 / B; ent = (g_ent - ent g_loss) / B; kl = g_kl / B. */
typedef struct tg_ppo_seed {
  double pg, v, ent, kl;
} tg_ppo_seed;

/* One sample's rollout data; adv is already normalised when the op normalises. */
typedef struct tg_ppo_sample {
  double old_logp, adv, ret, value, old_value;
} tg_ppo_sample;

static inline TG_HD double tg_ppo_clamp(double x, double lo, double hi) { /* NaN stays NaN */
  return x < lo ? lo : (x > hi ? hi : x);
}

static inline TG_HD double tg_ppo_max(double a, double b) { /* NaN in either gives NaN, as torch.max */
  return a != a ? a : (a > b ? a : b);
}

/* log(sum exp(l)) of l [A]. */
static inline TG_HD double tg_ppo_lse(const float *l, int64_t A) {
  double m = l[0];
  for (int64_t j = 1; j < A; j++)
    if (l[j] > m) m = l[j];
  double s = 0.0;
  for (int64_t j = 0; j < A; j++) s += exp((double)l[j] - m);
  return m + log(s);
}

/* Entropy -sum p log p of the categorical with logits l [A] and log-normaliser lse. */
static inline TG_HD double tg_ppo_entropy(const float *l, int64_t A, double lse) {
  double h = 0.0;
  for (int64_t j = 0; j < A; j++) {
    double lp = (double)l[j] - lse;
    h -= TG_PPO_MUL(exp(lp), lp);
  }
  return h;
}

/* The value loss term before the 0.5: max((v - R)^2, (v_old + clamp(v - v_old, -eps, eps) - R)^2),
 * or (v - R)^2 without value clipping. */
static inline TG_HD double tg_ppo_value_term(const tg_ppo_sample *s, const tg_ppo_coef *c) {
  double e = s->value - s->ret, vu = TG_PPO_MUL(e, e);
  if (!c->clip_vloss) return vu;
  double ec = s->old_value + tg_ppo_clamp(s->value - s->old_value, -c->clip, c->clip) - s->ret;
  return tg_ppo_max(vu, TG_PPO_MUL(ec, ec));
}

/* The policy's part of one sample: log pi(action) and the entropy of pi. */
typedef struct tg_ppo_pol {
  double logp, ent;
} tg_ppo_pol;

/* Categorical over logits l [A], action a. */
static inline TG_HD tg_ppo_pol tg_ppo_cat_pol(const float *l, int64_t A, int64_t a) {
  double lse = tg_ppo_lse(l, A);
  tg_ppo_pol p = {(double)l[a] - lse, tg_ppo_entropy(l, A, lse)};
  return p;
}

#define TG_PPO_HALF_LOG_2PI 0.91893853320467274178 /* 0.5 log(2 pi) */

/* Diagonal Gaussian with mean mu [D] and log standard deviations ls [D], action x [D]:
 * logp = sum_d -0.5 z_d^2 - ls_d - 0.5 log(2 pi), z_d = (x_d - mu_d) / exp(ls_d);
 * entropy = sum_d 0.5 + 0.5 log(2 pi) + ls_d. */
static inline TG_HD tg_ppo_pol tg_ppo_gauss_pol(const float *mu, const float *ls, const float *x, int64_t D) {
  tg_ppo_pol p = {0.0, 0.0};
  for (int64_t d = 0; d < D; d++) {
    double z = ((double)x[d] - mu[d]) / exp((double)ls[d]);
    p.logp += -0.5 * TG_PPO_MUL(z, z) - (double)ls[d] - TG_PPO_HALF_LOG_2PI;
    p.ent += 0.5 + TG_PPO_HALF_LOG_2PI + (double)ls[d];
  }
  return p;
}

/* Terms of one sample: t[TG_PPO_T_*]. */
static inline TG_HD void tg_ppo_terms(tg_ppo_pol p, const tg_ppo_sample *s, const tg_ppo_coef *c,
                                      double *t /* [TG_PPO_TERMS] */) {
  double logratio = p.logp - s->old_logp, r = exp(logratio);
  double rc = tg_ppo_clamp(r, 1.0 - c->clip, 1.0 + c->clip);
  t[TG_PPO_T_PG] = tg_ppo_max(-s->adv * r, -s->adv * rc);
  t[TG_PPO_T_V] = tg_ppo_value_term(s, c);
  t[TG_PPO_T_ENT] = p.ent;
  t[TG_PPO_T_KL] = (r - 1.0) - logratio;
  t[TG_PPO_T_CLIP] = fabs(r - 1.0) > c->clip ? 1.0 : 0.0;
}

/* d value_term / d value, with torch's rules: the max's gradient goes to the larger side (half to
 * each on a tie) and clamp passes it where v - v_old lies in [-eps, eps]. */
static inline TG_HD double tg_ppo_value_grad(const tg_ppo_sample *s, const tg_ppo_coef *c) {
  double e = s->value - s->ret, du = 2.0 * e;
  if (!c->clip_vloss) return du;
  double d = s->value - s->old_value;
  double ec = s->old_value + tg_ppo_clamp(d, -c->clip, c->clip) - s->ret;
  double dc = (d >= -c->clip && d <= c->clip) ? 2.0 * ec : 0.0;
  double vu = TG_PPO_MUL(e, e), vc = TG_PPO_MUL(ec, ec);
  return vu > vc ? du : (vu < vc ? dc : 0.5 * (du + dc));
}

/* d objective / d logp of one sample:
 *   d pg / d logp = -adv r where -adv r >= -adv clamp(r) (the unclipped side is the max, or a tie,
 *   which only happens with r inside the clip range or adv = 0), else 0;  d kl / d logp = r - 1. */
static inline TG_HD double tg_ppo_dlogp(tg_ppo_pol p, const tg_ppo_sample *s, const tg_ppo_coef *c,
                                        const tg_ppo_seed *g) {
  double r = exp(p.logp - s->old_logp);
  double rc = tg_ppo_clamp(r, 1.0 - c->clip, 1.0 + c->clip);
  double pg1 = -s->adv * r, pg2 = -s->adv * rc;
  return g->pg * (pg1 >= pg2 ? pg1 : 0.0) + g->kl * (r - 1.0);
}

/* Categorical: adds d objective / d l into dl [A] given dlogp and the entropy seed gent:
 * d logp / d l_k = [k == a] - p_k;  d H / d l_k = -p_k (log p_k + H). */
static inline TG_HD void tg_ppo_cat_grad(const float *l, int64_t A, int64_t a, double dlogp, double gent, float *dl) {
  double lse = tg_ppo_lse(l, A), h = tg_ppo_entropy(l, A, lse);
  for (int64_t k = 0; k < A; k++) {
    double lp = (double)l[k] - lse, p = exp(lp);
    double d = dlogp * ((k == a ? 1.0 : 0.0) - p) - gent * p * (lp + h);
    dl[k] += (float)d;
  }
}

/* Gaussian: d logp / d mu_d = z_d / sigma_d (added into dmu [D] times dlogp); the entropy does not
 * depend on mu. */
static inline TG_HD void tg_ppo_gauss_grad_mu(const float *mu, const float *ls, const float *x, int64_t D, double dlogp,
                                              float *dmu) {
  for (int64_t d = 0; d < D; d++) {
    double sg = exp((double)ls[d]), z = ((double)x[d] - mu[d]) / sg;
    dmu[d] += (float)(dlogp * z / sg);
  }
}

/* Gaussian: one sample's share of d objective / d ls_d: dlogp (z_d^2 - 1) + gent (d H / d ls_d = 1). */
static inline TG_HD double tg_ppo_gauss_grad_ls(const float *mu, const float *ls, const float *x, int64_t d, double dlogp,
                                                double gent) {
  double z = ((double)x[d] - mu[d]) / exp((double)ls[d]);
  return dlogp * (TG_PPO_MUL(z, z) - 1.0) + gent;
}

/* The seed of the sum of each term from the output's gradient og [TG_PPO_NSTATS] (see tg_ppo_seed). */
static inline TG_HD tg_ppo_seed tg_ppo_seed_of(const float *og, const tg_ppo_coef *c, int64_t B) {
  tg_ppo_seed s;
  double inv = 1.0 / (double)B;
  s.pg = ((double)og[0] + og[1]) * inv;
  s.v = (c->vf * og[0] + og[2]) * 0.5 * inv;
  s.ent = ((double)og[3] - c->ent * og[0]) * inv;
  s.kl = (double)og[4] * inv; /* og[5], the clip fraction, is piecewise constant: no gradient */
  return s;
}

/* out [TG_PPO_NSTATS] from the term sums t over B samples. */
static inline TG_HD void tg_ppo_write_stats(const double *t, int64_t B, const tg_ppo_coef *c, float *out) {
  double inv = 1.0 / (double)B;
  double pg = t[TG_PPO_T_PG] * inv, v = 0.5 * t[TG_PPO_T_V] * inv, h = t[TG_PPO_T_ENT] * inv;
  out[0] = (float)(pg - c->ent * h + c->vf * v);
  out[1] = (float)pg;
  out[2] = (float)v;
  out[3] = (float)h;
  out[4] = (float)(t[TG_PPO_T_KL] * inv);
  out[5] = (float)(t[TG_PPO_T_CLIP] * inv);
}

/* (adv - mean) / (std + 1e-8), std unbiased (torch's Tensor.std); sd = std + 1e-8. */
static inline TG_HD double tg_ppo_norm_adv(double adv, double mean, double sd) { return (adv - mean) / sd; }

#endif
