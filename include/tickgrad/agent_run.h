/* A DQN or PPO agent trained (or resumed) with its environment from a config, as `tickgrad train --model dqn|ppo` does it. */
#ifndef TICKGRAD_AGENT_RUN_H
#define TICKGRAD_AGENT_RUN_H

#include <stdio.h>
#include "tickgrad/agents.h"
#include "tickgrad/rl_agents.h"
#include "tickgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_agent_run_config {
  char model[16];          /* dqn or ppo */
  tg_agent_env env;        /* the environment (RUN/env.json) */
  tg_dqn_config dqn;       /* the agent's settings: dqn's or ppo's by model (RUN/config.json) */
  tg_ppo_config ppo;
  char out[TG_PATH_MAX];   /* the run folder ("": runs/<model>-<env>-<UTC timestamp>) */
  int resume;              /* 1: continue the run in out bitwise (tg_agent_run_load fills the rest) */
  long stop_after;         /* > 0: stop with a checkpoint after this many steps (DQN) or iterations (PPO) in all */
  tg_device device;        /* where the networks train (default cpu:0) */
  FILE *log;               /* progress, the evaluation table, notices and warnings (NULL: silent) */
} tg_agent_run_config;

/* The greedy policy's evaluation after training: CartPole over 10 episodes the training never saw (env seed +
 * 1000003); trading over the validation and then the test split, in order, after the env's costs. */
typedef struct tg_agent_eval {
  int trading;
  double mean_return;        /* cartpole: the 10 episodes' mean return (500 is the most) */
  tg_trading_stats split[2]; /* trading: validation, test */
} tg_agent_eval;

typedef struct tg_agent_run_result {
  char out[TG_PATH_MAX];     /* the run folder */
  tg_dqn_result dqn;         /* model dqn */
  tg_ppo_result ppo;         /* model ppo */
  int evaluated;             /* 0 after stop_after or a stop request */
  int interrupted;           /* a stop request (tg_stop_request) ended training after a step, with a checkpoint */
  tg_agent_eval eval;
} tg_agent_run_result;

/* A new run of model (dqn or ppo): CleanRL's CartPole defaults for the agent, tg_agent_env_defaults, cpu:0. */
tg_status tg_agent_run_defaults(const char *model, tg_agent_run_config *c);
/* The run in dir to resume: its env.json and config.json over defaults, out = dir, resume = 1 (device, log and
 * stop_after left as they are). Errors name the file. */
tg_status tg_agent_run_load(const char *dir, tg_agent_run_config *c);
/* One agent setting by its config.json name ("learning_rate", "hidden", ...) for c's model; TG_ERR_INVALID naming it. */
tg_status tg_agent_run_set(tg_agent_run_config *c, const char *key, const char *value);
/* Settles the instance count (PPO: env.n is num_envs, a given env.n sets it; DQN: 1 unless given) and checks every
 * setting: TG_ERR_INVALID naming what is wrong (agent settings, --data on cartpole). Call it before tg_agent_run. */
tg_status tg_agent_run_check(tg_agent_run_config *c);
/* Builds the environment (and its bars), writes out/env.json (a new run; a folder that already holds a run is refused),
 * trains into out (config.json, metrics.csv, checkpoints; telemetry.csv once a second while it trains), evaluates
 * the greedy policy unless stop_after or a stop request ended the run, and writes out/report.html whenever training ran
 * (a failure to write it is a warning on the log). A resumed run continues bitwise as if never interrupted. A stop
 * request (status.h; the caller clears it before the run) ends training after the current DQN step or PPO iteration
 * with a checkpoint: TG_OK, out->interrupted set, and the line "interrupted: stopped after step S; checkpoint in RUN;
 * continue with: tickgrad train --resume RUN" (iteration S for PPO) on the log. out may be NULL. */
tg_status tg_agent_run(const tg_agent_run_config *c, tg_agent_run_result *out);
/* The greedy policy of the run in dir evaluated as tg_agent_run does at its end: on env e (bars: the trading env's,
 * NULL to read them), the table on log (may be NULL). */
tg_status tg_agent_evaluate(const char *model, const tg_agent_env *e, const tg_bars *bars, const char *dir,
                            tg_device dev, FILE *log, tg_agent_eval *out);

#ifdef __cplusplus
}
#endif
#endif
