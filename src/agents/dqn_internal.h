/* DQN's internal pieces: the run's state, config.json, checkpoints and the metrics file. */
#ifndef TG_RL_DQN_INTERNAL_H
#define TG_RL_DQN_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include "agents/rl_shared.h"
#include "tickgrad/rl_agents.h"

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
