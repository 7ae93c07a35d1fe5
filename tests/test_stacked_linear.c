/* Op tests for stacked_linear: float64 references, finite-difference gradients, the parallel bias path, builder errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "support/check.h"
#include "support/op_check.h"
#include "tickgrad/tickgrad.h"

typedef struct sl_ctx {
  int has_bias;
  int twice; /* build the op twice on the same operands and add: gradients must accumulate */
} sl_ctx;

static tg_tensor *build_stacked(tg_graph *g, tg_tensor **in, const void *ctx) {
  const sl_ctx *c = ctx;
  tg_tensor *bias = c->has_bias ? in[2] : NULL;
  tg_tensor *y = tg_stacked_linear(g, in[0], in[1], bias);
  return c->twice ? tg_add(g, y, tg_stacked_linear(g, in[0], in[1], bias)) : y;
}

/* x [rows, G, in], w [G, out, in], bias [G, out]; out [rows, G, out] (times 2 when twice) */
static void ref_stacked(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const sl_ctx *c = ctx;
  int64_t G = spec[1].shape[0], nout = spec[1].shape[1], nin = spec[1].shape[2];
  int64_t rows = oc_numel(&spec[0]) / (G * nin);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < G; j++)
      for (int64_t o = 0; o < nout; o++) {
        double s = c->has_bias ? in[2][j * nout + o] : 0.0;
        for (int64_t i = 0; i < nin; i++) s += in[0][(r * G + j) * nin + i] * in[1][(j * nout + o) * nin + i];
        out[(r * G + j) * nout + o] = c->twice ? 2.0 * s : s;
      }
}

static void run_stacked(unsigned long long seed, const char *name, const sl_ctx *ctx, int xndim,
                        const int64_t *xshape, int64_t nout, int diff_x) {
  int64_t G = xshape[xndim - 2], nin = xshape[xndim - 1];
  int64_t ws[3] = {G, nout, nin}, bs[2] = {G, nout};
  oc_case c;
  memset(&c, 0, sizeof c);
  c.name = name;
  c.n_in = ctx->has_bias ? 3 : 2;
  c.in[0] = oc_f32_input("x", xndim, xshape, diff_x, -1.0, 1.0);
  c.in[1] = oc_f32_input("w", 3, ws, 1, -1.0, 1.0);
  if (ctx->has_bias) c.in[2] = oc_f32_input("bias", 2, bs, 1, -1.0, 1.0);
  c.build = build_stacked;
  c.ref = ref_stacked;
  c.ctx = ctx;
  oc_run(&c, seed);
}

static void test_cases(unsigned long long seed) {
  static const sl_ctx plain = {1, 0}, no_bias = {0, 0}, twice = {1, 1};
  const int64_t x3[3] = {4, 3, 5}, x4[4] = {2, 3, 2, 4}, x_in1[3] = {5, 3, 1}, x_g1[3] = {4, 1, 3};
  const int64_t x_g1_big[3] = {96, 1, 32};
  const int64_t x2[2] = {3, 4};
  run_stacked(seed + 1, "stacked_bias", &plain, 3, x3, 6, 1);
  run_stacked(seed + 2, "stacked_no_bias", &no_bias, 3, x3, 6, 1);
  run_stacked(seed + 3, "stacked_4d", &plain, 4, x4, 3, 1);
  run_stacked(seed + 4, "stacked_x_input", &plain, 3, x3, 2, 0);
  run_stacked(seed + 5, "stacked_in_1", &plain, 3, x_in1, 4, 1); /* a per-group embedding of scalars */
  run_stacked(seed + 6, "stacked_one_group", &plain, 3, x_g1, 5, 1);
  /* large enough for a planned GEMM primitive, which then adds the one group's bias itself */
  run_stacked(seed + 9, "stacked_one_group_planned", &plain, 3, x_g1_big, 32, 0);
  run_stacked(seed + 7, "stacked_2d_x", &plain, 2, x2, 3, 1); /* no leading dims: one row */
  run_stacked(seed + 8, "stacked_accumulate", &twice, 3, x3, 4, 1);
}

/* The kernels called directly on `threads` threads (with more than one, the groups' GEMMs run on the OpenMP threads),
 * with IN inputs per group (1: the outer-product kernels), ROWS x G x OUT past the bias gradient's parallel threshold
 * (2^18) or below it; the bias gradient must be each column's double sum over the rows in order, bit for bit. */
