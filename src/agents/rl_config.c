/* An agent run's config.json: its format, every setting (through the settings engine), the device, the env, a run id. */
#include <string.h>
#include "agents/rl_shared.h"
#include "base/alloc.h"
#include "base/json.h"
#include "base/files.h"
#include "io/ckpt_set.h"

const char *const RL_CONFIG_EXTRA[] = {"format", "device", "env", "run_id", NULL};

char *rl_config_json(const rl_config_file *f, const void *c, tg_device dev, const tg_env *env) {
  tg_text b = {0};
  char ds[16], run_id[17];
  int first = 0;
  tg_env_spec sp = tg_env_spec_of(env);
  tg_text_printf(&b, "{\n  \"format\": \"%s\"", f->format);
  tg_settings_json_members(f->settings, c, &b, &first);
  tg_text_printf(&b, ",\n  \"device\": \"%s\",\n  \"env\": {\"name\": ", tg_device_str(dev, ds, sizeof ds));
  tg_json_append_string(&b, tg_env_name(env));
  tg_ckpt_run_id_new(run_id);
  tg_text_printf(&b, ", \"n\": %d, \"obs_dim\": %d, \"n_actions\": %d},\n  \"run_id\": \"%s\"\n}\n", sp.n, sp.obs_dim,
                 sp.n_actions, run_id);
  if (b.oom) {
    tg_text_free(&b);
    return NULL;
  }
  return b.data;
}

static tg_status read_env(const tg_json *root, const char *path, rl_env_id *id) {
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

tg_status rl_config_load(const rl_config_file *f, const char *path, void *c, rl_env_id *env) {
  tg_json_doc *doc = NULL;
  tg_status st = tg_json_parse_file(path, &doc);
  if (st != TG_OK) return st;
  const tg_json *root = tg_json_root(doc), *fmt = tg_json_get(root, "format");
  if (!fmt || fmt->type != TG_JSON_STRING || strcmp(fmt->str, f->format) != 0)
    st = tg_error(TG_ERR_FORMAT, "%s: not a %s run's config (format \"%s\" expected)", path, f->title, f->format);
  if (st == TG_OK) st = tg_settings_apply_json(f->settings, c, root, path);
  if (st == TG_OK) st = read_env(root, path, env);
  tg_json_free(doc);
  return st;
}

tg_status rl_config_load_run(const rl_config_file *f, const char *run_dir, void *c) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/config.json", run_dir);
  rl_env_id id;
  return rl_config_load(f, path, c, &id);
}

tg_status rl_config_set(const rl_config_file *f, void *c, const char *key, const char *value) {
  if (!c) return tg_error(TG_ERR_INVALID, "%s: NULL config", f->settings->name);
  return tg_settings_set(f->settings, c, key, value);
}

tg_status rl_config_check(const rl_config_file *f, const void *c, int64_t stop_after) {
  tg_status st = tg_settings_check(f->settings, c);
  if (st == TG_OK && stop_after < 0)
    return tg_error(TG_ERR_INVALID, "%s: stop_after %lld must be >= 0", f->settings->name, (long long)stop_after);
  return st;
}

const char *rl_config_diff(const rl_config_file *f, const void *a, const void *b) {
  const tg_setting *s = tg_settings_diff(f->settings, a, b);
  return s ? s->key : NULL;
}

static tg_status write_config(const rl_config_file *f, const char *run, const char *path, const void *c, tg_device dev,
                              const tg_env *env) {
  if (tg_file_exists(path) && tg_ckpt_exists(run))
    return tg_error(TG_ERR_INVALID, "%s: %s already holds a run (config.json); continue it with resume or choose "
                    "another folder", f->what, run);
  char *text = rl_config_json(f, c, dev, env);
  if (!text) return tg_error(TG_ERR_NOMEM, "%s: out of memory writing %s", f->what, path);
  tg_status st = tg_write_atomic(path, text, strlen(text));
  tg_free(text);
  return st;
}

static tg_status check_resume(const rl_config_file *f, const char *path, const void *c, void *saved, const tg_env *env) {
  rl_env_id id;
  tg_env_spec sp = tg_env_spec_of(env);
  tg_status st = rl_config_load(f, path, saved, &id);
  if (st != TG_OK) return tg_error(st, "%s resume: %s", f->what, tg_last_error());
  const char *key = rl_config_diff(f, saved, c);
  if (key)
    return tg_error(TG_ERR_INVALID, "%s resume: %s differs from %s; a resumed run keeps its settings (only device, "
                    "log_every, ckpt_every and stop_after may change)", f->what, key, path);
  if (strcmp(id.name, tg_env_name(env)) != 0 || id.n != sp.n || id.obs_dim != sp.obs_dim || id.n_actions != sp.n_actions)
    return tg_error(TG_ERR_INVALID, "%s resume: %s was started on env '%s' (n %d, obs %d, actions %d), not '%s' (n %d, "
                    "obs %d, actions %d)", f->what, path, id.name, id.n, id.obs_dim, id.n_actions, tg_env_name(env), sp.n,
                    sp.obs_dim, sp.n_actions);
  return TG_OK;
}

tg_status rl_config_start(const rl_config_file *f, const char *run, const void *c, void *saved, tg_device dev,
                          int resume, const tg_env *env) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/config.json", run);
  return resume ? check_resume(f, path, c, saved, env) : write_config(f, run, path, c, dev, env);
}
