/* The agents' internal pieces: env state, MLPs and graph plumbing, replay and DQN's networks; PPO's rollout and networks. */
#ifndef TG_RL_INTERNAL_H
#define TG_RL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "tickgrad/graph.h"
#include "tickgrad/optim.h"
#include "tickgrad/rl.h"
#include "tickgrad/step.h"

/* Philox streams of the agents' random draws (the key is the run's seed). */
#define RL_STREAM_REPLAY 0x5245504c00000000ull /* "REPL": replay indices */
#define RL_STREAM_ACT 0x4143540000000000ull    /* "ACT": epsilon coins and random actions */

#define RL_MAX_HIDDEN 8

/* ---- env_state.c: an environment's whole state as bytes, for checkpoints that resume bitwise ---- */

/* Bytes of e's state (0: this kind cannot save it). */
size_t tg_env_state_size(const tg_env *e);
/* Writes the state into buf [size bytes], size = tg_env_state_size(e). */
tg_status tg_env_save_state(const tg_env *e, void *buf, size_t size);
/* Restores a state saved from an env of the same kind and spec (the env then steps as the saved one
 * would have, without a reset). */
tg_status tg_env_load_state(tg_env *e, const void *buf, size_t size);

/* ---- rl_mlp.c: an MLP graph, parameters named as torch's nn.Sequential names them ---- */

typedef struct rl_mlp_spec {
  const char *prefix; /* parameters "<prefix>.<2k>.weight" [out_k, in_k] and "<prefix>.<2k>.bias" [out_k] */
  int n_hidden;       /* hidden layers, 0..RL_MAX_HIDDEN */
  int hidden[RL_MAX_HIDDEN];
  int out;            /* output width */
  int tanh;           /* activation between layers: 0 ReLU, 1 tanh */
  /* inits of hidden and output layers; a bias with TG_INIT_FAN_IN gets U(-1/sqrt(in), 1/sqrt(in)) of its
   * layer's input width, as torch.nn.Linear (the store's FAN_IN would read the bias's own length) */
  tg_init hidden_w, hidden_b, out_w, out_b;
} rl_mlp_spec;

/* ReLU layers with PyTorch Linear's default init (weights and biases U(+-1/sqrt(in))). */
rl_mlp_spec rl_mlp_torch(const char *prefix, int n_hidden, const int *hidden, int out);
/* tanh layers with CleanRL's layer_init: orthogonal weights (hidden gain sqrt 2, the head's gain
 * head_gain), zero biases. */
rl_mlp_spec rl_mlp_orthogonal(const char *prefix, int n_hidden, const int *hidden, int out, float head_gain);
/* x [B, in] f32 -> [B, out]: linear, activation, ..., linear (no activation after the last). */
tg_tensor *rl_mlp(tg_graph *g, tg_tensor *x, const rl_mlp_spec *s);

/* ---- rl_obs.c: the networks' input from observations. A trading env with omit_window observes
 * [t, position, unrealised] [B, 3]; the agent holds the env's feature table [rows, F] on its device
 * (uploaded once) and its graphs gather the window there: the network input is
 *   concat([reshape(gather_rows(table, window_rows(obs[:, 0], W)), [B, W*F]), obs[:, 1:3]], 1)
 * [B, W*F + 2], the very values a copying env writes, in the same order. Other envs: obs itself. ---- */

#define RL_OBS_TABLE "obs_table" /* the graphs' input name of the feature table */

typedef struct rl_obs_src {
  int gather;      /* 1: obs rows are [t, position, unrealised] and windows are gathered from table */
  int window, f;   /* gather: W bars of F features */
  int64_t rows;    /* gather: rows of the table */
  tg_device dev;
  float *table;    /* gather: [rows, f] on dev, owned */
} rl_obs_src;

/* Zeroed (no gather) unless env is a trading env with omit_window; then uploads its table to dev.
 * env may be NULL. */
tg_status rl_obs_open(rl_obs_src *o, const tg_env *env, tg_device dev);
void rl_obs_close(rl_obs_src *o);
/* The network input [B, width] from obs [B, obs_dim] (obs itself unless gathering; then the table is
 * the graph's input RL_OBS_TABLE, bound by rl_obs_bind after planning). */
