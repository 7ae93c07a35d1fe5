/* The agents' agent.safetensors: writing and checking the file that holds an agent's position beside its weights. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "base/hash.h"
#include "base/alloc.h"
#include "agents/rl_shared.h"

#define AGENT_FILE "agent.safetensors"

void rl_run_path(char *buf, size_t n, const char *run, const char *file) { snprintf(buf, n, "%s/%s", run, file); }

/* The metadata key of a file's hash: "weights.safetensors" -> "weights_fnv1a". */
static void hash_key(const char *file, char *key, size_t n) {
  snprintf(key, n, "%.*s_fnv1a", (int)strcspn(file, "."), file);
}

/* ---- writing ---- */

void rl_agent_begin(rl_agent_out *a, const rl_agent_kind *kind) {
  memset(a, 0, sizeof *a);
  a->kind = kind;
  a->meta[a->nm++] = (tg_kv){"format", kind->format};
}

void rl_agent_put(rl_agent_out *a, const char *name, tg_dtype dt, int ndim, int64_t d0, int64_t d1, void *data) {
  int64_t shape[2] = {d0, d1};
  if (a->nt < RL_AGENT_MAX_TENSORS) tg_tensor_view(&a->t[a->nt++], name, tg_cpu(0), dt, ndim, shape, data);
}

static void put_meta(rl_agent_out *a, const char *key, const char *value) {
  if (a->nm < RL_AGENT_MAX_META) a->meta[a->nm++] = (tg_kv){key, value};
}

void rl_agent_i64(rl_agent_out *a, const char *key, int64_t v) {
  if (a->nm >= RL_AGENT_MAX_META) return;
  snprintf(a->val[a->nm], sizeof a->val[a->nm], "%lld", (long long)v);
  put_meta(a, key, a->val[a->nm]);
}

void rl_agent_u64(rl_agent_out *a, const char *key, uint64_t v) {
  if (a->nm >= RL_AGENT_MAX_META) return;
  snprintf(a->val[a->nm], sizeof a->val[a->nm], "%" PRIu64, v);
  put_meta(a, key, a->val[a->nm]);
}

void rl_agent_recent(rl_agent_out *a, const rl_recent *r) {
  memcpy(a->recent_bits, r->ret, sizeof a->recent_bits); /* doubles as their bit patterns: exact in an i64 tensor */
  memcpy(a->recent_len, r->len, sizeof a->recent_len);
  rl_agent_put(a, "recent.return", TG_I64, 1, RL_RECENT, 0, a->recent_bits);
  rl_agent_put(a, "recent.length", TG_I32, 1, RL_RECENT, 0, a->recent_len);
  rl_agent_i64(a, "recent_n", r->n);
  rl_agent_i64(a, "recent_pos", r->pos);
}

/* The env's state as whole i64 words, the last tensor (none when the env cannot save one). */
static tg_status put_env_state(rl_agent_out *a, const tg_env *env) {
  size_t bytes = tg_env_state_size(env), words = (bytes + 7) / 8;
  tg_status st = TG_OK;
  if (bytes) {
    a->env_state = tg_calloc(words, sizeof(int64_t));
    if (!a->env_state)
      return tg_error(TG_ERR_NOMEM, "%s: out of memory for the env state (%zu bytes)", a->kind->what, bytes);
    st = tg_env_save_state(env, a->env_state, bytes);
    rl_agent_put(a, "env.state", TG_I64, 1, (int64_t)words, 0, a->env_state);
  }
  rl_agent_i64(a, "env_state_bytes", (int64_t)bytes);
  put_meta(a, "env", tg_env_name(env));
  return st;
}

/* Each file's FNV-1a beside the agent, so a resume can tell whether they are its own. */
static tg_status hash_files(rl_agent_out *a, const char *run) {
  for (int i = 0; i < a->kind->n_files; i++) {
    char path[TG_PATH_MAX + 32];
    rl_run_path(path, sizeof path, run, a->kind->files[i]);
    hash_key(a->kind->files[i], a->keys[i], sizeof a->keys[i]);
    tg_status st = tg_file_hash(path, a->hashes[i]);
    if (st != TG_OK) return st;
  }
  return TG_OK;
}

tg_status rl_agent_save(rl_agent_out *a, const char *run, const tg_env *env) {
  char path[TG_PATH_MAX + 32];
  tg_status st = hash_files(a, run);
  if (st == TG_OK) st = put_env_state(a, env);
  for (int i = 0; i < a->kind->n_files; i++) put_meta(a, a->keys[i], a->hashes[i]); /* the last metadata */
  rl_run_path(path, sizeof path, run, AGENT_FILE);
  if (st == TG_OK) st = tg_safetensors_save(path, a->nt, a->t, a->nm, a->meta);
  tg_free(a->env_state);
  a->env_state = NULL;
  return st;
}

/* ---- reading ---- */

static tg_status check_hashes(const rl_agent_in *a, const char *run) {
  static const char *const count[RL_CKPT_MAX_FILES + 2] = {"", "", "two", "three", "four"};
  for (int i = 0; i < a->kind->n_files; i++) {
    char fpath[TG_PATH_MAX + 32], key[32], hex[17];
    hash_key(a->kind->files[i], key, sizeof key);
    const char *want = tg_safetensors_meta(a->f, key);
    rl_run_path(fpath, sizeof fpath, run, a->kind->files[i]);
    if (!want) return tg_error(TG_ERR_FORMAT, "%s: metadata \"%s\" is missing", a->path, key);
    tg_status st = tg_file_hash(fpath, hex);
    if (st != TG_OK) return st;
    if (strcmp(hex, want) != 0)
      return tg_error(TG_ERR_FORMAT, "%s is not the file %s was written with (a checkpoint was interrupted); resume needs "
                      "the %s files of one checkpoint", fpath, a->path, count[a->kind->n_files + 1]);
  }
  return TG_OK;
}

