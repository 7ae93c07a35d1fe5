/* CPU kernels of the SSD scan: the chunked forward and its exact adjoint as small matrix products. */
#include <omp.h>
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_simd.h"
#include "ops/ssd_ref.h"

/* Per (batch b, head h) pair, chunk c of q steps from t0, with a_k = dt_k A (<= 0), the chunk's
 * cum_l = a_0 + .. + a_l, din_l = exp(cum_l), tot = din_{q-1}, ewo_s = exp(a_{s+1} + .. + a_{q-1}),
 * wout_s = dt_s ewo_s, E[l, s] = exp(a_{s+1} + .. + a_l) (s <= l), CB[l, s] = C_l . B_s (shared by
 * the heads of a group) and M = E dt_s CB (zero above the diagonal), the forward is
 *   Y_c = diag(din) C_c S_c + M X_c + D X_c          S_{c+1} = tot S_c + (diag(wout) B_c)^T X_c
 * with S_0 = 0 (states [N, P]), and the backward runs the adjoint of these four products chunk by
 * chunk from the last, with G = dS_{c+1}:
 *   dM = dY X^T (lower)   dX += M^T dY + diag(wout) B_c G + D dY   dCB = dM E dt_s (per head)
 *   dC += diag(din) dY S^T + dCB B_c    dB += diag(wout) X G^T + dCB^T C_c   (heads summed)
 *   dS_c = tot G + (diag(din) C_c)^T dY
 * and the decays' gradients gathered per a_k (every exponent is a sum of a run of a_k).
 * E is built by products E[l, s] = E[l-1, s] exp(a_l), so it needs q exps a chunk, not q^2. Decays
 * below SSD_TINY are flushed to 0: terms under 1e-30 of their neighbours change nothing a float sum
 * can hold, and denormal arithmetic is slow.
 *
 * Products run through mm(): register tiles of MM_R rows x MM_W columns, the sum over k in order
 * for every element whatever the tile or clone, so results are the same bits on every run, SIMD
 * width and thread count. Pairs run in parallel (one per thread at a time, scratch in the thread's
 * slot of the workspace); the group sums (CB, dB, dC) run per (batch, group, chunk) in fixed order. */

#define SSD_PAR_MIN 32768 /* below this much work (pairs x L x N x P) a kernel runs on one thread */
#define SSD_TINY 1e-30f   /* decays below this are flushed to 0 */

/* ---- small matrix products ---- */

#define MM_R 4  /* rows of a register tile */
#define MM_W 32 /* columns of a register tile */

enum {
  MM_ACC = 1,  /* C += A B (else C = A B) */
  MM_ALOW = 2, /* A(i, k) == 0 (stored) for k > i: sum k < i + 1 only (up to the tile's last row) */
  MM_AUP = 4,  /* A(i, k) == 0 (stored) for k < i: sum k >= i only (from the tile's first row) */
  MM_CLOW = 8  /* only C(i, j) for j <= i is wanted (the tile may write some j > i) */
};

/* Inlined into every SIMD clone of its caller (a separate copy would be the baseline's). */
#if defined(__GNUC__)
#define MM_INLINE static inline __attribute__((always_inline))
#else
#define MM_INLINE static inline
#endif

/* A tile of R rows x MM_W columns: C (+)= sum over k in [k0, k1) of A(r, k) B[k, :]. */
#define MM_TILE(NAME, R)                                                                                \
  MM_INLINE void NAME(const float *restrict A, int64_t ars, int64_t aks, const float *restrict B,          \
                      int64_t ldb, float *restrict C, int64_t ldc, int64_t k0, int64_t k1, int acc) {     \
    float t[R][MM_W];                                                                                   \
    for (int r = 0; r < R; r++)                                                                         \
      for (int j = 0; j < MM_W; j++) t[r][j] = 0.0f;                                                    \
    if (acc)                                                                                            \
      for (int r = 0; r < R; r++)                                                                       \
        for (int j = 0; j < MM_W; j++) t[r][j] = C[r * ldc + j];                                        \
    for (int64_t k = k0; k < k1; k++) {                                                                 \
      const float *b = B + k * ldb;                                                                     \
      for (int r = 0; r < R; r++) {                                                                     \
        const float a = A[r * ars + k * aks];                                                           \
        for (int j = 0; j < MM_W; j++) t[r][j] += a * b[j];                                             \
      }                                                                                                 \
    }                                                                                                   \
    for (int r = 0; r < R; r++)                                                                         \
      for (int j = 0; j < MM_W; j++) C[r * ldc + j] = t[r][j];                                          \
  }
MM_TILE(mm_tile4, MM_R)
MM_TILE(mm_tile1, 1)

