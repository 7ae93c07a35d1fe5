/* The predictor's batch-1 model: the forecast graph over one window (the TFT in two parts), planned on the host. */
#include <string.h>
#include "base/alloc.h"
#include "models/model_table.h"
#include "predict/predict_internal.h"
#include "tickgrad/checkpoint.h"
#include "io/finite.h"

void pr_net_close(pr_net *n) {
  tg_graph_free(n->g);
  tg_graph_free(n->g_bar);
  tg_store_free(n->store);
  tg_free(n->past);
  tg_free(n->bar);
  tg_free(n->future);
  tg_free(n->inst);
  tg_free(n->col_x);
  memset(n, 0, sizeof *n);
}

static tg_status bind_host(tg_graph *g, const char *name, tg_dtype dt, int ndim, const int64_t *shape, void *data) {
  tg_tensor t;
  tg_device host = {TG_CPU, 0};
  tg_status st = tg_tensor_view(&t, name, host, dt, ndim, shape, data);
  return st == TG_OK ? tg_graph_bind(g, name, &t) : st;
}

/* An inference plan on the host in the run's precision: no dropout, no gradients. */
static tg_status plan(const pr_net *n, tg_graph *g) {
  tg_plan_opts po = tg_plan_defaults((tg_device){TG_CPU, 0});
  po.training = 0;
  po.precision = tg_precision_dtype(n->precision);
  tg_status st = tg_graph_status(g);
  return st == TG_OK ? tg_graph_plan(g, &po) : st;
}

/* A split model (the tft): the past part of one bar (the tft's VSN), and the rest over a window of its outputs. */
static tg_status open_split(pr_net *n, const tg_forecast_cfg *c) {
  const tg_model_def *def = tg_model_get(c->kind);
  int64_t d = tg_forecast_width(c), L = tg_forecast_window(c), s_bar[3] = {1, 1, c->n_past}, s_win[3] = {1, L, d};
  int64_t s_fut[3] = {1, c->horizons, c->n_future}, s_inst[1] = {1};
  n->g_bar = tg_graph_new(n->store, "predict.bar");
  if (!n->g_bar) return tg_error(TG_ERR_NOMEM, "predict: out of memory for the model");
  tg_tensor *inst = tg_input(n->g_bar, "inst", TG_I64, 1, s_inst);
  n->bar_out = def->build_past(n->g_bar, c, tg_input(n->g_bar, "bar", TG_F32, 3, s_bar), inst); /* [1, 1, d] */
  tg_tensor *future = tg_input(n->g, "future", TG_F32, 3, s_fut);
  inst = tg_input(n->g, "inst", TG_I64, 1, s_inst);
  int64_t s_col[2] = {1, L};
  tg_tensor *col = n->col_x ? tg_input(n->g, "window_col", TG_F32, 2, s_col) : NULL;
  n->pred = def->build_after_past(n->g, c, tg_input(n->g, "x_past", TG_F32, 3, s_win), future, inst, col);
  tg_status st = plan(n, n->g_bar);
  if (st == TG_OK) st = plan(n, n->g);
  if (st == TG_OK) st = bind_host(n->g_bar, "bar", TG_F32, 3, s_bar, n->bar);
  if (st == TG_OK) st = bind_host(n->g_bar, "inst", TG_I64, 1, s_inst, n->inst);
  if (st == TG_OK) st = bind_host(n->g, "x_past", TG_F32, 3, s_win, n->past);
  if (st == TG_OK) st = bind_host(n->g, "future", TG_F32, 3, s_fut, n->future);
  if (st == TG_OK) st = bind_host(n->g, "inst", TG_I64, 1, s_inst, n->inst);
  if (st == TG_OK && col) st = bind_host(n->g, "window_col", TG_F32, 2, s_col, n->col_x);
  return st;
}

/* mlp, mamba2: the forecast graph over past [1, L, F]. */
static tg_status open_window(pr_net *n, const tg_forecast_cfg *c) {
  int64_t s_past[3] = {1, tg_forecast_window(c), c->n_past};
  tg_forecast_inputs in = {tg_input(n->g, "past", TG_F32, 3, s_past), NULL, NULL};
  n->pred = tg_forecast_build(n->g, c, &in); /* [1, H, nq] */
  tg_status st = plan(n, n->g);
  return st == TG_OK ? bind_host(n->g, "past", TG_F32, 3, s_past, n->past) : st;
}

tg_status pr_net_open(pr_net *n, const tg_forecast_cfg *c, const char *weights_path, tg_precision p) {
  memset(n, 0, sizeof *n);
  n->precision = p;
  int split = (tg_model_caps(c->kind) & TG_CAP_SPLIT) != 0;
  n->row = split ? tg_forecast_width(c) : c->n_past;
  n->store = tg_store_new((tg_device){TG_CPU, 0}, 1);
  n->g = n->store ? tg_graph_new(n->store, "predict") : NULL;
  n->past = tg_calloc((size_t)(tg_forecast_window(c) * n->row), sizeof(float));
  n->bar = tg_calloc((size_t)c->n_past, sizeof(float));
  n->future = tg_calloc((size_t)(c->horizons * (c->n_future > 0 ? c->n_future : 1)), sizeof(float));
  n->inst = tg_calloc(1, sizeof(int64_t));
  int col = split && tg_model_window_col(c) >= 0;
  n->col_x = col ? tg_calloc((size_t)tg_forecast_window(c), sizeof(float)) : NULL;
  if (!n->g || !n->past || !n->bar || !n->future || !n->inst || (col && !n->col_x))
    return tg_error(TG_ERR_NOMEM, "predict: out of memory for the model");
  tg_status st = split ? open_split(n, c) : open_window(n, c);
  if (st == TG_OK) st = tg_weights_check_finite(weights_path);
  return st == TG_OK ? tg_store_load(n->store, weights_path) : st;
}

tg_status pr_net_bar(pr_net *n, float *row) {
  tg_status st = tg_graph_run(n->g_bar);
  if (st == TG_OK) memcpy(row, n->bar_out->data, (size_t)n->row * sizeof(float));
  return st;
}

tg_status pr_net_run(pr_net *n, float *pred, int64_t len) {
  tg_status st = tg_graph_run(n->g);
  if (st == TG_OK) memcpy(pred, n->pred->data, (size_t)len * sizeof(float));
  return st;
}
