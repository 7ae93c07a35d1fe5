/* The trainer's internal pieces: settings table, data wiring, graphs, metrics, checkpoints, the loop. */
#ifndef TG_TRAIN_INTERNAL_H
#define TG_TRAIN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "base/files.h"
#include "base/settings.h"
#include "data/readers/schedule.h"
#include "tickgrad/dataset.h"
#include "tickgrad/dist.h"
#include "tickgrad/evaluate.h"
#include "tickgrad/optim.h"
#include "tickgrad/step.h"
#include "tickgrad/train.h"

/* The processes that train a run together: the MPI world, or 1 when c->solo or without MPI; this one's rank. */
static inline int tr_ranks(const tg_train_config *c) { return c->solo ? 1 : tg_dist_size(); }
static inline int tr_rank(const tg_train_config *c) { return c->solo ? 0 : tg_dist_rank(); }

/* A new run's calendar zone: tz when given, else the data's (read.tz), else "UTC", written into c->tz so config.json
 * records it (a config from before this rule holds "" there, which stays UTC). */
static inline void tr_settle_tz(tg_train_config *c) {
  if (!c->tz[0]) snprintf(c->tz, sizeof c->tz, "%s", c->read.tz[0] ? c->read.tz : "UTC");
}

/* ---- config.c: the settings table (the settings engine's, base/settings.h) ---- */
/* The trainer's table: the common rows, then every kind's own (made at first use; the same table ever after). */
const tg_settings *tr_settings(void);
/* The first setting (not device, threads, out) whose values differ, or NULL. */
const tg_setting *tr_config_diff(const tg_train_config *a, const tg_train_config *b);

/* ---- data.c: bars -> dataset -> tables on the device ---- */
#define TR_MAX_FUTURE 64
typedef struct tr_qacc {
  double ql[TG_MAX_QUANTILES]; /* sum of QL(y, yhat_k, q_k) in original units */
  double abs_y;                /* sum of |y| in original units */
  double pinball;              /* sum of the pinball loss in scaled units (every quantile) */
  int64_t n;                   /* windows */
} tr_qacc;

typedef struct tr_data {
  tg_dataset ds;                /* targets scaled in place by 1 / scale[h] */
  int64_t bars_n;               /* the bars read (or given) and their tg_bars_hash, for RUN/data.json */
  uint64_t bars_hash;
  int have_ds;
  int Lw, Lp, Lt;               /* rows of a window; past rows (its first); the target row's offset */
  int H, F, nq;
  int enc, dec;                 /* tft: encoder and decoder steps (Lw = enc + dec) */
  int nfut;                     /* tft: known-future columns (the calendar's 4, then each known: covariate), else 0 */
  int fut_col[TR_MAX_FUTURE];   /* [nfut] their feature columns */
  int leads;                    /* lead columns of each known: covariate in the features (0 for the tft) */
  int ncat;                     /* category inputs (cat: covariates): the last ncat feature columns, each holding its
                                   id plus the ids of the category inputs before it (one embedding table) */
  int cat_card[TG_MAX_CAT_INPUTS];
  double scale[TG_MAX_HORIZONS];                      /* training-split std of each horizon's target */
  double naive[TG_MAX_HORIZONS][TG_MAX_QUANTILES];    /* training-split quantiles, original units */
  tr_qacc naive_acc;                                  /* the naive forecaster over the validation windows */
  int64_t n_train, n_val, n_test;
  tg_device dev;
  tg_stage *stage;
  tg_sampler train_s, val_s;
  float *fut_host;              /* [n, nfut] */
  void *fut_dev;                /* [n, nfut] on dev */
  tg_tensor fut_tab;
  size_t staged_bytes;          /* features, targets, known-future table, index tables */
  int64_t bar_ns;               /* the median bar interval (tr_bar_interval) */
  tg_schedule sched;            /* tft: the local bar times of the training split (the predictor's decoder calendar) */
  /* a classifier (class targets: labels, triple-barrier); C == 0 for a quantile forecaster */
  int C;                        /* classes; the staged target table is [n, C]: row r the one-hot of its class times the
                                   class weight (zeros for a row without a class) */
  int Hm;                       /* horizon steps the model outputs: H, or 1 for a classifier other than the tft (the
                                   tft keeps H decoder steps of known-future inputs and classifies from the last) */
  double class_w[TG_MAX_CLASSES]; /* loss weight per class */
  double prior[TG_MAX_CLASSES]; /* class frequencies of the training windows' target rows */
  int32_t *val_y;               /* [n_val] true class of each validation window */
  float *val_p;                 /* [n_val, C] predicted probabilities */
} tr_data;

