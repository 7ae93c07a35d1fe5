/* The Vulkan op-check harness (vk_op_check.h): host and device tensors side by side, CPU kernels against Vulkan's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "graph/backend.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"

/* A pair of dtype and shape, zeros on the host, the device's copy not yet written. */
static void pair_new(vk_pair *p, const char *name, tg_dtype dtype, int ndim, const int64_t *shape) {
  p->ndim = ndim;
  p->n = 1;
  for (int d = 0; d < ndim; d++) p->shape[d] = shape[d], p->n *= shape[d];
  size_t bytes = tg_dtype_size(dtype) * (size_t)p->n;
  p->host = calloc(bytes ? bytes : 1, 1);
  CHECK_OK(tg_vk_alloc(0, bytes ? bytes : 4, (void **)&p->dev));
  CHECK_OK(tg_tensor_view(&p->th, name, tg_cpu(0), dtype, ndim, p->shape, p->host));
  CHECK_OK(tg_tensor_view(&p->td, name, (tg_device){TG_VULKAN, 0}, dtype, ndim, p->shape, p->dev));
}

void vk_pair_new(vk_pair *p, const char *name, int ndim, const int64_t *shape) {
  pair_new(p, name, TG_F32, ndim, shape);
}

void vk_pair_upload(vk_pair *p) {
  CHECK_OK(tg_vk_from_host(0, p->dev, p->host, tg_dtype_size(p->th.dtype) * (size_t)p->n));
}

void vk_pair_new_index(vk_pair *p, const char *name, tg_dtype dtype, int ndim, const int64_t *shape,
                       const int64_t *values) {
  pair_new(p, name, dtype, ndim, shape);
  for (int64_t i = 0; i < p->n; i++) {
    if (dtype == TG_I32) ((int32_t *)(void *)p->host)[i] = (int32_t)values[i];
    else ((int64_t *)(void *)p->host)[i] = values[i];
  }
  vk_pair_upload(p);
}

void vk_pair_free(vk_pair *p) {
  tg_vk_free(0, p->dev);
  free(p->host);
}

/* Uniform in [lo, hi) from a fixed sequence. */
static float draw(uint64_t *s, float lo, float hi) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (float)((*s >> 40) * (1.0 / 16777216.0));
}

void vk_pair_fill(vk_pair *p, uint64_t seed, float lo, float hi) {
  for (int64_t i = 0; i < p->n; i++) p->host[i] = draw(&seed, lo, hi);
  vk_pair_upload(p);
}

/* The worst of |got - want| / (1 + |want|) over n, NaN where only one side is NaN. */
static double worst_err(const float *got, const float *want, int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(got[i]) || isnan(want[i])) {
      if (isnan(got[i]) != isnan(want[i])) return NAN;
      continue;
    }
    double e = fabs((double)got[i] - want[i]) / (1.0 + fabs((double)want[i]));
    if (e > worst) worst = e;
  }
  return worst;
}

static uint64_t g_rng[3]; /* vk_set_rng: seed, stream, offset */

void vk_set_rng(uint64_t seed, uint64_t stream, uint64_t offset) {
  g_rng[0] = seed, g_rng[1] = stream, g_rng[2] = offset;
}

static double g_worst[2];                /* the worst error seen forward, backward at the default tolerances */
static double g_bwd_tol = VK_BWD_TOL; /* vk_set_bwd_tol */

double vk_set_bwd_tol(double tol) {
  double old = g_bwd_tol;
  g_bwd_tol = tol;
  return old;
}

/* A forward's output (on the device) against the CPU's (want) within tol. */
static void compare(const char *what, const vk_pair *p, const float *want, double tol) {
  float *got = malloc(sizeof(float) * (size_t)p->n);
  CHECK_OK(tg_vk_to_host(0, got, p->dev, sizeof(float) * (size_t)p->n));
  double e = worst_err(got, want, p->n);
  if (tol == VK_FWD_TOL && !(e <= g_worst[0])) g_worst[0] = e;
  CHECK_MSG(e <= tol, "%s: worst relative error %.3g (tolerance %.1g) over %lld elements", what, e, tol,
            (long long)p->n);
  free(got);
}

