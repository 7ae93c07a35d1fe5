/* PPO's networks: separate actor and critic MLPs (tanh, orthogonal init), the acting graph and one minibatch update. */
#include <math.h>
#include <string.h>
#include "graph/backend.h"
#include "agents/ppo_internal.h"
#include "tickgrad/device.h"

static tg_status ppo_cfg_check(const rl_ppo_net_cfg *c) {
  if (c->obs_dim < 1 || c->n_actions < 1 || c->n_act < 1 || c->mb < 2)
    return tg_error(TG_ERR_INVALID, "ppo: obs_dim %d, n_actions %d and instances %d must be >= 1, the minibatch %d >= 2",
                    c->obs_dim, c->n_actions, c->n_act, c->mb);
  return rl_hidden_check("ppo", c->n_hidden, c->hidden);
}

/* CleanRL's layer_init: orthogonal weights (hidden gain sqrt 2, the head's gain given), zero biases. */
static rl_mlp_spec ppo_spec(const rl_ppo_net_cfg *c, const char *prefix, int out, float head_gain) {
  return rl_mlp_orthogonal(prefix, c->n_hidden, c->hidden, out, head_gain);
}

/* The acting graph: obs [n_act, O] -> logits [n_act, A] and value [n_act, 1]. */
static tg_graph *act_graph(rl_ppo_net *n) {
  const rl_ppo_net_cfg *c = &n->c;
  tg_graph *g = tg_graph_new(n->base.store, "ppo_act");
  if (!g) return NULL;
  int64_t xs[2] = {c->n_act, c->obs_dim};
  rl_mlp_spec as = ppo_spec(c, "actor", c->n_actions, 0.01f), cs = ppo_spec(c, "critic", 1, 1.0f);
  tg_tensor *x = rl_obs_input(g, &n->base.src, tg_input(g, "obs", TG_F32, 2, xs)); /* [n_act, width] */
  n->act_logits = rl_mlp(g, x, &as); /* [n_act, A] */
  n->act_value = rl_mlp(g, x, &cs);  /* [n_act, 1] */
  return g;
}

/* The training graph over one minibatch of M: stats [TG_PPO_NSTATS]; loss = stats[0]; a view of the
 * stats that nothing consumes keeps them readable after the step. */
static tg_graph *train_graph(rl_ppo_net *n) {
  const rl_ppo_net_cfg *c = &n->c;
  tg_graph *g = tg_graph_new(n->base.store, "ppo_train");
  if (!g) return NULL;
  int64_t xs[2] = {c->mb, c->obs_dim}, ms[1] = {c->mb}, ns[1] = {TG_PPO_NSTATS};
  rl_mlp_spec as = ppo_spec(c, "actor", c->n_actions, 0.01f), cs = ppo_spec(c, "critic", 1, 1.0f);
  tg_tensor *x = rl_obs_input(g, &n->base.src, tg_input(g, "obs", TG_F32, 2, xs)); /* [M, width] */
  tg_tensor *logits = rl_mlp(g, x, &as); /* [M, A] */
  tg_tensor *value = rl_mlp(g, x, &cs);  /* [M, 1] */
  tg_tensor *olp = tg_input(g, "old_logp", TG_F32, 1, ms), *adv = tg_input(g, "adv", TG_F32, 1, ms);
  tg_tensor *ret = tg_input(g, "returns", TG_F32, 1, ms), *ov = tg_input(g, "old_value", TG_F32, 1, ms);
  tg_tensor *stats; /* [NSTATS] */
  if (c->continuous) { /* logits are the Gaussian's means [M, A]; log_std as CleanRL's actor_logstd [1, A] */
    int64_t as[2] = {c->mb, c->n_actions}, ls_shape[2] = {1, c->n_actions}, ls_flat[1] = {c->n_actions};
    tg_tensor *ls = tg_param(g, "actor_logstd", 2, ls_shape, (tg_init){TG_INIT_ZEROS, 0, 0});
    tg_tensor *act = tg_input(g, "actions", TG_F32, 2, as);
    stats = tg_ppo_loss_gaussian(g, logits, tg_reshape(g, ls, 1, ls_flat), value, act, olp, adv, ret, ov, &c->coefs);
  } else {
    tg_tensor *act = tg_input(g, "actions", TG_I32, 1, ms);
    stats = tg_ppo_loss(g, logits, value, act, olp, adv, ret, ov, &c->coefs);
  }
  n->loss = tg_slice(g, stats, 0, TG_PPO_LOSS, 1);                                   /* [1] */
  n->stats = tg_reshape(g, stats, 1, ns);                                              /* [NSTATS], kept */
  return g;
}

