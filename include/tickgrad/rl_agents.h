/* Reinforcement-learning agents that train on a tg_env: DQN (and PPO, below), with metrics, checkpoints and resume. */
#ifndef TICKGRAD_RL_AGENTS_H
#define TICKGRAD_RL_AGENTS_H

#include <stdint.h>
#include <stdio.h>
#include "tickgrad/graph.h"
#include "tickgrad/rl.h"
#include "tickgrad/status.h"
#include "tickgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== DQN (CleanRL's cleanrl/dqn.py, with Double DQN, Huber, Polyak and clipping as options) ====
 *
 * Steps are vector steps, as CleanRL's global_step: one tg_env_step of all n instances, n
 * transitions. With one instance (CartPole's default) a step is an environment step. Each step:
 * epsilon = max(start_e + (end_e - start_e) * step / (exploration_fraction * total_timesteps), end_e);
 * every instance explores with probability epsilon (its own coin: a uniform random action) or takes
 * argmax Q (the first maximum); the n transitions (s, a, r, the true s' (final observation where an
 * episode ended), terminated) go into the replay ring. Truncation is not termination: it bootstraps.
 * Once step > learning_starts: every train_frequency steps one Adam step on a batch drawn uniformly
 * with replacement, y = r + gamma * (1 - terminated) * max_a Q_target(s', a) (Double DQN:
 * Q_target(s', argmax_a Q(s', a))), loss MSE(Q(s, a), y) or Huber (delta 1); every
 * target_network_frequency steps theta_target <- tau * theta + (1 - tau) * theta_target.
 * Random draws (coins, random actions, replay indices) come from Philox keyed by seed, so a run is a
 * function of (config, env) and a resumed run continues bitwise.
 *
 * RUN folder: config.json; metrics.csv (one row per log interval, columns as the log line);
 * weights.safetensors (online Q-network, torch nn.Sequential names "q.0.weight", ...),
 * target.safetensors, optim.safetensors (Adam moments and step), agent.safetensors (replay
 * contents, current observations, recent episodes, counters, the environment's state, and hashes of
 * the other three so a half-written checkpoint is refused), written at every ckpt_every steps and at
 * the end. */

#define TG_DQN_MAX_HIDDEN 8

typedef struct tg_dqn_config {
  int64_t total_timesteps;          /* 500000 steps */
  float learning_rate;              /* 2.5e-4 (Adam) */
  float adam_eps;                   /* 1e-8, torch's default */
  int64_t buffer_size;              /* 10000 transitions */
  float gamma;                      /* 0.99 */
  float tau;                        /* 1.0: the target is a copy; < 1: Polyak averaging */
  int64_t target_network_frequency; /* 500 steps */
  int batch_size;                   /* 128 */
  float start_e, end_e;             /* 1.0 -> 0.05 */
  float exploration_fraction;       /* 0.5: epsilon reaches end_e at half of total_timesteps */
  int64_t learning_starts;          /* 10000 steps */
  int64_t train_frequency;          /* 10 steps */
  int n_hidden;                     /* 2 */
  int hidden[TG_DQN_MAX_HIDDEN];    /* 120, 84 (ReLU between layers, PyTorch Linear's init) */
  int double_q;                     /* 0: plain DQN as dqn.py (default); 1: Double DQN targets */
  int huber;                        /* 0: MSE as dqn.py (default); 1: Huber, delta 1 (SB3) */
  float max_grad_norm;              /* 0: no clipping (dqn.py); > 0: global grad-norm clip */
  uint64_t seed;                    /* 1: initialisation, exploration and replay draws */
  tg_precision precision;           /* fp32 (default) or bf16: the networks' GEMM operands in bf16, f32 accumulation */
  tg_device device;                 /* cpu:0; where the networks, their steps and updates run */
  int64_t log_every;                /* 10000 steps: one log line and metrics.csv row (and at the end) */
  int64_t ckpt_every;               /* 100000 steps (and at the end; 0: only at the end) */
  int64_t stop_after;               /* 0; > 0: checkpoint and return after this many steps */
  int resume;                       /* 1: continue the run in run_dir from its last checkpoint */
  FILE *log;                        /* progress lines; NULL: silent */
} tg_dqn_config;

