/* tg_predictor: a forecaster run opened for bars one at a time (features streamed, state per instrument). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "data/dataset/features_internal.h"
#include "data/readers/timeconv.h"
#include "models/model_table.h"
#include "predict/predict_internal.h"
#include "base/files.h"

struct tg_predictor {
  tg_predictor_info info;
  tg_train_config cfg;
  pr_meta meta;
  tg_feature_stream *fs;
  pr_net net;                    /* tft, mlp: the model; mamba2: the parameters the steppers copied */
  tg_mamba2_stepper **steppers;  /* [k] mamba2 */
  int L, F, H, nq;               /* window rows (1 for mamba2), features, horizon steps the model outputs, outputs per
                                    step (quantiles, or a classifier's classes) */
  float *ring;                   /* [k, L, net.row] the last L window rows per instrument: mlp the normalised
                                    features, tft their past-VSN outputs */
  float *col_ring;               /* [k, L] a split model's window column (tg_model_window_col), slots as in ring */
  int64_t *seen;                 /* [k] valid rows pushed per instrument */
  int64_t *gap_end;              /* [k] the last seen count whose window (mamba2: state) holds a missing lead value */
  float *raw, *x, *pred;         /* [F] the bar's features, [F] normalised, [H * nq] scaled forecast or logits */
  float *x_raw;                  /* [F] the model's features of the bar before normalisation */
  int x_valid;                   /* x holds the last push's normalised row */
  const char *tz;                /* the tft's calendar zone (NULL: UTC) */
  int64_t *expect;               /* [k] tft with a schedule: the next bar's time the last window assumed (0: none) */
  FILE *log;                     /* notices (opts->log) */
  int said_off, said_gap;        /* each notice once */
  pr_cols cols;                  /* the stream's columns as the model reads them */
  const char **input_names;      /* [info.n_inputs] the stream's extra inputs (tg_feature_stream_input_name) */
  int cat_offset[TG_MAX_CAT_INPUTS]; /* added to each cat: id, as the trainer does (one embedding table) */
  double *in_num;                /* [n_num_inputs] tg_predictor_bar_at's buffers */
  const char **in_cat;           /* [n_inputs - n_num_inputs] */
};

static tg_status read_config(const char *run, tg_train_config *c) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/env.json", run);
  if (tg_file_exists(path))
    return tg_error(TG_ERR_INVALID, "predict: %s is a reinforcement-learning run (it has env.json); a policy acts "
                    "in `tickgrad backtest --run %s`, it does not forecast", run, run);
  snprintf(path, sizeof path, "%s/config.json", run);
  if (!tg_file_exists(path)) return tg_error(TG_ERR_IO, "predict: %s: no such file (is %s a training run?)", path, run);
  *c = tg_train_defaults(tg_model_default_kind());
  tg_status st = tg_train_config_load(path, c);
  return st == TG_OK ? TG_OK : tg_error(st, "predict: %s", tg_last_error());
}

/* The model's data-dependent sizes, as the trainer set them (tr_data_open). */
static tg_status model_config(tg_predictor *p) {
  tg_forecast_cfg *m = &p->cfg.model;
  const pr_meta *mt = &p->meta;
  if (mt->h != p->cfg.horizons)
    return tg_error(TG_ERR_FORMAT, "predict: %s/inference.json has %d target scales, config.json %d horizons",
                    p->info.run, mt->h, p->cfg.horizons);
  m->n_past = mt->f;
  unsigned caps = tg_model_caps(m->kind);
  m->n_future = caps & TG_CAP_FUTURE ? 4 + pr_cols_count_known(p->cfg.features) : 0; /* calendar, known: */
  m->n_static = mt->k;
  m->n_classes = mt->C;
  m->n_cat = mt->n_vocab;
  if (m->n_cat > TG_MAX_CAT_INPUTS)
    return tg_error(TG_ERR_FORMAT, "predict: %s/inference.json has %d category vocabularies (at most %d)", p->info.run,
                    m->n_cat, TG_MAX_CAT_INPUTS);
  for (int k = 0, off = 0; k < m->n_cat; k++) {
    m->cat_card[k] = mt->vocab[k].n + 1;
    p->cat_offset[k] = off;
    off += m->cat_card[k];
  }
  m->horizons = mt->C && !(caps & TG_CAP_CLASS_STEPS) ? 1 : p->cfg.horizons; /* as tr_data's Hm */
  if (caps & TG_CAP_FUTURE) m->tft.dec_len = p->cfg.horizons;
  tg_status st = tg_model_columns(m, (const char (*)[TG_NAME_MAX])p->meta.names, p->meta.f);
  if (st == TG_OK) st = tg_forecast_check(m);
  return st == TG_OK ? st : tg_error(st, "predict: %s/config.json: %s", p->info.run, tg_last_error());
}

