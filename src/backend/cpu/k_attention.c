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
  float *kT, *vT;                /* [dh, ld] the slot's transposed keys and values */
  float *S, *G;                  /* [AT_QT, ld] a tile's scores or probabilities, and their gradients */
  int64_t ld;                    /* round16(the keys the last query row sees) */
} at_head;

#if TG_CPU_VEC
/* dst[c ds + i] = src[i ss + c] for an 8 x 8 block: three rounds of two-vector shuffles (pairs of rows, of pairs, of
 * quads), a copy of the bits. */
TG_CPU_INLINE void at_transpose8(const float *restrict src, int64_t ss, float *restrict dst, int64_t ds) {
  tg_vf8 r[8], t[8], u[8];
  for (int i = 0; i < 8; i++) memcpy(&r[i], src + i * ss, sizeof r[i]);
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

/* Columns [0, dh) of rows x [nk, d] into xT [dh, ld], the columns [nk, round16(nk)) zero: 8 x 8 blocks, then the
 * remaining keys and columns one by one. */
TG_CPU_CLONES static void at_pack_t(const float *x, int64_t d, int64_t dh, int64_t nk, float *xT, int64_t ld) {
  int64_t j8 = 0, c8 = 0;
#if TG_CPU_VEC
  j8 = nk - nk % 8;
  c8 = dh - dh % 8;
  for (int64_t j = 0; j < j8; j += 8)
    for (int64_t c = 0; c < c8; c += 8) at_transpose8(x + j * d + c, d, xT + c * ld + j, ld);
#endif
  for (int64_t c = 0; c < dh; c++) {
    float *restrict row = xT + c * ld;
    for (int64_t j = c < c8 ? j8 : 0; j < nk; j++) row[j] = x[j * d + c];
    for (int64_t j = nk; j < tg_attn_round16(nk); j++) row[j] = 0.0f;
  }
}

#if TG_CPU_VEC
/* 16 floats from p, and to p (macros: no vector crosses a call, whose convention would depend on the clone). */
#define AT_LOAD(p) __extension__({ tg_vf16 v_; memcpy(&v_, (p), sizeof v_); v_; })
#define AT_STORE(p, v) __extension__({ tg_vf16 w_ = (v); memcpy((p), &w_, sizeof w_); })

/* G (<= 4) blocks of AT_KB keys from j0 of at_dots: AT_R x G accumulators, one load of y per block and column. */
TG_CPU_INLINE void at_dots_blocks(const float *restrict x, int64_t d, int R, const float *restrict yT, int64_t ld,
                                  int64_t dh, int64_t j0, float scale, float *restrict s, int G) {
  tg_vf16 acc[AT_R][4];
  for (int r = 0; r < AT_R; r++)
    for (int g = 0; g < 4; g++) acc[r][g] = (tg_vf16){0};
  for (int64_t c = 0; c < dh; c++) {
    const float *restrict yr = yT + c * ld + j0;
    tg_vf16 y[4];
    for (int g = 0; g < G; g++) y[g] = AT_LOAD(yr + g * AT_KB);
    for (int r = 0; r < AT_R; r++) {
      const float xr = x[(r < R ? r : R - 1) * d + c]; /* rows past R repeat the last (their sums are dropped) */
      for (int g = 0; g < G; g++) acc[r][g] += xr * y[g];
    }
  }
  for (int r = 0; r < AT_R; r++) /* a constant bound: the accumulators stay in registers */
    if (r < R)
      for (int g = 0; g < G; g++) AT_STORE(s + r * ld + j0 + g * AT_KB, acc[r][g] * scale);
}
#endif

/* s[r ld + j] = scale (x_r . yT[:, j]) for R (<= AT_R) rows x_r = x + r d [dh] and the keys j < nb (whole blocks),
 * yT [dh, ld]. */
TG_CPU_INLINE void at_dots(const float *restrict x, int64_t d, int R, const float *restrict yT, int64_t ld, int64_t dh,
                           int64_t nb, float scale, float *restrict s) {
#if TG_CPU_VEC
  int64_t j0 = 0;
  for (; j0 + 4 * AT_KB <= nb; j0 += 4 * AT_KB) at_dots_blocks(x, d, R, yT, ld, dh, j0, scale, s, 4);
  switch ((nb - j0) / AT_KB) {
    case 3: at_dots_blocks(x, d, R, yT, ld, dh, j0, scale, s, 3); break;
    case 2: at_dots_blocks(x, d, R, yT, ld, dh, j0, scale, s, 2); break;
    case 1: at_dots_blocks(x, d, R, yT, ld, dh, j0, scale, s, 1); break;
    default: break;
  }
#else
  for (int r = 0; r < R; r++)
    for (int64_t j = 0; j < nb; j++) {
      float acc = 0.0f;
      for (int64_t c = 0; c < dh; c++) acc += x[r * d + c] * yT[c * ld + j];
      s[r * ld + j] = acc * scale;
    }
#endif
}

/* The weighted row sums for R (<= AT_R) outputs o: out_o[c] (+)= mul[o] sum over t in [lo[o], hi[o]) of
 * w_o[t wt] y[t d + c], c < dh, with w_o = w + o wo and out_o = out + o od; add: add into out_o, else overwrite it.
 * The t every output has run once for all of them (each y row loaded once, two accumulators per output), the rest
 * per output: no output ever reads a row of y outside its range (a hidden key's NaN stays out). */
TG_CPU_INLINE void at_rows(int R, const float *restrict w, int64_t wo, int64_t wt, const int64_t *lo, const int64_t *hi,
                           const float *restrict y, int64_t d, int64_t dh, const float *mul, float *restrict out,
                           int64_t od, int add) {
  int64_t LO = lo[0], HI = hi[0];
  for (int o = 1; o < R; o++) {
    LO = lo[o] > LO ? lo[o] : LO;
    HI = hi[o] < HI ? hi[o] : HI;
  }
  if (HI < LO) HI = LO;
  int64_t c0 = 0;
#if TG_CPU_VEC
  for (; c0 + AT_CB <= dh; c0 += AT_CB) {
    tg_vf16 acc[AT_R][2];
    for (int o = 0; o < AT_R; o++) acc[o][0] = acc[o][1] = (tg_vf16){0};
    const float *restrict yc = y + c0;
    int64_t t = LO;
    for (; t + 2 <= HI; t += 2) {
      tg_vf16 y0 = AT_LOAD(yc + t * d), y1 = AT_LOAD(yc + (t + 1) * d);
      for (int o = 0; o < AT_R; o++) {
        const float *wr = w + (o < R ? o : R - 1) * wo;
        acc[o][0] += wr[t * wt] * y0;
        acc[o][1] += wr[(t + 1) * wt] * y1;
      }
    }
    if (t < HI) {
      tg_vf16 y0 = AT_LOAD(yc + t * d);
      for (int o = 0; o < AT_R; o++) acc[o][0] += w[(o < R ? o : R - 1) * wo + t * wt] * y0;
    }
    for (int o = 0; o < AT_R; o++) { /* a constant bound: the accumulators stay in registers */
      if (o >= R) break;
      const float *wr = w + o * wo;
      for (int64_t u = lo[o]; u < LO; u++) acc[o][0] += wr[u * wt] * AT_LOAD(yc + u * d);
      for (int64_t u = HI > lo[o] ? HI : lo[o]; u < hi[o]; u++) acc[o][1] += wr[u * wt] * AT_LOAD(yc + u * d);
      tg_vf16 r = (acc[o][0] + acc[o][1]) * mul[o];
      float *oc = out + o * od + c0;
      AT_STORE(oc, add ? AT_LOAD(oc) + r : r);
    }
  }
#endif
  for (int o = 0; o < R; o++)
    for (int64_t c = c0; c < dh; c++) {
      float acc = 0.0f;
      for (int64_t u = lo[o]; u < hi[o]; u++) acc += w[o * wo + u * wt] * y[u * d + c];
      float *oc = out + o * od + c;
      *oc = add ? *oc + acc * mul[o] : acc * mul[o];
    }
}

/* a . b over dh elements: element c to lane c % AT_CB in order, the lanes added pairwise in a fixed order. */
TG_CPU_INLINE float at_dot(const float *restrict a, const float *restrict b, int64_t dh) {
  float lane[AT_CB] = {0};
  int64_t c = 0;
  for (; c + AT_CB <= dh; c += AT_CB)
    for (int l = 0; l < AT_CB; l++) lane[l] += a[c + l] * b[c + l];
  for (; c < dh; c++) lane[c % AT_CB] += a[c] * b[c];
  for (int w = AT_CB / 2; w > 0; w /= 2)
    for (int l = 0; l < w; l++) lane[l] += lane[l + w];
  return lane[0];
}

/* s[0..nb) to exp(s - max) over the n visible keys (tg_vexpf), +0 at the hidden ones; returns 1 / their sum. The sum
 * runs in float lanes (key j to lane j % 16, in order), the lanes added in double in a fixed order: the same bits in
 * every clone. */
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
  float lane[AT_KB] = {0};
  for (int j = 0; j < nb; j += AT_KB)
    for (int l = 0; l < AT_KB; l++) lane[l] += s[j + l];
  double acc[TG_ROW_LANES];
#if TG_CPU_VEC
  tg_vd8 t = TG_LOAD_D8(lane) + TG_LOAD_D8(lane + TG_ROW_LANES);
  memcpy(acc, &t, sizeof acc);
#else
  for (int l = 0; l < TG_ROW_LANES; l++) acc[l] = (double)lane[l] + (double)lane[l + TG_ROW_LANES];
#endif
  return (float)(1.0 / tg_row_lanes_total(acc));
}

