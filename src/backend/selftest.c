/* The device self-test: allocate, GEMM and layernorm forward and backward, compared with the CPU. */
#include <math.h>
#include <stdio.h>
#include "graph/backend.h"
#include "tickgrad/device.h"
#include "tickgrad/graph.h"

#define ST_TOL 1e-4 /* relative, norm-wise: FP32 GEMM sums in another order, nothing looser */

typedef struct st_run {
  tg_store *store;
  tg_graph *g;
  float loss;
  float *grads; /* [numel] on the host */
  size_t numel;
} st_run;

/* loss = mse(layernorm(X W) * gamma + beta, T) with X [64, 128], W [128, 96], T [64, 96]. */
static tg_status st_build_and_step(tg_device dev, st_run *r) {
  const int64_t xs[2] = {64, 128}, ws[2] = {128, 96}, ts[2] = {64, 96}, gs[1] = {96};
  r->store = tg_store_new(dev, 2024);
  r->g = tg_graph_new(r->store, "self-test");
  if (!r->store || !r->g) return tg_error(TG_ERR_NOMEM, "self-test: out of host memory");
  tg_init u = {TG_INIT_UNIFORM, -1.0f, 1.0f}, fan = {TG_INIT_FAN_IN, 0, 0}, one = {TG_INIT_UNIFORM, 0.5f, 1.5f};
  tg_tensor *x = tg_param(r->g, "x", 2, xs, u), *w = tg_param(r->g, "w", 2, ws, fan);
  tg_tensor *gamma = tg_param(r->g, "gamma", 1, gs, one), *beta = tg_param(r->g, "beta", 1, gs, u);
  tg_tensor *t = tg_param(r->g, "t", 2, ts, u);
  tg_tensor *loss = tg_mse_loss(r->g, tg_layernorm(r->g, tg_matmul(r->g, x, w, 0, 0), gamma, beta, 1e-5f), t);
  if (!loss) return tg_graph_status(r->g);
  tg_plan_opts o = tg_plan_defaults(dev);
  o.training = 1;
  tg_status st = tg_graph_plan(r->g, &o);
  if (st == TG_OK) st = tg_graph_run(r->g);
  if (st == TG_OK) st = tg_graph_backward(r->g, loss);
  if (st != TG_OK) return st;
  const tg_backend *be = tg_backend_for(dev.kind);
  r->numel = tg_store_numel(r->store);
  r->grads = tg_malloc(r->numel * sizeof(float));
  if (!r->grads) return tg_error(TG_ERR_NOMEM, "self-test: out of host memory");
  if ((st = be->to_host(dev, &r->loss, loss->data, sizeof(float))) != TG_OK) return st;
  return be->to_host(dev, r->grads, tg_store_grads(r->store), r->numel * sizeof(float));
}

static void st_free(st_run *r) {
  tg_graph_free(r->g);
  tg_store_free(r->store);
  tg_free(r->grads);
}

/* max over parameters of |a - b| / (|b| + 1e-12), norm-wise per parameter */
static double st_grad_err(const st_run *a, const st_run *b) {
  double worst = 0.0;
  for (int i = 0; i < tg_store_count(a->store); i++) {
    tg_param_info p = tg_store_param(a->store, i);
    double d = 0.0, n = 0.0;
    for (size_t k = p.offset; k < p.offset + p.numel; k++) {
      double e = (double)a->grads[k] - (double)b->grads[k];
      d += e * e;
      n += (double)b->grads[k] * (double)b->grads[k];
    }
    double rel = sqrt(d) / (sqrt(n) + 1e-12);
    if (!(rel <= worst)) worst = rel; /* NaN wins */
  }
  return worst;
}

tg_status tg_device_self_test(tg_device dev, char *report, size_t report_size) {
  st_run ref = {0}, got = {0};
  char name[16];
  tg_device_str(dev, name, sizeof name);
  tg_status st = st_build_and_step(tg_cpu(0), &ref);
  if (st == TG_OK && (st = st_build_and_step(dev, &got)) != TG_OK)
    st = tg_error(st, "%s: self-test step failed: %s", name, tg_last_error());
  if (st == TG_OK && (st = tg_device_sync(dev)) != TG_OK)
    st = tg_error(st, "%s: self-test synchronisation failed: %s", name, tg_last_error());
  if (st == TG_OK) {
    double lerr = fabs((double)got.loss - (double)ref.loss) / (fabs((double)ref.loss) + 1e-12);
    double gerr = st_grad_err(&got, &ref);
    if (!(lerr <= ST_TOL) || !(gerr <= ST_TOL))
      st = tg_error(TG_ERR_NUMERIC, "%s: self-test disagrees with the CPU: loss %.9g vs %.9g (rel %.2e), worst gradient "
                    "rel error %.2e (tolerance %.0e)", name, (double)got.loss, (double)ref.loss, lerr, gerr, ST_TOL);
    else if (report)
      snprintf(report, report_size, "allocate, GEMM 64x128x96, layernorm forward+backward, MSE: loss rel error %.1e, "
               "worst gradient rel error %.1e against the CPU (tolerance %.0e)", lerr, gerr, ST_TOL);
  }
  st_free(&ref);
  st_free(&got);
  return st;
}
