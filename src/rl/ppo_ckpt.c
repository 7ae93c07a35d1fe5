/* PPO checkpoints: weights, Adam's state, and the agent (current observations, recent episodes, counters, env state). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "rl/ppo_internal.h"
#include "tickgrad/checkpoint.h"

#define N_AGENT_TENSORS 5

static const char *const OTHER_FILES[2] = {"weights.safetensors", "optim.safetensors"};
static const char *const HASH_KEYS[2] = {"weights_fnv1a", "optim_fnv1a"};

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

/* ---- saving ---- */

typedef struct agent_bufs {
  int64_t recent_bits[PP_RECENT]; /* doubles as their bit patterns: exact in an i64 tensor */
  int32_t *done;                  /* [N] next_done as i32 */
  int64_t *env_state;             /* [env_words] */
  size_t env_bytes, env_words;
} agent_bufs;

static tg_status agent_bufs_fill(pp_run *r, agent_bufs *b) {
  memcpy(b->recent_bits, r->recent_ret, sizeof b->recent_bits);
  b->done = tg_calloc((size_t)r->N, sizeof(int32_t));
  if (!b->done) return tg_error(TG_ERR_NOMEM, "ppo: out of host memory for a checkpoint");
  for (int i = 0; i < r->N; i++) b->done[i] = r->next_done[i];
  b->env_bytes = tg_env_state_size(r->env);
  b->env_words = (b->env_bytes + 7) / 8;
  if (!b->env_bytes) return TG_OK;
  b->env_state = tg_calloc(b->env_words, sizeof(int64_t));
  if (!b->env_state) return tg_error(TG_ERR_NOMEM, "ppo: out of memory for the env state (%zu bytes)", b->env_bytes);
  return tg_env_save_state(r->env, b->env_state, b->env_bytes);
}

static int agent_tensors(pp_run *r, agent_bufs *b, tg_tensor *t) {
  int64_t s_obs[2] = {r->N, r->O}, s_n[1] = {r->N}, s_rec[1] = {PP_RECENT}, s_env[1] = {(int64_t)b->env_words};
  tg_device h = tg_cpu(0);
  tg_tensor_view(&t[0], "next_obs", h, TG_F32, 2, s_obs, r->next_obs);
  tg_tensor_view(&t[1], "next_done", h, TG_I32, 1, s_n, b->done);
  tg_tensor_view(&t[2], "recent.return", h, TG_I64, 1, s_rec, b->recent_bits);
  tg_tensor_view(&t[3], "recent.length", h, TG_I32, 1, s_rec, r->recent_len);
  if (!b->env_words) return 4;
  tg_tensor_view(&t[4], "env.state", h, TG_I64, 1, s_env, b->env_state);
  return 5;
}

static tg_status save_agent(pp_run *r, char hashes[2][17]) {
  agent_bufs b;
  memset(&b, 0, sizeof b);
  tg_status st = agent_bufs_fill(r, &b);
  char v[5][32], path[TG_TRAIN_PATH_MAX + 32];
  tg_tensor t[N_AGENT_TENSORS];
  int nt = st == TG_OK ? agent_tensors(r, &b, t) : 0;
  snprintf(v[0], 32, "%lld", (long long)r->iter);
  snprintf(v[1], 32, "%lld", (long long)r->episodes);
  snprintf(v[2], 32, "%d", r->recent_n);
  snprintf(v[3], 32, "%d", r->recent_pos);
  snprintf(v[4], 32, "%zu", b.env_bytes);
  const tg_kv meta[] = {{"format", PP_AGENT_FORMAT}, {"iteration", v[0]}, {"episodes", v[1]}, {"recent_n", v[2]},
                        {"recent_pos", v[3]}, {"env_state_bytes", v[4]}, {"env", tg_env_name(r->env)},
                        {HASH_KEYS[0], hashes[0]}, {HASH_KEYS[1], hashes[1]}};
  path_in(path, sizeof path, r->run, "agent.safetensors");
  if (st == TG_OK) st = tg_safetensors_save(path, nt, t, (int)(sizeof meta / sizeof meta[0]), meta);
  tg_free(b.done);
  tg_free(b.env_state);
  return st;
}