/* A tile of query rows [i0, i0 + nr): each row's visible keys n[r] (they grow with the row), and its scores'
 * exp(s - max) in S [nr, ld] up to round16(n[r]) (+0 past n[r]); inv[r] = 1 / their sum (0 for a row that sees
 * none). */
TG_CPU_INLINE void at_tile_exps(const at_head *h, const tg_attn_dims *a, int64_t i0, int nr, int64_t *n, float *inv) {
  for (int r = 0; r < nr; r++) n[r] = tg_attn_visible(a->causal, a->offset, a->Tk, i0 + r);
  for (int r = 0; r < nr; r += AT_R) {
    int R = nr - r < AT_R ? nr - r : AT_R;
    at_dots(h->q + (i0 + r) * a->d, a->d, R, h->kT, h->ld, a->dh, tg_attn_round16(n[r + R - 1]), a->scale,
            h->S + r * h->ld);
  }
  for (int r = 0; r < nr; r++)
    inv[r] = n[r] > 0 ? at_exp_row(h->S + r * h->ld, (int)n[r], (int)tg_attn_round16(n[r])) : 0.0f;
}

TG_CPU_CLONES static void at_fwd_head(const at_head *h, const tg_attn_dims *a) {
  int64_t n[AT_QT], lo[AT_R] = {0};
  float inv[AT_QT];
  for (int64_t i0 = 0; i0 < a->Tq; i0 += AT_QT) {
    int nr = a->Tq - i0 < AT_QT ? (int)(a->Tq - i0) : AT_QT;
    at_tile_exps(h, a, i0, nr, n, inv);
    for (int r = 0; r < nr; r += AT_R) /* a row that sees no key: an empty sum times 0, +0 */
      at_rows(nr - r < AT_R ? nr - r : AT_R, h->S + r * h->ld, h->ld, 1, lo, n + r, h->v, a->d, a->dh, inv + r,
              h->o + (i0 + r) * a->d, a->d, 0);
  }
}

