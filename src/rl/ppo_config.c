/* PPO settings: CleanRL's CartPole defaults, one table of names and ranges for setting, checking, config.json and resume. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "io/json.h"
#include "rl/ppo_internal.h"

typedef enum pp_type { PP_I64, PP_INT, PP_F32, PP_U64, PP_HIDDEN } pp_type;

typedef struct pp_setting {
  const char *key;
  pp_type type;
  size_t off;
  double lo, hi; /* inclusive range of numbers */
  int resumable; /* may differ when a run resumes */
  const char *help;
} pp_setting;

#define OFF(m) offsetof(tg_ppo_config, m)
static const pp_setting SETTINGS[] = {
    {"total_timesteps", PP_I64, OFF(total_timesteps), 1, 1e15, 0, "environment steps to train (CleanRL's global_step)"},
    {"learning_rate", PP_F32, OFF(learning_rate), 1e-12, 10, 0, "Adam's learning rate"},
    {"anneal_lr", PP_INT, OFF(anneal_lr), 0, 1, 0, "1: the learning rate falls linearly to 0 over the run"},
    {"adam_eps", PP_F32, OFF(adam_eps), 1e-30, 1, 0, "Adam's epsilon"},
    {"num_envs", PP_INT, OFF(num_envs), 1, 1e6, 0, "environment instances (the env's n)"},
    {"num_steps", PP_INT, OFF(num_steps), 1, 1e7, 0, "vector steps per rollout"},
    {"num_minibatches", PP_INT, OFF(num_minibatches), 1, 1e7, 0, "minibatches per epoch"},
    {"update_epochs", PP_INT, OFF(update_epochs), 1, 1e4, 0, "passes over each rollout"},
    {"gamma", PP_F32, OFF(gamma), 0, 1, 0, "discount"},
    {"gae_lambda", PP_F32, OFF(gae_lambda), 0, 1, 0, "GAE lambda"},
    {"norm_adv", PP_INT, OFF(norm_adv), 0, 1, 0, "1: normalise advantages per minibatch"},
    {"clip_coef", PP_F32, OFF(clip_coef), 1e-9, 1e6, 0, "ratio clip epsilon (and the value clip)"},
    {"clip_vloss", PP_INT, OFF(clip_vloss), 0, 1, 0, "1: clipped value loss"},
    {"ent_coef", PP_F32, OFF(ent_coef), -1e6, 1e6, 0, "entropy bonus coefficient"},
    {"vf_coef", PP_F32, OFF(vf_coef), 0, 1e6, 0, "value loss coefficient"},
    {"max_grad_norm", PP_F32, OFF(max_grad_norm), 0, 1e30, 0, "global gradient-norm clip (0: none)"},
    {"target_kl", PP_F32, OFF(target_kl), 0, 1e30, 0, "stop an iteration's epochs above this approx_kl (0: never)"},
    {"hidden", PP_HIDDEN, OFF(hidden), 1, 1e6, 0, "hidden widths of the actor and the critic, e.g. 64,64 (tanh)"},
    {"seed", PP_U64, OFF(seed), 0, 0, 0, "initialisation, actions and minibatch permutations"},
    {"log_every", PP_I64, OFF(log_every), 1, 1e15, 1, "environment steps between log lines and metrics.csv rows"},
    {"ckpt_every", PP_I64, OFF(ckpt_every), 0, 1e15, 1, "iterations between checkpoints (0: only at the end)"},
};
#define N_SETTINGS ((int)(sizeof SETTINGS / sizeof SETTINGS[0]))

tg_ppo_config tg_ppo_defaults(void) {
  tg_ppo_config c;
  memset(&c, 0, sizeof c);
  c.total_timesteps = 500000;
  c.learning_rate = 2.5e-4f;
  c.anneal_lr = 1;
  c.adam_eps = 1e-5f;
  c.num_envs = 4;
  c.num_steps = 128;
  c.num_minibatches = 4;
  c.update_epochs = 4;
  c.gamma = 0.99f;
  c.gae_lambda = 0.95f;
  c.norm_adv = 1;
  c.clip_coef = 0.2f;
  c.clip_vloss = 1;
  c.ent_coef = 0.01f;
  c.vf_coef = 0.5f;
  c.max_grad_norm = 0.5f;
  c.target_kl = 0.0f;
  c.n_hidden = 2;
  c.hidden[0] = 64;
  c.hidden[1] = 64;
  c.seed = 1;
  c.device = tg_cpu(0);
  c.log_every = 10000;
  c.ckpt_every = 0;
  return c;
}