/* The same sums for rows x cols (cols < MM_W) at the right edge, element by element. */
MM_INLINE void mm_edge(int64_t rows, int64_t cols, const float *A, int64_t ars, int64_t aks, const float *B,
                       int64_t ldb, float *C, int64_t ldc, int64_t k0, int64_t k1, int acc) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < cols; j++) {
      float s = acc ? C[r * ldc + j] : 0.0f;
      for (int64_t k = k0; k < k1; k++) s += A[r * ars + k * aks] * B[k * ldb + j];
      C[r * ldc + j] = s;
    }
}

/* C [m, n] (+)= A [m, K] B [K, n], A(i, k) = A[i * ars + k * aks], B and C row-major with leading
 * dimensions ldb and ldc; flags MM_*. A, B and C must not overlap. */
TG_CPU_CLONES static void mm(int64_t m, int64_t n, int64_t K, const float *restrict A, int64_t ars,
                             int64_t aks, const float *restrict B, int64_t ldb, float *restrict C, int64_t ldc,
                             int flags) {
  const int acc = flags & MM_ACC;
  for (int64_t i0 = 0; i0 < m; i0 += MM_R) {
    const int64_t rows = m - i0 < MM_R ? m - i0 : MM_R, i1 = i0 + rows;
    const int64_t k0 = (flags & MM_AUP) ? i0 : 0, k1 = (flags & MM_ALOW) && i1 < K ? i1 : K;
    const int64_t jn = (flags & MM_CLOW) && i1 < n ? i1 : n;
    const float *Ai = A + i0 * ars;
    float *Ci = C + i0 * ldc;
    for (int64_t j0 = 0; j0 < jn; j0 += MM_W) {
      if (j0 + MM_W > n) {
        mm_edge(rows, n - j0, Ai, ars, aks, B + j0, ldb, Ci + j0, ldc, k0, k1, acc);
      } else if (rows == MM_R) {
        mm_tile4(Ai, ars, aks, B + j0, ldb, Ci + j0, ldc, k0, k1, acc);
      } else {
        for (int64_t r = 0; r < rows; r++)
          mm_tile1(Ai + r * ars, ars, aks, B + j0, ldb, Ci + r * ldc + j0, ldc, k0, k1, acc);
      }
    }
  }
}

/* dst [cols, ld] = scale_r src[r, c] transposed (scale NULL: 1), src [rows, lds]. */
MM_INLINE void ssd_transpose(int64_t rows, int64_t cols, const float *restrict src, int64_t lds,
                             const float *restrict scale, float *restrict dst, int64_t ld) {
  for (int64_t c = 0; c < cols; c++) {
    float *restrict out = dst + c * ld;
    if (scale)
      for (int64_t r = 0; r < rows; r++) out[r] = scale[r] * src[r * lds + c];
    else
      for (int64_t r = 0; r < rows; r++) out[r] = src[r * lds + c];
  }
}

static inline float ssd_flush(float v) { return v < SSD_TINY ? 0.0f : v; }

#define SSD_LANES 16 /* partial sums of ssd_dot and ssd_sum */

/* The partial sums of ssd_dot / ssd_sum added by a halving tree. */
MM_INLINE float ssd_lanes_sum(float *acc) {
  for (int half = SSD_LANES / 2; half > 0; half /= 2)
    for (int j = 0; j < half; j++) acc[j] += acc[j + half];
  return acc[0];
}

/* sum_i a[i] b[i] in a fixed order that vectorises: element i into partial sum i % SSD_LANES, then
 * the partials by a halving tree (the same bits in every SIMD clone). */
MM_INLINE float ssd_dot(const float *restrict a, const float *restrict b, int64_t n) {
  float acc[SSD_LANES];
  for (int j = 0; j < SSD_LANES; j++) acc[j] = 0.0f;
  int64_t i = 0;
  for (; i + SSD_LANES <= n; i += SSD_LANES)
    for (int j = 0; j < SSD_LANES; j++) acc[j] += a[i + j] * b[i + j];
  for (int j = 0; i + j < n; j++) acc[j] += a[i + j] * b[i + j];
  return ssd_lanes_sum(acc);
}

/* sum_i a[i] in the order of ssd_dot. */
MM_INLINE float ssd_sum(const float *restrict a, int64_t n) {
  float acc[SSD_LANES];
  for (int j = 0; j < SSD_LANES; j++) acc[j] = 0.0f;
  int64_t i = 0;
  for (; i + SSD_LANES <= n; i += SSD_LANES)
    for (int j = 0; j < SSD_LANES; j++) acc[j] += a[i + j];
  for (int j = 0; i + j < n; j++) acc[j] += a[i + j];
  return ssd_lanes_sum(acc);
}

/* Asks for the cache lines of rows [q, P] (stride ld) of a buffer about to be updated. */
static inline void ssd_prefetch_rows(const float *p, int64_t q, int64_t P, int64_t ld) {
#if defined(__GNUC__)
  for (int64_t l = 0; l < q; l++)
    for (int64_t e = 0; e < P; e += 16) __builtin_prefetch(p + l * ld + e, 1, 3);
#else
  (void)p, (void)q, (void)P, (void)ld;
#endif
}

