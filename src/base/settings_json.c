/* Settings as JSON: writing every setting so it reads back bitwise, applying an object of settings over a config. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/parse.h"
#include "base/settings_internal.h"

/* ---- writing ---- */

void tg_settings_put_real(tg_text *b, double v, int is_float, int digits) {
  tg_json_append_real(b, v, digits > 0 ? digits : is_float ? -1 : 0);
}

static void put_value(const tg_settings *t, const void *cfg, const tg_setting *s, tg_text *b) {
  const char *p = (const char *)cfg + s->off;
  int n = s->type == TG_SET_NUMS || s->type == TG_SET_STRS ? *(const int *)((const char *)cfg + s->count_off) : 0;
  switch (s->type) {
    case TG_SET_DOUBLE: tg_settings_put_real(b, *(const double *)p, 0, 0); break;
    case TG_SET_FLOAT: tg_settings_put_real(b, *(const float *)p, 1, t->float_digits); break;
    case TG_SET_INT: tg_text_printf(b, "%d", *(const int *)p); break;
    case TG_SET_INT64: tg_text_printf(b, "%" PRId64, *(const int64_t *)p); break;
    case TG_SET_UINT64: tg_text_printf(b, "\"%" PRIu64 "\"", *(const uint64_t *)p); break;
    case TG_SET_BOOL: tg_text_puts(b, *(const int *)p ? "true" : "false"); break;
    case TG_SET_STRING: tg_json_append_string(b, p); break;
    case TG_SET_ENUM: {
      int k = 0, v = *(const int *)p;
      while (s->names[k] && k < v) k++;
      tg_json_append_string(b, v >= 0 && s->names[k] ? s->names[k] : ""); /* "" for a value out of range */
      break;
    }
    case TG_SET_NUMS: case TG_SET_STRS:
      tg_text_puts(b, "[");
      for (int k = 0; k < n; k++) {
        if (k) tg_text_puts(b, ", ");
        if (s->type == TG_SET_STRS) tg_json_append_string(b, p + (size_t)k * s->size);
        else if (s->elem == TG_SET_FLOAT) tg_settings_put_real(b, ((const float *)p)[k], 1, t->float_digits);
        else tg_text_printf(b, "%d", ((const int *)p)[k]);
      }
      tg_text_puts(b, "]");
      break;
  }
}

void tg_settings_value_text(const tg_settings *t, const void *cfg, const tg_setting *s, tg_text *b) {
  const char *p = (const char *)cfg + s->off;
  int n = s->type == TG_SET_NUMS || s->type == TG_SET_STRS ? *(const int *)((const char *)cfg + s->count_off) : 0;
  switch (s->type) {
    case TG_SET_UINT64: tg_text_printf(b, "%" PRIu64, *(const uint64_t *)p); break;
    case TG_SET_BOOL: tg_text_puts(b, *(const int *)p ? "1" : "0"); break;
    case TG_SET_STRING: tg_text_puts(b, p); break;
    case TG_SET_ENUM: {
      int k = 0, v = *(const int *)p;
      while (s->names[k] && k < v) k++;
      tg_text_puts(b, v >= 0 && s->names[k] ? s->names[k] : "");
      break;
    }
    case TG_SET_NUMS: case TG_SET_STRS:
      for (int k = 0; k < n; k++) {
        if (k) tg_text_puts(b, ",");
        if (s->type == TG_SET_STRS) tg_text_puts(b, p + (size_t)k * s->size);
        else if (s->elem == TG_SET_FLOAT) tg_settings_put_real(b, ((const float *)p)[k], 1, t->float_digits);
        else tg_text_printf(b, "%d", ((const int *)p)[k]);
      }
      break;
    default: put_value(t, cfg, s, b); break; /* the numbers: as JSON writes them */
  }
}

/* The length of key's section ("tft" of "tft.hidden"), 0 for a plain key. */
static size_t section_len(const char *key) {
  const char *dot = strchr(key, '.');
  return dot ? (size_t)(dot - key) : 0;
}

