/* The SSD scan written once over the scalar type: layout, sequential oracle, chunked forward, backward. */
#ifndef TG_SSD_REF_H
#define TG_SSD_REF_H

/* Shapes: x [B, L, H, P], dt [B, L, H] (> 0), A [H] (< 0), Bm and Cm [B, L, G, N] (head h reads
 * group h / (H/G)), D [H] or NULL, y [B, L, H, P]. Per (batch, head) pair, with h_{-1} = 0:
 *   h_t = exp(dt_t A) h_{t-1} + dt_t x_t B_t^T      (the state, stored [N, P] here)
 *   y_t = h_t C_t + D x_t
 * Every function works on one pair (pair = b * H + h), so pairs run in parallel; each touches only
 * its pair's rows of y / dx / ddt and its pair's slices of the workspace.
 *
 * The layout part (dims, workspace offsets) is plain C that the CUDA sources share; the algorithms
 * are instantiated for float (suffix f: the arithmetic the CUDA kernels follow step by step) and
 * double (suffix d: the tests' oracle). The CPU kernels (k_ssd.c) compute the same chunked forward
 * and exact backward as small matrix products, with their own workspace (tg_ssd_cpu_layout_of). */

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "ops/ops.h"

/* The layout and index helpers also run in CUDA kernels. */
#ifdef __CUDACC__
#define TG_SSD_HD __host__ __device__
#else
#define TG_SSD_HD
#endif

typedef struct tg_ssd_dims {
  int64_t B, L, H, P, G, N; /* x [B, L, H, P], Bm/Cm [B, L, G, N] */
  int64_t Q, nc;            /* chunk length, chunks ceil(L / Q) (the last one may be shorter) */
  int64_t K, nk;            /* backward block length ceil(sqrt(L)), blocks ceil(L / K) */
} tg_ssd_dims;

static inline tg_ssd_dims tg_ssd_dims_make(int64_t B, int64_t L, int64_t H, int64_t P, int64_t G,
                                           int64_t N, int64_t Q) {
  tg_ssd_dims d;
  d.B = B;
  d.L = L;
  d.H = H;
  d.P = P;
  d.G = G;
  d.N = N;
  d.Q = Q < 1 ? 1 : Q;
  d.nc = (L + d.Q - 1) / d.Q;
  int64_t k = (int64_t)sqrt((double)L);
  while (k * k < L) k++;
  while (k > 1 && (k - 1) * (k - 1) >= L) k--;
  d.K = k < 1 ? 1 : k;
  d.nk = (L + d.K - 1) / d.K;
  return d;
}

/* Dims of an ssd_scan node's kernel arguments (inputs x, dt, A, Bm, Cm, [D]; i[0] = chunk). */
static inline tg_ssd_dims tg_ssd_dims_of(const tg_kernel_args *a) {
  const tg_tensor *x = a->in[0], *Bm = a->in[3];
  return tg_ssd_dims_make(x->shape[0], x->shape[1], x->shape[2], x->shape[3], Bm->shape[2],
                          Bm->shape[3], a->attr->i[0]);
}

/* ---- indexing (pair = b * H + h) ---- */

static inline TG_SSD_HD int64_t tg_ssd_b(const tg_ssd_dims *d, int64_t pair) { return pair / d->H; }
static inline TG_SSD_HD int64_t tg_ssd_h(const tg_ssd_dims *d, int64_t pair) { return pair % d->H; }
/* Offset of x_t / y_t / dx_t [P] of the pair. */
static inline TG_SSD_HD int64_t tg_ssd_xrow(const tg_ssd_dims *d, int64_t pair, int64_t t) {
  return ((tg_ssd_b(d, pair) * d->L + t) * d->H + tg_ssd_h(d, pair)) * d->P;
}
/* Index of dt_t of the pair in dt [B, L, H]. */
static inline TG_SSD_HD int64_t tg_ssd_dtix(const tg_ssd_dims *d, int64_t pair, int64_t t) {
  return (tg_ssd_b(d, pair) * d->L + t) * d->H + tg_ssd_h(d, pair);
}
/* Offset of B_t / C_t [N] of the pair's group in Bm/Cm [B, L, G, N]. */
static inline TG_SSD_HD int64_t tg_ssd_brow(const tg_ssd_dims *d, int64_t pair, int64_t t) {
  int64_t g = tg_ssd_h(d, pair) / (d->H / d->G);
  return ((tg_ssd_b(d, pair) * d->L + t) * d->G + g) * d->N;
}
/* Offset of the pair's per-head row t [N] in dBp/dCp [B, L, H, N]. */
static inline TG_SSD_HD int64_t tg_ssd_hrow(const tg_ssd_dims *d, int64_t pair, int64_t t) {
  return ((tg_ssd_b(d, pair) * d->L + t) * d->H + tg_ssd_h(d, pair)) * d->N;
}

