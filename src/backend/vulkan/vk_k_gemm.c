/* Vulkan kernels of the GEMM ops (matmul, linear, stacked_linear), forward and backward: each product one dispatch of
 * the tiled GEMM (shaders/gemm.comp) by element strides, as the CPU plans its oneDNN primitives (cpu_gemm_plan.c);
 * bias gradients as column sums (shaders/col_sums.comp); both offered to other kernels by vk_gemm.h. f32 only. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_gemm.h"
#include "backend/vulkan/vk_kernels.h"
#include "ops/matmul_dims.h"

#define TILE 16 /* gemm.comp's tile edge */
/* The most times an invocation loops in one dispatch: lavapipe ends a loop at 65535 (silently), so longer work goes in
 * pieces, each adding into its output. */
#define LOOP_MAX 32768
/* The most of K one GEMM dispatch covers: its invocations loop K / TILE times. */
#define K_PER_DISPATCH ((int64_t)TILE * LOOP_MAX)
/* The most rows one column-sum dispatch covers: col_sums.comp's lanes loop rows / COL_LANES times. */
#define COL_LANES 256 /* col_sums.comp's local_size_x */
#define ROWS_PER_DISPATCH ((int64_t)COL_LANES * LOOP_MAX)

/* Push constants of shaders/gemm.comp. */
typedef struct gemm_args {
  uint64_t a, b, c, bias;
  uint32_t m, n, k, batch, a_st[3], b_st[3], c_st[3], bias_b, has_bias, accumulate;
} gemm_args;

/* The largest element index a product reaches in an operand, for the shader's 32-bit indices. */
static int64_t last_index(const int64_t st[3], int64_t batch, int64_t rows, int64_t cols) {
  return (batch - 1) * st[0] + (rows - 1) * st[1] + (cols - 1) * st[2];
}

tg_status tg_vk_gemm_run(const tg_kernel_args *a, const tg_vk_gemm *g) {
  if (g->batch == 0 || g->m == 0 || g->n == 0) return TG_OK;
  int64_t worst = last_index(g->a_st, g->batch, g->m, g->k);
  int64_t lb = last_index(g->b_st, g->batch, g->k, g->n), lc = last_index(g->c_st, g->batch, g->m, g->n);
  worst = lb > worst ? lb : worst;
  worst = lc > worst ? lc : worst;
  if (worst > (int64_t)UINT32_MAX || g->m > UINT32_MAX || g->n > UINT32_MAX || g->k > UINT32_MAX ||
      g->batch > UINT32_MAX)
    return tg_error(TG_ERR_UNSUPPORTED, "%s: a GEMM of %lld x %lld x %lld (batch %lld) indexes past %u elements, more "
                    "than a Vulkan kernel's 32-bit indices reach", a->node_name, (long long)g->m, (long long)g->n,
                    (long long)g->k, (long long)g->batch, UINT32_MAX);
  gemm_args p = {.a = tg_vk_addr(g->a), .b = tg_vk_addr(g->b), .c = tg_vk_addr(g->c), .bias = tg_vk_addr(g->bias), .m = (uint32_t)g->m,
                 .n = (uint32_t)g->n, .k = (uint32_t)g->k, .batch = (uint32_t)g->batch,
                 .bias_b = (uint32_t)g->bias_b, .has_bias = g->bias != NULL, .accumulate = (uint32_t)g->accumulate};
  for (int d = 0; d < 3; d++)
    p.a_st[d] = (uint32_t)g->a_st[d], p.b_st[d] = (uint32_t)g->b_st[d], p.c_st[d] = (uint32_t)g->c_st[d];
  uint32_t grid[3] = {tg_vk_groups((uint64_t)g->n, TILE), tg_vk_groups((uint64_t)g->m, TILE),
                      tg_vk_groups((uint64_t)g->batch, 1)};
  tg_status st = TG_OK;
  for (int64_t k0 = 0; st == TG_OK && (k0 < g->k || k0 == 0); k0 += K_PER_DISPATCH) {
    int64_t len = g->k - k0 < K_PER_DISPATCH ? g->k - k0 : K_PER_DISPATCH;
    p.k = (uint32_t)len;
    p.a = tg_vk_addr(g->a + k0 * g->a_st[2]), p.b = tg_vk_addr(g->b + k0 * g->b_st[1]);
    p.has_bias = k0 == 0 && g->bias; /* the bias once, with the first piece, which adds into C only when asked */
    p.accumulate = k0 > 0 || g->accumulate;
    st = tg_vk_dispatch_grid(a->out->device.index, TG_VK_K_gemm, &p, sizeof p, grid);
  }
  return st;
}

