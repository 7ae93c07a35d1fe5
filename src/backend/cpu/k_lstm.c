/* CPU LSTM kernels: one layer over a sequence, forward and backpropagation through time, OpenBLAS GEMMs and no allocation. */
#include <cblas.h>
#include "backend/cpu/cpu_kernels.h"
#include "ops/lstm_args.h"

/* Elementwise steps (B*H cells) and the bias sums go parallel above this many elements. */
#define LSTM_PAR_MIN 32768
#define LSTM_COL_BLOCK 64

/* C[m, n] = op(A) op(B) + beta * C, row-major, op(A) [m, k], op(B) [k, n]. The builder keeps every
 * size >= 1 and below INT_MAX. */
static void lstm_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                      const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              (blasint)m, (blasint)n, (blasint)k, 1.0f, A, (blasint)lda, B, (blasint)ldb, beta, C,
              (blasint)ldc);
}

/* The cell update of step t for every (b, j): activates the gate slots, writes c and h. */
static void lstm_step_fwd(const tg_lstm_args *l, int64_t t) {
  int64_t B = l->B, T = l->T, H = l->H;
#pragma omp parallel for if (B * H > LSTM_PAR_MIN)
  for (int64_t b = 0; b < B; b++) {
    float *row = l->out + (b * T + t) * 6 * H; /* [6H] */
    for (int64_t j = 0; j < H; j++) {
      float cprev = t > 0 ? row[-6 * H + H + j] : l->c0 ? l->c0[b * H + j] : 0.0f;
      tg_lstm_cell_fwd(row, l->bias, cprev, H, j);
    }
  }
}

tg_status tg_cpu_lstm_fwd(const tg_kernel_args *a) {
  tg_lstm_args l = tg_lstm_args_of(a);
  int64_t B = l.B, T = l.T, In = l.In, H = l.H, R = T * 6 * H; /* R: floats per batch row of out */
  /* gate slots of every step: x W_ih^T, rows (b, t) of out strided 6H */
  lstm_gemm(0, 1, B * T, 4 * H, In, l.x, In, l.w_ih, In, 0.0f, l.out + 2 * H, 6 * H);
  for (int64_t t = 0; t < T; t++) {
    float *gates = l.out + t * 6 * H + 2 * H; /* [B, 4H], rows strided R */
    if (t > 0) /* += h_{t-1} W_hh^T */
      lstm_gemm(0, 1, B, 4 * H, H, l.out + (t - 1) * 6 * H, R, l.w_hh, H, 1.0f, gates, R);
    else if (l.h0)
      lstm_gemm(0, 1, B, 4 * H, H, l.h0, H, l.w_hh, H, 1.0f, gates, R);
    lstm_step_fwd(&l, t);
  }
  return TG_OK;
}

/* The cell backward of step t for every (b, j): dG[:, t] and the carried dc; reads the carried dh
 * and dc unless t is the last step (where both are zero). */
static void lstm_step_bwd(const tg_lstm_args *l, int64_t t, float *dG, const float *dh, float *dc) {
  int64_t B = l->B, T = l->T, H = l->H;
  int last = t == T - 1;
#pragma omp parallel for if (B * H > LSTM_PAR_MIN)
  for (int64_t b = 0; b < B; b++) {
    const float *row = l->out + (b * T + t) * 6 * H;  /* [6H] */
    const float *grow = l->dout + (b * T + t) * 6 * H; /* [6H] */
    float *dgrow = dG + (b * T + t) * 4 * H;           /* [4H] */
    for (int64_t j = 0; j < H; j++) {
      float cprev = t > 0 ? row[-6 * H + H + j] : l->c0 ? l->c0[b * H + j] : 0.0f;
      float dh_rec = last ? 0.0f : dh[b * H + j], dc_in = last ? 0.0f : dc[b * H + j];
      dc[b * H + j] = tg_lstm_cell_bwd(row, grow, cprev, dh_rec, dc_in, dgrow, H, j);
    }
  }
}