/* ---- operands, workspace, one thread's scratch ---- */

/* The node's operands: x, dt, A, Bm, Cm [B, L, H, P], [B, L, H], [H], [B, L, G, N] x2; D [H] or NULL. */
typedef struct ssd_ops {
  const float *x, *dt, *A, *Bm, *Cm, *D;
} ssd_ops;

static ssd_ops ssd_ops_of(const tg_kernel_args *a) {
  ssd_ops o;
  o.x = (const float *)a->in[0]->data;
  o.dt = (const float *)a->in[1]->data;
  o.A = (const float *)a->in[2]->data;
  o.Bm = (const float *)a->in[3]->data;
  o.Cm = (const float *)a->in[4]->data;
  o.D = a->attr->i[1] ? (const float *)a->in[5]->data : NULL;
  return o;
}

/* TG_OK when the plan gave at least `floats` floats of workspace. */
static tg_status ssd_check_ws(const tg_kernel_args *a, size_t floats, const char *pass) {
  if (a->ws && a->ws_bytes >= floats * sizeof(float)) return TG_OK;
  return tg_error(TG_ERR_INVALID, "ssd_scan '%s' %s: workspace of %zu bytes, needs %zu (plan sizes it "
                  "with tg_ssd_workspace)", a->node_name, pass, a->ws ? a->ws_bytes : 0,
                  floats * sizeof(float));
}

static int64_t ssd_work(const tg_ssd_dims *d) { return d->B * d->H * d->L * d->N * d->P; }

/* One kernel call's fixed context. */
typedef struct ssd_ctx {
  tg_ssd_dims d;
  tg_ssd_cpu_layout w;
  ssd_ops o;
  float *ws;
} ssd_ctx;

/* A thread's scratch (the slot layout of tg_ssd_cpu_layout). */
typedef struct ssd_slot {
  float *st;              /* [nc, N, P] the state entering each chunk */
  float *E, *M, *dM;      /* [QQ, QQ] each */
  float *T1, *T2;         /* [max(N, P), QQ] and [QQ, max(N, P)] */
  float *dX;              /* [QQ, P] the chunk's dx, added to dx once */
  float *Gs, *Gt, *St;    /* [N, P], [P, N], [P, N] */
  float *dtv, *din, *ewo, *wout, *ea;     /* [QQ] each: the chunk's dt and decays */
  float *ddt, *ddin, *dwout, *da, *U;     /* [QQ] each: backward sums */
} ssd_slot;

static ssd_slot ssd_slot_of(const ssd_ctx *c, int slot) {
  const tg_ssd_cpu_layout *w = &c->w;
  float *b = c->ws + w->slot + (size_t)slot * w->slot_len;
  ssd_slot s;
  s.st = b + w->st;
  s.E = b + w->E;
  s.M = b + w->M;
  s.dM = b + w->dM;
  s.T1 = b + w->T1;
  s.T2 = b + w->T2;
  s.dX = b + w->dX;
  s.Gs = b + w->Gs;
  s.Gt = b + w->Gt;
  s.St = b + w->St;
  float *v = b + w->vec;
  float **vs[] = {&s.dtv, &s.din, &s.ewo, &s.wout, &s.ea, &s.ddt, &s.ddin, &s.dwout, &s.da, &s.U};
  for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) *vs[i] = v + i * w->vec_len;
  return s;
}

/* Threads for the kernel's parallel passes: one per slot at most, one when the work is small. */
static int ssd_threads(const ssd_ctx *c) {
  int n = omp_get_max_threads();
  if (ssd_work(&c->d) <= SSD_PAR_MIN) return 1;
  return n < c->w.slots ? n : (int)c->w.slots;
}

/* Chunk c's first step and length. */
static int64_t ssd_t0(const tg_ssd_dims *d, int64_t c) { return c * d->Q; }
static int64_t ssd_q(const tg_ssd_dims *d, int64_t c) {
  return d->L - c * d->Q < d->Q ? d->L - c * d->Q : d->Q;
}

/* ---- the decays of one pair's chunk ---- */

/* dtv, din, ewo, wout, ea of the chunk [t0, t0 + q); returns tot = exp(sum of the chunk's a). */
static float ssd_decay(const ssd_ctx *c, int64_t pair, int64_t t0, int64_t q, const ssd_slot *s) {
  const tg_ssd_dims *d = &c->d;
  const float Ah = c->o.A[tg_ssd_h(d, pair)];
  float cum = 0.0f, rs = 0.0f;
  for (int64_t l = 0; l < q; l++) {
    const float dtt = c->o.dt[tg_ssd_dtix(d, pair, t0 + l)], a = dtt * Ah;
    s->dtv[l] = dtt;
    cum += a;
    s->din[l] = ssd_flush(expf(cum));
    s->ea[l] = expf(a);
  }
  for (int64_t l = q - 1; l >= 0; l--) {
    s->ewo[l] = ssd_flush(expf(rs));
    s->wout[l] = s->ewo[l] * s->dtv[l];
    rs += s->dtv[l] * Ah;
  }
  return s->din[q - 1];
}

