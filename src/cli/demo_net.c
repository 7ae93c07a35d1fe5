/* The demo's network and data: a seeded synthetic regression, an MLP with its loss, and the tables it reads on the device. */
#include <math.h>
#include <stdio.h>
#include "cli/demo_net.h"

/* y = sin(2 x0) + x1 x2 - 0.5 x3^2 + 0.25 x4 (x5..x7 are distractors) */
void make_rows(uint64_t seed, uint64_t stream, long n, float *x /* [n, F] */, float *y /* [n] */) {
  for (long r = 0; r < n; r++) {
    float *xr = x + r * FEATURES;
    for (int f = 0; f < FEATURES; f++) xr[f] = 2.0f * tg_rng_uniform(seed, stream, (uint64_t)(r * FEATURES + f)) - 1.0f;
    y[r] = sinf(2.0f * xr[0]) + xr[1] * xr[2] - 0.5f * xr[3] * xr[3] + 0.25f * xr[4];
  }
}

/* The MLP on x [B, F] -> MSE against y [B, 1]. */
static tg_tensor *mlp_loss(tg_graph *g, tg_tensor *x, tg_tensor *y) {
  int64_t w1[2] = {HIDDEN, FEATURES}, w2[2] = {HIDDEN, HIDDEN}, w3[2] = {1, HIDDEN}, bh[1] = {HIDDEN}, b1[1] = {1};
  tg_init fan = {TG_INIT_FAN_IN, 0, 0};
  tg_tensor *h = tg_silu(g, tg_linear(g, x, tg_param(g, "l1.weight", 2, w1, fan), tg_param(g, "l1.bias", 1, bh, fan)));
  h = tg_silu(g, tg_linear(g, h, tg_param(g, "l2.weight", 2, w2, fan), tg_param(g, "l2.bias", 1, bh, fan)));
  tg_tensor *p = tg_linear(g, h, tg_param(g, "l3.weight", 2, w3, fan), tg_param(g, "l3.bias", 1, b1, fan));
  return tg_mse_loss(g, p, y);
}

/* Training: the batch is drawn and gathered on the device from the resident tables x [rows, F],
 * y [rows, 1], so a step moves no data from the host. */
tg_tensor *build_train(tg_graph *g, long rows, long batch) {
  int64_t xs[2] = {rows, FEATURES}, ys[2] = {rows, 1};
  tg_tensor *idx = tg_sample_rows(g, rows, batch);
  return mlp_loss(g, tg_gather_rows(g, tg_input(g, "x", TG_F32, 2, xs), idx),
                  tg_gather_rows(g, tg_input(g, "y", TG_F32, 2, ys), idx));
}

/* Evaluation: the whole held-out table at once. */
tg_tensor *build_eval(tg_graph *g, long rows) {
  int64_t xs[2] = {rows, FEATURES}, ys[2] = {rows, 1};
  return mlp_loss(g, tg_input(g, "x", TG_F32, 2, xs), tg_input(g, "y", TG_F32, 2, ys));
}

tg_status table_make(demo_table *t, tg_device dev, const char *name, const float *x, const float *y, long rows) {
  int64_t xs[2] = {rows, FEATURES}, ys[2] = {rows, 1};
  char nx[64], ny[64];
  snprintf(nx, sizeof nx, "%s.x", name);
  snprintf(ny, sizeof ny, "%s.y", name);
  t->dev = dev;
  tg_status st = tg_device_upload(dev, x, sizeof(float) * (size_t)rows * FEATURES, &t->x);
  if (st == TG_OK) st = tg_device_upload(dev, y, sizeof(float) * (size_t)rows, &t->y);
  if (st == TG_OK) st = tg_tensor_view(&t->tx, nx, dev, TG_F32, 2, xs, t->x);
  if (st == TG_OK) st = tg_tensor_view(&t->ty, ny, dev, TG_F32, 2, ys, t->y);
  return st;
}

void table_free(demo_table *t) {
  tg_device_free(t->dev, t->x);
  tg_device_free(t->dev, t->y);
}

