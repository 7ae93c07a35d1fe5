/* DQN checkpoints: online and target weights, Adam's state, and the agent (replay, observations, counters, env state). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "rl/dqn_internal.h"
#include "tickgrad/checkpoint.h"

#define N_AGENT_TENSORS 10

static void path_in(char *buf, size_t n, const char *run, const char *file) { snprintf(buf, n, "%s/%s", run, file); }

/* FNV-1a 64 of a file, so agent.safetensors can tell whether the files beside it are its own. */
static tg_status file_hash(const char *path, char *hex /* [17] */) {
  char *text = NULL;
  size_t len = 0;
  tg_status st = tr_read_file(path, &text, &len);
  if (st != TG_OK) return st;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
  tg_free(text);
  snprintf(hex, 17, "%016" PRIx64, h);
  return TG_OK;
}

static const char *const OTHER_FILES[3] = {"weights.safetensors", "target.safetensors", "optim.safetensors"};
static const char *const HASH_KEYS[3] = {"weights_fnv1a", "target_fnv1a", "optim_fnv1a"};

/* ---- saving ---- */

typedef struct agent_bufs {
  int64_t recent_bits[DQ_RECENT]; /* doubles as their bit patterns: exact in an i64 tensor */
  int64_t acc_bits[3];
  int64_t *env_state;             /* [env_words] */
  size_t env_bytes, env_words;
} agent_bufs;

static void bits_of(const double *v, int64_t *out, int n) { memcpy(out, v, (size_t)n * sizeof *v); }
static void bits_to(const int64_t *v, double *out, int n) { memcpy(out, v, (size_t)n * sizeof *out); }

static tg_status env_state_get(dq_run *r, agent_bufs *b) {
  b->env_bytes = tg_env_state_size(r->env);
  b->env_words = (b->env_bytes + 7) / 8;
  if (!b->env_bytes) return TG_OK;
  b->env_state = tg_calloc(b->env_words, sizeof(int64_t));
  if (!b->env_state) return tg_error(TG_ERR_NOMEM, "dqn: out of memory for the env state (%zu bytes)", b->env_bytes);
  return tg_env_save_state(r->env, b->env_state, b->env_bytes);
}

static int agent_tensors(dq_run *r, agent_bufs *b, tg_tensor *t) {
  int64_t size = r->rb.size, O = r->sp.obs_dim;
  int64_t s_rows[2] = {size, O}, s_vec[1] = {size}, s_obs[2] = {r->sp.n, O}, s_rec[1] = {DQ_RECENT}, s_acc[1] = {3};
  int64_t s_env[1] = {(int64_t)b->env_words};
  tg_device h = tg_cpu(0);
  bits_of(r->recent_ret, b->recent_bits, DQ_RECENT);
  double acc[3] = {r->acc.loss, r->acc.q, r->acc.grad_norm};
  bits_of(acc, b->acc_bits, 3);
  tg_tensor_view(&t[0], "replay.obs", h, TG_F32, 2, s_rows, r->rb.obs);
  tg_tensor_view(&t[1], "replay.next_obs", h, TG_F32, 2, s_rows, r->rb.next_obs);
  tg_tensor_view(&t[2], "replay.action", h, TG_I32, 1, s_vec, r->rb.action);
  tg_tensor_view(&t[3], "replay.reward", h, TG_F32, 1, s_vec, r->rb.reward);
  tg_tensor_view(&t[4], "replay.terminated", h, TG_F32, 1, s_vec, r->rb.term);
  tg_tensor_view(&t[5], "obs", h, TG_F32, 2, s_obs, r->obs);
  tg_tensor_view(&t[6], "recent.return", h, TG_I64, 1, s_rec, b->recent_bits);
  tg_tensor_view(&t[7], "recent.length", h, TG_I32, 1, s_rec, r->recent_len);
  tg_tensor_view(&t[8], "accum", h, TG_I64, 1, s_acc, b->acc_bits);
  if (!b->env_words) return 9;
  tg_tensor_view(&t[9], "env.state", h, TG_I64, 1, s_env, b->env_state);
  return 10;
}

