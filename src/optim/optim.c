/* Optimizers over the store's flat buffers: config checks, state buffers, clipping and the step. */
#include <math.h>
#include <string.h>
#include "graph/backend.h"
#include "graph/store_mirror.h"
#include "optim/optim_internal.h"
#include "tickgrad/optim.h"

#define TG_OPTIM_MAX_STATE 2

struct tg_optim {
  tg_store *store;
  tg_optim_config cfg;
  tg_device dev;
  const tg_backend *be;
  size_t numel;                      /* tg_store_numel at creation */
  int n_state;
  float *state[TG_OPTIM_MAX_STATE]; /* each [numel] on dev */
  const char *state_name[TG_OPTIM_MAX_STATE];
  int n_seg;
  tg_optim_seg *segs;          /* [n_seg] runs of parameters with one weight decay */
  tg_optim_scalars *scalars;   /* backend memory: the device's step counter and this step's scalars */
  int64_t steps;               /* the host's copy of scalars->step, updated by tg_optim_finish */
  float last_norm, last_lr;
};

const char *tg_optim_kind_name(tg_optim_kind k) {
  switch (k) {
    case TG_SGD: return "sgd";
    case TG_ADAM: return "adam";
    case TG_ADAMW: return "adamw";
  }
  return "?";
}

tg_optim_config tg_optim_defaults(tg_optim_kind kind) {
  tg_optim_config c;
  memset(&c, 0, sizeof c);
  c.kind = kind;
  c.lr = kind == TG_SGD ? 1e-2f : 1e-3f;
  c.momentum = 0.0f;
  c.beta1 = 0.9f;
  c.beta2 = 0.999f;
  c.eps = 1e-8f;
  c.weight_decay = kind == TG_ADAMW ? 0.01f : 0.0f;
  c.clip_norm = 0.0f;
  c.schedule.kind = TG_LR_CONSTANT;
  c.schedule.warmup_steps = 0;
  c.schedule.total_steps = 0;
  c.schedule.final_frac = 0.0f;
  return c;
}

/* Every field the chosen optimizer reads, with the reason a value is refused. */
static tg_status optim_config_check(const tg_optim_config *c) {
  if (c->kind != TG_SGD && c->kind != TG_ADAM && c->kind != TG_ADAMW)
    return tg_error(TG_ERR_INVALID, "optimizer: unknown kind %d (use TG_SGD, TG_ADAM or TG_ADAMW)",
                    (int)c->kind);
  const char *k = tg_optim_kind_name(c->kind);
  if (!(c->lr > 0.0f) || !isfinite(c->lr))
    return tg_error(TG_ERR_INVALID, "%s: lr must be finite and > 0 (got %g)", k, (double)c->lr);
  if (!(c->weight_decay >= 0.0f) || !isfinite(c->weight_decay))
    return tg_error(TG_ERR_INVALID, "%s: weight_decay must be finite and >= 0 (got %g)", k,
                    (double)c->weight_decay);
  if (!(c->clip_norm >= 0.0f) || !isfinite(c->clip_norm))
    return tg_error(TG_ERR_INVALID, "%s: clip_norm must be finite and >= 0 (0: no clipping; got %g)",
                    k, (double)c->clip_norm);
  if (c->kind == TG_SGD) {
    if (!(c->momentum >= 0.0f && c->momentum < 1.0f))
      return tg_error(TG_ERR_INVALID, "sgd: momentum must be in [0, 1) (got %g)", (double)c->momentum);
  } else {
    if (!(c->beta1 >= 0.0f && c->beta1 < 1.0f))
      return tg_error(TG_ERR_INVALID, "%s: beta1 must be in [0, 1) (got %g)", k, (double)c->beta1);
    if (!(c->beta2 >= 0.0f && c->beta2 < 1.0f))
      return tg_error(TG_ERR_INVALID, "%s: beta2 must be in [0, 1) (got %g)", k, (double)c->beta2);
    if (!(c->eps > 0.0f) || !isfinite(c->eps))
      return tg_error(TG_ERR_INVALID, "%s: eps must be finite and > 0 (got %g)", k, (double)c->eps);
  }
  const tg_lr_schedule *s = &c->schedule;
  if (s->kind != TG_LR_CONSTANT && s->kind != TG_LR_LINEAR && s->kind != TG_LR_COSINE)
    return tg_error(TG_ERR_INVALID, "%s: unknown lr schedule kind %d", k, (int)s->kind);
  if (s->warmup_steps < 0)
    return tg_error(TG_ERR_INVALID, "%s: schedule warmup_steps must be >= 0 (got %lld)", k,
                    (long long)s->warmup_steps);
  if (s->kind != TG_LR_CONSTANT) {
    if (s->total_steps <= s->warmup_steps)
      return tg_error(TG_ERR_INVALID,
                      "%s: a decaying schedule needs total_steps > warmup_steps (got total %lld, "
                      "warm-up %lld)",
                      k, (long long)s->total_steps, (long long)s->warmup_steps);
    if (!(s->final_frac >= 0.0f && s->final_frac <= 1.0f))
      return tg_error(TG_ERR_INVALID, "%s: schedule final_frac must be in [0, 1] (got %g)", k,
                      (double)s->final_frac);
  }
  return TG_OK;
}

