/* DQN's internal pieces: replay, the Q-networks, the run's state, config.json and checkpoints. */
#ifndef TG_RL_DQN_INTERNAL_H
#define TG_RL_DQN_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include "agents/rl_shared.h"
#include "tickgrad/rl_agents.h"

/* Philox streams of DQN's random draws (the key is the run's seed). */
#define RL_STREAM_REPLAY 0x5245504c00000000ull /* "REPL": replay indices */
#define RL_STREAM_ACT 0x4143540000000000ull    /* "ACT": epsilon coins and random actions */

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

#define DQ_CONFIG_FORMAT "tickgrad-dqn-config-1"
#define DQ_AGENT_FORMAT "tickgrad-dqn-agent-1"

/* Sums over the training steps of one log interval. */
typedef struct dq_accum {
  double loss, q, grad_norm;
  int64_t n;
} dq_accum;

typedef struct dq_run {
  tg_dqn_config c;
  rl_run base;                   /* env, folder, episodes, metrics.csv, clock */
  rl_dqn_net net;
  rl_replay rb;
  /* per-step host buffers */
  float *obs, *next_obs, *final_obs, *real_next; /* [n, obs_dim] each */
  float *reward;                                 /* [n] */
  uint8_t *term, *trunc;                         /* [n] */
  double *ep_ret;                                /* [n] */
  int32_t *ep_len, *actions;                     /* [n] */
  /* the run's position */
  int64_t step;
  dq_accum acc;                  /* this log interval's training steps */
  int64_t saved_step;            /* step of the checkpoint on disk (-1: none) */
} dq_run;

/* ---- dqn_config.c ---- */
extern const rl_config_file DQ_CONFIG_FILE; /* config.json: the settings table, format and title */

/* ---- dqn_ckpt.c ---- */
/* weights, target, optim, then agent.safetensors (with the hashes of the other three) */
tg_status dq_ckpt_save(dq_run *r);
tg_status dq_ckpt_load(dq_run *r, int *found); /* *found 0: the run has no checkpoint, nothing loaded */

#endif