/* <h_{t-1}, dh_t> of the backward is summed as the CUDA block sums it: element e into slot
 * e % TG_SSD_RED in order, then the slots by a halving tree (so both backends round alike). */
#define TG_SSD_RED 256

/* ---- workspace layout (element offsets; the CPU uses floats, the tests doubles) ---- */

/* Forward:
 *   states [B*H, nc, N, P]  each chunk's local state, then (after the pass) the state entering it
 *   din    [B*H, L]         exp(a_c0 + .. + a_t): decay from the chunk's entering state to step t
 *   wout   [B*H, L]         dt_t exp(a_{t+1} + .. + a_{end}): weight of step t's input at chunk end
 *   tot    [B*H, nc]        exp(sum of the chunk's a)
 * where a_t = dt_t A (<= 0), sums taken within t's chunk. */
typedef struct tg_ssd_fwd_layout {
  size_t states, din, wout, tot, total;
} tg_ssd_fwd_layout;

static inline TG_SSD_HD tg_ssd_fwd_layout tg_ssd_fwd_layout_of(const tg_ssd_dims *d) {
  size_t bh = (size_t)(d->B * d->H), np = (size_t)(d->N * d->P);
  tg_ssd_fwd_layout w;
  w.states = 0;
  w.din = w.states + bh * (size_t)d->nc * np;
  w.wout = w.din + bh * (size_t)d->L;
  w.tot = w.wout + bh * (size_t)d->L;
  w.total = w.tot + bh * (size_t)d->nc;
  return w;
}

/* Backward:
 *   pair [B*H, pair_len]    per pair: bnd [nk, N, P] (state entering each block of K steps),
 *                           hs [K, N, P] (the states of one block), dh [N, P] (the adjoint), u [P]
 *   dAp, dDp [B*H]          per-pair partial sums of dA and dD
 *   dBp, dCp [B, L, H, N]   per-head partial dB and dC (summed over each group's heads afterwards) */
typedef struct tg_ssd_bwd_layout {
  size_t pair, pair_len, bnd, hs, dh, u; /* bnd..u: offsets inside one pair's slice */
  size_t dAp, dDp, dBp, dCp, total;
} tg_ssd_bwd_layout;

static inline TG_SSD_HD tg_ssd_bwd_layout tg_ssd_bwd_layout_of(const tg_ssd_dims *d) {
  size_t bh = (size_t)(d->B * d->H), np = (size_t)(d->N * d->P);
  tg_ssd_bwd_layout w;
  w.bnd = 0;
  w.hs = w.bnd + (size_t)d->nk * np;
  w.dh = w.hs + (size_t)d->K * np;
  w.u = w.dh + np;
  w.pair_len = w.u + (size_t)d->P;
  w.pair = 0;
  w.dAp = w.pair + bh * w.pair_len;
  w.dDp = w.dAp + bh;
  w.dBp = w.dDp + bh;
  w.dCp = w.dBp + (size_t)(d->B * d->L * d->H * d->N);
  w.total = w.dCp + (size_t)(d->B * d->L * d->H * d->N);
  return w;
}

#ifndef __CUDACC__

