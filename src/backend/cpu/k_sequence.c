/* CPU kernels for causal_softmax and conv1d_causal (forward and backward). */
#include <math.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_rows.h"
#include "backend/cpu/cpu_simd.h"
#include "backend/cpu/cpu_vmath.h"
#include "ops/attention_args.h" /* tg_attn_visible: the keys a query row sees */

/* Below this much work (elements, or multiply-adds for the conv) a kernel runs on the calling thread. */
#define SEQ_PAR_MIN 32768
/* Channel and tap blocks of the conv's weight and bias gradient sums (accumulators on the stack). */
#define CONV_CB 128
#define CONV_KB 16
/* The conv's forward and input gradient: channels per block, taps whose weights are transposed onto
 * the stack (more read w in place), rows per task. */
#define CONV_VC 64
#define CONV_KT 16
#define CONV_RB 32

/* ---- causal_softmax ---- */

/* x [..., Tq, Tk] as rows [rows, Tk] with query index r % Tq. */
static void cs_dims(const tg_tensor *t, int64_t *rows, int64_t *Tq, int64_t *Tk) {
  *Tk = t->shape[t->ndim - 1];
  *Tq = t->shape[t->ndim - 2];
  *rows = *Tk > 0 ? tg_numel(t) / *Tk : 0;
}

/* Every row runs the same loops over its first Tk - Tk % CS_LANES keys, the hidden ones masked by branch-free selects,
 * whatever its number of visible keys (rows of differing lengths would otherwise pay vector remainders and
 * mispredicted loop exits, which cost more than the masked keys); the keys of a last partial lane group go one by one.
 * The row max runs on integer keys that order like the floats (an integer max vectorises; a float one does not
 * without finite-math assumptions; only a NaN or the sign of a zero max could differ, and neither changes a result).
 * The sums run in CS_LANES double lanes, key j to lane j % CS_LANES in order (masked keys add +0), combined in a fixed
 * order: every clone and thread count gives the same bits. Hidden keys' values never enter a result. */
#define CS_LANES TG_ROW_LANES
/* Keys per block of the exp loop (a multiple of CS_LANES). */
#define CS_EXP_BLOCK 16
/* Rows per task of the parallel loops. */
#define CS_TASK_ROWS 64

/* Rows [r0, r1): y = exp(x - max) / sum over the visible keys (tg_vexpf), +0 at the hidden keys. The masked loops count
 * keys in int (Tk <= INT32_MAX, checked by the caller), so that their key-index compares are 16 lanes wide. */
TG_CPU_CLONES static void cs_fwd_rows(const float *x, float *y, int64_t r0, int64_t r1, int64_t Tq, int64_t Tk,
                                      int64_t offset) {
  int jt = (int)(Tk - Tk % CS_LANES);
  for (int64_t r = r0; r < r1; r++) {
    const float *restrict xr = x + r * Tk; /* [Tk] */
    float *restrict yr = y + r * Tk;       /* [Tk] */
    int n = (int)tg_attn_visible(1, offset, Tk, r % Tq);
    if (n == 0) {
      for (int64_t j = 0; j < Tk; j++) yr[j] = 0.0f;
      continue;
    }
    int32_t km = INT32_MIN;
    for (int j = 0; j < jt; j++) {
      int32_t k = j < n ? tg_float_key(xr[j]) : INT32_MIN;
      km = k > km ? k : km;
    }
    for (int j = jt; j < n; j++) {
      int32_t k = tg_float_key(xr[j]);
      km = k > km ? k : km;
    }
    float m = tg_float_unkey(km);
    /* the exp, the one costly loop, only up to the end of the CS_EXP_BLOCK holding the last visible key */
    int je = (n + CS_EXP_BLOCK - 1) / CS_EXP_BLOCK * CS_EXP_BLOCK;
    if (je > jt) je = jt;
    for (int j = 0; j < je; j++) {
      int vis = j < n;
      yr[j] = tg_vsel(vis, tg_vexpf(tg_vsel(vis, xr[j], m) - m), 0.0f);
    }
    double acc[CS_LANES] = {0};
#if TG_CPU_VEC
    tg_vd8 s = {0};
    for (int j = 0; j < je; j += CS_LANES) s += TG_LOAD_D8(yr + j);
    memcpy(acc, &s, sizeof acc);
#else
    for (int j = 0; j < je; j += CS_LANES)
      for (int k = 0; k < CS_LANES; k++) acc[k] += yr[j + k];
#endif
    for (int j = jt; j < n; j++) {
      yr[j] = tg_vexpf(xr[j] - m);
      acc[j - jt] += yr[j];
    }
    float inv = (float)(1.0 / tg_row_lanes_total(acc));
    for (int j = 0; j < jt; j++) yr[j] = tg_vsel(j < n, yr[j] * inv, 0.0f); /* [je, jt) was not written */
    for (int j = jt; j < n; j++) yr[j] *= inv;
    for (int64_t j = jt > n ? jt : n; j < Tk; j++) yr[j] = 0.0f; /* hidden keys of the last partial group */
  }
}

