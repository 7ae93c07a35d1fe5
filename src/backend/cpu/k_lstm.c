/* CPU LSTM kernels: one layer over a sequence, forward and backpropagation through time, OpenBLAS GEMMs (tg_cpu_gemm) and no allocation. */
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_simd.h"
#include "backend/cpu/cpu_vmath.h"
#include "ops/lstm_args.h"

/* The bias sums go parallel above this many elements. */
#define LSTM_PAR_MIN 32768
#define LSTM_COL_BLOCK 64

/* One step's cell update for one batch row [6H] (h | c | i | f | g | o): tg_lstm_cell_fwd's math
 * with the branch-free logistic and tanh of cpu_vmath.h. The row's six slots are passed as
 * separate restrict pointers so that the loop vectorises without alias checks. cp [H]: c_{t-1}. */
TG_CPU_CLONES static void lstm_cells_fwd(float *restrict h, float *restrict c, float *restrict gi,
                                         float *restrict gf, float *restrict gg, float *restrict go,
                                         const float *restrict cp, int64_t H) {
  for (int64_t j = 0; j < H; j++) {
    float i = tg_vsigmoid(gi[j]), f = tg_vsigmoid(gf[j]), g = tg_vtanhf(gg[j]), o = tg_vsigmoid(go[j]);
    float cj = f * cp[j] + i * g;
    gi[j] = i;
    gf[j] = f;
    gg[j] = g;
    go[j] = o;
    c[j] = cj;
    h[j] = o * tg_vtanhf(cj);
  }
}

/* The same row with c_{t-1} = 0 (the first step without c0). */
TG_CPU_CLONES static void lstm_cells_fwd0(float *restrict h, float *restrict c, float *restrict gi,
                                          float *restrict gf, float *restrict gg, float *restrict go, int64_t H) {
  for (int64_t j = 0; j < H; j++) {
    float i = tg_vsigmoid(gi[j]), f = tg_vsigmoid(gf[j]), g = tg_vtanhf(gg[j]), o = tg_vsigmoid(go[j]);
    float cj = f * 0.0f + i * g;
    gi[j] = i;
    gf[j] = f;
    gg[j] = g;
    go[j] = o;
    c[j] = cj;
    h[j] = o * tg_vtanhf(cj);
  }
}

/* One step's cell update for one batch row [6H]: bias [4H] or NULL, cprev [H] or NULL (zeros). */
static void lstm_row_fwd(float *row, const float *bias, const float *cprev, int64_t H) {
  float *gates = row + 2 * H; /* [4H] */
  if (bias)
    for (int64_t k = 0; k < 4 * H; k++) gates[k] += bias[k];
  if (cprev)
    lstm_cells_fwd(row, row + H, gates, gates + H, gates + 2 * H, gates + 3 * H, cprev, H);
  else
    lstm_cells_fwd0(row, row + H, gates, gates + H, gates + 2 * H, gates + 3 * H, H);
}

/* Batch rows are independent through the whole recurrence, so the sequence is split into parts of contiguous rows,
 * one per thread, each running every step of its rows with no barrier between steps: a step's product (B x 4H x H)
 * is too small to split, and the cell updates alone are too short to pay for a barrier per step. A part has at least
 * this many rows. One thread (or too few rows) runs one part: the whole batch, as one product per step. */
#define LSTM_PART_ROWS 8

/* Parts of the batch for this call: the thread count, at most B / LSTM_PART_ROWS, at least 1. */
static int64_t lstm_parts(int64_t B) {
  if (!tg_par_ok()) return 1;
  int64_t n = omp_get_max_threads(), most = B / LSTM_PART_ROWS;
  return n < most ? n : most > 1 ? most : 1;
}

/* Rows [*b0, *b1) of part p of n over B rows. */
static void lstm_part_rows(int64_t B, int64_t n, int64_t p, int64_t *b0, int64_t *b1) {
  *b0 = B * p / n;
  *b1 = B * (p + 1) / n;
}

/* The recurrence of rows [b0, b1) over every step: h_{t-1} W_hh^T added to the gate slots (x W_ih^T already there),
 * then each row's cell update. */