/* E and M of the chunk (rows and columns [0, q), leading dimension QQ) from cb [QQ, QQ]. M is 0
 * above the diagonal (mm reads it there); E is only defined on and below it. */
TG_CPU_CLONES static void ssd_decay_matrix(int64_t q, int64_t QQ, const float *restrict cb,
                                           const ssd_slot *s) {
  const float *restrict dtv = s->dtv;
  for (int64_t l = 0; l < q; l++) {
    float *restrict E = s->E + l * QQ, *restrict M = s->M + l * QQ;
    const float *restrict Ep = s->E + (l > 0 ? l - 1 : 0) * QQ, *restrict cbl = cb + l * QQ; /* row l - 1 */
    const float ea = s->ea[l];
    for (int64_t j = 0; j < l; j++) {
      const float v = Ep[j] * ea;
      E[j] = v < SSD_TINY ? 0.0f : v;
    }
    E[l] = 1.0f;
    for (int64_t j = 0; j <= l; j++) M[j] = E[j] * dtv[j] * cbl[j];
    for (int64_t j = l + 1; j < q; j++) M[j] = 0.0f;
  }
}

/* ---- forward ---- */

/* cb of (batch, group, chunk) unit u: C_l . B_s for s <= l (T1 of the slot holds B^T). */
static void ssd_cb_unit(const ssd_ctx *c, int64_t u, const ssd_slot *s) {
  const tg_ssd_dims *d = &c->d;
  const int64_t QQ = c->w.qq, ch = u % d->nc, bg = u / d->nc, b = bg / d->G, g = bg % d->G;
  const int64_t t0 = ssd_t0(d, ch), q = ssd_q(d, ch), ld = d->G * d->N;
  const float *Bc = c->o.Bm + ((b * d->L + t0) * d->G + g) * d->N; /* rows [q, N], stride G N */
  const float *Cc = c->o.Cm + ((b * d->L + t0) * d->G + g) * d->N;
  ssd_transpose(q, d->N, Bc, ld, NULL, s->T1, QQ); /* [N, q] */
  mm(q, q, d->N, Cc, ld, 1, s->T1, QQ, c->ws + c->w.cb + (size_t)u * (size_t)(QQ * QQ), QQ, MM_CLOW);
}

/* cb of the pair's group for chunk ch. */
static const float *ssd_cb_of(const ssd_ctx *c, int64_t pair, int64_t ch) {
  const tg_ssd_dims *d = &c->d;
  const int64_t g = tg_ssd_h(d, pair) / (d->H / d->G), u = (tg_ssd_b(d, pair) * d->G + g) * d->nc + ch;
  return c->ws + c->w.cb + (size_t)u * (size_t)(c->w.qq * c->w.qq);
}

/* The pair's chunks in order: st[c] = S_c for every chunk, and when y is not NULL its rows of y. */
static void ssd_fwd_pair(const ssd_ctx *c, int64_t pair, float *y, const ssd_slot *s) {
  const tg_ssd_dims *d = &c->d;
  const int64_t N = d->N, P = d->P, np = N * P, QQ = c->w.qq, ldx = d->H * P, ldb = d->G * N;
  const float Dh = c->o.D ? c->o.D[tg_ssd_h(d, pair)] : 0.0f;
  for (int64_t e = 0; e < np; e++) s->st[e] = 0.0f;
  for (int64_t ch = 0; ch < d->nc; ch++) {
    const int64_t t0 = ssd_t0(d, ch), q = ssd_q(d, ch);
    const float tot = ssd_decay(c, pair, t0, q, s);
    const float *xc = c->o.x + tg_ssd_xrow(d, pair, t0), *Bc = c->o.Bm + tg_ssd_brow(d, pair, t0);
    float *S = s->st + ch * np;
    if (y) {
      const float *Cc = c->o.Cm + tg_ssd_brow(d, pair, t0);
      float *yc = y + tg_ssd_xrow(d, pair, t0); /* rows [q, P], stride H P */
      ssd_decay_matrix(q, QQ, ssd_cb_of(c, pair, ch), s);
      if (ch == 0) {
        for (int64_t l = 0; l < q; l++)
          for (int64_t p = 0; p < P; p++) yc[l * ldx + p] = 0.0f;
      } else {
        mm(q, P, N, Cc, ldb, 1, S, P, yc, ldx, 0);
        for (int64_t l = 0; l < q; l++)
          for (int64_t p = 0; p < P; p++) yc[l * ldx + p] *= s->din[l];
      }
      mm(q, P, q, s->M, QQ, 1, xc, ldx, yc, ldx, MM_ACC | MM_ALOW);
      if (c->o.D)
        for (int64_t l = 0; l < q; l++)
          for (int64_t p = 0; p < P; p++) yc[l * ldx + p] += Dh * xc[l * ldx + p];
    }
    if (ch + 1 < d->nc) {
      float *Sn = S + np;
      ssd_transpose(q, N, Bc, ldb, s->wout, s->T1, QQ); /* [N, q]: wout_s B_s */
      for (int64_t e = 0; e < np; e++) Sn[e] = tot * S[e];
      mm(N, P, q, s->T1, QQ, 1, xc, ldx, Sn, P, MM_ACC);
    }
  }
}