static void test_large(int threads, int64_t IN, int64_t ROWS, int64_t G, int64_t OUT) {
  size_t nx = (size_t)ROWS * G * IN, nw = (size_t)G * OUT * IN, ny = (size_t)ROWS * G * OUT;
  float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw), *bias = malloc(sizeof(float) * G * OUT);
  float *y = malloc(sizeof(float) * ny), *dy = malloc(sizeof(float) * ny), *dx = calloc(nx, sizeof(float));
  float *dw = calloc(nw, sizeof(float)), *db = malloc(sizeof(float) * G * OUT);
  int before = tg_threads();
  if (!x || !w || !bias || !y || !dy || !dx || !dw || !db) {
    CHECK_MSG(0, "stacked_large: out of memory");
    goto done;
  }
  CHECK_OK(tg_set_threads(threads));
  for (size_t i = 0; i < nx; i++) x[i] = (float)((int)(i * 37 % 101) - 50) / 50.0f;
  for (size_t i = 0; i < nw; i++) w[i] = (float)((int)(i * 53 % 97) - 48) / 48.0f;
  for (int o = 0; o < G * OUT; o++) bias[o] = (float)o / (G * OUT), db[o] = 1.0f;
  for (size_t i = 0; i < ny; i++) dy[i] = (float)((int)(i * 29 % 89) - 44) / 44.0f;
  tg_tensor tx, tw, tb, ty;
  const int64_t sx[3] = {ROWS, G, IN}, sw[3] = {G, OUT, IN}, sb[2] = {G, OUT}, sy[3] = {ROWS, G, OUT};
  tg_tensor_view(&tx, "x", tg_cpu(0), TG_F32, 3, sx, x);
  tg_tensor_view(&tw, "w", tg_cpu(0), TG_F32, 3, sw, w);
  tg_tensor_view(&tb, "bias", tg_cpu(0), TG_F32, 2, sb, bias);
  tg_tensor_view(&ty, "y", tg_cpu(0), TG_F32, 3, sy, y);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = 1;
  tg_kernel_args a;
  memset(&a, 0, sizeof a);
  a.n_in = 3;
  a.in[0] = &tx;
  a.in[1] = &tw;
  a.in[2] = &tb;
  a.out = &ty;
  a.attr = &attr;
  a.out_grad = dy;
  a.in_grad[0] = dx;
  a.in_grad[1] = dw;
  a.in_grad[2] = db;
  a.node_name = "stacked_large";
  CHECK_OK(tg_cpu_stacked_linear_fwd(&a));
  double worst = 0;
  for (int r = 0; r < ROWS; r += 37)
    for (int j = 0; j < G; j++)
      for (int o = 0; o < OUT; o++) {
        double s = bias[j * OUT + o];
        for (int i = 0; i < IN; i++) s += (double)x[((size_t)r * G + j) * IN + i] * w[((size_t)j * OUT + o) * IN + i];
        worst = fmax(worst, fabs(s - y[((size_t)r * G + j) * OUT + o]));
      }
  CHECK_MSG(worst < 1e-4, "stacked_large in %lld: forward error %g on %d threads", (long long)IN, worst, threads);
  CHECK_OK(tg_cpu_stacked_linear_bwd(&a));
  double wb = 0, wx = 0, ww = 0;
  for (int c = 0; c < G * OUT; c++) {
    double s = 1.0;
    for (int r = 0; r < ROWS; r++) s += dy[(size_t)r * G * OUT + c];
    wb = fmax(wb, fabs(s - db[c]) / (1 + fabs(s)));
    double d = 0.0;
    for (int r = 0; r < ROWS; r++) d += dy[(size_t)r * G * OUT + c];
    float f = 1.0f + (float)d;
    CHECK_MSG(memcmp(&f, &db[c], sizeof f) == 0, "stacked_large %lld x %lld x %lld: bias gradient column %d is %.9g, "
              "not the rows' double sum in order %.9g", (long long)ROWS, (long long)G, (long long)OUT, c, db[c], f);
  }
  for (int r = 0; r < ROWS; r += 41) /* dx[r, j, i] = sum_o dy[r, j, o] w[j, o, i] */
    for (int j = 0; j < G; j++)
      for (int i = 0; i < IN; i++) {
        double s = 0;
        for (int o = 0; o < OUT; o++) s += (double)dy[((size_t)r * G + j) * OUT + o] * w[((size_t)j * OUT + o) * IN + i];
        wx = fmax(wx, fabs(s - dx[((size_t)r * G + j) * IN + i]) / (1 + fabs(s)));
      }
  for (int j = 0; j < G; j += 4) /* dw[j, o, i] = sum_r dy[r, j, o] x[r, j, i] */
    for (int o = 0; o < OUT; o++)
      for (int i = 0; i < IN; i++) {
        double s = 0;
        for (int r = 0; r < ROWS; r++) s += (double)dy[((size_t)r * G + j) * OUT + o] * x[((size_t)r * G + j) * IN + i];
        ww = fmax(ww, fabs(s - dw[((size_t)j * OUT + o) * IN + i]) / (1 + fabs(s)));
      }
  CHECK_MSG(wb < 1e-5, "stacked_large in %lld: bias gradient error %g on %d threads", (long long)IN, wb, threads);
  CHECK_MSG(wx < 1e-5, "stacked_large in %lld: input gradient error %g on %d threads", (long long)IN, wx, threads);
  CHECK_MSG(ww < 1e-5, "stacked_large in %lld: weight gradient error %g on %d threads", (long long)IN, ww, threads);
  CHECK_OK(tg_set_threads(before));