/* A backward's gradient (on the device) against the CPU's (want), both having added into init: what each side added,
 * the largest difference relative to the largest of the CPU's increments, so that small gradients (a mean loss's are
 * 1/n) are held to the same standard as large ones; a gradient nobody wrote (all increments 0) must stay bitwise as
 * it was. */
static void compare_grad(const char *what, const vk_pair *p, const float *want, const float *init, double tol) {
  float *got = malloc(sizeof(float) * (size_t)p->n);
  CHECK_OK(tg_vk_to_host(0, got, p->dev, sizeof(float) * (size_t)p->n));
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < p->n; i++) {
    double d = fabs((double)got[i] - want[i]), inc = fabs((double)want[i] - init[i]);
    if (isnan(got[i]) != isnan(want[i]) || (!isnan(want[i]) && !(d <= diff))) diff = isnan(d) ? INFINITY : d;
    if (inc > scale) scale = inc;
  }
  double e = scale > 0 ? diff / scale : memcmp(got, init, sizeof(float) * (size_t)p->n) == 0 ? 0 : INFINITY;
  if (tol == VK_BWD_TOL && !(e <= g_worst[1])) g_worst[1] = e;
  CHECK_MSG(e <= tol, "%s: worst difference %.3g of the largest increment (tolerance %.1g) over %lld elements", what, e,
            tol, (long long)p->n);
  free(got);
}

static int g_cases;                 /* checks made (vk_check_op, vk_check_fwd_exact) */
static unsigned char g_op_seen[TG_OP_COUNT]; /* [op] 1 once an op was checked */

/* Counts one check of op for vk_report's line. */
static void count_case(int op) {
  g_cases++;
  if (op >= 0 && op < TG_OP_COUNT) g_op_seen[op] = 1;
}

void vk_check_op(const char *name, int op, vk_pair *in, int n_in, int out_ndim, const int64_t *out_shape,
                 const int *want_grad, const tg_attr *attr) {
  const tg_op_kernels *cpu = tg_cpu_op_kernels(op, TG_F32), *vk = tg_vk_op_kernels(op);
  CHECK_MSG(vk != NULL, "%s has no Vulkan kernel", name);
  if (!vk) return;
  count_case(op);
  vk_pair out, dy, g[TG_MAX_INPUTS];
  float *init[TG_MAX_INPUTS]; /* each gradient as it started */
  vk_pair_new(&out, "out", out_ndim, out_shape);
  vk_pair_new(&dy, "dy", out_ndim, out_shape);
  vk_pair_fill(&dy, 99, -1.0f, 1.0f);
  tg_kernel_args ah = {.n_in = n_in, .out = &out.th, .attr = attr, .node_name = name, .seed = g_rng[0],
                       .rng_stream = g_rng[1], .rng_offset = g_rng[2]};
  tg_kernel_args ad = ah;
  ad.out = &out.td;
  for (int k = 0; k < n_in; k++) ah.in[k] = &in[k].th, ad.in[k] = &in[k].td;
  /* the CPU's workspace where the op has one, for the forward and then the backward (the Vulkan kernels keep theirs
   * in the device's scratch) */
  size_t (*ws_of)(const tg_kernel_args *) = tg_op_get((tg_op)op)->workspace;
  void *ws = NULL;
  ah.ws_bytes = ws_of ? ws_of(&ah) : 0;
  ah.ws = ws = ah.ws_bytes ? malloc(ah.ws_bytes) : NULL;
  CHECK_OK(cpu->fwd(&ah));
  CHECK_OK(vk->fwd(&ad));
  char what[96];
  snprintf(what, sizeof what, "%s forward", name);
  compare(what, &out, out.host, VK_FWD_TOL);
  /* the backward reads the forward's output where it needs it: each side its own */
  ah.out_grad = dy.host, ad.out_grad = dy.dev;
  for (int k = 0; k < n_in; k++) {
    vk_pair_new(&g[k], "g", in[k].ndim, in[k].shape);
    vk_pair_fill(&g[k], 7 + (uint64_t)k, -0.5f, 0.5f); /* gradients start non-zero: the kernels add */
    init[k] = malloc(sizeof(float) * (size_t)g[k].n);
    memcpy(init[k], g[k].host, sizeof(float) * (size_t)g[k].n);
    ah.in_grad[k] = want_grad[k] ? g[k].host : NULL;
    ad.in_grad[k] = want_grad[k] ? g[k].dev : NULL;
  }
  free(ws);
  ah.ws_bytes = ws_of ? ws_of(&ah) : 0;
  ah.ws = ws = ah.ws_bytes ? malloc(ah.ws_bytes) : NULL;
  CHECK_OK(cpu->bwd(&ah));
  CHECK_OK(vk->bwd(&ad));
  for (int k = 0; k < n_in; k++) {
    snprintf(what, sizeof what, "%s backward, input %d%s", name, k, want_grad[k] ? "" : " (not wanted: unchanged)");
    compare_grad(what, &g[k], g[k].host, init[k], g_bwd_tol);
    vk_pair_free(&g[k]);
    free(init[k]);
  }
  free(ws);
  vk_pair_free(&out);
  vk_pair_free(&dy);
}