tg_status tg_cpu_ssd_scan_fwd(const tg_kernel_args *a) {
  ssd_ctx c;
  c.d = tg_ssd_dims_of(a);
  c.w = tg_ssd_cpu_layout_of(&c.d, 0);
  c.o = ssd_ops_of(a);
  tg_status st = ssd_check_ws(a, c.w.total, "forward");
  if (st != TG_OK) return st;
  c.ws = (float *)a->ws;
  float *y = (float *)a->out->data; /* [B, L, H, P] */
  const int64_t pairs = c.d.B * c.d.H, units = c.d.B * c.d.G * c.d.nc;
  int nt = ssd_threads(&c);
  if (nt < 2 || !tg_par_ok()) { /* no OpenMP region (and no orphaned loop) for one thread: see cpu_par.h */
    const ssd_slot s = ssd_slot_of(&c, 0);
    for (int64_t u = 0; u < units; u++) ssd_cb_unit(&c, u, &s);
    for (int64_t pair = 0; pair < pairs; pair++) ssd_fwd_pair(&c, pair, y, &s);
    return TG_OK;
  }
#pragma omp parallel num_threads(nt)
  {
    const ssd_slot s = ssd_slot_of(&c, omp_get_thread_num());
#pragma omp for schedule(dynamic, 1)
    for (int64_t u = 0; u < units; u++) ssd_cb_unit(&c, u, &s);
#pragma omp for schedule(dynamic, 1)
    for (int64_t pair = 0; pair < pairs; pair++) ssd_fwd_pair(&c, pair, y, &s);
  }
  return TG_OK;
}

/* ---- backward ---- */

/* What the backward writes: input gradients (each may be NULL) and whether dB / dC are wanted. */
typedef struct ssd_grads {
  const float *dy; /* [B, L, H, P] */
  float *dx, *ddt; /* [B, L, H, P], [B, L, H] */
  int want_bc;     /* dB or dC wanted: fill dcb, dBp, dCp */
} ssd_grads;

/* The intra-chunk adjoint of the pair's chunk ch (q steps; E, M and the decays are the chunk's):
 * dM = dY X^T, s->dX = M^T dY, dcb = dM E dt_s (when wanted), s->ddt = the direct dt terms of M, and
 * s->da = the segment sums' share of d loss / d a_k. dM ends as d loss / d seg(l, s). */
TG_CPU_CLONES static void ssd_bwd_intra(const ssd_ctx *c, int64_t pair, int64_t ch, int64_t q,
                                        const float *restrict cb, const ssd_grads *g, const ssd_slot *s) {
  const tg_ssd_dims *d = &c->d;
  const int64_t P = d->P, QQ = c->w.qq, ldx = d->H * P, t0 = ssd_t0(d, ch);
  const float *xc = c->o.x + tg_ssd_xrow(d, pair, t0), *dyc = g->dy + tg_ssd_xrow(d, pair, t0);
  ssd_transpose(q, P, xc, ldx, NULL, s->T1, QQ);           /* [P, q] */
  mm(q, q, P, dyc, ldx, 1, s->T1, QQ, s->dM, QQ, MM_CLOW); /* dM[l, j] = dy_l . x_j */
  if (g->dx) mm(q, P, q, s->M, 1, QQ, dyc, ldx, s->dX, P, MM_AUP); /* the chunk's dx [q, P] */
  float *restrict dcb = NULL; /* [q, q] of the pair's chunk */
  if (g->want_bc) dcb = c->ws + c->w.dcb + (size_t)(pair * d->nc + ch) * (size_t)(QQ * QQ);
  float *restrict ddt = s->ddt, *restrict U = s->U;
  const float *restrict dtv = s->dtv;
  for (int64_t j = 0; j < q; j++) ddt[j] = U[j] = 0.0f;
  for (int64_t l = 0; l < q; l++) {
    float *restrict dM = s->dM + l * QQ;
    const float *restrict E = s->E + l * QQ, *restrict M = s->M + l * QQ, *restrict cbl = cb + l * QQ;
    if (dcb) {
      float *restrict dcl = dcb + l * QQ; /* zero above the diagonal: mm reads it there */
      for (int64_t j = 0; j <= l; j++) {
        const float gm = dM[j] * E[j];
        dcl[j] = gm * dtv[j];
        ddt[j] += gm * cbl[j];
        dM[j] *= M[j];
      }
      for (int64_t j = l + 1; j < q; j++) dcl[j] = 0.0f;
    } else {
      for (int64_t j = 0; j <= l; j++) {
        ddt[j] += dM[j] * E[j] * cbl[j];
        dM[j] *= M[j];
      }
    }
  }
  /* da_k = sum over l >= k, j < k of dseg[l, j]: U holds the suffix sums over l of the rows */
  for (int64_t k = q - 1; k >= 0; k--) {
    const float *restrict dseg = s->dM + k * QQ;
    for (int64_t j = 0; j < k; j++) U[j] += dseg[j];
    s->da[k] = ssd_sum(U, k);
  }
}

