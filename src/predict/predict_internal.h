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
} pr_meta;

tg_status pr_meta_read(const char *run, pr_meta *m);
void pr_meta_free(pr_meta *m);

/* tft / mlp: the model over one window at batch 1, inputs bound to host buffers once. */
typedef struct pr_net {
  tg_store *store;
  tg_graph *g;
  tg_tensor *pred;  /* [1, H, nq] */
  float *past;      /* [L, F] the window, oldest row first */
  float *future;    /* [dec, 4] tft: tod_sin, tod_cos, dow_sin, dow_cos of the decoder steps */
  int64_t *inst;    /* [1] tft: the instrument's dense index */
} pr_net;

/* Builds the forecast graph for c (batch 1, inference), plans it on the host and loads weights_path. For
 * mamba2 the graph only holds the parameters for a stepper. */
tg_status pr_net_open(pr_net *n, const tg_forecast_cfg *c, const char *weights_path);
/* Runs the window in n->past (and future, inst); pred [H, nq] in the model's scaled units. */
tg_status pr_net_run(pr_net *n, float *pred, int64_t len);
void pr_net_close(pr_net *n);

#endif
