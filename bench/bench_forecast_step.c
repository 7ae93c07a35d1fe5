/* Benchmark cases tft_step, mamba2_step, transformer_step, transformer_long_step and patchtst_step: one full training
 * step (forward, pinball loss, backward, Adam) of each forecaster at the default sizes (the long one at a
 * 512-bar window), on the CPU, from fixed random inputs, in --precision; the _recompute cases plan the same step with
 * recompute = blocks. */
#include <stdio.h>
#include <stdlib.h>
#include "bench.h"
#include "tickgrad/tickgrad.h"

#define N_PAST 16   /* the default feature spec's columns */
#define N_FUTURE 4  /* tod_sin, tod_cos, dow_sin, dow_cos */

static void fill_normal(float *x, int64_t n, uint64_t stream) {
  for (int64_t i = 0; i < n; i++) x[i] = tg_rng_normal(7, stream, (uint64_t)i);
}

typedef struct fc_ctx {
  tg_graph *g;
  tg_tensor *loss;
  tg_optim *opt;
} fc_ctx;

static int fc_one_step(void *ctx) {
  fc_ctx *c = ctx;
  return tg_graph_run(c->g) || tg_graph_backward(c->g, c->loss) || tg_optim_step(c->opt);
}

/* Builds the model's training graph at batch b (recompute: a tg_recompute; seq_len: the transformer's window, 0 for
 * its default), binds random inputs, times reps steps. */
static int forecast_step(tg_model_kind kind, int64_t b, int recompute, int seq_len, int warmup, int reps,
                         double *median_us) {
  tg_forecast_cfg c = tg_forecast_defaults(kind);
  if (seq_len) c.transformer.seq_len = seq_len;
  c.n_past = N_PAST;
  c.n_future = N_FUTURE;
  c.n_static = 1;
  c.horizons = 8;
  int64_t L = tg_forecast_window(&c);
  int64_t D = c.tft.dec_len;
  int64_t ps[3] = {b, L, N_PAST}, fs[3] = {b, D, N_FUTURE}, is[1] = {b}, ys[2] = {b, c.horizons};
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  char name[48];
  snprintf(name, sizeof name, seq_len ? "%s_long_step" : "%s_step", tg_model_name(kind));
  tg_graph *g = tg_graph_new(s, name);
  tg_forecast_inputs in = {tg_input(g, "past", TG_F32, 3, ps), NULL, NULL};
  if (kind == TG_MODEL_TFT) {
    in.future = tg_input(g, "future", TG_F32, 3, fs);
    in.inst = tg_input(g, "inst", TG_I64, 1, is);
  }
  tg_tensor *y = tg_input(g, "y", TG_F32, 2, ys);
  tg_tensor *loss = tg_pinball_loss(g, tg_forecast_build(g, &c, &in), y, c.nq, c.q);
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  po.training = 1;
  po.recompute = recompute;
  po.precision = tg_precision_dtype(bench_precision);
  if (!loss || tg_graph_plan(g, &po) != TG_OK) return 1;
  float *past = malloc(sizeof(float) * (size_t)(b * L * N_PAST)), *fut = malloc(sizeof(float) * (size_t)(b * D * N_FUTURE));
  float *tgt = malloc(sizeof(float) * (size_t)(b * c.horizons));
  int64_t *inst = calloc((size_t)b, sizeof *inst);
  fill_normal(past, b * L * N_PAST, 1);
  fill_normal(fut, b * D * N_FUTURE, 2);
  fill_normal(tgt, b * c.horizons, 3);
  tg_tensor pt, ft, it, yt;
  tg_tensor_view(&pt, "past", tg_cpu(0), TG_F32, 3, ps, past);
  tg_tensor_view(&ft, "future", tg_cpu(0), TG_F32, 3, fs, fut);
  tg_tensor_view(&it, "inst", tg_cpu(0), TG_I64, 1, is, inst);
  tg_tensor_view(&yt, "y", tg_cpu(0), TG_F32, 2, ys, tgt);
  fc_ctx fc = {g, loss, NULL};
  tg_optim_config oc = tg_optim_defaults(TG_ADAM);
  oc.clip_norm = 1.0f;
  int rc = tg_graph_bind(g, "past", &pt) || tg_graph_bind(g, "y", &yt) ||
           (kind == TG_MODEL_TFT && (tg_graph_bind(g, "future", &ft) || tg_graph_bind(g, "inst", &it))) ||
           tg_optim_new(s, &oc, &fc.opt);
  if (!rc) rc = bench_time_step(name, fc_one_step, &fc, &g, 1, warmup, reps, median_us);
  tg_optim_free(fc.opt);
  tg_graph_free(g);
  tg_store_free(s);
  free(past);
  free(fut);
  free(tgt);
  free(inst);
  return rc ? 1 : 0;
}

int bench_tft_step(int warmup, int reps, double *median_us) {
  return forecast_step(TG_MODEL_TFT, 32, TG_RECOMPUTE_NONE, 0, warmup, reps, median_us);
}

int bench_mamba2_step(int warmup, int reps, double *median_us) {
  return forecast_step(TG_MODEL_MAMBA2, 8, TG_RECOMPUTE_NONE, 0, warmup, reps, median_us);
}

int bench_transformer_step(int warmup, int reps, double *median_us) {
  return forecast_step(TG_MODEL_TRANSFORMER, 32, TG_RECOMPUTE_NONE, 0, warmup, reps, median_us);
}

/* The transformer over a 512-bar window at batch 4: as many bars a step as transformer_step (the same GEMM work),
 * eight times the attention per bar. */
int bench_transformer_long_step(int warmup, int reps, double *median_us) {
  return forecast_step(TG_MODEL_TRANSFORMER, 4, TG_RECOMPUTE_NONE, 512, warmup, reps, median_us);
}

int bench_patchtst_step(int warmup, int reps, double *median_us) {
  return forecast_step(TG_MODEL_PATCHTST, 32, TG_RECOMPUTE_NONE, 0, warmup, reps, median_us);
}

int bench_tft_step_recompute(int warmup, int reps, double *median_us) {
  return forecast_step(TG_MODEL_TFT, 32, TG_RECOMPUTE_BLOCKS, 0, warmup, reps, median_us);
}

int bench_mamba2_step_recompute(int warmup, int reps, double *median_us) {
  return forecast_step(TG_MODEL_MAMBA2, 8, TG_RECOMPUTE_BLOCKS, 0, warmup, reps, median_us);
}
