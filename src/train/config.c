/* Training settings: one table of every setting (JSON name, flag, type, range), defaults, setting, checks. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "train/train_internal.h"

#define OFF(member) offsetof(tg_train_config, member)
#define SZ(member) sizeof(((tg_train_config *)0)->member)
#define M_TFT (1u << TG_MODEL_TFT)
#define M_MAMBA (1u << TG_MODEL_MAMBA2)
#define M_MLP (1u << TG_MODEL_MLP)

/* The order here is the order of config.json and of `tickgrad train --help`. */
static const tr_setting SETTINGS[] = {
    {"model", "--model", TR_KIND, OFF(model.kind), 0, 0, 0, 0, "tft, mamba2 or mlp"},
    {"data", "--data", TR_DATA, OFF(data), 0, 0, 0, 0, "bar files, folders or globs (CSV, DBN, Parquet); several allowed"},
    {"data_tz", "--data-tz", TR_STR, OFF(data_tz), SZ(data_tz), 0, 0, 0, "zone of naive timestamps in the files (default UTC)"},
    {"features", "--features", TR_STR, OFF(features), SZ(features), 0, 0, 0, "feature spec (default " TG_FEATURES_DEFAULT ")"},
    {"tz", "--tz", TR_STR, OFF(tz), SZ(tz), 0, 0, 0, "zone of the time-of-day and weekday features (default UTC)"},
    {"horizons", "--horizons", TR_INT, OFF(horizons), 0, 1, TG_MAX_HORIZONS, 0, "forecast 1..H bars ahead (default 8; tft: its decoder steps)"},
    {"train_frac", "--train-frac", TR_DBL, OFF(train_frac), 0, 0.01, 0.98, 0, "share of the bars for training (default 0.7)"},
    {"val_frac", "--val-frac", TR_DBL, OFF(val_frac), 0, 0.01, 0.98, 0, "share for validation (default 0.15; test is the rest)"},
    {"quantiles", "--quantiles", TR_QUANT, OFF(model.q), 0, 0, 0, 0, "increasing, in (0, 1) (default 0.1,0.5,0.9)"},
    {"dropout", "--dropout", TR_FLT, OFF(model.dropout), 0, 0, 0.95, 0, "default 0.1"},
    {"epochs", "--epochs", TR_INT, OFF(epochs), 0, 1, 1e6, 0, "default 20"},
    {"batch", "--batch", TR_INT, OFF(batch), 0, 1, 1 << 20, 0, "windows per step (default 32 tft, 8 mamba2, 64 mlp)"},
    {"lr", "--lr", TR_DBL, OFF(lr), 0, 1e-30, 1e30, 0, "Adam learning rate (default 0.001)"},
    {"weight_decay", "--weight-decay", TR_DBL, OFF(weight_decay), 0, 0, 1e3, 0, "Adam L2 term (default 0)"},
    {"warmup_steps", "--warmup", TR_INT, OFF(warmup_steps), 0, -1, 1e9, 0, "linear warm-up steps (default -1: 5% of an epoch)"},
    {"schedule", "--schedule", TR_SCHED, OFF(schedule), 0, 0, 0, 0, "after warm-up: cosine (default) or constant"},
    {"final_lr_frac", "--final-lr-frac", TR_DBL, OFF(final_lr_frac), 0, 0, 1, 0, "cosine ends at this share of lr (default 0.05)"},
    {"clip_norm", "--clip", TR_DBL, OFF(clip_norm), 0, 0, 1e9, 0, "gradient norm clip (default 1; 0: off)"},
    {"patience", "--patience", TR_INT, OFF(patience), 0, 0, 1e6, 0, "early stopping epochs (default 5; 0: off)"},
    {"min_delta", "--min-delta", TR_DBL, OFF(min_delta), 0, 0, 1e9, 0, "validation-loss improvement that counts (default 1e-4)"},
    {"ckpt_every", "--ckpt-every", TR_INT, OFF(ckpt_every), 0, 1, 1e6, 0, "checkpoint every N epochs and at the end (default 1)"},
    {"seed", "--seed", TR_LONG, OFF(seed), 0, 0, 2147483647.0, 0, "parameters, shuffles, dropout (default 1)"},
    {"threads", "--threads", TR_INT, OFF(threads), 0, 0, 4096, 0, "CPU threads (default 0: as set globally)"},
    {"device", "--device", TR_STR, OFF(device), SZ(device), 0, 0, 0, "auto, cpu, cuda or cuda:N (default auto)"},
    {"out", "--out", TR_STR, OFF(out), SZ(out), 0, 0, 0, "run folder (default runs/<model>-<timestamp>)"},
    {"tft.hidden", "--hidden", TR_INT, OFF(model.tft.hidden), 0, 1, 65536, M_TFT, "tft: d_model (default 64)"},
    {"tft.heads", "--heads", TR_INT, OFF(model.tft.heads), 0, 1, 1024, M_TFT, "tft: attention heads (default 4)"},
    {"tft.enc_len", "--enc-len", TR_INT, OFF(model.tft.enc_len), 0, 1, 1 << 20, M_TFT, "tft: encoder steps (default 64)"},
    {"mamba2.d_model", "--d-model", TR_INT, OFF(model.mamba.d_model), 0, 1, 65536, M_MAMBA, "mamba2: default 128"},
    {"mamba2.n_layers", "--layers", TR_INT, OFF(model.mamba.n_layers), 0, 1, 1024, M_MAMBA, "mamba2: default 2"},
    {"mamba2.d_state", "--d-state", TR_INT, OFF(model.mamba.d_state), 0, 1, 65536, M_MAMBA, "mamba2: default 64"},
    {"mamba2.headdim", "--headdim", TR_INT, OFF(model.mamba.headdim), 0, 1, 65536, M_MAMBA, "mamba2: default 32"},
    {"mamba2.expand", "--expand", TR_INT, OFF(model.mamba.expand), 0, 1, 64, M_MAMBA, "mamba2: default 2"},
    {"mamba2.d_conv", "--d-conv", TR_INT, OFF(model.mamba.d_conv), 0, 1, 16, M_MAMBA, "mamba2: default 4"},
    {"mamba2.ngroups", "--ngroups", TR_INT, OFF(model.mamba.ngroups), 0, 1, 1024, M_MAMBA, "mamba2: default 1"},
    {"mamba2.chunk", "--chunk", TR_INT, OFF(model.mamba.chunk), 0, 1, 1 << 20, M_MAMBA, "mamba2: SSD chunk (default 64)"},
    {"mamba2.seq_len", "--seq-len", TR_INT, OFF(model.mamba.seq_len), 0, 1, 1 << 20, M_MAMBA, "mamba2: window length (default 128)"},
    {"mlp.window", "--window", TR_INT, OFF(model.mlp.window), 0, 1, 1 << 20, M_MLP, "mlp: past bars (default 16)"},
    {"mlp.hidden", "--hidden", TR_INT, OFF(model.mlp.hidden), 0, 1, 65536, M_MLP, "mlp: hidden units (default 64)"},
};

