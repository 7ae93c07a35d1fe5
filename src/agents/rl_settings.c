/* The agents' settings engine: an algorithm's table over its config for setting, checking, printing, config.json, resume. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/json.h"
#include "agents/rl_shared.h"
#include "base/files.h"

#define WIDTH_MAX 1e6 /* the widest hidden layer a setting accepts */

const rl_setting *rl_settings_find(const rl_settings *t, const char *key) {
  for (int i = 0; key && i < t->n; i++)
    if (strcmp(t->rows[i].key, key) == 0) return &t->rows[i];
  return NULL;
}

static double get_num(const void *c, const rl_setting *s) {
  const char *p = (const char *)c + s->off;
  switch (s->type) {
    case RL_I64: return (double)*(const int64_t *)p;
    case RL_INT: return *(const int *)p;
    case RL_F32: return *(const float *)p;
    default: return 0;
  }
}

/* The hidden list: its count at the table's hidden_n_off, its widths at the setting's off. */
static int hidden_count(const rl_settings *t, const void *c) { return *(const int *)((const char *)c + t->hidden_n_off); }
static const int *hidden_widths(const void *c, const rl_setting *s) { return (const int *)((const char *)c + s->off); }

/* A number into s, range-checked; where names the source in errors. */
static tg_status set_num(const rl_settings *t, void *c, const rl_setting *s, double v, const char *where) {
  char *p = (char *)c + s->off;
  if (!(v >= s->lo && v <= s->hi))
    return tg_error(TG_ERR_INVALID, "%s config: %s (%s) is %g; want a number in [%g, %g] (%s)", t->name, s->key, where, v,
                    s->lo, s->hi, s->help);
  if ((s->type == RL_I64 || s->type == RL_INT) && v != floor(v))
    return tg_error(TG_ERR_INVALID, "%s config: %s (%s) is %g; want a whole number", t->name, s->key, where, v);
  if (s->type == RL_I64) *(int64_t *)p = (int64_t)v;
  else if (s->type == RL_INT) *(int *)p = (int)v;
  else *(float *)p = (float)v;
  return TG_OK;
}

/* n layers of widths v [n] (v read only when n is in range). */
static tg_status check_hidden(const rl_settings *t, const rl_setting *s, const double *v, int n, const char *where) {
  if (n < 0 || n > t->hidden_max)
    return tg_error(TG_ERR_INVALID, "%s config: %s (%s): %d layers; want 0..%d", t->name, s->key, where, n, t->hidden_max);
  for (int k = 0; k < n; k++)
    if (!(v[k] >= 1 && v[k] <= WIDTH_MAX) || v[k] != floor(v[k]))
      return tg_error(TG_ERR_INVALID, "%s config: %s (%s): width %g of layer %d; want a whole number in [1, 1e6]", t->name,
                      s->key, where, v[k], k + 1);
  return TG_OK;
}

static tg_status set_hidden(const rl_settings *t, void *c, const rl_setting *s, const double *v, int n, const char *where) {
  tg_status st = check_hidden(t, s, v, n, where);
  if (st != TG_OK) return st;
  int *widths = (int *)((char *)c + s->off);
  *(int *)((char *)c + t->hidden_n_off) = n;
  for (int k = 0; k < n; k++) widths[k] = (int)v[k];
  return TG_OK;
}

static int parse_double(const char *text, double *v) {
  char *end;
  if (!text || !*text) return 0;
  errno = 0;
  *v = strtod(text, &end);
  return *end == '\0' && errno == 0;
}

/* "120,84" (or "" / "none" for no hidden layer) */
static tg_status parse_hidden(const rl_settings *t, void *c, const rl_setting *s, const char *text, const char *where) {
  double v[RL_MAX_HIDDEN + 1] = {0};
  int n = 0;
  if (!*text || strcmp(text, "none") == 0) return set_hidden(t, c, s, v, 0, where);
  for (const char *p = text; n <= t->hidden_max;) {
    char tok[32];
    size_t len = strcspn(p, ",");
    snprintf(tok, sizeof tok, "%.*s", (int)(len < 31 ? len : 31), p);
    if (len >= 31 || !parse_double(tok, &v[n]))
      return tg_error(TG_ERR_INVALID, "%s config: %s (%s) '%s': want widths separated by commas, e.g. %s", t->name, s->key,
                      where, text, t->hidden_example);
    n++;
    if (!p[len]) break;
    p += len + 1;
  }
  return set_hidden(t, c, s, v, n, where);
}

