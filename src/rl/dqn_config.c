/* DQN settings: CleanRL's defaults, one table of names and ranges for setting, checking, config.json and resume. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "io/json.h"
#include "rl/dqn_internal.h"

typedef enum dq_type { DQ_I64, DQ_INT, DQ_F32, DQ_U64, DQ_HIDDEN } dq_type;

typedef struct dq_setting {
  const char *key;
  dq_type type;
  size_t off;
  double lo, hi; /* inclusive range of numbers */
  int resumable; /* may differ when a run resumes */
  const char *help;
} dq_setting;

#define OFF(m) offsetof(tg_dqn_config, m)
static const dq_setting SETTINGS[] = {
    {"total_timesteps", DQ_I64, OFF(total_timesteps), 1, 1e15, 0, "vector steps to train (CleanRL's global_step)"},
    {"learning_rate", DQ_F32, OFF(learning_rate), 1e-12, 10, 0, "Adam's learning rate"},
    {"adam_eps", DQ_F32, OFF(adam_eps), 1e-30, 1, 0, "Adam's epsilon"},
    {"buffer_size", DQ_I64, OFF(buffer_size), 1, 1e10, 0, "replay capacity in transitions"},
    {"gamma", DQ_F32, OFF(gamma), 0, 1, 0, "discount"},
    {"tau", DQ_F32, OFF(tau), 1e-9, 1, 0, "target update: 1 copies, < 1 is Polyak averaging"},
    {"target_network_frequency", DQ_I64, OFF(target_network_frequency), 1, 1e15, 0, "steps between target updates"},
    {"batch_size", DQ_INT, OFF(batch_size), 1, 1e7, 0, "transitions per gradient step"},
    {"start_e", DQ_F32, OFF(start_e), 0, 1, 0, "epsilon at step 0"},
    {"end_e", DQ_F32, OFF(end_e), 0, 1, 0, "final epsilon"},
    {"exploration_fraction", DQ_F32, OFF(exploration_fraction), 1e-9, 1, 0,
     "fraction of total_timesteps over which epsilon falls linearly"},
    {"learning_starts", DQ_I64, OFF(learning_starts), 0, 1e15, 0, "steps before the first gradient step"},
    {"train_frequency", DQ_I64, OFF(train_frequency), 1, 1e15, 0, "steps between gradient steps"},
    {"hidden", DQ_HIDDEN, OFF(hidden), 1, 1e6, 0, "hidden layer widths, e.g. 120,84 (ReLU between)"},
    {"double_q", DQ_INT, OFF(double_q), 0, 1, 0, "1: Double DQN targets"},
    {"huber", DQ_INT, OFF(huber), 0, 1, 0, "1: Huber loss (delta 1); 0: MSE"},
    {"max_grad_norm", DQ_F32, OFF(max_grad_norm), 0, 1e30, 0, "global gradient-norm clip (0: none)"},
    {"seed", DQ_U64, OFF(seed), 0, 0, 0, "initialisation, exploration and replay draws"},
    {"log_every", DQ_I64, OFF(log_every), 1, 1e15, 1, "steps between log lines and metrics.csv rows"},
    {"ckpt_every", DQ_I64, OFF(ckpt_every), 0, 1e15, 1, "steps between checkpoints (0: only at the end)"},
};
#define N_SETTINGS ((int)(sizeof SETTINGS / sizeof SETTINGS[0]))

tg_dqn_config tg_dqn_defaults(void) {
  tg_dqn_config c;
  memset(&c, 0, sizeof c);
  c.total_timesteps = 500000;
  c.learning_rate = 2.5e-4f;
  c.adam_eps = 1e-8f;
  c.buffer_size = 10000;
  c.gamma = 0.99f;
  c.tau = 1.0f;
  c.target_network_frequency = 500;
  c.batch_size = 128;
  c.start_e = 1.0f;
  c.end_e = 0.05f;
  c.exploration_fraction = 0.5f;
  c.learning_starts = 10000;
  c.train_frequency = 10;
  c.n_hidden = 2;
  c.hidden[0] = 120;
  c.hidden[1] = 84;
  c.seed = 1;
  c.device = tg_cpu(0);
  c.log_every = 10000;
  c.ckpt_every = 100000;
  return c;
}

static const dq_setting *find(const char *key) {
  for (int i = 0; key && i < N_SETTINGS; i++)
    if (strcmp(SETTINGS[i].key, key) == 0) return &SETTINGS[i];
  return NULL;
}

