/* A small MLP training step run for a few steps on any device (mlp_step.h). */
#include <math.h>
#include <stdio.h>
#include "graph/backend.h"
#include "support/mlp_step.h"

#define B TG_TEST_MLP_B
#define F TG_TEST_MLP_F

int tg_test_mlp_losses(tg_device dev, tg_dtype precision, int capture, int recompute, int steps, float *loss,
                       int *captured, tg_test_mlp_hook hook, void *ctx) {
  const tg_backend *be = tg_backend_for(dev.kind);
  const int64_t xs[2] = {B, F}, ys[2] = {B, 1}, w1[2] = {32, F}, b1[1] = {32}, w2[2] = {1, 32}, b2[1] = {1};
  tg_init fan = {TG_INIT_FAN_IN, 0, 0};
  tg_store *s = tg_store_new(dev, 9);
  tg_graph *g = tg_graph_new(s, "mlp");
  tg_tensor *x = tg_input(g, "x", TG_F32, 2, xs), *y = tg_input(g, "y", TG_F32, 2, ys);
  tg_graph_block_begin(g, "mlp");
  tg_tensor *h = tg_dropout(g, tg_silu(g, tg_linear(g, x, tg_param(g, "w1", 2, w1, fan), tg_param(g, "b1", 1, b1, fan))), 0.1f);
  tg_tensor *p = tg_linear(g, h, tg_param(g, "w2", 2, w2, fan), tg_param(g, "b2", 1, b2, fan));
  tg_graph_block_end(g);
  tg_tensor *l = tg_mse_loss(g, p, y);
  tg_plan_opts o = tg_plan_defaults(dev);
  o.training = 1;
  o.precision = precision;
  o.recompute = recompute;
  tg_optim_config oc = tg_optim_defaults(TG_ADAMW);
  oc.clip_norm = 0.5f;
  oc.schedule = (tg_lr_schedule){TG_LR_COSINE, 3, steps, 0.1f};
  tg_optim *opt = NULL;
  tg_step *step = NULL;
  float hx[B * F], hy[B];
  void *dx = NULL, *dy = NULL;
  int ok = l && tg_graph_plan(g, &o) == TG_OK && tg_optim_new(s, &oc, &opt) == TG_OK &&
           be->alloc(dev, sizeof hx, &dx) == TG_OK && be->alloc(dev, sizeof hy, &dy) == TG_OK;
  tg_tensor tx, ty;
  ok = ok && tg_tensor_view(&tx, "bx", dev, TG_F32, 2, xs, dx) == TG_OK && tg_tensor_view(&ty, "by", dev, TG_F32, 2, ys, dy) == TG_OK &&
       tg_graph_bind(g, "x", &tx) == TG_OK && tg_graph_bind(g, "y", &ty) == TG_OK && tg_step_new(g, l, opt, &step) == TG_OK;
  if (ok) tg_step_set_capture(step, capture);
  for (int t = 0; ok && t < steps; t++) {
    for (int i = 0; i < B * F; i++) hx[i] = 2.0f * tg_rng_uniform(5, (uint64_t)t, (uint64_t)i) - 1.0f;
    for (int i = 0; i < B; i++) hy[i] = sinf(3.0f * hx[i * F]) + hx[i * F + 1];
    ok = be->from_host(dev, dx, hx, sizeof hx) == TG_OK && be->from_host(dev, dy, hy, sizeof hy) == TG_OK;
    if (ok && hook) hook(ctx, t, 1);
    ok = ok && tg_step_run(step, &loss[t]) == TG_OK;
    if (ok && hook) hook(ctx, t, 0);
  }
  char d[16];
  if (!ok) fprintf(stderr, "mlp on %s (%s): %s\n", tg_device_str(dev, d, sizeof d), tg_dtype_name(precision),
                   tg_last_error());
  *captured = ok && step && tg_step_captured(step);
  tg_step_free(step);
  if (dx) be->free(dev, dx);
  if (dy) be->free(dev, dy);
  tg_optim_free(opt);
  tg_graph_free(g);
  tg_store_free(s);
  return ok;
}