done:
  free(x), free(w), free(bias), free(y), free(dy), free(dx), free(dw), free(db);
}

static tg_tensor *in_f32(tg_graph *g, const char *name, int ndim, const int64_t *shape) {
  return tg_input(g, name, TG_F32, ndim, shape);
}

static void test_errors(void) {
  const int64_t x3[3] = {4, 3, 5}, w3[3] = {3, 6, 5}, w_g[3] = {2, 6, 5}, w_in[3] = {3, 6, 4};
  const int64_t w2[2] = {6, 5}, b_bad[2] = {3, 5}, b1[1] = {6}, x1[1] = {5};
  {
    tg_graph *g = tg_graph_new(NULL, "sl_ok");
    tg_tensor *y = tg_stacked_linear(g, in_f32(g, "feat", 3, x3), in_f32(g, "w", 3, w3), NULL);
    CHECK(y != NULL && y->ndim == 3 && y->shape[0] == 4 && y->shape[1] == 3 && y->shape[2] == 6);
    CHECK(tg_graph_status(g) == TG_OK);
    tg_graph_free(g);
  }
  {
    tg_graph *g = tg_graph_new(NULL, "sl_w2d");
    tg_tensor *y = tg_stacked_linear(g, in_f32(g, "feat", 3, x3), in_f32(g, "flat_w", 2, w2), NULL);
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "sl_w2d",
                          (const char *const[]){"stacked_linear", "flat_w", "[6, 5]", "feat", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "sl_groups");
    tg_tensor *y = tg_stacked_linear(g, in_f32(g, "feat", 3, x3), in_f32(g, "w", 3, w_g), NULL);
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "sl_groups",
                          (const char *const[]){"stacked_linear", "feat", "[4, 3, 5]", "[2, 6, 5]", "G=2", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "sl_in");
    tg_tensor *y = tg_stacked_linear(g, in_f32(g, "feat", 3, x3), in_f32(g, "w", 3, w_in), NULL);
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "sl_in",
                          (const char *const[]){"stacked_linear", "feat", "in=4", "[3, 6, 4]", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "sl_x1d");
    tg_tensor *y = tg_stacked_linear(g, in_f32(g, "vec", 1, x1), in_f32(g, "w", 3, w3), NULL);
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "sl_x1d", (const char *const[]){"stacked_linear", "vec", "[5]", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "sl_bias");
    tg_tensor *y = tg_stacked_linear(g, in_f32(g, "feat", 3, x3), in_f32(g, "w", 3, w3), in_f32(g, "bb", 2, b_bad));
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "sl_bias",
                          (const char *const[]){"stacked_linear", "bb", "[3, 5]", "[3, 6]", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "sl_bias1d");
    tg_tensor *y = tg_stacked_linear(g, in_f32(g, "feat", 3, x3), in_f32(g, "w", 3, w3), in_f32(g, "bv", 1, b1));
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "sl_bias1d", (const char *const[]){"stacked_linear", "bv", "[6]", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "sl_dtype");
    tg_tensor *y = tg_stacked_linear(g, tg_input(g, "ids", TG_I32, 3, x3), in_f32(g, "w", 3, w3), NULL);
    oc_expect_build_error(g, y, TG_ERR_SHAPE, "sl_dtype", (const char *const[]){"stacked_linear", "ids", "i32", NULL});
  }
  {
    tg_graph *g = tg_graph_new(NULL, "sl_null");
    CHECK(tg_stacked_linear(g, in_f32(g, "feat", 3, x3), NULL, NULL) == NULL);
    CHECK(tg_graph_status(g) != TG_OK);
    tg_graph_free(g);
  }
}

int main(void) {
  unsigned long long seed = tg_test_seed(4242);
  test_cases(seed);
  test_large(1, 8, 600, 17, 40); /* 408000 > 2^18 */
  test_large(3, 8, 600, 17, 40);
  test_large(1, 1, 600, 17, 40);
  test_large(3, 1, 600, 17, 40);
  test_large(1, 8, 77, 11, 100); /* one serial pass of more than 1024 columns */
  test_errors();
  return tg_test_finish();
}