tg_status rl_ppo_mb_init(rl_ppo_mb *mb, int m, int obs_dim, int act_dim) {
  memset(mb, 0, sizeof *mb);
  if (act_dim > 0 && !(mb->action_f = tg_calloc((size_t)m * (size_t)act_dim, sizeof(float))))
    return tg_error(TG_ERR_NOMEM, "ppo: out of host memory for a minibatch of %d", m);
  mb->obs = tg_calloc((size_t)m * (size_t)obs_dim, sizeof(float));
  mb->action = tg_calloc((size_t)m, sizeof(int32_t));
  mb->logp = tg_calloc((size_t)m, sizeof(float));
  mb->adv = tg_calloc((size_t)m, sizeof(float));
  mb->ret = tg_calloc((size_t)m, sizeof(float));
  mb->value = tg_calloc((size_t)m, sizeof(float));
  if (!mb->obs || !mb->action || !mb->logp || !mb->adv || !mb->ret || !mb->value)
    return tg_error(TG_ERR_NOMEM, "ppo: out of host memory for a minibatch of %d", m);
  return TG_OK;
}

void rl_ppo_mb_free(rl_ppo_mb *mb) {
  tg_free(mb->obs);
  tg_free(mb->action);
  tg_free(mb->action_f);
  tg_free(mb->logp);
  tg_free(mb->adv);
  tg_free(mb->ret);
  tg_free(mb->value);
  memset(mb, 0, sizeof *mb);
}

/* Bytes of a minibatch's actions: int32 [M] or float [M, A]. */
static size_t mb_action_bytes(const rl_ppo_net_cfg *c) {
  return c->continuous ? (size_t)c->mb * (size_t)c->n_actions * sizeof(float) : (size_t)c->mb * sizeof(int32_t);
}

/* Where the training graph reads its minibatch: the host minibatch itself when host, else device
 * buffers of the same layout. */
static tg_status device_mb(rl_ppo_net *n) {
  const rl_ppo_net_cfg *c = &n->c;
  if (n->base.host) {
    n->dmb = n->hb;
    return TG_OK;
  }
  size_t m = (size_t)c->mb;
  void **bufs[6] = {(void **)&n->dmb.obs, c->continuous ? (void **)&n->dmb.action_f : (void **)&n->dmb.action,
                    (void **)&n->dmb.logp, (void **)&n->dmb.adv, (void **)&n->dmb.ret, (void **)&n->dmb.value};
  size_t bytes[6] = {m * (size_t)c->obs_dim * sizeof(float), mb_action_bytes(c), m * sizeof(float), m * sizeof(float),
                     m * sizeof(float), m * sizeof(float)};
  for (int k = 0; k < 6; k++) {
    tg_status st = rl_dev_zeros(c->dev, bytes[k], bufs[k]);
    if (st != TG_OK) return st;
  }
  n->h_logits = tg_calloc((size_t)c->n_act * (size_t)c->n_actions, sizeof(float));
  n->h_value = tg_calloc((size_t)c->n_act, sizeof(float));
  n->h_stats = tg_calloc(TG_PPO_NSTATS, sizeof(float));
  n->h_log_std = tg_calloc((size_t)c->n_actions, sizeof(float));
  if (!n->h_logits || !n->h_value || !n->h_stats || !n->h_log_std) return tg_error(TG_ERR_NOMEM, "ppo: out of host memory");
  return TG_OK;
}