static double get_num(const tg_dqn_config *c, const dq_setting *s) {
  const char *p = (const char *)c + s->off;
  switch (s->type) {
    case DQ_I64: return (double)*(const int64_t *)p;
    case DQ_INT: return *(const int *)p;
    case DQ_F32: return *(const float *)p;
    default: return 0;
  }
}

/* A number into s, range-checked; where names the source in errors. */
static tg_status set_num(tg_dqn_config *c, const dq_setting *s, double v, const char *where) {
  char *p = (char *)c + s->off;
  if (!(v >= s->lo && v <= s->hi))
    return tg_error(TG_ERR_INVALID, "dqn config: %s (%s) is %g; want a number in [%g, %g] (%s)", s->key, where, v, s->lo,
                    s->hi, s->help);
  if ((s->type == DQ_I64 || s->type == DQ_INT) && v != floor(v))
    return tg_error(TG_ERR_INVALID, "dqn config: %s (%s) is %g; want a whole number", s->key, where, v);
  if (s->type == DQ_I64) *(int64_t *)p = (int64_t)v;
  else if (s->type == DQ_INT) *(int *)p = (int)v;
  else *(float *)p = (float)v;
  return TG_OK;
}

static tg_status set_hidden(tg_dqn_config *c, const double *v, int n, const char *where) {
  if (n < 0 || n > TG_DQN_MAX_HIDDEN)
    return tg_error(TG_ERR_INVALID, "dqn config: hidden (%s): %d layers; want 0..%d", where, n, TG_DQN_MAX_HIDDEN);
  for (int k = 0; k < n; k++)
    if (!(v[k] >= 1 && v[k] <= 1e6) || v[k] != floor(v[k]))
      return tg_error(TG_ERR_INVALID, "dqn config: hidden (%s): width %g of layer %d; want a whole number in [1, 1e6]",
                      where, v[k], k + 1);
  c->n_hidden = n;
  for (int k = 0; k < n; k++) c->hidden[k] = (int)v[k];
  return TG_OK;
}

static int parse_double(const char *t, double *v) {
  char *end;
  if (!t || !*t) return 0;
  errno = 0;
  *v = strtod(t, &end);
  return *end == '\0' && errno == 0;
}

/* "120,84" (or "" / "none" for no hidden layer) */
static tg_status parse_hidden(tg_dqn_config *c, const char *text, const char *where) {
  double v[TG_DQN_MAX_HIDDEN + 1];
  int n = 0;
  if (!*text || strcmp(text, "none") == 0) return set_hidden(c, v, 0, where);
  for (const char *p = text; n <= TG_DQN_MAX_HIDDEN;) {
    char tok[32];
    size_t len = strcspn(p, ",");
    snprintf(tok, sizeof tok, "%.*s", (int)(len < 31 ? len : 31), p);
    if (len >= 31 || !parse_double(tok, &v[n]))
      return tg_error(TG_ERR_INVALID, "dqn config: hidden (%s) '%s': want widths separated by commas, e.g. 120,84", where,
                      text);
    n++;
    if (!p[len]) break;
    p += len + 1;
  }
  return set_hidden(c, v, n, where);
}

static tg_status set_text(tg_dqn_config *c, const dq_setting *s, const char *text, const char *where) {
  if (s->type == DQ_HIDDEN) return parse_hidden(c, text, where);
  if (s->type == DQ_U64) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!*text || *end || errno || text[0] == '-')
      return tg_error(TG_ERR_INVALID, "dqn config: %s (%s) '%s' is not an unsigned 64-bit integer", s->key, where, text);
    *(uint64_t *)((char *)c + s->off) = (uint64_t)v;
    return TG_OK;
  }
  double v;
  if (!parse_double(text, &v)) return tg_error(TG_ERR_INVALID, "dqn config: %s (%s) '%s' is not a number", s->key, where, text);
  return set_num(c, s, v, where);
}

tg_status tg_dqn_config_set(tg_dqn_config *c, const char *key, const char *value) {
  const dq_setting *s = find(key);
  if (!c) return tg_error(TG_ERR_INVALID, "dqn config: NULL config");
  if (!s) return tg_error(TG_ERR_INVALID, "dqn config: unknown setting '%s' (tg_dqn_config_print lists them)", key ? key : "");
  if (!value) return tg_error(TG_ERR_INVALID, "dqn config: %s needs a value", s->key);
  return set_text(c, s, value, "set");
}

/* The shortest decimal that reads back as the same float. */
static void float_str(float v, char *buf, size_t n) {
  for (int digits = 6; digits <= 9; digits++) {
    snprintf(buf, n, "%.*g", digits, (double)v);
    if ((float)strtod(buf, NULL) == v) return;
  }
}