static const pp_setting *find(const char *key) {
  for (int i = 0; key && i < N_SETTINGS; i++)
    if (strcmp(SETTINGS[i].key, key) == 0) return &SETTINGS[i];
  return NULL;
}

static double get_num(const tg_ppo_config *c, const pp_setting *s) {
  const char *p = (const char *)c + s->off;
  switch (s->type) {
    case PP_I64: return (double)*(const int64_t *)p;
    case PP_INT: return *(const int *)p;
    case PP_F32: return *(const float *)p;
    default: return 0;
  }
}

/* A number into s, range-checked; where names the source in errors. */
static tg_status set_num(tg_ppo_config *c, const pp_setting *s, double v, const char *where) {
  char *p = (char *)c + s->off;
  if (!(v >= s->lo && v <= s->hi))
    return tg_error(TG_ERR_INVALID, "ppo config: %s (%s) is %g; want a number in [%g, %g] (%s)", s->key, where, v, s->lo,
                    s->hi, s->help);
  if ((s->type == PP_I64 || s->type == PP_INT) && v != floor(v))
    return tg_error(TG_ERR_INVALID, "ppo config: %s (%s) is %g; want a whole number", s->key, where, v);
  if (s->type == PP_I64) *(int64_t *)p = (int64_t)v;
  else if (s->type == PP_INT) *(int *)p = (int)v;
  else *(float *)p = (float)v;
  return TG_OK;
}

static tg_status set_hidden(tg_ppo_config *c, const double *v, int n, const char *where) {
  if (n < 0 || n > TG_PPO_MAX_HIDDEN)
    return tg_error(TG_ERR_INVALID, "ppo config: hidden (%s): %d layers; want 0..%d", where, n, TG_PPO_MAX_HIDDEN);
  for (int k = 0; k < n; k++)
    if (!(v[k] >= 1 && v[k] <= 1e6) || v[k] != floor(v[k]))
      return tg_error(TG_ERR_INVALID, "ppo config: hidden (%s): width %g of layer %d; want a whole number in [1, 1e6]",
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

/* "64,64" (or "" / "none" for no hidden layer) */
static tg_status parse_hidden(tg_ppo_config *c, const char *text, const char *where) {
  double v[TG_PPO_MAX_HIDDEN + 1];
  int n = 0;
  if (!*text || strcmp(text, "none") == 0) return set_hidden(c, v, 0, where);
  for (const char *p = text; n <= TG_PPO_MAX_HIDDEN;) {
    char tok[32];
    size_t len = strcspn(p, ",");
    snprintf(tok, sizeof tok, "%.*s", (int)(len < 31 ? len : 31), p);
    if (len >= 31 || !parse_double(tok, &v[n]))
      return tg_error(TG_ERR_INVALID, "ppo config: hidden (%s) '%s': want widths separated by commas, e.g. 64,64", where,
                      text);
    n++;
    if (!p[len]) break;
    p += len + 1;
  }
  return set_hidden(c, v, n, where);
}

static tg_status set_text(tg_ppo_config *c, const pp_setting *s, const char *text, const char *where) {
  if (s->type == PP_HIDDEN) return parse_hidden(c, text, where);
  if (s->type == PP_U64) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!*text || *end || errno || text[0] == '-')
      return tg_error(TG_ERR_INVALID, "ppo config: %s (%s) '%s' is not an unsigned 64-bit integer", s->key, where, text);
    *(uint64_t *)((char *)c + s->off) = (uint64_t)v;
    return TG_OK;
  }
  double v;
  if (!parse_double(text, &v)) return tg_error(TG_ERR_INVALID, "ppo config: %s (%s) '%s' is not a number", s->key, where, text);
  return set_num(c, s, v, where);
}

tg_status tg_ppo_config_set(tg_ppo_config *c, const char *key, const char *value) {
  const pp_setting *s = find(key);
  if (!c) return tg_error(TG_ERR_INVALID, "ppo config: NULL config");
  if (!s) return tg_error(TG_ERR_INVALID, "ppo config: unknown setting '%s' (tg_ppo_config_print lists them)", key ? key : "");
  if (!value) return tg_error(TG_ERR_INVALID, "ppo config: %s needs a value", s->key);
  return set_text(c, s, value, "set");
}