/* The state-in terms of chunk ch (S = S_c): s->ddin = d loss / d din, and dCp rows = din_l S dy_l. */
TG_CPU_CLONES static void ssd_bwd_state_in(const ssd_ctx *c, int64_t pair, int64_t ch, int64_t q,
                                           const ssd_grads *g, const ssd_slot *s, const float *S) {
  const tg_ssd_dims *d = &c->d;
  const int64_t N = d->N, P = d->P, t0 = ssd_t0(d, ch), ldx = d->H * P;
  float *dCp = g->want_bc ? c->ws + c->w.dCp : NULL;
  if (ch == 0) { /* S_0 = 0 */
    for (int64_t l = 0; l < q; l++) s->ddin[l] = 0.0f;
    for (int64_t l = 0; dCp && l < q; l++)
      memset(dCp + tg_ssd_hrow(d, pair, t0 + l), 0, sizeof(float) * (size_t)N); /* row [N] */
    return;
  }
  ssd_transpose(N, P, S, P, NULL, s->St, N);                                    /* [P, N] */
  mm(q, N, P, g->dy + tg_ssd_xrow(d, pair, t0), ldx, 1, s->St, N, s->T2, N, 0); /* R [q, N] = dY S^T */
  for (int64_t l = 0; l < q; l++) {
    const float *R = s->T2 + l * N, *Cl = c->o.Cm + tg_ssd_brow(d, pair, t0 + l);
    s->ddin[l] = ssd_dot(Cl, R, N);
    if (dCp) {
      float *row = dCp + tg_ssd_hrow(d, pair, t0 + l);
      for (int64_t n = 0; n < N; n++) row[n] = s->din[l] * R[n];
    }
  }
}

/* The state-out terms of chunk ch (S = S_c, G = dS_{c+1} in s->Gs; last: G = 0): s->dwout, dBp rows
 * = wout_s G x_s, s->dX += wout_s G^T B_s. Returns d loss / d tot = <G, S>. */
TG_CPU_CLONES static float ssd_bwd_state_out(const ssd_ctx *c, int64_t pair, int64_t ch, int64_t q,
                                             const ssd_grads *g, const ssd_slot *s, const float *S, int last) {
  const tg_ssd_dims *d = &c->d;
  const int64_t N = d->N, P = d->P, np = N * P, t0 = ssd_t0(d, ch), ldx = d->H * P, ldb = d->G * N;
  float *dBp = g->want_bc ? c->ws + c->w.dBp : NULL;
  if (last) {
    for (int64_t l = 0; l < q; l++) s->dwout[l] = 0.0f;
    for (int64_t l = 0; dBp && l < q; l++)
      memset(dBp + tg_ssd_hrow(d, pair, t0 + l), 0, sizeof(float) * (size_t)N); /* row [N] */
    return 0.0f;
  }
  const float *xc = c->o.x + tg_ssd_xrow(d, pair, t0), *Bc = c->o.Bm + tg_ssd_brow(d, pair, t0);
  ssd_transpose(N, P, s->Gs, P, NULL, s->Gt, N);  /* [P, N] */
  mm(q, N, P, xc, ldx, 1, s->Gt, N, s->T2, N, 0); /* R [q, N] = X G^T */
  for (int64_t l = 0; l < q; l++) {
    const float *R = s->T2 + l * N, *Bl = Bc + l * ldb;
    s->dwout[l] = ssd_dot(Bl, R, N);
    if (dBp) {
      float *row = dBp + tg_ssd_hrow(d, pair, t0 + l);
      for (int64_t n = 0; n < N; n++) row[n] = s->wout[l] * R[n];
    }
  }
  if (g->dx) {
    mm(q, P, N, Bc, ldb, 1, s->Gs, P, s->T2, P, 0); /* R [q, P] = B_c G */
    for (int64_t l = 0; l < q; l++)
      for (int64_t p = 0; p < P; p++) s->dX[l * P + p] += s->wout[l] * s->T2[l * P + p];
  }
  return ssd_dot(s->Gs, S, np);
}