static void lstm_rows_fwd(const tg_lstm_args *l, int64_t b0, int64_t b1) {
  int64_t T = l->T, H = l->H, R = T * 6 * H, nb = b1 - b0; /* R: floats per batch row of out */
  float *base = l->out + b0 * R;                           /* row b0 of out [B, T, 6H] */
  for (int64_t t = 0; t < T; t++) {
    float *gates = base + t * 6 * H + 2 * H; /* [nb, 4H], rows strided R */
    if (t > 0) /* += h_{t-1} W_hh^T */
      tg_cpu_gemm(0, 1, nb, 4 * H, H, base + (t - 1) * 6 * H, R, l->w_hh, H, 1.0f, gates, R);
    else if (l->h0)
      tg_cpu_gemm(0, 1, nb, 4 * H, H, l->h0 + b0 * H, H, l->w_hh, H, 1.0f, gates, R);
    for (int64_t b = b0; b < b1; b++) {
      float *row = l->out + (b * T + t) * 6 * H; /* [6H] */
      const float *cprev = t > 0 ? row - 6 * H + H : l->c0 ? l->c0 + b * H : NULL; /* [H] */
      lstm_row_fwd(row, l->bias, cprev, H);
    }
  }
}

tg_status tg_cpu_lstm_fwd(const tg_kernel_args *a) {
  tg_lstm_args l = tg_lstm_args_of(a);
  int64_t B = l.B, In = l.In, H = l.H, parts = lstm_parts(B);
  /* gate slots of every step: x W_ih^T, rows (b, t) of out strided 6H */
  tg_cpu_gemm(0, 1, B * l.T, 4 * H, In, l.x, In, l.w_ih, In, 0.0f, l.out + 2 * H, 6 * H);
  TG_PAR_FOR(parts > 1, schedule(static) num_threads(parts),
  for (int64_t p = 0; p < parts; p++) {
    int64_t b0, b1;
    lstm_part_rows(B, parts, p, &b0, &b1);
    lstm_rows_fwd(&l, b0, b1);
  });
  return TG_OK;
}

/* tg_lstm_cell_bwd for element j of one batch row, tanh(c) as in lstm_cells_fwd: c, i, f, g, o
 * [H] the row's slots, grow [6H] its gradient, cpj = c_{t-1}[j]; dh_rec [H] and dc [H] the
 * gradients reaching h_t and c_t from step t+1 (zeros at the last step), dc[j] becomes the one
 * reaching c_{t-1}; dg [4H] gets i | f | g | o. */
TG_CPU_INLINE void lstm_cell_bwd(const float *restrict c, const float *restrict i_, const float *restrict f_,
                                 const float *restrict g_, const float *restrict o_, const float *restrict grow,
                                 float cpj, const float *restrict dh_rec, float *restrict dc, float *restrict dg,
                                 int64_t H, int64_t j) {
  float i = i_[j], f = f_[j], g = g_[j], o = o_[j];
  float tc = tg_vtanhf(c[j]);
  float dh = grow[j] + dh_rec[j];
  float d_o = grow[5 * H + j] + dh * tc;
  float dcj = (dc[j] + grow[H + j]) + (dh * o) * (1.0f - tc * tc);
  float d_i = grow[2 * H + j] + dcj * g;
  float d_f = grow[3 * H + j] + dcj * cpj;
  float d_g = grow[4 * H + j] + dcj * i;
  dg[j] = d_i * i * (1.0f - i);
  dg[H + j] = d_f * f * (1.0f - f);
  dg[2 * H + j] = d_g * (1.0f - g * g);
  dg[3 * H + j] = d_o * o * (1.0f - o);
  dc[j] = dcj * f;
}

/* lstm_cell_bwd over j in [0, H), c_{t-1} = cp [H]; the slots as separate restrict pointers so
 * that the loop vectorises without alias checks. */
TG_CPU_CLONES static void lstm_cells_bwd(const float *restrict c, const float *restrict i_, const float *restrict f_,
                                         const float *restrict g_, const float *restrict o_,
                                         const float *restrict grow, const float *restrict cp,
                                         const float *restrict dh_rec, float *restrict dc, float *restrict dg,
                                         int64_t H) {
  for (int64_t j = 0; j < H; j++) lstm_cell_bwd(c, i_, f_, g_, o_, grow, cp[j], dh_rec, dc, dg, H, j);
}

