/* The trainer's data: bar files -> dataset, target scales, the naive forecaster, tables on the device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "models/model_table.h"
#include "tickgrad/device.h"
#include "train/train_internal.h"

static const char *FUTURE_NAMES[4] = {"tod_sin", "tod_cos", "dow_sin", "dow_cos"};

tg_status tg_train_read_bars(const tg_train_config *c, FILE *log, tg_bars *all) {
  tg_read_opts ro = tg_read_settings_opts(&c->read, log);
  if (c->n_data < 1) {
    tg_bars_init(all);
    return tg_error(TG_ERR_INVALID, "train: no data (give --data FILE)");
  }
  const char *paths[TG_TRAIN_MAX_DATA];
  for (int i = 0; i < c->n_data; i++) paths[i] = c->data[i];
  return tg_bars_read_paths(c->n_data, paths, &ro, all);
}

/* Window geometry per model: rows of a window, past rows, the target row's offset. */
static void geometry(tr_data *d, const tg_train_config *c, int classifier) {
  d->H = c->horizons;
  unsigned caps = tg_model_caps(c->model.kind);
  d->Hm = classifier && !(caps & TG_CAP_CLASS_STEPS) ? 1 : d->H;
  d->nq = c->model.nq;
  d->Lw = d->Lp = tg_forecast_window(&c->model);
  d->Lt = d->Lw - 1; /* forecasts start after the last past step */
  if (caps & TG_CAP_FUTURE) { /* a decoder's steps follow the encoder's window */
    d->enc = d->Lp;
    d->dec = c->horizons;
    d->Lw = d->enc + d->dec;
  }
}

static tg_status build_dataset(tr_data *d, const tg_train_config *c, const tg_target_opts *target, const tg_bars *bars,
                               FILE *log) {
  tg_dataset_opts o;
  memset(&o, 0, sizeof o);
  o.features.spec = c->features[0] ? c->features : NULL;
  o.features.tz = c->tz[0] ? c->tz : NULL;
  o.features.leads = d->leads = tg_model_caps(c->model.kind) & TG_CAP_FUTURE ? 0 : d->H; /* a decoder takes known: values itself */
  o.targets = *target;
  o.targets.warn = log;
  o.targets.tz = c->read.tz[0] ? c->read.tz : NULL; /* a label file's wall-clock times are read as the bars' */
  o.targets.nh = d->H;
  for (int h = 0; h < d->H; h++) o.targets.horizons[h] = h + 1;
  o.splits.window = d->Lw;
  o.splits.target_offset = d->Lt;
  o.splits.frac_train = c->train_frac;
  o.splits.frac_val = c->val_frac;
  tg_status st = tg_dataset_build(bars, &o, &d->ds);
  if (st != TG_OK) return st;
  d->have_ds = 1;
  d->F = d->ds.fx.f;
  d->n_train = d->ds.splits.s[TG_TRAIN].count;
  d->n_val = d->ds.splits.s[TG_VAL].count;
  d->n_test = d->ds.splits.s[TG_TEST].count;
  char drops[400], why[420] = "";
  const char *tgt = c->target[0] ? c->target : "logret";
  if (d->n_train < c->batch) {
    if (*tg_split_drops_str(&d->ds.splits.s[TG_TRAIN], target, drops, sizeof drops))
      snprintf(why, sizeof why, "; %s", drops);
    return tg_error(TG_ERR_INVALID, "train: the training split has %lld windows of %d bars (+%d ahead, target %s%s), "
                    "fewer than one batch of %d; give more data, a smaller --batch or a shorter window",
                    (long long)d->n_train, d->Lw, d->H, tgt, why, c->batch);
  }
  if (d->n_val < 1) {
    if (*tg_split_drops_str(&d->ds.splits.s[TG_VAL], target, drops, sizeof drops))
      snprintf(why, sizeof why, "; %s", drops);
    return tg_error(TG_ERR_INVALID, "train: the validation split has no window of %d bars (+%d ahead, target %s%s); "
                    "give more data, a larger --val-frac or a shorter window", d->Lw, d->H, tgt, why);
  }
  return TG_OK;
}

