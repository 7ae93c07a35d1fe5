/* The Vulkan backend's optimizer entries against the CPU's: SGD (with and without momentum), Adam and AdamW over four
 * steps with clipping, a warm-up and cosine schedule and two weight-decay segments (values, state and the step's
 * scalars compared, the bf16 mirror checked bit for bit against the values it mirrors); a gradient with a NaN skips
 * the step and changes nothing; the sum of squares; the run counter across a 32-bit carry. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu_optim.h"
#include "backend/vulkan/vk_memory.h"
#include "base/bf16.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_test.h"

#define N 3001

static const tg_device VK = {TG_VULKAN, 0};

/* Uniform in [lo, hi) from a fixed sequence. */
static float draw(uint64_t *s, float lo, float hi) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (float)((*s >> 40) * (1.0 / 16777216.0));
}

/* A device copy of host [n] floats. */
static float *dev_copy(const float *host, size_t n) {
  float *d = NULL;
  CHECK_OK(tg_vk_alloc(0, sizeof(float) * n, (void **)&d));
  CHECK_OK(tg_vk_from_host(0, d, host, sizeof(float) * n));
  return d;
}

/* The worst |got - want| / (1 + |want|) of a device buffer against host values. */
static double worst(const float *dev, const float *want, size_t n) {
  float *got = malloc(sizeof(float) * n);
  CHECK_OK(tg_vk_to_host(0, got, dev, sizeof(float) * n));
  double w = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)got[i] - want[i]) / (1.0 + fabs((double)want[i]));
    if (!(e <= w)) w = isnan(e) ? INFINITY : e;
  }
  free(got);
  return w;
}

/* Four steps of kind on both sides; nan_step: the step whose gradient holds a NaN (-1: none). */
static void check_update(const char *label, tg_optim_kind kind, float momentum, int nan_step) {
  uint64_t seed = 5;
  float *p = malloc(sizeof(float) * N), *g = malloc(sizeof(float) * N), *m = calloc(N, sizeof(float));
  float *v = calloc(N, sizeof(float));
  uint16_t *pb = calloc(N, sizeof(uint16_t));
  for (int i = 0; i < N; i++) p[i] = draw(&seed, -1.0f, 1.0f);
  float *dp = dev_copy(p, N), *dg = dev_copy(p, N), *dm = dev_copy(m, N), *dv = dev_copy(v, N);
  uint16_t *dpb = NULL;
  tg_optim_scalars sc_h = {0}, *dsc = NULL, sc_d;
  CHECK_OK(tg_vk_alloc(0, sizeof sc_h, (void **)&dsc));
  CHECK_OK(tg_vk_from_host(0, dsc, &sc_h, sizeof sc_h));
  CHECK_OK(tg_vk_alloc(0, sizeof(uint16_t) * (N + 1), (void **)&dpb));
  tg_optim_seg segs[2] = {{0, 1001, 0.01f}, {1001, N - 1001, 0.0f}};
  tg_optim_update u = {.kind = kind, .lr = 0.05f, .momentum = momentum, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                       .clip_norm = 3.0f, .schedule = {TG_LR_COSINE, 2, 10, 0.1f}, .numel = N, .n_seg = 2,
                       .segs = segs};
  for (int step = 0; step < 4; step++) {
    for (int i = 0; i < N; i++) g[i] = draw(&seed, -0.2f, 0.2f);
    if (step == nan_step) g[17] = NAN;
    CHECK_OK(tg_vk_from_host(0, dg, g, sizeof(float) * N));
    tg_optim_update uh = u, ud = u;
    uh.values = p, uh.values_bf16 = pb, uh.grads = g, uh.m = m, uh.v = v, uh.scalars = &sc_h;
    ud.values = dp, ud.values_bf16 = dpb, ud.grads = dg, ud.m = dm, ud.v = dv, ud.scalars = dsc;
    if (kind == TG_SGD && momentum == 0.0f) uh.m = ud.m = NULL;
    if (kind == TG_SGD) uh.v = ud.v = NULL;
    CHECK_OK(tg_cpu_optim_update(tg_cpu(0), &uh));
    CHECK_OK(tg_backend_for(TG_VULKAN)->optim_update(VK, &ud));
    CHECK_OK(tg_vk_to_host(0, &sc_d, dsc, sizeof sc_d));
    CHECK_MSG(sc_d.step == sc_h.step && sc_d.skipped == sc_h.skipped, "%s step %d: step %lld skipped %d, CPU %lld %d",
              label, step, (long long)sc_d.step, sc_d.skipped, (long long)sc_h.step, sc_h.skipped);
    CHECK_MSG(fabs(sc_d.norm - sc_h.norm) <= 1e-5 * sc_h.norm || (isnan(sc_d.norm) && isnan(sc_h.norm)),
              "%s step %d: norm %g, CPU %g", label, step, sc_d.norm, sc_h.norm);
    if (!sc_h.skipped) {
      CHECK_MSG(fabs(sc_d.lr - sc_h.lr) <= 1e-6 * sc_h.lr && fabs(sc_d.gscale - sc_h.gscale) <= 1e-5,
                "%s step %d: lr %g gscale %g, CPU %g %g", label, step, sc_d.lr, sc_d.gscale, sc_h.lr, sc_h.gscale);
      CHECK_MSG(fabs(sc_d.bc1 - sc_h.bc1) <= 1e-6 && fabs(sc_d.bc2 - sc_h.bc2) <= 1e-6 &&
                    fabs(sc_d.sumsq - sc_h.sumsq) <= 1e-5 * sc_h.sumsq,
                "%s step %d: bc1 %g bc2 %g sumsq %g, CPU %g %g %g", label, step, sc_d.bc1, sc_d.bc2, sc_d.sumsq,
                sc_h.bc1, sc_h.bc2, sc_h.sumsq);
    }
    double e = worst(dp, p, N);
    CHECK_MSG(e <= 1e-5, "%s step %d: values differ by %.3g", label, step, e);
    if (uh.m) CHECK_MSG(worst(dm, m, N) <= 1e-5, "%s step %d: first moment differs", label, step);
    if (uh.v) CHECK_MSG(worst(dv, v, N) <= 1e-5, "%s step %d: second moment differs", label, step);
  }
  float got[N];
  uint16_t mirror[N];
  CHECK_OK(tg_vk_to_host(0, got, dp, sizeof got));
  CHECK_OK(tg_vk_to_host(0, mirror, dpb, sizeof mirror));
  int bad = -1;
  for (int i = 0; i < N && bad < 0; i++)
    if (mirror[i] != tg_bf16_from_f32(got[i])) bad = i;
  CHECK_MSG(bad < 0, "%s: the bf16 mirror's element %d is not its value rounded", label, bad);
  tg_vk_free(0, dp), tg_vk_free(0, dg), tg_vk_free(0, dm), tg_vk_free(0, dv), tg_vk_free(0, dpb), tg_vk_free(0, dsc);
  free(p), free(g), free(m), free(v), free(pb);
}