/* The stream's columns must be the ones the run was trained on. */
static tg_status open_features(tg_predictor *p) {
  int dec = (tg_model_caps(p->cfg.model.kind) & TG_CAP_FUTURE) != 0, H = p->cfg.horizons;
  tg_feature_opts fo = {.spec = p->cfg.features[0] ? p->cfg.features : NULL, .tz = p->cfg.tz[0] ? p->cfg.tz : NULL,
                        .leads = dec && p->cfg.model.n_future > 4 ? H : p->meta.leads, /* a decoder reads them */
                        .vocab = p->meta.vocab, .n_vocab = p->meta.n_vocab};
  tg_status st = tg_feature_stream_new(&fo, p->meta.ids, p->meta.k, &p->fs);
  if (st != TG_OK) return st;
  int n = tg_feature_stream_n_inputs(p->fs), n_num = tg_feature_stream_n_num_inputs(p->fs);
  p->input_names = tg_calloc((size_t)(n ? n : 1), sizeof *p->input_names);
  p->in_num = tg_calloc((size_t)(n_num ? n_num : 1), sizeof *p->in_num);
  p->in_cat = tg_calloc((size_t)(n - n_num ? n - n_num : 1), sizeof *p->in_cat);
  if (!p->input_names || !p->in_num || !p->in_cat) return tg_error(TG_ERR_NOMEM, "predict: out of memory");
  for (int i = 0; i < n; i++) p->input_names[i] = tg_feature_stream_input_name(p->fs, i);
  p->info.n_inputs = n;
  p->info.n_num_inputs = n_num;
  p->info.input_names = p->input_names;
  return pr_cols_open(&p->cols, p->fs, &p->meta, dec ? H : 0, p->info.run);
}

static tg_status open_model(tg_predictor *p, const char *weights) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/%s.safetensors", p->info.run, weights);
  if (!tg_file_exists(path)) return tg_error(TG_ERR_IO, "predict: %s: no such file (has the run finished an epoch?)", path);
  tg_status st = pr_net_open(&p->net, &p->cfg.model, path, p->cfg.precision);
  if (st != TG_OK || !(tg_model_caps(p->cfg.model.kind) & TG_CAP_STEPPER)) return st;
  p->steppers = tg_calloc((size_t)p->meta.k, sizeof *p->steppers);
  if (!p->steppers) return tg_error(TG_ERR_NOMEM, "predict: out of memory");
  for (int j = 0; j < p->meta.k && st == TG_OK; j++)
    st = tg_model_get(p->cfg.model.kind)->stepper_new(p->net.store, &p->cfg.model, 1, &p->steppers[j]);
  return st;
}

static tg_status open_buffers(tg_predictor *p) {
  size_t k = (size_t)p->meta.k, F = (size_t)p->F;
  p->ring = tg_calloc(k * (size_t)p->L * (size_t)p->net.row, sizeof(float));
  p->col_ring = tg_calloc(k * (size_t)p->L, sizeof(float));
  p->seen = tg_calloc(k, sizeof(int64_t));
  p->gap_end = tg_calloc(k, sizeof(int64_t));
  p->expect = tg_calloc(k, sizeof(int64_t));
  p->raw = tg_calloc((size_t)p->cols.width, sizeof(float));
  p->x = tg_calloc(F, sizeof(float));
  p->x_raw = tg_calloc(F, sizeof(float));
  p->pred = tg_calloc((size_t)(p->H * p->nq), sizeof(float));
  return p->ring && p->col_ring && p->seen && p->gap_end && p->expect && p->raw && p->x && p->x_raw && p->pred ? TG_OK : tg_error(TG_ERR_NOMEM, "predict: out of memory");
}

