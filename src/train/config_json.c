/* Training settings as JSON: applying a config file over a config, and writing every setting out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/json.h"
#include "train/train_internal.h"

/* ---- applying a JSON object ---- */

static tg_status apply_member(tg_train_config *c, const tr_setting *s, const tg_json *v, const char *where) {
  char at[TG_PATH_MAX + 64];
  snprintf(at, sizeof at, "%s, byte %zu", where, v->offset);
  switch (s->type) {
  case TR_INT: case TR_LONG: case TR_DBL: case TR_FLT:
    if (v->type != TG_JSON_INT && v->type != TG_JSON_REAL)
      return tg_error(TG_ERR_INVALID, "config: %s (%s) is %s; want a number", s->key, at, tg_json_type_name(v->type));
    return tr_set_number(c, s, v->num, at);
  case TR_QUANT: {
    double q[TG_MAX_QUANTILES];
    int n = 0;
    if (v->type != TG_JSON_ARRAY) return tg_error(TG_ERR_INVALID, "config: quantiles (%s) is %s; want an array of numbers", at, tg_json_type_name(v->type));
    for (const tg_json *e = v->first; e; e = e->next) {
      if (e->type != TG_JSON_INT && e->type != TG_JSON_REAL)
        return tg_error(TG_ERR_INVALID, "config: quantiles (%s): element %d is %s; want numbers", at, n + 1, tg_json_type_name(e->type));
      if (n == TG_MAX_QUANTILES) return tg_error(TG_ERR_INVALID, "config: quantiles (%s): more than %d", at, TG_MAX_QUANTILES);
      q[n++] = e->num;
    }
    return tr_set_quantiles(c, q, n, at);
  }
  case TR_DATA:
    c->n_data = 0;
    if (v->type == TG_JSON_STRING) return tr_set_string(c, s, v->str, at);
    if (v->type != TG_JSON_ARRAY) return tg_error(TG_ERR_INVALID, "config: data (%s) is %s; want an array of paths", at, tg_json_type_name(v->type));
    for (const tg_json *e = v->first; e; e = e->next) {
      if (e->type != TG_JSON_STRING) return tg_error(TG_ERR_INVALID, "config: data (%s): an element is %s; want strings", at, tg_json_type_name(e->type));
      tg_status st = tr_set_string(c, s, e->str, at);
      if (st != TG_OK) return st;
    }
    return TG_OK;
  default:
    if (v->type != TG_JSON_STRING) return tg_error(TG_ERR_INVALID, "config: %s (%s) is %s; want a string", s->key, at, tg_json_type_name(v->type));
    return tr_set_string(c, s, v->str, at);
  }
}

static tg_status apply_object(tg_train_config *c, const tg_json *obj, const char *section, const char *where) {
  for (const tg_json *m = obj->first; m; m = m->next) {
    char key[128];
    snprintf(key, sizeof key, "%s%s%s", section ? section : "", section ? "." : "", m->key);
    if (!section && m->type == TG_JSON_OBJECT &&
        (strcmp(m->key, "tft") == 0 || strcmp(m->key, "mamba2") == 0 || strcmp(m->key, "mlp") == 0)) {
      tg_status st = apply_object(c, m, m->key, where);
      if (st != TG_OK) return st;
      continue;
    }
    const tr_setting *s = tr_setting_find(key);
    if (!s) return tg_error(TG_ERR_INVALID, "config: %s, byte %zu: unknown setting '%s'", where, m->key_offset, key);
    tg_status st = apply_member(c, s, m, where);
    if (st != TG_OK) return st;
  }
  return TG_OK;
}

tg_status tg_train_config_apply_json(tg_train_config *c, const char *text, size_t len, const char *where) {
  tg_json_doc *doc = NULL;
  tg_status st = tg_json_parse(text, len, where, 0, &doc);
  if (st != TG_OK) return tg_error(TG_ERR_INVALID, "config: %s", tg_last_error());
  const tg_json *root = tg_json_root(doc);
  if (root->type != TG_JSON_OBJECT) st = tg_error(TG_ERR_INVALID, "config: %s is %s; want an object of settings", where, tg_json_type_name(root->type));
  else st = apply_object(c, root, NULL, where);
  tg_json_free(doc);
  return st;
}