typedef struct tg_dqn_result {
  int64_t steps;        /* vector steps done (in total, over resumes) */
  int64_t env_steps;    /* steps * n */
  int64_t episodes;     /* finished episodes */
  int64_t grad_steps;   /* optimizer steps */
  double mean_return;   /* over the last 100 finished episodes (NaN: none finished) */
  double mean_length;
  double seconds;       /* wall time of this call */
  double env_steps_per_s; /* this call's environment steps per second */
  int interrupted;      /* a stop request (tg_stop_request) ended the run after a step, with a checkpoint */
} tg_dqn_result;

/* CleanRL's CartPole defaults (above). */
tg_dqn_config tg_dqn_defaults(void);
/* Sets one setting from text by its config.json name: total_timesteps, learning_rate, adam_eps,
 * buffer_size, gamma, tau, target_network_frequency, batch_size, start_e, end_e,
 * exploration_fraction, learning_starts, train_frequency, hidden ("120,84"), double_q, huber,
 * max_grad_norm, seed, log_every, ckpt_every. TG_ERR_INVALID names the key and the accepted range. */
tg_status tg_dqn_config_set(tg_dqn_config *c, const char *key, const char *value);
/* Checks every setting against its range and the others (e.g. batch_size <= buffer_size). */
tg_status tg_dqn_config_check(const tg_dqn_config *c);
/* The settings of the run in run_dir (its config.json) over *c (device, log and run control untouched). */
tg_status tg_dqn_config_load(const char *run_dir, tg_dqn_config *c);
/* Trains on env (discrete actions) into run_dir (created if absent; a fresh run refuses a folder
 * that already holds config.json). With c->resume the run's config.json must match c (device, log,
 * stop_after, log_every and ckpt_every may differ) and the env must be the same kind and size as
 * the one the run started with; it continues from the last checkpoint. A non-finite loss or
 * gradient stops with TG_ERR_NUMERIC naming the step, keeping the last good checkpoint. After every vector step
 * it checks tg_stop_requested() (status.h) as it checks stop_after: a stop writes a checkpoint and returns TG_OK with
 * out->interrupted set, and a resume continues bitwise. out may be NULL. */
tg_status tg_dqn_train(const tg_dqn_config *c, tg_env *env, const char *run_dir, tg_dqn_result *out);

/* The greedy policy of a trained run (weights.safetensors and config.json of run_dir), for
 * evaluation: argmax_a Q(obs, a) for n observations at a time. */
typedef struct tg_dqn_policy tg_dqn_policy;
tg_status tg_dqn_policy_load(const char *run_dir, tg_env_spec spec, tg_device dev, tg_dqn_policy **out);
/* The same for the env it will act on: a trading env with omit_window observes [t, position,
 * unrealised] and the policy gathers each window from the env's feature table, uploaded to dev once
 * (the spec-only loader cannot: a run trained on such an env needs this one). */
tg_status tg_dqn_policy_load_env(const char *run_dir, const tg_env *env, tg_device dev, tg_dqn_policy **out);
/* obs [n, obs_dim] host memory -> actions [n] (int32, the first maximum). */
tg_status tg_dqn_policy_act(tg_dqn_policy *p, const float *obs, int32_t *actions);
/* The Q-values q [n, n_actions] of obs [n, obs_dim] (host memory), those act takes the argmax of. */
tg_status tg_dqn_policy_values(tg_dqn_policy *p, const float *obs, float *q);
void tg_dqn_policy_free(tg_dqn_policy *p);

/* ==== end of the DQN section ==== */

