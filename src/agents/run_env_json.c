/* RUN/env.json: an agent run's model and environment, written when it starts and read to resume, evaluate or backtest it. */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/files.h"
#include "base/json.h"
#include "data/readers/read_settings.h"
#include "tickgrad/agents.h"

/* The reader settings among env.json's members (the others are read below). */
static const tg_setting READ_ROWS[] = {TG_READ_SETTING_ROWS(offsetof(tg_agent_env, read))};
static const char *const OTHERS[] = {"model", "env", "envs", "data", "tz", "window", "episode_len", "cost_bps",
                                     "slippage", "synth_signal", "synth_bars", "synth_seed", "env_seed",
                                     "copy_windows", NULL};
static const tg_settings READ = {"env.json", READ_ROWS, (int)(sizeof READ_ROWS / sizeof READ_ROWS[0]), 0, 0, OTHERS};

tg_status tg_agent_env_write(const char *dir, const char *model, const tg_agent_env *e) {
  tg_text b = {0};
  tg_text_puts(&b, "{\n  \"model\": ");
  tg_json_append_string(&b, model);
  tg_text_puts(&b, ",\n  \"env\": ");
  tg_json_append_string(&b, e->kind);
  tg_text_printf(&b, ",\n  \"envs\": %d,\n  \"data\": [", e->n);
  for (int i = 0; i < e->n_data; i++) {
    if (i) tg_text_puts(&b, ", ");
    tg_json_append_string(&b, e->data[i]);
  }
  tg_text_puts(&b, "]");
  int first = 0;
  tg_settings_json_members(&READ, e, &b, &first);
  tg_text_puts(&b, ",\n  \"tz\": ");
  tg_json_append_string(&b, e->tz);
  tg_text_printf(&b, ",\n  \"window\": %d,\n  \"episode_len\": %d,\n  \"cost_bps\": ", e->window, e->episode_len);
  tg_json_append_real(&b, e->cost_bps, 17);
  tg_text_puts(&b, ",\n  \"slippage\": ");
  tg_json_append_real(&b, e->slippage, 17);
  tg_text_puts(&b, ",\n  \"synth_signal\": ");
  tg_json_append_real(&b, e->synth_signal, 17);
  tg_text_printf(&b, ",\n  \"synth_bars\": %ld,\n  \"synth_seed\": %ld,\n  \"env_seed\": %ld,\n  \"copy_windows\": %d\n}\n",
                 e->synth_bars, e->synth_seed, e->seed, e->copy_windows);
  char path[2048];
  snprintf(path, sizeof path, "%s/env.json", dir);
  tg_status st = b.oom ? tg_error(TG_ERR_NOMEM, "cannot write %s: out of memory", path)
                       : tg_write_atomic(path, b.data, b.len);
  if (st != TG_OK && !b.oom) st = tg_error(st, "cannot write %s: %s", path, tg_last_error());
  tg_text_free(&b);
  return st;
}

static int num(const tg_json *root, const char *key, double *out) {
  const tg_json *v = tg_json_get(root, key);
  if (!v || (v->type != TG_JSON_INT && v->type != TG_JSON_REAL)) return 0;
  *out = v->num;
  return 1;
}

static int str(const tg_json *root, const char *key, char *out, size_t cap) {
  const tg_json *v = tg_json_get(root, key);
  if (!v || v->type != TG_JSON_STRING || v->len >= cap) return 0;
  memcpy(out, v->str, v->len + 1);
  return 1;
}

/* The members into model and e; NULL when they are all there, else the first one missing or wrong. */
static const char *members(const tg_json *r, char *model, size_t cap, tg_agent_env *e) {
  double n, w, el, cost, slip, sig, sb, ss, es, cw = 1; /* no copy_windows: a run from before gathering, which copied */
  if (!str(r, "model", model, cap) || !tg_agent_is_model(model)) return "model (dqn or ppo)";
  if (!str(r, "env", e->kind, sizeof e->kind)) return "env";
  if (!str(r, "data_tz", e->read.tz, sizeof e->read.tz)) return "data_tz";
  if (!str(r, "tz", e->tz, sizeof e->tz)) return "tz";
  const char *keys[9] = {"envs", "window", "episode_len", "cost_bps", "slippage", "synth_signal", "synth_bars",
                         "synth_seed", "env_seed"};
  double *vals[9] = {&n, &w, &el, &cost, &slip, &sig, &sb, &ss, &es};
  for (int i = 0; i < 9; i++)
    if (!num(r, keys[i], vals[i])) return keys[i];
  const tg_json *data = tg_json_get(r, "data");
  if (!data || data->type != TG_JSON_ARRAY || data->count > TG_AGENT_MAX_DATA) return "data";
  e->n = (int)n, e->window = (int)w, e->episode_len = (int)el, e->cost_bps = cost, e->slippage = slip;
  e->synth_signal = sig, e->synth_bars = (long)sb, e->synth_seed = (long)ss, e->seed = (long)es;
  num(r, "copy_windows", &cw);
  e->copy_windows = cw != 0;
  for (const tg_json *d = data->first; d; d = d->next) {
    if (d->type != TG_JSON_STRING || d->len >= sizeof e->data[0]) return "data";
    memcpy(e->data[e->n_data++], d->str, d->len + 1);
  }
  return NULL;
}

tg_status tg_agent_env_read(const char *dir, char *model, size_t cap, tg_agent_env *e) {
  char path[2048];
  snprintf(path, sizeof path, "%s/env.json", dir);
  tg_json_doc *doc = NULL;
  tg_agent_env_defaults(e);
  tg_status st = tg_json_parse_file(path, &doc);
  if (st != TG_OK) return st;
  const char *bad = members(tg_json_root(doc), model, cap, e);
  if (!bad && tg_settings_apply_json(&READ, e, tg_json_root(doc), path) != TG_OK) { /* the reader's settings */
    char why[1024];
    snprintf(why, sizeof why, "%s", tg_last_error());
    tg_json_free(doc);
    tg_agent_env_defaults(e);
    return tg_error(TG_ERR_FORMAT, "%s", why);
  }
  tg_json_free(doc);
  if (bad) {
    tg_agent_env_defaults(e);
    return tg_error(TG_ERR_FORMAT, "%s is not an env.json this version wrote: %s is missing or wrong", path, bad);
  }
  return TG_OK;
}