tg_status tg_vk_col_sums(const tg_kernel_args *a, const float *x, float *s, int64_t rows, int64_t ncol) {
  tg_status st = tg_vk_fits(a->node_name, rows * ncol);
  struct { uint64_t x, s; uint32_t rows, ncol; } p = {0, tg_vk_addr(s), 0, (uint32_t)ncol};
  for (int64_t r0 = 0; st == TG_OK && r0 < rows; r0 += ROWS_PER_DISPATCH) { /* each piece adds into s */
    p.x = tg_vk_addr(x + r0 * ncol);
    p.rows = (uint32_t)(rows - r0 < ROWS_PER_DISPATCH ? rows - r0 : ROWS_PER_DISPATCH);
    st = tg_vk_dispatch(a->out->device.index, TG_VK_K_col_sums, &p, sizeof p, tg_vk_groups((uint64_t)ncol, 1));
  }
  return st;
}

static void strides(int64_t *dst, int64_t b, int64_t r, int64_t c) { dst[0] = b, dst[1] = r, dst[2] = c; }

/* ---- matmul: op(A) [batch, m, k] op(B) [batch or shared, k, n] -> C [batch, m, n] ---- */

tg_status tg_vk_matmul_fwd(const tg_kernel_args *a) {
  tg_mm_dims d;
  tg_status st = tg_mm_dims_of(a, &d);
  if (st != TG_OK) return st;
  tg_vk_gemm g = {.batch = d.batch, .m = d.m, .n = d.n, .k = d.k, .a = a->in[0]->data, .b = a->in[1]->data,
                  .c = (float *)a->out->data};
  tg_mm_op_strides(&d, g.a_st, g.b_st, g.c_st);
  return tg_vk_gemm_run(a, &g);
}

tg_status tg_vk_matmul_bwd(const tg_kernel_args *a) {
  tg_mm_dims d;
  tg_status st = tg_mm_dims_of(a, &d);
  if (st != TG_OK) return st;
  int64_t opa[3], opb[3], c[3];
  tg_mm_op_strides(&d, opa, opb, c);
  const float *A = a->in[0]->data, *B = a->in[1]->data, *dC = a->out_grad; /* as the forward's */
  float *dA = a->in_grad[0], *dB = a->in_grad[1];
  if (dA) { /* d op(A) [m, k] += dC op(B)^T, written where A is stored */
    tg_vk_gemm g = {.batch = d.batch, .m = d.m, .n = d.k, .k = d.n, .a = dC, .b = B, .c = dA, .accumulate = 1};
    strides(g.a_st, c[0], c[1], c[2]), strides(g.b_st, opb[0], opb[2], opb[1]), strides(g.c_st, opa[0], opa[1], opa[2]);
    if ((st = tg_vk_gemm_run(a, &g)) != TG_OK) return st;
  }
  if (!dB) return TG_OK;
  /* d op(B) [k, n] += op(A)^T dC; a shared B (sb 0) sums over the batches: as one product of batch * m rows when A is
   * untransposed (its batches are consecutive rows), else one product per batch, in order */
  tg_vk_gemm g = {.batch = d.batch, .m = d.k, .n = d.n, .k = d.m, .a = A, .b = dC, .c = dB, .accumulate = 1};
  strides(g.a_st, opa[0], opa[2], opa[1]), strides(g.b_st, c[0], c[1], c[2]), strides(g.c_st, opb[0], opb[1], opb[2]);
  if (d.sb != 0) return tg_vk_gemm_run(a, &g);
  if (!d.ta) {
    g.batch = 1, g.k = d.batch * d.m;
    return tg_vk_gemm_run(a, &g);
  }
  g.batch = 1;
  for (int64_t i = 0; i < d.batch && st == TG_OK; i++) {
    g.a = A + i * d.sa, g.b = dC + i * d.sc;
    st = tg_vk_gemm_run(a, &g);
  }
  return st;
}

/* ---- linear: x [rows, in] w [out, in]^T (+ bias [out]) -> y [rows, out] ---- */