/* ---- the CPU kernels' own workspace (k_ssd.c computes both passes as small matrix products) ----
 *
 * Float offsets; QQ = min(Q, L) is the longest chunk, mx = max(N, P):
 *   cb     [B*G, nc, QQ, QQ]  C_l . B_s (s <= l) of every chunk of every (batch, group)
 *   slot   [slots, slot_len]  one thread's scratch; slots = min(B*H, TG_SSD_CPU_SLOTS)
 * and for the backward:
 *   dcb    [B*H, nc, QQ, QQ]  each pair's gradient of C_l . B_s (zero above the diagonal)
 *   dBp, dCp [B, L, H, N]     per-head dB / dC of the state terms
 *   dAp, dDp [B*H]            per-pair partial sums of dA and dD
 * One slot: st [nc, N, P] (the state entering each chunk), E, M, dM [QQ, QQ] each, T1 [mx, QQ],
 * T2 [QQ, mx], dX [QQ, P], Gs [N, P], Gt and St [P, N], then TG_SSD_CPU_VECS vectors [QQ]. Every
 * region starts on a 64-byte boundary (relative to the workspace). The backward's share grows as
 * B L H max(Q, N) (dcb like dBp when Q <= N); slots a thread never takes are never touched. */
#define TG_SSD_CPU_SLOTS 64
#define TG_SSD_CPU_VECS 12

typedef struct tg_ssd_cpu_layout {
  int64_t qq, slots;
  size_t cb, slot, slot_len, dcb, dBp, dCp, dAp, dDp, total;
  size_t st, E, M, dM, T1, T2, dX, Gs, Gt, St, vec, vec_len; /* inside a slot; vector v at vec + v * vec_len */
} tg_ssd_cpu_layout;

static inline size_t tg_ssd_cpu_round(size_t n) { return (n + 15) / 16 * 16; }

static inline tg_ssd_cpu_layout tg_ssd_cpu_layout_of(const tg_ssd_dims *d, int backward) {
  tg_ssd_cpu_layout w;
  const size_t qq = (size_t)(d->Q < d->L ? d->Q : d->L), np = (size_t)(d->N * d->P);
  const size_t mx = (size_t)(d->N > d->P ? d->N : d->P), pairs = (size_t)(d->B * d->H);
  w.qq = (int64_t)qq;
  w.slots = (int64_t)(pairs < TG_SSD_CPU_SLOTS ? pairs : TG_SSD_CPU_SLOTS);
  w.vec_len = tg_ssd_cpu_round(qq);
  w.st = 0;
  w.E = w.st + tg_ssd_cpu_round((size_t)d->nc * np);
  w.M = w.E + tg_ssd_cpu_round(qq * qq);
  w.dM = w.M + tg_ssd_cpu_round(qq * qq);
  w.T1 = w.dM + tg_ssd_cpu_round(qq * qq);
  w.T2 = w.T1 + tg_ssd_cpu_round(mx * qq);
  w.dX = w.T2 + tg_ssd_cpu_round(qq * mx);
  w.Gs = w.dX + tg_ssd_cpu_round(qq * (size_t)d->P);
  w.Gt = w.Gs + tg_ssd_cpu_round(np);
  w.St = w.Gt + tg_ssd_cpu_round(np);
  w.vec = w.St + tg_ssd_cpu_round(np);
  w.slot_len = w.vec + TG_SSD_CPU_VECS * w.vec_len;
  w.cb = 0;
  w.slot = w.cb + tg_ssd_cpu_round((size_t)(d->B * d->G * d->nc) * qq * qq);
  w.dcb = w.slot + (size_t)w.slots * w.slot_len;
  w.dBp = w.dcb + (backward ? tg_ssd_cpu_round(pairs * (size_t)d->nc * qq * qq) : 0);
  const size_t rows = backward ? tg_ssd_cpu_round((size_t)(d->B * d->L * d->H * d->N)) : 0;
  w.dCp = w.dBp + rows;
  w.dAp = w.dCp + rows;
  w.dDp = w.dAp + (backward ? tg_ssd_cpu_round(pairs) : 0);
  w.total = w.dDp + (backward ? tg_ssd_cpu_round(pairs) : 0);
  return w;
}

/* ---- the algorithms, instantiated per scalar type T with its exp ---- */

/* One step of the recurrence: hout = a hin + dt x B^T (hout may be hin); [N, P] each. */
#define TG_SSD_DEFINE_STEP(S, T)                                                                  \
  static inline void tg_ssd_step_##S(T *hout, const T *hin, T a, T dtt, const T *xt,             \
                                     const T *Bt, int64_t N, int64_t P) {                         \
    for (int64_t n = 0; n < N; n++) {                                                             \
      T c = dtt * Bt[n];                                                                          \
      for (int64_t p = 0; p < P; p++) hout[n * P + p] = a * hin[n * P + p] + c * xt[p];           \
    }                                                                                             \
  }

