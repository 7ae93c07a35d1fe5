/* The agents' graph plumbing: planning, binding host or device buffers, reading outputs, device buffers, argmax. */
#include <stdio.h>
#include <string.h>
#include "graph/backend.h"
#include "agents/rl_internal.h"
#include "tickgrad/device.h"

tg_status rl_backend_check(const char *what, tg_device dev) {
  char d[16];
  if (tg_backend_for(dev.kind)) return TG_OK;
  return tg_error(TG_ERR_DEVICE, "%s: %s is not compiled into this build", what, tg_device_str(dev, d, sizeof d));
}

tg_status rl_hidden_check(const char *what, int n_hidden, const int *hidden) {
  if (n_hidden < 0 || n_hidden > RL_MAX_HIDDEN)
    return tg_error(TG_ERR_INVALID, "%s: %d hidden layers; 0 to %d are supported", what, n_hidden, RL_MAX_HIDDEN);
  for (int k = 0; k < n_hidden; k++)
    if (hidden[k] < 1) return tg_error(TG_ERR_INVALID, "%s: hidden layer %d has width %d; need >= 1", what, k, hidden[k]);
  return TG_OK;
}

tg_status rl_plan(tg_graph *g, tg_device dev, int training, tg_precision precision) {
  tg_status st = tg_graph_status(g);
  if (st != TG_OK) return st;
  tg_plan_opts po = tg_plan_defaults(dev);
  po.training = training;
  po.precision = tg_precision_dtype(precision);
  return tg_graph_plan(g, &po);
}

void rl_precision_settle(tg_precision *precision, tg_device dev, const int *hidden, int n_hidden, FILE *log) {
  int widest = 0;
  for (int k = 0; k < n_hidden; k++) widest = hidden[k] > widest ? hidden[k] : widest;
  char notice[512];
  tg_precision_resolve(precision, dev, widest, notice, sizeof notice);
  if (notice[0] && log) fprintf(log, "%s\n", notice);
}

tg_status rl_bind(tg_graph *g, const char *name, tg_device dev, tg_dtype dt, int ndim, const int64_t *shape, void *data) {
  tg_tensor t;
  tg_status st = tg_tensor_view(&t, name, dev, dt, ndim, shape, data);
  return st == TG_OK ? tg_graph_bind(g, name, &t) : st;
}

tg_status rl_read_out(int host, tg_device dev, const tg_tensor *t, float *copy, size_t count, const float **out) {
  if (host) {
    *out = (const float *)t->data;
    return TG_OK;
  }
  *out = copy;
  return tg_backend_for(dev.kind)->to_host(dev, copy, t->data, count * sizeof(float));
}

tg_status rl_dev_zeros(tg_device dev, size_t bytes, void **out) {
  const tg_backend *be = tg_backend_for(dev.kind);
  tg_status st = be->alloc(dev, bytes, out);
  return st == TG_OK ? be->fill_bytes(dev, *out, bytes, 0) : st;
}

void rl_dev_free(tg_device dev, void *const *bufs, int n) {
  const tg_backend *be = tg_backend_for(dev.kind);
  for (int k = 0; be && k < n; k++)
    if (bufs[k]) be->free(dev, bufs[k]);
}

int rl_argmax(const float *q, int a) {
  int best = 0;
  for (int k = 1; k < a; k++)
    if (q[k] > q[best]) best = k;
  return best;
}
