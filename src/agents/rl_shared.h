/* What DQN's and PPO's runs share: config.json, recent episodes and metrics.csv, the agent checkpoint file. */
#ifndef TG_RL_SHARED_H
#define TG_RL_SHARED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "agents/rl_internal.h"
#include "base/files.h"
#include "base/settings.h"
#include "tickgrad/checkpoint.h"

/* ---- rl_config.c: an agent run's config.json: its format, its settings (base/settings.h), device and env ---- */

/* An algorithm's config.json. */
typedef struct rl_config_file {
  const tg_settings *settings; /* name "dqn config": errors say "dqn config: ..."; every setting in the file */
  const char *title;           /* "DQN": "not a DQN run's config" */
  const char *format;          /* config.json's "format" */
  const char *what;            /* "dqn": a run's errors start "dqn: " */
} rl_config_file;

/* The members of config.json that are not settings (the table's extra). */
extern const char *const RL_CONFIG_EXTRA[];

/* Rows of an agent's settings table for its config type T. RL_NUM: a number row: key (its flag --key-with-dashes),
 * type, member, closed range, may change on resume, help. */
#define RL_NUM(T, k, ty, m, l, h, resumable, hl)                                                                    \
  {.key = k, .type = ty, .off = offsetof(T, m), .lo = l, .hi = h, .flags = (resumable) ? TG_SET_RESUMABLE : 0u, \
   .help = hl}
#define RL_HIDDEN_ROW(T, max, hl)                                                                                   \
  {.key = "hidden", .type = TG_SET_NUMS, .off = offsetof(T, hidden), .lo = 1, .hi = 1e6, .elem = TG_SET_INT,        \
   .count_off = offsetof(T, n_hidden), .max_n = max, .help = hl}
#define RL_SEED_ROW(T, hl) {.key = "seed", .type = TG_SET_UINT64, .off = offsetof(T, seed), .help = hl}
#define RL_PRECISION_ROW(T)                                                                                         \
  {.key = "precision", .type = TG_SET_ENUM, .off = offsetof(T, precision), .names = tg_precision_names,           \
   .help = "fp32 (default), bf16 (GEMM operands in bf16 with f32 accumulation, f32 weights and Adam state) or "    \
           "auto (bf16 where the device has native bf16 GEMMs and a hidden layer is at least as wide as `tickgrad "  \
           "devices` says bf16 pays from, else fp32)"}

/* The environment a run was started with (config.json's "env"). */
typedef struct rl_env_id {
  char name[64];
  int n, obs_dim, n_actions;
} rl_env_id;

/* config.json of c, its device and env: tg_malloc'ed text, NULL when out of memory. */
char *rl_config_json(const rl_config_file *f, const void *c, tg_device dev, const tg_env *env);
/* Reads path into c's settings (the members the table does not name untouched) and the env it names. */
tg_status rl_config_load(const rl_config_file *f, const char *path, void *c, rl_env_id *env);
/* rl_config_load of RUN/config.json, the env ignored. */
tg_status rl_config_load_run(const rl_config_file *f, const char *run_dir, void *c);
/* One setting of c from text; errors start "<settings name>: ". */
tg_status rl_config_set(const rl_config_file *f, void *c, const char *key, const char *value);
/* The table's checks, then stop_after (c's member, which the table does not name) >= 0. */
tg_status rl_config_check(const rl_config_file *f, const void *c, int64_t stop_after);
/* The first setting that must match on resume and differs, or NULL. */
const char *rl_config_diff(const rl_config_file *f, const void *a, const void *b);
/* RUN/config.json as a run starts: a fresh run (resume 0) writes c's, refusing a folder that holds a run; a resumed
 * one requires the file's settings (read into saved, a copy of c) and env to be c's and env's. */
tg_status rl_config_start(const rl_config_file *f, const char *run, const void *c, void *saved, tg_device dev,
                          int resume, const tg_env *env);

/* ---- rl_policy.c: opening a trained run's policy ---- */

/* RUN/config.json into c (set to the defaults by the caller), refused unless it was trained on spec's observations
 * and actions; errors start "<what> policy: ". */
tg_status rl_policy_config(const rl_config_file *f, const char *run_dir, tg_env_spec spec, void *c);
/* RUN/weights.safetensors into store, once the run's files match its checkpoint and the weights are finite. */
tg_status rl_policy_weights(const char *run_dir, tg_store *store);

/* ---- rl_metrics.c: recently finished episodes and RUN/metrics.csv ---- */

#define RL_RECENT 100 /* finished episodes in the running means */

typedef struct rl_recent {
  double ret[RL_RECENT]; /* ring of the last finished episodes' returns */
  int32_t len[RL_RECENT];
  int n, pos;            /* episodes in the ring (at most RL_RECENT), the next slot written */
} rl_recent;