/* The sequential recurrence (section 2.3 of the spec) for one pair: the test oracle.
 * h: [N, P] scratch. */
#define TG_SSD_DEFINE_SEQ(S, T, EXP)                                                              \
  static inline void tg_ssd_seq_pair_##S(const tg_ssd_dims *d, int64_t pair, const T *x,         \
                                         const T *dt, const T *A, const T *Bm, const T *Cm,       \
                                         const T *D, T *y, T *h) {                                \
    const int64_t P = d->P, N = d->N;                                                             \
    const T Ah = A[tg_ssd_h(d, pair)];                                                            \
    for (int64_t e = 0; e < N * P; e++) h[e] = 0;                                                 \
    for (int64_t t = 0; t < d->L; t++) {                                                          \
      const T *xt = x + tg_ssd_xrow(d, pair, t);                                                  \
      const T *Ct = Cm + tg_ssd_brow(d, pair, t);                                                 \
      T *yt = y + tg_ssd_xrow(d, pair, t);                                                        \
      T dtt = dt[tg_ssd_dtix(d, pair, t)];                                                        \
      tg_ssd_step_##S(h, h, EXP(dtt * Ah), dtt, xt, Bm + tg_ssd_brow(d, pair, t), N, P);         \
      for (int64_t p = 0; p < P; p++) yt[p] = 0;                                                  \
      for (int64_t n = 0; n < N; n++)                                                             \
        for (int64_t p = 0; p < P; p++) yt[p] += Ct[n] * h[n * P + p];                            \
      if (D)                                                                                      \
        for (int64_t p = 0; p < P; p++) yt[p] += D[tg_ssd_h(d, pair)] * xt[p];                    \
    }                                                                                             \
  }

/* Chunked forward, step 0: per chunk the decays din, wout, tot of the layout. Every exponent is a
 * sum of a_k <= 0 over a run of steps (never a difference of two cumsums), so it is <= 0. */
#define TG_SSD_DEFINE_DECAY(S, T, EXP)                                                            \
  static inline void tg_ssd_decay_##S(const tg_ssd_dims *d, int64_t pair, const T *dt,           \
                                      const T *A, T *ws) {                                        \
    tg_ssd_fwd_layout w = tg_ssd_fwd_layout_of(d);                                                \
    T *din = ws + w.din + pair * d->L, *wout = ws + w.wout + pair * d->L; /* [L] each */         \
    T *tot = ws + w.tot + pair * d->nc;                                   /* [nc] */             \
    const T Ah = A[tg_ssd_h(d, pair)];                                                            \
    for (int64_t c = 0; c < d->nc; c++) {                                                         \
      int64_t t0 = c * d->Q, q = d->L - t0 < d->Q ? d->L - t0 : d->Q;                             \
      T cum = 0, rs = 0;                                                                          \
      for (int64_t l = 0; l < q; l++) {                                                           \
        cum += dt[tg_ssd_dtix(d, pair, t0 + l)] * Ah;                                             \
        din[t0 + l] = EXP(cum);                                                                   \
      }                                                                                           \
      tot[c] = EXP(cum);                                                                          \
      for (int64_t l = q - 1; l >= 0; l--) {                                                      \
        T dtt = dt[tg_ssd_dtix(d, pair, t0 + l)];                                                 \
        wout[t0 + l] = EXP(rs) * dtt;                                                             \
        rs += dtt * Ah;                                                                           \
      }                                                                                           \
    }                                                                                             \
  }

