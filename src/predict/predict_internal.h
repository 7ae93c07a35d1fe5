/* The predictor's pieces: the run's inference metadata, the batch-1 window network, the state per instrument. */
#ifndef TG_PREDICT_INTERNAL_H
#define TG_PREDICT_INTERNAL_H

#include <stdint.h>
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
  float *future;      /* [dec, 4] tft: tod_sin, tod_cos, dow_sin, dow_cos of the decoder steps */
  int64_t *inst;      /* [1] tft: the instrument's dense index */
  tg_precision precision; /* the run's: forecasts use the GEMM precision the model was trained and validated in */
} pr_net;

/* Builds the graphs for c, plans them on the host in precision p and loads weights_path. */
tg_status pr_net_open(pr_net *n, const tg_forecast_cfg *c, const char *weights_path, tg_precision p);
/* tft: the window row of one bar: n->bar -> row [d]. */
tg_status pr_net_bar(pr_net *n, float *row);
/* Runs the window in n->past (and future, inst); pred [H, nq] in the model's scaled units. */
tg_status pr_net_run(pr_net *n, float *pred, int64_t len);
void pr_net_close(pr_net *n);

/* The predictor's buffers for one bar's extra inputs (tg_predictor_bar_at fills them). */
double *pr_input_numbers(tg_predictor *p);
const char **pr_input_names(tg_predictor *p);

#endif