/* ==== PPO (CleanRL's cleanrl/ppo.py; separate actor and critic) ====
 *
 * Steps are environment steps, as CleanRL's global_step: a rollout is num_steps vector steps of
 * the env's num_envs instances (batch = num_envs * num_steps), and a run is
 * total_timesteps / batch iterations. Each iteration: the policy samples an action per instance
 * from the categorical over the actor's logits (inverse CDF of a Philox uniform keyed by seed, so a
 * run is a function of (config, env) and a resumed run continues bitwise); GAE(lambda) with
 * done = terminated or truncated (no bootstrap on truncation, as CleanRL); then update_epochs
 * passes over a fresh permutation of the batch in num_minibatches minibatches, each one Adam step
 * (eps adam_eps) on the fused ppo_loss (clipped surrogate, clipped value loss, entropy bonus,
 * per-minibatch advantage normalisation; see tg_ppo_loss in graph.h), the global gradient norm
 * clipped to max_grad_norm. With anneal_lr the learning rate falls linearly to 0 over the run's
 * optimizer steps (CleanRL holds it per iteration: the two differ by at most lr / iterations).
 * target_kl > 0 ends an iteration's epochs early once a minibatch's approx_kl exceeds it.
 * Networks: obs -> hidden (tanh) ... -> A logits ("actor.0.weight", ...) and -> 1 value
 * ("critic.*"), orthogonal weights (hidden gain sqrt 2, actor head 0.01, critic head 1), zero biases.
 * A continuous env (n_actions 0: one float per instance, e.g. the trading env's target position)
 * gets CleanRL's ppo_continuous_action.py policy instead: the actor's output is the mean of a
 * Gaussian whose log standard deviation is a parameter ("actor_logstd" [1, 1], starting at 0); the
 * action is sampled unclipped (the env clips it) and its log-probability is of the sampled value.
 *
 * RUN folder: config.json; metrics.csv (one row per log interval, columns as the log line);
 * weights.safetensors (actor and critic, torch names); optim.safetensors (Adam moments and step);
 * agent.safetensors (current observations and done flags, recent episodes, counters, the
 * environment's state, and the hashes of the other two so a half-written checkpoint is refused),
 * written every ckpt_every iterations and at the end. */

#define TG_PPO_MAX_HIDDEN 8

typedef struct tg_ppo_config {
  int64_t total_timesteps;       /* 500000 environment steps */
  float learning_rate;           /* 2.5e-4 */
  int anneal_lr;                 /* 1: linearly to 0 over the run */
  float adam_eps;                /* 1e-5 */
  int num_envs;                  /* 4: the env must have this many instances */
  int num_steps;                 /* 128 vector steps per rollout */
  int num_minibatches;           /* 4 (minibatch = num_envs * num_steps / 4 = 128) */
  int update_epochs;             /* 4 */
  float gamma, gae_lambda;       /* 0.99, 0.95 */
  int norm_adv;                  /* 1: per-minibatch advantage normalisation */
  float clip_coef;               /* 0.2 (ratio clip, and the value clip) */
  int clip_vloss;                /* 1 */
  float ent_coef, vf_coef;       /* 0.01, 0.5 */
  float max_grad_norm;           /* 0.5 (0: no clipping) */
  float target_kl;               /* 0: none (CleanRL's None) */
  int n_hidden;                  /* 2 */
  int hidden[TG_PPO_MAX_HIDDEN]; /* 64, 64 (tanh) for the actor and the critic each */
  uint64_t seed;                 /* 1: initialisation, actions and minibatch permutations */
  tg_precision precision;        /* fp32 (default) or bf16: the networks' GEMM operands in bf16, f32 accumulation */
  tg_device device;              /* cpu:0; where the networks and their updates run */
  int64_t log_every;             /* 10000 environment steps between log lines (and at the end) */
  int64_t ckpt_every;            /* 0: checkpoint only at the end; > 0: every this many iterations */
  int64_t stop_after;            /* 0; > 0: checkpoint and return once the run has done this many iterations */
  int resume;                    /* 1: continue the run in run_dir from its last checkpoint */
  FILE *log;                     /* progress lines; NULL: silent */
} tg_ppo_config;