tg_tensor *rl_obs_input(tg_graph *g, const rl_obs_src *o, tg_tensor *obs);
/* Binds the table into g (no-op unless gathering). */
tg_status rl_obs_bind(tg_graph *g, const rl_obs_src *o);

/* ---- rl_graph.c: planning, binding and reading the agents' graphs on the host or a device ---- */

/* TG_ERR_DEVICE "<what>: cuda:0 is not compiled into this build" when dev has no backend. */
tg_status rl_backend_check(const char *what, tg_device dev);
/* n_hidden in 0..RL_MAX_HIDDEN and every width >= 1; errors start "<what>: ". */
tg_status rl_hidden_check(const char *what, int n_hidden, const int *hidden);
/* The graph's sticky status, else its plan on dev (for training or inference). */
tg_status rl_plan(tg_graph *g, tg_device dev, int training, tg_precision precision);
/* An agent run's precision settled on dev for its widest hidden layer (auto: decided once, kept in config.json),
 * with tg_precision_resolve's notice on log (may be NULL). */
void rl_precision_settle(tg_precision *precision, tg_device dev, const int *hidden, int n_hidden, FILE *log);
/* Binds data [shape] of dtype dt on dev as the graph's input name. */
tg_status rl_bind(tg_graph *g, const char *name, tg_device dev, tg_dtype dt, int ndim, const int64_t *shape, void *data);
/* A host view of count floats of the output t: its arena memory when host, else a copy into copy. */
tg_status rl_read_out(int host, tg_device dev, const tg_tensor *t, float *copy, size_t count, const float **out);
/* A zeroed device buffer of bytes into *out. */
tg_status rl_dev_zeros(tg_device dev, size_t bytes, void **out);
/* Frees the non-NULL device buffers bufs [n]. */
void rl_dev_free(tg_device dev, void *const *bufs, int n);

/* ---- rl_net.c: what DQN's and PPO's networks share ---- */

typedef struct rl_net {
  tg_device dev;
  /* cpu:0 (tg_device_is_host): inputs alias host buffers, outputs are read in place. Every other device copies,
   * cpu:1 too although its memory is the host's, so that the CPU tests run the device path */
  int host;
  int n_act, obs_dim;  /* the acting graph's input [n_act, obs_dim] */
  tg_store *store;     /* the trained parameters (DQN: the online network) */
  tg_graph *act;       /* over store: "obs" [n_act, obs_dim] -> the acting outputs (inference) */
  tg_optim *opt;
  tg_step *step;
  float *d_obs;        /* [n_act, obs_dim] the acting input on the device (NULL when host) */
  rl_obs_src src;      /* the observations' front-end (the feature table when gathering) */
} rl_net;

/* Fills b (zeroed by the caller) for dev: the device check ("<what>: "), the store of seed, the acting input on
 * the device and the observations' front-end of env (may be NULL). On failure the caller closes b. */
tg_status rl_net_open(rl_net *b, const char *what, tg_device dev, uint64_t seed, int n_act, int obs_dim, const tg_env *env);
/* Binds b->act's inputs (planned): the device's obs buffer unless host, and the feature table. */
tg_status rl_net_bind_act(rl_net *b);
/* The optimizer over b->store and the step of train's loss. */
tg_status rl_net_train(rl_net *b, tg_graph *train, tg_tensor *loss, const tg_optim_config *optim);
/* Runs b->act on obs [n_act, obs_dim] (host): bound in place when host, else copied to the device. */
tg_status rl_net_act(rl_net *b, const float *obs);
/* Frees b: the step and optimizer, then graphs [n] (those over b->store besides act), act, the store and buffers. */
void rl_net_close(rl_net *b, tg_graph *const *graphs, int n);

/* An open's error kept across the cleanup after it failed (closing may set another): keep, close, raise. */
typedef struct rl_error {
  tg_status st;
  char why[1024];
} rl_error;
rl_error rl_error_keep(tg_status st);
tg_status rl_error_raise(const rl_error *e);