void rl_recent_push(rl_recent *r, double ret, int32_t len);
/* Means of the episodes in the ring (NaN when none), summed oldest first. */
void rl_recent_means(const rl_recent *r, double *ret, double *len);
/* RUN/metrics.csv for appending: a fresh run writes the header; a resumed one keeps the rows whose first
 * field is at most upto (its checkpoint's step or iteration) and drops later ones. Errors start "<what>: ". */
/* A metrics.csv field: a comma, then the shortest decimal that reads back as v (as a float when is_float), or
 * nothing when v is not finite (nothing to report in the interval). DQN's and PPO's rows both use it. */
void rl_csv_num(FILE *f, double v, int is_float);
tg_status rl_metrics_open(const char *run, const char *header, int resumed, int64_t upto, const char *what, FILE **out);
/* A metrics.csv row's first fields: the position (step or iteration), env steps, episodes, mean return and length. */
void rl_metrics_row_begin(FILE *f, int64_t position, int64_t env_steps, int64_t episodes, double ret, double len);
/* Its last field, env steps per second (empty when not finite), the line's end, and a flush. */
void rl_metrics_row_end(FILE *f, double sps);

/* A training call's clock: env steps per second over a log interval and over the call. */
typedef struct rl_clock {
  double t_start, t_interval;           /* wall clock at the call's start and the interval's start */
  int64_t call_steps0, interval_steps0; /* env steps at those times */
} rl_clock;

void rl_clock_start(rl_clock *k, int64_t env_steps);
/* Env steps per second since the interval's start (NaN when no time passed); the next interval starts now. */
double rl_clock_interval(rl_clock *k, int64_t env_steps);
/* Seconds since the call's start (0 when not started) and env steps per second over them (NaN when none). */
double rl_clock_call(const rl_clock *k, int64_t env_steps, double *sps);

/* ---- rl_run.c: what DQN's and PPO's runs share as they open and stop ---- */

typedef struct rl_run {
  const char *what;        /* "dqn": errors start "dqn: " */
  tg_env *env;
  tg_env_spec sp;
  char dir[TG_PATH_MAX];   /* the run folder */
  int64_t episodes;        /* finished so far */
  rl_recent recent;        /* the last finished episodes */
  int interrupted;         /* this call: a stop request ended it (after a checkpoint) */
  FILE *metrics;
  rl_clock clock;
} rl_run;

/* How a run resumes: load(run, &found) reads its checkpoint (found 0: none, nothing loaded); position is read after. */
typedef struct rl_run_resume {
  int resume;
  tg_status (*load)(void *run, int *found);
  void *run;
  const int64_t *position; /* DQN's step, PPO's iteration */
} rl_run_resume;

/* b's what, env and spec; dir checked (not empty, fits b->dir), copied and made. */
tg_status rl_run_open(rl_run *b, const char *what, tg_env *env, const char *dir);
/* Once the network is open: a resumed run's checkpoint (none: said on log, started from the beginning), else env reset
 * into obs; then metrics.csv from the position. */
tg_status rl_run_start(rl_run *b, const rl_run_resume *rs, float *obs, const char *header, FILE *log);
/* TG_ERR_NUMERIC "<what>: <why> at <at>; stopped, ..." naming the checkpoint kept (saved: its <unit>, -1: none). */
tg_status rl_numeric_stop(const rl_run *b, const char *why, const char *at, const char *unit, int64_t saved);
void rl_run_close(rl_run *b);

/* ---- rl_ckpt.c: RUN/agent.safetensors, an agent's position beside its weights ---- */

#define RL_CKPT_MAX_FILES 3
#define RL_AGENT_MAX_TENSORS 12
#define RL_AGENT_MAX_META 16

/* One algorithm's agent file. */
typedef struct rl_agent_kind {
  const char *what;                     /* "dqn": errors start "dqn: " */
  const char *title;                    /* "DQN": "not a DQN agent checkpoint" */
  const char *format;                   /* metadata "format" */
  const char *files[RL_CKPT_MAX_FILES]; /* the checkpoint's other files; each one's FNV-1a in metadata "<stem>_fnv1a" */
  int n_files;
  const char *hint;                     /* what a saved tensor of the wrong shape suggests */
} rl_agent_kind;

/* The file being written: tensors and metadata in the order they are added, which the file keeps.
 * The tensors are views: their data must live until rl_agent_save. */
typedef struct rl_agent_out {
  const rl_agent_kind *kind;
  tg_tensor t[RL_AGENT_MAX_TENSORS];
  tg_kv meta[RL_AGENT_MAX_META];
  char val[RL_AGENT_MAX_META][32];
  int nt, nm;
  int64_t recent_bits[RL_RECENT]; /* recent returns as bit patterns: exact in an i64 tensor */
  int32_t recent_len[RL_RECENT];
  int64_t *env_state;             /* [(bytes + 7) / 8] */
  char keys[RL_CKPT_MAX_FILES][32], hashes[RL_CKPT_MAX_FILES][17];
} rl_agent_out;

