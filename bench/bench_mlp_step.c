/* Benchmark case mlp_step: one training step of an MLP 256-256-256-3 (ReLU, MSE, Adam), batch 64. */
#include <stdlib.h>
#include "bench.h"
#include "tickgrad/tickgrad.h"

#define BATCH 64
#define WIDTH 256
#define OUT 3

typedef struct mlp_ctx {
  tg_graph *g;
  tg_tensor *loss;
  tg_optim *opt;
} mlp_ctx;

static int mlp_one_step(void *ctx) {
  mlp_ctx *c = ctx;
  return tg_graph_run(c->g) || tg_graph_backward(c->g, c->loss) || tg_optim_step(c->opt);
}

int bench_mlp_step(int warmup, int reps, double *median_us) {
  int64_t xs[2] = {BATCH, WIDTH}, ys[2] = {BATCH, OUT};
  int64_t wh[2] = {WIDTH, WIDTH}, wo[2] = {OUT, WIDTH}, bh[1] = {WIDTH}, bo[1] = {OUT};
  tg_init fan = {TG_INIT_FAN_IN, 0, 0};
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(s, "mlp_step");
  tg_tensor *h = tg_input(g, "x", TG_F32, 2, xs);
  tg_tensor *y = tg_input(g, "y", TG_F32, 2, ys);
  h = tg_relu(g, tg_linear(g, h, tg_param(g, "l1.weight", 2, wh, fan), tg_param(g, "l1.bias", 1, bh, fan)));
  h = tg_relu(g, tg_linear(g, h, tg_param(g, "l2.weight", 2, wh, fan), tg_param(g, "l2.bias", 1, bh, fan)));
  h = tg_linear(g, h, tg_param(g, "l3.weight", 2, wo, fan), tg_param(g, "l3.bias", 1, bo, fan));
  tg_tensor *loss = tg_mse_loss(g, h, y);
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  po.precision = tg_precision_dtype(bench_precision);
  if (!loss || tg_graph_plan(g, &po) != TG_OK) return 1;
  float *x = malloc(sizeof(float) * BATCH * WIDTH), *t = malloc(sizeof(float) * BATCH * OUT);
  for (int i = 0; i < BATCH * WIDTH; i++) x[i] = tg_rng_normal(9, 0, (uint64_t)i);
  for (int i = 0; i < BATCH * OUT; i++) t[i] = tg_rng_normal(9, 1, (uint64_t)i);
  tg_tensor xt, yt;
  tg_tensor_view(&xt, "x", tg_cpu(0), TG_F32, 2, xs, x);
  tg_tensor_view(&yt, "y", tg_cpu(0), TG_F32, 2, ys, t);
  mlp_ctx c = {g, loss, NULL};
  tg_optim_config oc = tg_optim_defaults(TG_ADAM);
  int rc = tg_graph_bind(g, "x", &xt) || tg_graph_bind(g, "y", &yt) || tg_optim_new(s, &oc, &c.opt);
  if (!rc) rc = bench_time_step("mlp_step", mlp_one_step, &c, &g, 1, warmup, reps, median_us);
  tg_optim_free(c.opt);
  tg_graph_free(g);
  tg_store_free(s);
  free(x);
  free(t);
  return rc ? 1 : 0;
}