int tr_setting_count(void) { return (int)(sizeof SETTINGS / sizeof SETTINGS[0]); }
const tr_setting *tr_setting_at(int i) { return i >= 0 && i < tr_setting_count() ? &SETTINGS[i] : NULL; }

static const char *KIND_NAMES[] = {"tft", "mamba2", "mlp"};

const char *tg_train_model_name(tg_model_kind kind) {
  return (int)kind >= 0 && (int)kind < 3 ? KIND_NAMES[kind] : NULL;
}

tg_status tg_train_model_parse(const char *name, tg_model_kind *out) {
  for (int k = 0; k < 3; k++)
    if (name && strcmp(name, KIND_NAMES[k]) == 0) {
      *out = (tg_model_kind)k;
      return TG_OK;
    }
  return tg_error(TG_ERR_INVALID, "model '%s': want tft, mamba2 or mlp", name ? name : "");
}

tg_train_config tg_train_defaults(tg_model_kind kind) {
  tg_train_config c;
  memset(&c, 0, sizeof c);
  c.model = tg_forecast_defaults(kind);
  c.horizons = 8;
  c.model.tft.dec_len = c.horizons;
  c.train_frac = 0.7;
  c.val_frac = 0.15;
  c.epochs = 20;
  c.batch = kind == TG_MODEL_TFT ? 32 : kind == TG_MODEL_MAMBA2 ? 8 : 64;
  c.lr = 1e-3;
  c.warmup_steps = -1;
  c.schedule = TG_TRAIN_COSINE;
  c.final_lr_frac = 0.05;
  c.clip_norm = 1.0;
  c.patience = 5;
  c.min_delta = 1e-4;
  c.ckpt_every = 1;
  c.seed = 1;
  snprintf(c.device, sizeof c.device, "auto");
  return c;
}

