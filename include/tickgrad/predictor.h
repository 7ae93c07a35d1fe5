/* Live-style prediction from a trained forecaster run: open it, push bars one at a time, read each bar's forecast. */
#ifndef TICKGRAD_PREDICTOR_H
#define TICKGRAD_PREDICTOR_H

#include <stdint.h>
#include <stdio.h>
#include "tickgrad/data.h"
#include "tickgrad/graph.h"
#include "tickgrad/models.h"
#include "tickgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A predictor holds a run's model (config.json, inference.json and the weights of `tickgrad train --model
 * tft|mamba2|mlp|transformer`) on the host CPU and, per instrument, the state that makes each new bar cheap:
 *
 *   features: computed incrementally (tg_feature_stream), equal to the batch features of the same bars, then
 *             normalised with the training split's mean and std saved in RUN/inference.json;
 *   mamba2:   the recurrent state (tg_mamba2_stepper): O(1) per bar. The state starts at the instrument's first
 *             bar past the feature warm-up and is never reset, so the forecast at bar t sees every bar since
 *             then (the model's recurrent form; training saw windows of seq_len bars from a zero state);
 *   mlp, transformer: the last `window` normalised feature rows in a ring; each bar runs the model over them at
 *             batch 1 (a graph planned at open);
 *   tft:      each bar's past variable-selection output (it depends only on that bar and the instrument) is
 *             computed once and kept in a ring of enc_len; each bar then runs the rest of the model (the LSTM
 *             encoder from the static context at the window's start, as in training, the decoder, attention and
 *             heads) over that window. The known-future inputs (time of day, day of week) are those of
 *             ts + k * bar_ns, k = 1..H, with bar_ns the training data's median bar interval (training used the
 *             actual next bars' times: the same except across gaps such as nights and weekends).
 *
 * The forecast of a bar is [horizons, nq]: quantile q_j of the forward log return log(close[t+h] / close[t]),
 * h = 1..horizons, in return units (the model's scaled outputs times the training split's target std). A bar
 * gets one once its instrument has the feature warm-up plus (tft, mlp) a full window of bars.
 *
 * No allocation after tg_predictor_open: push runs in memory planned there. Not thread-safe: one predictor per
 * thread. Bars of one instrument must come in time order; instruments may interleave. */
typedef struct tg_predictor tg_predictor;

typedef struct tg_predictor_opts {
  const char *weights;  /* "best" (RUN/best.safetensors, the default) or "last" (RUN/weights.safetensors) */
  FILE *log;            /* notices, each said once (NULL: silent): a TFT's bar at a time its training bars never had,
                           or a next bar that came where the training schedule expected another (a holiday) */
} tg_predictor_opts;

/* One bar: time (UTC ns), the instrument id as in the training data (0 when it had no instrument column), OHLCV. */
typedef struct tg_pbar {
  int64_t ts;
  uint32_t instrument;
  double open, high, low, close, volume;
  const double *inputs;     /* [info.n_num_inputs] the run's numeric extra inputs (NaN: missing), or NULL */
  const char *const *cats;  /* [info.n_inputs - n_num_inputs] its category names (NULL or unseen: id 0), or NULL */
} tg_pbar;

typedef struct tg_predictor_info {
  tg_model_kind kind;
  int horizons, nq;     /* a quantile forecaster's; 0 for a classifier */
  float q[TG_MAX_QUANTILES];
  int n_classes;        /* a classifier's classes (label targets); 0 for a quantile forecaster */
  const char (*classes)[TG_NAME_MAX]; /* [n_classes] their names, in the order of its probabilities */
  int n_features;       /* per bar */
  int warmup;           /* bars an instrument needs before its features are valid */
  int window;           /* feature rows one forecast reads (mamba2: 1, the state holds the rest) */
  int64_t first_bar;    /* 0-based bar of an instrument that gets the first forecast: warmup + window - 1 */
  int64_t bar_ns;       /* the training data's median bar interval */
  tg_precision precision; /* the run's: forecasts run its GEMMs in the precision it trained and validated in */
  int k;                /* instruments */
  const uint32_t *ids;  /* [k] their ids */
  int n_inputs, n_num_inputs; /* extra inputs each bar brings (covariates): the numbers first, then category names */
  const char *const *input_names; /* [n_inputs] "NAME" (col:, known:, static:, cat:), "NAME@+h" (known: leads) */
  char run[1024];
} tg_predictor_info;

/* Floats one push writes to out: n_classes for a classifier, else horizons * nq. */
static inline int tg_predictor_out_len(const tg_predictor_info *in) {
  return in->n_classes ? in->n_classes : in->horizons * in->nq;
}

/* Opens run_dir. Errors name the file and what is wrong: TG_ERR_IO (a missing file), TG_ERR_FORMAT (a file this
 * version cannot read, or an inference.json value out of its range), TG_ERR_NUMERIC (weights holding NaN or infinity:
 * the tensor and the first bad index), TG_ERR_INVALID (a run that is not a forecaster's: a DQN or PPO run has env.json and is
 * acted on by `tickgrad backtest --run`, not predicted). opts may be NULL. */
tg_status tg_predictor_open(const char *run_dir, const tg_predictor_opts *opts, tg_predictor **out);
const tg_predictor_info *tg_predictor_get_info(const tg_predictor *p);
/* Takes the next bar; out [horizons, nq] receives its forecast (a classifier: out [n_classes] its class
 * probabilities) when *ready is 1, NaN otherwise (warm-up).
 * Errors leave the predictor as it was (the bar is not taken): TG_ERR_INVALID for an instrument the run was not
 * trained on or a time before that instrument's last bar, TG_ERR_NUMERIC for a price that is not finite and
 * positive or a volume that is not finite and >= 0. A forecast is never NaN or infinite: when a normalised feature of
 * the bar or an output of the network is not (a price so extreme, such as 1e308 or 1e-320, that a feature overflows;
 * weights that overflow), push fails with TG_ERR_NUMERIC naming the bar (time, instrument) and the value (feature
 * name, or forecast h and q); that bar has been taken into the instrument's history, so later bars whose window
 * holds it fail the same way. A lead input "NAME@+h" the feed does not have yet (NaN: past the end of a file) is
 * missing data, not an error: the bars whose window (mamba2: state) holds it get no forecast (*ready 0). */
tg_status tg_predictor_push(tg_predictor *p, const tg_pbar *bar, float *out, int *ready);
/* Bar row of bars as a tg_pbar with the run's extra inputs from the columns of the same names. A lead input
 * "NAME@+h" missing as a column of its own is column NAME h bars later of the same instrument in bars (NaN past its
 * last) when leads_from_rows is 1, else missing. The pointers stay valid until the next call. TG_ERR_INVALID naming
 * the input and the bars' columns when one is missing, or a column's kind is not the input's (number or name). */
tg_status tg_predictor_bar_at(tg_predictor *p, const tg_bars *bars, int64_t row, int leads_from_rows, tg_pbar *b);
/* The normalised feature row [info.n_features] that the last push gave the model (the row a window ends with: the
 * stream's features of that bar, normalised with RUN/inference.json's mean and std, category ids offset into the
 * one embedding table as the trainer does), or NULL when the last push made none (warm-up, an error, or no push since
 * open or reset). Valid until the next push or reset. A PyTorch twin of the model fed the last `window` rows of an
 * instrument reproduces its forecast: the scaled output times the target scales of inference.json. */
const float *tg_predictor_features(const tg_predictor *p);
/* The same row before normalisation [info.n_features]: the stream's features of the last push in the model's order, the
 * values an exported model (tickgrad export, docs/EXPORT.md) takes as its input. NULL when tg_predictor_features is. */
const float *tg_predictor_raw_features(const tg_predictor *p);
/* A model with known-future inputs (the tft): the decoder rows [info.horizons, *n_future] of the last window it ran
 * (the calendar of the next bars, tod_sin, tod_cos, dow_sin, dow_cos, then the known: inputs normalised), what an
 * exported model takes as "future" beside the window. NULL (and *n_future 0) for other models or when
 * tg_predictor_features is NULL. */
const float *tg_predictor_future(const tg_predictor *p, int *n_future);
/* Forgets every bar: the next push starts each instrument afresh. */
void tg_predictor_reset(tg_predictor *p);
void tg_predictor_free(tg_predictor *p);

#ifdef __cplusplus
}
#endif
#endif