/* Reads c->data (when bars is NULL), builds the dataset and the naive forecaster, stages it on dev.
 * The model's n_past, n_future, n_static and horizons are filled into *model. */
tg_status tr_data_open(tr_data *d, const tg_train_config *c, const tg_bars *bars, tg_device dev,
                       tg_forecast_cfg *model, FILE *log);
void tr_data_close(tr_data *d);
/* The model's data-given sizes (inputs, categories, known-future columns, instruments, horizons, classes) into model,
 * and what it reads by name (tg_model_columns: an error names a feature the model needs and lacks). */
tg_status tr_data_model(const tr_data *d, tg_forecast_cfg *model);
/* 1 when the features hold a calendar column (tod_*, dow_*). */
int tr_data_has_calendar(const tr_data *d);

/* ---- meta.c: RUN/inference.json for prediction (tg_predictor_open reads it) ---- */
#define TR_META_FORMAT "tickgrad-forecast-inference-1"
/* Feature names, the normalisation (mean, std per column), the target scales, a classifier's class names
 * ("classes", absent for a quantile forecaster), the instrument ids, the feature
 * warm-up and the median bar interval (bar_ns) of the data d was opened on; the precision prediction plans in (the
 * run's); and, for the record, the recompute setting training used ("training_recompute": prediction plans never
 * recompute). */
tg_status tr_meta_write(const char *run, const tr_data *d, tg_precision precision, tg_recompute recompute);
/* The median positive step between consecutive bars of one instrument (0 when there is none). */
tg_status tr_bar_interval(const tg_dataset *ds, const tg_bars *bars, int64_t *out);

/* ---- net.c: the training graph and the evaluation graphs over the staged tables ---- */
typedef struct tr_net {
  tg_graph *g;
  int64_t B;
  tg_tensor *pred;  /* [B, H, nq]; a classifier: probabilities [B, C] */
  tg_tensor *tgt;   /* [B, H] scaled targets; a classifier: weighted one-hot [B, C] */
  tg_tensor *loss;  /* training only */
} tr_net;

typedef struct tr_model {
  tg_store *store;
  tr_net train, eval, rest; /* rest: the validation remainder (B = n_val % batch), g NULL when none */
  tg_optim *opt;
  tg_step *step;            /* the training step (every device) */
} tr_model;

tg_status tr_model_open(tr_model *m, const tg_train_config *c, const tg_forecast_cfg *model, tr_data *d);
void tr_model_close(tr_model *m);
/* Binds the batch's index (and instrument) buffers to net's graph with shape [net->B, ...]. */
tg_status tr_net_bind_batch(tr_net *net, const tr_data *d, const tg_batch *b);
/* An evaluation graph (no loss, no dropout, no recompute) over batches of B windows, its parameters in store. */
tg_status tr_net_build_eval(tr_net *net, tg_store *store, const char *name, int64_t B, const tr_data *d,
                            const tg_forecast_cfg *model, tg_precision precision);
/* The optimizer for steps_per_epoch (warm-up and schedule resolved). */
tg_optim_config tr_optim_config(const tg_train_config *c, int64_t steps_per_epoch);

/* ---- metrics.c ---- */
/* The pinball (quantile) loss of error e = y - forecast at quantile q. */
static inline double tr_pinball(double e, double q) {
  double a = q * e, b = (q - 1.0) * e;
  return a > b ? a : b;
}
/* Adds b windows: pred [b, H, nq], tgt [b, H] scaled. */
void tr_qacc_add(tr_qacc *a, const tr_data *d, const float *q, const float *pred, const float *tgt, int64_t b);
/* A classifier's validation numbers from d->val_y and d->val_p (every validation window): the log loss as val_loss,
 * accuracy, balanced accuracy, the majority-class baseline, the confusion counts; the q-risks NaN. */