/* ---- setting one value ---- */

tg_status tr_set_number(tg_train_config *c, const tr_setting *s, double v, const char *where) {
  char *p = (char *)c + s->off;
  int whole = s->type == TR_INT || s->type == TR_LONG;
  if (!isfinite(v) || v < s->lo || v > s->hi || (whole && v != floor(v))) {
    if (whole)
      return tg_error(TG_ERR_INVALID, "config: %s (%s) is %g; want a whole number in [%.0f, %.0f]", s->key, where, v,
                      s->lo, s->hi);
    return tg_error(TG_ERR_INVALID, "config: %s (%s) is %g; want a number in [%g, %g]", s->key, where, v, s->lo, s->hi);
  }
  if (s->type == TR_INT) *(int *)p = (int)v;
  else if (s->type == TR_LONG) *(long *)p = (long)v;
  else if (s->type == TR_DBL) *(double *)p = v;
  else *(float *)p = (float)v;
  return TG_OK;
}

tg_status tr_set_string(tg_train_config *c, const tr_setting *s, const char *v, const char *where) {
  if (s->type == TR_KIND) return tg_train_model_parse(v, &c->model.kind) == TG_OK ? TG_OK
         : tg_error(TG_ERR_INVALID, "config: model (%s) is '%s'; want tft, mamba2 or mlp", where, v);
  if (s->type == TR_SCHED) {
    if (strcmp(v, "cosine") == 0) c->schedule = TG_TRAIN_COSINE;
    else if (strcmp(v, "constant") == 0) c->schedule = TG_TRAIN_CONSTANT;
    else return tg_error(TG_ERR_INVALID, "config: schedule (%s) is '%s'; want cosine or constant", where, v);
    return TG_OK;
  }
  if (s->type == TR_DATA) {
    if (c->n_data >= TG_TRAIN_MAX_DATA)
      return tg_error(TG_ERR_INVALID, "config: data (%s): more than %d paths", where, TG_TRAIN_MAX_DATA);
    if (!v[0] || strlen(v) >= TG_PATH_MAX)
      return tg_error(TG_ERR_INVALID, "config: data (%s): path '%.64s' is empty or longer than %d bytes", where, v,
                      TG_PATH_MAX - 1);
    snprintf(c->data[c->n_data++], TG_PATH_MAX, "%s", v);
    return TG_OK;
  }
  if (strlen(v) >= s->size)
    return tg_error(TG_ERR_INVALID, "config: %s (%s): '%.64s...' is longer than %zu bytes", s->key, where, v, s->size - 1);
  snprintf((char *)c + s->off, s->size, "%s", v);
  return TG_OK;
}