tg_status tg_cpu_causal_softmax_fwd(const tg_kernel_args *a) {
  int64_t rows, Tq, Tk, offset = a->attr->i[0];
  cs_dims(a->in[0], &rows, &Tq, &Tk);
  if (Tk > INT32_MAX)
    return tg_error(TG_ERR_INVALID, "causal_softmax: rows of %lld keys; at most %d are supported", (long long)Tk,
                    INT32_MAX);
  const float *x = (const float *)a->in[0]->data; /* [rows, Tk] */
  float *y = (float *)a->out->data;               /* [rows, Tk] */
  int64_t ntask = (rows + CS_TASK_ROWS - 1) / CS_TASK_ROWS;
  TG_PAR_FOR(rows * Tk > SEQ_PAR_MIN, schedule(static),
  for (int64_t t = 0; t < ntask; t++) {
    int64_t r0 = t * CS_TASK_ROWS, r1 = r0 + CS_TASK_ROWS < rows ? r0 + CS_TASK_ROWS : rows;
    cs_fwd_rows(x, y, r0, r1, Tq, Tk, offset);
  });
  return TG_OK;
}

/* Rows [r0, r1) of the backward: dx += y * (dy - sum(dy * y)) over the visible keys (the dot in CS_LANES double lanes,
 * key j to lane j % CS_LANES); hidden keys get nothing. */
TG_CPU_CLONES static void cs_bwd_rows(const float *y, const float *dy, float *dx, int64_t r0, int64_t r1, int64_t Tq,
                                      int64_t Tk, int64_t offset, int fresh) {
  for (int64_t r = r0; r < r1; r++) {
    const float *restrict yr = y + r * Tk, *restrict gr = dy + r * Tk; /* [Tk] each */
    float *restrict dxr = dx + r * Tk;                                  /* [Tk] */
    int64_t n = tg_attn_visible(1, offset, Tk, r % Tq), j0 = n - n % CS_LANES;
    double acc[CS_LANES] = {0};
#if TG_CPU_VEC
    tg_vd8 s = {0};
    for (int64_t j = 0; j < j0; j += CS_LANES) s += TG_LOAD_D8(gr + j) * TG_LOAD_D8(yr + j);
    memcpy(acc, &s, sizeof acc);
#else
    for (int64_t j = 0; j < j0; j += CS_LANES)
      for (int k = 0; k < CS_LANES; k++) acc[k] += (double)gr[j + k] * yr[j + k];
#endif
    for (int64_t j = j0; j < n; j++) acc[j - j0] += (double)gr[j] * yr[j];
    float fd = (float)tg_row_lanes_total(acc);
    if (fresh) { /* written without being read: +0 + v, and +0 where zeroing would have left it */
      for (int64_t j = 0; j < n; j++) dxr[j] = 0.0f + yr[j] * (gr[j] - fd);
      for (int64_t j = n; j < Tk; j++) dxr[j] = 0.0f;
    } else {
      for (int64_t j = 0; j < n; j++) dxr[j] += yr[j] * (gr[j] - fd);
    }
  }
}

/* Reads only the output. */
tg_status tg_cpu_causal_softmax_bwd(const tg_kernel_args *a) {
  float *dx = a->in_grad[0]; /* [rows, Tk] */
  if (!dx) return TG_OK;
  int64_t rows, Tq, Tk, offset = a->attr->i[0];
  cs_dims(a->out, &rows, &Tq, &Tk);
  const float *y = (const float *)a->out->data; /* [rows, Tk] */
  const float *dy = a->out_grad;                /* [rows, Tk] */
  int64_t ntask = (rows + CS_TASK_ROWS - 1) / CS_TASK_ROWS;
  int fresh = (a->grad_fresh & 1u) != 0;
  TG_PAR_FOR(rows * Tk > SEQ_PAR_MIN, schedule(static),
  for (int64_t t = 0; t < ntask; t++) {
    int64_t r0 = t * CS_TASK_ROWS, r1 = r0 + CS_TASK_ROWS < rows ? r0 + CS_TASK_ROWS : rows;
    cs_bwd_rows(y, dy, dx, r0, r1, Tq, Tk, offset, fresh);
  });
  return TG_OK;
}

/* ---- conv1d_causal ---- */

/* A conv1d_causal call: inputs x, w, then bias if attr.i[0]. */
typedef struct conv_args {
  int64_t B, L, C, K;
  const float *x, *w, *bias; /* [B, L, C], [C, K], [C] or NULL */
  float *dx, *dw, *dbias;    /* like x, w, bias; NULL where no gradient is wanted */
} conv_args;