/* A model with known-future inputs (the tft): their columns, the calendar's and then every known: covariate's. */
static tg_status find_future(tr_data *d, const tg_train_config *c) {
  if (!(tg_model_caps(c->model.kind) & TG_CAP_FUTURE)) return TG_OK;
  d->nfut = 4;
  for (int k = 0; k < 4; k++) {
    d->fut_col[k] = -1;
    for (int j = 0; j < d->F; j++)
      if (strcmp(d->ds.fx.names[j], FUTURE_NAMES[k]) == 0) d->fut_col[k] = j;
    if (d->fut_col[k] < 0)
      return tg_error(TG_ERR_INVALID, "train: tft needs the known-future features tod_sin, tod_cos, dow_sin, dow_cos; "
                      "the feature spec '%s' has no '%s' (add tod,dow)", c->features[0] ? c->features : TG_FEATURES_DEFAULT,
                      FUTURE_NAMES[k]);
  }
  for (int j = 0; j < d->F; j++) {
    if (d->ds.fx.role[j] != TG_FEATURE_KNOWN) continue;
    if (d->nfut == TR_MAX_FUTURE)
      return tg_error(TG_ERR_INVALID, "train: more than %d known-future inputs", TR_MAX_FUTURE - 4);
    d->fut_col[d->nfut++] = j;
  }
  return TG_OK;
}

/* tft: the bar times of the training split (its time region), in the data's zone (else the features'), as the
 * predictor's decoder calendar: the next bars after a close are the next session's, as training's windows saw them. */
static tg_status learn_schedule(tr_data *d, const tg_train_config *c, const tg_bars *bars) {
  int64_t end = d->ds.splits.s[TG_TRAIN].ts_end, n = 0;
  while (n < bars->n && bars->ts[n] < end) n++; /* the bars are in time order */
  const char *tz = c->read.tz[0] ? c->read.tz : c->tz[0] ? c->tz : NULL;
  return tg_schedule_learn(bars->ts, n, tz, &d->sched);
}

/* The cat: covariates: the last feature columns; their ids offset so that one embedding table holds them all. */
static tg_status find_categories(tr_data *d) {
  tg_features *fx = &d->ds.fx;
  int first = fx->f, offset = 0;
  while (first > 0 && fx->role[first - 1] == TG_FEATURE_CATEGORY) first--;
  for (int j = 0; j < first; j++)
    if (fx->role[j] == TG_FEATURE_CATEGORY)
      return tg_error(TG_ERR_INVALID, "train: category column '%s' is not among the last feature columns", fx->names[j]);
  d->ncat = fx->f - first;
  if (d->ncat > TG_MAX_CAT_INPUTS)
    return tg_error(TG_ERR_INVALID, "train: %d cat: covariates; at most %d are supported", d->ncat, TG_MAX_CAT_INPUTS);
  for (int k = 0; k < d->ncat; k++) {
    int col = first + k;
    d->cat_card[k] = fx->card[col];
    for (int64_t r = 0; r < fx->n; r++) fx->x[r * fx->f + col] += (float)offset;
    offset += fx->card[col];
  }
  return TG_OK;
}