static int in_section(const char *key, const char *sec, size_t len) {
  return section_len(key) == len && strncmp(key, sec, len) == 0;
}

static void put_members(const tg_settings *t, const void *cfg, tg_text *b, const char *sec, size_t len,
                        const char *indent, int *first) {
  for (int i = 0; i < t->n; i++) {
    const tg_setting *s = &t->rows[i];
    if (!in_section(s->key, sec, len)) continue;
    tg_text_printf(b, "%s\n%s", *first ? "" : ",", indent);
    tg_json_append_string(b, len ? s->key + len + 1 : s->key);
    tg_text_puts(b, ": ");
    put_value(t, cfg, s, b);
    *first = 0;
  }
}

void tg_settings_json_members(const tg_settings *t, const void *cfg, tg_text *b, int *first) {
  put_members(t, cfg, b, "", 0, "  ", first);
  for (int i = 0; i < t->n; i++) {
    const char *key = t->rows[i].key;
    size_t len = section_len(key);
    int seen = 0;
    for (int j = 0; len && j < i && !seen; j++) seen = in_section(t->rows[j].key, key, len);
    if (!len || seen) continue;
    int inner = 1;
    tg_text_printf(b, "%s\n  \"%.*s\": {", *first ? "" : ",", (int)len, key);
    put_members(t, cfg, b, key, len, "    ", &inner);
    tg_text_puts(b, "\n  }");
    *first = 0;
  }
}

char *tg_settings_to_json(const tg_settings *t, const void *cfg) {
  tg_text b = {0};
  int first = 1;
  tg_text_puts(&b, "{");
  tg_settings_json_members(t, cfg, &b, &first);
  tg_text_puts(&b, "\n}\n");
  if (b.oom) {
    tg_text_free(&b);
    return NULL;
  }
  return b.data;
}

/* ---- applying ---- */

static int is_number(const tg_json *v) { return v->type == TG_JSON_INT || v->type == TG_JSON_REAL; }

static tg_status wrong_type(const tg_settings *t, const tg_setting *s, const char *at, const tg_json *v, const char *want) {
  return tg_error(TG_ERR_INVALID, "%s: %s (%s) is %s; want %s", t->name, s->key, at, tg_json_type_name(v->type), want);
}

static tg_status apply_list(const tg_settings *t, void *cfg, const tg_setting *s, const tg_json *v, const char *at) {
  if (s->type == TG_SET_STRS) {
    *ts_count(cfg, s) = 0;
    if (v->type == TG_JSON_STRING) return ts_set_string(t, cfg, s, v->str, at);
    if (v->type != TG_JSON_ARRAY) return wrong_type(t, s, at, v, "an array of strings");
    for (const tg_json *e = v->first; e; e = e->next) {
      if (e->type != TG_JSON_STRING) return wrong_type(t, s, at, e, "strings as elements");
      tg_status st = ts_set_string(t, cfg, s, e->str, at);
      if (st != TG_OK) return st;
    }
    return TG_OK;
  }
  double x[TS_MAX_LIST];
  int n = 0;
  if (v->type != TG_JSON_ARRAY) return wrong_type(t, s, at, v, "an array of numbers");
  for (const tg_json *e = v->first; e; e = e->next) {
    if (!is_number(e)) return wrong_type(t, s, at, e, "numbers as elements");
    if (n == s->max_n || n == TS_MAX_LIST)
      return tg_error(TG_ERR_INVALID, "%s: %s (%s): more than %d given", t->name, s->key, at, s->max_n);
    x[n++] = e->num;
  }
  return ts_set_list(t, cfg, s, x, n, at);
}

