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
  tg_env *env;
  tg_env_spec sp;
  char run[TG_PATH_MAX];
  rl_dqn_net net;
  rl_replay rb;
  /* per-step host buffers */
  float *obs, *next_obs, *final_obs, *real_next; /* [n, obs_dim] each */
  float *reward;                                 /* [n] */
  uint8_t *term, *trunc;                         /* [n] */
  double *ep_ret;                                /* [n] */
  int32_t *ep_len, *actions;                     /* [n] */
  /* the run's position */
  int64_t step, episodes;
  rl_recent recent;              /* the last finished episodes */
  dq_accum acc;                  /* this log interval's training steps */
  int64_t saved_step;            /* step of the checkpoint on disk (-1: none) */
  /* this call */
  int interrupted;               /* a stop request ended it (after a checkpoint) */
  FILE *metrics;
  double t_start, t_interval;    /* wall clock at the call's start and the interval's start */
  int64_t interval_step0, call_step0;
} dq_run;

/* ---- dqn_config.c ---- */
extern const rl_config_file DQ_CONFIG_FILE; /* config.json: the settings table, format and title */

/* ---- dqn_ckpt.c ---- */
/* weights, target, optim, then agent.safetensors (with the hashes of the other three) */
tg_status dq_ckpt_save(dq_run *r);
tg_status dq_ckpt_load(dq_run *r, int *found); /* *found 0: the run has no checkpoint, nothing loaded */

/* ---- dqn_metrics.c ---- */
double dq_epsilon(const tg_dqn_config *c, int64_t step);
static inline void dq_recent_push(dq_run *r, double ret, int32_t len) { rl_recent_push(&r->recent, ret, len); }
/* Means of the recent episodes (NaN when none). */
static inline void dq_recent_means(const dq_run *r, double *ret, double *len) { rl_recent_means(&r->recent, ret, len); }
/* RUN/metrics.csv: a fresh run writes the header; a resumed one keeps the rows up to its
 * checkpoint's step and drops later ones (written after the checkpoint it resumes from). */
tg_status dq_metrics_open(dq_run *r, int resumed);
/* One log line and one metrics.csv row for the interval that ends at r->step; resets the interval. */
void dq_log_interval(dq_run *r);

#endif