tg_status rl_agent_open(rl_agent_in *a, const rl_agent_kind *kind, const char *run, const tg_env *env) {
  memset(a, 0, sizeof *a);
  a->kind = kind;
  rl_run_path(a->path, sizeof a->path, run, AGENT_FILE);
  tg_status st = tg_safetensors_load(a->path, &a->f);
  if (st != TG_OK) return st;
  const char *fmt = tg_safetensors_meta(a->f, "format"), *name = tg_safetensors_meta(a->f, "env");
  if (!fmt || strcmp(fmt, kind->format) != 0)
    return tg_error(TG_ERR_FORMAT, "%s: not a %s agent checkpoint (format \"%s\" expected)", a->path, kind->title,
                    kind->format);
  if (!name || strcmp(name, tg_env_name(env)) != 0)
    return tg_error(TG_ERR_INVALID, "%s: saved from env '%s', resuming with '%s'", a->path, name ? name : "?",
                    tg_env_name(env));
  return check_hashes(a, run);
}

void rl_agent_close(rl_agent_in *a) {
  tg_safetensors_free(a->f);
  a->f = NULL;
}

tg_status rl_agent_count(const rl_agent_in *a, const char *key, int64_t lo, int64_t hi, int64_t *out) {
  const char *s = tg_safetensors_meta(a->f, key);
  char *end;
  if (!s) return tg_error(TG_ERR_FORMAT, "%s: metadata \"%s\" is missing", a->path, key);
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi)
    return tg_error(TG_ERR_FORMAT, "%s: metadata %s=\"%s\" is not an integer in [%lld, %lld]", a->path, key, s,
                    (long long)lo, (long long)hi);
  *out = v;
  return TG_OK;
}

tg_status rl_agent_tensor(const rl_agent_in *a, const char *name, tg_dtype dt, int ndim, int64_t d0, int64_t d1,
                          const tg_tensor **out) {
  const tg_tensor *t = tg_safetensors_find(a->f, name);
  char have[64], want[64];
  int ok = t && t->dtype == dt && t->ndim == ndim && t->shape[0] == d0 && (ndim < 2 || t->shape[1] == d1);
  if (!ok) {
    if (!t) return tg_error(TG_ERR_FORMAT, "%s: tensor '%s' is missing", a->path, name);
    if (ndim > 1) snprintf(want, sizeof want, "[%lld, %lld]", (long long)d0, (long long)d1);
    else snprintf(want, sizeof want, "[%lld]", (long long)d0);
    return tg_error(TG_ERR_SHAPE, "%s: tensor '%s' is %s %s; this run needs %s %s (%s)", a->path, name,
                    tg_dtype_name(t->dtype), tg_shape_str(t, have, sizeof have), tg_dtype_name(dt), want, a->kind->hint);
  }
  *out = t;
  return TG_OK;
}

tg_status rl_agent_recent_load(const rl_agent_in *a, rl_recent *r) {
  int64_t n = 0, pos = 0;
  const tg_tensor *ret = NULL, *len = NULL;
  tg_status st = rl_agent_count(a, "recent_n", 0, RL_RECENT, &n);
  if (st == TG_OK) st = rl_agent_count(a, "recent_pos", 0, RL_RECENT - 1, &pos);
  if (st == TG_OK) st = rl_agent_tensor(a, "recent.return", TG_I64, 1, RL_RECENT, 0, &ret);
  if (st == TG_OK) st = rl_agent_tensor(a, "recent.length", TG_I32, 1, RL_RECENT, 0, &len);
  if (st != TG_OK) return st;
  r->n = (int)n, r->pos = (int)pos;
  memcpy(r->ret, ret->data, sizeof r->ret);
  memcpy(r->len, len->data, sizeof r->len);
  return TG_OK;
}

tg_status rl_agent_env_bytes(const rl_agent_in *a, const tg_env *env, int required, int64_t *bytes) {
  tg_status st = rl_agent_count(a, "env_state_bytes", 0, (int64_t)1 << 40, bytes);
  if (st == TG_OK && required && *bytes == 0)
    return tg_error(TG_ERR_UNSUPPORTED, "%s: env '%s' cannot save its state, so the run cannot continue as if never "
                    "stopped; start a new run", a->path, tg_env_name(env));
  if (st == TG_OK && (size_t)*bytes != tg_env_state_size(env))
    return tg_error(TG_ERR_INVALID, "%s: the env state is %lld bytes, this env's is %zu (another env or size?)", a->path,
                    (long long)*bytes, tg_env_state_size(env));
  return st;
}

tg_status rl_agent_env_load(const rl_agent_in *a, tg_env *env, int64_t bytes) {
  const tg_tensor *t = NULL;
  tg_status st = rl_agent_tensor(a, "env.state", TG_I64, 1, (bytes + 7) / 8, 0, &t);
  return st == TG_OK ? tg_env_load_state(env, t->data, (size_t)bytes) : st;
}

tg_train_state rl_train_state(int64_t position, uint64_t seed, uint64_t draws) {
  tg_train_state ts = {position, seed, draws, 0, 0};
  return ts;
}

tg_status rl_train_state_check(const char *path, const tg_train_state *ts, int64_t position, uint64_t draws,
                               const char *unit) {
  int64_t at = ts->epoch > 0 ? ts->epoch : ts->step; /* earlier PPO runs kept their iterations in epoch */
  if (at == position && ts->rng_offset == draws) return TG_OK;
  return tg_error(TG_ERR_FORMAT, "%s holds %s %lld, the agent %s %lld: not one checkpoint", path, unit, (long long)at,
                  unit, (long long)position);
}