void tr_class_metrics(const tr_data *d, tg_train_metrics *t);
/* The naive forecaster's prediction at every validation window, accumulated. */
void tr_qacc_naive(tr_qacc *a, const tr_data *d, const float *q, const double *y /* [n_val, H] original */,
                   int64_t n);
double tr_qacc_qrisk(const tr_qacc *a, const tg_forecast_cfg *m, float q);
double tr_qacc_loss(const tr_qacc *a, int H, int nq);
void tr_metrics_header(FILE *f, int n_classes);
void tr_metrics_row(FILE *f, const tg_train_metrics *m);
void tr_metrics_print(FILE *f, const tg_train_metrics *m, int epochs, tg_device dev, tg_precision precision);
/* metrics as doubles in the CSV's column order (and back): a regressor's rows hold the first TR_METRIC_COLS_REG
 * columns, a classifier's all TR_METRIC_COLS and then its confusion counts (tr_metrics_cm_cols of them);
 * trainer.json rows of runs from before grad_norm (which comes after lr) hold TR_METRIC_COLS_V1 */
#define TR_METRIC_COLS 26
#define TR_METRIC_COLS_REG 21
#define TR_METRIC_COLS_V1 20
#define TR_METRIC_GRAD_NORM 8
#define TR_METRIC_H2D 19
/* Numbers in a row of a run with n_classes (0: a regressor). */
int tr_metrics_numbers(int n_classes);
int tr_metrics_cm_cols(int n_classes);
void tr_metrics_to_array(const tg_train_metrics *m, double *v);
void tr_metrics_from_array(tg_train_metrics *m, const double *v, int n_classes);

/* The run's position: what a checkpoint saves besides weights and optimizer state. */
typedef struct tr_progress {
  int epoch;             /* epochs completed */
  int64_t step;          /* optimizer steps */
  double best_val;
  int best_epoch, bad_epochs, finished, stopped_early;
  int saved_epoch;       /* epoch of the last checkpoint on disk (0: none) */
  /* where a stop left the unfinished epoch epoch + 1 (all 0 at an epoch's end): its steps done, the sums of their
   * losses and gradient norms, the last one's learning rate; what that epoch's metrics row needs, bitwise */
  int64_t epoch_steps;
  double epoch_loss_sum, epoch_norm_sum, epoch_lr;
  int interrupted;       /* a stop request or stop_after_step ended this call mid-way */
  int n_rows, cap_rows;
  tg_train_metrics *rows; /* [n_rows] every completed epoch */
} tr_progress;

/* ---- epoch.c ---- */
typedef struct tr_epoch_ctx {
  const tg_train_config *c;
  tr_data *d;
  tr_model *m;
  tr_progress *p;
  const char *run;
  int epoch;             /* 1-based */
  FILE *progress;
  float *pred, *tgt;     /* host [batch, H, nq], [batch, H] */
  char why[1024];
  int stopped;           /* set by tr_train_epoch: a stop is due and x->p holds the epoch's position */
} tr_epoch_ctx;

/* A stop is due: tg_stop_request, or c->stop_after_step steps in all. */
static inline int tr_stop_due(const tg_train_config *c, const tr_progress *p) {
  return tg_stop_requested() || (c->stop_after_step > 0 && p->step >= c->stop_after_step);
}

/* Shuffled training steps of epoch x->epoch (the last partial batch dropped), from step x->p->epoch_steps on (a
 * resumed mid-epoch checkpoint); loss, lr and phase times into t. When a stop is due after a step (on any rank), it
 * records the epoch's position in x->p, sets x->stopped and returns TG_OK with t incomplete.
 * TG_ERR_NUMERIC naming the epoch and step when the loss or the gradients are not finite. */
tg_status tr_train_epoch(tr_epoch_ctx *x, tg_train_metrics *t);
/* Every validation window once, in order: full batches, then the remainder through the rest graph. A classifier's
 * windows go to d->val_y and d->val_p (a counts them). */
tg_status tr_eval_epoch(tr_epoch_ctx *x, tr_qacc *a);
/* The next net->B windows of sampler s through net, onto the host: pred [B, H, nq] (a classifier: probabilities
 * [B, C]) and tgt [B, H] scaled (a classifier: the weighted one-hot rows [B, C]). */