/* The D terms of chunk [t0, t0 + q) and dx += the chunk's dx s->dX (one rounding per element).
 * Returns sum_l x_l . dy_l (the chunk's share of dD). */
TG_CPU_CLONES static float ssd_bwd_dx(const ssd_ctx *c, int64_t pair, int64_t t0, int64_t q,
                                      const ssd_grads *g, const ssd_slot *s, float Dh) {
  const tg_ssd_dims *d = &c->d;
  const int64_t P = d->P, ldx = d->H * P;
  const float *xc = c->o.x + tg_ssd_xrow(d, pair, t0), *dyc = g->dy + tg_ssd_xrow(d, pair, t0);
  float sD = 0.0f;
  for (int64_t l = 0; l < q; l++) {
    sD += ssd_dot(xc + l * ldx, dyc + l * ldx, P);
    if (!g->dx) continue;
    float *restrict dxl = g->dx + tg_ssd_xrow(d, pair, t0 + l), *restrict dXl = s->dX + l * P;
    const float *restrict dyl = dyc + l * ldx;
    if (c->o.D)
      for (int64_t p = 0; p < P; p++) dXl[p] += Dh * dyl[p];
    for (int64_t p = 0; p < P; p++) dxl[p] += dXl[p];
  }
  return sD;
}

/* The exact backward of one pair: states recomputed, then the chunks from the last. Writes its dx,
 * ddt rows (+=), dcb, dBp and dCp rows (when wanted), and its dA, dD partials into *dA, *dD. */
static void ssd_bwd_pair(const ssd_ctx *c, int64_t pair, const ssd_grads *g, const ssd_slot *s, float *dA,
                         float *dD) {
  const tg_ssd_dims *d = &c->d;
  const int64_t N = d->N, P = d->P, np = N * P, QQ = c->w.qq, ldx = d->H * P, ldb = d->G * N;
  const float Ah = c->o.A[tg_ssd_h(d, pair)], Dh = c->o.D ? c->o.D[tg_ssd_h(d, pair)] : 0.0f;
  ssd_fwd_pair(c, pair, NULL, s);
  for (int64_t e = 0; e < np; e++) s->Gs[e] = 0.0f;
  float sA = 0.0f, sD = 0.0f;
  for (int64_t ch = d->nc - 1; ch >= 0; ch--) {
    const int64_t t0 = ssd_t0(d, ch), q = ssd_q(d, ch);
    const float tot = ssd_decay(c, pair, t0, q, s), *cb = ssd_cb_of(c, pair, ch), *S = s->st + ch * np;
    const float *dyc = g->dy + tg_ssd_xrow(d, pair, t0);
    if (g->dx) ssd_prefetch_rows(g->dx + tg_ssd_xrow(d, pair, t0), q, P, ldx);
    ssd_decay_matrix(q, QQ, cb, s);
    ssd_bwd_intra(c, pair, ch, q, cb, g, s);
    ssd_bwd_state_in(c, pair, ch, q, g, s, S);
    const float dtot = ssd_bwd_state_out(c, pair, ch, q, g, s, S, ch == d->nc - 1);
    sD += ssd_bwd_dx(c, pair, t0, q, g, s, Dh);
    /* the decays: cum_l (din, tot) reaches a_k for k <= l, R_s (wout) for k > s */
    float run = dtot * tot;
    for (int64_t k = q - 1; k >= 0; k--) {
      run += s->ddin[k] * s->din[k];
      s->da[k] += run;
    }
    run = 0.0f;
    for (int64_t k = 0; k < q; k++) {
      s->da[k] += run;
      run += s->dwout[k] * s->wout[k];
    }
    for (int64_t k = 0; k < q; k++) {
      if (g->ddt) g->ddt[tg_ssd_dtix(d, pair, t0 + k)] += s->ddt[k] + s->dwout[k] * s->ewo[k] + Ah * s->da[k];
      sA += s->dtv[k] * s->da[k];
    }
    if (ch > 0) { /* G = dS_c = tot G + (diag(din) C_c)^T dY */
      ssd_transpose(q, N, c->o.Cm + tg_ssd_brow(d, pair, t0), ldb, s->din, s->T1, QQ); /* [N, q] */
      for (int64_t e = 0; e < np; e++) s->Gs[e] *= tot;
      mm(N, P, q, s->T1, QQ, 1, dyc, ldx, s->Gs, P, MM_ACC);
    }
  }
  if (!c->o.D) sD = 0.0f;
  *dA = sA;
  *dD = sD;
}

/* dB and dC rows of (batch, group, chunk) unit u: the heads' dCp / dBp in order, plus the heads'
 * summed dcb times B_c (for dC) and its transpose times C_c (for dB). Each may be NULL. */