/* The targets [count, H] (original units) at the target row of every window of split s, in sampler order. */
static tg_status split_targets(const tr_data *d, int s, double **out) {
  const tg_split *sp = &d->ds.splits.s[s];
  const tg_layout *lay = &d->ds.layout;
  int nh = d->ds.y.nh;
  double *y = tg_malloc((size_t)(sp->count > 0 ? sp->count : 1) * (size_t)d->H * sizeof *y);
  if (!y) return tg_error(TG_ERR_NOMEM, "train: out of memory for %lld targets", (long long)sp->count);
  int64_t i = 0;
  for (int64_t q = 0; q < tg_split_n_runs(sp, d->ds.splits.k); q++) { /* holes skipped, as the sampler does */
    int64_t b, e;
    tg_split_run(sp, q, &b, &e);
    for (int64_t p = b; p < e; p++, i++) {
      int64_t r = lay->rows[p + d->Lt];
      for (int h = 0; h < d->H; h++) y[i * d->H + h] = d->ds.y.ret[r * nh + h];
    }
  }
  *out = y;
  return TG_OK;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Scales (std) and naive quantiles (linear interpolation between order statistics) per horizon; a horizon whose
 * training targets are all one value gets scale 1 and a warning line on log (nothing to learn there). */
static tg_status fit_targets(tr_data *d, const double *y, int64_t n, const float *q, const char *target, FILE *log) {
  double *col = tg_malloc((size_t)n * sizeof *col);
  if (!col) return tg_error(TG_ERR_NOMEM, "train: out of memory for %lld training targets", (long long)n);
  for (int h = 0; h < d->H; h++) {
    double sum = 0, ss = 0;
    for (int64_t i = 0; i < n; i++) col[i] = y[i * d->H + h], sum += col[i];
    double mean = sum / (double)n;
    for (int64_t i = 0; i < n; i++) ss += (col[i] - mean) * (col[i] - mean);
    double sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
    d->scale[h] = isfinite(sd) && sd > 0 ? sd : 1.0;
    if (sd == 0 && n > 1 && log)
      fprintf(log, "warning: target %s: horizon %d is %.17g at every one of the %lld training windows, so there is "
              "nothing to learn there; its scale is 1\n", target, h + 1, col[0], (long long)n);
    qsort(col, (size_t)n, sizeof *col, cmp_double);
    for (int k = 0; k < d->nq; k++) {
      double pos = (double)q[k] * (double)(n - 1);
      int64_t lo = (int64_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
      d->naive[h][k] = col[lo] + (pos - (double)lo) * (col[hi] - col[lo]);
    }
  }
  tg_free(col);
  return TG_OK;
}

/* Divides every row's targets by the horizon's scale (NaN stays NaN), so the device tables are scaled. */
static void scale_targets(tr_data *d) {
  int nh = d->ds.y.nh;
  for (int64_t r = 0; r < d->ds.y.n; r++)
    for (int h = 0; h < nh; h++) d->ds.y.ret[r * nh + h] = (float)((double)d->ds.y.ret[r * nh + h] / d->scale[h]);
}

/* The class weights: all 1, "balanced" (n / (classes present * count), mean 1 over the windows) or name=w pairs. */
static tg_status class_weights(tr_data *d, const tg_train_config *c) {
  const tg_targets *y = &d->ds.y;
  for (int k = 0; k < d->C; k++) d->class_w[k] = 1.0;
  const char *w = c->class_weights;
  if (!w[0]) return TG_OK;
  if (strcmp(w, "balanced") == 0) {
    int present = 0;
    for (int k = 0; k < d->C; k++) present += d->prior[k] > 0;
    for (int k = 0; k < d->C; k++) d->class_w[k] = d->prior[k] > 0 ? 1.0 / (present * d->prior[k]) : 0.0;
    return TG_OK;
  }
  while (*w) {
    const char *eq = strchr(w, '='), *end = strchr(w, ',');
    if (!end) end = w + strlen(w);
    if (!eq || eq > end)
      return tg_error(TG_ERR_INVALID, "train: class_weights '%s': want balanced or name=w,name=w", c->class_weights);
    int k = 0;
    while (k < d->C && !(strlen(y->class_names[k]) == (size_t)(eq - w) && strncmp(y->class_names[k], w, (size_t)(eq - w)) == 0)) k++;
    if (k == d->C) {
      char have[512] = "";
      for (int j = 0; j < d->C; j++)
        snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", j ? ", " : "", y->class_names[j]);
      return tg_error(TG_ERR_INVALID, "train: class_weights names class '%.*s'; the classes are %s", (int)(eq - w), w,
                      have);
    }
    char num[64];
    snprintf(num, sizeof num, "%.*s", (int)(end - eq - 1), eq + 1);
    char *stop = NULL;
    double v = strtod(num, &stop);
    if (!num[0] || *stop || !(v >= 0.0) || !isfinite(v))
      return tg_error(TG_ERR_INVALID, "train: class_weights: weight '%s' of class '%s' is not a finite number >= 0", num,
                      y->class_names[k]);
    d->class_w[k] = v;
    w = *end ? end + 1 : end;
  }
  return TG_OK;
}

/* A classifier's training-window class frequencies, weights, the [n, C] weighted one-hot table in place of the
 * returns, and the validation buffers. */
static tg_status classes(tr_data *d, const tg_train_config *c) {
  tg_targets *y = &d->ds.y;
  const tg_split *sp = &d->ds.splits.s[TG_TRAIN];
  const tg_layout *lay = &d->ds.layout;
  double count[TG_MAX_CLASSES] = {0}, n = 0;
  for (int64_t q = 0; q < tg_split_n_runs(sp, d->ds.splits.k); q++) {
    int64_t b, e;
    tg_split_run(sp, q, &b, &e);
    for (int64_t p = b; p < e; p++) {
      int32_t k = y->cls[lay->rows[p + d->Lt]];
      if (k >= 0) count[k]++, n++;
    }
  }
  if (n == 0) return tg_error(TG_ERR_INVALID, "train: no training window has a class label");
  for (int k = 0; k < d->C; k++) d->prior[k] = count[k] / n;
  tg_status st = class_weights(d, c);
  if (st != TG_OK) return st;
  float *onehot = tg_calloc((size_t)y->n * (size_t)d->C, sizeof *onehot); /* [n, C] */
  d->val_y = tg_malloc((size_t)(d->n_val > 0 ? d->n_val : 1) * sizeof *d->val_y);
  d->val_p = tg_malloc((size_t)(d->n_val > 0 ? d->n_val : 1) * (size_t)d->C * sizeof *d->val_p);
  if (!onehot || !d->val_y || !d->val_p) {
    tg_free(onehot);
    return tg_error(TG_ERR_NOMEM, "train: out of memory for the class table of %lld rows", (long long)y->n);
  }
  for (int64_t r = 0; r < y->n; r++)
    if (y->cls[r] >= 0) onehot[r * d->C + y->cls[r]] = (float)d->class_w[y->cls[r]];
  tg_free(y->ret);
  y->ret = onehot;
  y->nh = d->C;
  for (int h = 0; h < d->H; h++) d->scale[h] = 1.0;
  return TG_OK;
}

static tg_status targets_and_naive(tr_data *d, const tg_train_config *c, FILE *log) {
  if (d->C) return classes(d, c);
  double *ytr = NULL, *yval = NULL;
  tg_status st = split_targets(d, TG_TRAIN, &ytr);
  if (st == TG_OK) st = fit_targets(d, ytr, d->n_train, c->model.q, c->target[0] ? c->target : "logret", log);
  if (st == TG_OK) st = split_targets(d, TG_VAL, &yval);
  if (st == TG_OK) tr_qacc_naive(&d->naive_acc, d, c->model.q, yval, d->n_val);
  tg_free(ytr);
  tg_free(yval);
  if (st == TG_OK) scale_targets(d);
  return st;
}

/* The staged tables: features and targets through the stage; tft's known-future columns uploaded. */
static tg_status stage_data(tr_data *d, const tg_train_config *c) {
  tg_status st = tg_stage_new(d->dev, TG_STAGE_RESIDENT, c->batch, &d->stage);
  if (st == TG_OK) st = tg_stage_dataset(d->stage, &d->ds);
  if (st == TG_OK) st = tg_sampler_init(&d->train_s, &d->ds.splits, TG_TRAIN, (uint64_t)c->seed, 1);
  if (st == TG_OK) st = tg_sampler_init(&d->val_s, &d->ds.splits, TG_VAL, (uint64_t)c->seed, 0);
  if (st != TG_OK) return st;
  int64_t n = d->ds.fx.n;
  d->staged_bytes = (size_t)n * ((size_t)d->F + (size_t)d->ds.y.nh) * sizeof(float);
  if (!tg_device_host_memory(d->dev)) d->staged_bytes += (size_t)n * 16; /* the stage's index tables */
  if (!d->nfut) return TG_OK;
  size_t nf = (size_t)d->nfut;
  d->fut_host = tg_malloc((size_t)n * nf * sizeof(float)); /* [n, nfut] */
  if (!d->fut_host) return tg_error(TG_ERR_NOMEM, "train: out of memory for the known-future table of %lld rows", (long long)n);
  for (int64_t r = 0; r < n; r++)
    for (size_t k = 0; k < nf; k++) d->fut_host[(size_t)r * nf + k] = d->ds.fx.x[r * d->F + d->fut_col[k]];
  st = tg_device_upload(d->dev, d->fut_host, (size_t)n * nf * sizeof(float), &d->fut_dev);
  int64_t shape[2] = {n, d->nfut};
  if (st == TG_OK) st = tg_tensor_view(&d->fut_tab, "future_table", d->dev, TG_F32, 2, shape, d->fut_dev);
  d->staged_bytes += (size_t)n * nf * sizeof(float);
  return st;
}

tg_status tr_data_open(tr_data *d, const tg_train_config *c, const tg_bars *bars, tg_device dev,
                       tg_forecast_cfg *model, FILE *log) {
  memset(d, 0, sizeof *d);
  d->dev = dev;
  tg_target_opts target;
  tg_status st = tg_target_parse(c->target[0] ? c->target : "logret", &target);
  if (st != TG_OK) return st;
  geometry(d, c, tg_target_is_class(&target));
  tg_bars own;
  tg_bars_init(&own);
  if (!bars) {
    st = tg_train_read_bars(c, log, &own);
    bars = &own;
  }
  if (st == TG_OK) d->bars_n = bars->n, d->bars_hash = tg_bars_hash(bars);
  if (st == TG_OK) st = build_dataset(d, c, &target, bars, log);
  if (st == TG_OK && d->ds.y.n_classes > TG_MAX_CLASSES)
    st = tg_error(TG_ERR_INVALID, "train: the target has %d classes; at most %d are supported", d->ds.y.n_classes,
                  TG_MAX_CLASSES);
  if (st == TG_OK) d->C = d->ds.y.n_classes;
  if (st == TG_OK) st = find_future(d, c);
  if (st == TG_OK) st = find_categories(d);
  if (st == TG_OK) st = tr_bar_interval(&d->ds, bars, &d->bar_ns);
  if (st == TG_OK && d->nfut) st = learn_schedule(d, c, bars);
  if (st == TG_OK) st = targets_and_naive(d, c, log);
  if (st == TG_OK) st = stage_data(d, c);
  if (st == TG_OK && log) {
    char dr[TG_SPLIT_COUNT][440];
    for (int s = 0; s < TG_SPLIT_COUNT; s++) { /* " (2 dropped: ...)" after a split that lost windows, else nothing */
      char w[400];
      tg_split_drops_str(&d->ds.splits.s[s], &target, w, sizeof w);
      snprintf(dr[s], sizeof dr[s], w[0] ? " (%s)" : "%s", w);
    }
    fprintf(log, "data: %lld bars, %d instrument%s, %d features; windows of %d bars: train %lld%s, val %lld%s, "
            "test %lld%s; target %s\n", (long long)bars->n, d->ds.layout.k, d->ds.layout.k == 1 ? "" : "s", d->F,
            d->Lw, (long long)d->n_train, dr[TG_TRAIN], (long long)d->n_val, dr[TG_VAL], (long long)d->n_test,
            dr[TG_TEST], c->target[0] ? c->target : "logret");
    if (d->C) {
      fprintf(log, "classes (training share, loss weight):");
      for (int k = 0; k < d->C; k++)
        fprintf(log, "%s %s %.3f %.3g", k ? "," : "", d->ds.y.class_names[k], d->prior[k], d->class_w[k]);
    } else {
      fprintf(log, "target scales (training std per horizon 1..%d):", d->H);
      for (int h = 0; h < d->H; h++) fprintf(log, " %.3g", d->scale[h]);
    }
    fprintf(log, "\n");
  }
  tg_bars_free(&own);
  if (st != TG_OK) {
    tr_data_close(d);
    return st;
  }
  st = tr_data_model(d, model);
  if (st != TG_OK) tr_data_close(d);
  return st;
}

int tr_data_has_calendar(const tr_data *d) {
  for (int j = 0; j < d->F; j++)
    if (!strncmp(d->ds.fx.names[j], "tod_", 4) || !strncmp(d->ds.fx.names[j], "dow_", 4)) return 1;
  return 0;
}

tg_status tr_data_model(const tr_data *d, tg_forecast_cfg *model) {
  model->n_past = d->F;
  model->n_cat = d->ncat;
  memcpy(model->cat_card, d->cat_card, sizeof model->cat_card);
  model->n_future = d->nfut;
  model->n_static = d->ds.layout.k;
  model->horizons = d->Hm;
  model->n_classes = d->C;
  if (tg_model_caps(model->kind) & TG_CAP_FUTURE) model->tft.dec_len = d->H;
  return tg_model_columns(model, (const char (*)[TG_NAME_MAX])d->ds.fx.names, d->F);
}

void tr_data_close(tr_data *d) {
  tg_sampler_free(&d->train_s); /* zeroed until initialised */
  tg_sampler_free(&d->val_s);
  tg_stage_free(d->stage);
  if (d->fut_dev) tg_device_free(d->dev, d->fut_dev);
  tg_free(d->fut_host);
  tg_free(d->val_y);
  tg_free(d->val_p);
  if (d->have_ds) tg_dataset_free(&d->ds);
  tg_schedule_free(&d->sched);
  memset(d, 0, sizeof *d);
}
