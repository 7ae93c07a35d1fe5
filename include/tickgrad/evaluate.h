/* Scoring a trained forecaster out of sample: every split of its data through its weights, RUN/evaluation.json. */
#ifndef TICKGRAD_EVALUATE_H
#define TICKGRAD_EVALUATE_H

#include <stdio.h>
#include "tickgrad/data.h"
#include "tickgrad/dataset.h"
#include "tickgrad/train.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_EVAL_MAX_INTERVALS (TG_MAX_QUANTILES / 2)

/* One split's scores. A quantile forecaster's pinball losses are in scaled target units (each horizon divided by its
 * training-split std, as the trainer's losses); q-risks R_q = 2 sum QL(y, yhat_q, q) / sum |y| in original units over
 * every window and horizon. Two baselines score the same windows: the zero forecast (every quantile 0) and the naive
 * one (the training split's quantiles per horizon, the trainer's "naive"). NaN where a split has no window. */
typedef struct tg_eval_split {
  int64_t windows;
  /* ---- a quantile forecaster ---- */
  double loss;                  /* mean pinball over windows, horizons and quantiles (the trainer's validation loss) */
  double zero_loss, naive_loss; /* the baselines' */
  double pinball[TG_MAX_HORIZONS][TG_MAX_QUANTILES]; /* [H][nq] mean over the windows */
  double qrisk[TG_MAX_QUANTILES], zero_qrisk[TG_MAX_QUANTILES], naive_qrisk[TG_MAX_QUANTILES]; /* [nq] */
  /* central intervals: quantile k paired with the one at 1 - q_k; the share of (window, horizon) targets inside
   * [yhat_lo, yhat_hi] against the nominal q_hi - q_lo */
  int n_intervals;
  int iv_lo[TG_EVAL_MAX_INTERVALS], iv_hi[TG_EVAL_MAX_INTERVALS]; /* quantile indices, widest interval first */
  double coverage[TG_EVAL_MAX_INTERVALS], naive_coverage[TG_EVAL_MAX_INTERVALS];
  /* calibration: the share of targets below each forecast quantile (ideal: q_k), over all horizons and per horizon */
  double below[TG_MAX_QUANTILES];
  double below_h[TG_MAX_HORIZONS][TG_MAX_QUANTILES];
  /* ---- a classifier: log loss, accuracy, balanced accuracy, and the majority class of the training split ---- */
  double log_loss, accuracy, balanced_accuracy;
  double base_log_loss, base_accuracy, base_balanced_accuracy;
  int64_t confusion[TG_TRAIN_CM_MAX]; /* [C, C] (row: true class) when C <= TG_TRAIN_CM_CLASSES */
} tg_eval_split;

typedef struct tg_evaluation {
  char weights[8];              /* "best" or "last" */
  int H, nq, n_classes;         /* n_classes 0: a quantile forecaster */
  float q[TG_MAX_QUANTILES];
  int64_t from_ns[TG_SPLIT_COUNT], to_ns[TG_SPLIT_COUNT]; /* each split's time region [from, to) (tg_split) */
  int scored[TG_SPLIT_COUNT];      /* 1 for each split scored (training's end scores val and test only) */
  tg_eval_split s[TG_SPLIT_COUNT]; /* TG_TRAIN, TG_VAL, TG_TEST */
} tg_evaluation;

typedef struct tg_eval_opts {
  const char *run;
  int last;                  /* 1: the last epoch's weights (RUN/weights.safetensors); 0: the best (best.safetensors) */
  const tg_bars *bars;       /* the bars, as a run trained on bars given in memory needs (NULL: read them) */
  int n_data;                /* > 0: read the run's bars from these paths (moved files). Either way they must be the
                                bars it trained on (RUN/data.json), so that its splits and normalisation are the run's */
  const char *const *data;
  const char *device;        /* NULL: auto */
  int threads;               /* 0: as set globally */
  FILE *log;                 /* the data line and notices (NULL: silent) */
} tg_eval_opts;

/* Scores every window of every split of RUN's data (read as the run read it) through its weights, as the trainer's
 * validation pass does: the validation split's loss with the best weights is the run's best validation loss. Writes
 * RUN/evaluation.json (atomic) and RUN/report.html, holding the run's lock meanwhile (a training run in the folder is
 * an error naming it). Errors start "evaluate: " and name the run and the file. */
tg_status tg_evaluate(const tg_eval_opts *o, tg_evaluation *out);

/* "train", "val", "test"; TG_ERR_INVALID for another name. */
tg_status tg_eval_split_parse(const char *name, int *split);
const char *tg_eval_split_name(int split);

/* One line: windows, pinball against both baselines, q-risks, the widest interval's coverage (a classifier: log loss,
 * accuracy, balanced accuracy against the majority class). */
void tg_evaluation_line(FILE *f, const tg_evaluation *e, int split);
/* The split's tables: pinball per horizon and quantile, q-risk per quantile with the baselines, interval coverage,
 * calibration (a classifier: its scores and confusion counts). */
void tg_evaluation_print(FILE *f, const tg_evaluation *e, int split);

#ifdef __cplusplus
}
#endif
#endif