static tg_status save_agent(dq_run *r, char hashes[3][17]) {
  agent_bufs b;
  memset(&b, 0, sizeof b);
  tg_status st = env_state_get(r, &b);
  char v[10][32], path[TG_TRAIN_PATH_MAX + 32];
  tg_tensor t[N_AGENT_TENSORS];
  int nt = st == TG_OK ? agent_tensors(r, &b, t) : 0;
  snprintf(v[0], 32, "%lld", (long long)r->step);
  snprintf(v[1], 32, "%lld", (long long)r->episodes);
  snprintf(v[2], 32, "%lld", (long long)r->rb.pos);
  snprintf(v[3], 32, "%lld", (long long)r->rb.size);
  snprintf(v[4], 32, "%" PRIu64, r->rb.draws);
  snprintf(v[5], 32, "%d", r->recent_n);
  snprintf(v[6], 32, "%d", r->recent_pos);
  snprintf(v[7], 32, "%lld", (long long)r->acc.n);
  snprintf(v[8], 32, "%zu", b.env_bytes);
  const tg_kv meta[] = {{"format", DQ_AGENT_FORMAT}, {"step", v[0]}, {"episodes", v[1]}, {"replay_pos", v[2]},
                        {"replay_size", v[3]}, {"replay_draws", v[4]}, {"recent_n", v[5]}, {"recent_pos", v[6]},
                        {"accum_n", v[7]}, {"env_state_bytes", v[8]}, {"env", tg_env_name(r->env)},
                        {HASH_KEYS[0], hashes[0]}, {HASH_KEYS[1], hashes[1]}, {HASH_KEYS[2], hashes[2]}};
  path_in(path, sizeof path, r->run, "agent.safetensors");
  if (st == TG_OK) st = tg_safetensors_save(path, nt, t, (int)(sizeof meta / sizeof meta[0]), meta);
  tg_free(b.env_state);
  return st;
}

tg_status dq_ckpt_save(dq_run *r) {
  char path[3][TG_TRAIN_PATH_MAX + 32], hashes[3][17];
  for (int i = 0; i < 3; i++) path_in(path[i], sizeof path[i], r->run, OTHER_FILES[i]);
  tg_train_state ts = {r->step, r->c.seed, r->rb.draws, 0, 0};
  tg_status st = tg_store_save(r->net.online, path[0]);
  if (st == TG_OK) st = tg_store_save(r->net.target, path[1]);
  if (st == TG_OK) st = tg_train_state_save(path[2], r->net.opt, &ts);
  for (int i = 0; i < 3 && st == TG_OK; i++) st = file_hash(path[i], hashes[i]);
  if (st == TG_OK) st = save_agent(r, hashes);
  if (st == TG_OK) r->saved_step = r->step;
  return st;
}

/* ---- loading ---- */

static tg_status meta_i64(const tg_safetensors *f, const char *path, const char *key, int64_t lo, int64_t hi, int64_t *out) {
  const char *s = tg_safetensors_meta(f, key);
  char *end;
  if (!s) return tg_error(TG_ERR_FORMAT, "%s: metadata \"%s\" is missing", path, key);
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi)
    return tg_error(TG_ERR_FORMAT, "%s: metadata %s=\"%s\" is not an integer in [%lld, %lld]", path, key, s, (long long)lo,
                    (long long)hi);
  *out = v;
  return TG_OK;
}