static void fill_info(tg_predictor *p) {
  tg_predictor_info *i = &p->info;
  i->precision = p->cfg.precision;
  const tg_forecast_cfg *m = &p->cfg.model;
  i->kind = m->kind;
  p->H = m->horizons;
  i->horizons = m->n_classes ? 0 : m->horizons;
  i->nq = m->n_classes ? 0 : m->nq;
  p->nq = tg_forecast_step_width(m);
  i->n_classes = m->n_classes;
  i->classes = p->meta.classes;
  memcpy(i->q, m->q, sizeof i->q);
  i->n_features = p->F = p->meta.f;
  i->warmup = p->meta.warmup;
  i->window = p->L = tg_model_caps(m->kind) & TG_CAP_STEPPER ? 1 : tg_forecast_window(m);
  i->first_bar = (int64_t)i->warmup + i->window - 1;
  i->bar_ns = p->meta.bar_ns;
  i->k = p->meta.k;
  i->ids = p->meta.ids;
  p->tz = p->cfg.tz[0] ? p->cfg.tz : NULL;
}

tg_status tg_predictor_open(const char *run_dir, const tg_predictor_opts *opts, tg_predictor **out) {
  if (!out || !run_dir) return tg_error(TG_ERR_INVALID, "predict: run_dir and out are required");
  *out = NULL;
  const char *weights = opts && opts->weights ? opts->weights : "best";
  if (strcmp(weights, "best") != 0 && strcmp(weights, "last") != 0)
    return tg_error(TG_ERR_INVALID, "predict: weights must be 'best' or 'last', not '%s'", weights);
  tg_predictor *p = tg_calloc(1, sizeof *p);
  if (!p) return tg_error(TG_ERR_NOMEM, "predict: out of memory");
  snprintf(p->info.run, sizeof p->info.run, "%s", run_dir);
  p->log = opts ? opts->log : NULL;
  tg_status st = read_config(run_dir, &p->cfg);
  if (st == TG_OK) st = pr_meta_read(run_dir, &p->meta);
  if (st == TG_OK) st = model_config(p);
  if (st == TG_OK) {
    fill_info(p);
    st = open_features(p);
  }
  if (st == TG_OK) st = open_model(p, strcmp(weights, "best") == 0 ? "best" : "weights");
  if (st == TG_OK) st = open_buffers(p);
  if (st != TG_OK) {
    tg_predictor_free(p);
    return st;
  }
  *out = p;
  return TG_OK;
}

const tg_predictor_info *tg_predictor_get_info(const tg_predictor *p) { return p ? &p->info : NULL; }
double *pr_input_numbers(tg_predictor *p) { return p->in_num; }
const char **pr_input_names(tg_predictor *p) { return p->in_cat; }

const float *tg_predictor_features(const tg_predictor *p) { return p && p->x_valid ? p->x : NULL; }
const float *tg_predictor_raw_features(const tg_predictor *p) { return p && p->x_valid ? p->x_raw : NULL; }
const float *tg_predictor_future(const tg_predictor *p, int *n_future) {
  int has = p && (tg_model_caps(p->cfg.model.kind) & TG_CAP_FUTURE) && p->x_valid && p->net.future;
  if (n_future) *n_future = has ? p->cfg.model.n_future : 0;
  return has ? p->net.future : NULL;
}

const tg_train_config *pr_config(const tg_predictor *p) { return &p->cfg; }
const pr_meta *pr_meta_of(const tg_predictor *p) { return &p->meta; }
tg_store *pr_store(const tg_predictor *p) { return p->net.store; }

void tg_predictor_reset(tg_predictor *p) {
  if (!p) return;
  p->x_valid = 0;
  tg_feature_stream_reset(p->fs);
  memset(p->seen, 0, (size_t)p->meta.k * sizeof *p->seen);
  memset(p->gap_end, 0, (size_t)p->meta.k * sizeof *p->gap_end);
  memset(p->expect, 0, (size_t)p->meta.k * sizeof *p->expect);
  for (int j = 0; p->steppers && j < p->meta.k; j++) tg_mamba2_stepper_reset(p->steppers[j]);
}

