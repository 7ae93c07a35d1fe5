/* An agent run's environment from a config (RUN/env.json), its bars, and the greedy policy of a trained DQN or PPO run. */
#ifndef TICKGRAD_AGENTS_H
#define TICKGRAD_AGENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "tickgrad/data.h"
#include "tickgrad/rl.h"
#include "tickgrad/status.h"
#include "tickgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_AGENT_MAX_DATA 16

/* The environment of an agent run: what `tickgrad train --model dqn|ppo` takes from its flags and keeps in
 * RUN/env.json, so a resume, an evaluation or a backtest rebuilds the same one. */
typedef struct tg_agent_env {
  char kind[16];  /* cartpole (default), trading */
  int n;          /* instances (0: the agent's default: DQN 1, PPO its num_envs) */
  int n_data;
  char data[TG_AGENT_MAX_DATA][1024]; /* trading: bar files of one instrument; none: the synthetic market */
  tg_read_settings read;    /* how the files are read (column map, data_tz: zone of naive timestamps, ...) */
  char tz[64];              /* zone of the time features ("": UTC) */
  int window, episode_len;  /* trading: tg_trading_cfg's */
  double cost_bps, slippage;
  double synth_signal;      /* the synthetic market's planted lag-1 signal (default 0.3) */
  long synth_bars, synth_seed; /* 20000, 1 */
  long seed;                /* the env's own draws (segments, resets), default 1 */
  int copy_windows;         /* trading: 1 copies each window into the observation; 0 (default) the agent gathers
                               it from the feature table on its device (omit_window) */
} tg_agent_env;

/* 1 for "dqn" and "ppo". */
int tg_agent_is_model(const char *model);
void tg_agent_env_defaults(tg_agent_env *e);
/* dir/env.json (atomically): model and e. TG_ERR_IO naming the file when it cannot be written. */
tg_status tg_agent_env_write(const char *dir, const char *model, const tg_agent_env *e);
/* dir/env.json into model[cap] and e. TG_ERR_IO when it cannot be read, TG_ERR_FORMAT naming the file and the
 * member when it is not an env.json this version wrote. A run from before window gathering reads as copy_windows 1. */
tg_status tg_agent_env_read(const char *dir, char *model, size_t cap, tg_agent_env *e);
/* The trading env's bars: e's files (read as one instrument, as e->read says), or the synthetic market
 * without any. log (may be NULL) gets a line saying which, and the readers' warnings. */
tg_status tg_agent_env_bars(const tg_agent_env *e, FILE *log, tg_bars *bars);
/* n instances of e's environment (trading: over bars, decisions on split TG_TRAIN, TG_VAL or TG_TEST). The error
 * names the environment kind. */
tg_status tg_agent_env_make(const tg_agent_env *e, const tg_bars *bars, int n, int split, tg_env **env);

/* The greedy policy of a trained run (dqn: argmax Q; ppo: the actor's most likely action) for env. */
typedef struct tg_policy tg_policy;
tg_status tg_policy_load(const char *model, const char *run_dir, const tg_env *env, tg_device dev, tg_policy **out);
/* obs [n, obs_dim] host memory -> actions [n]. */
tg_status tg_policy_act(tg_policy *p, const float *obs, int32_t *actions);
void tg_policy_free(tg_policy *p);
/* Greedy evaluation: resets env and steps every instance with p until each has finished one episode; *mean_return
 * is the mean of their returns. A trading env's episode statistics are then tg_env_trading_episode_stats'. */
tg_status tg_policy_episodes(tg_env *env, tg_policy *p, double *mean_return);

#ifdef __cplusplus
}
#endif
#endif