tg_status tr_net_eval_batch(tr_net *net, tr_data *d, tg_sampler *s, float *pred, float *tgt);
/* A classifier's b windows: y [b] the true class (-1: none), p [b, C] the probabilities. */
void tr_class_rows(const tr_data *d, const float *pred, const float *tgt, int64_t b, int32_t *y, float *p);

/* ---- eval_acc.c: one split's quantile scores, window by window (tg_eval_split) ---- */
typedef struct tr_eval_acc {
  tr_qacc model, zero, naive;   /* the trainer's sums for the model, the zero forecast, the training quantiles */
  double pin[TG_MAX_HORIZONS][TG_MAX_QUANTILES];     /* pinball sums per horizon and quantile, scaled units */
  int64_t below[TG_MAX_HORIZONS][TG_MAX_QUANTILES];  /* targets below the forecast quantile */
  int n_iv, iv_lo[TG_EVAL_MAX_INTERVALS], iv_hi[TG_EVAL_MAX_INTERVALS]; /* central intervals (quantile indices) */
  int64_t inside[TG_EVAL_MAX_INTERVALS], naive_inside[TG_EVAL_MAX_INTERVALS];
} tr_eval_acc;
void tr_eval_acc_init(tr_eval_acc *a, const tr_data *d, const float *q);
/* b windows: pred [b, H, nq], tgt [b, H] scaled */
void tr_eval_acc_add(tr_eval_acc *a, const tr_data *d, const float *q, const float *pred, const float *tgt, int64_t b);
void tr_eval_acc_finish(const tr_eval_acc *a, const tr_data *d, tg_eval_split *s);

/* ---- evaluate.c ---- */
/* The splits in the bit mask `splits` (1 << TG_TRAIN, ...) of d through the run c->out's best weights (last: its latest
 * checkpoint's), on a fresh store on d's device, into e; model as tr_data_model gives it. */
tg_status tr_evaluate_weights(const tg_train_config *c, tr_data *d, int last, unsigned splits, tg_evaluation *e);
/* RUN/evaluation.json from e (eval_json.c). */
tg_status tr_evaluation_write(const char *run, const tg_evaluation *e);

/* ---- memplan.c ---- */
void tr_memplan_print(FILE *f, const tr_model *m, const tr_data *d, int64_t batch, tg_precision precision);

/* ---- ckpt.c: the run's files ---- */

tg_status tr_progress_push(tr_progress *p, const tg_train_metrics *m);
void tr_progress_free(tr_progress *p);
/* One checkpoint set (io/ckpt_set.h): weights, state, trainer.json (in that order); the state's data cursor is
 * p->epoch_steps * batch windows */
tg_status tr_ckpt_save(const char *run, tr_model *m, const tr_data *d, const tr_progress *p, int batch);
tg_status tr_ckpt_save_best(const char *run, tr_model *m);
/* Loads the set a resume of c->out reads (tg_ckpt_find: the current one, or the newest whole one) and checks that its
 * files belong together and to this data (target scales); *found 0 (nothing loaded) when the run has no checkpoint.
 * Data-parallel, only rank 0 (the holder of the run's lock) finds the set, tidying the folder; the other ranks then
 * read the set it names and remove nothing, and every rank has read it before any returns. */
tg_status tr_ckpt_load(const tg_train_config *c, tr_model *m, const tr_data *d, tr_progress *p, FILE *log, int *found);
/* RUN/metrics.csv with the header (a classifier's confusion columns for n_classes) and p's rows. */
tg_status tr_metrics_rewrite(const char *run, const tr_progress *p, int n_classes, FILE **out);

/* data_print.c: RUN/data.json, the fingerprint of the data a new run read (the bars' hash, each input file's size,
 * modification time and hash). The check on resume: the same bars, or TG_ERR_INVALID naming each
 * input that changed and how, unless c->data_changed_ok, which logs the change, records it in data.json and goes on;
 * a run without data.json (an older tickgrad) gets one, with a warning. */
tg_status tr_data_print_write(const tg_train_config *c, const tr_data *d);
tg_status tr_data_print_check(const tg_train_config *c, const tr_data *d, FILE *log);
/* Whether d holds the bars run trained on (its data.json): TG_ERR_INVALID naming who, the run and what changed when
 * not; *known 0 (and TG_OK) when run has no data.json to compare with. */
tg_status tr_data_print_same(const char *run, const tg_train_config *c, const tr_data *d, const char *who, int *known);

#endif
