/* GPU benchmark cases: the mlp_step MLP (256-256-256-3 ReLU, MSE, Adam) trained on cuda:0 from a
 * resident table of 65536 rows. Each step draws its batch on the device (tg_sample_rows +
 * tg_gather_rows) and runs as one tg_step (a captured CUDA graph from its second call, unless the
 * case turns capture off); the timed time of a step includes reading the loss back (a sync).
 *
 * Besides "case median_us" on stdout, each case writes to stderr the host<->device bytes per timed
 * step, from tg_device_mem_stats, as one line bench/run.sh parses:
 *   CASE transfers: h2d_per_step=X d2h_per_step=Y h2d_per_epoch=Z steps_per_epoch=N captured=0|1
 *
 * No usable GPU: a message "no CUDA device: <reason>" and BENCH_SKIP (exit status 3).
 * TG_BENCH_DEVICE=cpu:0 runs the same code on the CPU (to test this file on a machine without a
 * GPU; the numbers are then not GPU numbers, and the output says so). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "tickgrad/tickgrad.h"

#define ROWS 65536
#define WIDTH 256
#define OUT 3

typedef struct gpu_run {
  tg_device dev;
  void *xd, *yd; /* the resident tables on dev */
  tg_store *s;
  tg_graph *g;
  tg_optim *opt;
  tg_step *step;
  double *times;
} gpu_run;

static void gpu_run_free(gpu_run *r) {
  tg_step_free(r->step);
  tg_optim_free(r->opt);
  tg_graph_free(r->g);
  tg_store_free(r->s);
  if (r->xd) tg_device_free(r->dev, r->xd);
  if (r->yd) tg_device_free(r->dev, r->yd);
  free(r->times);
}

/* The device the GPU cases run on: cuda:0, or TG_BENCH_DEVICE (vulkan:N too). BENCH_SKIP when it is a CUDA device
 * and there is no usable GPU. */
static int choose_device(const char *name, tg_device *dev) {
  const char *spec = getenv("TG_BENCH_DEVICE");
  if (!spec || !spec[0]) spec = "cuda:0";
  if (strncmp(spec, "cuda", 4) == 0 && tg_cuda_count() == 0) {
    fprintf(stderr, "tickgrad_bench %s: no CUDA device: %s\n", name, tg_cuda_why_none());
    return BENCH_SKIP;
  }
  if (tg_device_choose(spec, dev, NULL, 0) != TG_OK) return 1;
  if (dev->kind == TG_CPU)
    fprintf(stderr, "tickgrad_bench %s: running on %s (TG_BENCH_DEVICE): not a GPU measurement\n", name, spec);
  return 0;
}

/* Uploads the tables x [ROWS, WIDTH], y [ROWS, OUT] (seeded normal draws) and binds them. */
static int upload_tables(gpu_run *r) {
  int64_t xs[2] = {ROWS, WIDTH}, ys[2] = {ROWS, OUT};
  float *x = malloc(sizeof(float) * ROWS * WIDTH), *y = malloc(sizeof(float) * ROWS * OUT);
  int rc = 1;
  if (!x || !y) {
    fprintf(stderr, "tickgrad_bench: out of host memory for the %d-row table\n", ROWS);
    goto done;
  }
  for (int i = 0; i < ROWS * WIDTH; i++) x[i] = tg_rng_normal(9, 0, (uint64_t)i);
  for (int i = 0; i < ROWS * OUT; i++) y[i] = tg_rng_normal(9, 1, (uint64_t)i);
  tg_tensor xt, yt;
  if (tg_device_upload(r->dev, x, sizeof(float) * ROWS * WIDTH, &r->xd) != TG_OK ||
      tg_device_upload(r->dev, y, sizeof(float) * ROWS * OUT, &r->yd) != TG_OK ||
      tg_tensor_view(&xt, "x", r->dev, TG_F32, 2, xs, r->xd) != TG_OK ||
      tg_tensor_view(&yt, "y", r->dev, TG_F32, 2, ys, r->yd) != TG_OK || tg_graph_bind(r->g, "x", &xt) != TG_OK ||
      tg_graph_bind(r->g, "y", &yt) != TG_OK)
    goto done;
  rc = 0;
done:
  free(x);
  free(y);
  return rc;
}