tg_status pp_ckpt_save(pp_run *r) {
  char path[2][TG_TRAIN_PATH_MAX + 32], hashes[2][17];
  for (int i = 0; i < 2; i++) path_in(path[i], sizeof path[i], r->run, OTHER_FILES[i]);
  /* epoch: iterations done; cursor: environment steps done */
  tg_train_state ts = {tg_optim_steps(r->net.opt), r->c.seed, 0, r->iter, r->iter * r->B};
  tg_status st = tg_store_save(r->net.store, path[0]);
  if (st == TG_OK) st = tg_train_state_save(path[1], r->net.opt, &ts);
  for (int i = 0; i < 2 && st == TG_OK; i++) st = file_hash(path[i], hashes[i]);
  if (st == TG_OK) st = save_agent(r, hashes);
  if (st == TG_OK) r->saved_iter = r->iter;
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

/* Tensor name of dtype dt and shape [d0] or [d0, d1]; else an error naming what was expected. */
static tg_status find_tensor(const tg_safetensors *f, const char *path, const char *name, tg_dtype dt, int ndim, int64_t d0,
                             int64_t d1, const tg_tensor **out) {
  const tg_tensor *t = tg_safetensors_find(f, name);
  char have[64], want[64];
  int ok = t && t->dtype == dt && t->ndim == ndim && t->shape[0] == d0 && (ndim < 2 || t->shape[1] == d1);
  if (!ok) {
    if (!t) return tg_error(TG_ERR_FORMAT, "%s: tensor '%s' is missing", path, name);
    if (ndim > 1) snprintf(want, sizeof want, "[%lld, %lld]", (long long)d0, (long long)d1);
    else snprintf(want, sizeof want, "[%lld]", (long long)d0);
    return tg_error(TG_ERR_SHAPE, "%s: tensor '%s' is %s %s; this run needs %s %s (another env?)", path, name,
                    tg_dtype_name(t->dtype), tg_shape_str(t, have, sizeof have), tg_dtype_name(dt), want);
  }
  *out = t;
  return TG_OK;
}

static tg_status check_hashes(const tg_safetensors *f, const char *path, const char *run) {
  for (int i = 0; i < 2; i++) {
    char fpath[TG_TRAIN_PATH_MAX + 32], hex[17];
    const char *want = tg_safetensors_meta(f, HASH_KEYS[i]);
    path_in(fpath, sizeof fpath, run, OTHER_FILES[i]);
    if (!want) return tg_error(TG_ERR_FORMAT, "%s: metadata \"%s\" is missing", path, HASH_KEYS[i]);
    tg_status st = file_hash(fpath, hex);
    if (st != TG_OK) return st;
    if (strcmp(hex, want) != 0)
      return tg_error(TG_ERR_FORMAT, "%s is not the file %s was written with (a checkpoint was interrupted); resume needs "
                      "the three files of one checkpoint", fpath, path);
  }
  return TG_OK;
}

static tg_status load_counters(pp_run *r, const tg_safetensors *f, const char *path, int64_t *env_bytes) {
  int64_t v[5];
  const char *keys[5] = {"iteration", "episodes", "recent_n", "recent_pos", "env_state_bytes"};
  int64_t hi[5] = {r->n_iter, INT64_MAX, PP_RECENT, PP_RECENT - 1, (int64_t)1 << 40};
  tg_status st = TG_OK;
  for (int i = 0; i < 5 && st == TG_OK; i++) st = meta_i64(f, path, keys[i], 0, hi[i], &v[i]);
  if (st != TG_OK) return st;
  r->iter = v[0], r->episodes = v[1], r->recent_n = (int)v[2], r->recent_pos = (int)v[3];
  *env_bytes = v[4];
  return TG_OK;
}

/* The env's saved state; an env that cannot save one (0 bytes) is reset instead, so its running
 * episodes restart (the resumed run then differs from an uninterrupted one). */
static tg_status load_env(pp_run *r, const tg_safetensors *f, const char *path, int64_t env_bytes) {
  const tg_tensor *t = NULL;
  if (!env_bytes) {
    if (r->c.log)
      fprintf(r->c.log, "ppo: env '%s' cannot save its state; its episodes restart on resume\n", tg_env_name(r->env));
    memset(r->next_done, 1, (size_t)r->N);
    return tg_env_reset(r->env, r->next_obs);
  }
  tg_status st = find_tensor(f, path, "env.state", TG_I64, 1, (env_bytes + 7) / 8, 0, &t);
  return st == TG_OK ? tg_env_load_state(r->env, t->data, (size_t)env_bytes) : st;
}

static tg_status load_arrays(pp_run *r, const tg_safetensors *f, const char *path, int64_t env_bytes) {
  const tg_tensor *t[4] = {0};
  tg_status st = find_tensor(f, path, "next_obs", TG_F32, 2, r->N, r->O, &t[0]);
  if (st == TG_OK) st = find_tensor(f, path, "next_done", TG_I32, 1, r->N, 0, &t[1]);
  if (st == TG_OK) st = find_tensor(f, path, "recent.return", TG_I64, 1, PP_RECENT, 0, &t[2]);
  if (st == TG_OK) st = find_tensor(f, path, "recent.length", TG_I32, 1, PP_RECENT, 0, &t[3]);
  if (st != TG_OK) return st;
  memcpy(r->next_obs, t[0]->data, tg_nbytes(t[0]));
  for (int i = 0; i < r->N; i++) r->next_done[i] = ((const int32_t *)t[1]->data)[i] != 0;
  memcpy(r->recent_ret, t[2]->data, sizeof r->recent_ret);
  memcpy(r->recent_len, t[3]->data, sizeof r->recent_len);
  return load_env(r, f, path, env_bytes);
}

static tg_status load_agent(pp_run *r) {
  char path[TG_TRAIN_PATH_MAX + 32];
  path_in(path, sizeof path, r->run, "agent.safetensors");
  tg_safetensors *f = NULL;
  tg_status st = tg_safetensors_load(path, &f);
  if (st != TG_OK) return st;
  const char *fmt = tg_safetensors_meta(f, "format"), *env = tg_safetensors_meta(f, "env");
  int64_t env_bytes = 0;
  if (!fmt || strcmp(fmt, PP_AGENT_FORMAT) != 0)
    st = tg_error(TG_ERR_FORMAT, "%s: not a PPO agent checkpoint (format \"%s\" expected)", path, PP_AGENT_FORMAT);
  else if (!env || strcmp(env, tg_env_name(r->env)) != 0)
    st = tg_error(TG_ERR_INVALID, "%s: saved from env '%s', resuming with '%s'", path, env ? env : "?", tg_env_name(r->env));
  if (st == TG_OK) st = check_hashes(f, path, r->run);
  if (st == TG_OK) st = load_counters(r, f, path, &env_bytes);
  if (st == TG_OK && (size_t)env_bytes != tg_env_state_size(r->env))
    st = tg_error(TG_ERR_INVALID, "%s: the env state is %lld bytes, this env's is %zu (another env or size?)", path,
                  (long long)env_bytes, tg_env_state_size(r->env));
  if (st == TG_OK) st = load_arrays(r, f, path, env_bytes);
  tg_safetensors_free(f);
  return st;
}

tg_status pp_ckpt_load(pp_run *r) {
  char path[2][TG_TRAIN_PATH_MAX + 32];
  for (int i = 0; i < 2; i++) path_in(path[i], sizeof path[i], r->run, OTHER_FILES[i]);
  tg_train_state ts;
  tg_status st = load_agent(r);
  if (st == TG_OK) st = tg_store_load(r->net.store, path[0]);
  if (st == TG_OK) st = tg_train_state_load(path[1], r->net.opt, &ts);
  if (st == TG_OK && ts.epoch != r->iter)
    st = tg_error(TG_ERR_FORMAT, "%s holds iteration %lld, the agent iteration %lld: not one checkpoint", path[1],
                  (long long)ts.epoch, (long long)r->iter);
  if (st == TG_OK) r->saved_iter = r->iter;
  return st;
}
