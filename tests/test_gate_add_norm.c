/* Op tests for gate_add_norm: float64 references, finite-difference gradients, the unfused chain, the chunked parallel backward, builder errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "ops/gate_norm_args.h"
#include "support/check.h"
#include "support/op_check.h"
#include "tickgrad/tickgrad.h"

#define EPS 1e-5f

typedef struct gan_ctx {
  int affine;
} gan_ctx;

static tg_tensor *build_gan(tg_graph *g, tg_tensor **in, const void *ctx) {
  const gan_ctx *c = ctx;
  return tg_gate_add_norm(g, in[0], in[1], c->affine ? in[2] : NULL, c->affine ? in[3] : NULL, EPS);
}

/* a [rows, 2D], skip [rows, D], gamma/beta [S, D] (row r uses slot r % S); out [rows, D] */
static void ref_gan(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const gan_ctx *c = ctx;
  const oc_input *sk = &spec[1];
  int64_t D = sk->shape[sk->ndim - 1], rows = oc_numel(sk) / D, S = c->affine ? oc_numel(&spec[2]) / D : 1;
  double *z = malloc(sizeof(double) * (size_t)D);
  if (!z) return;
  for (int64_t r = 0; r < rows; r++) {
    const double *val = in[0] + r * 2 * D, *gate = val + D;
    double mu = 0.0, var = 0.0;
    for (int64_t j = 0; j < D; j++) {
      z[j] = in[1][r * D + j] + val[j] / (1.0 + exp(-gate[j]));
      mu += z[j];
    }
    mu /= (double)D;
    for (int64_t j = 0; j < D; j++) var += (z[j] - mu) * (z[j] - mu);
    double rstd = 1.0 / sqrt(var / (double)D + EPS);
    for (int64_t j = 0; j < D; j++) {
      double v = (z[j] - mu) * rstd;
      if (c->affine) v = v * in[2][r % S * D + j] + in[3][r % S * D + j];
      out[r * D + j] = v;
    }
  }
  free(z);
}

/* skip of shape sshape [ndim]; a the same with last dim 2D; affine over the last `andim` dims
 * (0: none). */
static void run_gan(unsigned long long seed, const char *name, int ndim, const int64_t *sshape, int andim,
                    int diff_inputs) {
  static const gan_ctx with = {1}, without = {0};
  int64_t ashape[TG_MAX_DIMS];
  memcpy(ashape, sshape, sizeof(int64_t) * (size_t)ndim);
  ashape[ndim - 1] *= 2;
  oc_case c;
  memset(&c, 0, sizeof c);
  c.name = name;
  c.n_in = andim ? 4 : 2;
  c.in[0] = oc_f32_input("a", ndim, ashape, diff_inputs, -2.0, 2.0);
  c.in[1] = oc_f32_input("skip", ndim, sshape, diff_inputs, -1.0, 1.0);
  if (andim) {
    c.in[2] = oc_f32_input("gamma", andim, sshape + ndim - andim, 1, 0.5, 1.5);
    c.in[3] = oc_f32_input("beta", andim, sshape + ndim - andim, 1, -0.5, 0.5);
  }
  c.build = build_gan;
  c.ref = ref_gan;
  c.ctx = andim ? &with : &without;
  oc_run(&c, seed);
}

static void test_cases(unsigned long long seed) {
  const int64_t s2[2] = {4, 6}, s3[3] = {5, 3, 8}, s4[4] = {2, 3, 2, 5}, s1[1] = {7};
  run_gan(seed + 1, "gan_affine_d", 2, s2, 1, 1);
  run_gan(seed + 2, "gan_affine_slots", 3, s3, 2, 1); /* gamma [3, 8]: one affine per slot */
  run_gan(seed + 3, "gan_affine_two_dims", 4, s4, 3, 1);
  run_gan(seed + 4, "gan_affine_whole", 3, s3, 3, 1); /* gamma has skip's shape */
  run_gan(seed + 5, "gan_no_affine", 3, s3, 0, 1);
  run_gan(seed + 6, "gan_inputs_fixed", 3, s3, 2, 0); /* only gamma/beta take gradients */
  run_gan(seed + 7, "gan_one_row", 1, s1, 1, 1);
}

/* The fused op against the chain it replaces, tg_sigmoid, tg_mul, tg_add, tg_layernorm (and a
 * per-slot affine as tg_mul, tg_add), on the CPU: the forward gives the same bits, gradients agree. */