static void value_str(const tg_dqn_config *c, const dq_setting *s, char *buf, size_t n) {
  const char *p = (const char *)c + s->off;
  if (s->type == DQ_HIDDEN) {
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < c->n_hidden && at < n; k++) at += (size_t)snprintf(buf + at, n - at, k ? ",%d" : "%d", c->hidden[k]);
  } else if (s->type == DQ_U64) snprintf(buf, n, "%" PRIu64, *(const uint64_t *)p);
  else if (s->type == DQ_F32) float_str(*(const float *)p, buf, n);
  else snprintf(buf, n, "%.0f", get_num(c, s));
}

void tg_dqn_config_print(FILE *f, const tg_dqn_config *c) {
  for (int i = 0; i < N_SETTINGS; i++) {
    char v[160];
    value_str(c, &SETTINGS[i], v, sizeof v);
    fprintf(f, "  %-26s %-12s %s\n", SETTINGS[i].key, v, SETTINGS[i].help);
  }
}

tg_status tg_dqn_config_check(const tg_dqn_config *c) {
  if (!c) return tg_error(TG_ERR_INVALID, "dqn config: NULL config");
  for (int i = 0; i < N_SETTINGS; i++) {
    const dq_setting *s = &SETTINGS[i];
    if (s->type == DQ_U64) continue;
    if (s->type == DQ_HIDDEN) {
      double v[TG_DQN_MAX_HIDDEN];
      tg_dqn_config tmp = *c;
      if (c->n_hidden < 0 || c->n_hidden > TG_DQN_MAX_HIDDEN) return set_hidden(&tmp, v, c->n_hidden, "check");
      for (int k = 0; k < c->n_hidden; k++) v[k] = c->hidden[k];
      tg_status st = set_hidden(&tmp, v, c->n_hidden, "check");
      if (st != TG_OK) return st;
      continue;
    }
    double v = get_num(c, s);
    if (!(v >= s->lo && v <= s->hi))
      return tg_error(TG_ERR_INVALID, "dqn config: %s is %g; want [%g, %g] (%s)", s->key, v, s->lo, s->hi, s->help);
  }
  if (c->end_e > c->start_e)
    return tg_error(TG_ERR_INVALID, "dqn config: end_e %g is above start_e %g; epsilon only falls", (double)c->end_e,
                    (double)c->start_e);
  if (c->batch_size > c->buffer_size)
    return tg_error(TG_ERR_INVALID, "dqn config: batch_size %d is larger than buffer_size %lld", c->batch_size,
                    (long long)c->buffer_size);
  if (c->stop_after < 0) return tg_error(TG_ERR_INVALID, "dqn config: stop_after %lld must be >= 0", (long long)c->stop_after);
  return TG_OK;
}

/* ---- config.json ---- */

char *dq_config_json(const tg_dqn_config *c, const tg_env *env) {
  tg_json_buf b = {0};
  char dev[16];
  tg_env_spec sp = tg_env_spec_of(env);
  tg_json_buf_printf(&b, "{\n  \"format\": \"%s\",\n", DQ_CONFIG_FORMAT);
  for (int i = 0; i < N_SETTINGS; i++) {
    const dq_setting *s = &SETTINGS[i];
    char v[160];
    value_str(c, s, v, sizeof v);
    if (s->type == DQ_HIDDEN) {
      tg_json_buf_printf(&b, "  \"%s\": [", s->key);
      for (int k = 0; k < c->n_hidden; k++) tg_json_buf_printf(&b, k ? ", %d" : "%d", c->hidden[k]);
      tg_json_buf_puts(&b, "],\n");
    } else if (s->type == DQ_U64) tg_json_buf_printf(&b, "  \"%s\": \"%s\",\n", s->key, v); /* exact beyond 2^53 */
    else tg_json_buf_printf(&b, "  \"%s\": %s,\n", s->key, v);
  }
  tg_json_buf_printf(&b, "  \"device\": \"%s\",\n  \"env\": {\"name\": ", tg_device_str(c->device, dev, sizeof dev));
  tg_json_buf_append_string(&b, tg_env_name(env));
  tg_json_buf_printf(&b, ", \"n\": %d, \"obs_dim\": %d, \"n_actions\": %d}\n}\n", sp.n, sp.obs_dim, sp.n_actions);
  if (b.oom) {
    tg_json_buf_free(&b);
    return NULL;
  }
  return b.data;
}