/* Step 2: each chunk's local state sum_s wout_s x_s B_s^T (s from the chunk's end) into states. */
#define TG_SSD_DEFINE_CHUNK_STATES(S, T)                                                          \
  static inline void tg_ssd_chunk_states_##S(const tg_ssd_dims *d, int64_t pair, const T *x,     \
                                             const T *Bm, T *ws) {                                \
    tg_ssd_fwd_layout w = tg_ssd_fwd_layout_of(d);                                                \
    const int64_t P = d->P, N = d->N;                                                             \
    const T *wout = ws + w.wout + pair * d->L; /* [L] */                                          \
    for (int64_t c = 0; c < d->nc; c++) {                                                         \
      T *st = ws + w.states + (pair * d->nc + c) * N * P; /* [N, P] */                            \
      int64_t t0 = c * d->Q, q = d->L - t0 < d->Q ? d->L - t0 : d->Q;                             \
      for (int64_t e = 0; e < N * P; e++) st[e] = 0;                                              \
      for (int64_t s = q - 1; s >= 0; s--) {                                                      \
        const T *xs = x + tg_ssd_xrow(d, pair, t0 + s), *Bs = Bm + tg_ssd_brow(d, pair, t0 + s); \
        for (int64_t n = 0; n < N; n++) {                                                         \
          T wb = wout[t0 + s] * Bs[n];                                                            \
          for (int64_t p = 0; p < P; p++) st[n * P + p] += wb * xs[p];                            \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }

/* Step 3: the inter-chunk recurrence S_0 = 0, S_{c+1} = tot_c S_c + local_c, in place: afterwards
 * states[c] holds S_c, the state entering chunk c. */
#define TG_SSD_DEFINE_PASS(S, T)                                                                  \
  static inline void tg_ssd_pass_##S(const tg_ssd_dims *d, int64_t pair, T *ws) {                \
    tg_ssd_fwd_layout w = tg_ssd_fwd_layout_of(d);                                                \
    const int64_t np = d->N * d->P;                                                               \
    T *st = ws + w.states + pair * d->nc * np; /* [nc, N, P] */                                   \
    const T *tot = ws + w.tot + pair * d->nc;  /* [nc] */                                         \
    for (int64_t e = 0; e < np; e++) {                                                            \
      T s = 0;                                                                                    \
      for (int64_t c = 0; c < d->nc; c++) {                                                       \
        T loc = st[c * np + e];                                                                   \
        st[c * np + e] = s;                                                                       \
        s = tot[c] * s + loc;                                                                     \
      }                                                                                           \
    }                                                                                             \
  }

/* Steps 1 and 4 for output row t: y_t = din_t (C_t S_c) + sum_{s <= l} exp(seg(l, s)) dt_s
 * (C_t . B_s) x_s + D x_t, with the stable segment sum seg(l, s) = a_{s+1} + .. + a_l accumulated
 * from s = l down. */
#define TG_SSD_DEFINE_ROW(S, T, EXP)                                                              \
  static inline void tg_ssd_row_##S(const tg_ssd_dims *d, int64_t pair, int64_t t, const T *x,   \
                                    const T *dt, const T *A, const T *Bm, const T *Cm,            \
                                    const T *D, T *y, const T *ws) {                              \
    tg_ssd_fwd_layout w = tg_ssd_fwd_layout_of(d);                                                \
    const int64_t P = d->P, N = d->N, c = t / d->Q, t0 = c * d->Q;                                \
    const T *Sc = ws + w.states + (pair * d->nc + c) * N * P; /* [N, P] */                        \
    const T *Ct = Cm + tg_ssd_brow(d, pair, t);                                                   \
    const T din = ws[w.din + pair * d->L + t], Ah = A[tg_ssd_h(d, pair)];                         \
    T *yt = y + tg_ssd_xrow(d, pair, t);                                                          \
    for (int64_t p = 0; p < P; p++) yt[p] = 0;                                                    \
    for (int64_t n = 0; n < N; n++) {                                                             \
      T cn = din * Ct[n];                                                                         \
      for (int64_t p = 0; p < P; p++) yt[p] += cn * Sc[n * P + p];                                \
    }                                                                                             \
    T seg = 0;                                                                                    \
    for (int64_t s = t; s >= t0; s--) {                                                           \
      const T *Bs = Bm + tg_ssd_brow(d, pair, s), *xs = x + tg_ssd_xrow(d, pair, s);              \
      T dts = dt[tg_ssd_dtix(d, pair, s)], cb = 0;                                                \
      for (int64_t n = 0; n < N; n++) cb += Ct[n] * Bs[n];                                        \
      T coef = EXP(seg) * dts * cb;                                                               \
      for (int64_t p = 0; p < P; p++) yt[p] += coef * xs[p];                                      \
      seg += dts * Ah;                                                                            \
    }                                                                                             \
    if (D) {                                                                                      \
      const T *xt = x + tg_ssd_xrow(d, pair, t);                                                  \
      for (int64_t p = 0; p < P; p++) yt[p] += D[tg_ssd_h(d, pair)] * xt[p];                      \
    }                                                                                             \
  }

/* The whole chunked forward (section 2.4) of one pair; ws holds tg_ssd_fwd_layout_of(d).total. */
#define TG_SSD_DEFINE_FWD(S, T)                                                                   \
  static inline void tg_ssd_fwd_pair_##S(const tg_ssd_dims *d, int64_t pair, const T *x,         \
                                         const T *dt, const T *A, const T *Bm, const T *Cm,       \
                                         const T *D, T *y, T *ws) {                               \
    tg_ssd_decay_##S(d, pair, dt, A, ws);                                                         \
    tg_ssd_chunk_states_##S(d, pair, x, Bm, ws);                                                  \
    tg_ssd_pass_##S(d, pair, ws);                                                                 \
    for (int64_t t = 0; t < d->L; t++) tg_ssd_row_##S(d, pair, t, x, dt, A, Bm, Cm, D, y, ws);    \
  }

