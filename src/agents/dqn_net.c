/* DQN's networks: the online and target Q-networks as graphs, the TD target, one training step, target updates. */
#include <math.h>
#include <string.h>
#include "graph/backend.h"
#include "agents/dqn_internal.h"
#include "tickgrad/device.h"

#define Q_PREFIX "q"

static tg_status cfg_check(const rl_dqn_net_cfg *c) {
  if (c->obs_dim < 1 || c->n_actions < 2 || c->batch < 1 || c->n_act < 1)
    return tg_error(TG_ERR_INVALID, "dqn: obs_dim %d, n_actions %d, batch %d and instances %d must be >= 1 (actions >= 2)",
                    c->obs_dim, c->n_actions, c->batch, c->n_act);
  tg_status st = rl_hidden_check("dqn", c->n_hidden, c->hidden);
  if (st == TG_OK && !(c->gamma >= 0.0f && c->gamma <= 1.0f))
    st = tg_error(TG_ERR_INVALID, "dqn: gamma %g must be in [0, 1]", (double)c->gamma);
  return st;
}

static tg_status bind(tg_graph *g, const char *name, tg_device dev, int ndim, const int64_t *shape, float *data) {
  return rl_bind(g, name, dev, TG_F32, ndim, shape, data);
}

static tg_status host_buffers(rl_dqn_net *n) {
  const rl_dqn_net_cfg *c = &n->c;
  size_t B = (size_t)c->batch, A = (size_t)c->n_actions, O = (size_t)c->obs_dim, N = (size_t)c->n_act;
  tg_status st = rl_batch_init(&n->hb, c->batch, c->obs_dim, c->n_actions);
  if (st != TG_OK) return st;
  n->hy = tg_calloc(B, sizeof(float));
  if (!n->hy) return tg_error(TG_ERR_NOMEM, "dqn: out of host memory for the batch");
  if (n->base.host) return TG_OK;
  n->hq_next = tg_calloc(B * A, sizeof(float));
  n->hq_tgt = tg_calloc(B * A, sizeof(float));
  n->hq_act = tg_calloc(N * A, sizeof(float));
  if (!n->hq_next || !n->hq_tgt || !n->hq_act) return tg_error(TG_ERR_NOMEM, "dqn: out of host memory for Q values");
  float **bufs[4] = {&n->d_s, &n->d_s2, &n->d_onehot, &n->d_y};
  size_t count[4] = {B * O, B * O, B * A, B};
  for (int k = 0; k < 4 && st == TG_OK; k++) st = rl_dev_zeros(c->dev, count[k] * sizeof(float), (void **)bufs[k]);
  return st;
}

/* An inference graph: input [rows, O] -> Q [rows, A] over store. */
static tg_graph *q_graph(const rl_dqn_net *n, tg_store *store, const char *name, const char *input, int64_t rows,
                         tg_tensor **q) {
  const rl_dqn_net_cfg *c = &n->c;
  tg_graph *g = tg_graph_new(store, name);
  if (!g) return NULL;
  int64_t xs[2] = {rows, c->obs_dim};
  rl_mlp_spec spec = rl_mlp_torch(Q_PREFIX, c->n_hidden, c->hidden, c->n_actions);
  *q = rl_mlp(g, rl_obs_input(g, &n->base.src, tg_input(g, input, TG_F32, 2, xs)), &spec); /* [rows, A] */
  return g;
}

/* The training graph: Q(s, a) = sum_last(Q(s) * onehot(a)); loss against the input y; mean Q(s, a). */
static tg_graph *train_graph(rl_dqn_net *n) {
  const rl_dqn_net_cfg *c = &n->c;
  tg_graph *g = tg_graph_new(n->base.store, "dqn_train");
  if (!g) return NULL;
  int64_t xs[2] = {c->batch, c->obs_dim}, hs[2] = {c->batch, c->n_actions}, ys[1] = {c->batch};
  rl_mlp_spec spec = rl_mlp_torch(Q_PREFIX, c->n_hidden, c->hidden, c->n_actions);
  tg_tensor *q = rl_mlp(g, rl_obs_input(g, &n->base.src, tg_input(g, "s", TG_F32, 2, xs)), &spec); /* [B, A] */
  tg_tensor *qsa = tg_sum_last(g, tg_mul(g, q, tg_input(g, "onehot", TG_F32, 2, hs))); /* [B] */
  tg_tensor *y = tg_input(g, "y", TG_F32, 1, ys);                           /* [B] */
  n->loss = c->huber ? tg_huber_loss(g, qsa, y, 1.0f) : tg_mse_loss(g, qsa, y); /* [] */
  n->mean_q = tg_mean(g, qsa);                                              /* [] */
  return g;
}