void vk_check_fwd_exact(const char *name, int op, vk_pair *in, int n_in, tg_dtype dtype, int out_ndim,
                        const int64_t *out_shape, const tg_attr *attr) {
  const tg_op_kernels *cpu = tg_cpu_op_kernels(op, TG_F32), *vk = tg_vk_op_kernels(op);
  CHECK_MSG(vk != NULL, "%s has no Vulkan kernel", name);
  if (!vk) return;
  count_case(op);
  vk_pair out;
  pair_new(&out, "out", dtype, out_ndim, out_shape);
  tg_kernel_args ah = {.n_in = n_in, .out = &out.th, .attr = attr, .node_name = name, .seed = g_rng[0],
                       .rng_stream = g_rng[1], .rng_offset = g_rng[2]};
  tg_kernel_args ad = ah;
  ad.out = &out.td;
  for (int k = 0; k < n_in; k++) ah.in[k] = &in[k].th, ad.in[k] = &in[k].td;
  CHECK_OK(cpu->fwd(&ah));
  CHECK_OK(vk->fwd(&ad));
  size_t bytes = tg_dtype_size(dtype) * (size_t)out.n;
  char *got = malloc(bytes ? bytes : 1);
  CHECK_OK(tg_vk_to_host(0, got, out.dev, bytes));
  size_t first = 0;
  while (first < bytes && got[first] == ((char *)out.host)[first]) first++;
  CHECK_MSG(first == bytes, "%s forward: differs from the CPU's from element %zu of %lld", name,
            first / tg_dtype_size(dtype), (long long)out.n);
  free(got);
  vk_pair_free(&out);
}

tg_status vk_run_fwd(int op, vk_pair *in, int n_in, tg_dtype dtype, int out_ndim, const int64_t *out_shape,
                     const tg_attr *attr) {
  const tg_op_kernels *vk = tg_vk_op_kernels(op);
  vk_pair out;
  pair_new(&out, "out", dtype, out_ndim, out_shape);
  tg_kernel_args ad = {.n_in = n_in, .out = &out.td, .attr = attr, .node_name = "bad input"};
  for (int k = 0; k < n_in; k++) ad.in[k] = &in[k].td;
  tg_status st = vk ? vk->fwd(&ad) : TG_ERR_UNSUPPORTED;
  vk_pair_free(&out);
  return st;
}

void vk_report(const char *what, const char *note) {
  int ops = 0;
  for (int op = 0; op < TG_OP_COUNT; op++) ops += g_op_seen[op];
  printf("vulkan:0: %s against the CPU's kernels, %d op%s in %d case%s: worst error %.2g forward (relative; tolerance "
         "%.0e), %.2g backward (of the largest increment; tolerance %.0e)%s\n", what, ops, ops == 1 ? "" : "s", g_cases,
         g_cases == 1 ? "" : "s", g_worst[0], VK_FWD_TOL, g_worst[1], VK_BWD_TOL, note);
}
