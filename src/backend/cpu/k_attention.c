/* CPU kernels for attention (forward and backward): one task per batch and head, tiles of query rows, the products in
 * register-blocked micro-kernels. */
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_rows.h"
#include "backend/cpu/cpu_simd.h"
#include "backend/cpu/cpu_vmath.h"
#include "ops/attention_args.h"

/* Keys per block of the score and softmax loops: every row runs whole blocks, the keys past its last visible one
 * masked by selects (rows of differing lengths would otherwise pay vector remainders and mispredicted exits). */
#define AT_KB 16
/* Head columns per block of the weighted sums (one AVX-512 register). */
#define AT_CB 16
/* Query rows per tile (the scores and their gradients of a tile stay in the slot's scratch). */
#define AT_QT TG_ATTN_CPU_TILE
/* Rows (or keys) per micro-kernel call: their sums share every load of the other operand. */
#define AT_R 4
/* Below this many multiply-adds (B H Tq Tk dh) a call runs on the calling thread. */
#define AT_PAR_MIN 65536

/* One head's view: rows of q, k, v, out and their gradients for batch b and head h, each at stride d. */
typedef struct at_head {
  const float *q, *k, *v, *dout; /* [Tq or Tk, d] from the head's first column */
  float *o;                      /* [Tq, d]: written by the forward, read by the backward */
  float *dq, *dk, *dv;           /* like q, k, v; NULL: not wanted */
  unsigned fresh;                /* bits 0-2: dq, dk, dv left unzeroed by the graph (tg_kernel_args.grad_fresh) */
  float *kT, *vT;                /* [dh, ld] the slot's transposed keys and values */
  float *S, *G;                  /* [AT_QT, ld] a tile's scores or probabilities, and their gradients */
  float *dkT, *dvT;              /* [dh, ld] the backward's key and value gradients, transposed */
  int64_t ld;                    /* round16(the keys the last query row sees) */
} at_head;

#if TG_CPU_VEC
/* dst[c ds + i] = row[i][c] for an 8 x 8 block: three rounds of two-vector shuffles (pairs of rows, of pairs, of
 * quads), a copy of the bits. */