static void check_sum_squares(void) {
  uint64_t seed = 6;
  size_t n = 3000000;
  float *g = malloc(sizeof(float) * n);
  for (size_t i = 0; i < n; i++) g[i] = draw(&seed, -2.0f, 2.0f);
  float *dg = dev_copy(g, n);
  double want, got;
  CHECK_OK(tg_cpu_sum_squares(tg_cpu(0), g, n, &want));
  CHECK_OK(tg_backend_for(TG_VULKAN)->sum_squares(VK, dg, n, &got));
  CHECK_MSG(fabs(got - want) <= 1e-5 * want, "sum of squares %.9g, CPU %.9g", got, want);
  tg_vk_free(0, dg);
  free(g);
}

static void check_counter(void) {
  uint64_t c[2] = {UINT32_MAX, 7}, *dc = NULL;
  CHECK_OK(tg_vk_alloc(0, sizeof c, (void **)&dc));
  CHECK_OK(tg_vk_from_host(0, dc, c, sizeof c));
  CHECK_OK(tg_backend_for(TG_VULKAN)->advance_counter(VK, dc));
  CHECK_OK(tg_vk_to_host(0, c, dc, sizeof c));
  CHECK_MSG(c[0] == (uint64_t)UINT32_MAX + 1 && c[1] == UINT32_MAX, "run counter %llu, %llu after a step",
            (unsigned long long)c[0], (unsigned long long)c[1]);
  tg_vk_free(0, dc);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  check_update("sgd, momentum", TG_SGD, 0.9f, -1);
  check_update("sgd", TG_SGD, 0.0f, -1);
  check_update("adam", TG_ADAM, 0.0f, -1);
  check_update("adamw, a NaN gradient at step 2", TG_ADAMW, 0.0f, 2);
  check_sum_squares();
  check_counter();
  printf("vulkan:0: the optimizer's update, sum of squares and run counter against the CPU's\n");
  return tg_test_finish();
}