/* Runs of consecutive parameters with the same weight decay (biases and norm gains, ndim < 2, are
 * not decayed), so an update is a few long kernels rather than one per parameter. */
static tg_status optim_build_segments(tg_optim *o) {
  int n = tg_store_count(o->store);
  o->segs = tg_malloc((size_t)(n > 0 ? n : 1) * sizeof *o->segs);
  if (!o->segs) return tg_error(TG_ERR_NOMEM, "%s: out of host memory", tg_optim_kind_name(o->cfg.kind));
  o->n_seg = 0;
  for (int i = 0; i < n; i++) {
    tg_param_info p = tg_store_param(o->store, i);
    if (p.numel == 0) continue;
    float wd = p.ndim >= 2 ? o->cfg.weight_decay : 0.0f;
    tg_optim_seg *last = o->n_seg ? &o->segs[o->n_seg - 1] : NULL;
    if (last && last->wd == wd && last->offset + last->numel == p.offset) {
      last->numel += p.numel;
    } else {
      tg_optim_seg seg = {p.offset, p.numel, wd};
      o->segs[o->n_seg++] = seg;
    }
  }
  return TG_OK;
}

static tg_status optim_alloc_scalars(tg_optim *o) {
  tg_optim_scalars zero;
  memset(&zero, 0, sizeof zero);
  tg_status st = o->be->alloc(o->dev, sizeof zero, (void **)&o->scalars);
  if (st != TG_OK) return st;
  return o->be->from_host(o->dev, o->scalars, &zero, sizeof zero);
}

void tg_optim_free(tg_optim *o) {
  if (!o) return;
  for (int k = 0; k < o->n_state; k++)
    if (o->state[k]) o->be->free(o->dev, o->state[k]);
  if (o->scalars) o->be->free(o->dev, o->scalars);
  tg_free(o->segs);
  tg_free(o);
}

tg_status tg_optim_new(tg_store *s, const tg_optim_config *c, tg_optim **out) {
  if (!out) return tg_error(TG_ERR_INVALID, "tg_optim_new: out is NULL");
  *out = NULL;
  if (!s || !c) return tg_error(TG_ERR_INVALID, "tg_optim_new: store and config are required");
  tg_status st = optim_config_check(c);
  if (st != TG_OK) return st;
  tg_device dev = tg_store_device(s);
  const tg_backend *be = tg_backend_for(dev.kind);
  if (!be) {
    char buf[16];
    return tg_error(TG_ERR_DEVICE, "%s: the store is on %s, whose backend is not in this build",
                    tg_optim_kind_name(c->kind), tg_device_str(dev, buf, sizeof buf));
  }
  st = tg_store_finalize(s);
  if (st != TG_OK) return st;
  tg_optim *o = tg_calloc(1, sizeof *o);
  if (!o) return tg_error(TG_ERR_NOMEM, "%s: out of host memory", tg_optim_kind_name(c->kind));
  o->store = s;
  o->cfg = *c;
  o->dev = dev;
  o->be = be;
  o->numel = tg_store_numel(s);
  if (c->kind == TG_SGD) {
    if (c->momentum != 0.0f) o->state_name[o->n_state++] = "momentum";
  } else {
    o->state_name[o->n_state++] = "exp_avg";
    o->state_name[o->n_state++] = "exp_avg_sq";
  }
  if ((st = optim_build_segments(o)) != TG_OK || (st = optim_alloc_scalars(o)) != TG_OK) {
    tg_optim_free(o);
    return st;
  }
  if (o->numel > 0) {
    for (int k = 0; k < o->n_state; k++) {
      void *p = NULL;
      st = be->alloc(dev, o->numel * sizeof(float), &p);
      if (st == TG_OK) {
        o->state[k] = p;
        st = be->fill_f32(dev, o->state[k], o->numel, 0.0f);
      }
      if (st != TG_OK) {
        tg_optim_free(o);
        return st;
      }
    }
  }
  *out = o;
  return TG_OK;
}