/* Backward of one step t of the pair, given h_{t-1} (hp), h_t (ht) and dh holding the adjoint
 * carried from step t+1 (a_{t+1} dh_{t+1}): makes dh = dh_t = carry + C_t dy_t^T, then
 *   dx_t += dt_t (dh_t B_t) + D dy_t             dBp_t = dt_t dh_t^T x_t     dCp_t = h_t^T dy_t
 *   ddt_t += x_t . (dh_t B_t) + A a_t <h_{t-1}, dh_t>   *dA += dt_t a_t <h_{t-1}, dh_t>
 *   *dD += x_t . dy_t                            (<h_{t-1}, dh_t> summed in TG_SSD_RED slots)
 * and leaves dh = a_t dh_t, the carry for step t-1 (a_t = exp(dt_t A)). */
#define TG_SSD_DEFINE_BWD_STEP(S, T, EXP)                                                         \
  static inline void tg_ssd_bwd_step_##S(const tg_ssd_dims *d, int64_t pair, int64_t t,          \
                                         const T *x, const T *dt, const T *A, const T *Bm,        \
                                         const T *Cm, const T *D, const T *dy, const T *hp,       \
                                         const T *ht, T *dh, T *u, T *dx, T *ddt, T *dBp,         \
                                         T *dCp, T *dA, T *dD) {                                  \
    const int64_t P = d->P, N = d->N;                                                             \
    const T *xt = x + tg_ssd_xrow(d, pair, t), *dyt = dy + tg_ssd_xrow(d, pair, t);               \
    const T *Bt = Bm + tg_ssd_brow(d, pair, t), *Ct = Cm + tg_ssd_brow(d, pair, t);               \
    const T Ah = A[tg_ssd_h(d, pair)], dtt = dt[tg_ssd_dtix(d, pair, t)], ea = EXP(dtt * Ah);    \
    for (int64_t n = 0; n < N; n++)                                                               \
      for (int64_t p = 0; p < P; p++) dh[n * P + p] += Ct[n] * dyt[p];                            \
    T red[TG_SSD_RED], xu = 0;                                                                    \
    for (int64_t i = 0; i < TG_SSD_RED; i++) red[i] = 0;                                          \
    for (int64_t e0 = 0; e0 < N * P; e0 += TG_SSD_RED)                                            \
      for (int64_t i = 0; i < TG_SSD_RED && e0 + i < N * P; i++) red[i] += hp[e0 + i] * dh[e0 + i]; \
    for (int64_t half = TG_SSD_RED / 2; half > 0; half /= 2)                                      \
      for (int64_t i = 0; i < half; i++) red[i] += red[i + half];                                 \
    const T r = red[0];                                                                           \
    for (int64_t p = 0; p < P; p++) u[p] = 0;                                                     \
    for (int64_t n = 0; n < N; n++)                                                               \
      for (int64_t p = 0; p < P; p++) u[p] += dh[n * P + p] * Bt[n];                              \
    for (int64_t p = 0; p < P; p++) xu += xt[p] * u[p];                                           \
    if (dx) {                                                                                     \
      T *dxt = dx + tg_ssd_xrow(d, pair, t);                                                      \
      for (int64_t p = 0; p < P; p++)                                                             \
        dxt[p] += D ? dtt * u[p] + D[tg_ssd_h(d, pair)] * dyt[p] : dtt * u[p];                    \
    }                                                                                             \
    if (dBp)                                                                                      \
      for (int64_t n = 0; n < N; n++) {                                                           \
        T s = 0;                                                                                  \
        for (int64_t p = 0; p < P; p++) s += dh[n * P + p] * xt[p];                               \
        dBp[tg_ssd_hrow(d, pair, t) + n] = dtt * s;                                               \
      }                                                                                           \
    if (dCp)                                                                                      \
      for (int64_t n = 0; n < N; n++) {                                                           \
        T s = 0;                                                                                  \
        for (int64_t p = 0; p < P; p++) s += ht[n * P + p] * dyt[p];                              \
        dCp[tg_ssd_hrow(d, pair, t) + n] = s;                                                     \
      }                                                                                           \
    if (ddt) ddt[tg_ssd_dtix(d, pair, t)] += xu + Ah * ea * r;                                    \
    *dA += dtt * ea * r;                                                                          \
    if (D) {                                                                                      \
      T s = 0;                                                                                    \
      for (int64_t p = 0; p < P; p++) s += xt[p] * dyt[p];                                        \
      *dD += s;                                                                                   \
    }                                                                                             \
    for (int64_t e = 0; e < N * P; e++) dh[e] *= ea;                                              \
  }