/* ---- replay.c: ring buffer of transitions, uniform sampling with replacement ---- */

typedef struct rl_replay {
  int64_t cap, size, pos; /* capacity, rows filled, next row written */
  int obs_dim;
  float *obs;       /* [cap, obs_dim] s */
  float *next_obs;  /* [cap, obs_dim] the true s' (final observation where the episode ended) */
  int32_t *action;  /* [cap] */
  float *reward;    /* [cap] */
  float *term;      /* [cap] 1 where the episode terminated (truncation is 0: it bootstraps) */
  uint64_t seed;
  uint64_t draws;   /* indices drawn so far: the sampler's whole position */
} rl_replay;

/* A sampled batch in host memory: the rows of s, s', a as a one-hot, r, terminated. */
typedef struct rl_batch {
  int64_t b;
  int obs_dim, n_actions;
  float *s;       /* [b, obs_dim] */
  float *s2;      /* [b, obs_dim] */
  float *onehot;  /* [b, n_actions] */
  int32_t *action; /* [b] */
  float *reward;  /* [b] */
  float *term;    /* [b] */
} rl_batch;

tg_status rl_replay_init(rl_replay *r, int64_t cap, int obs_dim, uint64_t seed);
void rl_replay_free(rl_replay *r);
/* Appends n transitions (rows of obs and next_obs [n, obs_dim], action, reward, terminated [n]),
 * overwriting the oldest once full. */
void rl_replay_add(rl_replay *r, int n, const float *obs, const float *next_obs, const int32_t *action,
                   const float *reward, const uint8_t *terminated);
/* Row k of the next draw: uniform in [0, size) from Philox (seed, RL_STREAM_REPLAY), word k % 4 of
 * counter k / 4, k = draws + j. Writes b->b rows into b and advances draws by b->b. size must be > 0. */
void rl_replay_sample(rl_replay *r, rl_batch *b);
/* Uniform integer in [0, n) from one 32-bit word (multiply-shift). */
static inline int64_t rl_u32_below(uint32_t w, int64_t n) { return (int64_t)(((uint64_t)w * (uint64_t)n) >> 32); }

tg_status rl_batch_init(rl_batch *b, int64_t rows, int obs_dim, int n_actions);
void rl_batch_free(rl_batch *b);

/* ---- dqn_net.c: the online and target Q-networks, the TD target and one training step ---- */

typedef struct rl_dqn_net_cfg {
  tg_device dev;
  int obs_dim, n_actions;
  int n_hidden, hidden[RL_MAX_HIDDEN];
  int batch;      /* training batch */
  int n_act;      /* rows of the acting graph (environment instances) */
  int double_q;   /* 1: Double DQN target */
  int huber;      /* 1: Huber loss (delta 1), 0: MSE */
  float gamma;
  tg_optim_config optim;
  uint64_t seed;  /* initialisation (the target starts as a copy of the online net) */
  tg_precision precision;
  const tg_env *env; /* NULL, or the env: a trading env with omit_window has its windows gathered (rl_obs.c) */
} rl_dqn_net_cfg;

typedef struct rl_dqn_net {
  rl_dqn_net_cfg c;
  rl_net base;              /* the online network: its store, optimizer and step; act: obs [n_act, O] -> Q [n_act, A] */
  tg_store *target;
  tg_graph *train;          /* online store: s, onehot, y -> loss (training plan) */
  tg_graph *next;           /* online store: s2 -> Q(s2) [B, A] (Double DQN only) */
  tg_graph *tgt;            /* target store: s2 -> Q_target(s2) [B, A] */
  tg_tensor *loss, *mean_q, *q_next, *q_tgt, *q_act;
  rl_batch hb;              /* host batch; y in hy */
  float *hy;                /* [B] TD targets (host) */
  float *hq_next, *hq_tgt;  /* [B, A] host copies of the target graphs' outputs (device builds) */
  float *hq_act;            /* [n_act, A] host copy of the acting Q values (device builds) */
  float *d_s, *d_s2, *d_onehot, *d_y; /* training inputs on the device (== host buffers when host) */
  float *mix;               /* [2 * numel] host scratch for Polyak updates on a device */
} rl_dqn_net;