static tg_status bind_train(rl_ppo_net *n) {
  const rl_ppo_net_cfg *c = &n->c;
  int64_t xs[2] = {c->mb, c->obs_dim}, ms[1] = {c->mb};
  tg_graph *g = n->train;
  tg_status st = rl_bind(g, "obs", c->dev, TG_F32, 2, xs, n->dmb.obs);
  int64_t as[2] = {c->mb, c->n_actions};
  if (st == TG_OK && c->continuous) st = rl_bind(g, "actions", c->dev, TG_F32, 2, as, n->dmb.action_f);
  if (st == TG_OK && !c->continuous) st = rl_bind(g, "actions", c->dev, TG_I32, 1, ms, n->dmb.action);
  if (st == TG_OK) st = rl_bind(g, "old_logp", c->dev, TG_F32, 1, ms, n->dmb.logp);
  if (st == TG_OK) st = rl_bind(g, "adv", c->dev, TG_F32, 1, ms, n->dmb.adv);
  if (st == TG_OK) st = rl_bind(g, "returns", c->dev, TG_F32, 1, ms, n->dmb.ret);
  if (st == TG_OK) st = rl_bind(g, "old_value", c->dev, TG_F32, 1, ms, n->dmb.value);
  if (st == TG_OK) st = rl_net_bind_act(&n->base);
  return st == TG_OK ? rl_obs_bind(n->train, &n->base.src) : st;
}

tg_status rl_ppo_net_open(rl_ppo_net *n, const rl_ppo_net_cfg *c) {
  memset(n, 0, sizeof *n);
  tg_status st = ppo_cfg_check(c);
  if (st != TG_OK) return st;
  n->c = *c;
  st = rl_net_open(&n->base, "ppo", c->dev, c->seed, c->n_act, c->obs_dim, c->env);
  if (st == TG_OK) st = rl_ppo_mb_init(&n->hb, c->mb, c->obs_dim, c->continuous ? c->n_actions : 0);
  if (st == TG_OK) st = device_mb(n);
  if (st == TG_OK) {
    n->base.act = act_graph(n);
    n->train = train_graph(n);
    if (!n->base.act || !n->train) st = tg_error(TG_ERR_NOMEM, "ppo: out of memory building the graphs");
  }
  if (st == TG_OK) st = rl_plan(n->base.act, c->dev, 0, c->precision);
  if (st == TG_OK) st = rl_plan(n->train, c->dev, 1, c->precision);
  if (st == TG_OK) st = bind_train(n);
  if (st == TG_OK) st = rl_net_train(&n->base, n->train, n->loss, &c->optim);
  n->log_std_index = c->continuous && st == TG_OK ? tg_store_find(n->base.store, "actor_logstd") : -1;
  if (st == TG_OK) return TG_OK;
  rl_error e = rl_error_keep(st);
  rl_ppo_net_close(n);
  return rl_error_raise(&e);
}

void rl_ppo_net_close(rl_ppo_net *n) {
  rl_net_close(&n->base, &n->train, 1);
  if (!n->base.host) {
    void *bufs[7] = {n->dmb.obs, n->dmb.action, n->dmb.action_f, n->dmb.logp, n->dmb.adv, n->dmb.ret, n->dmb.value};
    rl_dev_free(n->c.dev, bufs, 7);
  }
  rl_ppo_mb_free(&n->hb);
  tg_free(n->h_logits);
  tg_free(n->h_value);
  tg_free(n->h_stats);
  tg_free(n->h_log_std);
  memset(n, 0, sizeof *n);
}

/* The host view of count floats of a graph output: the arena itself when host, else a copy. */
static tg_status read_out(rl_ppo_net *n, const tg_tensor *t, float *host, size_t count, const float **out) {
  return rl_read_out(n->base.host, n->c.dev, t, host, count, out);
}

