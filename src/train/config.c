/* Training settings: the table of every setting (JSON name, flag, type, range) for the settings engine, defaults, checks. */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/read_settings.h"
#include "models/model_table.h"
#include "train/train_internal.h"

#define OFF(member) offsetof(tg_train_config, member)
#define SZ(member) sizeof(((tg_train_config *)0)->member)
/* a number row: key, flag (NULL: --key), type, member, range, the models it applies to (0: all), help */
#define NUM(k, f, ty, m, l, h, only_, hl) {.key = k, .flag = f, .type = ty, .off = OFF(m), .lo = l, .hi = h, .only = only_, .help = hl}
#define STR(k, m, fl, hl) {.key = k, .type = TG_SET_STRING, .off = OFF(m), .size = SZ(m), .flags = fl, .help = hl}

_Static_assert(sizeof(long) == sizeof(int64_t), "seed (a long) is an int64 setting");
_Static_assert(sizeof(tg_model_kind) == sizeof(int) && sizeof(tg_train_schedule) == sizeof(int) &&
                   sizeof(tg_precision) == sizeof(int) && sizeof(tg_recompute) == sizeof(int),
               "enums are int settings");
_Static_assert(TG_RECOMPUTE_COUNT == 3, "RECOMPUTE names every tg_recompute");

static const char *const SCHEDULES[] = {"cosine", "constant", NULL}; /* TG_TRAIN_COSINE, TG_TRAIN_CONSTANT */
static const char *const RECOMPUTE[] = {"none", "blocks", "all", NULL}; /* tg_recompute's order */

/* The settings every model takes; each model's own rows follow them in the trainer's table (tr_settings). The order is
 * the order of config.json and of `tickgrad train --help`. The help of "model" and "batch" is made from the table. */
