/* Builders of ppo_loss (categorical and Gaussian policies): PPO's clipped loss, its parts and diagnostics as one vector. */
#include <math.h>
#include "graph/graph_internal.h"

#define SHAPE_BUF 96

/* logits (or Gaussian means) f32 [B, A] with B, A >= 1. */
static int ppo_check_logits(tg_graph *g, const char *what, const tg_tensor *logits) {
  char s[SHAPE_BUF];
  if (logits->dtype != TG_F32 || logits->ndim != 2 || logits->shape[0] < 1 || logits->shape[1] < 1) {
    tg_graph_fail(g, TG_ERR_SHAPE, "ppo_loss: %s '%s' is %s %s; need f32 [B, A] with B, A >= 1", what, logits->name,
                  tg_dtype_name(logits->dtype), tg_shape_str(logits, s, sizeof s));
    return 0;
  }
  return 1;
}

/* value f32 [B] or [B, 1]. */
static int ppo_check_value(tg_graph *g, const tg_tensor *value, int64_t B) {
  char s[SHAPE_BUF];
  int ok = value->dtype == TG_F32 && value->shape[0] == B &&
           (value->ndim == 1 || (value->ndim == 2 && value->shape[1] == 1));
  if (!ok)
    tg_graph_fail(g, TG_ERR_SHAPE, "ppo_loss: value '%s' is %s %s; need f32 [%lld] or [%lld, 1] (B from the logits)",
                  value->name, tg_dtype_name(value->dtype), tg_shape_str(value, s, sizeof s), (long long)B,
                  (long long)B);
  return ok;
}

/* actions i32 or i64 [B]. */
static int ppo_check_actions(tg_graph *g, const tg_tensor *actions, int64_t B) {
  char s[SHAPE_BUF];
  if ((actions->dtype != TG_I32 && actions->dtype != TG_I64) || actions->ndim != 1 || actions->shape[0] != B) {
    tg_graph_fail(g, TG_ERR_SHAPE, "ppo_loss: actions '%s' is %s %s; need i32 or i64 [%lld] (B from the logits)",
                  actions->name, tg_dtype_name(actions->dtype), tg_shape_str(actions, s, sizeof s), (long long)B);
    return 0;
  }
  return 1;
}

/* A rollout operand (old_logp, adv, returns, old_value [B]; Gaussian actions [B, A] when A > 0): f32,
 * data that no parameter feeds. */
static int ppo_check_data_of(tg_graph *g, const char *what, const tg_tensor *x, int64_t B, int64_t A) {
  char s[SHAPE_BUF];
  int ok = x->dtype == TG_F32 && x->ndim == (A > 0 ? 2 : 1) && x->shape[0] == B && (A == 0 || x->shape[1] == A);
  if (!ok) {
    if (A > 0)
      tg_graph_fail(g, TG_ERR_SHAPE, "ppo_loss: %s '%s' is %s %s; need f32 [%lld, %lld] (B, A from the means)", what,
                    x->name, tg_dtype_name(x->dtype), tg_shape_str(x, s, sizeof s), (long long)B, (long long)A);
    else
      tg_graph_fail(g, TG_ERR_SHAPE, "ppo_loss: %s '%s' is %s %s; need f32 [%lld] (B from the logits)", what, x->name,
                    tg_dtype_name(x->dtype), tg_shape_str(x, s, sizeof s), (long long)B);
    return 0;
  }
  if (tg_node_of(x)->requires_grad) {
    tg_graph_fail(g, TG_ERR_INVALID,
                  "ppo_loss: %s '%s' depends on parameters; the rollout operands are data and get no gradient "
                  "(bind them as inputs)", what, x->name);
    return 0;
  }
  return 1;
}

static int ppo_check_data(tg_graph *g, const char *what, const tg_tensor *x, int64_t B) {
  return ppo_check_data_of(g, what, x, B, 0);
}

/* log_std f32 [A]. */
static int ppo_check_log_std(tg_graph *g, const tg_tensor *ls, int64_t A) {
  char s[SHAPE_BUF];
  if (ls->dtype != TG_F32 || ls->ndim != 1 || ls->shape[0] != A) {
    tg_graph_fail(g, TG_ERR_SHAPE, "ppo_loss: log_std '%s' is %s %s; need f32 [%lld] (A from the means)", ls->name,
                  tg_dtype_name(ls->dtype), tg_shape_str(ls, s, sizeof s), (long long)A);
    return 0;
  }
  return 1;
}

