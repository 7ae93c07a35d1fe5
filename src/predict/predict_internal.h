/* The predictor's pieces: the run's inference metadata, the batch-1 window network, the state per instrument. */
#ifndef TG_PREDICT_INTERNAL_H
#define TG_PREDICT_INTERNAL_H

#include <stdint.h>
#include "data/readers/schedule.h"
#include "tickgrad/dataset.h"
#include "tickgrad/graph.h"
#include "tickgrad/predictor.h"
#include "tickgrad/train.h"

/* RUN/inference.json (written by the trainer, src/train/meta.c). */
typedef struct pr_meta {
  int f;                      /* feature columns */
  char (*names)[TG_NAME_MAX]; /* [f] */
  double *mean, *std;         /* [f] the training split's normalisation */
  int h;                      /* horizons */
  double scale[TG_MAX_HORIZONS]; /* the training split's target std per horizon */
  int k;                      /* instruments */
  uint32_t *ids;              /* [k] ascending */
  int warmup;
  int64_t bar_ns;
  int C;                      /* a classifier's classes (0: a quantile forecaster) */
  char (*classes)[TG_NAME_MAX]; /* [C] their names */
  int leads;                  /* lead columns of each known: covariate */
  int n_vocab;
  tg_vocab *vocab;            /* [n_vocab] the cat: columns' vocabularies */
  tg_schedule sched;          /* tft: the training split's bar times (n 0 in runs from before it: ts + h * bar_ns) */
} pr_meta;

tg_status pr_meta_read(const char *run, pr_meta *m);
void pr_meta_free(pr_meta *m);

/* The model at batch 1 on the host, inputs bound to host buffers once:
 *   mlp, mamba2: one graph over past [1, L, F] (mamba2's only holds the parameters a stepper copies);
 *   tft: two graphs over one store, so that each bar's past-VSN output is computed once and kept: "bar" runs the
 *        past VSN on one bar's row [1, 1, F] -> [1, 1, d]; the main graph runs the rest over the window of those
 *        outputs [1, enc, d] with the decoder's calendar and the instrument. */
typedef struct pr_net {
  tg_store *store;
  tg_graph *g;        /* -> pred */
  tg_graph *g_bar;    /* tft: -> bar_out */
  tg_tensor *pred;    /* [1, H, nq] */
  tg_tensor *bar_out; /* tft: [1, 1, d] */
  int64_t row;        /* floats per window row: F, or d for the tft */
  float *past;        /* [L, row] the window, oldest row first */
  float *bar;         /* tft: [F] one bar's normalised features */
  float *future;      /* [dec, n_future] tft: tod_sin, tod_cos, dow_sin, dow_cos of the decoder steps, then the
                         known: inputs' values */
  int64_t *inst;      /* [1] tft: the instrument's dense index */
  float *col_x;       /* [L] a split model's window column, oldest first (tg_model_window_col), or NULL */
  tg_precision precision; /* the run's: forecasts use the GEMM precision the model was trained and validated in */
} pr_net;

/* Builds the graphs for c, plans them on the host in precision p and loads weights_path. */
tg_status pr_net_open(pr_net *n, const tg_forecast_cfg *c, const char *weights_path, tg_precision p);
/* tft: the window row of one bar: n->bar -> row [d]. */
tg_status pr_net_bar(pr_net *n, float *row);
/* Runs the window in n->past (and future, inst); pred [H, nq] in the model's scaled units. */
tg_status pr_net_run(pr_net *n, float *pred, int64_t len);
void pr_net_close(pr_net *n);

/* The stream's columns as the model reads them (known_future.c). For a TFT with known: inputs the stream also makes
 * each one's next H values, "NAME@+1".."NAME@+H" (the feed supplies them), which its past does not read: they are the
 * decoder steps' known-future values, as training's future table held the column at the next H bars. */
typedef struct pr_cols {
  int width;        /* the stream's columns */
  int *past_col;    /* [F] the stream column of each model feature */
  int n_known;      /* a TFT's known: inputs (0 otherwise) */
  int H;            /* decoder steps */
  int *known_feat;  /* [n_known] each one's feature column (its normalisation) */
  int *lead_col;    /* [n_known, H] the stream column of NAME@+h */
  float *fut;       /* [H, n_known] the last bar's normalised known-future values */
} pr_cols;

/* known: inputs named in a feature spec. */
int pr_cols_count_known(const char *spec);
/* Maps the stream's columns to the run's features (names must match in order, leads of a TFT's known: inputs aside);
 * TG_ERR_FORMAT naming the first that differs. H: the TFT's decoder steps (0 for the other models). */
tg_status pr_cols_open(pr_cols *c, const tg_feature_stream *fs, const pr_meta *m, int H, const char *run);
/* x [F] normalised from the stream's raw row; a TFT's known-future values into c->fut (a missing one carries the
 * value before it forward, as the training data's column did). */
void pr_cols_take(pr_cols *c, const pr_meta *m, const float *raw, float *x);
void pr_cols_close(pr_cols *c);

/* An open predictor's config (the model's data-dependent sizes set), inference metadata and store (weights loaded). */
const tg_train_config *pr_config(const tg_predictor *p);
const pr_meta *pr_meta_of(const tg_predictor *p);
tg_store *pr_store(const tg_predictor *p);

/* The predictor's buffers for one bar's extra inputs (tg_predictor_bar_at fills them). */
double *pr_input_numbers(tg_predictor *p);
const char **pr_input_names(tg_predictor *p);

#endif