static tg_status read_setting(tg_dqn_config *c, const dq_setting *s, const tg_json *v, const char *path) {
  char where[600];
  snprintf(where, sizeof where, "%s byte %zu", path, v->offset);
  if (s->type == DQ_HIDDEN) {
    double w[TG_DQN_MAX_HIDDEN];
    int n = 0;
    if (v->type != TG_JSON_ARRAY || v->count > TG_DQN_MAX_HIDDEN)
      return tg_error(TG_ERR_FORMAT, "%s: \"hidden\" must be an array of at most %d widths", where, TG_DQN_MAX_HIDDEN);
    for (const tg_json *e = v->first; e; e = e->next) {
      if (e->type != TG_JSON_INT) return tg_error(TG_ERR_FORMAT, "%s: \"hidden\" holds a non-integer", where);
      w[n++] = e->num;
    }
    return set_hidden(c, w, n, where);
  }
  if (s->type == DQ_U64) {
    if (v->type != TG_JSON_STRING) return tg_error(TG_ERR_FORMAT, "%s: \"%s\" must be a string of digits", where, s->key);
    return set_text(c, s, v->str, where);
  }
  if (v->type != TG_JSON_INT && v->type != TG_JSON_REAL)
    return tg_error(TG_ERR_FORMAT, "%s: \"%s\" must be a number", where, s->key);
  return set_num(c, s, v->num, where);
}

static tg_status read_env(const tg_json *root, const char *path, dq_env_id *id) {
  const tg_json *e = tg_json_get(root, "env"), *name = e ? tg_json_get(e, "name") : NULL;
  const char *keys[3] = {"n", "obs_dim", "n_actions"};
  int *dst[3] = {&id->n, &id->obs_dim, &id->n_actions};
  if (!name || name->type != TG_JSON_STRING)
    return tg_error(TG_ERR_FORMAT, "%s: \"env\" must be an object with a \"name\"", path);
  snprintf(id->name, sizeof id->name, "%s", name->str);
  for (int k = 0; k < 3; k++) {
    const tg_json *v = tg_json_get(e, keys[k]);
    if (!v || v->type != TG_JSON_INT) return tg_error(TG_ERR_FORMAT, "%s: env.%s must be an integer", path, keys[k]);
    *dst[k] = (int)v->i;
  }
  return TG_OK;
}

tg_status dq_config_load(const char *path, tg_dqn_config *c, dq_env_id *env) {
  char *text = NULL;
  size_t len = 0;
  tg_status st = tr_read_file(path, &text, &len);
  if (st != TG_OK) return st;
  tg_json_doc *doc = NULL;
  st = tg_json_parse(text, len, path, 0, &doc);
  tg_free(text);
  if (st != TG_OK) return st;
  const tg_json *root = tg_json_root(doc), *fmt = tg_json_get(root, "format");
  if (!fmt || fmt->type != TG_JSON_STRING || strcmp(fmt->str, DQ_CONFIG_FORMAT) != 0)
    st = tg_error(TG_ERR_FORMAT, "%s: not a DQN run's config (format \"%s\" expected)", path, DQ_CONFIG_FORMAT);
  for (int i = 0; i < N_SETTINGS && st == TG_OK; i++) {
    const tg_json *v = tg_json_get(root, SETTINGS[i].key);
    if (!v) st = tg_error(TG_ERR_FORMAT, "%s: \"%s\" is missing", path, SETTINGS[i].key);
    else st = read_setting(c, &SETTINGS[i], v, path);
  }
  if (st == TG_OK) st = read_env(root, path, env);
  tg_json_free(doc);
  return st;
}

const char *dq_config_diff(const tg_dqn_config *a, const tg_dqn_config *b) {
  for (int i = 0; i < N_SETTINGS; i++) {
    const dq_setting *s = &SETTINGS[i];
    if (s->resumable) continue;
    int differ;
    if (s->type == DQ_HIDDEN) {
      differ = a->n_hidden != b->n_hidden;
      for (int k = 0; !differ && k < a->n_hidden; k++) differ = a->hidden[k] != b->hidden[k];
    } else if (s->type == DQ_U64) differ = a->seed != b->seed;
    else differ = get_num(a, s) != get_num(b, s);
    if (differ) return s->key;
  }
  return NULL;
}

tg_status tg_dqn_config_load(const char *run_dir, tg_dqn_config *c) {
  char path[TG_TRAIN_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/config.json", run_dir);
  dq_env_id id;
  return dq_config_load(path, c, &id);
}