/* The backward of a tile of query rows, p recomputed as the forward computed it: with D_i = dout_i . o_i and
 * dS_ij = scale p_ij (dout_i . v_j - D_i), dq_i += sum_j dS_ij k_j, then per key j over the tile's rows that see it
 * dk_j += sum_i dS_ij q_i and dv_j += sum_i p_ij dout_i (one read and write of dk_j and dv_j per tile). */
TG_CPU_CLONES static void at_bwd_head(const at_head *h, const tg_attn_dims *a) {
  static const float ones[AT_R] = {1.0f, 1.0f, 1.0f, 1.0f};
  const int64_t d = a->d, dh = a->dh, ld = h->ld;
  int64_t n[AT_QT], zero[AT_R] = {0}, first[AT_R], all[AT_R];
  float inv[AT_QT];
  for (int64_t i0 = 0; i0 < a->Tq; i0 += AT_QT) {
    int nr = a->Tq - i0 < AT_QT ? (int)(a->Tq - i0) : AT_QT;
    at_tile_exps(h, a, i0, nr, n, inv);
    for (int r = 0; r < nr; r++) {
      float *restrict p = h->S + r * ld;
      for (int64_t j = 0; j < tg_attn_round16(n[r]); j++) p[j] *= inv[r];
    }
    if (h->dq || h->dk) {
      for (int r = 0; r < nr; r += AT_R) {
        int R = nr - r < AT_R ? nr - r : AT_R;
        at_dots(h->dout + (i0 + r) * d, d, R, h->vT, ld, dh, tg_attn_round16(n[r + R - 1]), 1.0f, h->G + r * ld);
      }
      for (int r = 0; r < nr; r++) {
        const float *restrict p = h->S + r * ld;
        float *restrict ds = h->G + r * ld;
        float D = at_dot(h->dout + (i0 + r) * d, h->o + (i0 + r) * d, dh);
        for (int64_t j = 0; j < tg_attn_round16(n[r]); j++)
          ds[j] = tg_vsel(j < n[r], a->scale * (p[j] * (ds[j] - D)), 0.0f);
      }
    }
    if (h->dq)
      for (int r = 0; r < nr; r += AT_R)
        at_rows(nr - r < AT_R ? nr - r : AT_R, h->G + r * ld, ld, 1, zero, n + r, h->k, d, dh, ones,
                h->dq + (i0 + r) * d, d, 1);
    /* keys in groups of AT_R: the rows of the tile that see key j are r >= first[j] (n grows with the row) */
    int64_t nk = n[nr - 1];
    for (int r = 0; r < AT_R; r++) all[r] = nr;
    int r0 = 0;
    for (int64_t j = 0; j < nk; j += AT_R) {
      int R = nk - j < AT_R ? (int)(nk - j) : AT_R;
      for (int o = 0; o < R; o++) {
        while (n[r0] <= j + o) r0++;
        first[o] = r0;
      }
      if (h->dv) at_rows(R, h->S + j, 1, ld, first, all, h->dout + i0 * d, d, dh, ones, h->dv + j * d, d, 1);
      if (h->dk) at_rows(R, h->G + j, 1, ld, first, all, h->q + i0 * d, d, dh, ones, h->dk + j * d, d, 1);
    }
  }
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
  h.ld = tg_attn_round16(nk);
  float *ws = (float *)ka->ws + slot * tg_attn_cpu_slot_floats(a);
  int64_t tlen = a->dh * tg_attn_round16(a->Tk);
  h.kT = ws;
  h.vT = ws + tlen;
  h.S = ws + 2 * tlen;
  h.G = h.S + AT_QT * tg_attn_round16(a->Tk);
  at_pack_t(h.k, a->d, a->dh, nk, h.kT, h.ld);
  if (h.dq || h.dk) at_pack_t(h.v, a->d, a->dh, nk, h.vT, h.ld);
  return h;
}

