/* The report's header: the run's name, what it trained, when, on which device, its settings (config.json, env.json). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "report/report_internal.h"
#include "tickgrad/models.h"

/* The last part of the folder's path, without trailing slashes. */
static void run_name(const char *run, char *buf, size_t n) {
  size_t len = strlen(run);
  while (len > 1 && run[len - 1] == '/') len--;
  size_t start = len;
  while (start > 0 && run[start - 1] != '/') start--;
  snprintf(buf, n, "%.*s", (int)(len - start), run + start);
}

static const char *str_member(const tg_json *obj, const char *key) {
  const tg_json *v = tg_json_get(obj, key);
  return v && v->type == TG_JSON_STRING ? v->str : NULL;
}

/* A scalar as text ("" for arrays and objects). */
static void scalar_text(const tg_json *v, char *buf, size_t n) {
  switch (v->type) {
  case TG_JSON_NULL: snprintf(buf, n, "null"); break;
  case TG_JSON_FALSE: snprintf(buf, n, "false"); break;
  case TG_JSON_TRUE: snprintf(buf, n, "true"); break;
  case TG_JSON_INT: snprintf(buf, n, "%lld", (long long)v->i); break;
  case TG_JSON_REAL: snprintf(buf, n, "%.6g", v->num); break;
  case TG_JSON_STRING: snprintf(buf, n, "%s", v->str); break;
  default: buf[0] = '\0'; break;
  }
}

/* A value as text: scalars, arrays of them joined by ", ", "{...}" for anything deeper. */
static void value_text(const tg_json *v, char *buf, size_t n) {
  if (v->type == TG_JSON_OBJECT) {
    snprintf(buf, n, "{...}");
  } else if (v->type == TG_JSON_ARRAY) {
    size_t used = 0;
    buf[0] = '\0';
    for (const tg_json *e = v->first; e && used + 1 < n; e = e->next) {
      char one[256];
      if (e->type == TG_JSON_ARRAY || e->type == TG_JSON_OBJECT) snprintf(one, sizeof one, "[...]");
      else scalar_text(e, one, sizeof one);
      int k = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", one);
      if (k < 0) break;
      used += (size_t)k < n - used ? (size_t)k : n - used - 1;
    }
  } else {
    scalar_text(v, buf, n);
  }
}

static void kv(rp_page *p, const char *prefix, const char *key, const char *value) {
  rp_raw(p, "<div><dt>");
  if (prefix) {
    rp_text(p, prefix);
    rp_raw(p, ".");
  }
  rp_text(p, key);
  rp_raw(p, "</dt><dd>");
  rp_text(p, value[0] ? value : "\"\"");
  rp_raw(p, "</dd></div>");
}

/* A model kind's own block of config.json ("tft", "mlp", ...): a name in the model table. */
static int is_model_block(const char *key) {
  for (int k = 0; k < tg_model_count(); k++) {
    const char *name = tg_model_name((tg_model_kind)k);
    if (name && strcmp(key, name) == 0) return 1;
  }
  return 0;
}

/* Every setting of obj, nested objects one level deep as "outer.inner"; the blocks of the model kinds this
 * run does not use (a forecaster's "tft" when it trained an "mlp") are left out. */
static void settings(rp_page *p, const tg_json *obj, const char *model) {
  char buf[1024];
  rp_raw(p, "<dl class=\"kv\">");
  for (const tg_json *m = obj->first; m; m = m->next) {
    if (strcmp(m->key, "format") == 0) continue;
    if (m->type == TG_JSON_OBJECT) {
      if (is_model_block(m->key) && model && strcmp(m->key, model) != 0) continue;
      for (const tg_json *e = m->first; e; e = e->next) {
        value_text(e, buf, sizeof buf);
        kv(p, m->key, e->key, buf);
      }
    } else {
      value_text(m, buf, sizeof buf);
      kv(p, NULL, m->key, buf);
    }
  }
  rp_raw(p, "</dl>\n");
}

/* "mlp forecaster", "dqn policy on cartpole", ... from config.json (its "model", or the agent's "format") and env.json */
static void kind_text(const tg_json *cfg, const tg_json *env, char *buf, size_t n) {
  const char *model = cfg ? str_member(cfg, "model") : NULL, *fmt = cfg ? str_member(cfg, "format") : NULL;
  const char *env_name = env ? str_member(env, "env") : NULL;
  if (!model && env) model = str_member(env, "model");
  if (!model && fmt && strncmp(fmt, "tickgrad-dqn", 12) == 0) model = "dqn";
  if (!model && fmt && strncmp(fmt, "tickgrad-ppo", 12) == 0) model = "ppo";
  if (model && (strcmp(model, "dqn") == 0 || strcmp(model, "ppo") == 0))
    snprintf(buf, n, "%s policy%s%s", model, env_name ? " on " : "", env_name ? env_name : "");
  else if (model) snprintf(buf, n, "%s forecaster", model);
  else snprintf(buf, n, "run");
}

static void subtitle(rp_page *p, const tg_json *cfg, const tg_json *env) {
  char kind[128], started[64], cpath[RP_PATH_MAX], now[64];
  time_t t = time(NULL);
  struct tm tmv;
  kind_text(cfg, env, kind, sizeof kind);
  rp_path(cpath, sizeof cpath, p->run, "config.json");
  rp_mtime(cpath, started, sizeof started);
  now[0] = '\0';
  if (gmtime_r(&t, &tmv)) strftime(now, sizeof now, "%Y-%m-%d %H:%M UTC", &tmv);
  const char *device = cfg ? str_member(cfg, "device") : NULL;
  rp_raw(p, "<p class=\"sub\">");
  rp_text(p, kind);
  if (started[0]) rp_textf(p, " \xc2\xb7 settings written %s", started);
  if (device) rp_textf(p, " \xc2\xb7 device %s", device);
  rp_textf(p, " \xc2\xb7 report written %s", now);
  rp_raw(p, "</p>\n");
}

void rp_section_header(rp_page *p) {
  char name[256];
  tg_json_doc *cfg = NULL, *env = NULL;
  tg_status cst = rp_read_json(p->run, "config.json", &cfg);
  char cwhy[1100];
  snprintf(cwhy, sizeof cwhy, "%s", tg_last_error());
  if (rp_read_json(p->run, "env.json", &env) != TG_OK) env = NULL;
  const tg_json *c = cfg ? tg_json_root(cfg) : NULL, *e = env ? tg_json_root(env) : NULL;
  run_name(p->run, name, sizeof name);
  rp_raw(p, "<header class=\"top\"><h1>");
  rp_text(p, name);
  rp_raw(p, "</h1>\n");
  subtitle(p, c, e);
  rp_raw(p, "<nav><a href=\"#settings\">settings</a><a href=\"#training\">training</a>"
            "<a href=\"#telemetry\">telemetry</a><a href=\"#backtest\">backtest</a></nav></header>\n");
  rp_raw(p, "<section id=\"settings\"><h2>Settings</h2>\n");
  if (c) settings(p, c, str_member(c, "model"));
  else if (cst == TG_ERR_IO) rp_unavailable(p, "no config.json in %s (a folder written by a backtest alone has none)", p->run);
  else rp_unavailable(p, "config.json could not be read: %s", cwhy);
  if (e) {
    rp_raw(p, "<h3>Environment (env.json)</h3>\n");
    settings(p, e, NULL);
  }
  rp_raw(p, "</section>\n");
  tg_json_free(cfg);
  tg_json_free(env);
}