static int ppo_check_coefs(tg_graph *g, const tg_ppo_coefs *c, int64_t B) {
  if (!c) {
    tg_graph_fail(g, TG_ERR_INVALID, "ppo_loss: the coefficients are NULL");
    return 0;
  }
  if (!(c->clip > 0.0f) || !isfinite(c->clip) || !isfinite(c->vf_coef) || !isfinite(c->ent_coef)) {
    tg_graph_fail(g, TG_ERR_INVALID, "ppo_loss: clip %g must be finite and > 0, vf_coef %g and ent_coef %g finite",
                  (double)c->clip, (double)c->vf_coef, (double)c->ent_coef);
    return 0;
  }
  if (c->norm_adv && B < 2) {
    tg_graph_fail(g, TG_ERR_SHAPE, "ppo_loss: advantage normalisation needs a minibatch of at least 2 (B is %lld)",
                  (long long)B);
    return 0;
  }
  return 1;
}

static tg_attr ppo_attr(const tg_ppo_coefs *c, int gauss) {
  tg_attr attr = {0};
  attr.f[0] = c->clip;
  attr.f[1] = c->vf_coef;
  attr.f[2] = c->ent_coef;
  attr.i[0] = c->clip_vloss != 0;
  attr.i[1] = c->norm_adv != 0;
  attr.i[2] = gauss;
  return attr;
}

/* The four rollout operands every variant takes. */
static int ppo_check_rollout(tg_graph *g, tg_tensor *const *x, int64_t B) {
  return ppo_check_data(g, "old_logp", x[0], B) && ppo_check_data(g, "adv", x[1], B) &&
         ppo_check_data(g, "returns", x[2], B) && ppo_check_data(g, "old_value", x[3], B);
}

tg_tensor *tg_ppo_loss(tg_graph *g, tg_tensor *logits, tg_tensor *value, tg_tensor *actions, tg_tensor *old_logp,
                       tg_tensor *adv, tg_tensor *returns, tg_tensor *old_value, const tg_ppo_coefs *c) {
  tg_tensor *ins[7] = {logits, value, actions, old_logp, adv, returns, old_value};
  if (!tg_graph_check_inputs(g, "ppo_loss", 7, ins)) return NULL;
  if (!ppo_check_logits(g, "logits", logits)) return NULL;
  int64_t B = logits->shape[0];
  if (!ppo_check_value(g, value, B) || !ppo_check_actions(g, actions, B) || !ppo_check_rollout(g, ins + 3, B))
    return NULL;
  if (!ppo_check_coefs(g, c, B)) return NULL;
  tg_attr attr = ppo_attr(c, 0);
  int64_t shape[1] = {TG_PPO_NSTATS};
  return tg_graph_add(g, TG_OP_PPO_LOSS, 7, ins, TG_F32, 1, shape, &attr);
}

tg_tensor *tg_ppo_loss_gaussian(tg_graph *g, tg_tensor *mean, tg_tensor *log_std, tg_tensor *value,
                                tg_tensor *actions, tg_tensor *old_logp, tg_tensor *adv, tg_tensor *returns,
                                tg_tensor *old_value, const tg_ppo_coefs *c) {
  tg_tensor *ins[8] = {mean, value, actions, old_logp, adv, returns, old_value, log_std};
  if (!tg_graph_check_inputs(g, "ppo_loss", 8, ins)) return NULL;
  if (!ppo_check_logits(g, "mean", mean)) return NULL;
  int64_t B = mean->shape[0], A = mean->shape[1];
  if (!ppo_check_log_std(g, log_std, A) || !ppo_check_value(g, value, B) ||
      !ppo_check_data_of(g, "actions", actions, B, A) || !ppo_check_rollout(g, ins + 3, B))
    return NULL;
  if (!ppo_check_coefs(g, c, B)) return NULL;
  tg_attr attr = ppo_attr(c, 1);
  int64_t shape[1] = {TG_PPO_NSTATS};
  return tg_graph_add(g, TG_OP_PPO_LOSS, 8, ins, TG_F32, 1, shape, &attr);
}
