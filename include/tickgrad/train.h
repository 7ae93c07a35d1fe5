/* Training forecasting models on bar files: configuration, the epoch loop, metrics, checkpoints and resume. */
#ifndef TICKGRAD_TRAIN_H
#define TICKGRAD_TRAIN_H

#include <stdio.h>
#include "tickgrad/data.h"
#include "tickgrad/graph.h"
#include "tickgrad/models.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_TRAIN_MAX_DATA 16   /* data paths */
#define TG_TRAIN_PATH_MAX TG_PATH_MAX /* bytes of one path, with its NUL */

#define TG_TRAIN_CM_CLASSES 8 /* classes up to which each epoch's confusion matrix is kept */
#define TG_TRAIN_CM_MAX (TG_TRAIN_CM_CLASSES * TG_TRAIN_CM_CLASSES)

typedef enum tg_train_schedule { TG_TRAIN_COSINE = 0, TG_TRAIN_CONSTANT } tg_train_schedule;

/* ---- classification metrics ---- */
typedef struct tg_class_report {
  int C;
  int64_t n;                      /* rows scored (true class >= 0) */
  double accuracy;                /* share whose most probable class is the true one */
  double balanced_accuracy;       /* mean recall over the classes present */
  double log_loss;                /* mean -log p[true], p clamped to >= 1e-12 */
  double base_accuracy, base_balanced_accuracy, base_log_loss; /* always the prior's most frequent class; the
                                                                  prior itself as the probabilities */
  int64_t *confusion;             /* [C, C] caller's buffer (may be NULL): row the true class, column the predicted */
} tg_class_report;

/* Scores probabilities p [n, C] against the classes y [n] (rows with y < 0 skipped); prior [C] the training
 * split's class frequencies for the baseline. TG_ERR_INVALID for C < 2, a class outside 0..C-1 or no row to score. */
tg_status tg_class_metrics(const int32_t *y, const float *p, int64_t n, int C, const double *prior,
                           tg_class_report *out);

/* One epoch's numbers: a line of output, a row of RUN/metrics.csv (same columns), an entry of
 * RUN/trainer.json. A classifier's losses are the softmax cross-entropy (training: with the class weights) and its
 * rows end with the confusion counts cm_T_P (true class T, predicted P, by class index; config.json and
 * inference.json list the names). A quantile forecaster's losses are the mean pinball loss over windows, horizons and quantiles in scaled
 * target units (each horizon divided by its training-split std); q-risks R_q = 2 sum QL(y, yhat_q, q) /
 * sum |y| over every validation window and horizon, in original units. NaN where a quantile is not
 * configured (q50 / q90) or a number does not apply (CUDA: forward, backward and optimizer times). */
typedef struct tg_train_metrics {
  int epoch;                        /* 1-based */
  double train_loss, val_loss;
  double q50, q90;                  /* the model's q-risk at quantiles 0.5 and 0.9 */
  double naive50, naive90;          /* the naive forecaster's (training-split quantiles per horizon) */
  double lr;                        /* after the epoch's last step */
  double grad_norm;                 /* mean over the epoch's steps of the global gradient norm before clipping */
  double seconds, samples_per_s;    /* the epoch: training and validation */
  double data_s, forward_s, backward_s, optimizer_s, step_s, val_s; /* step_s: the training steps in all */
  double mem_allocated_mib, mem_peak_mib; /* device memory (tg_device_mem_stats; 0 on the CPU) */
  double h2d_bytes, d2h_bytes;      /* moved between host and device during the epoch */
  /* a classifier (label targets): val_loss is the validation log loss; accuracy, balanced accuracy (mean recall
   * over the classes present) and the majority-class baseline (always the training split's most frequent class;
   * its log loss predicts the training frequencies); NaN for a quantile forecaster, whose q-risks are NaN here */
  double acc, bal_acc, base_acc, base_bal_acc, base_logloss;
  int n_classes;                    /* 0: a quantile forecaster */
  double cm[TG_TRAIN_CM_MAX];       /* confusion counts [n_classes, n_classes] (row: true, column: predicted) when
                                       n_classes <= TG_TRAIN_CM_CLASSES */
} tg_train_metrics;