TG_CPU_INLINE void at_transpose8(const float *const *row, float *restrict dst, int64_t ds) {
  tg_vf8 r[8], t[8], u[8];
  for (int i = 0; i < 8; i++) memcpy(&r[i], row[i], sizeof r[i]);
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int i = 0; i < 8; i += 4)
    for (int k = 0; k < 2; k++) {
      u[i + 2 * k] = __builtin_shufflevector(t[i + k], t[i + k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2 * k + 1] = __builtin_shufflevector(t[i + k], t[i + k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int c = 0; c < 4; c++) {
    tg_vf8 lo = __builtin_shufflevector(u[c], u[c + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    tg_vf8 hi = __builtin_shufflevector(u[c], u[c + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    memcpy(dst + c * ds, &lo, sizeof lo);
    memcpy(dst + (c + 4) * ds, &hi, sizeof hi);
  }
}
#endif

/* Columns [0, dh) of rows x [nk, d] into xT [dh, ld], the columns [nk, round16(nk)) zero: blocks of 8 keys and 8
 * columns (the keys past nk read as zero rows), then the columns past the last block of 8 one by one. */
TG_CPU_CLONES static void at_pack_t(const float *x, int64_t d, int64_t dh, int64_t nk, float *xT, int64_t ld) {
  static const float zero8[8];
  int64_t c8 = 0, nb = tg_attn_round16(nk);
#if TG_CPU_VEC
  c8 = dh - dh % 8;
  for (int64_t j = 0; j < nb; j += 8)
    for (int64_t c = 0; c < c8; c += 8) {
      const float *row[8];
      for (int i = 0; i < 8; i++) row[i] = j + i < nk ? x + (j + i) * d + c : zero8;
      at_transpose8(row, xT + c * ld + j, ld);
    }
#endif
  for (int64_t c = c8; c < dh; c++) {
    float *restrict out = xT + c * ld;
    for (int64_t j = 0; j < nk; j++) out[j] = x[j * d + c];
    for (int64_t j = nk; j < nb; j++) out[j] = 0.0f;
  }
}

#if TG_CPU_VEC
/* 16 floats from p, and to p (macros: no vector crosses a call, whose convention would depend on the clone). */
#define AT_LOAD(p) __extension__({ tg_vf16 v_; memcpy(&v_, (p), sizeof v_); v_; })
#define AT_STORE(p, v) __extension__({ tg_vf16 w_ = (v); memcpy((p), &w_, sizeof w_); })

/* G (<= 4) blocks of AT_KB keys from j0 of at_dots: AT_R x G accumulators, one load of y per block and step. */
TG_CPU_INLINE void at_dots_blocks(const float *restrict x, int64_t xr, int64_t xc, int R, const float *restrict yT,
                                  int64_t ld, int64_t K, int64_t j0, float scale, float *restrict s, int add, int G) {
  tg_vf16 acc[AT_R][4];
  for (int r = 0; r < AT_R; r++)
    for (int g = 0; g < 4; g++) acc[r][g] = (tg_vf16){0};
  for (int64_t c = 0; c < K; c++) {
    const float *restrict yr = yT + c * ld + j0;
    tg_vf16 y[4];
    for (int g = 0; g < G; g++) y[g] = AT_LOAD(yr + g * AT_KB);
    for (int r = 0; r < AT_R; r++) {
      const float xv = x[(r < R ? r : R - 1) * xr + c * xc]; /* rows past R repeat the last (their sums are dropped) */
      for (int g = 0; g < G; g++) acc[r][g] += xv * y[g];
    }
  }
  for (int r = 0; r < AT_R; r++) /* a constant bound: the accumulators stay in registers */
    if (r < R)
      for (int g = 0; g < G; g++) {
        float *o = s + r * ld + j0 + g * AT_KB;
        AT_STORE(o, add ? AT_LOAD(o) + acc[r][g] * scale : acc[r][g] * scale);
      }
}
#endif

/* s[r ld + j] (+)= scale sum over c < K of x[r xr + c xc] yT[c ld + j], for R (<= AT_R) rows r and the keys j < nb
 * (whole blocks); add: add into s, else overwrite it. The scores (x the query rows, yT the keys transposed, K = dh)
 * and the key and value gradients transposed (x the tile's rows of q or dout read down a column, yT dS or p, K the
 * tile's rows). */
TG_CPU_INLINE void at_dots(const float *restrict x, int64_t xr, int64_t xc, int R, const float *restrict yT,
                           int64_t ld, int64_t K, int64_t nb, float scale, float *restrict s, int add) {
#if TG_CPU_VEC
  int64_t j0 = 0;
  for (; j0 + 4 * AT_KB <= nb; j0 += 4 * AT_KB) at_dots_blocks(x, xr, xc, R, yT, ld, K, j0, scale, s, add, 4);
  switch ((nb - j0) / AT_KB) {
    case 3: at_dots_blocks(x, xr, xc, R, yT, ld, K, j0, scale, s, add, 3); break;
    case 2: at_dots_blocks(x, xr, xc, R, yT, ld, K, j0, scale, s, add, 2); break;
    case 1: at_dots_blocks(x, xr, xc, R, yT, ld, K, j0, scale, s, add, 1); break;
    default: break;
  }
#else
  for (int r = 0; r < R; r++)
    for (int64_t j = 0; j < nb; j++) {
      float acc = 0.0f;
      for (int64_t c = 0; c < K; c++) acc += x[r * xr + c * xc] * yT[c * ld + j];
      s[r * ld + j] = add ? s[r * ld + j] + acc * scale : acc * scale;
    }
#endif
}

/* How at_rows writes an output: overwrites it, adds into it, or adds into +0 in its place without reading it (a
 * gradient the graph left unzeroed: the bits of a zeroed buffer plus the sum). */
enum { AT_SET, AT_ADD, AT_FRESH };

/* The weighted row sums for R (<= AT_R) outputs o: out_o[c] (+)= mul[o] sum over t < n[o] of w[o ld + t] y[t d + c],
 * c < dh, out_o = out + o d, written as `mode` says. The t every output has run once for all of them (each y row
 * loaded once, two accumulators per output), the rest per output: no output ever reads a row of y past its own n[o]
 * (a hidden key's NaN stays out). */
TG_CPU_INLINE void at_rows(int R, const float *restrict w, int64_t ld, const int64_t *n, const float *restrict y,
                           int64_t d, int64_t dh, const float *mul, float *restrict out, int mode) {
  int64_t N = n[0]; /* the keys every output sees */
  for (int o = 1; o < R; o++) N = n[o] < N ? n[o] : N;
  int64_t c0 = 0;
#if TG_CPU_VEC
  for (; c0 + AT_CB <= dh; c0 += AT_CB) {
    tg_vf16 acc[AT_R][2];
    for (int o = 0; o < AT_R; o++) acc[o][0] = acc[o][1] = (tg_vf16){0};
    const float *restrict yc = y + c0;
    int64_t t = 0;
    for (; t + 2 <= N; t += 2) {
      tg_vf16 y0 = AT_LOAD(yc + t * d), y1 = AT_LOAD(yc + (t + 1) * d);
      for (int o = 0; o < AT_R; o++) {
        const float *wr = w + (o < R ? o : R - 1) * ld; /* outputs past R repeat the last (their sums are dropped) */
        acc[o][0] += wr[t] * y0;
        acc[o][1] += wr[t + 1] * y1;
      }
    }
    if (t < N) {
      tg_vf16 y0 = AT_LOAD(yc + t * d);
      for (int o = 0; o < AT_R; o++) acc[o][0] += w[(o < R ? o : R - 1) * ld + t] * y0;
    }
    for (int o = 0; o < AT_R; o++) { /* a constant bound: the accumulators stay in registers */
      if (o >= R) break;
      for (int64_t u = N; u < n[o]; u++) acc[o][1] += w[o * ld + u] * AT_LOAD(yc + u * d);
      tg_vf16 r = (acc[o][0] + acc[o][1]) * mul[o];
      float *oc = out + o * d + c0;
      AT_STORE(oc, mode == AT_ADD ? AT_LOAD(oc) + r : mode == AT_FRESH ? (tg_vf16){0} + r : r);
    }
  }
#endif
  for (int o = 0; o < R; o++)
    for (int64_t c = c0; c < dh; c++) {
      float acc = 0.0f;
      for (int64_t u = 0; u < n[o]; u++) acc += w[o * ld + u] * y[u * d + c];
      float *oc = out + o * d + c;
      float v = acc * mul[o];
      *oc = mode == AT_ADD ? *oc + v : mode == AT_FRESH ? 0.0f + v : v;
    }
}

/* x[j d + c] (+)= xT[c ld + j] for the keys j < nk and columns c < dh (mode AT_ADD, or AT_FRESH: into +0 without
 * reading x), then +0 at the keys [nk, Tk) when fresh: blocks of 8 x 8 through at_transpose8 (reading xT up to
 * round8(nk) <= ld, writing the keys below nk), the columns past the last block of 8 one by one. */
TG_CPU_INLINE void at_unpack_t(const float *restrict xT, int64_t ld, int64_t dh, int64_t nk, int64_t Tk,
                               float *restrict x, int64_t d, int mode) {
  int64_t c8 = 0;
#if TG_CPU_VEC
  c8 = dh - dh % 8;
  for (int64_t c = 0; c < c8; c += 8)
    for (int64_t j = 0; j < nk; j += 8) {
      const float *row[8];
      float t[64]; /* [8 keys, 8 columns] */
      for (int i = 0; i < 8; i++) row[i] = xT + (c + i) * ld + j;
      at_transpose8(row, t, 8);
      for (int i = 0; i < 8 && j + i < nk; i++) {
        tg_vf8 v, o;
        float *xr = x + (j + i) * d + c;
        memcpy(&v, t + 8 * i, sizeof v);
        memcpy(&o, xr, sizeof o);
        v = mode == AT_FRESH ? (tg_vf8){0} + v : o + v;
        memcpy(xr, &v, sizeof v);
      }
    }
#endif
  for (int64_t j = 0; j < nk; j++)
    for (int64_t c = c8; c < dh; c++) {
      float *xr = x + j * d + c;
      *xr = mode == AT_FRESH ? 0.0f + xT[c * ld + j] : *xr + xT[c * ld + j];
    }
  if (mode == AT_FRESH)
    for (int64_t j = nk; j < Tk; j++) memset(x + j * d, 0, sizeof(float) * (size_t)dh);
}

#if TG_CPU_VEC
/* v's 16 lanes added pairwise, lane l + w into lane l for w = 8, 4, 2, 1 (a macro: no vector crosses a call). */
#define AT_TREE16(v)                                                                                                   \
  __extension__({                                                                                                      \
    tg_vf8 h8_ = __builtin_shufflevector((v), (v), 0, 1, 2, 3, 4, 5, 6, 7) +                                           \
                 __builtin_shufflevector((v), (v), 8, 9, 10, 11, 12, 13, 14, 15);                                      \
    float h4_[4] = {h8_[0] + h8_[4], h8_[1] + h8_[5], h8_[2] + h8_[6], h8_[3] + h8_[7]};                               \
    (h4_[0] + h4_[2]) + (h4_[1] + h4_[3]);                                                                             \
  })
#endif

/* The sum of x[0..nb) (nb a multiple of AT_KB): element j to lane j % AT_KB in order, then the lanes added pairwise in
 * a fixed order: the same bits in every clone. */
TG_CPU_INLINE float at_lane_sum(const float *restrict x, int64_t nb) {
#if TG_CPU_VEC
  tg_vf16 v = {0};
  for (int64_t j = 0; j < nb; j += AT_KB) v += AT_LOAD(x + j);
  return AT_TREE16(v);
#else
  float lane[AT_KB] = {0};
  for (int64_t j = 0; j < nb; j += AT_KB)
    for (int l = 0; l < AT_KB; l++) lane[l] += x[j + l];
  for (int w = AT_KB / 2; w > 0; w /= 2)
    for (int l = 0; l < w; l++) lane[l] += lane[l + w];
  return lane[0];
#endif
}

/* a . b over dh elements: the blocks of AT_CB in lanes added as at_lane_sum's, then the rest in order. */
TG_CPU_INLINE float at_dot(const float *restrict a, const float *restrict b, int64_t dh) {
  float sum = 0.0f;
  int64_t c = 0;
#if TG_CPU_VEC
  if (dh >= AT_CB) {
    tg_vf16 v = {0};
    for (; c + AT_CB <= dh; c += AT_CB) v += AT_LOAD(a + c) * AT_LOAD(b + c);
    sum = AT_TREE16(v);
  }
#endif
  for (; c < dh; c++) sum += a[c] * b[c];
  return sum;
}

/* s[0..nb) to exp(s - max) over the n visible keys (tg_vexpf), +0 at the hidden ones; returns 1 / their sum
 * (at_lane_sum: each of its terms is at most 1, so float lanes lose nothing that matters against the largest). */
TG_CPU_INLINE float at_exp_row(float *restrict s, int n, int nb) {
  int32_t km = INT32_MIN;
  for (int j = 0; j < nb; j++) {
    int32_t k = j < n ? tg_float_key(s[j]) : INT32_MIN;
    km = k > km ? k : km;
  }
  float m = tg_float_unkey(km);
  for (int j = 0; j < nb; j++) {
    int vis = j < n;
    s[j] = tg_vsel(vis, tg_vexpf_nonpos(tg_vsel(vis, s[j], m) - m), 0.0f); /* s - max <= 0, or NaN */
  }
  return 1.0f / at_lane_sum(s, nb);
}

/* A tile of query rows [i0, i0 + nr): each row's visible keys n[r] (they grow with the row), and its scores'
 * exp(s - max) in S [nr, ld] up to round16(n[r]) (+0 past n[r]); inv[r] = 1 / their sum (0 for a row that sees
 * none). */
TG_CPU_INLINE void at_tile_exps(const at_head *h, const tg_attn_dims *a, int64_t i0, int nr, int64_t *n, float *inv) {
  for (int r = 0; r < nr; r++) n[r] = tg_attn_visible(a->causal, a->offset, a->Tk, i0 + r);
  for (int r = 0; r < nr; r += AT_R) {
    int R = nr - r < AT_R ? nr - r : AT_R;
    at_dots(h->q + (i0 + r) * a->d, a->d, 1, R, h->kT, h->ld, a->dh, tg_attn_round16(n[r + R - 1]), a->scale,
            h->S + r * h->ld, 0);
  }
  for (int r = 0; r < nr; r++)
    inv[r] = n[r] > 0 ? at_exp_row(h->S + r * h->ld, (int)n[r], (int)tg_attn_round16(n[r])) : 0.0f;
}

TG_CPU_CLONES static void at_fwd_head(const at_head *h, const tg_attn_dims *a) {
  int64_t n[AT_QT];
  float inv[AT_QT];
  for (int64_t i0 = 0; i0 < a->Tq; i0 += AT_QT) {
    int nr = a->Tq - i0 < AT_QT ? (int)(a->Tq - i0) : AT_QT;
    at_tile_exps(h, a, i0, nr, n, inv);
    for (int r = 0; r < nr; r += AT_R) /* a row that sees no key: an empty sum times 0, +0 */
      at_rows(nr - r < AT_R ? nr - r : AT_R, h->S + r * h->ld, h->ld, n + r, h->v, a->d, a->dh, inv + r,
              h->o + (i0 + r) * a->d, AT_SET);
  }
}

/* The backward of a tile of query rows, p recomputed as the forward computed it: with D_i = dout_i . o_i and
 * dS_ij = scale p_ij (dout_i . v_j - D_i), dq_i += sum_j dS_ij k_j; the tile's dk_j += sum_i dS_ij q_i and
 * dv_j += sum_i p_ij dout_i are summed transposed in the slot (dkT, dvT [dh, ld], vectors over the keys) and added into
 * dk and dv once the head's tiles are done. p and dS are exactly 0 at the keys a row does not see. */
TG_CPU_CLONES static void at_bwd_head(const at_head *h, const tg_attn_dims *a) {
  static const float ones[AT_R] = {1.0f, 1.0f, 1.0f, 1.0f};
  const int64_t d = a->d, dh = a->dh, ld = h->ld;
  int64_t n[AT_QT], nk = 0;
  float inv[AT_QT];
  if (h->dk) memset(h->dkT, 0, sizeof(float) * (size_t)(dh * ld));
  if (h->dv) memset(h->dvT, 0, sizeof(float) * (size_t)(dh * ld));
  for (int64_t i0 = 0; i0 < a->Tq; i0 += AT_QT) {
    int nr = a->Tq - i0 < AT_QT ? (int)(a->Tq - i0) : AT_QT;
    at_tile_exps(h, a, i0, nr, n, inv);
    nk = n[nr - 1];
    int64_t nbk = tg_attn_round16(nk); /* the tile's products run over every row and these keys */
    for (int r = 0; r < nr; r++) {
      float *restrict p = h->S + r * ld;
      for (int64_t j = 0; j < tg_attn_round16(n[r]); j++) p[j] *= inv[r];
      for (int64_t j = tg_attn_round16(n[r]); j < nbk; j++) p[j] = 0.0f;
    }
    if (h->dq || h->dk) {
      for (int r = 0; r < nr; r += AT_R) {
        int R = nr - r < AT_R ? nr - r : AT_R;
        at_dots(h->dout + (i0 + r) * d, d, 1, R, h->vT, ld, dh, tg_attn_round16(n[r + R - 1]), 1.0f, h->G + r * ld,
                0);
      }
      for (int r = 0; r < nr; r++) {
        const float *restrict p = h->S + r * ld;
        float *restrict ds = h->G + r * ld;
        float D = at_dot(h->dout + (i0 + r) * d, h->o + (i0 + r) * d, dh);
        for (int64_t j = 0; j < nbk; j++) ds[j] = tg_vsel(j < n[r], a->scale * (p[j] * (ds[j] - D)), 0.0f);
      }
    }
    if (h->dq)
      for (int r = 0; r < nr; r += AT_R)
        at_rows(nr - r < AT_R ? nr - r : AT_R, h->G + r * ld, ld, n + r, h->k, d, dh, ones, h->dq + (i0 + r) * d,
                h->fresh & 1u ? AT_FRESH : AT_ADD);
    /* dvT[c][j] += sum_i dout_i[c] p_ij and dkT[c][j] += sum_i q_i[c] dS_ij: AT_R columns c at a time */
    for (int64_t c = 0; c < dh; c += AT_R) {
      int R = dh - c < AT_R ? (int)(dh - c) : AT_R;
      if (h->dv) at_dots(h->dout + i0 * d + c, 1, d, R, h->S, ld, nr, nbk, 1.0f, h->dvT + c * ld, 1);
      if (h->dk) at_dots(h->q + i0 * d + c, 1, d, R, h->G, ld, nr, nbk, 1.0f, h->dkT + c * ld, 1);
    }
  }
  /* the keys the last row sees (every row sees a prefix of them) from the transposed sums; the rest get +0 where
   * their gradient was left unzeroed */
  if (h->dk) at_unpack_t(h->dkT, ld, dh, nk, a->Tk, h->dk, d, h->fresh & 2u ? AT_FRESH : AT_ADD);
  if (h->dv) at_unpack_t(h->dvT, ld, dh, nk, a->Tk, h->dv, d, h->fresh & 4u ? AT_FRESH : AT_ADD);
}

/* Task t = (batch b, head hd) of call ka on slot `slot` of the workspace, its keys (and in the backward its values)
 * transposed into the slot. */
static at_head at_head_of(const tg_kernel_args *ka, const tg_attn_dims *a, int64_t t, int64_t slot) {
  int64_t b = t / a->H, col = (t % a->H) * a->dh;
  int64_t qoff = b * a->Tq * a->d + col, koff = b * a->Tk * a->d + col;
  int64_t nk = tg_attn_visible(a->causal, a->offset, a->Tk, a->Tq - 1); /* the last row sees the most keys */
  at_head h;
  h.q = (const float *)ka->in[0]->data + qoff;
  h.k = (const float *)ka->in[1]->data + koff;
  h.v = (const float *)ka->in[2]->data + koff;
  h.o = (float *)ka->out->data + qoff;
  h.dout = ka->out_grad ? ka->out_grad + qoff : NULL;
  h.dq = ka->out_grad && ka->in_grad[0] ? ka->in_grad[0] + qoff : NULL;
  h.dk = ka->out_grad && ka->in_grad[1] ? ka->in_grad[1] + koff : NULL;
  h.dv = ka->out_grad && ka->in_grad[2] ? ka->in_grad[2] + koff : NULL;
  h.fresh = ka->out_grad ? ka->grad_fresh : 0u;
  h.ld = tg_attn_round16(nk);
  float *ws = (float *)ka->ws + slot * tg_attn_cpu_slot_floats(a);
  int64_t tlen = a->dh * tg_attn_round16(a->Tk);
  h.kT = ws;
  h.vT = ws + tlen;
  h.S = ws + 2 * tlen;
  h.G = h.S + AT_QT * tg_attn_round16(a->Tk);
  h.dkT = h.G + AT_QT * tg_attn_round16(a->Tk);
  h.dvT = h.dkT + tlen;
  at_pack_t(h.k, a->d, a->dh, nk, h.kT, h.ld);
  if (h.dq || h.dk) at_pack_t(h.v, a->d, a->dh, nk, h.vT, h.ld);
  return h;
}

/* Batch rows of at most this many bytes a tensor are asked for ahead (longer ones pay their misses over more work). */
#define AT_PREFETCH_MAX 65536

/* p[0..n) into the cache, a line at a time (rw 1: about to be written). */
static void at_prefetch_range(const float *p, int64_t n, int rw) {
  for (int64_t i = 0; i < n; i += 16) {
    if (rw) __builtin_prefetch(p + i, 1);
    else __builtin_prefetch(p + i);
  }
}

/* Asks for batch b's rows of q, k, v (and in the backward of the output, its gradient and the input gradients) one
 * batch ahead of its heads: a head reads one cache line of each row, d floats apart, and with short sequences the
 * misses at a task's start would cost more than its arithmetic. Each tensor's rows of a batch are contiguous. */
static void at_prefetch(const tg_kernel_args *ka, const tg_attn_dims *a, int64_t b, int bwd) {
  int64_t nq = a->Tq * a->d, nk = a->Tk * a->d;
  if (nk * (int64_t)sizeof(float) > AT_PREFETCH_MAX || nq * (int64_t)sizeof(float) > AT_PREFETCH_MAX) return;
  at_prefetch_range((const float *)ka->in[0]->data + b * nq, nq, 0);
  at_prefetch_range((const float *)ka->in[1]->data + b * nk, nk, 0);
  at_prefetch_range((const float *)ka->in[2]->data + b * nk, nk, 0);
  if (!bwd) return;
  at_prefetch_range((const float *)ka->out->data + b * nq, nq, 0);
  at_prefetch_range(ka->out_grad + b * nq, nq, 0);
  for (int k = 0; k < 3; k++)
    if (ka->in_grad[k]) at_prefetch_range(ka->in_grad[k] + b * (k ? nk : nq), k ? nk : nq, 1);
}

/* Every (batch, head) task of the call, on up to one thread per slot. */
static void at_run(const tg_kernel_args *ka, const tg_attn_dims *a, int bwd) {
  int64_t tasks = a->B * a->H, slots = tg_attn_cpu_slots(a);
  int64_t work = tasks * a->Tq * a->Tk * a->dh;
  int nt = omp_get_max_threads() < slots ? omp_get_max_threads() : (int)slots;
  if (work > AT_PAR_MIN && nt > 1 && tg_par_ok()) {
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t t = 0; t < tasks; t++) {
      if (t % a->H == 0 && t + a->H < tasks) at_prefetch(ka, a, t / a->H + 1, bwd);
      at_head h = at_head_of(ka, a, t, omp_get_thread_num());
      if (bwd) at_bwd_head(&h, a);
      else at_fwd_head(&h, a);
    }
  } else {
    for (int64_t t = 0; t < tasks; t++) {
      if (t % a->H == 0 && t + a->H < tasks) at_prefetch(ka, a, t / a->H + 1, bwd);
      at_head h = at_head_of(ka, a, t, 0);
      if (bwd) at_bwd_head(&h, a);
      else at_fwd_head(&h, a);
    }
  }
}

/* The call's slots must fit the workspace the plan gave it (tg_attention_workspace). */
static tg_status at_check_ws(const tg_kernel_args *a, const tg_attn_dims *d) {
  size_t need = sizeof(float) * (size_t)(tg_attn_cpu_slots(d) * tg_attn_cpu_slot_floats(d));
  if (a->ws && a->ws_bytes >= need) return TG_OK;
  return tg_error(TG_ERR_INVALID, "attention '%s': workspace is %zu bytes, needs %zu", a->node_name,
                  a->ws ? a->ws_bytes : (size_t)0, need);
}

tg_status tg_cpu_attention_fwd(const tg_kernel_args *a) {
  const tg_attn_dims d = tg_attn_dims_of(a);
  tg_status st = at_check_ws(a, &d);
  if (st == TG_OK) at_run(a, &d, 0);
  return st;
}

tg_status tg_cpu_attention_bwd(const tg_kernel_args *a) {
  if (!a->in_grad[0] && !a->in_grad[1] && !a->in_grad[2]) return TG_OK;
  const tg_attn_dims d = tg_attn_dims_of(a);
  tg_status st = at_check_ws(a, &d);
  if (st == TG_OK) at_run(a, &d, 1);
  return st;
}
