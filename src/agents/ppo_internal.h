/* PPO's internal pieces: rollouts, the actor and critic, the run's state, config.json and checkpoints. */
#ifndef TG_RL_PPO_INTERNAL_H
#define TG_RL_PPO_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include "agents/rl_shared.h"
#include "tickgrad/rl_agents.h"

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

#define PP_CONFIG_FORMAT "tickgrad-ppo-config-1"
#define PP_AGENT_FORMAT "tickgrad-ppo-agent-1"
#define PP_MAX_ACT_DIM 1 /* continuous actions: a tg_env takes one float per instance */

/* What the last iteration reported (CleanRL logs its last minibatch's values). */
typedef struct pp_report {
  float stats[TG_PPO_NSTATS]; /* loss, pg_loss, v_loss, entropy, approx_kl, clipfrac */
  float grad_norm, lr;
  double mean_value;          /* over the iteration's rollout */
} pp_report;

typedef struct pp_run {
  tg_ppo_config c;
  rl_run base;             /* env, folder, episodes, metrics.csv, clock */
  rl_ppo_net net;
  rl_rollout ro;
  int T, N, M, O, A;       /* steps per rollout, instances, minibatch, obs_dim, actions (continuous: 1) */
  int cont;                /* continuous actions: a Gaussian policy */
  float *act_f;            /* [N] continuous actions of one step (NULL when discrete) */
  int64_t B, n_iter;       /* batch T * N, iterations in the run */
  int32_t *perm;           /* [B] */
  /* per-step host buffers */
  float *next_obs;         /* [N, O] the observation the next step acts on */
  uint8_t *next_done;      /* [N] it starts a new episode */
  float *reward;           /* [N] */
  uint8_t *term, *trunc;   /* [N] */
  double *ep_ret;          /* [N] */
  int32_t *ep_len;         /* [N] */
  /* the run's position */
  int64_t iter;            /* completed iterations */
  int64_t saved_iter;      /* iteration of the checkpoint on disk (-1: none) */
  pp_report last;
} pp_run;

/* ---- ppo_config.c ---- */
extern const rl_config_file PP_CONFIG_FILE; /* config.json: the settings table, format and title */
/* The networks' configuration for c on an env with obs_dim and n_actions (0: one continuous action,
 * a Gaussian policy), n_act rows acting, minibatch mb, updates optimizer steps in the run. */
rl_ppo_net_cfg pp_net_cfg(const tg_ppo_config *c, int obs_dim, int n_actions, int n_act, int mb, int64_t updates);

/* ---- ppo_ckpt.c ---- */
/* weights, optim, then agent.safetensors (with the hashes of the other two) */
tg_status pp_ckpt_save(pp_run *r);
tg_status pp_ckpt_load(pp_run *r, int *found); /* *found 0: the run has no checkpoint, nothing loaded */

#endif
