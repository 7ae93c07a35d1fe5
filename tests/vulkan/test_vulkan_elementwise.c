/* The Vulkan kernels of the elementwise ops against the CPU's on the same inputs, forward and backward: the binary ops
 * with and without broadcasting (each side the smaller one, one or both gradients wanted), scale and every activation
 * over a range that reaches their branches (softplus past its threshold, elu and gelu far into the negatives), sizes
 * past one dispatch's 65535 workgroups. Backward adds into gradients that start non-zero, as the graph's do. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "graph/backend.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_test.h"

#define FWD_TOL 1e-5
#define BWD_TOL 1e-4

/* One tensor on the host and its copy on vulkan:0. */
typedef struct pair {
  int64_t n, shape[2];
  int ndim;
  float *host, *dev;
  tg_tensor th, td;
} pair;

static void pair_new(pair *p, const char *name, int ndim, const int64_t *shape) {
  p->ndim = ndim;
  p->n = 1;
  for (int d = 0; d < ndim; d++) p->shape[d] = shape[d], p->n *= shape[d];
  p->host = calloc((size_t)p->n, sizeof(float));
  CHECK_OK(tg_vk_alloc(0, sizeof(float) * (size_t)p->n, (void **)&p->dev));
  CHECK_OK(tg_tensor_view(&p->th, name, tg_cpu(0), TG_F32, ndim, p->shape, p->host));
  CHECK_OK(tg_tensor_view(&p->td, name, (tg_device){TG_VULKAN, 0}, TG_F32, ndim, p->shape, p->dev));
}

static void pair_upload(pair *p) { CHECK_OK(tg_vk_from_host(0, p->dev, p->host, sizeof(float) * (size_t)p->n)); }

static void pair_free(pair *p) {
  tg_vk_free(0, p->dev);
  free(p->host);
}

/* Uniform in [lo, hi) from a fixed sequence. */
static float draw(uint64_t *s, float lo, float hi) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (float)((*s >> 40) * (1.0 / 16777216.0));
}