static void test_unfused(void) {
  const int64_t as[3] = {64, 6, 32}, ss[3] = {64, 6, 16}, ps[2] = {6, 16};
  tg_store *st = tg_store_new(tg_cpu(0), 5);
  tg_graph *g = tg_graph_new(st, "gan_vs_chain");
  tg_tensor *a = tg_param(g, "a", 3, as, (tg_init){TG_INIT_UNIFORM, -2.0f, 2.0f});
  tg_tensor *skip = tg_param(g, "skip", 3, ss, (tg_init){TG_INIT_UNIFORM, -1.0f, 1.0f});
  tg_tensor *gamma = tg_param(g, "gamma", 2, ps, (tg_init){TG_INIT_UNIFORM, 0.5f, 1.5f});
  tg_tensor *beta = tg_param(g, "beta", 2, ps, (tg_init){TG_INIT_UNIFORM, -0.5f, 0.5f});
  tg_tensor *fused = tg_gate_add_norm(g, a, skip, gamma, beta, EPS);
  tg_tensor *val = tg_slice(g, a, 2, 0, 16), *gate = tg_slice(g, a, 2, 16, 16);
  tg_tensor *z = tg_add(g, skip, tg_mul(g, val, tg_sigmoid(g, gate)));
  tg_tensor *chain = tg_add(g, tg_mul(g, tg_layernorm(g, z, NULL, NULL, EPS), gamma), beta);
  tg_tensor *both[2] = {fused, chain};
  tg_tensor *cat = tg_concat(g, 2, both, 0); /* [128, 6, 16] */
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  po.training = 1;
  po.no_reuse = 1;
  CHECK_OK(tg_graph_plan(g, &po));
  if (tg_graph_status(g) != TG_OK) goto done;
  CHECK_OK(tg_graph_run(g));
  int64_t n = 64 * 6 * 16;
  CHECK_MSG(memcmp(fused->data, chain->data, sizeof(float) * (size_t)n) == 0,
            "gate_add_norm's forward differs from the sigmoid/mul/add/layernorm/mul/add chain");
  /* the seed gradient on the fused half only, then on the chain half only: same parameter grads */
  float *seed = calloc((size_t)(2 * n), sizeof(float)), *gf = malloc(sizeof(float) * 4 * (size_t)n);
  if (!seed || !gf) {
    CHECK_MSG(0, "out of memory");
    free(seed);
    free(gf);
    goto done;
  }
  for (int64_t i = 0; i < n; i++) seed[i] = tg_rng_uniform(3, 1, (uint64_t)i) - 0.5f;
  tg_tensor *ps_[4] = {a, skip, gamma, beta};
  int64_t sizes[4] = {2 * n, n, 96, 96};
  CHECK_OK(tg_store_zero_grads(st));
  CHECK_OK(tg_graph_backward_seeded(g, cat, seed));
  int64_t off = 0;
  for (int k = 0; k < 4; k++, off += sizes[k - 1]) memcpy(gf + off, tg_graph_grad(g, ps_[k]), sizeof(float) * (size_t)sizes[k]);
  memmove(seed + n, seed, sizeof(float) * (size_t)n);
  memset(seed, 0, sizeof(float) * (size_t)n);
  CHECK_OK(tg_store_zero_grads(st));
  CHECK_OK(tg_graph_backward_seeded(g, cat, seed));
  double worst = 0.0;
  off = 0;
  for (int k = 0; k < 4; k++) {
    const float *gc = tg_graph_grad(g, ps_[k]);
    for (int64_t i = 0; i < sizes[k]; i++) worst = fmax(worst, fabs(gc[i] - gf[off + i]) / (1.0 + fabs(gc[i])));
    off += sizes[k];
  }
  CHECK_MSG(worst < 1e-5, "gate_add_norm's gradients differ from the chain's by %g", worst);
  free(seed);
  free(gf);
done:
  tg_graph_free(g);
  tg_store_free(st);
}

/* Widest row of test_large. */
#define LARGE_D_MAX 64

/* The kernels called directly on N * S rows of D <= LARGE_D_MAX, past the chunk size and the parallel thresholds:
 * the forward against float64, the backward against the float64 adjoint of a random seed, and the same bits on 1 and
 * 3 threads (with fewer slots than threads, each slot's gamma/beta columns are summed by several threads). */