static tg_status set_text(const rl_settings *t, void *c, const rl_setting *s, const char *text, const char *where) {
  if (s->type == RL_HIDDEN) return parse_hidden(t, c, s, text, where);
  if (s->type == RL_U64) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!*text || *end || errno || text[0] == '-')
      return tg_error(TG_ERR_INVALID, "%s config: %s (%s) '%s' is not an unsigned 64-bit integer", t->name, s->key, where,
                      text);
    *(uint64_t *)((char *)c + s->off) = (uint64_t)v;
    return TG_OK;
  }
  double v;
  if (!parse_double(text, &v))
    return tg_error(TG_ERR_INVALID, "%s config: %s (%s) '%s' is not a number", t->name, s->key, where, text);
  return set_num(t, c, s, v, where);
}

tg_status rl_settings_set(const rl_settings *t, void *c, const char *key, const char *value) {
  const rl_setting *s = rl_settings_find(t, key);
  if (!c) return tg_error(TG_ERR_INVALID, "%s config: NULL config", t->name);
  if (!s)
    return tg_error(TG_ERR_INVALID, "%s config: unknown setting '%s' (tg_%s_config_print lists them)", t->name,
                    key ? key : "", t->name);
  if (!value) return tg_error(TG_ERR_INVALID, "%s config: %s needs a value", t->name, s->key);
  return set_text(t, c, s, value, "set");
}

/* A float as text: the shortest decimal that reads back as the same float (digits 0), else %.<digits>g. */
static void float_str(float v, int digits, char *buf, size_t n) {
  if (digits > 0) {
    snprintf(buf, n, "%.*g", digits, (double)v);
    return;
  }
  for (digits = 6; digits <= 9; digits++) {
    snprintf(buf, n, "%.*g", digits, (double)v);
    if ((float)strtod(buf, NULL) == v) return;
  }
}

static void value_str(const rl_settings *t, const void *c, const rl_setting *s, char *buf, size_t n) {
  const char *p = (const char *)c + s->off;
  if (s->type == RL_HIDDEN) {
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < hidden_count(t, c) && at < n; k++)
      at += (size_t)snprintf(buf + at, n - at, k ? ",%d" : "%d", hidden_widths(c, s)[k]);
  } else if (s->type == RL_U64) snprintf(buf, n, "%" PRIu64, *(const uint64_t *)p);
  else if (s->type == RL_F32) float_str(*(const float *)p, t->float_digits, buf, n);
  else snprintf(buf, n, "%.0f", get_num(c, s));
}

tg_status rl_settings_check(const rl_settings *t, const void *c) {
  if (!c) return tg_error(TG_ERR_INVALID, "%s config: NULL config", t->name);
  for (int i = 0; i < t->n; i++) {
    const rl_setting *s = &t->rows[i];
    if (s->type == RL_U64) continue;
    if (s->type == RL_HIDDEN) {
      double v[RL_MAX_HIDDEN] = {0};
      int n = hidden_count(t, c);
      for (int k = 0; k < n && k < t->hidden_max; k++) v[k] = hidden_widths(c, s)[k];
      tg_status st = check_hidden(t, s, v, n, "check");
      if (st != TG_OK) return st;
      continue;
    }
    double v = get_num(c, s);
    if (!(v >= s->lo && v <= s->hi))
      return tg_error(TG_ERR_INVALID, "%s config: %s is %g; want [%g, %g] (%s)", t->name, s->key, v, s->lo, s->hi, s->help);
  }
  return TG_OK;
}

/* ---- config.json ---- */

char *rl_config_json(const rl_settings *t, const void *c, tg_device dev, const tg_env *env) {
  tg_json_buf b = {0};
  char ds[16];
  tg_env_spec sp = tg_env_spec_of(env);
  tg_json_buf_printf(&b, "{\n  \"format\": \"%s\",\n", t->format);
  for (int i = 0; i < t->n; i++) {
    const rl_setting *s = &t->rows[i];
    char v[160];
    value_str(t, c, s, v, sizeof v);
    if (s->type == RL_HIDDEN) {
      tg_json_buf_printf(&b, "  \"%s\": [", s->key);
      for (int k = 0; k < hidden_count(t, c); k++) tg_json_buf_printf(&b, k ? ", %d" : "%d", hidden_widths(c, s)[k]);
      tg_json_buf_puts(&b, "],\n");
    } else if (s->type == RL_U64) tg_json_buf_printf(&b, "  \"%s\": \"%s\",\n", s->key, v); /* exact beyond 2^53 */
    else tg_json_buf_printf(&b, "  \"%s\": %s,\n", s->key, v);
  }
  tg_json_buf_printf(&b, "  \"device\": \"%s\",\n  \"env\": {\"name\": ", tg_device_str(dev, ds, sizeof ds));
  tg_json_buf_append_string(&b, tg_env_name(env));
  tg_json_buf_printf(&b, ", \"n\": %d, \"obs_dim\": %d, \"n_actions\": %d}\n}\n", sp.n, sp.obs_dim, sp.n_actions);
  if (b.oom) {
    tg_json_buf_free(&b);
    return NULL;
  }
  return b.data;
}