static tg_status apply_value(const tg_settings *t, void *cfg, const tg_setting *s, const tg_json *v, const char *where) {
  char at[600], what[700];
  snprintf(at, sizeof at, "%s, byte %zu", where, v->offset);
  switch (s->type) {
    case TG_SET_DOUBLE: case TG_SET_FLOAT: case TG_SET_INT: case TG_SET_INT64:
      if (!is_number(v)) return wrong_type(t, s, at, v, "a number");
      return ts_set_number(t, cfg, s, v->num, at);
    case TG_SET_UINT64:
      if (v->type != TG_JSON_STRING) return wrong_type(t, s, at, v, "a string of digits");
      snprintf(what, sizeof what, "%s: %s (%s)", t->name, s->key, at);
      return tg_parse_uint64(v->str, what, (uint64_t *)((char *)cfg + s->off));
    case TG_SET_BOOL:
      if (v->type != TG_JSON_TRUE && v->type != TG_JSON_FALSE) return wrong_type(t, s, at, v, "true or false");
      return ts_set_bool(t, cfg, s, v->type == TG_JSON_TRUE, at);
    case TG_SET_NUMS: case TG_SET_STRS: return apply_list(t, cfg, s, v, at);
    default:
      if (v->type != TG_JSON_STRING) return wrong_type(t, s, at, v, "a string");
      return ts_set_string(t, cfg, s, v->str, at);
  }
}

static int has_section(const tg_settings *t, const char *name) {
  for (int i = 0; i < t->n; i++)
    if (in_section(t->rows[i].key, name, strlen(name))) return 1;
  return 0;
}

static int is_extra(const tg_settings *t, const char *key) {
  for (int k = 0; t->extra && t->extra[k]; k++)
    if (strcmp(t->extra[k], key) == 0) return 1;
  return 0;
}

static tg_status apply_object(const tg_settings *t, void *cfg, const tg_json *obj, const char *sec, const char *where) {
  for (const tg_json *m = obj->first; m; m = m->next) {
    if (!sec && m->type == TG_JSON_OBJECT && has_section(t, m->key)) {
      tg_status st = apply_object(t, cfg, m, m->key, where);
      if (st != TG_OK) return st;
      continue;
    }
    if (!sec && is_extra(t, m->key)) continue;
    char key[160];
    snprintf(key, sizeof key, "%s%s%s", sec ? sec : "", sec ? "." : "", m->key);
    const tg_setting *s = tg_settings_find(t, key);
    if (!s) return tg_error(TG_ERR_INVALID, "%s: %s, byte %zu: unknown setting '%s'", t->name, where, m->key_offset, key);
    tg_status st = apply_value(t, cfg, s, m, where);
    if (st != TG_OK) return st;
  }
  return TG_OK;
}

/* The member of obj that holds key ("tft.hidden": obj.tft.hidden), or NULL. */
static const tg_json *lookup(const tg_json *obj, const char *key) {
  size_t len = section_len(key);
  if (!len) return tg_json_get(obj, key);
  char sec[128];
  snprintf(sec, sizeof sec, "%.*s", (int)len, key);
  return tg_json_get(tg_json_get(obj, sec), key + len + 1);
}

tg_status tg_settings_apply_json(const tg_settings *t, void *cfg, const tg_json *obj, const char *where) {
  if (!obj || obj->type != TG_JSON_OBJECT)
    return tg_error(TG_ERR_INVALID, "%s: %s is %s; want an object of settings", t->name, where,
                    obj ? tg_json_type_name(obj->type) : "missing");
  for (int i = 0; t->complete && i < t->n; i++)
    if (!lookup(obj, t->rows[i].key))
      return tg_error(TG_ERR_INVALID, "%s: %s: \"%s\" is missing", t->name, where, t->rows[i].key);
  return apply_object(t, cfg, obj, NULL, where);
}

tg_status tg_settings_apply_text(const tg_settings *t, void *cfg, const char *text, size_t len, const char *where) {
  tg_json_doc *doc = NULL;
  if (tg_json_parse(text, len, where, 0, &doc) != TG_OK) return tg_error(TG_ERR_INVALID, "%s: %s", t->name, tg_last_error());
  tg_status st = tg_settings_apply_json(t, cfg, tg_json_root(doc), where);
  tg_json_free(doc);
  return st;
}