typedef struct tg_train_config tg_train_config;

/* Called after each epoch (after its checkpoint, if any). A nonzero return stops the run there
 * (like stop_after). store is the model's parameters on the training device. */
typedef int (*tg_train_epoch_fn)(void *ctx, const tg_train_metrics *m, tg_store *store);

struct tg_train_config {
  /* ---- the model: kind, sizes, quantiles, dropout (n_past, n_future, n_static, horizons are set
   * from the data; tft.dec_len is always horizons: one forecast per decoder step) ---- */
  tg_forecast_cfg model;
  /* ---- data ---- */
  int n_data;
  char data[TG_TRAIN_MAX_DATA][TG_TRAIN_PATH_MAX]; /* files, folders or globs (tg_bars_read) */
  tg_read_settings read; /* how the files are read: column map, zone of naive timestamps (data_tz), price scale,
                            nulls, duplicates, OHLC checks, bad files of a folder (see tickgrad/data.h) */
  char features[512];    /* feature spec ("": TG_FEATURES_DEFAULT) */
  char tz[64];           /* zone of the tod/dow features ("": a new run takes the data's zone, read.tz, else UTC, and
                            records it; a config.json from before that rule holds "", which means UTC) */
  int horizons;          /* H: targets are forward log returns 1..H bars ahead (default 8, at most 8; tft: decoder steps) */
  char target[TG_TRAIN_PATH_MAX + 32]; /* "logret" (default, also ""), "col:NAME[:diff|:logdiff]" (forecast a column at
                                          the horizons), "labels:FILE" or "triple-barrier:UP,DOWN,BARS" (classes: the
                                          model becomes a classifier; see tg_target_parse) */
  char class_weights[512]; /* a classifier's loss weights: "" (all 1), "balanced" (inverse training frequency, mean 1)
                              or "name=w,name=w" (unnamed classes 1) */
  double train_frac, val_frac; /* chronological splits (default 0.7, 0.15; test is the rest) */
  /* ---- the loop ---- */
  int epochs;            /* default 20 */
  int batch;             /* default 32 (tft), 8 (mamba2), 64 (mlp) */
  tg_recompute recompute; /* activations the training plan recomputes in backward (default none; the same numbers) */
  double lr;             /* Adam, default 1e-3 */
  double weight_decay;   /* Adam's L2 term, default 0 */
  int warmup_steps;      /* linear warm-up; -1: 5% of the first epoch's steps (at least 1) */
  tg_train_schedule schedule; /* after warm-up: cosine to final_lr_frac * lr at the last epoch (default), or constant */
  double final_lr_frac;  /* default 0.05 */
  double clip_norm;      /* global gradient norm clip, default 1.0 (0: off) */
  int patience;          /* early stopping: epochs without improvement, default 5 (0: off) */
  double min_delta;      /* improvement needed on the validation loss, default 1e-4 */
  int ckpt_every;        /* checkpoint every N epochs (and always at the end), default 1 */
  long seed;             /* parameters, shuffles and dropout, default 1 */
  tg_precision precision; /* auto (default: tg_precision_resolve settles it when the run starts), fp32, or bf16: GEMM
                             operands rounded to bf16, f32 accumulation, f32 master weights and optimizer state;
                             everything else in f32 */
  int threads;           /* CPU threads (0: leave as they are) */
  char device[32];       /* auto, cpu, cpu:N, cuda, cuda:N (default auto) */
  char out[TG_TRAIN_PATH_MAX]; /* the run folder ("": runs/<model>-<timestamp>) */
  /* ---- run control: not part of config.json ---- */
  char resume[TG_TRAIN_PATH_MAX]; /* a run folder to continue (its config.json is the config) */
  int stop_after;        /* stop (with a checkpoint) after this many epochs in all (0: no limit) */
  int data_changed_ok;   /* resume: continue on data that changed since the run started (RUN/data.json records it);
                            0: such a resume is refused, naming what changed */
  int64_t stop_after_step; /* stop (with a checkpoint inside the epoch) after this many optimizer steps in all, as
                            a stop request (tg_stop_request) does (0: no limit) */
  int solo;              /* 1: this process trains alone also when it is one of several MPI ranks (walkforward and
                            sweep give each rank runs of its own); 0: the ranks train the run together */
  FILE *log;             /* plan, per-epoch lines, notices (NULL: silent) */
  FILE *progress;        /* a progress bar within each epoch (NULL: none; the CLI passes stderr on a tty) */
  tg_train_epoch_fn on_epoch;
  void *on_epoch_ctx;
};