static void fill(pair *p, uint64_t seed, float lo, float hi) {
  for (int64_t i = 0; i < p->n; i++) p->host[i] = draw(&seed, lo, hi);
  pair_upload(p);
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

static double g_worst[2]; /* the worst error seen forward, backward */

/* got (on the device) against want (host) within tol (the forward's when tol is FWD_TOL). */
static void compare(const char *what, const pair *p, const float *want, double tol) {
  float *got = malloc(sizeof(float) * (size_t)p->n);
  CHECK_OK(tg_vk_to_host(0, got, p->dev, sizeof(float) * (size_t)p->n));
  double e = worst_err(got, want, p->n), *w = &g_worst[tol != FWD_TOL];
  if (!(e <= *w)) *w = e;
  CHECK_MSG(e <= tol, "%s: worst relative error %.3g (tolerance %.1g) over %lld elements", what, e, tol,
            (long long)p->n);
  free(got);
}

/* Runs op forward and backward on the CPU and on vulkan:0 with inputs in[0..n_in), output shape of in[big], and
 * compares; want_grad[k] 0: input k's gradient not wanted. */
static void check_op(const char *name, int op, pair *in, int n_in, int big, const int *want_grad, const tg_attr *attr) {
  const tg_op_kernels *cpu = tg_cpu_op_kernels(op, TG_F32), *vk = tg_vk_op_kernels(op);
  CHECK_MSG(vk != NULL, "%s has no Vulkan kernel", name);
  if (!vk) return;
  pair out, dy, g[2];
  pair_new(&out, "out", in[big].ndim, in[big].shape);
  pair_new(&dy, "dy", in[big].ndim, in[big].shape);
  fill(&dy, 99, -1.0f, 1.0f);
  tg_kernel_args ah = {.n_in = n_in, .out = &out.th, .attr = attr, .node_name = name};
  tg_kernel_args ad = {.n_in = n_in, .out = &out.td, .attr = attr, .node_name = name};
  for (int k = 0; k < n_in; k++) ah.in[k] = &in[k].th, ad.in[k] = &in[k].td;
  CHECK_OK(cpu->fwd(&ah));
  CHECK_OK(vk->fwd(&ad));
  char what[96];
  snprintf(what, sizeof what, "%s forward", name);
  compare(what, &out, out.host, FWD_TOL);
  /* the backward reads the forward's output where it needs it: each side its own */
  ah.out_grad = dy.host, ad.out_grad = dy.dev;
  for (int k = 0; k < n_in; k++) {
    pair_new(&g[k], "g", in[k].ndim, in[k].shape);
    fill(&g[k], 7 + (uint64_t)k, -0.5f, 0.5f); /* gradients start non-zero: the kernels add */
    ah.in_grad[k] = want_grad[k] ? g[k].host : NULL;
    ad.in_grad[k] = want_grad[k] ? g[k].dev : NULL;
  }
  CHECK_OK(cpu->bwd(&ah));
  CHECK_OK(vk->bwd(&ad));
  for (int k = 0; k < n_in; k++) {
    snprintf(what, sizeof what, "%s backward, input %d%s", name, k, want_grad[k] ? "" : " (not wanted: unchanged)");
    compare(what, &g[k], g[k].host, BWD_TOL);
    pair_free(&g[k]);
  }
  pair_free(&out);
  pair_free(&dy);
}

/* a [ra, n / ra] op b [rb, n / rb]-like shapes: na and nb elements, the larger being the output. */
static void check_binary(const char *name, int op, int64_t rows, int64_t cols, int a_small, int b_small, int ga,
                         int gb) {
  pair in[2];
  int64_t full[2] = {rows, cols}, tail[1] = {cols};
  pair_new(&in[0], "a", a_small ? 1 : 2, a_small ? tail : full);
  pair_new(&in[1], "b", b_small ? 1 : 2, b_small ? tail : full);
  fill(&in[0], 1, -2.0f, 2.0f);
  fill(&in[1], 2, op == TG_OP_DIV ? 0.5f : -2.0f, 2.0f); /* a divisor away from 0 */
  char label[64];
  snprintf(label, sizeof label, "%s %s%s, grads %d%d", name, a_small ? "a broadcast" : "a full",
           b_small ? " b broadcast" : " b full", ga, gb);
  check_op(label, op, in, 2, a_small ? 1 : 0, (int[]){ga, gb}, NULL);
  pair_free(&in[0]);
  pair_free(&in[1]);
}

static void check_unary(const char *name, int op, float lo, float hi, float s, int64_t n) {
  pair in;
  pair_new(&in, "x", 1, (int64_t[]){n});
  fill(&in, 3, lo, hi);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.f[0] = s;
  char label[64];
  snprintf(label, sizeof label, "%s over [%g, %g)", name, lo, hi);
  check_op(label, op, &in, 1, 0, (int[]){1}, &attr);
  pair_free(&in);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  const struct { const char *name; int op; } bin[] = {
      {"add", TG_OP_ADD}, {"sub", TG_OP_SUB}, {"mul", TG_OP_MUL}, {"div", TG_OP_DIV}};
  for (int i = 0; i < 4; i++) {
    check_binary(bin[i].name, bin[i].op, 37, 300, 0, 0, 1, 1);
    check_binary(bin[i].name, bin[i].op, 37, 300, 0, 1, 1, 1); /* b [300] repeated over 37 rows */
    check_binary(bin[i].name, bin[i].op, 37, 300, 1, 0, 1, 1);
    check_binary(bin[i].name, bin[i].op, 37, 300, 0, 1, 0, 1); /* only the broadcast side's gradient */
    check_binary(bin[i].name, bin[i].op, 37, 300, 1, 0, 0, 1);
  }
  check_binary("add", TG_OP_ADD, 17, 1 << 20, 0, 0, 1, 1); /* 17M elements: more than one dispatch covers */
  const struct { const char *name; int op; float lo, hi, s; } un[] = {
      {"scale", TG_OP_SCALE, -3, 3, -1.75f}, {"relu", TG_OP_RELU, -3, 3, 0},   {"tanh", TG_OP_TANH, -6, 6, 0},
      {"tanh", TG_OP_TANH, -1e-3f, 1e-3f, 0}, {"sigmoid", TG_OP_SIGMOID, -30, 30, 0},
      {"elu", TG_OP_ELU, -12, 3, 1.0f},      {"elu", TG_OP_ELU, -1e-3f, 1e-3f, 0.5f},
      {"silu", TG_OP_SILU, -30, 30, 0},      {"softplus", TG_OP_SOFTPLUS, -40, 40, 0},
      {"exp", TG_OP_EXP, -20, 20, 0},        {"log", TG_OP_LOG, 1e-3f, 50, 0}, {"sqrt", TG_OP_SQRT, 1e-3f, 50, 0},
      {"gelu", TG_OP_GELU, -12, 12, 0}};
  for (size_t i = 0; i < sizeof un / sizeof *un; i++) check_unary(un[i].name, un[i].op, un[i].lo, un[i].hi, un[i].s, 5000);
  check_unary("gelu", TG_OP_GELU, -5, 5, 0, (int64_t)17 << 20);
  printf("vulkan:0: elementwise ops against the CPU's kernels: worst relative error %.2g forward (tolerance %.0e), "
         "%.2g backward (%.0e)\n", g_worst[0], FWD_TOL, g_worst[1], BWD_TOL);
  return tg_test_finish();
}