tg_status tg_vk_linear_fwd(const tg_kernel_args *a) {
  int64_t rows, nin, nout;
  tg_status st = tg_linear_dims(a, &rows, &nin, &nout);
  if (st != TG_OK) return st;
  tg_vk_gemm g = {.batch = 1, .m = rows, .n = nout, .k = nin, .a = a->in[0]->data, .b = a->in[1]->data,
                  .c = (float *)a->out->data, .bias = a->attr->i[0] && a->n_in > 2 ? a->in[2]->data : NULL};
  strides(g.a_st, 0, nin, 1), strides(g.b_st, 0, 1, nin), strides(g.c_st, 0, nout, 1);
  return tg_vk_gemm_run(a, &g);
}

tg_status tg_vk_linear_bwd(const tg_kernel_args *a) {
  int64_t rows, nin, nout;
  tg_status st = tg_linear_dims(a, &rows, &nin, &nout);
  if (st != TG_OK) return st;
  const float *x = a->in[0]->data, *w = a->in[1]->data, *dy = a->out_grad; /* [rows, in], [out, in], [rows, out] */
  float *dx = a->in_grad[0], *dw = a->in_grad[1], *db = a->n_in > 2 ? a->in_grad[2] : NULL;
  if (dx) { /* dx [rows, in] += dy w */
    tg_vk_gemm g = {.batch = 1, .m = rows, .n = nin, .k = nout, .a = dy, .b = w, .c = dx, .accumulate = 1};
    strides(g.a_st, 0, nout, 1), strides(g.b_st, 0, nin, 1), strides(g.c_st, 0, nin, 1);
    if ((st = tg_vk_gemm_run(a, &g)) != TG_OK) return st;
  }
  if (dw) { /* dw [out, in] += dy^T x */
    tg_vk_gemm g = {.batch = 1, .m = nout, .n = nin, .k = rows, .a = dy, .b = x, .c = dw, .accumulate = 1};
    strides(g.a_st, 0, 1, nout), strides(g.b_st, 0, nin, 1), strides(g.c_st, 0, nin, 1);
    if ((st = tg_vk_gemm_run(a, &g)) != TG_OK) return st;
  }
  return db ? tg_vk_col_sums(a, dy, db, rows, nout) : TG_OK;
}

/* ---- stacked_linear: x [rows, G, in], w [G, out, in], bias [G, out] -> y [rows, G, out]; group j is batch j ---- */

tg_status tg_vk_stacked_linear_fwd(const tg_kernel_args *a) {
  int64_t rows, G, nin, nout;
  tg_status st = tg_stacked_dims(a, &rows, &G, &nin, &nout);
  if (st != TG_OK) return st;
  tg_vk_gemm g = {.batch = G, .m = rows, .n = nout, .k = nin, .a = a->in[0]->data, .b = a->in[1]->data,
                  .c = (float *)a->out->data, .bias = a->attr->i[0] && a->n_in > 2 ? a->in[2]->data : NULL,
                  .bias_b = nout};
  strides(g.a_st, nin, G * nin, 1), strides(g.b_st, nout * nin, 1, nin), strides(g.c_st, nout, G * nout, 1);
  return tg_vk_gemm_run(a, &g);
}

tg_status tg_vk_stacked_linear_bwd(const tg_kernel_args *a) {
  int64_t rows, G, nin, nout;
  tg_status st = tg_stacked_dims(a, &rows, &G, &nin, &nout);
  if (st != TG_OK) return st;
  const float *x = a->in[0]->data, *w = a->in[1]->data, *dy = a->out_grad;
  float *dx = a->in_grad[0], *dw = a->in_grad[1], *db = a->n_in > 2 ? a->in_grad[2] : NULL;
  if (dx) { /* dx[:, j] [rows, in] += dy[:, j] w[j] */
    tg_vk_gemm g = {.batch = G, .m = rows, .n = nin, .k = nout, .a = dy, .b = w, .c = dx, .accumulate = 1};
    strides(g.a_st, nout, G * nout, 1), strides(g.b_st, nout * nin, nin, 1), strides(g.c_st, nin, G * nin, 1);
    if ((st = tg_vk_gemm_run(a, &g)) != TG_OK) return st;
  }
  if (dw) { /* dw[j] [out, in] += dy[:, j]^T x[:, j] */
    tg_vk_gemm g = {.batch = G, .m = nout, .n = nin, .k = rows, .a = dy, .b = x, .c = dw, .accumulate = 1};
    strides(g.a_st, nout, 1, G * nout), strides(g.b_st, nin, G * nin, 1), strides(g.c_st, nout * nin, nin, 1);
    if ((st = tg_vk_gemm_run(a, &g)) != TG_OK) return st;
  }
  return db ? tg_vk_col_sums(a, dy, db, rows, G * nout) : TG_OK;
}