/* "0.1,0.5,0.9" -> model.q, model.nq */
tg_status tr_set_quantiles(tg_train_config *c, const double *v, int n, const char *where) {
  if (n < 1 || n > TG_MAX_QUANTILES)
    return tg_error(TG_ERR_INVALID, "config: quantiles (%s): %d given; want 1..%d", where, n, TG_MAX_QUANTILES);
  for (int i = 0; i < n; i++)
    if (!(v[i] > 0 && v[i] < 1) || (i > 0 && !(v[i] > v[i - 1])))
      return tg_error(TG_ERR_INVALID, "config: quantiles (%s): %g at position %d; want increasing values in (0, 1)",
                      where, v[i], i + 1);
  c->model.nq = n;
  for (int i = 0; i < n; i++) c->model.q[i] = (float)v[i];
  return TG_OK;
}

static int parse_double(const char *t, double *v) {
  char *end;
  if (!t || !*t) return 0;
  *v = strtod(t, &end);
  return *end == '\0';
}

tg_status tr_setting_set_text(tg_train_config *c, const tr_setting *s, const char *text, const char *where) {
  if (!text) return tg_error(TG_ERR_INVALID, "config: %s (%s) needs a value", s->key, where);
  if (s->type == TR_QUANT) {
    double v[TG_MAX_QUANTILES + 1];
    int n = 0;
    const char *p = text;
    while (n <= TG_MAX_QUANTILES) {
      char tok[64];
      size_t len = strcspn(p, ",");
      snprintf(tok, sizeof tok, "%.*s", (int)(len < 63 ? len : 63), p);
      if (len >= 63 || !parse_double(tok, &v[n]))
        return tg_error(TG_ERR_INVALID, "config: quantiles (%s) '%s': want numbers separated by commas", where, text);
      n++;
      if (!p[len]) break;
      p += len + 1;
    }
    return tr_set_quantiles(c, v, n, where);
  }
  if (s->type == TR_INT || s->type == TR_LONG || s->type == TR_DBL || s->type == TR_FLT) {
    double v;
    if (!parse_double(text, &v)) return tg_error(TG_ERR_INVALID, "config: %s (%s) '%s' is not a number", s->key, where, text);
    return tr_set_number(c, s, v, where);
  }
  return tr_set_string(c, s, text, where);
}

const tr_setting *tr_setting_find(const char *key) {
  for (int i = 0; i < tr_setting_count(); i++)
    if (strcmp(SETTINGS[i].key, key) == 0) return &SETTINGS[i];
  return NULL;
}

tg_status tg_train_config_set(tg_train_config *c, const char *key, const char *value) {
  const tr_setting *s = key ? tr_setting_find(key) : NULL;
  if (!s) return tg_error(TG_ERR_INVALID, "config: unknown setting '%s'", key ? key : "");
  return tr_setting_set_text(c, s, value, "set");
}

/* ---- checks and comparison ---- */

tg_status tg_train_config_check(const tg_train_config *c) {
  const char *name = tg_train_model_name(c->model.kind);
  if (!name) return tg_error(TG_ERR_INVALID, "config: unknown model kind %d", (int)c->model.kind);
  for (int i = 0; i < tr_setting_count(); i++) { /* every number in range (a struct filled by hand) */
    const tr_setting *s = &SETTINGS[i];
    const char *p = (const char *)c + s->off;
    double v = s->type == TR_INT ? *(const int *)p : s->type == TR_LONG ? (double)*(const long *)p
             : s->type == TR_DBL ? *(const double *)p : s->type == TR_FLT ? *(const float *)p : 0;
    if (s->type <= TR_FLT && !(v >= s->lo && v <= s->hi))
      return tg_error(TG_ERR_INVALID, "config: %s is %g; want [%g, %g]", s->key, v, s->lo, s->hi);
  }
  if (c->train_frac + c->val_frac > 0.99 + 1e-12)
    return tg_error(TG_ERR_INVALID, "config: train_frac %g + val_frac %g must leave room (sum <= 0.99)", c->train_frac,
                    c->val_frac);
  if (c->model.nq < 1 || c->model.nq > TG_MAX_QUANTILES)
    return tg_error(TG_ERR_INVALID, "config: %d quantiles; want 1..%d", c->model.nq, TG_MAX_QUANTILES);
  if (strcmp(c->device, "auto") != 0) {
    tg_device d;
    if (tg_device_parse(c->device, &d) != TG_OK)
      return tg_error(TG_ERR_INVALID, "config: device '%s': want auto, cpu, cpu:N, cuda or cuda:N", c->device);
  }
  tg_forecast_cfg m = c->model; /* the model's own checks, with placeholders for what the data sets */
  m.n_past = m.n_static = 1;
  m.n_future = 1;
  m.horizons = c->horizons;
  m.tft.dec_len = c->horizons; /* tft forecasts one horizon per decoder step */
  if (tg_forecast_check(&m) != TG_OK) return tg_error(TG_ERR_INVALID, "config: %s", tg_last_error());
  return TG_OK;
}

