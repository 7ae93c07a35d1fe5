/* Training settings as JSON (through the settings engine): applying a config file over a config, writing every setting. */
#include <string.h>
#include "base/alloc.h"
#include "base/json.h"
#include "train/train_internal.h"

tg_status tg_train_config_apply_json(tg_train_config *c, const char *text, size_t len, const char *where) {
  return tg_settings_apply_text(tr_settings(), c, text, len, where);
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
  c->model.tft.vol_scale = 0; /* a run's config without it was written before it existed: the outputs as they came */
  st = tg_train_config_apply_json(c, text, len, path);
  tg_free(text);
  return st;
}

char *tg_train_config_to_json(const tg_train_config *c) { return tg_settings_to_json(tr_settings(), c); }