static conv_args conv_args_of(const tg_kernel_args *a) {
  conv_args c;
  c.B = a->in[0]->shape[0];
  c.L = a->in[0]->shape[1];
  c.C = a->in[0]->shape[2];
  c.K = a->in[1]->shape[1];
  int has_bias = a->attr->i[0] != 0;
  c.x = (const float *)a->in[0]->data;
  c.w = (const float *)a->in[1]->data;
  c.bias = has_bias ? (const float *)a->in[2]->data : NULL;
  c.dx = a->in_grad[0];
  c.dw = a->in_grad[1];
  c.dbias = has_bias ? a->in_grad[2] : NULL;
  return c;
}

/* The conv loops run over a block of CONV_VC channels at a time (contiguous in x, y, dy), so they
 * vectorise over channels; every sum keeps its order (double, from the bias, taps in order; weight
 * sums over rows in order), so the results do not depend on the blocking, the SIMD clone or the
 * thread count. */

/* Taps [k0, K) of row r, channels [c0, c0 + nc): acc[c] += w[c0 + c, k] * src[(rs + sgn k) C + c0 + c]
 * in tap order, w read from wt [K, CONV_VC] (the block's weights transposed) or, when wt is NULL,
 * straight from w [C, K]. */
static inline void conv_taps(const conv_args *p, const float *wt, int64_t c0, int64_t nc, const float *src,
                             int64_t rs, int64_t sgn, int64_t k0, double *restrict acc) {
  const int64_t C = p->C, K = p->K;
  for (int64_t k = k0; k < K; k++) {
    const float *restrict s = src + (rs + sgn * k) * C + c0;
    if (wt) {
      const float *restrict wk = wt + k * CONV_VC;
      for (int64_t c = 0; c < nc; c++) acc[c] += (double)wk[c] * s[c];
    } else {
      for (int64_t c = 0; c < nc; c++) acc[c] += (double)p->w[(c0 + c) * K + k] * s[c];
    }
  }
}

/* wt [K, CONV_VC] = the weights of channels [c0, c0 + nc) transposed; NULL when K > CONV_KT. */
static const float *conv_wt(const conv_args *p, int64_t c0, int64_t nc, float *wt) {
  if (p->K > CONV_KT) return NULL;
  for (int64_t k = 0; k < p->K; k++)
    for (int64_t c = 0; c < nc; c++) wt[k * CONV_VC + c] = p->w[(c0 + c) * p->K + k];
  return wt;
}

/* Forward rows [r0, r1): y[r, c] = bias[c] + sum_k w[c, k] x[r - K + 1 + k, c] over taps inside the
 * sequence (row r = b*L + t). */
TG_CPU_CLONES static void conv_fwd_rows(const conv_args *p, int64_t r0, int64_t r1, float *y) {
  const int64_t C = p->C, K = p->K;
  float wbuf[CONV_KT * CONV_VC];
  for (int64_t c0 = 0; c0 < C; c0 += CONV_VC) {
    const int64_t nc = C - c0 < CONV_VC ? C - c0 : CONV_VC;
    const float *wt = conv_wt(p, c0, nc, wbuf);
    for (int64_t r = r0; r < r1; r++) {
      const int64_t t = r % p->L, k0 = K - 1 - t > 0 ? K - 1 - t : 0; /* first tap inside the sequence */
      double acc[CONV_VC];
      for (int64_t c = 0; c < nc; c++) acc[c] = p->bias ? (double)p->bias[c0 + c] : 0.0;
      conv_taps(p, wt, c0, nc, p->x, r - (K - 1), 1, k0, acc);
      for (int64_t c = 0; c < nc; c++) y[r * C + c0 + c] = (float)acc[c];
    }
  }
}

/* out[b,t,c] = bias[c] + sum_k w[c,k] * x[b, t-K+1+k, c] (x = 0 before t = 0), summed in double
 * from the bias, taps in order. Rows in blocks of CONV_RB per task. */
tg_status tg_cpu_conv1d_causal_fwd(const tg_kernel_args *a) {
  const conv_args p = conv_args_of(a);
  int64_t rows = p.B * p.L, nb = (rows + CONV_RB - 1) / CONV_RB;
  float *y = (float *)a->out->data; /* [B, L, C] */
  TG_PAR_FOR(rows * p.C * p.K > SEQ_PAR_MIN, ,
  for (int64_t ib = 0; ib < nb; ib++)
    conv_fwd_rows(&p, ib * CONV_RB, ib * CONV_RB + CONV_RB < rows ? ib * CONV_RB + CONV_RB : rows, y););
  return TG_OK;
}