tg_status tg_train_config_load(const char *path, tg_train_config *c) {
  char *text = NULL;
  size_t len = 0;
  tg_status st = tg_read_file(path, &text, &len);
  if (st != TG_OK) return st;
  tg_json_doc *doc = NULL;
  tg_model_kind kind = c->model.kind;
  if (tg_json_parse(text, len, path, 0, &doc) == TG_OK) { /* the file's model picks the defaults */
    const tg_json *m = tg_json_get(tg_json_root(doc), "model");
    if (m && m->type == TG_JSON_STRING && tg_train_model_parse(m->str, &kind) != TG_OK) kind = c->model.kind;
    tg_json_free(doc);
  }
  *c = tg_train_defaults(kind);
  st = tg_train_config_apply_json(c, text, len, path);
  tg_free(text);
  return st;
}

/* ---- writing ---- */

/* The shortest decimal that reads back as the same double (or float). */
static void put_real(tg_json_buf *b, double v, int is_float) {
  char buf[40];
  for (int digits = 6; digits <= 17; digits++) {
    snprintf(buf, sizeof buf, "%.*g", digits, v);
    double back = strtod(buf, NULL);
    if (is_float ? (float)back == (float)v : back == v) break;
  }
  tg_json_buf_puts(b, buf);
}

static void put_value(tg_json_buf *b, const tg_train_config *c, const tr_setting *s) {
  const char *p = (const char *)c + s->off;
  switch (s->type) {
  case TR_INT: tg_json_buf_printf(b, "%d", *(const int *)p); break;
  case TR_LONG: tg_json_buf_printf(b, "%ld", *(const long *)p); break;
  case TR_DBL: put_real(b, *(const double *)p, 0); break;
  case TR_FLT: put_real(b, (double)*(const float *)p, 1); break;
  case TR_STR: tg_json_buf_append_string(b, p); break;
  case TR_KIND: tg_json_buf_append_string(b, tg_train_model_name(c->model.kind)); break;
  case TR_SCHED: tg_json_buf_append_string(b, c->schedule == TG_TRAIN_CONSTANT ? "constant" : "cosine"); break;
  case TR_QUANT:
    tg_json_buf_puts(b, "[");
    for (int i = 0; i < c->model.nq; i++) {
      if (i) tg_json_buf_puts(b, ", ");
      put_real(b, (double)c->model.q[i], 1);
    }
    tg_json_buf_puts(b, "]");
    break;
  case TR_DATA:
    tg_json_buf_puts(b, "[");
    for (int i = 0; i < c->n_data; i++) {
      if (i) tg_json_buf_puts(b, ", ");
      tg_json_buf_append_string(b, c->data[i]);
    }
    tg_json_buf_puts(b, "]");
    break;
  }
}

/* Members whose key starts with section + "." (or, for NULL, that have no '.'), one per line. */
static void put_members(tg_json_buf *b, const tg_train_config *c, const char *section, const char *indent, int *first) {
  size_t sl = section ? strlen(section) : 0;
  for (int i = 0; i < tr_setting_count(); i++) {
    const tr_setting *s = tr_setting_at(i);
    const char *dot = strchr(s->key, '.');
    if (section ? !(dot && (size_t)(dot - s->key) == sl && strncmp(s->key, section, sl) == 0) : dot != NULL) continue;
    tg_json_buf_printf(b, "%s\n%s", *first ? "" : ",", indent);
    tg_json_buf_append_string(b, section ? dot + 1 : s->key);
    tg_json_buf_puts(b, ": ");
    put_value(b, c, s);
    *first = 0;
  }
}

char *tg_train_config_to_json(const tg_train_config *c) {
  tg_json_buf b = {0};
  int first = 1;
  static const char *sections[] = {"tft", "mamba2", "mlp"};
  tg_json_buf_puts(&b, "{");
  put_members(&b, c, NULL, "  ", &first);
  for (int k = 0; k < 3; k++) {
    int inner = 1;
    tg_json_buf_printf(&b, ",\n  \"%s\": {", sections[k]);
    put_members(&b, c, sections[k], "    ", &inner);
    tg_json_buf_puts(&b, "\n  }");
  }
  tg_json_buf_puts(&b, "\n}\n");
  if (b.oom) {
    tg_json_buf_free(&b);
    return NULL;
  }
  return b.data;
}
