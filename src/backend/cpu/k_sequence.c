/* CPU kernels for causal_softmax and conv1d_causal (forward and backward). */
#include <math.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_rows.h"
#include "backend/cpu/cpu_simd.h"

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

/* Keys visible to query row q: j <= q + offset, clamped to [0, Tk] without overflow for any offset. */
static inline int64_t cs_visible(int64_t q, int64_t offset, int64_t Tk) {
  if (offset >= Tk) return Tk;          /* q >= 0, so q + offset + 1 > Tk */
  if (offset <= -(q + 1)) return 0;     /* q + offset + 1 <= 0 */
  int64_t n = q + offset + 1;           /* offset in (-(q+1), Tk): no overflow */
  return n < Tk ? n : Tk;
}

/* x [..., Tq, Tk] as rows [rows, Tk] with query index r % Tq. */
static void cs_dims(const tg_tensor *t, int64_t *rows, int64_t *Tq, int64_t *Tk) {
  *Tk = t->shape[t->ndim - 1];
  *Tq = t->shape[t->ndim - 2];
  *rows = *Tk > 0 ? tg_numel(t) / *Tk : 0;
}

tg_status tg_cpu_causal_softmax_fwd(const tg_kernel_args *a) {
  int64_t rows, Tq, Tk, offset = a->attr->i[0];
  cs_dims(a->in[0], &rows, &Tq, &Tk);
  const float *x = (const float *)a->in[0]->data; /* [rows, Tk] */
  float *y = (float *)a->out->data;               /* [rows, Tk] */
  TG_PAR_FOR(rows * Tk > SEQ_PAR_MIN, ,
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * Tk;
    float *yr = y + r * Tk;
    int64_t n = cs_visible(r % Tq, offset, Tk);
    if (n > 0) {
      float m = tg_row_max(xr, n);
      double s = 0.0;
      for (int64_t j = 0; j < n; j++) {
        yr[j] = expf(xr[j] - m);
        s += yr[j];
      }
      float inv = (float)(1.0 / s);
      for (int64_t j = 0; j < n; j++) yr[j] *= inv;
    }
    for (int64_t j = n; j < Tk; j++) yr[j] = 0.0f; /* hidden keys */
  });
  return TG_OK;
}

/* dx = y * (dy - sum(dy * y)) over the visible keys; hidden keys get nothing. Reads only the output. */
tg_status tg_cpu_causal_softmax_bwd(const tg_kernel_args *a) {
  float *dx = a->in_grad[0]; /* [rows, Tk] */
  if (!dx) return TG_OK;
  int64_t rows, Tq, Tk, offset = a->attr->i[0];
  cs_dims(a->out, &rows, &Tq, &Tk);
  const float *y = (const float *)a->out->data; /* [rows, Tk] */
  const float *dy = a->out_grad;                /* [rows, Tk] */
  TG_PAR_FOR(rows * Tk > SEQ_PAR_MIN, ,
  for (int64_t r = 0; r < rows; r++) {
    const float *yr = y + r * Tk, *gr = dy + r * Tk;
    int64_t n = cs_visible(r % Tq, offset, Tk);
    double dot = 0.0;
    for (int64_t j = 0; j < n; j++) dot += (double)gr[j] * yr[j];
    float fd = (float)dot;
    for (int64_t j = 0; j < n; j++) dx[r * Tk + j] += yr[j] * (gr[j] - fd);
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