tg_status rl_dqn_net_open(rl_dqn_net *n, const rl_dqn_net_cfg *c);
void rl_dqn_net_close(rl_dqn_net *n);
/* The TD targets of the batch in n->hb into n->hy:
 *   y = r + gamma * (1 - term) * Q_target(s2, argmax_a Q(s2, a))   (Double DQN)
 *   y = r + gamma * (1 - term) * max_a Q_target(s2, a)              (DQN)
 * in float32, in CleanRL's order of operations; argmax takes the first maximum (as torch). */
tg_status rl_dqn_net_targets(rl_dqn_net *n);
/* One gradient step on the batch in n->hb (targets, forward, backward, Adam). loss and mean_q (the
 * batch's mean Q(s, a) before the update) may be NULL. */
tg_status rl_dqn_net_learn_batch(rl_dqn_net *n, float *loss, float *mean_q);
/* Samples a batch from r, then rl_dqn_net_learn_batch. */
tg_status rl_dqn_net_learn(rl_dqn_net *n, rl_replay *r, float *loss, float *mean_q);
/* Q values of obs [n_act, O] (host) into the host array q [n_act, A] it returns in *q. */
tg_status rl_dqn_net_q(rl_dqn_net *n, const float *obs, const float **q);
/* theta_target <- tau * theta + (1 - tau) * theta_target (tau = 1: a copy), in float32. */
tg_status rl_dqn_net_update_target(rl_dqn_net *n, float tau);
/* First index of the maximum of q[0..a). */
int rl_argmax(const float *q, int a);

/* ---- rollout.c: PPO's rollout buffer, GAE and minibatches ---- */

typedef struct rl_rollout {
  int T, N, obs_dim; /* steps, environment instances, floats per observation */
  int act_dim;       /* 0: discrete actions (action); > 0: continuous ones of this size (action_f) */
  float *obs;        /* [T, N, obs_dim] the observation acted on at step t */
  int32_t *action;   /* [T, N] discrete actions */
  float *action_f;   /* [T, N, act_dim] continuous actions as sampled (unclipped); NULL when discrete */
  float *logp;       /* [T, N] log pi(action) when sampled */
  float *value;      /* [T, N] V(obs) when sampled */
  float *reward;     /* [T, N] */
  uint8_t *done;     /* [T, N] obs[t] starts a new episode (the step before ended one; CleanRL's dones[t]) */
  float *adv;        /* [T, N] GAE advantages */
  float *ret;        /* [T, N] adv + value */
} rl_rollout;

/* A minibatch in host memory (or, in rl_ppo_net.dmb, device memory of the same layout). */
typedef struct rl_ppo_mb {
  float *obs;      /* [M, obs_dim] */
  int32_t *action; /* [M] discrete actions */
  float *action_f; /* [M, act_dim] continuous actions (NULL when discrete) */
  float *logp;     /* [M] */
  float *adv;      /* [M] */
  float *ret;      /* [M] */
  float *value;    /* [M] */
} rl_ppo_mb;

/* act_dim 0: discrete actions; > 0: continuous actions of that many floats. */
tg_status rl_rollout_init(rl_rollout *r, int T, int N, int obs_dim, int act_dim);
void rl_rollout_free(rl_rollout *r);
/* GAE(lambda) over T steps of N instances ([T, N] arrays, index t * N + i), CleanRL's loop:
 *   next_nonterminal = 1 - done[t + 1] (1 - next_done at t = T - 1), next_v = value[t + 1] (next_value)
 *   delta = reward[t] + gamma next_v next_nonterminal - value[t]
 *   adv[t] = delta + gamma lambda next_nonterminal adv[t + 1];  ret[t] = adv[t] + value[t]
 * computed in float64, stored as float. next_value, next_done: [N]. */
void rl_gae(const float *reward, const float *value, const uint8_t *done, const float *next_value,
            const uint8_t *next_done, int T, int N, float gamma, float lambda, float *adv, float *ret);