static tg_status build_graphs(rl_dqn_net *n) {
  const rl_dqn_net_cfg *c = &n->c;
  n->train = train_graph(n);
  n->tgt = q_graph(n, n->target, "dqn_target", "s2", c->batch, &n->q_tgt);
  n->base.act = q_graph(n, n->base.store, "dqn_act", "obs", c->n_act, &n->q_act);
  if (c->double_q) n->next = q_graph(n, n->base.store, "dqn_next", "s2", c->batch, &n->q_next);
  if (!n->train || !n->tgt || !n->base.act || (c->double_q && !n->next))
    return tg_error(TG_ERR_NOMEM, "dqn: out of memory building the graphs");
  tg_status st = rl_plan(n->train, c->dev, 1, c->precision);
  if (st == TG_OK) st = rl_plan(n->tgt, c->dev, 0, c->precision);
  if (st == TG_OK) st = rl_plan(n->base.act, c->dev, 0, c->precision);
  if (st == TG_OK && n->next) st = rl_plan(n->next, c->dev, 0, c->precision);
  return st;
}

static tg_status bind_inputs(rl_dqn_net *n) {
  const rl_dqn_net_cfg *c = &n->c;
  int64_t xs[2] = {c->batch, c->obs_dim}, hs[2] = {c->batch, c->n_actions}, ys[1] = {c->batch};
  tg_status st = bind(n->train, "s", c->dev, 2, xs, n->d_s);
  if (st == TG_OK) st = bind(n->train, "onehot", c->dev, 2, hs, n->d_onehot);
  if (st == TG_OK) st = bind(n->train, "y", c->dev, 1, ys, n->d_y);
  if (st == TG_OK) st = bind(n->tgt, "s2", c->dev, 2, xs, n->d_s2);
  if (st == TG_OK && n->next) st = bind(n->next, "s2", c->dev, 2, xs, n->d_s2);
  tg_graph *gs[3] = {n->train, n->tgt, n->next};
  for (int k = 0; k < 3 && st == TG_OK; k++)
    if (gs[k]) st = rl_obs_bind(gs[k], &n->base.src);
  return st == TG_OK ? rl_net_bind_act(&n->base) : st;
}

/* The target store must lay its parameters out exactly as the online one (copies are flat). */
static tg_status same_layout(tg_store *a, tg_store *b) {
  if (tg_store_numel(a) != tg_store_numel(b) || tg_store_count(a) != tg_store_count(b))
    return tg_error(TG_ERR_INVALID, "dqn: the target network has %d parameters (%zu floats), the online one %d (%zu)",
                    tg_store_count(b), tg_store_numel(b), tg_store_count(a), tg_store_numel(a));
  for (int i = 0; i < tg_store_count(a); i++) {
    tg_param_info p = tg_store_param(a, i), q = tg_store_param(b, i);
    if (strcmp(p.name, q.name) != 0 || p.offset != q.offset || p.numel != q.numel)
      return tg_error(TG_ERR_INVALID, "dqn: parameter %d is '%s' online and '%s' in the target network", i, p.name,
                      q.name);
  }
  return TG_OK;
}

tg_status rl_dqn_net_open(rl_dqn_net *n, const rl_dqn_net_cfg *c) {
  memset(n, 0, sizeof *n);
  tg_status st = cfg_check(c);
  if (st != TG_OK) return st;
  n->c = *c;
  st = rl_net_open(&n->base, "dqn", c->dev, c->seed, c->n_act, c->obs_dim, c->env);
  if (st == TG_OK && !(n->target = tg_store_new(c->dev, c->seed)))
    st = tg_error(TG_ERR_NOMEM, "dqn: out of memory for the target network's store");
  if (st == TG_OK) st = host_buffers(n);
  if (st == TG_OK && n->base.host) {
    n->d_s = n->hb.s, n->d_s2 = n->hb.s2, n->d_onehot = n->hb.onehot, n->d_y = n->hy;
  }
  if (st == TG_OK) st = build_graphs(n);
  if (st == TG_OK) st = tg_store_finalize(n->target);
  if (st == TG_OK) st = same_layout(n->base.store, n->target);
  if (st == TG_OK) st = bind_inputs(n);
  if (st == TG_OK) st = rl_net_train(&n->base, n->train, n->loss, &c->optim);
  if (st == TG_OK) st = rl_dqn_net_update_target(n, 1.0f); /* the target starts as a copy */
  if (st == TG_OK) return TG_OK;
  rl_error e = rl_error_keep(st);
  rl_dqn_net_close(n);
  return rl_error_raise(&e);
}

void rl_dqn_net_close(rl_dqn_net *n) {
  tg_graph *const graphs[3] = {n->train, n->next, n->tgt};
  rl_net_close(&n->base, graphs, 3);
  tg_store_free(n->target);
  if (!n->base.host) {
    void *bufs[4] = {n->d_s, n->d_s2, n->d_onehot, n->d_y};
    rl_dev_free(n->c.dev, bufs, 4);
  }
  rl_batch_free(&n->hb);
  tg_free(n->hy);
  tg_free(n->hq_next);
  tg_free(n->hq_tgt);
  tg_free(n->hq_act);
  tg_free(n->mix);
  memset(n, 0, sizeof *n);
}

