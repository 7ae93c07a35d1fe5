/* CUDA optimizer update against the CPU's: SGD, momentum, Adam, AdamW, clipping, LR schedules, the NaN guard; parameters, state, norm and LR after every step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/backend.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"

#define STEPS 7
#define NAN_STEP 4 /* this step's gradient has a NaN: both devices must skip it */

typedef struct oc_case {
  const char *name;
  tg_optim_config c;
} oc_case;

/* A store on dev with a matrix big enough for the sum-of-squares kernel's grid-stride loop
 * (300 x 250 > 256 blocks x 256 threads), a small matrix and a bias (weight decay applies to
 * matrices only). */
static tg_store *make_store(tg_device dev) {
  tg_store *s = tg_store_new(dev, 42);
  tg_graph *g = tg_graph_new(s, "optim");
  int64_t big[2] = {300, 250}, w[2] = {37, 29}, b[1] = {29};
  tg_init u = {TG_INIT_UNIFORM, -1.0f, 1.0f};
  CHECK(tg_param(g, "big", 2, big, u) != NULL);
  CHECK(tg_param(g, "w", 2, w, u) != NULL);
  CHECK(tg_param(g, "b", 1, b, u) != NULL);
  CHECK_OK(tg_store_finalize(s));
  tg_graph_free(g);
  return s;
}

static void make_grads(float *g, size_t n, int step) {
  for (size_t i = 0; i < n; i++) g[i] = 0.2f * (2.0f * tg_rng_uniform(9, (uint64_t)step, (uint64_t)i) - 1.0f);
  if (step == NAN_STEP) g[n / 2] = NAN;
}

/* The largest |got - want| / (1 + |want|) and whether every float is bitwise equal. */
static double rel_err(const float *got, const float *want, size_t n, int *bitwise) {
  double worst = 0.0;
  *bitwise = memcmp(got, want, n * sizeof(float)) == 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)got[i] - (double)want[i]) / (1.0 + fabs((double)want[i]));
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

static void run_case(const oc_case *k, int *bit_cases) {
  const tg_backend *gpu = tg_backend_for(TG_CUDA);
  tg_store *sc = make_store(tg_cpu(0)), *sg = make_store(tg_cuda(0));
  size_t n = tg_store_numel(sc);
  CHECK(n == tg_store_numel(sg));
  float *host = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
  tg_optim *oc = NULL, *og = NULL;
  CHECK_OK(tg_optim_new(sc, &k->c, &oc));
  CHECK_OK(tg_optim_new(sg, &k->c, &og));
  /* the same starting values on both (a store's initialisation is per device) */
  CHECK_OK(gpu->from_host(tg_cuda(0), tg_store_values(sg), tg_store_values(sc), n * sizeof(float)));
  double worst = 0.0;
  int all_bitwise = 1;
  for (int t = 0; t < STEPS && oc && og; t++) {
    make_grads(host, n, t);
    memcpy(tg_store_grads(sc), host, n * sizeof(float));
    CHECK_OK(gpu->from_host(tg_cuda(0), tg_store_grads(sg), host, n * sizeof(float)));
    tg_status a = tg_optim_step(oc), b = tg_optim_step(og);
    CHECK_MSG(a == b, "%s step %d: cpu %s, cuda %s", k->name, t, tg_status_name(a), tg_status_name(b));
    if (t == NAN_STEP) CHECK_MSG(a == TG_ERR_NUMERIC, "%s: the NaN step was not refused (%s)", k->name, tg_status_name(a));
    CHECK_MSG(tg_optim_steps(oc) == tg_optim_steps(og), "%s step %d: %lld steps on cpu, %lld on cuda", k->name, t,
              (long long)tg_optim_steps(oc), (long long)tg_optim_steps(og));
    float nc = tg_optim_last_grad_norm(oc), ng = tg_optim_last_grad_norm(og);
    CHECK_MSG((isnan(nc) && isnan(ng)) || fabs((double)nc - (double)ng) <= 1e-6 * (1.0 + fabs((double)nc)),
              "%s step %d: gradient norm cpu %.9g, cuda %.9g", k->name, t, (double)nc, (double)ng);
    CHECK_MSG(tg_optim_last_lr(oc) == tg_optim_last_lr(og), "%s step %d: lr cpu %.9g, cuda %.9g", k->name, t,
              (double)tg_optim_last_lr(oc), (double)tg_optim_last_lr(og));
    int bit;
    CHECK_OK(tg_device_download(tg_cuda(0), got, tg_store_values(sg), n * sizeof(float)));
    double e = rel_err(got, tg_store_values(sc), n, &bit);
    CHECK_MSG(e <= 1e-6, "%s step %d: parameters differ by %.3g", k->name, t, e);
    worst = e > worst ? e : worst;
    all_bitwise &= bit;
    for (int s = 0; s < tg_optim_state_count(oc); s++) {
      const char *nm = NULL;
      float *want = tg_optim_state(oc, s, &nm), *have = tg_optim_state(og, s, NULL);
      CHECK_OK(tg_device_download(tg_cuda(0), got, have, n * sizeof(float)));
      e = rel_err(got, want, n, &bit);
      CHECK_MSG(e <= 1e-6, "%s step %d: state %s differs by %.3g", k->name, t, nm, e);
      worst = e > worst ? e : worst;
      all_bitwise &= bit;
    }
  }
  printf("  %-26s %d steps (step %d NaN, skipped): worst rel error %.2g%s\n", k->name, STEPS, NAN_STEP, worst,
         all_bitwise ? ", bitwise equal" : "");
  *bit_cases += all_bitwise;
  tg_optim_free(oc);
  tg_optim_free(og);
  free(host);
  free(got);
  tg_store_free(sc);
  tg_store_free(sg);
}