static const tg_setting COMMON[] = {
    {.key = "model", .type = TG_SET_ENUM, .off = OFF(model.kind), .names = tg_model_names},
    {.key = "data", .type = TG_SET_STRS, .off = OFF(data), .size = TG_TRAIN_PATH_MAX, .count_off = OFF(n_data),
     .max_n = TG_TRAIN_MAX_DATA, .arg = "FILE...", .help = "bar files, folders or globs (CSV, DBN, Parquet); several allowed"},
    TG_READ_SETTING_ROWS(OFF(read)),
    STR("features", features, 0, "feature spec (default " TG_FEATURES_DEFAULT ")"),
    STR("tz", tz, 0, "zone of the time-of-day and weekday features (default: the data's zone, --data-tz, else UTC; "
                     "config.json records the one used)"),
    NUM("horizons", NULL, TG_SET_INT, horizons, 1, TG_MAX_HORIZONS, 0, "forecast 1..H bars ahead (default 8; tft: its decoder steps)"),
    STR("target", target, 0, "logret (default), col:NAME[:diff|:logdiff], labels:FILE or triple-barrier:UP,DOWN,BARS"),
    STR("class_weights", class_weights, 0, "a classifier's loss weights: balanced, or name=w,name=w (default all 1)"),
    NUM("train_frac", NULL, TG_SET_DOUBLE, train_frac, 0.01, 0.98, 0, "share of the bars for training (default 0.7)"),
    NUM("val_frac", NULL, TG_SET_DOUBLE, val_frac, 0.01, 0.98, 0, "share for validation (default 0.15; test is the rest)"),
    {.key = "quantiles", .type = TG_SET_NUMS, .off = OFF(model.q), .lo = 0, .hi = 1,
     .flags = TG_SET_LO_OPEN | TG_SET_HI_OPEN | TG_SET_INCREASING, .elem = TG_SET_FLOAT, .count_off = OFF(model.nq),
     .min_n = 1, .max_n = TG_MAX_QUANTILES, .arg = "Q,Q,...", .help = "increasing, in (0, 1) (default 0.1,0.5,0.9)"},
    NUM("cat_dim", NULL, TG_SET_INT, model.cat_dim, 1, 1024, 0, "embedding width of each cat: covariate (default 4)"),
    NUM("dropout", NULL, TG_SET_FLOAT, model.dropout, 0, 0.95, 0, "default 0.1"),
    NUM("epochs", NULL, TG_SET_INT, epochs, 1, 1e6, 0, "default 20"),
    NUM("batch", NULL, TG_SET_INT, batch, 1, 1 << 20, 0, NULL),
    {.key = "recompute", .type = TG_SET_ENUM, .off = OFF(recompute), .names = RECOMPUTE,
     .help = "activations recomputed in backward instead of kept: none (default), blocks (the model's blocks keep only "
             "their inputs) or all (also the layers between blocks); the same numbers, less memory, more time"},
    NUM("lr", NULL, TG_SET_DOUBLE, lr, 1e-30, 1e30, 0, "Adam learning rate (default 0.001)"),
    NUM("weight_decay", NULL, TG_SET_DOUBLE, weight_decay, 0, 1e3, 0, "Adam L2 term (default 0)"),
    NUM("warmup_steps", "--warmup", TG_SET_INT, warmup_steps, -1, 1e9, 0, "linear warm-up steps (default -1: 5% of an epoch)"),
    {.key = "schedule", .type = TG_SET_ENUM, .off = OFF(schedule), .names = SCHEDULES, .help = "after warm-up: cosine (default) or constant"},
    NUM("final_lr_frac", NULL, TG_SET_DOUBLE, final_lr_frac, 0, 1, 0, "cosine ends at this share of lr (default 0.05)"),
    NUM("clip_norm", "--clip", TG_SET_DOUBLE, clip_norm, 0, 1e9, 0, "gradient norm clip (default 1; 0: off)"),
    NUM("patience", NULL, TG_SET_INT, patience, 0, 1e6, 0, "early stopping epochs (default 5; 0: off)"),
    NUM("min_delta", NULL, TG_SET_DOUBLE, min_delta, 0, 1e9, 0, "validation-loss improvement that counts (default 1e-4)"),
    NUM("ckpt_every", NULL, TG_SET_INT, ckpt_every, 1, 1e6, 0, "checkpoint every N epochs and at the end (default 1)"),
    NUM("seed", NULL, TG_SET_INT64, seed, 0, 2147483647.0, 0, "parameters, shuffles, dropout (default 1)"),
    {.key = "precision", .type = TG_SET_ENUM, .off = OFF(precision), .names = tg_precision_names,
     .help = "auto (default: bf16 where the device has native bf16 GEMMs, AMX or AVX512-BF16 on a CPU, and the model "
             "is at least as wide as `tickgrad devices` says bf16 pays from: 64 or 128, else fp32), fp32 or bf16 "
             "(GEMM operands in bf16 with f32 accumulation, f32 weights and Adam state)"},
    {.key = "threads", .type = TG_SET_INT, .off = OFF(threads), .lo = 0, .hi = 4096, .flags = TG_SET_RESUMABLE,
     .help = "CPU threads (default 0: as set globally)"},
    STR("device", device, TG_SET_RESUMABLE, "auto, cpu, cuda or cuda:N (default auto)"),
    STR("out", out, TG_SET_RESUMABLE, "run folder (default runs/<model>-<timestamp>)"),
};

/* config.json members that are not settings: a classifier's class names, written for the record (the data decides
 * them again on resume), and the run's id, which its checkpoint sets carry through config.json's hash */
static const char *const EXTRA[] = {"classes", "run_id", NULL};

#define N_COMMON ((int)(sizeof COMMON / sizeof COMMON[0]))
static tg_setting g_rows[N_COMMON + TG_KINDS_SETTINGS_MAX];
static tg_settings g_table = {"config", g_rows, 0, 0, 0, EXTRA};
static char g_model_help[256], g_batch_help[256];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Appends to buf [n] at *len, truncating (buf stays NUL-terminated, *len at most n - 1). */
__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t n, size_t *len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + *len, n - *len, fmt, ap);
  va_end(ap);
  *len = w < 0 || *len + (size_t)w >= n ? n - 1 : *len + (size_t)w;
}

/* "windows per step (default 32 tft and transformer, 8 mamba2, 64 mlp)": each default batch, in the order a kind first
 * has it, with the kinds that have it. */