void rl_rollout_gae(rl_rollout *r, const float *next_value, const uint8_t *next_done, float gamma, float lambda);
/* A uniform permutation of [0, n) (Fisher-Yates; swap i uses word 0 of Philox (seed, stream, i)). */
void rl_permutation(uint64_t seed, uint64_t stream, int32_t n, int32_t *perm);
/* Rows idx[0..m) of the flattened rollout (row t * N + i) into mb. */
void rl_rollout_gather(const rl_rollout *r, const int32_t *idx, int m, const rl_ppo_mb *mb);

/* ---- ppo_net.c: PPO's actor and critic, the acting graph and one minibatch update ---- */

#define RL_STREAM_PPO_ACT 0x50504f4100000000ull  /* "PPOA": action draws, counter = env step index */
#define RL_STREAM_PPO_PERM 0x50504f5000000000ull /* "PPOP" + (iteration * epochs + epoch): permutations */

typedef struct rl_ppo_net_cfg {
  tg_device dev;
  int obs_dim, n_actions;           /* continuous: n_actions is the action's dimension */
  int continuous;                   /* 1: a diagonal Gaussian policy, log_std a parameter ("actor_logstd" [1, A]) */
  int n_hidden, hidden[RL_MAX_HIDDEN]; /* per network (tanh) */
  int n_act;         /* rows of the acting graph (environment instances) */
  int mb;            /* minibatch (>= 2) */
  tg_ppo_coefs coefs;
  tg_optim_config optim;
  uint64_t seed;     /* initialisation */
  tg_precision precision;
  const tg_env *env; /* NULL, or the env: a trading env with omit_window has its windows gathered (rl_obs.c) */
} rl_ppo_net_cfg;

typedef struct rl_ppo_net {
  rl_ppo_net_cfg c;
  rl_net base;         /* store: actor.* and critic.*; act: obs [n_act, O] -> logits [n_act, A], value [n_act, 1] */
  tg_graph *train;     /* minibatch -> ppo_loss stats (training) */
  tg_tensor *act_logits, *act_value, *loss, *stats; /* act_logits: the Gaussian's means when continuous */
  int log_std_index;   /* continuous: the store index of actor_logstd [1, A] (-1 otherwise) */
  rl_ppo_mb hb;        /* host minibatch: fill it, then rl_ppo_net_learn */
  rl_ppo_mb dmb;       /* the training graph's inputs (== hb when host) */
  float *h_logits, *h_value, *h_stats; /* host copies of outputs (device builds) */
  float *h_log_std;    /* [A] continuous: host copy of log_std */
} rl_ppo_net;

tg_status rl_ppo_mb_init(rl_ppo_mb *mb, int m, int obs_dim, int act_dim);
void rl_ppo_mb_free(rl_ppo_mb *mb);
tg_status rl_ppo_net_open(rl_ppo_net *n, const rl_ppo_net_cfg *c);
void rl_ppo_net_close(rl_ppo_net *n);
/* logits [n_act, A] and values [n_act] (host views, valid until the next call) of obs [n_act, O]
 * (host); either output may be NULL. */
tg_status rl_ppo_net_eval(rl_ppo_net *n, const float *obs, const float **logits, const float **value);
/* One update on n->hb: forward, ppo_loss, backward, clip, Adam. *stats (may be NULL) receives a host
 * view of the loss's TG_PPO_NSTATS values before the update. */
tg_status rl_ppo_net_learn(rl_ppo_net *n, const float **stats);
/* Continuous: the policy's log standard deviations [A] (a host view, valid until the next call). */
tg_status rl_ppo_net_log_std(rl_ppo_net *n, const float **log_std);
/* Samples from the softmax of l [A] by inverse CDF at u in [0, 1) (float64); *logp = log pi(action). */
int rl_categorical_sample(const float *l, int A, float u, float *logp);
/* A diagonal Gaussian: x = mu + exp(ls) * eps from standard normals eps [A]; returns log pi(x) (float64). */
float rl_gaussian_sample(const float *mu, const float *ls, const float *eps, int A, float *x);

#endif