static tg_status read_hidden(const rl_settings *t, void *c, const rl_setting *s, const tg_json *v, const char *where) {
  double w[RL_MAX_HIDDEN] = {0};
  int n = 0;
  if (v->type != TG_JSON_ARRAY || v->count > t->hidden_max)
    return tg_error(TG_ERR_FORMAT, "%s: \"%s\" must be an array of at most %d widths", where, s->key, t->hidden_max);
  for (const tg_json *e = v->first; e; e = e->next) {
    if (e->type != TG_JSON_INT) return tg_error(TG_ERR_FORMAT, "%s: \"%s\" holds a non-integer", where, s->key);
    w[n++] = e->num;
  }
  return set_hidden(t, c, s, w, n, where);
}

static tg_status read_setting(const rl_settings *t, void *c, const rl_setting *s, const tg_json *v, const char *path) {
  char where[600];
  snprintf(where, sizeof where, "%s byte %zu", path, v->offset);
  if (s->type == RL_HIDDEN) return read_hidden(t, c, s, v, where);
  if (s->type == RL_U64) {
    if (v->type != TG_JSON_STRING) return tg_error(TG_ERR_FORMAT, "%s: \"%s\" must be a string of digits", where, s->key);
    return set_text(t, c, s, v->str, where);
  }
  if (v->type != TG_JSON_INT && v->type != TG_JSON_REAL)
    return tg_error(TG_ERR_FORMAT, "%s: \"%s\" must be a number", where, s->key);
  return set_num(t, c, s, v->num, where);
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

tg_status rl_config_load(const rl_settings *t, const char *path, void *c, rl_env_id *env) {
  char *text = NULL;
  size_t len = 0;
  tg_status st = tg_read_file(path, &text, &len);
  if (st != TG_OK) return st;
  tg_json_doc *doc = NULL;
  st = tg_json_parse(text, len, path, 0, &doc);
  tg_free(text);
  if (st != TG_OK) return st;
  const tg_json *root = tg_json_root(doc), *fmt = tg_json_get(root, "format");
  if (!fmt || fmt->type != TG_JSON_STRING || strcmp(fmt->str, t->format) != 0)
    st = tg_error(TG_ERR_FORMAT, "%s: not a %s run's config (format \"%s\" expected)", path, t->title, t->format);
  for (int i = 0; i < t->n && st == TG_OK; i++) {
    const tg_json *v = tg_json_get(root, t->rows[i].key);
    if (!v) st = tg_error(TG_ERR_FORMAT, "%s: \"%s\" is missing", path, t->rows[i].key);
    else st = read_setting(t, c, &t->rows[i], v, path);
  }
  if (st == TG_OK) st = read_env(root, path, env);
  tg_json_free(doc);
  return st;
}

tg_status rl_config_load_run(const rl_settings *t, const char *run_dir, void *c) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/config.json", run_dir);
  rl_env_id id;
  return rl_config_load(t, path, c, &id);
}

static int differ(const rl_settings *t, const void *a, const void *b, const rl_setting *s) {
  if (s->type == RL_U64) return *(const uint64_t *)((const char *)a + s->off) != *(const uint64_t *)((const char *)b + s->off);
  if (s->type != RL_HIDDEN) return get_num(a, s) != get_num(b, s);
  int n = hidden_count(t, a), d = n != hidden_count(t, b);
  for (int k = 0; !d && k < n; k++) d = hidden_widths(a, s)[k] != hidden_widths(b, s)[k];
  return d;
}

const char *rl_config_diff(const rl_settings *t, const void *a, const void *b) {
  for (int i = 0; i < t->n; i++)
    if (!t->rows[i].resumable && differ(t, a, b, &t->rows[i])) return t->rows[i].key;
  return NULL;
}