static void batch_help(char *buf, size_t n) {
  size_t len = 0;
  unsigned done = 0; /* kinds listed (a kind is a bit of `only`, so fewer than 32) */
  int count = tg_model_count();
  append(buf, n, &len, "windows per step (default ");
  for (int k = 0; k < count; k++) {
    if (done & (1u << k)) continue;
    int batch = tg_model_get((tg_model_kind)k)->batch, same = 0;
    for (int j = k; j < count; j++) same += tg_model_get((tg_model_kind)j)->batch == batch;
    append(buf, n, &len, "%s%d", k ? ", " : "", batch);
    for (int j = k, i = 0; j < count; j++) {
      if (tg_model_get((tg_model_kind)j)->batch != batch) continue;
      done |= 1u << j;
      i++;
      append(buf, n, &len, "%s%s", i == 1 ? " " : i == same ? " and " : ", ", tg_model_names[j]);
    }
  }
  append(buf, n, &len, ")");
}

/* The trainer's table: COMMON, then each kind's rows in table order, their offsets moved into tg_train_config and their
 * `only` the kind's bit. */
static void compose(void) {
  tg_model_list(g_model_help, sizeof g_model_help, ", ", " or ");
  batch_help(g_batch_help, sizeof g_batch_help);
  int n = 0;
  for (int i = 0; i < N_COMMON; i++, n++) {
    g_rows[n] = COMMON[i];
    if (strcmp(COMMON[i].key, "model") == 0) g_rows[n].help = g_model_help;
    if (strcmp(COMMON[i].key, "batch") == 0) g_rows[n].help = g_batch_help;
  }
  for (int k = 0; k < tg_model_count(); k++) {
    const tg_model_def *d = tg_model_get((tg_model_kind)k);
    for (int i = 0; i < d->n_settings; i++, n++) {
      g_rows[n] = d->settings[i];
      g_rows[n].off += OFF(model);
      g_rows[n].only = 1u << k;
    }
  }
  g_table.n = n;
}

const tg_settings *tr_settings(void) {
  pthread_once(&g_once, compose);
  return &g_table;
}

const char *tg_train_model_name(tg_model_kind kind) { return tg_model_name(kind); }

tg_status tg_train_model_parse(const char *name, tg_model_kind *out) {
  for (int k = 0; k < tg_model_count(); k++)
    if (name && strcmp(name, tg_model_names[k]) == 0) {
      *out = (tg_model_kind)k;
      return TG_OK;
    }
  char names[256];
  tg_model_list(names, sizeof names, ", ", " or ");
  return tg_error(TG_ERR_INVALID, "model '%s': want %s", name ? name : "", names);
}

tg_train_config tg_train_defaults(tg_model_kind kind) {
  tg_train_config c;
  memset(&c, 0, sizeof c);
  c.model = tg_forecast_defaults(kind);
  c.horizons = 8;
  c.model.tft.dec_len = c.horizons;
  c.model.tft.vol_scale = 1;
  c.train_frac = 0.7;
  c.val_frac = 0.15;
  c.epochs = 20;
  const tg_model_def *def = tg_model_get(kind);
  c.batch = (def ? def : tg_model_get(tg_model_default_kind()))->batch;
  c.lr = 1e-3;
  c.warmup_steps = -1;
  c.schedule = TG_TRAIN_COSINE;
  c.final_lr_frac = 0.05;
  c.clip_norm = 1.0;
  c.patience = 5;
  c.min_delta = 1e-4;
  c.ckpt_every = 1;
  c.seed = 1;
  c.precision = TG_PRECISION_AUTO;
  snprintf(c.device, sizeof c.device, "auto");
  return c;
}

/* ---- setting, checking, comparing ---- */

tg_status tg_train_config_set(tg_train_config *c, const char *key, const char *value) {
  return tg_settings_set(tr_settings(), c, key, value);
}

