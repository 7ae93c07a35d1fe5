/* The predictor's batch-1 model: the forecast graph over one window, planned on the host, weights from the run. */
#include <string.h>
#include "backend/backend.h"
#include "predict/predict_internal.h"
#include "tickgrad/checkpoint.h"

void pr_net_close(pr_net *n) {
  tg_graph_free(n->g);
  tg_store_free(n->store);
  tg_free(n->past);
  tg_free(n->future);
  tg_free(n->inst);
  memset(n, 0, sizeof *n);
}

static int64_t past_len(const tg_forecast_cfg *c) {
  return c->kind == TG_MODEL_TFT ? c->tft.enc_len : c->kind == TG_MODEL_MLP ? c->mlp.window : c->mamba.seq_len;
}

static tg_status bind_host(tg_graph *g, const char *name, tg_dtype dt, int ndim, const int64_t *shape, void *data) {
  tg_tensor t;
  tg_device host = {TG_CPU, 0};
  tg_status st = tg_tensor_view(&t, name, host, dt, ndim, shape, data);
  return st == TG_OK ? tg_graph_bind(g, name, &t) : st;
}

tg_status pr_net_open(pr_net *n, const tg_forecast_cfg *c, const char *weights_path) {
  memset(n, 0, sizeof *n);
  tg_device host = {TG_CPU, 0};
  int64_t L = past_len(c), s_past[3] = {1, L, c->n_past}, s_fut[3] = {1, c->horizons, 4}, s_inst[1] = {1};
  n->store = tg_store_new(host, 1);
  n->g = n->store ? tg_graph_new(n->store, "predict") : NULL;
  n->past = tg_calloc((size_t)(L * c->n_past), sizeof(float));
  n->future = tg_calloc((size_t)(c->horizons * 4), sizeof(float));
  n->inst = tg_calloc(1, sizeof(int64_t));
  if (!n->g || !n->past || !n->future || !n->inst) return tg_error(TG_ERR_NOMEM, "predict: out of memory for the model");
  tg_forecast_inputs in = {tg_input(n->g, "past", TG_F32, 3, s_past), NULL, NULL};
  if (c->kind == TG_MODEL_TFT) {
    in.future = tg_input(n->g, "future", TG_F32, 3, s_fut);
    in.inst = tg_input(n->g, "inst", TG_I64, 1, s_inst);
  }
  n->pred = tg_forecast_build(n->g, c, &in); /* [1, H, nq] */
  tg_status st = tg_graph_status(n->g);
  tg_plan_opts po = tg_plan_defaults(host);
  po.training = 0; /* no dropout, no gradients */
  if (st == TG_OK) st = tg_graph_plan(n->g, &po);
  if (st == TG_OK) st = bind_host(n->g, "past", TG_F32, 3, s_past, n->past);
  if (st == TG_OK && c->kind == TG_MODEL_TFT) st = bind_host(n->g, "future", TG_F32, 3, s_fut, n->future);
  if (st == TG_OK && c->kind == TG_MODEL_TFT) st = bind_host(n->g, "inst", TG_I64, 1, s_inst, n->inst);
  if (st == TG_OK) st = tg_store_load(n->store, weights_path);
  return st;
}

tg_status pr_net_run(pr_net *n, float *pred, int64_t len) {
  tg_status st = tg_graph_run(n->g);
  if (st == TG_OK) memcpy(pred, n->pred->data, (size_t)len * sizeof(float));
  return st;
}