/* "RUN/file" into buf [n]. */
void rl_run_path(char *buf, size_t n, const char *run, const char *file);
/* Starts the file with metadata "format". */
void rl_agent_begin(rl_agent_out *a, const rl_agent_kind *kind);
/* A host tensor [d0] (ndim 1) or [d0, d1] (ndim 2). */
void rl_agent_put(rl_agent_out *a, const char *name, tg_dtype dt, int ndim, int64_t d0, int64_t d1, void *data);
void rl_agent_i64(rl_agent_out *a, const char *key, int64_t v); /* metadata: the number as text */
void rl_agent_u64(rl_agent_out *a, const char *key, uint64_t v);
/* Tensors recent.return and recent.length, metadata recent_n and recent_pos. */
void rl_agent_recent(rl_agent_out *a, const rl_recent *r);
/* Ends the file (tensor env.state, metadata env_state_bytes, env and the files' hashes) and writes
 * RUN/agent.safetensors; the other files must be written already. */
tg_status rl_agent_save(rl_agent_out *a, const char *run, const tg_env *env);

/* The file being read. */
typedef struct rl_agent_in {
  const rl_agent_kind *kind;
  tg_safetensors *f;
  char path[TG_PATH_MAX + 32];
} rl_agent_in;

/* Loads RUN/agent.safetensors and checks its format, its env's name and the other files' hashes;
 * rl_agent_close it whatever this returns. */
tg_status rl_agent_open(rl_agent_in *a, const rl_agent_kind *kind, const char *run, const tg_env *env);
void rl_agent_close(rl_agent_in *a);
/* Metadata key as an integer in [lo, hi]. */
tg_status rl_agent_count(const rl_agent_in *a, const char *key, int64_t lo, int64_t hi, int64_t *out);
/* Tensor name of dtype dt and shape [d0] (ndim 1) or [d0, d1]; else an error naming what was expected. */
tg_status rl_agent_tensor(const rl_agent_in *a, const char *name, tg_dtype dt, int ndim, int64_t d0, int64_t d1,
                          const tg_tensor **out);
/* What rl_agent_recent wrote, into r. */
tg_status rl_agent_recent_load(const rl_agent_in *a, rl_recent *r);
/* Metadata env_state_bytes, which must be this env's state size (and not 0 when required). */
tg_status rl_agent_env_bytes(const rl_agent_in *a, const tg_env *env, int required, int64_t *bytes);
/* Restores env from the tensor env.state of bytes (> 0). */
tg_status rl_agent_env_load(const rl_agent_in *a, tg_env *env, int64_t bytes);

/* ---- rl_ckpt.c: the training state beside the optimizer's moments, the same for every agent ----
 * step: the agent's position (DQN: steps, PPO: iterations), which agent.safetensors also holds, so a resume can tell
 * the files are one checkpoint; rng_seed: the config's seed; rng_offset: the replay draws (DQN; 0 for PPO); epoch and
 * cursor: 0 (they are the forecasting trainer's). */
tg_train_state rl_train_state(int64_t position, uint64_t seed, uint64_t draws);
/* TG_ERR_FORMAT naming path unless ts was written at position with draws (also the layout earlier PPO runs wrote:
 * iterations in epoch). unit names the position ("step", "iteration"). */
tg_status rl_train_state_check(const char *path, const tg_train_state *ts, int64_t position, uint64_t draws,
                               const char *unit);

/* ---- rl_ckpt_set.c: one checkpoint set: the stores' weights, the optimizer's state, then agent.safetensors ---- */

typedef struct rl_ckpt_parts {
  const rl_agent_kind *kind;               /* its files: one per store, then the optimizer's */
  tg_store *stores[RL_CKPT_MAX_FILES - 1]; /* kind->n_files - 1 of them */
  tg_optim *opt;
  uint64_t seed;                           /* the config's (the training state's rng_seed) */
  const int64_t *position;                 /* the run's step or iteration: read when saving and after loading the agent */
  int64_t *saved;                          /* the position of the set on disk, set after a save or a load that found one */
  const uint64_t *draws;                   /* the replay's draws (NULL: none) */
  const char *unit;                        /* the position's name in errors: "step", "iteration" */
  void *run;                               /* the algorithm's run, for the two callbacks */
  tg_status (*save_agent)(void *run, const char *dir); /* writes dir/agent.safetensors after the other files */
  tg_status (*load_agent)(void *run, const char *dir); /* reads it first, setting the position */
} rl_ckpt_parts;

/* Writes a new set into RUN/checkpoints and makes it current. */
tg_status rl_ckpt_save(const rl_ckpt_parts *p, const char *run);
/* The current set of RUN (*found 0: none, nothing loaded), checking that its files are one checkpoint. */
tg_status rl_ckpt_load(const rl_ckpt_parts *p, const char *run, FILE *log, int *found);

#endif