int main(void) {
  if (tg_cuda_count() == 0) {
    const char *want = getenv("TG_EXPECT_CUDA_DEVICE");
    if (want && want[0] == '1') {
      CHECK_MSG(0, "TG_EXPECT_CUDA_DEVICE=1 but no CUDA device: %s", tg_cuda_why_none());
      return tg_test_finish();
    }
    return tg_test_skip("no CUDA device");
  }
  tg_optim_config sgd = tg_optim_defaults(TG_SGD), mom = tg_optim_defaults(TG_SGD), adam = tg_optim_defaults(TG_ADAM),
                  adamw = tg_optim_defaults(TG_ADAMW), clip = tg_optim_defaults(TG_ADAMW),
                  sgd_clip = tg_optim_defaults(TG_SGD), cosine = tg_optim_defaults(TG_ADAM);
  mom.momentum = 0.9f, mom.weight_decay = 0.01f;
  adam.weight_decay = 0.02f, adam.lr = 3e-3f;
  adamw.weight_decay = 0.1f, adamw.lr = 1e-2f;
  clip.clip_norm = 0.5f, clip.lr = 1e-2f;
  sgd_clip.clip_norm = 1.0f, sgd_clip.momentum = 0.5f;
  cosine.schedule = (tg_lr_schedule){TG_LR_COSINE, 2, STEPS, 0.1f};
  tg_optim_config linear = mom;
  linear.schedule = (tg_lr_schedule){TG_LR_LINEAR, 1, STEPS, 0.0f};
  const oc_case cases[] = {
      {"sgd", sgd},
      {"sgd momentum + L2", mom},
      {"sgd momentum, linear lr", linear},
      {"sgd momentum, clip 1.0", sgd_clip},
      {"adam + L2", adam},
      {"adam, cosine lr", cosine},
      {"adamw", adamw},
      {"adamw, clip 0.5", clip},
  };
  int n = (int)(sizeof cases / sizeof cases[0]), bitwise = 0;
  printf("optimizer update, cuda:0 against cpu:0:\n");
  for (int i = 0; i < n; i++) run_case(&cases[i], &bitwise);
  printf("cuda optim: %d cases, %d bitwise equal to the CPU\n", n, bitwise);
  return tg_test_finish();
}