static void value_str(const tg_ppo_config *c, const pp_setting *s, char *buf, size_t n) {
  const char *p = (const char *)c + s->off;
  if (s->type == PP_HIDDEN) {
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < c->n_hidden && at < n; k++) at += (size_t)snprintf(buf + at, n - at, k ? ",%d" : "%d", c->hidden[k]);
  } else if (s->type == PP_U64) snprintf(buf, n, "%" PRIu64, *(const uint64_t *)p);
  else if (s->type == PP_F32) snprintf(buf, n, "%.9g", (double)*(const float *)p);
  else snprintf(buf, n, "%.0f", get_num(c, s));
}

void tg_ppo_config_print(FILE *f, const tg_ppo_config *c) {
  for (int i = 0; i < N_SETTINGS; i++) {
    char v[160];
    value_str(c, &SETTINGS[i], v, sizeof v);
    fprintf(f, "  %-26s %-12s %s\n", SETTINGS[i].key, v, SETTINGS[i].help);
  }
}

tg_status tg_ppo_config_check(const tg_ppo_config *c) {
  if (!c) return tg_error(TG_ERR_INVALID, "ppo config: NULL config");
  for (int i = 0; i < N_SETTINGS; i++) {
    const pp_setting *s = &SETTINGS[i];
    if (s->type == PP_U64) continue;
    if (s->type == PP_HIDDEN) {
      double v[TG_PPO_MAX_HIDDEN];
      tg_ppo_config tmp = *c;
      if (c->n_hidden < 0 || c->n_hidden > TG_PPO_MAX_HIDDEN) return set_hidden(&tmp, v, c->n_hidden, "check");
      for (int k = 0; k < c->n_hidden; k++) v[k] = c->hidden[k];
      tg_status st = set_hidden(&tmp, v, c->n_hidden, "check");
      if (st != TG_OK) return st;
      continue;
    }
    double v = get_num(c, s);
    if (!(v >= s->lo && v <= s->hi))
      return tg_error(TG_ERR_INVALID, "ppo config: %s is %g; want [%g, %g] (%s)", s->key, v, s->lo, s->hi, s->help);
  }
  int64_t batch = (int64_t)c->num_envs * c->num_steps;
  if (batch % c->num_minibatches != 0 || batch / c->num_minibatches < 2)
    return tg_error(TG_ERR_INVALID,
                    "ppo config: the batch num_envs * num_steps = %lld does not split into %d minibatches of at least 2",
                    (long long)batch, c->num_minibatches);
  if (batch > INT32_MAX) return tg_error(TG_ERR_INVALID, "ppo config: the batch %lld is too large", (long long)batch);
  if (c->total_timesteps < batch)
    return tg_error(TG_ERR_INVALID, "ppo config: total_timesteps %lld is less than one rollout (num_envs * num_steps = %lld)",
                    (long long)c->total_timesteps, (long long)batch);
  if (c->stop_after < 0) return tg_error(TG_ERR_INVALID, "ppo config: stop_after %lld must be >= 0", (long long)c->stop_after);
  return TG_OK;
}

rl_ppo_net_cfg pp_net_cfg(const tg_ppo_config *c, int obs_dim, int n_actions, int n_act, int mb, int64_t updates) {
  rl_ppo_net_cfg n;
  memset(&n, 0, sizeof n);
  n.dev = c->device;
  n.obs_dim = obs_dim;
  n.continuous = n_actions == 0; /* a tg_env's continuous action is one float per instance */
  n.n_actions = n_actions ? n_actions : 1;
  n.n_hidden = c->n_hidden;
  for (int k = 0; k < c->n_hidden; k++) n.hidden[k] = c->hidden[k];
  n.n_act = n_act;
  n.mb = mb;
  n.coefs = (tg_ppo_coefs){c->clip_coef, c->vf_coef, c->ent_coef, c->clip_vloss, c->norm_adv};
  n.optim = tg_optim_defaults(TG_ADAM);
  n.optim.lr = c->learning_rate;
  n.optim.eps = c->adam_eps;
  n.optim.clip_norm = c->max_grad_norm;
  if (c->anneal_lr && updates > 0) {
    n.optim.schedule.kind = TG_LR_LINEAR;
    n.optim.schedule.total_steps = updates;
    n.optim.schedule.final_frac = 0.0f;
  }
  n.seed = c->seed;
  return n;
}

/* ---- config.json ---- */