/* Every (batch, head) task of the call, on up to one thread per slot. */
static void at_run(const tg_kernel_args *ka, const tg_attn_dims *a, int bwd) {
  int64_t tasks = a->B * a->H, slots = tg_attn_cpu_slots(a);
  int64_t work = tasks * a->Tq * a->Tk * a->dh;
  int nt = omp_get_max_threads() < slots ? omp_get_max_threads() : (int)slots;
  if (work > AT_PAR_MIN && nt > 1 && tg_par_ok()) {
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t t = 0; t < tasks; t++) {
      at_head h = at_head_of(ka, a, t, omp_get_thread_num());
      if (bwd) at_bwd_head(&h, a);
      else at_fwd_head(&h, a);
    }
  } else {
    for (int64_t t = 0; t < tasks; t++) {
      at_head h = at_head_of(ka, a, t, 0);
      if (bwd) at_bwd_head(&h, a);
      else at_fwd_head(&h, a);
    }
  }
}

tg_status tg_cpu_attention_fwd(const tg_kernel_args *a) {
  const tg_attn_dims d = tg_attn_dims_of(a);
  at_run(a, &d, 0);
  return TG_OK;
}

tg_status tg_cpu_attention_bwd(const tg_kernel_args *a) {
  if (!a->in_grad[0] && !a->in_grad[1] && !a->in_grad[2]) return TG_OK;
  const tg_attn_dims d = tg_attn_dims_of(a);
  at_run(a, &d, 1);
  return TG_OK;
}