/* One step's cell backward for one batch row: row and grow [6H], cprev [H] or NULL (zeros). */
static void lstm_row_bwd(const float *row, const float *grow, const float *cprev, const float *dh_rec, float *dc,
                         float *dg, int64_t H) {
  const float *c = row + H, *g = row + 2 * H; /* [H], [4H] */
  if (cprev)
    lstm_cells_bwd(c, g, g + H, g + 2 * H, g + 3 * H, grow, cprev, dh_rec, dc, dg, H);
  else /* once per sequence at most: the first step without c0 */
    for (int64_t j = 0; j < H; j++) lstm_cell_bwd(c, g, g + H, g + 2 * H, g + 3 * H, grow, 0.0f, dh_rec, dc, dg, H, j);
}

/* Backpropagation through time of rows [b0, b1): each step's cell backward into dG[:, t] and the carried dc from the
 * carried dh and dc (zeroed before the last step), then dh = dG_t W_hh for the step before. */
static void lstm_rows_bwd(const tg_lstm_args *l, int64_t b0, int64_t b1, float *dG, float *dh, float *dc) {
  int64_t T = l->T, H = l->H, nb = b1 - b0;
  for (int64_t t = T - 1; t >= 0; t--) {
    for (int64_t b = b0; b < b1; b++) {
      const float *row = l->out + (b * T + t) * 6 * H;                               /* [6H] */
      const float *cprev = t > 0 ? row - 6 * H + H : l->c0 ? l->c0 + b * H : NULL; /* [H] */
      lstm_row_bwd(row, l->dout + (b * T + t) * 6 * H, cprev, dh + b * H, dc + b * H, dG + (b * T + t) * 4 * H, H);
    }
    const float *dGt = dG + (b0 * T + t) * 4 * H; /* [nb, 4H], rows strided T*4H */
    if (t > 0)
      tg_cpu_gemm(0, 0, nb, H, 4 * H, dGt, T * 4 * H, l->w_hh, H, 0.0f, dh + b0 * H, H);
    else if (l->dh0)
      tg_cpu_gemm(0, 0, nb, H, 4 * H, dGt, T * 4 * H, l->w_hh, H, 1.0f, l->dh0 + b0 * H, H);
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
  TG_PAR_FOR(rows * n > LSTM_PAR_MIN && nblk > 1, schedule(static),
  for (int64_t bi = 0; bi < nblk; bi++) {
    int64_t c0 = bi * LSTM_COL_BLOCK, c1 = c0 + LSTM_COL_BLOCK < n ? c0 + LSTM_COL_BLOCK : n;
    lstm_col_sums(dG, db, rows, n, c0, c1);
  });
}

/* The weight, bias and input gradients from the finished dG [B, T, 4H]. */
static void lstm_param_grads(const tg_lstm_args *l, const float *dG) {
  int64_t B = l->B, T = l->T, In = l->In, H = l->H, R = T * 6 * H;
  if (l->dx) /* dx [B*T, I] += dG W_ih */
    tg_cpu_gemm(0, 0, B * T, In, 4 * H, dG, 4 * H, l->w_ih, In, 1.0f, l->dx, In);
  if (l->dw_ih) /* dW_ih [4H, I] += dG^T x */
    tg_cpu_gemm(1, 0, 4 * H, In, B * T, dG, 4 * H, l->x, In, 1.0f, l->dw_ih, In);
  if (l->dw_hh) /* dW_hh [4H, H] += sum over t of dG_t^T h_{t-1} */
    for (int64_t t = 0; t < T; t++) {
      if (t > 0)
        tg_cpu_gemm(1, 0, 4 * H, H, B, dG + t * 4 * H, T * 4 * H, l->out + (t - 1) * 6 * H, R, 1.0f,
                  l->dw_hh, H);
      else if (l->h0)
        tg_cpu_gemm(1, 0, 4 * H, H, B, dG, T * 4 * H, l->h0, H, 1.0f, l->dw_hh, H);
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
  memset(dh, 0, sizeof(float) * (size_t)(2 * B * H)); /* nothing reaches the last step from later */
  int64_t parts = lstm_parts(B);
  TG_PAR_FOR(parts > 1, schedule(static) num_threads(parts),
  for (int64_t p = 0; p < parts; p++) {
    int64_t b0, b1;
    lstm_part_rows(B, parts, p, &b0, &b1);
    lstm_rows_bwd(&l, b0, b1, dG, dh, dc);
  });
  if (l.dc0)
    for (int64_t e = 0; e < B * H; e++) l.dc0[e] += dc[e];
  lstm_param_grads(&l, dG);
  return TG_OK;
}