/* Builds, plans and binds the training step for batch rows drawn from the resident table. */
static int build(gpu_run *r, int batch, int capture) {
  int64_t xs[2] = {ROWS, WIDTH}, ys[2] = {ROWS, OUT};
  int64_t wh[2] = {WIDTH, WIDTH}, wo[2] = {OUT, WIDTH}, bh[1] = {WIDTH}, bo[1] = {OUT};
  tg_init fan = {TG_INIT_FAN_IN, 0, 0};
  r->s = tg_store_new(r->dev, 1);
  r->g = tg_graph_new(r->s, "mlp_step_gpu");
  if (!r->s || !r->g) return 1;
  tg_graph_set_seed(r->g, 1, 0);
  tg_tensor *idx = tg_sample_rows(r->g, ROWS, batch);
  tg_tensor *h = tg_gather_rows(r->g, tg_input(r->g, "x", TG_F32, 2, xs), idx);
  tg_tensor *y = tg_gather_rows(r->g, tg_input(r->g, "y", TG_F32, 2, ys), idx);
  h = tg_relu(r->g, tg_linear(r->g, h, tg_param(r->g, "l1.weight", 2, wh, fan), tg_param(r->g, "l1.bias", 1, bh, fan)));
  h = tg_relu(r->g, tg_linear(r->g, h, tg_param(r->g, "l2.weight", 2, wh, fan), tg_param(r->g, "l2.bias", 1, bh, fan)));
  h = tg_linear(r->g, h, tg_param(r->g, "l3.weight", 2, wo, fan), tg_param(r->g, "l3.bias", 1, bo, fan));
  tg_tensor *loss = tg_mse_loss(r->g, h, y);
  tg_plan_opts po = tg_plan_defaults(r->dev);
  po.training = 1;
  if (!loss || tg_graph_plan(r->g, &po) != TG_OK || upload_tables(r)) return 1;
  tg_optim_config oc = tg_optim_defaults(TG_ADAM);
  if (tg_optim_new(r->s, &oc, &r->opt) != TG_OK || tg_step_new(r->g, loss, r->opt, &r->step) != TG_OK) return 1;
  tg_step_set_capture(r->step, capture);
  return 0;
}

static int mlp_gpu(const char *name, int batch, int capture, int warmup, int reps, double *median_us) {
  gpu_run r;
  memset(&r, 0, sizeof r);
  int rc = choose_device(name, &r.dev);
  if (rc) return rc;
  rc = 1;
  r.times = malloc(sizeof(double) * (size_t)reps);
  if (!r.times || build(&r, batch, capture)) goto done;
  float loss = 0;
  /* at least 2 untimed steps, so the timed ones replay the captured graph */
  for (int i = 0; i < (warmup > 2 ? warmup : 2); i++)
    if (tg_step_run(r.step, &loss) != TG_OK) goto done;
  int captured = tg_step_captured(r.step);
  if (r.dev.kind == TG_CUDA && capture && !captured)
    fprintf(stderr, "tickgrad_bench %s: WARNING: the step was not captured, timing it eagerly: %s\n", name,
            tg_step_capture_error(r.step));
  tg_mem_stats m0, m1;
  if (tg_device_mem_stats(r.dev, &m0) != TG_OK) goto done;
  for (int i = 0; i < reps; i++) {
    double t0 = bench_now_us();
    if (tg_step_run(r.step, &loss) != TG_OK) goto done;
    r.times[i] = bench_now_us() - t0;
  }
  if (tg_device_mem_stats(r.dev, &m1) != TG_OK) goto done;
  if (!isfinite(loss)) {
    fprintf(stderr, "tickgrad_bench %s: the loss is %f after %d steps\n", name, loss, warmup + reps);
    goto done;
  }
  double h2d = (double)(m1.h2d_bytes - m0.h2d_bytes) / reps, d2h = (double)(m1.d2h_bytes - m0.d2h_bytes) / reps;
  fprintf(stderr, "%s transfers: h2d_per_step=%.1f d2h_per_step=%.1f h2d_per_epoch=%.1f steps_per_epoch=%d captured=%d\n",
          name, h2d, d2h, h2d * (ROWS / batch), ROWS / batch, captured);
  fprintf(stderr, "%s setup: h2d before the timed steps %" PRIu64 " B (the tables: %zu B); device memory peak %.1f MiB; last loss %.5f\n",
          name, m0.h2d_bytes, sizeof(float) * (size_t)ROWS * (WIDTH + OUT), (double)m1.peak / 1048576.0, loss);
  *median_us = bench_median(r.times, reps);
  rc = 0;
done:
  gpu_run_free(&r);
  return rc;
}

int bench_mlp_step_cuda_b64(int warmup, int reps, double *median_us) {
  return mlp_gpu("mlp_step_cuda_b64", 64, 1, warmup, reps, median_us);
}

int bench_mlp_step_cuda_b64_eager(int warmup, int reps, double *median_us) {
  return mlp_gpu("mlp_step_cuda_b64_eager", 64, 0, warmup, reps, median_us);
}

int bench_mlp_step_cuda_b4096(int warmup, int reps, double *median_us) {
  return mlp_gpu("mlp_step_cuda_b4096", 4096, 1, warmup, reps, median_us);
}