typedef struct tg_train_result {
  char out[TG_TRAIN_PATH_MAX]; /* the run folder */
  int epochs_run;        /* epochs completed in all (with those before a resume) */
  int best_epoch;
  int stopped_early;     /* early stopping ended the run */
  int interrupted;       /* a stop request or stop_after_step ended the run after a step, mid-way (TG_OK; the
                            checkpoint holds the position inside the epoch) */
  int64_t steps;         /* optimizer steps in all */
  int64_t train_windows, val_windows;
  tg_train_metrics last, best; /* the last epoch's and the best validation epoch's rows */
} tg_train_result;

/* Defaults for kind (tg_forecast_defaults for the model, the loop defaults above). */
tg_train_config tg_train_defaults(tg_model_kind kind);
/* "tft", "mamba2", "mlp"; NULL for an unknown kind. */
const char *tg_train_model_name(tg_model_kind kind);
/* TG_ERR_INVALID for an unknown name. */
tg_status tg_train_model_parse(const char *name, tg_model_kind *out);
/* TG_ERR_INVALID naming the setting when a value is out of range or settings disagree. */
tg_status tg_train_config_check(const tg_train_config *c);

/* JSON: one object whose keys are the settings' names ("model", "data", "lr", "tft": {"hidden"}, ...;
 * see tg_train_config_to_json for them all). Applies the members of text[0..len) over *c (so
 * start from tg_train_defaults of the file's "model", or use tg_train_config_load). Unknown keys,
 * wrong types and out-of-range values are TG_ERR_INVALID naming what (where names the source). */
tg_status tg_train_config_apply_json(tg_train_config *c, const char *text, size_t len, const char *where);
/* Reads a config file: defaults of its "model" (or of *c's kind when it has none), then its members. */
tg_status tg_train_config_load(const char *path, tg_train_config *c);
/* Every setting (not the run control) as a JSON object; malloc'ed, NUL-terminated; NULL when out
 * of memory. A valid config file. */
char *tg_train_config_to_json(const tg_train_config *c);
/* Sets one setting by its JSON name ("lr", "tft.hidden", "quantiles", "data") from text as a flag
 * gives it ("0.001", "0.1,0.5,0.9"); "data" appends one path. TG_ERR_INVALID naming the setting. */
tg_status tg_train_config_set(tg_train_config *c, const char *key, const char *value);

/* Command-line flags ("--lr", "--hidden", ...): one per setting, some shared by kinds (--hidden is
 * tft.hidden or mlp.hidden by c's model). 1 if flag names a setting. */
int tg_train_flag_known(const char *flag);
/* Sets the setting flag names for c's model kind; TG_ERR_INVALID when the flag is unknown, does not
 * apply to that kind, or the value is bad (the message names the flag). */
tg_status tg_train_config_set_flag(tg_train_config *c, const char *flag, const char *value);
/* One line per flag: name, value and what it sets. */
void tg_train_flags_help(FILE *f);