/* The first parameter whose gradient holds a NaN or Inf (for the error message), or -1. */
static int optim_find_bad_param(tg_optim *o, const float *grads) {
  int n = tg_store_count(o->store);
  for (int i = 0; i < n; i++) {
    tg_param_info p = tg_store_param(o->store, i);
    double ss = 0.0;
    if (o->be->sum_squares(o->dev, grads + p.offset, p.numel, &ss) != TG_OK) return -1;
    if (!isfinite(ss)) return i;
  }
  return -1;
}

tg_status tg_optim_enqueue(tg_optim *o) {
  if (!o) return tg_error(TG_ERR_INVALID, "tg_optim_step: optimizer is NULL");
  const tg_optim_config *c = &o->cfg;
  const char *kname = tg_optim_kind_name(c->kind);
  if (tg_store_numel(o->store) != o->numel)
    return tg_error(TG_ERR_INVALID, "%s: the store changed size since the optimizer was created", kname);
  /* the update writes the bf16 mirror beside the values, so it stays fresh; a stale one is made first (a skipped update
   * writes neither) */
  tg_status st = tg_store_mirror_refresh(o->store);
  if (st != TG_OK) return st;
  tg_optim_update u = {
      .kind = c->kind, .lr = c->lr, .momentum = c->momentum, .beta1 = c->beta1, .beta2 = c->beta2,
      .eps = c->eps, .clip_norm = c->clip_norm, .schedule = c->schedule,
      .values = tg_store_values_unmarked(o->store), .values_bf16 = tg_store_mirror(o->store),
      .grads = tg_store_grads(o->store),
      .m = o->n_state > 0 ? o->state[0] : NULL, .v = o->n_state > 1 ? o->state[1] : NULL,
      .numel = o->numel, .n_seg = o->n_seg, .segs = o->segs, .scalars = o->scalars};
  if (o->numel > 0 && !u.grads) return tg_error(TG_ERR_INVALID, "%s: the store has no gradient buffer", kname);
  return o->be->optim_update(o->dev, &u);
}

tg_status tg_optim_finish(tg_optim *o) {
  tg_optim_scalars sc;
  tg_status st = o->be->to_host(o->dev, &sc, o->scalars, sizeof sc);
  if (st != TG_OK) return st;
  if (sc.skipped) {
    const float *grads = tg_store_grads(o->store);
    int bad = optim_find_bad_param(o, grads);
    return tg_error(TG_ERR_NUMERIC,
                    "%s step %lld: gradient norm is %s (first non-finite gradient in parameter "
                    "'%s'); parameters and optimizer state are unchanged",
                    tg_optim_kind_name(o->cfg.kind), (long long)(sc.step + 1), isnan(sc.norm) ? "NaN" : "Inf",
                    bad >= 0 ? tg_store_param(o->store, bad).name : "?");
  }
  o->steps = sc.step;
  o->last_norm = sc.norm;
  o->last_lr = sc.lr;
  return TG_OK;
}

tg_status tg_optim_step(tg_optim *o) {
  tg_status st = tg_optim_enqueue(o);
  return st == TG_OK ? tg_optim_finish(o) : st;
}

int64_t tg_optim_steps(const tg_optim *o) { return o->steps; }
tg_status tg_optim_set_steps(tg_optim *o, int64_t steps) {
  int64_t v = steps < 0 ? 0 : steps;
  tg_status st = o->be->from_host(o->dev, &o->scalars->step, &v, sizeof v);
  if (st == TG_OK) o->steps = v;
  return st;
}
float tg_optim_last_grad_norm(const tg_optim *o) { return o->last_norm; }
float tg_optim_last_lr(const tg_optim *o) { return o->last_lr; }
const tg_optim_config *tg_optim_config_of(const tg_optim *o) { return &o->cfg; }
int tg_optim_state_count(const tg_optim *o) { return o->n_state; }
tg_store *tg_optim_store(tg_optim *o) { return o->store; }

float *tg_optim_state(tg_optim *o, int k, const char **name) {
  if (k < 0 || k >= o->n_state) {
    if (name) *name = NULL;
    return NULL;
  }
  if (name) *name = o->state_name[k];
  return o->state[k];
}
