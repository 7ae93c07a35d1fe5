/* The agents' shared internal pieces: env state, MLPs, observations, graph plumbing and the networks' common core. */
#ifndef TG_RL_INTERNAL_H
#define TG_RL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "tickgrad/graph.h"
#include "tickgrad/optim.h"
#include "tickgrad/rl.h"
#include "tickgrad/step.h"

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
/* Uniform integer in [0, n) from one 32-bit word (multiply-shift). */
static inline int64_t rl_u32_below(uint32_t w, int64_t n) { return (int64_t)(((uint64_t)w * (uint64_t)n) >> 32); }
/* First index of the maximum of q[0..a). */
int rl_argmax(const float *q, int a);

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

#endif