char *pp_config_json(const tg_ppo_config *c, const tg_env *env) {
  tg_json_buf b = {0};
  char dev[16];
  tg_env_spec sp = tg_env_spec_of(env);
  tg_json_buf_printf(&b, "{\n  \"format\": \"%s\",\n", PP_CONFIG_FORMAT);
  for (int i = 0; i < N_SETTINGS; i++) {
    const pp_setting *s = &SETTINGS[i];
    char v[160];
    value_str(c, s, v, sizeof v);
    if (s->type == PP_HIDDEN) {
      tg_json_buf_printf(&b, "  \"%s\": [", s->key);
      for (int k = 0; k < c->n_hidden; k++) tg_json_buf_printf(&b, k ? ", %d" : "%d", c->hidden[k]);
      tg_json_buf_puts(&b, "],\n");
    } else if (s->type == PP_U64) tg_json_buf_printf(&b, "  \"%s\": \"%s\",\n", s->key, v); /* exact beyond 2^53 */
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

static tg_status read_setting(tg_ppo_config *c, const pp_setting *s, const tg_json *v, const char *path) {
  char where[600];
  snprintf(where, sizeof where, "%s byte %zu", path, v->offset);
  if (s->type == PP_HIDDEN) {
    double w[TG_PPO_MAX_HIDDEN];
    int n = 0;
    if (v->type != TG_JSON_ARRAY || v->count > TG_PPO_MAX_HIDDEN)
      return tg_error(TG_ERR_FORMAT, "%s: \"hidden\" must be an array of at most %d widths", where, TG_PPO_MAX_HIDDEN);
    for (const tg_json *e = v->first; e; e = e->next) {
      if (e->type != TG_JSON_INT) return tg_error(TG_ERR_FORMAT, "%s: \"hidden\" holds a non-integer", where);
      w[n++] = e->num;
    }
    return set_hidden(c, w, n, where);
  }
  if (s->type == PP_U64) {
    if (v->type != TG_JSON_STRING) return tg_error(TG_ERR_FORMAT, "%s: \"%s\" must be a string of digits", where, s->key);
    return set_text(c, s, v->str, where);
  }
  if (v->type != TG_JSON_INT && v->type != TG_JSON_REAL)
    return tg_error(TG_ERR_FORMAT, "%s: \"%s\" must be a number", where, s->key);
  return set_num(c, s, v->num, where);
}

static tg_status read_env(const tg_json *root, const char *path, pp_env_id *id) {
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

tg_status pp_config_load(const char *path, tg_ppo_config *c, pp_env_id *env) {
  char *text = NULL;
  size_t len = 0;
  tg_status st = tr_read_file(path, &text, &len);
  if (st != TG_OK) return st;
  tg_json_doc *doc = NULL;
  st = tg_json_parse(text, len, path, 0, &doc);
  tg_free(text);
  if (st != TG_OK) return st;
  const tg_json *root = tg_json_root(doc), *fmt = tg_json_get(root, "format");
  if (!fmt || fmt->type != TG_JSON_STRING || strcmp(fmt->str, PP_CONFIG_FORMAT) != 0)
    st = tg_error(TG_ERR_FORMAT, "%s: not a PPO run's config (format \"%s\" expected)", path, PP_CONFIG_FORMAT);
  for (int i = 0; i < N_SETTINGS && st == TG_OK; i++) {
    const tg_json *v = tg_json_get(root, SETTINGS[i].key);
    if (!v) st = tg_error(TG_ERR_FORMAT, "%s: \"%s\" is missing", path, SETTINGS[i].key);
    else st = read_setting(c, &SETTINGS[i], v, path);
  }
  if (st == TG_OK) st = read_env(root, path, env);
  tg_json_free(doc);
  return st;
}

const char *pp_config_diff(const tg_ppo_config *a, const tg_ppo_config *b) {
  for (int i = 0; i < N_SETTINGS; i++) {
    const pp_setting *s = &SETTINGS[i];
    if (s->resumable) continue;
    int differ;
    if (s->type == PP_HIDDEN) {
      differ = a->n_hidden != b->n_hidden;
      for (int k = 0; !differ && k < a->n_hidden; k++) differ = a->hidden[k] != b->hidden[k];
    } else if (s->type == PP_U64) differ = a->seed != b->seed;
    else differ = get_num(a, s) != get_num(b, s);
    if (differ) return s->key;
  }
  return NULL;
}

tg_status tg_ppo_config_load(const char *run_dir, tg_ppo_config *c) {
  char path[TG_TRAIN_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/config.json", run_dir);
  pp_env_id id;
  return pp_config_load(path, c, &id);
}
