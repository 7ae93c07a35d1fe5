/* An agent run's config.json: its format, every setting (through the settings engine), the device, the env, a run id. */
#include <string.h>
#include "agents/rl_shared.h"
#include "base/alloc.h"
#include "base/json.h"
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