/* Tensor name of dtype dt and shape (d0[, d1]); else an error naming what was expected. */
static tg_status find_tensor(const tg_safetensors *f, const char *path, const char *name, tg_dtype dt, int ndim, int64_t d0,
                             int64_t d1, const tg_tensor **out) {
  const tg_tensor *t = tg_safetensors_find(f, name);
  char have[64], want[64];
  int ok = t && t->dtype == dt && t->ndim == ndim && t->shape[0] == d0 && (ndim < 2 || t->shape[1] == d1);
  if (!ok) {
    if (!t) return tg_error(TG_ERR_FORMAT, "%s: tensor '%s' is missing", path, name);
    if (ndim > 1) snprintf(want, sizeof want, "[%lld, %lld]", (long long)d0, (long long)d1);
    else snprintf(want, sizeof want, "[%lld]", (long long)d0);
    return tg_error(TG_ERR_SHAPE, "%s: tensor '%s' is %s %s; this run needs %s %s (another env or buffer size?)", path,
                    name, tg_dtype_name(t->dtype), tg_shape_str(t, have, sizeof have), tg_dtype_name(dt), want);
  }
  *out = t;
  return TG_OK;
}

static tg_status check_hashes(const tg_safetensors *f, const char *path, const char *run) {
  for (int i = 0; i < 3; i++) {
    char fpath[TG_TRAIN_PATH_MAX + 32], hex[17];
    const char *want = tg_safetensors_meta(f, HASH_KEYS[i]);
    path_in(fpath, sizeof fpath, run, OTHER_FILES[i]);
    if (!want) return tg_error(TG_ERR_FORMAT, "%s: metadata \"%s\" is missing", path, HASH_KEYS[i]);
    tg_status st = file_hash(fpath, hex);
    if (st != TG_OK) return st;
    if (strcmp(hex, want) != 0)
      return tg_error(TG_ERR_FORMAT, "%s is not the file %s was written with (a checkpoint was interrupted); resume needs "
                      "the four files of one checkpoint", fpath, path);
  }
  return TG_OK;
}

/* Counters of agent.safetensors into r (checked against the run's sizes). */
static tg_status load_counters(dq_run *r, const tg_safetensors *f, const char *path, int64_t *env_bytes) {
  int64_t v[9];
  const char *keys[9] = {"step", "episodes", "replay_pos", "replay_size", "replay_draws", "recent_n", "recent_pos",
                         "accum_n", "env_state_bytes"};
  int64_t hi[9] = {r->c.total_timesteps, INT64_MAX, r->rb.cap - 1, r->rb.cap, INT64_MAX, DQ_RECENT, DQ_RECENT - 1,
                   INT64_MAX, (int64_t)1 << 40};
  tg_status st = TG_OK;
  for (int i = 0; i < 9 && st == TG_OK; i++) st = meta_i64(f, path, keys[i], 0, hi[i], &v[i]);
  if (st != TG_OK) return st;
  r->step = v[0], r->episodes = v[1], r->rb.pos = v[2], r->rb.size = v[3], r->rb.draws = (uint64_t)v[4];
  r->recent_n = (int)v[5], r->recent_pos = (int)v[6], r->acc.n = v[7];
  *env_bytes = v[8];
  return TG_OK;
}

