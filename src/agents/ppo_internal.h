/* PPO's internal pieces: the run's state, config.json, checkpoints and the metrics file. */
#ifndef TG_RL_PPO_INTERNAL_H
#define TG_RL_PPO_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include "agents/rl_shared.h"
#include "tickgrad/rl_agents.h"

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