/* Exact backward of one pair by the adjoint recurrence. Pass A stores the state entering every
 * block of K steps; pass B walks the blocks from the last, recomputes the block's states from its
 * entering state and runs the adjoint back through it. dx [B, L, H, P] and ddt [B, L, H] get +=
 * on the pair's rows (each may be NULL); ws (tg_ssd_bwd_layout_of(d).total) receives the pair's
 * dAp, dDp and, when want_dB / want_dC, its dBp / dCp rows. */
#define TG_SSD_DEFINE_BWD(S, T, EXP)                                                              \
  static inline void tg_ssd_bwd_pair_##S(const tg_ssd_dims *d, int64_t pair, const T *x,         \
                                         const T *dt, const T *A, const T *Bm, const T *Cm,       \
                                         const T *D, const T *dy, T *dx, T *ddt, int want_dB,     \
                                         int want_dC, T *ws) {                                    \
    tg_ssd_bwd_layout w = tg_ssd_bwd_layout_of(d);                                                \
    const int64_t P = d->P, N = d->N, np = N * P;                                                 \
    T *bnd = ws + w.pair + (size_t)pair * w.pair_len + w.bnd; /* [nk, N, P] */                    \
    T *hs = bnd - w.bnd + w.hs;                               /* [K, N, P] */                     \
    T *dh = bnd - w.bnd + w.dh;                               /* [N, P] */                        \
    T *u = bnd - w.bnd + w.u;                                 /* [P] */                           \
    T *dBp = want_dB ? ws + w.dBp : NULL, *dCp = want_dC ? ws + w.dCp : NULL;                     \
    const T Ah = A[tg_ssd_h(d, pair)];                                                            \
    for (int64_t e = 0; e < np; e++) dh[e] = 0; /* pass A: dh is the running state */             \
    for (int64_t t = 0; t < d->L; t++) {                                                          \
      if (t % d->K == 0)                                                                          \
        for (int64_t e = 0; e < np; e++) bnd[(t / d->K) * np + e] = dh[e];                        \
      T dtt = dt[tg_ssd_dtix(d, pair, t)];                                                        \
      tg_ssd_step_##S(dh, dh, EXP(dtt * Ah), dtt, x + tg_ssd_xrow(d, pair, t),                   \
                      Bm + tg_ssd_brow(d, pair, t), N, P);                                        \
    }                                                                                             \
    T dA = 0, dD = 0;                                                                             \
    for (int64_t e = 0; e < np; e++) dh[e] = 0; /* pass B: dh is the adjoint */                   \
    for (int64_t j = d->nk - 1; j >= 0; j--) {                                                    \
      int64_t t0 = j * d->K, t1 = t0 + d->K < d->L ? t0 + d->K : d->L;                            \
      for (int64_t t = t0; t < t1; t++) {                                                         \
        T dtt = dt[tg_ssd_dtix(d, pair, t)];                                                      \
        tg_ssd_step_##S(hs + (t - t0) * np, t == t0 ? bnd + j * np : hs + (t - t0 - 1) * np,     \
                        EXP(dtt * Ah), dtt, x + tg_ssd_xrow(d, pair, t),                          \
                        Bm + tg_ssd_brow(d, pair, t), N, P);                                      \
      }                                                                                           \
      for (int64_t t = t1 - 1; t >= t0; t--)                                                      \
        tg_ssd_bwd_step_##S(d, pair, t, x, dt, A, Bm, Cm, D, dy,                                  \
                            t == t0 ? bnd + j * np : hs + (t - t0 - 1) * np, hs + (t - t0) * np, \
                            dh, u, dx, ddt, dBp, dCp, &dA, &dD);                                  \
    }                                                                                             \
    ws[w.dAp + pair] = dA;                                                                        \
    ws[w.dDp + pair] = dD;                                                                        \
  }