tg_status tg_train_config_check(const tg_train_config *c) {
  const char *name = tg_train_model_name(c->model.kind);
  if (!name) return tg_error(TG_ERR_INVALID, "config: unknown model kind %d", (int)c->model.kind);
  tg_status st = tg_settings_check(tr_settings(), c);
  if (st == TG_OK) st = tg_read_settings_check(&c->read);
  if (st != TG_OK) return st;
  if (c->stop_after_step < 0)
    return tg_error(TG_ERR_INVALID, "config: stop_after_step %lld must be >= 0", (long long)c->stop_after_step);
  if (c->train_frac + c->val_frac > 0.99 + 1e-12)
    return tg_error(TG_ERR_INVALID, "config: train_frac %g + val_frac %g must leave room (sum <= 0.99)", c->train_frac,
                    c->val_frac);
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

const tg_setting *tr_config_diff(const tg_train_config *a, const tg_train_config *b) {
  return tg_settings_diff(tr_settings(), a, b);
}

/* ---- flags ---- */

int tg_train_flag_known(const char *flag) { return tg_settings_flag_known(tr_settings(), flag); }

tg_status tg_train_config_set_flag(tg_train_config *c, const char *flag, const char *value) {
  const char *name = tg_train_model_name(c->model.kind);
  char vname[32];
  snprintf(vname, sizeof vname, "model %s", name ? name : "?");
  return tg_settings_set_flag(tr_settings(), c, flag, value, name ? 1u << c->model.kind : 0, vname);
}

/* The settings every model takes, then each model's own under its name (--hidden is tft.hidden or mlp.hidden). */
void tg_train_flags_help(FILE *f) {
  tg_settings_help_part(tr_settings(), 0, NULL, f);
  for (int k = 0; k < tg_model_count(); k++) {
    char drop[32];
    snprintf(drop, sizeof drop, "%s: ", tg_train_model_name((tg_model_kind)k));
    fprintf(f, "with --model %s:\n", tg_train_model_name((tg_model_kind)k));
    tg_settings_help_part(tr_settings(), 1u << k, drop, f);
  }
}

/* ---- the table as data (for Python and other callers that list the settings) ---- */

int tg_train_setting_count(void) { return tr_settings()->n; }

tg_status tg_train_setting_get(int i, tg_train_setting_info *out) {
  if (i < 0 || i >= tr_settings()->n || !out)
    return tg_error(TG_ERR_INVALID, "training setting %d: want 0..%d", i, tr_settings()->n - 1);
  const tg_setting *s = &tr_settings()->rows[i];
  memset(out, 0, sizeof *out);
  out->key = s->key;
  tg_setting_flag(s, out->flag, sizeof out->flag);
  out->type = tg_setting_type_name(s->type);
  out->arg = tg_setting_arg(s);
  switch (s->type) {
    case TG_SET_DOUBLE: case TG_SET_FLOAT: case TG_SET_INT: case TG_SET_INT64: case TG_SET_NUMS:
      out->has_range = 1;
      out->lo = s->lo;
      out->hi = s->hi;
      out->lo_open = (s->flags & TG_SET_LO_OPEN) != 0;
      out->hi_open = (s->flags & TG_SET_HI_OPEN) != 0;
      break;
    default: break;
  }
  out->increasing = s->type == TG_SET_NUMS && (s->flags & TG_SET_INCREASING) != 0;
  if (s->type == TG_SET_NUMS || s->type == TG_SET_STRS) {
    out->min_n = s->min_n;
    out->max_n = s->max_n;
  }
  out->names = s->type == TG_SET_ENUM ? s->names : NULL;
  out->models = s->only;
  out->resumable = (s->flags & TG_SET_RESUMABLE) != 0;
  out->help = s->help ? s->help : "";
  tg_model_kind kind = tg_model_default_kind();
  for (int k = 0; k < tg_model_count(); k++)
    if (s->only & (1u << k)) {
      kind = (tg_model_kind)k;
      break;
    }
  tg_train_config *c = tg_malloc(sizeof *c); /* large (paths): not on the stack */
  if (!c) return tg_error(TG_ERR_NOMEM, "training setting %s: out of memory", s->key);
  *c = tg_train_defaults(kind);
  tg_text b = {0};
  tg_settings_value_text(tr_settings(), c, s, &b);
  tg_free(c);
  if (b.oom) {
    tg_text_free(&b);
    return tg_error(TG_ERR_NOMEM, "training setting %s: out of memory", s->key);
  }
  snprintf(out->def, sizeof out->def, "%s", b.len ? b.data : "");
  tg_text_free(&b);
  return TG_OK;
}
