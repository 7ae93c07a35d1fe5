/* A DQN or PPO run's environment (RUN/env.json), its bars and its greedy policy, for training, evaluation and backtests. */
#ifndef TG_CLI_RL_RUN_H
#define TG_CLI_RL_RUN_H

#include <stddef.h>
#include "tickgrad/rl_agents.h"
#include "tickgrad/tickgrad.h"

#define RL_MAX_DATA 16

/* The environment's settings: flags of a new run, RUN/env.json of a resumed one. */
typedef struct rl_env_args {
  char kind[16];  /* cartpole, trading */
  int n;          /* instances (0: the agent's default: DQN 1, PPO its num_envs) */
  int n_data;
  char data[RL_MAX_DATA][1024]; /* trading: bar files; none: the synthetic market */
  char data_tz[64], tz[64];
  int window, episode_len;
  double cost_bps, slippage;
  double synth_signal; /* the synthetic market's planted signal */
  long synth_bars, synth_seed;
  long seed;           /* the env's own draws (segments, resets) */
  int copy_windows;    /* trading: 1 copies each window into the observation; 0 (default) the agent gathers
                          it from the feature table on its device (omit_window) */
} rl_env_args;


typedef struct rl_policy {
  tg_dqn_policy *dqn;
  tg_ppo_policy *ppo;
} rl_policy;

/* 1 for "dqn" and "ppo". */
int rl_is_model(const char *m);
void rl_env_defaults(rl_env_args *e);
/* RUN/env.json into model and e; 0 (a message prefixed by who on stderr) when it cannot be read. */
int rl_read_env_json(const char *dir, const char *who, char *model, size_t model_cap, rl_env_args *e);
/* The trading env's bars: e's files, or the synthetic market without any; 0 (a message on stderr) on failure. */
int rl_load_bars(const rl_env_args *e, tg_bars *bars);
/* n instances of e's environment (trading: over bars, on split TG_TRAIN, TG_VAL or TG_TEST); 0 on failure. */
int rl_make_env(const rl_env_args *e, const tg_bars *bars, int n, int split, tg_env **env);
/* The greedy policy of run dir (model "dqn" or "ppo") for env; 0 (a message on stderr) on failure. */
int rl_policy_load(const char *model, const char *dir, const tg_env *env, tg_device dev, rl_policy *p);
tg_status rl_policy_act(rl_policy *p, const float *obs, int32_t *act);
void rl_policy_free(rl_policy *p);

#endif