/* One row of the training settings table: what `tickgrad train --help` lists, as fields. */
typedef struct tg_train_setting_info {
  const char *key;          /* config.json's name: "lr", "tft.hidden" (a model's own block, then its member) */
  char flag[64];            /* the command's flag: "--lr", "--hidden" (several rows may share one: by the model) */
  const char *type;         /* "double", "float", "int", "int64", "uint64", "bool", "string", "enum", "numbers",
                               "strings" (the lists: comma-joined values; "strings" takes one per flag) */
  const char *arg;          /* the value's placeholder in --help: "X", "N", "S", "0|1", "Q,Q,...", "FILE..." */
  int has_range;            /* numbers and number lists: [lo, hi] bounds a value (each element) */
  double lo, hi;
  int lo_open, hi_open;     /* lo (hi) itself is not allowed */
  int increasing;           /* a number list: each element above the one before */
  int min_n, max_n;         /* the lists: how many elements */
  const char *const *names; /* an enum: its names, NULL-terminated; else NULL */
  unsigned models;          /* the model kinds it applies to, bit 1 << kind (tg_model_name); 0: every model */
  int resumable;            /* may change when a run resumes */
  const char *help;         /* one line; a model's own row starts "NAME: " */
  char def[256];            /* the default as flag text (tg_train_config_set_flag reads it back): tg_train_defaults of
                               the row's first model, or of tg_model_default_kind() for a row of every model (batch
                               differs by model: its help says how) */
} tg_train_setting_info;

/* The rows of the training settings table, in the order of config.json and of --help (model rows last). */
int tg_train_setting_count(void);
/* Row i (0 .. tg_train_setting_count() - 1) into *out; TG_ERR_INVALID for another i. */
tg_status tg_train_setting_get(int i, tg_train_setting_info *out);

/* RUN/metrics.csv as the trainer writes it: the header line of a run with n_classes (0: a quantile forecaster), and
 * m's row (each with its newline). Bindings use them to hand out rows with exactly the file's columns and numbers. */
void tg_train_metrics_header(FILE *f, int n_classes);
void tg_train_metrics_row(FILE *f, const tg_train_metrics *m);

/* Trains. bars: the data (NULL: read c->data). Writes RUN/config.json, RUN/metrics.csv and the
 * checkpoints RUN/weights.safetensors (the latest), RUN/state.safetensors (optimizer moments, step,
 * dropout RNG position, data position), RUN/trainer.json (early stopping, target scales, metrics so
 * far) and RUN/best.safetensors (the best validation epoch's weights); every write is atomic.
 * While epochs run, RUN/telemetry.csv gets a sample a second (tg_telemetry; a resumed run starts it
 * afresh); at the end, also after early stopping, stop_after or a NaN stop, RUN/report.html
 * (tg_report_write; failing to write either is a warning on the log, not an error of the run).
 * A NaN or infinite loss stops with TG_ERR_NUMERIC naming the epoch and step, and the checkpoints
 * of the last good epoch are left as they were. out (may be NULL) receives the summary.
 * After every optimizer step it checks tg_stop_requested() (status.h; the caller clears the flag before the run, the
 * library never does) and c->stop_after_step: when a stop is due it writes a checkpoint of that step (trainer.json
 * keeps the steps done in the unfinished epoch and its partial sums), logs "interrupted: stopped after step S of epoch
 * E (global step G); checkpoint in RUN; continue with: tickgrad train --resume RUN", writes report.html and returns
 * TG_OK with out->interrupted set. A resume continues inside that epoch and ends bitwise as an uninterrupted run
 * (weights, best weights, the loss columns of metrics.csv). Data-parallel ranks agree on the stop after each step. */
tg_status tg_train_run(const tg_train_config *c, const tg_bars *bars, tg_train_result *out);

/* Every data path of c, concatenated and sorted by time (read as c->read says), as tg_train_run reads them
 * when given no bars; the readers' warnings on log (may be NULL). */
tg_status tg_train_read_bars(const tg_train_config *c, FILE *log, tg_bars *all);

/* Prepares c's data exactly as tg_train_run would (a TFT config) and writes it to path (safetensors)
 * instead of training: "x" [n, F] normalised features, "y" [n, H] forward log returns, "rows" [n]
 * position -> row, "inst" [n] instrument of each row, "train_starts" / "val_starts" / "test_starts" window starts
 * (positions), "y_scale" [H] the training std per horizon; metadata enc_len, dec_len, future_cols,
 * features, hidden, heads, dropout, quantiles, split_rule (the fractions and what puts a window in a split). tools/pf_compare.py trains pytorch-forecasting on it. */
tg_status tg_train_export_windows(const tg_train_config *c, const tg_bars *bars, const char *path);

#ifdef __cplusplus
}
#endif
#endif