TG_CPU_CLONES static void ssd_bwd_group(const ssd_ctx *c, int64_t u, float *dB, float *dC, const ssd_slot *s) {
  const tg_ssd_dims *d = &c->d;
  const int64_t N = d->N, QQ = c->w.qq, ch = u % d->nc, bg = u / d->nc, b = bg / d->G, gr = bg % d->G;
  const int64_t t0 = ssd_t0(d, ch), q = ssd_q(d, ch), hpg = d->H / d->G, p0 = b * d->H + gr * hpg;
  const int64_t ldb = d->G * N, row0 = (b * d->L + t0) * d->G + gr; /* row of (b, t0, gr) in [B, L, G] */
  float *restrict sum = c->ws + c->w.dcb + (size_t)(p0 * d->nc + ch) * (size_t)(QQ * QQ); /* [q, q] */
  for (int64_t k = 1; k < hpg; k++) {
    const float *restrict dk = c->ws + c->w.dcb + (size_t)((p0 + k) * d->nc + ch) * (size_t)(QQ * QQ);
    for (int64_t l = 0; l < q; l++)
      for (int64_t j = 0; j < q; j++) sum[l * QQ + j] += dk[l * QQ + j];
  }
  for (int which = 0; which < 2; which++) {
    float *dst = which ? dB : dC;
    if (!dst) continue;
    const float *part = c->ws + (which ? c->w.dBp : c->w.dCp);
    float *restrict R = s->T2; /* [q, N] */
    if (which)
      mm(q, N, q, sum, 1, QQ, c->o.Cm + row0 * N, ldb, R, N, MM_AUP);
    else
      mm(q, N, q, sum, QQ, 1, c->o.Bm + row0 * N, ldb, R, N, MM_ALOW);
    for (int64_t l = 0; l < q; l++) {
      float *restrict r = R + l * N, *restrict out = dst + (row0 + l * d->G) * N;
      for (int64_t k = 0; k < hpg; k++) {
        const float *restrict pk = part + tg_ssd_hrow(d, p0 + k, t0 + l);
        for (int64_t n = 0; n < N; n++) r[n] += pk[n];
      }
      for (int64_t n = 0; n < N; n++) out[n] += r[n];
    }
  }
}

tg_status tg_cpu_ssd_scan_bwd(const tg_kernel_args *a) {
  float *dx = a->in_grad[0], *ddt = a->in_grad[1], *dA = a->in_grad[2]; /* like x, dt, A */
  float *dB = a->in_grad[3], *dC = a->in_grad[4];                        /* [B, L, G, N] each */
  float *dD = a->attr->i[1] ? a->in_grad[5] : NULL;                      /* [H] */
  if (!dx && !ddt && !dA && !dB && !dC && !dD) return TG_OK;
  ssd_ctx c;
  c.d = tg_ssd_dims_of(a);
  c.w = tg_ssd_cpu_layout_of(&c.d, 1);
  c.o = ssd_ops_of(a);
  tg_status st = ssd_check_ws(a, c.w.total, "backward");
  if (st != TG_OK) return st;
  c.ws = (float *)a->ws;
  const ssd_grads g = {a->out_grad, dx, ddt, dB || dC};
  const int64_t pairs = c.d.B * c.d.H, units = c.d.B * c.d.G * c.d.nc;
  float *dAp = c.ws + c.w.dAp, *dDp = c.ws + c.w.dDp; /* [B*H] each */
  int nt = ssd_threads(&c);
  if (nt < 2 || !tg_par_ok()) {
    const ssd_slot s = ssd_slot_of(&c, 0);
    for (int64_t u = 0; u < units; u++) ssd_cb_unit(&c, u, &s);
    for (int64_t pair = 0; pair < pairs; pair++) ssd_bwd_pair(&c, pair, &g, &s, dAp + pair, dDp + pair);
    for (int64_t u = 0; g.want_bc && u < units; u++) ssd_bwd_group(&c, u, dB, dC, &s);
  } else {
#pragma omp parallel num_threads(nt)
    {
      const ssd_slot s = ssd_slot_of(&c, omp_get_thread_num());
#pragma omp for schedule(dynamic, 1)
      for (int64_t u = 0; u < units; u++) ssd_cb_unit(&c, u, &s);
#pragma omp for schedule(dynamic, 1)
      for (int64_t pair = 0; pair < pairs; pair++) ssd_bwd_pair(&c, pair, &g, &s, dAp + pair, dDp + pair);
      if (g.want_bc) {
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < units; u++) ssd_bwd_group(&c, u, dB, dC, &s);
      }
    }
  }
  for (int64_t h = 0; h < c.d.H; h++) { /* dA, dD [H] += the batch's partials in order */
    float sa = 0.0f, sd = 0.0f;
    for (int64_t b = 0; b < c.d.B; b++) {
      sa += dAp[b * c.d.H + h];
      sd += dDp[b * c.d.H + h];
    }
    if (dA) dA[h] += sa;
    if (dD) dD[h] += sd;
  }
  return TG_OK;
}