/* db[o] += sum over rows of dG[r, o] for columns [c0, c1), rows in order. */
static void lstm_col_sums(const float *dG, float *db, int64_t rows, int64_t n, int64_t c0, int64_t c1) {
  for (int64_t r = 0; r < rows; r++) {
    const float *row = dG + r * n;
    for (int64_t o = c0; o < c1; o++) db[o] += row[o];
  }
}

static void lstm_bias_grad(const float *dG, float *db, int64_t rows, int64_t n) {
  int64_t nblk = (n + LSTM_COL_BLOCK - 1) / LSTM_COL_BLOCK;
#pragma omp parallel for schedule(static) if (rows * n > LSTM_PAR_MIN && nblk > 1)
  for (int64_t bi = 0; bi < nblk; bi++) {
    int64_t c0 = bi * LSTM_COL_BLOCK, c1 = c0 + LSTM_COL_BLOCK < n ? c0 + LSTM_COL_BLOCK : n;
    lstm_col_sums(dG, db, rows, n, c0, c1);
  }
}

/* The weight, bias and input gradients from the finished dG [B, T, 4H]. */
static void lstm_param_grads(const tg_lstm_args *l, const float *dG) {
  int64_t B = l->B, T = l->T, In = l->In, H = l->H, R = T * 6 * H;
  if (l->dx) /* dx [B*T, I] += dG W_ih */
    lstm_gemm(0, 0, B * T, In, 4 * H, dG, 4 * H, l->w_ih, In, 1.0f, l->dx, In);
  if (l->dw_ih) /* dW_ih [4H, I] += dG^T x */
    lstm_gemm(1, 0, 4 * H, In, B * T, dG, 4 * H, l->x, In, 1.0f, l->dw_ih, In);
  if (l->dw_hh) /* dW_hh [4H, H] += sum over t of dG_t^T h_{t-1} */
    for (int64_t t = 0; t < T; t++) {
      if (t > 0)
        lstm_gemm(1, 0, 4 * H, H, B, dG + t * 4 * H, T * 4 * H, l->out + (t - 1) * 6 * H, R, 1.0f,
                  l->dw_hh, H);
      else if (l->h0)
        lstm_gemm(1, 0, 4 * H, H, B, dG, T * 4 * H, l->h0, H, 1.0f, l->dw_hh, H);
    }
  if (l->dbias) lstm_bias_grad(dG, l->dbias, B * T, 4 * H);
}

tg_status tg_cpu_lstm_bwd(const tg_kernel_args *a) {
  tg_lstm_args l = tg_lstm_args_of(a);
  if (!l.dx && !l.dh0 && !l.dc0 && !l.dw_ih && !l.dw_hh && !l.dbias) return TG_OK;
  int64_t B = l.B, T = l.T, H = l.H;
  size_t need = sizeof(float) * (size_t)tg_lstm_ws_floats(B, T, H);
  if (!a->ws || a->ws_bytes < need)
    return tg_error(TG_ERR_INVALID, "lstm '%s': backward workspace is %zu bytes, needs %zu", a->node_name,
                    a->ws ? a->ws_bytes : 0, need);
  float *dG = (float *)a->ws;        /* [B, T, 4H] */
  float *dh = dG + B * T * 4 * H;    /* [B, H]: dG_{t+1} W_hh */
  float *dc = dh + B * H;            /* [B, H]: gradient reaching c_t from step t+1 */
  for (int64_t t = T - 1; t >= 0; t--) {
    lstm_step_bwd(&l, t, dG, dh, dc);
    const float *dGt = dG + t * 4 * H; /* [B, 4H], rows strided T*4H */
    if (t > 0)
      lstm_gemm(0, 0, B, H, 4 * H, dGt, T * 4 * H, l.w_hh, H, 0.0f, dh, H);
    else if (l.dh0)
      lstm_gemm(0, 0, B, H, 4 * H, dGt, T * 4 * H, l.w_hh, H, 1.0f, l.dh0, H);
  }
  if (l.dc0)
    for (int64_t e = 0; e < B * H; e++) l.dc0[e] += dc[e];
  lstm_param_grads(&l, dG);
  return TG_OK;
}