static tg_status load_arrays(dq_run *r, const tg_safetensors *f, const char *path, int64_t env_bytes) {
  const tg_tensor *t[N_AGENT_TENSORS] = {0};
  int64_t size = r->rb.size, O = r->sp.obs_dim;
  tg_status st = find_tensor(f, path, "replay.obs", TG_F32, 2, size, O, &t[0]);
  if (st == TG_OK) st = find_tensor(f, path, "replay.next_obs", TG_F32, 2, size, O, &t[1]);
  if (st == TG_OK) st = find_tensor(f, path, "replay.action", TG_I32, 1, size, 0, &t[2]);
  if (st == TG_OK) st = find_tensor(f, path, "replay.reward", TG_F32, 1, size, 0, &t[3]);
  if (st == TG_OK) st = find_tensor(f, path, "replay.terminated", TG_F32, 1, size, 0, &t[4]);
  if (st == TG_OK) st = find_tensor(f, path, "obs", TG_F32, 2, r->sp.n, O, &t[5]);
  if (st == TG_OK) st = find_tensor(f, path, "recent.return", TG_I64, 1, DQ_RECENT, 0, &t[6]);
  if (st == TG_OK) st = find_tensor(f, path, "recent.length", TG_I32, 1, DQ_RECENT, 0, &t[7]);
  if (st == TG_OK) st = find_tensor(f, path, "accum", TG_I64, 1, 3, 0, &t[8]);
  if (st == TG_OK && env_bytes) st = find_tensor(f, path, "env.state", TG_I64, 1, (env_bytes + 7) / 8, 0, &t[9]);
  if (st != TG_OK) return st;
  if (env_bytes && (st = tg_env_load_state(r->env, t[9]->data, (size_t)env_bytes)) != TG_OK) return st;
  void *dst[6] = {r->rb.obs, r->rb.next_obs, r->rb.action, r->rb.reward, r->rb.term, r->obs};
  for (int i = 0; i < 6; i++) memcpy(dst[i], t[i]->data, tg_nbytes(t[i]));
  bits_to(t[6]->data, r->recent_ret, DQ_RECENT);
  memcpy(r->recent_len, t[7]->data, sizeof r->recent_len);
  double acc[3];
  bits_to(t[8]->data, acc, 3);
  r->acc.loss = acc[0], r->acc.q = acc[1], r->acc.grad_norm = acc[2];
  return TG_OK;
}

static tg_status load_agent(dq_run *r) {
  char path[TG_TRAIN_PATH_MAX + 32];
  path_in(path, sizeof path, r->run, "agent.safetensors");
  tg_safetensors *f = NULL;
  tg_status st = tg_safetensors_load(path, &f);
  if (st != TG_OK) return st;
  const char *fmt = tg_safetensors_meta(f, "format"), *env = tg_safetensors_meta(f, "env");
  int64_t env_bytes = 0;
  if (!fmt || strcmp(fmt, DQ_AGENT_FORMAT) != 0)
    st = tg_error(TG_ERR_FORMAT, "%s: not a DQN agent checkpoint (format \"%s\" expected)", path, DQ_AGENT_FORMAT);
  else if (!env || strcmp(env, tg_env_name(r->env)) != 0)
    st = tg_error(TG_ERR_INVALID, "%s: saved from env '%s', resuming with '%s'", path, env ? env : "?", tg_env_name(r->env));
  if (st == TG_OK) st = check_hashes(f, path, r->run);
  if (st == TG_OK) st = load_counters(r, f, path, &env_bytes);
  if (st == TG_OK && env_bytes == 0)
    st = tg_error(TG_ERR_UNSUPPORTED, "%s: env '%s' cannot save its state, so the run cannot continue as if never stopped; "
                  "start a new run", path, tg_env_name(r->env));
  if (st == TG_OK && (size_t)env_bytes != tg_env_state_size(r->env))
    st = tg_error(TG_ERR_INVALID, "%s: the env state is %lld bytes, this env's is %zu (another env or size?)", path,
                  (long long)env_bytes, tg_env_state_size(r->env));
  if (st == TG_OK) st = load_arrays(r, f, path, env_bytes);
  tg_safetensors_free(f);
  return st;
}

tg_status dq_ckpt_load(dq_run *r) {
  char path[3][TG_TRAIN_PATH_MAX + 32];
  for (int i = 0; i < 3; i++) path_in(path[i], sizeof path[i], r->run, OTHER_FILES[i]);
  tg_train_state ts;
  tg_status st = load_agent(r);
  if (st == TG_OK) st = tg_store_load(r->net.online, path[0]);
  if (st == TG_OK) st = tg_store_load(r->net.target, path[1]);
  if (st == TG_OK) st = tg_train_state_load(path[2], r->net.opt, &ts);
  if (st == TG_OK && (ts.step != r->step || ts.rng_offset != r->rb.draws))
    st = tg_error(TG_ERR_FORMAT, "%s holds step %lld, the agent step %lld: not one checkpoint", path[2], (long long)ts.step,
                  (long long)r->step);
  if (st == TG_OK) r->saved_step = r->step;
  return st;
}