typedef struct tg_ppo_result {
  int64_t iterations;      /* completed (in total, over resumes) */
  int64_t env_steps;       /* iterations * num_envs * num_steps */
  int64_t episodes;        /* finished episodes */
  int64_t updates;         /* optimizer steps */
  double mean_return;      /* over the last 100 finished episodes (NaN: none finished) */
  double mean_length;
  float loss, pg_loss, v_loss, entropy, approx_kl, clipfrac; /* the last minibatch's */
  float grad_norm;         /* the last minibatch's, before clipping */
  double seconds;          /* wall time of this call */
  double env_steps_per_s;  /* this call's environment steps per second */
  int interrupted;         /* a stop request (tg_stop_request) ended the run after an iteration, with a checkpoint */
} tg_ppo_result;

/* CleanRL's CartPole defaults (above). */
tg_ppo_config tg_ppo_defaults(void);
/* Sets one setting from text by its config.json name: total_timesteps, learning_rate, anneal_lr,
 * adam_eps, num_envs, num_steps, num_minibatches, update_epochs, gamma, gae_lambda, norm_adv,
 * clip_coef, clip_vloss, ent_coef, vf_coef, max_grad_norm, target_kl, hidden ("64,64"), seed,
 * log_every, ckpt_every. TG_ERR_INVALID names the key and the accepted range. */
tg_status tg_ppo_config_set(tg_ppo_config *c, const char *key, const char *value);
/* Checks every setting against its range and the others (the batch divides into minibatches of
 * at least 2, at least one iteration). */
tg_status tg_ppo_config_check(const tg_ppo_config *c);
/* The settings of the run in run_dir (its config.json) over *c (device, log and run control untouched). */
tg_status tg_ppo_config_load(const char *run_dir, tg_ppo_config *c);
/* Trains on env (num_envs instances; discrete or one continuous action) into run_dir (created if absent; a fresh run
 * refuses a folder that already holds config.json). With c->resume the run's config.json must
 * match c (device, log, stop_after, log_every and ckpt_every may differ) and the env must be the
 * same kind and size; it continues from the last checkpoint. A non-finite loss or gradient stops
 * with TG_ERR_NUMERIC naming the iteration, keeping the last good checkpoint. After every iteration it checks
 * tg_stop_requested() (status.h): a stop writes a checkpoint and returns TG_OK with out->interrupted set, and a resume
 * continues bitwise. out may be NULL. */
tg_status tg_ppo_train(const tg_ppo_config *c, tg_env *env, const char *run_dir, tg_ppo_result *out);

/* The policy of a trained run (weights.safetensors and config.json of run_dir), for evaluation:
 * the most likely action (argmax of the logits, the first maximum; a continuous policy's mean) for
 * n observations at a time. */
typedef struct tg_ppo_policy tg_ppo_policy;
tg_status tg_ppo_policy_load(const char *run_dir, tg_env_spec spec, tg_device dev, tg_ppo_policy **out);
/* The same for the env it will act on (a gathering trading env: as tg_dqn_policy_load_env). */
tg_status tg_ppo_policy_load_env(const char *run_dir, const tg_env *env, tg_device dev, tg_ppo_policy **out);
/* obs [n, obs_dim] host memory -> actions [n]: int32 for discrete envs, float (the Gaussian's mean;
 * the env clips it) for continuous ones. */
tg_status tg_ppo_policy_act(tg_ppo_policy *p, const float *obs, void *actions);
/* The actor's logits [n, n_actions] (a continuous policy: its means [n, 1]) and the critic's values [n] of obs
 * [n, obs_dim] (host memory); either output may be NULL. */
tg_status tg_ppo_policy_values(tg_ppo_policy *p, const float *obs, float *logits, float *value);
void tg_ppo_policy_free(tg_ppo_policy *p);

/* ==== end of the PPO section ==== */

#ifdef __cplusplus
}
#endif
#endif