/* dx rows [r0, r1): dx[b,s,c] += sum_k w[c,k] * dy[b, s+K-1-k, c] over taps whose output t lies
 * inside the sequence, in double, taps in order. */
TG_CPU_CLONES static void conv_bwd_x_rows(const conv_args *p, const float *dy, int64_t r0, int64_t r1) {
  const int64_t C = p->C, K = p->K;
  float wbuf[CONV_KT * CONV_VC];
  for (int64_t c0 = 0; c0 < C; c0 += CONV_VC) {
    const int64_t nc = C - c0 < CONV_VC ? C - c0 : CONV_VC;
    const float *wt = conv_wt(p, c0, nc, wbuf);
    for (int64_t r = r0; r < r1; r++) {
      const int64_t s = r % p->L, k0 = s + K - p->L > 0 ? s + K - p->L : 0; /* first tap with t < L */
      double acc[CONV_VC];
      for (int64_t c = 0; c < nc; c++) acc[c] = 0.0;
      conv_taps(p, wt, c0, nc, dy, r + K - 1, -1, k0, acc);
      for (int64_t c = 0; c < nc; c++) p->dx[r * C + c0 + c] += (float)acc[c];
    }
  }
}

static void conv_bwd_x(const conv_args *p, const float *dy) {
  int64_t rows = p->B * p->L, nb = (rows + CONV_RB - 1) / CONV_RB;
  TG_PAR_FOR(rows * p->C * p->K > SEQ_PAR_MIN, ,
  for (int64_t ib = 0; ib < nb; ib++)
    conv_bwd_x_rows(p, dy, ib * CONV_RB, ib * CONV_RB + CONV_RB < rows ? ib * CONV_RB + CONV_RB : rows););
}

/* Channel block cb (CONV_CB channels): dbias[c] += sum_r dy[r, c] and, tap block by tap block,
 * dw[c, k] += sum_r dy[r, c] x[r - K + 1 + k, c] over rows in order, each sum in double. */
TG_CPU_CLONES static void conv_bwd_params_block(const conv_args *p, const float *dy, int64_t cb) {
  const int64_t C = p->C, K = p->K, L = p->L, rows = p->B * p->L;
  const int64_t c0 = cb * CONV_CB, nc = C - c0 < CONV_CB ? C - c0 : CONV_CB;
  if (p->dbias) {
    double sb[CONV_CB] = {0}; /* [nc] */
    for (int64_t r = 0; r < rows; r++) {
      const float *restrict g = dy + r * C + c0;
      for (int64_t c = 0; c < nc; c++) sb[c] += g[c];
    }
    for (int64_t c = 0; c < nc; c++) p->dbias[c0 + c] += (float)sb[c];
  }
  if (!p->dw) return;
  for (int64_t k0 = 0; k0 < K; k0 += CONV_KB) {
    const int64_t nk = K - k0 < CONV_KB ? K - k0 : CONV_KB;
    double sw[CONV_KB][CONV_CB]; /* [nk][nc] */
    for (int64_t k = 0; k < nk; k++)
      for (int64_t c = 0; c < nc; c++) sw[k][c] = 0.0;
    for (int64_t r = 0; r < rows; r++) {
      const int64_t t = r % L, rx = r - (K - 1);          /* rx: row of tap 0 */
      const int64_t klo = K - 1 - t > k0 ? K - 1 - t : k0; /* first tap inside the sequence */
      const float *restrict g = dy + r * C + c0;           /* [nc] */
      for (int64_t k = klo; k < k0 + nk; k++) {
        const float *restrict xs = p->x + (rx + k) * C + c0;
        double *restrict s = sw[k - k0];
        for (int64_t c = 0; c < nc; c++) s[c] += (double)g[c] * xs[c];
      }
    }
    for (int64_t c = 0; c < nc; c++)
      for (int64_t k = 0; k < nk; k++) p->dw[(c0 + c) * K + k0 + k] += (float)sw[k][c];
  }
}

/* dw and dbias: one task per channel block (thread-count independent). */
static void conv_bwd_params(const conv_args *p, const float *dy) {
  int64_t rows = p->B * p->L, ncb = (p->C + CONV_CB - 1) / CONV_CB;
  TG_PAR_FOR(rows * p->C * p->K > SEQ_PAR_MIN, ,
  for (int64_t cb = 0; cb < ncb; cb++) conv_bwd_params_block(p, dy, cb););
}

tg_status tg_cpu_conv1d_causal_bwd(const tg_kernel_args *a) {
  const conv_args p = conv_args_of(a);
  const float *dy = a->out_grad; /* [B, L, C] */
  if (p.dx) conv_bwd_x(&p, dy);
  if (p.dw || p.dbias) conv_bwd_params(&p, dy);
  return TG_OK;
}