tg_status rl_ppo_net_eval(rl_ppo_net *n, const float *obs, const float **logits, const float **value) {
  const rl_ppo_net_cfg *c = &n->c;
  size_t rows = (size_t)c->n_act;
  tg_status st = rl_net_act(&n->base, obs);
  if (st == TG_OK && logits) st = read_out(n, n->act_logits, n->h_logits, rows * (size_t)c->n_actions, logits);
  if (st == TG_OK && value) st = read_out(n, n->act_value, n->h_value, rows, value);
  return st;
}

tg_status rl_ppo_net_learn(rl_ppo_net *n, const float **stats) {
  const rl_ppo_net_cfg *c = &n->c;
  tg_status st = TG_OK;
  if (!n->base.host) {
    const tg_backend *be = tg_backend_for(c->dev.kind);
    size_t m = (size_t)c->mb;
    int cont = c->continuous;
    const void *src[6] = {n->hb.obs, cont ? (void *)n->hb.action_f : (void *)n->hb.action, n->hb.logp, n->hb.adv,
                          n->hb.ret, n->hb.value};
    void *dst[6] = {n->dmb.obs, cont ? (void *)n->dmb.action_f : (void *)n->dmb.action, n->dmb.logp, n->dmb.adv,
                    n->dmb.ret, n->dmb.value};
    size_t bytes[6] = {m * (size_t)c->obs_dim * sizeof(float), mb_action_bytes(c), m * sizeof(float),
                       m * sizeof(float), m * sizeof(float), m * sizeof(float)};
    for (int k = 0; k < 6 && st == TG_OK; k++) st = be->from_host(c->dev, dst[k], src[k], bytes[k]);
  }
  float loss = NAN;
  if (st == TG_OK) st = tg_step_run(n->base.step, &loss);
  if (st == TG_OK && stats) st = read_out(n, n->stats, n->h_stats, TG_PPO_NSTATS, stats);
  return st;
}

tg_status rl_ppo_net_log_std(rl_ppo_net *n, const float **log_std) {
  if (n->log_std_index < 0) return tg_error(TG_ERR_INVALID, "ppo: log_std of a discrete policy");
  /* [1, A] in the store, only read (a values view would count as a write and make the bf16 mirror again) */
  const float *ls = tg_store_values_read(n->base.store) + tg_store_param(n->base.store, n->log_std_index).offset;
  *log_std = n->base.host ? ls : n->h_log_std;
  if (n->base.host) return TG_OK;
  return tg_backend_for(n->c.dev.kind)->to_host(n->c.dev, n->h_log_std, ls, (size_t)n->c.n_actions * sizeof(float));
}

float rl_gaussian_sample(const float *mu, const float *ls, const float *eps, int A, float *x) {
  double logp = 0.0;
  for (int d = 0; d < A; d++) {
    double sg = exp((double)ls[d]);
    x[d] = (float)((double)mu[d] + sg * (double)eps[d]);
    double z = ((double)x[d] - mu[d]) / sg; /* of the float action, as the loss will see it */
    logp += -0.5 * z * z - (double)ls[d] - 0.91893853320467274178;
  }
  return (float)logp;
}

/* Inverse CDF of the softmax of l [A] at u in [0, 1), in float64; *logp = log pi(action). */
int rl_categorical_sample(const float *l, int A, float u, float *logp) {
  double m = l[0], z = 0.0;
  for (int k = 1; k < A; k++)
    if (l[k] > m) m = l[k];
  for (int k = 0; k < A; k++) z += exp((double)l[k] - m);
  double target = (double)u * z, cum = 0.0;
  int a = A - 1;
  for (int k = 0; k < A; k++) {
    cum += exp((double)l[k] - m);
    if (target < cum) {
      a = k;
      break;
    }
  }
  *logp = (float)((double)l[a] - m - log(z));
  return a;
}