const tr_setting *tr_config_diff(const tg_train_config *a, const tg_train_config *b) {
  for (int i = 0; i < tr_setting_count(); i++) {
    const tr_setting *s = &SETTINGS[i];
    if (strcmp(s->key, "device") == 0 || strcmp(s->key, "threads") == 0 || strcmp(s->key, "out") == 0) continue;
    const char *pa = (const char *)a + s->off, *pb = (const char *)b + s->off;
    int differ = 0;
    switch (s->type) {
    case TR_INT: case TR_SCHED: differ = *(const int *)pa != *(const int *)pb; break;
    case TR_KIND: differ = a->model.kind != b->model.kind; break;
    case TR_LONG: differ = *(const long *)pa != *(const long *)pb; break;
    case TR_DBL: differ = *(const double *)pa != *(const double *)pb; break;
    case TR_FLT: differ = *(const float *)pa != *(const float *)pb; break;
    case TR_STR: differ = strcmp(pa, pb) != 0; break;
    case TR_QUANT: differ = a->model.nq != b->model.nq;
      for (int k = 0; !differ && k < a->model.nq; k++) differ = a->model.q[k] != b->model.q[k];
      break;
    case TR_DATA:
      differ = a->n_data != b->n_data;
      for (int k = 0; !differ && k < a->n_data; k++) differ = strcmp(a->data[k], b->data[k]) != 0;
      break;
    }
    if (differ) return s;
  }
  return NULL;
}

/* ---- flags ---- */

int tg_train_flag_known(const char *flag) {
  for (int i = 0; flag && i < tr_setting_count(); i++)
    if (strcmp(SETTINGS[i].flag, flag) == 0) return 1;
  return 0;
}

tg_status tg_train_config_set_flag(tg_train_config *c, const char *flag, const char *value) {
  const tr_setting *other = NULL;
  for (int i = 0; flag && i < tr_setting_count(); i++) {
    const tr_setting *s = &SETTINGS[i];
    if (strcmp(s->flag, flag) != 0) continue;
    if (s->models && !(s->models & (1u << c->model.kind))) {
      other = s;
      continue;
    }
    return tr_setting_set_text(c, s, value, flag);
  }
  if (other)
    return tg_error(TG_ERR_INVALID, "%s sets %s, which does not apply to model %s", flag, other->key,
                    tg_train_model_name(c->model.kind));
  return tg_error(TG_ERR_INVALID, "unknown flag '%s'", flag ? flag : "");
}

void tg_train_flags_help(FILE *f) {
  for (int i = 0; i < tr_setting_count(); i++) {
    const tr_setting *s = &SETTINGS[i];
    const char *arg = s->type == TR_DATA ? " FILE..." : s->type == TR_QUANT ? " Q,Q,..." :
                      s->type == TR_STR || s->type == TR_KIND || s->type == TR_SCHED ? " S" :
                      s->type == TR_INT || s->type == TR_LONG ? " N" : " X";
    char lhs[64];
    snprintf(lhs, sizeof lhs, "%s%s", s->flag, arg);
    fprintf(f, "  %-22s %s\n", lhs, s->help);
  }
}