/* After every pair's backward: dB/dC [B, L, G, N] += the sum of the group's heads' partials, for
 * row bt = b * L + t; dA/dD [H] += the sum over the batch of the pair partials, for head h. Each
 * may be NULL. Sums run in a fixed order. */
#define TG_SSD_DEFINE_REDUCE(S, T)                                                                \
  static inline void tg_ssd_reduce_row_##S(const tg_ssd_dims *d, int64_t bt, const T *ws, T *dB,  \
                                           T *dC) {                                               \
    tg_ssd_bwd_layout w = tg_ssd_bwd_layout_of(d);                                                \
    const int64_t N = d->N, hpg = d->H / d->G;                                                    \
    for (int64_t g = 0; g < d->G; g++)                                                            \
      for (int64_t n = 0; n < N; n++) {                                                           \
        T sb = 0, sc = 0;                                                                         \
        for (int64_t k = 0; k < hpg; k++) {                                                       \
          size_t at = (size_t)((bt * d->H + g * hpg + k) * N + n);                                \
          if (dB) sb += ws[w.dBp + at];                                                           \
          if (dC) sc += ws[w.dCp + at];                                                           \
        }                                                                                         \
        if (dB) dB[(bt * d->G + g) * N + n] += sb;                                                \
        if (dC) dC[(bt * d->G + g) * N + n] += sc;                                                \
      }                                                                                           \
  }                                                                                               \
  static inline void tg_ssd_reduce_head_##S(const tg_ssd_dims *d, int64_t h, const T *ws, T *dA,  \
                                            T *dD) {                                              \
    tg_ssd_bwd_layout w = tg_ssd_bwd_layout_of(d);                                                \
    T sa = 0, sd = 0;                                                                             \
    for (int64_t b = 0; b < d->B; b++) {                                                          \
      sa += ws[w.dAp + b * d->H + h];                                                             \
      sd += ws[w.dDp + b * d->H + h];                                                             \
    }                                                                                             \
    if (dA) dA[h] += sa;                                                                          \
    if (dD) dD[h] += sd;                                                                          \
  }

#define TG_SSD_DEFINE(S, T, EXP)       \
  TG_SSD_DEFINE_STEP(S, T)             \
  TG_SSD_DEFINE_SEQ(S, T, EXP)         \
  TG_SSD_DEFINE_DECAY(S, T, EXP)       \
  TG_SSD_DEFINE_CHUNK_STATES(S, T)     \
  TG_SSD_DEFINE_PASS(S, T)             \
  TG_SSD_DEFINE_ROW(S, T, EXP)         \
  TG_SSD_DEFINE_FWD(S, T)              \
  TG_SSD_DEFINE_BWD_STEP(S, T, EXP)    \
  TG_SSD_DEFINE_BWD(S, T, EXP)         \
  TG_SSD_DEFINE_REDUCE(S, T)

TG_SSD_DEFINE(f, float, expf)
TG_SSD_DEFINE(d, double, exp)

#endif /* !__CUDACC__ */
#endif