void tg_predictor_free(tg_predictor *p) {
  if (!p) return;
  for (int j = 0; p->steppers && j < p->meta.k; j++) tg_mamba2_stepper_free(p->steppers[j]);
  tg_free(p->steppers);
  pr_net_close(&p->net);
  tg_feature_stream_free(p->fs);
  pr_meta_free(&p->meta);
  tg_free(p->ring);
  tg_free(p->col_ring);
  tg_free(p->seen);
  tg_free(p->gap_end);
  tg_free(p->expect);
  tg_free(p->raw);
  tg_free(p->x_raw);
  tg_free(p->x);
  tg_free(p->pred);
  pr_cols_close(&p->cols);
  tg_free(p->input_names);
  tg_free(p->in_num);
  tg_free(p->in_cat);
  tg_free(p);
}

/* The dense index of an instrument id; -1 when the run was not trained on it. */
static int find_instrument(const tg_predictor *p, uint32_t id) {
  int lo = 0, hi = p->meta.k - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (p->meta.ids[mid] == id) return mid;
    if (p->meta.ids[mid] < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* The times of the H bars after ts [H]: the training split's schedule (the next session's first bar after a close, as
 * the trainer's windows read the real next bars), or ts + h * bar_ns for a run from before schedules. */
static tg_status next_times(tg_predictor *p, int j, int64_t ts, int64_t *t) {
  const tg_schedule *s = &p->meta.sched;
  if (!s->n) {
    for (int h = 0; h < p->H; h++) t[h] = ts + (int64_t)(h + 1) * p->meta.bar_ns;
    return TG_OK;
  }
  int on = 0, ignored = 0;
  tg_status st = tg_schedule_next(s, ts, &t[0], &on);
  for (int h = 1; h < p->H && st == TG_OK; h++) st = tg_schedule_next(s, t[h - 1], &t[h], &ignored);
  if (st != TG_OK) return st;
  p->expect[j] = t[0];
  if (!on && !p->said_off && p->log) {
    char a[48], b[48];
    fprintf(p->log, "predict: notice: the bar at %s UTC (instrument %u) is at a time of day its weekday never had in "
            "%s's training bars; its decoder takes the next scheduled bars (the first at %s UTC); said once\n",
            tg_format_time(ts, a, sizeof a), p->meta.ids[j], p->info.run, tg_format_time(t[0], b, sizeof b));
    p->said_off = 1;
  }
  return TG_OK;
}

/* A bar that is not the one the last window's decoder assumed came next: a holiday or a session the training bars did
 * not have. Those forecasts stand (nothing later was known then); said once. */
static void check_expected(tg_predictor *p, int j, int64_t ts) {
  if (!p->expect[j] || ts == p->expect[j] || p->said_gap || !p->log) return;
  char a[48], b[48];
  fprintf(p->log, "predict: notice: the bar at %s UTC (instrument %u) came where %s's training schedule expected one "
          "at %s UTC (a holiday or a session its training bars did not have): the forecast of the bar before it took "
          "the schedule's times for its decoder; said once\n", tg_format_time(ts, a, sizeof a), p->meta.ids[j],
          p->info.run, tg_format_time(p->expect[j], b, sizeof b));
  p->said_gap = 1;
}

/* tft, mlp, transformer: the window ending at this bar from the ring, the decoder's calendar, one run. */
static tg_status run_window(tg_predictor *p, int j, int64_t ts) {
  size_t W = (size_t)p->net.row, L = (size_t)p->L;
  const float *ring = p->ring + (size_t)j * L * W; /* [L, W], row r holds valid row r mod L */
  size_t oldest = (size_t)(p->seen[j] % (int64_t)L);
  for (size_t r = 0; r < L; r++) memcpy(p->net.past + r * W, ring + ((oldest + r) % L) * W, W * sizeof(float));
  for (size_t r = 0; r < L && p->net.col_x; r++) p->net.col_x[r] = p->col_ring[(size_t)j * L + (oldest + r) % L];
  if (tg_model_caps(p->cfg.model.kind) & TG_CAP_FUTURE) {
    p->net.inst[0] = j;
    size_t nf = (size_t)p->cfg.model.n_future, nk = (size_t)p->cols.n_known;
    int64_t t[TG_MAX_HORIZONS];
    tg_status st = next_times(p, j, ts, t);
    if (st != TG_OK) return st;
    for (int h = 0; h < p->H; h++) { /* [H, nf]: the calendar of the next H bars, the known: inputs */
      float *row = p->net.future + (size_t)h * nf;
      st = tg_feature_calendar(t[h], p->tz, row);
      if (st != TG_OK) return st;
      memcpy(row + 4, p->cols.fut + (size_t)h * nk, nk * sizeof(float));
    }
  }
  return pr_net_run(&p->net, p->pred, (int64_t)p->H * p->nq);
}

/* A classifier's probabilities [C] from the logits of its last horizon step (as the trainer's softmax). */
static void softmax_last(const tg_predictor *p, float *out) {
  int C = p->info.n_classes;
  const float *z = p->pred + (size_t)(p->H - 1) * (size_t)C; /* [C] */
  double mx = z[0], sum = 0;
  for (int k = 1; k < C; k++)
    if (z[k] > mx) mx = z[k];
  for (int k = 0; k < C; k++) sum += exp((double)z[k] - mx);
  for (int k = 0; k < C; k++) out[k] = (float)(exp((double)z[k] - mx) / sum);
}

/* The error of a bar that gets no forecast because a value on its way was not finite (why names it): the bar by its
 * time and instrument, so that a feed can find it. */
static tg_status not_finite(const tg_predictor *p, const tg_pbar *bar, const char *why) {
  char t[48];
  return tg_error(TG_ERR_NUMERIC, "predict: %s cannot forecast the bar at %s UTC of instrument %u: %s", p->info.run,
                  tg_format_time(bar->ts, t, sizeof t), bar->instrument, why);
}

/* 1 (why filled) when a normalised feature of the bar, or a TFT's known-future value, is not finite: a price so
 * extreme (1e308, 1e-320) that a ratio, a square or a sum over it overflowed. A lead feature "NAME@+h" that is NaN
 * because the feed does not have that value yet (past the end of a file) is missing, not an error: *missing = 1. */
static int features_not_finite(const tg_predictor *p, int *missing, char *why, size_t n) {
  *missing = 0;
  for (int f = 0; f < p->F; f++) {
    if (isnan(p->x[f]) && isnan(p->raw[p->cols.past_col[f]]) && strstr(p->meta.names[f], "@+")) {
      *missing = 1;
      continue;
    }
    if (!isfinite(p->x[f])) {
      snprintf(why, n, "feature '%s' is %g after normalisation (the stream computed %g; mean %g, std %g)",
               p->meta.names[f], (double)p->x[f], (double)p->raw[p->cols.past_col[f]], p->meta.mean[f], p->meta.std[f]);
      return 1;
    }
  }
  for (int h = 0; h < p->cols.H; h++)
    for (int k = 0; k < p->cols.n_known; k++)
      if (!isfinite(p->cols.fut[h * p->cols.n_known + k])) {
        snprintf(why, n, "the known-future value of feature '%s' %d bar%s ahead is %g after normalisation",
                 p->meta.names[p->cols.known_feat[k]], h + 1, h ? "s" : "", (double)p->cols.fut[h * p->cols.n_known + k]);
        return 1;
      }
  return 0;
}

/* 1 (why filled) when an output of the network is not finite (weights or features that overflowed it). */
static int output_not_finite(const tg_predictor *p, const float *out, char *why, size_t n) {
  if (p->info.n_classes) {
    const float *z = p->pred + (size_t)(p->H - 1) * (size_t)p->info.n_classes;
    for (int k = 0; k < p->info.n_classes; k++)
      if (!isfinite(z[k])) {
        snprintf(why, n, "the network's logit of class '%s' is %g", p->meta.classes[k], (double)z[k]);
        return 1;
      }
    return 0;
  }
  for (int h = 0; h < p->H; h++)
    for (int q = 0; q < p->nq; q++)
      if (!isfinite(out[h * p->nq + q])) {
        snprintf(why, n, "forecast h%d_q%g is %g (the network's output %g times the target scale %g)", h + 1,
                 (double)p->info.q[q], (double)out[h * p->nq + q], (double)p->pred[h * p->nq + q], p->meta.scale[h]);
        return 1;
      }
  return 0;
}

tg_status tg_predictor_push(tg_predictor *p, const tg_pbar *bar, float *out, int *ready) {
  if (!p || !bar || !out) return tg_error(TG_ERR_INVALID, "predict: push needs a predictor, a bar and an output");
  int n_out = p->info.n_classes ? p->info.n_classes : p->H * p->nq, valid = 0;
  if (ready) *ready = 0;
  p->x_valid = 0;
  for (int i = 0; i < n_out; i++) out[i] = NAN;
  int j = find_instrument(p, bar->instrument);
  if (j < 0)
    return tg_error(TG_ERR_INVALID, "predict: instrument %u is not one %s was trained on (%d instrument%s)",
                    bar->instrument, p->info.run, p->meta.k, p->meta.k == 1 ? "" : "s");
  int n_in = p->info.n_inputs, n_num = p->info.n_num_inputs;
  if ((n_num && !bar->inputs) || (n_in > n_num && !bar->cats))
    return tg_error(TG_ERR_INVALID, "predict: %s reads %d extra input%s (the first '%s'); the bar gives %s", p->info.run,
                    n_in, n_in == 1 ? "" : "s", p->input_names[0], n_num && !bar->inputs ? "no numbers" : "no names");
  tg_status st = n_in ? tg_feature_stream_push_ex(p->fs, j, bar->ts, bar->open, bar->high, bar->low, bar->close,
                                                   bar->volume, bar->inputs, bar->cats, p->raw, &valid)
                      : tg_feature_stream_push(p->fs, j, bar->ts, bar->open, bar->high, bar->low, bar->close,
                                               bar->volume, p->raw, &valid);
  if (st != TG_OK || !valid) return st;
  check_expected(p, j, bar->ts);
  pr_cols_take(&p->cols, &p->meta, p->raw, p->x);
  for (int f = 0; f < p->F; f++) p->x_raw[f] = p->raw[p->cols.past_col[f]];
  for (int k = 0, c0 = p->F - p->cfg.model.n_cat; k < p->cfg.model.n_cat; k++) p->x[c0 + k] += (float)p->cat_offset[k];
  char why[512];
  int missing = 0;
  if (features_not_finite(p, &missing, why, sizeof why)) return not_finite(p, bar, why);
  if (missing) p->gap_end[j] = p->steppers ? INT64_MAX : p->seen[j] + p->L; /* the windows of the next L rows */
  p->x_valid = 1;
  if (p->steppers) {
    st = tg_mamba2_step(p->steppers[j], p->x, p->pred);
    p->seen[j]++;
  } else {
    size_t W = (size_t)p->net.row, L = (size_t)p->L;
    size_t at = (size_t)j * L + (size_t)(p->seen[j] % (int64_t)L);
    float *slot = p->ring + at * W; /* [W] */
    if (tg_model_caps(p->cfg.model.kind) & TG_CAP_SPLIT) { /* the bar's past part (the tft's VSN), computed once */
      int col = tg_model_window_col(&p->cfg.model);
      if (col >= 0) p->col_ring[at] = p->x[col];
      memcpy(p->net.bar, p->x, (size_t)p->F * sizeof(float));
      p->net.inst[0] = j;
      st = pr_net_bar(&p->net, slot);
      if (st != TG_OK) return st;
    } else {
      memcpy(slot, p->x, W * sizeof(float));
    }
    p->seen[j]++;
    if (p->seen[j] < p->L) return TG_OK;
    st = run_window(p, j, bar->ts);
  }
  if (st != TG_OK) return st;
  if (p->info.n_classes) softmax_last(p, out);
  else
    for (int h = 0; h < p->H; h++)
      for (int q = 0; q < p->nq; q++) out[h * p->nq + q] = (float)(p->pred[h * p->nq + q] * p->meta.scale[h]);
  if (output_not_finite(p, out, why, sizeof why)) {
    for (int i = 0; i < n_out; i++) out[i] = NAN;
    if (p->seen[j] <= p->gap_end[j]) return TG_OK; /* its window holds a missing lead value: no forecast, as in warm-up */
    return not_finite(p, bar, why);
  }
  if (ready) *ready = 1;
  return TG_OK;
}