static void test_large(int64_t N, int64_t S, int64_t D) {
  const int64_t rows = N * S, as[3] = {N, S, 2 * D}, ss[3] = {N, S, D}, ps[2] = {S, D};
  size_t na = (size_t)(rows * 2 * D), ns = (size_t)(rows * D), np = S * D;
  float *A = malloc(sizeof(float) * na), *sk = malloc(sizeof(float) * ns), *gm = malloc(sizeof(float) * np);
  float *bt = malloc(sizeof(float) * np), *y = malloc(sizeof(float) * ns), *dy = malloc(sizeof(float) * ns);
  float *grads[2] = {malloc(sizeof(float) * (na + ns + 2 * np)), malloc(sizeof(float) * (na + ns + 2 * np))};
  double *z = malloc(sizeof(double) * ns);
  int before = tg_threads();
  if (!A || !sk || !gm || !bt || !y || !dy || !grads[0] || !grads[1] || !z) {
    CHECK_MSG(0, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < na; i++) A[i] = 4.0f * tg_rng_uniform(5, 1, i) - 2.0f;
  for (size_t i = 0; i < ns; i++) sk[i] = 2.0f * tg_rng_uniform(5, 2, i) - 1.0f, dy[i] = tg_rng_uniform(5, 3, i) - 0.5f;
  for (size_t i = 0; i < np; i++) gm[i] = 0.5f + tg_rng_uniform(5, 4, i), bt[i] = tg_rng_uniform(5, 5, i) - 0.5f;
  tg_tensor ta, tsk, tg_, tb, ty;
  tg_tensor_view(&ta, "a", tg_cpu(0), TG_F32, 3, as, A);
  tg_tensor_view(&tsk, "skip", tg_cpu(0), TG_F32, 3, ss, sk);
  tg_tensor_view(&tg_, "gamma", tg_cpu(0), TG_F32, 2, ps, gm);
  tg_tensor_view(&tb, "beta", tg_cpu(0), TG_F32, 2, ps, bt);
  tg_tensor_view(&ty, "y", tg_cpu(0), TG_F32, 3, ss, y);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = 1;
  attr.f[0] = EPS;
  tg_kernel_args k;
  memset(&k, 0, sizeof k);
  k.n_in = 4;
  k.in[0] = &ta;
  k.in[1] = &tsk;
  k.in[2] = &tg_;
  k.in[3] = &tb;
  k.out = &ty;
  k.attr = &attr;
  k.out_grad = dy;
  k.node_name = "gan_large";
  k.ws_bytes = tg_gan_workspace(&k);
  k.ws = malloc(k.ws_bytes);
  CHECK(k.ws != NULL &&
        k.ws_bytes >= (size_t)tg_gan_chunk_rows(rows, S) * (2 * (size_t)D * sizeof(float) + 2 * sizeof(double)));
  for (int t = 0; t < 2 && k.ws; t++) {
    CHECK_OK(tg_set_threads(t == 0 ? 1 : 3));
    float *gr = grads[t];
    memset(gr, 0, sizeof(float) * (na + ns + 2 * np));
    k.in_grad[0] = gr;
    k.in_grad[1] = gr + na;
    k.in_grad[2] = gr + na + ns;
    k.in_grad[3] = gr + na + ns + np;
    CHECK_OK(tg_cpu_gate_add_norm_fwd(&k));
    CHECK_OK(tg_cpu_gate_add_norm_bwd(&k));
  }
  CHECK_MSG(memcmp(grads[0], grads[1], sizeof(float) * (na + ns + 2 * np)) == 0, "gan_large: 1 and 3 threads differ");
  /* float64 forward and gamma/beta gradients; the input gradients by the row adjoint */
  double wy = 0.0, wg = 0.0, wb = 0.0, wsk = 0.0;
  double *sg = calloc(np, sizeof(double)), *sb = calloc(np, sizeof(double));
  for (int64_t r = 0; sg && sb && r < rows; r++) {
    const float *val = A + r * 2 * D, *gate = val + D;
    double mu = 0.0, var = 0.0, xh[LARGE_D_MAX], gy[LARGE_D_MAX], m1 = 0.0, m2 = 0.0;
    for (int j = 0; j < D; j++) mu += z[r * D + j] = sk[r * D + j] + val[j] / (1.0 + exp(-(double)gate[j]));
    mu /= D;
    for (int j = 0; j < D; j++) var += (z[r * D + j] - mu) * (z[r * D + j] - mu);
    double rstd = 1.0 / sqrt(var / D + EPS);
    for (int j = 0; j < D; j++) {
      int64_t c = r % S * D + j;
      xh[j] = (z[r * D + j] - mu) * rstd;
      wy = fmax(wy, fabs(xh[j] * gm[c] + bt[c] - y[r * D + j]));
      sg[c] += dy[r * D + j] * xh[j];
      sb[c] += dy[r * D + j];
      gy[j] = dy[r * D + j] * (double)gm[c];
      m1 += gy[j] / D;
      m2 += gy[j] * xh[j] / D;
    }
    for (int j = 0; j < D; j++) {
      double dz = rstd * (gy[j] - m1 - xh[j] * m2);
      wsk = fmax(wsk, fabs(dz - grads[0][na + r * D + j]) / (1.0 + fabs(dz)));
    }
  }
  for (size_t c = 0; sg && sb && c < np; c++) {
    wg = fmax(wg, fabs(sg[c] - grads[0][na + ns + c]) / (1.0 + fabs(sg[c])));
    wb = fmax(wb, fabs(sb[c] - grads[0][na + ns + np + c]) / (1.0 + fabs(sb[c])));
  }
  free(sg);
  free(sb);
  CHECK_MSG(wy < 1e-5, "gan_large forward error %g", wy);
  CHECK_MSG(wsk < 1e-4, "gan_large skip gradient error %g", wsk);
  CHECK_MSG(wg < 1e-4 && wb < 1e-4, "gan_large gamma/beta gradient errors %g, %g", wg, wb);
  CHECK_OK(tg_set_threads(before));
  free(k.ws);
done:
  free(A), free(sk), free(gm), free(bt), free(y), free(dy), free(grads[0]), free(grads[1]), free(z);
}

static tg_tensor *in_f32(tg_graph *g, const char *name, int ndim, const int64_t *shape) {
  return tg_input(g, name, TG_F32, ndim, shape);
}

static void test_errors(void) {
  const int64_t a3[3] = {4, 3, 16}, s3[3] = {4, 3, 8}, a_odd[3] = {4, 3, 15}, a_lead[3] = {4, 2, 16};
  const int64_t p8[1] = {8}, p38[2] = {3, 8}, p28[2] = {2, 8}, p7[1] = {7};
  {
    tg_graph *g = tg_graph_new(NULL, "gan_ok");
    tg_tensor *y = tg_gate_add_norm(g, in_f32(g, "a", 3, a3), in_f32(g, "skip", 3, s3), in_f32(g, "gm", 2, p38),
                                    in_f32(g, "bt", 2, p38), EPS);
    CHECK(y != NULL && y->ndim == 3 && y->shape[2] == 8 && tg_graph_status(g) == TG_OK);
    tg_graph_free(g);
  }
  {
    tg_graph *g = tg_graph_new(NULL, "gan_width");
    tg_tensor *y = tg_gate_add_norm(g, in_f32(g, "gates", 3, a_odd), in_f32(g, "res", 3, s3), NULL, NULL, EPS);
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "gan_width",
                          (const char *const[]){"gate_add_norm", "gates", "[4, 3, 15]", "res", "[4, 3, 8]", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "gan_lead");
    tg_tensor *y = tg_gate_add_norm(g, in_f32(g, "gates", 3, a_lead), in_f32(g, "res", 3, s3), NULL, NULL, EPS);
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "gan_lead", (const char *const[]){"gate_add_norm", "gates", "[4, 2, 16]", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "gan_gamma");
    tg_tensor *y = tg_gate_add_norm(g, in_f32(g, "a", 3, a3), in_f32(g, "res", 3, s3), in_f32(g, "gm", 2, p28),
                                    in_f32(g, "bt", 2, p28), EPS);
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "gan_gamma",
                          (const char *const[]){"gate_add_norm", "gamma", "gm", "[2, 8]", "suffix", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "gan_gamma_d");
    tg_tensor *y = tg_gate_add_norm(g, in_f32(g, "a", 3, a3), in_f32(g, "res", 3, s3), in_f32(g, "gm", 1, p7),
                                    in_f32(g, "bt", 1, p7), EPS);
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "gan_gamma_d", (const char *const[]){"gate_add_norm", "gm", "[7]", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "gan_pair");
    tg_tensor *y = tg_gate_add_norm(g, in_f32(g, "a", 3, a3), in_f32(g, "res", 3, s3), in_f32(g, "gm", 1, p8),
                                    in_f32(g, "bt", 2, p38), EPS);
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "gan_pair",
                          (const char *const[]){"gate_add_norm", "gm", "[8]", "bt", "[3, 8]", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "gan_half");
    CHECK(tg_gate_add_norm(g, in_f32(g, "a", 3, a3), in_f32(g, "res", 3, s3), in_f32(g, "gm", 1, p8), NULL, EPS) == NULL);
    CHECK(tg_graph_status(g) != TG_OK);
    tg_graph_free(g);
  }
  {
    tg_graph *g = tg_graph_new(NULL, "gan_eps");
    tg_tensor *y = tg_gate_add_norm(g, in_f32(g, "a", 3, a3), in_f32(g, "res", 3, s3), NULL, NULL, -1.0f);
    oc_expect_build_error(g, y, TG_ERR_INVALID, "gan_eps", (const char *const[]){"gate_add_norm", "eps", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "gan_dtype");
    tg_tensor *y = tg_gate_add_norm(g, tg_input(g, "ids", TG_I32, 3, a3), in_f32(g, "res", 3, s3), NULL, NULL, EPS);
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "gan_dtype", (const char *const[]){"gate_add_norm", "ids", "i32", NULL});
  }
}

int main(void) {
  unsigned long long seed = tg_test_seed(777);
  test_cases(seed);
  test_unfused();
  test_large(700, 5, 16); /* 3500 rows: two backward chunks of 2045 and 1455 rows */
  test_large(3500, 1, 40); /* one slot: chunks of 2048 and 1452 rows, the columns in three tasks on 3 threads */
  test_errors();
  return tg_test_finish();
}