/* The host view of a graph output [count floats]: the arena itself on the CPU, else a copy. */
static tg_status read_out(rl_dqn_net *n, const tg_tensor *t, float *host, size_t count, const float **out) {
  return rl_read_out(n->base.host, n->c.dev, t, host, count, out);
}

tg_status rl_dqn_net_targets(rl_dqn_net *n) {
  const rl_dqn_net_cfg *c = &n->c;
  const tg_backend *be = tg_backend_for(c->dev.kind);
  size_t B = (size_t)c->batch, A = (size_t)c->n_actions;
  const float *qt = NULL, *qn = NULL;
  tg_status st = n->base.host ? TG_OK : be->from_host(c->dev, n->d_s2, n->hb.s2, B * (size_t)c->obs_dim * sizeof(float));
  if (st == TG_OK && n->next) st = tg_graph_run(n->next);
  if (st == TG_OK) st = tg_graph_run(n->tgt);
  if (st == TG_OK && n->next) st = read_out(n, n->q_next, n->hq_next, B * A, &qn);
  if (st == TG_OK) st = read_out(n, n->q_tgt, n->hq_tgt, B * A, &qt);
  if (st != TG_OK) return st;
  for (size_t b = 0; b < B; b++) {
    const float *row = qt + b * A; /* [A] */
    float v = qn ? row[rl_argmax(qn + b * A, (int)A)] : row[rl_argmax(row, (int)A)];
    n->hy[b] = n->hb.reward[b] + c->gamma * v * (1.0f - n->hb.term[b]);
  }
  return TG_OK;
}

tg_status rl_dqn_net_learn_batch(rl_dqn_net *n, float *loss, float *mean_q) {
  const rl_dqn_net_cfg *c = &n->c;
  const tg_backend *be = tg_backend_for(c->dev.kind);
  size_t B = (size_t)c->batch;
  tg_status st = rl_dqn_net_targets(n);
  if (st == TG_OK && !n->base.host) {
    st = be->from_host(c->dev, n->d_s, n->hb.s, B * (size_t)c->obs_dim * sizeof(float));
    if (st == TG_OK) st = be->from_host(c->dev, n->d_onehot, n->hb.onehot, B * (size_t)c->n_actions * sizeof(float));
    if (st == TG_OK) st = be->from_host(c->dev, n->d_y, n->hy, B * sizeof(float));
  }
  float l = NAN;
  if (st == TG_OK) st = tg_step_run(n->base.step, &l);
  if (st != TG_OK) return st;
  if (loss) *loss = l;
  if (mean_q) {
    if (n->base.host) *mean_q = *(const float *)n->mean_q->data;
    else st = be->to_host(c->dev, mean_q, n->mean_q->data, sizeof(float));
  }
  return st;
}

tg_status rl_dqn_net_learn(rl_dqn_net *n, rl_replay *r, float *loss, float *mean_q) {
  if (r->size < 1) return tg_error(TG_ERR_INVALID, "dqn: the replay buffer is empty; nothing to learn from");
  rl_replay_sample(r, &n->hb);
  return rl_dqn_net_learn_batch(n, loss, mean_q);
}

tg_status rl_dqn_net_q(rl_dqn_net *n, const float *obs, const float **q) {
  tg_status st = rl_net_act(&n->base, obs);
  return st == TG_OK ? read_out(n, n->q_act, n->hq_act, (size_t)n->c.n_act * (size_t)n->c.n_actions, q) : st;
}

/* Polyak on the host: t = tau * o + (1 - tau) * t in float32, as torch computes it. */
static void polyak(float *t, const float *o, size_t count, float tau) {
  float keep = (float)(1.0 - (double)tau);
  for (size_t i = 0; i < count; i++) t[i] = tau * o[i] + keep * t[i];
}

tg_status rl_dqn_net_update_target(rl_dqn_net *n, float tau) {
  const tg_backend *be = tg_backend_for(n->c.dev.kind);
  size_t count = tg_store_numel(n->base.store);
  const float *on = tg_store_values_read(n->base.store);
  float *tv = tg_store_values(n->target);
  if (!(tau > 0.0f && tau <= 1.0f)) return tg_error(TG_ERR_INVALID, "dqn: target update tau %g must be in (0, 1]", (double)tau);
  if (tau == 1.0f) return be->copy(n->c.dev, tv, on, count * sizeof(float));
  if (n->base.host) {
    polyak(tv, on, count, tau);
    return TG_OK;
  }
  /* on a device: through the host (a rare update; a device kernel would avoid the round trip) */
  if (!n->mix && !(n->mix = tg_malloc(2 * count * sizeof(float))))
    return tg_error(TG_ERR_NOMEM, "dqn: out of host memory for a Polyak update of %zu floats", count);
  tg_status st = be->to_host(n->c.dev, n->mix, on, count * sizeof(float));
  if (st == TG_OK) st = be->to_host(n->c.dev, n->mix + count, tv, count * sizeof(float));
  if (st != TG_OK) return st;
  polyak(n->mix + count, n->mix, count, tau);
  return be->from_host(n->c.dev, tv, n->mix + count, count * sizeof(float));
}
