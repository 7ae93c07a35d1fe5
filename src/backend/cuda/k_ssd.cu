/* CUDA kernels of the SSD scan (chunked forward, exact backward), mirroring ssd_ref.h step by step. */
#include <math.h>
#include "backend/cuda/cuda_internal.h"
#include "ops/ssd_ref.h"
extern "C" { /* the kernel declarations are called from C (the op table) */
#include "backend/cuda/cuda_kernels.h"
}

/* Every value is computed in the order ssd_ref.h's float algorithm (tg_ssd_*_f) computes it, with
 * products feeding an addition taken through __fmul_rn (never fused into an FMA), so the two differ
 * only by expf's last bits (tg_ssd_bwd_step sums <h_{t-1}, dh_t> in the slots and tree of this block
 * reduce). The CPU kernels (k_ssd.c) sum in another order (chunked matrix products); test_ssd holds
 * them to tg_ssd_*_f within test_cuda's parity tolerance. Workspace layouts are ssd_ref.h's
 * (tg_ssd_workspace gives the CPU its own, tg_ssd_cpu_layout_of).
 *
 * Forward (section 2.4 of the spec), four launches:
 *   k_ssd_decay         one thread per (pair, chunk): din, wout, tot of the layout (sequential in
 *                       the chunk, exponents are sums of a_k <= 0);
 *   k_ssd_chunk_states  one thread per (pair, chunk, n, p): the chunk's local state;
 *   k_ssd_pass          one thread per (pair, n, p): the inter-chunk recurrence over chunks;
 *   k_ssd_rows          one block per (pair, t): state -> output, then the intra-chunk sum in tiles
 *                       of SSD_ROW_THREADS steps (stable segment sums by thread 0), then D x.
 * Backward, three launches:
 *   k_ssd_bwd_pairs     one block per pair: the adjoint recurrence of ssd_ref.h (state per (n, p)
 *                       element in the workspace, each thread its own elements; reductions over n,
 *                       over p, and over (n, p) by fixed threads and a fixed tree);
 *   k_ssd_bwd_groups    dB/dC += the sum of each group's heads' partials, heads in order;
 *   k_ssd_bwd_heads     dA/dD += the sum over the batch of the pair partials, in order. */

#define SSD_ROW_THREADS 128  /* k_ssd_rows: threads per block = steps per tile */
#define SSD_BWD_THREADS TG_SSD_RED /* k_ssd_bwd_pairs: threads per block (a power of two: tree reduce) */
#define SSD_MAX_BLOCKS 65536 /* grid cap of the block-per-item kernels; their loop covers the rest */

static_assert((SSD_BWD_THREADS & (SSD_BWD_THREADS - 1)) == 0, "tree reduce needs a power of two");

/* The node's operands: x [B, L, H, P], dt [B, L, H], A [H], Bm/Cm [B, L, G, N], D [H] or NULL. */
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

static tg_status ssd_check_ws(const tg_kernel_args *a, size_t floats, const char *pass) {
  if (a->ws && a->ws_bytes >= floats * sizeof(float)) return TG_OK;
  return tg_error(TG_ERR_INVALID, "ssd_scan '%s' %s: workspace of %zu bytes, needs %zu (plan sizes it "
                  "with tg_ssd_workspace)", a->node_name, pass, a->ws ? a->ws_bytes : (size_t)0,
                  floats * sizeof(float));
}

static unsigned ssd_item_blocks(int64_t items) {
  return (unsigned)(items < 1 ? 1 : items > SSD_MAX_BLOCKS ? SSD_MAX_BLOCKS : items);
}

static __device__ inline int64_t ssd_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* First index and stride of a grid-stride loop. */
static __device__ inline int64_t ssd_first() { return blockIdx.x * (int64_t)blockDim.x + threadIdx.x; }
static __device__ inline int64_t ssd_stride() { return (int64_t)gridDim.x * blockDim.x; }

/* One element of tg_ssd_step: a h + (dt B_n) x_p. */
static __device__ inline float ssd_step_elem(float a, float h, float dtt, float bn, float xp) {
  return __fmul_rn(a, h) + __fmul_rn(__fmul_rn(dtt, bn), xp);
}

/* ---- forward ---- */

/* tg_ssd_decay for every (pair, chunk). */
static __global__ void k_ssd_decay(tg_ssd_dims d, const float *dt, const float *A, float *ws) {
  const tg_ssd_fwd_layout w = tg_ssd_fwd_layout_of(&d);
  const int64_t items = d.B * d.H * d.nc;
  for (int64_t i = ssd_first(); i < items; i += ssd_stride()) {
    const int64_t pair = i / d.nc, c = i % d.nc, t0 = c * d.Q, q = ssd_min(d.Q, d.L - t0);
    float *din = ws + w.din + pair * d.L, *wout = ws + w.wout + pair * d.L; /* [L] each */
    const float Ah = A[tg_ssd_h(&d, pair)];
    float cum = 0.0f, rs = 0.0f;
    for (int64_t l = 0; l < q; l++) {
      cum += __fmul_rn(dt[tg_ssd_dtix(&d, pair, t0 + l)], Ah);
      din[t0 + l] = expf(cum);
    }
    ws[w.tot + pair * d.nc + c] = expf(cum);
    for (int64_t l = q - 1; l >= 0; l--) {
      const float dtt = dt[tg_ssd_dtix(&d, pair, t0 + l)];
      wout[t0 + l] = __fmul_rn(expf(rs), dtt);
      rs += __fmul_rn(dtt, Ah);
    }
  }
}

/* tg_ssd_chunk_states for every (pair, chunk, n, p): sum over s from the chunk's end. */
static __global__ void k_ssd_chunk_states(tg_ssd_dims d, const float *x, const float *Bm, float *ws) {
  const tg_ssd_fwd_layout w = tg_ssd_fwd_layout_of(&d);
  const int64_t np = d.N * d.P, items = d.B * d.H * d.nc * np;
  for (int64_t i = ssd_first(); i < items; i += ssd_stride()) {
    const int64_t e = i % np, pc = i / np, pair = pc / d.nc, c = pc % d.nc, n = e / d.P, p = e % d.P;
    const int64_t t0 = c * d.Q, q = ssd_min(d.Q, d.L - t0);
    const float *wout = ws + w.wout + pair * d.L; /* [L] */
    float acc = 0.0f;
    for (int64_t s = q - 1; s >= 0; s--) {
      const float wb = __fmul_rn(wout[t0 + s], Bm[tg_ssd_brow(&d, pair, t0 + s) + n]);
      acc += __fmul_rn(wb, x[tg_ssd_xrow(&d, pair, t0 + s) + p]);
    }
    ws[w.states + pc * np + e] = acc;
  }
}

/* tg_ssd_pass for every (pair, n, p): states[c] becomes the state entering chunk c. */
static __global__ void k_ssd_pass(tg_ssd_dims d, float *ws) {
  const tg_ssd_fwd_layout w = tg_ssd_fwd_layout_of(&d);
  const int64_t np = d.N * d.P, items = d.B * d.H * np;
  for (int64_t i = ssd_first(); i < items; i += ssd_stride()) {
    const int64_t pair = i / np, e = i % np;
    float *st = ws + w.states + pair * d.nc * np; /* [nc, N, P] */
    const float *tot = ws + w.tot + pair * d.nc;  /* [nc] */
    float s = 0.0f;
    for (int64_t c = 0; c < d.nc; c++) {
      const float loc = st[c * np + e];
      st[c * np + e] = s;
      s = __fmul_rn(tot[c], s) + loc;
    }
  }
}

/* tg_ssd_row for every (pair, t), one block each. Per tile of up to SSD_ROW_THREADS steps s (from t
 * down to the chunk start): thread k computes C_t . B_s for s = hi - k, thread 0 the segment sums
 * seg(t, s) in order (carried across tiles), then coef = exp(seg) dt_s cb; thread p adds the tile
 * to y_t[p] in the CPU's order. y_t is written only by the thread that owns p. */
static __global__ void k_ssd_rows(tg_ssd_dims d, ssd_ops o, float *y, const float *ws) {
  __shared__ float ex[SSD_ROW_THREADS], coef[SSD_ROW_THREADS];
  const tg_ssd_fwd_layout w = tg_ssd_fwd_layout_of(&d);
  const int64_t P = d.P, N = d.N, rows = d.B * d.H * d.L, tid = threadIdx.x, nt = blockDim.x;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t pair = r / d.L, t = r % d.L, c = t / d.Q, t0 = c * d.Q;
    const float *Sc = ws + w.states + (pair * d.nc + c) * N * P; /* [N, P] */
    const float *Ct = o.Cm + tg_ssd_brow(&d, pair, t);          /* [N] */
    const float din = ws[w.din + pair * d.L + t], Ah = o.A[tg_ssd_h(&d, pair)];
    float *yt = y + tg_ssd_xrow(&d, pair, t); /* [P] */
    for (int64_t p = tid; p < P; p += nt) {
      float acc = 0.0f;
      for (int64_t n = 0; n < N; n++) acc += __fmul_rn(__fmul_rn(din, Ct[n]), Sc[n * P + p]);
      yt[p] = acc;
    }
    float seg = 0.0f; /* thread 0: seg(t, s) for the next s */
    for (int64_t hi = t; hi >= t0; hi -= SSD_ROW_THREADS) {
      const int64_t cnt = ssd_min(SSD_ROW_THREADS, hi - t0 + 1);
      if (tid < cnt) {
        const float *Bs = o.Bm + tg_ssd_brow(&d, pair, hi - tid); /* [N] */
        float cb = 0.0f;
        for (int64_t n = 0; n < N; n++) cb += __fmul_rn(Ct[n], Bs[n]);
        coef[tid] = cb;
      }
      if (tid == 0)
        for (int64_t k = 0; k < cnt; k++) {
          ex[k] = seg;
          seg += __fmul_rn(o.dt[tg_ssd_dtix(&d, pair, hi - k)], Ah);
        }
      __syncthreads();
      if (tid < cnt)
        coef[tid] = __fmul_rn(__fmul_rn(expf(ex[tid]), o.dt[tg_ssd_dtix(&d, pair, hi - tid)]), coef[tid]);
      __syncthreads();
      for (int64_t p = tid; p < P; p += nt) {
        float acc = yt[p];
        for (int64_t k = 0; k < cnt; k++) acc += __fmul_rn(coef[k], o.x[tg_ssd_xrow(&d, pair, hi - k) + p]);
        yt[p] = acc;
      }
      __syncthreads(); /* ex and coef are rewritten by the next tile */
    }
    if (o.D) {
      const float *xt = o.x + tg_ssd_xrow(&d, pair, t);
      const float Dh = o.D[tg_ssd_h(&d, pair)];
      for (int64_t p = tid; p < P; p += nt) yt[p] += __fmul_rn(Dh, xt[p]);
    }
  }
}

static tg_status ssd_launched(const char *kernel, const tg_kernel_args *a) {
  return tg_cuda_launched(kernel, a->node_name);
}

tg_status tg_cuda_ssd_scan_fwd(const tg_kernel_args *a) {
  const tg_ssd_dims d = tg_ssd_dims_of(a);
  const ssd_ops o = ssd_ops_of(a);
  float *y = (float *)a->out->data; /* [B, L, H, P] */
  tg_status st = ssd_check_ws(a, tg_ssd_fwd_layout_of(&d).total, "forward");
  if (st != TG_OK) return st;
  float *ws = (float *)a->ws;
  const int64_t pairs = d.B * d.H, np = d.N * d.P;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  k_ssd_decay<<<tg_cuda_blocks(pairs * d.nc), TG_CUDA_THREADS, 0, s>>>(d, o.dt, o.A, ws);
  if ((st = ssd_launched("k_ssd_decay", a)) != TG_OK) return st;
  k_ssd_chunk_states<<<tg_cuda_blocks(pairs * d.nc * np), TG_CUDA_THREADS, 0, s>>>(d, o.x, o.Bm, ws);
  if ((st = ssd_launched("k_ssd_chunk_states", a)) != TG_OK) return st;
  k_ssd_pass<<<tg_cuda_blocks(pairs * np), TG_CUDA_THREADS, 0, s>>>(d, ws);
  if ((st = ssd_launched("k_ssd_pass", a)) != TG_OK) return st;
  k_ssd_rows<<<ssd_item_blocks(pairs * d.L), SSD_ROW_THREADS, 0, s>>>(d, o, y, ws);
  return ssd_launched("k_ssd_rows", a);
}

/* ---- backward ---- */

/* tg_ssd_bwd_pair for every pair, one block each. The state / adjoint elements e = n * P + p are
 * owned by thread e % blockDim (it alone writes them); the other reductions are read after a
 * barrier: u[p] and dx by thread p, dBp/dCp by thread n, <h_{t-1}, dh_t> by the tree over red,
 * and the remaining scalars (x . u, ddt, dA, dD) by thread 0 in the CPU's order. */
static __global__ void k_ssd_bwd_pairs(tg_ssd_dims d, ssd_ops o, const float *dy, float *dx, float *ddt,
                                       int want_dB, int want_dC, float *ws) {
  __shared__ float red[SSD_BWD_THREADS];
  const tg_ssd_bwd_layout w = tg_ssd_bwd_layout_of(&d);
  const int64_t P = d.P, N = d.N, np = N * P, tid = threadIdx.x, nt = blockDim.x;
  float *dBp = want_dB ? ws + w.dBp : NULL, *dCp = want_dC ? ws + w.dCp : NULL;
  for (int64_t pair = blockIdx.x; pair < d.B * d.H; pair += gridDim.x) {
    float *bnd = ws + w.pair + pair * w.pair_len + w.bnd; /* [nk, N, P] */
    float *hs = bnd - w.bnd + w.hs;                       /* [K, N, P] */
    float *dh = bnd - w.bnd + w.dh;                       /* [N, P] */
    float *u = bnd - w.bnd + w.u;                         /* [P] */
    const float Ah = o.A[tg_ssd_h(&d, pair)], Dh = o.D ? o.D[tg_ssd_h(&d, pair)] : 0.0f;
    /* pass A: dh is the running state; bnd[j] = the state entering block j */
    for (int64_t e = tid; e < np; e += nt) dh[e] = 0.0f;
    for (int64_t t = 0; t < d.L; t++) {
      const float dtt = o.dt[tg_ssd_dtix(&d, pair, t)], a = expf(__fmul_rn(dtt, Ah));
      const float *xt = o.x + tg_ssd_xrow(&d, pair, t), *Bt = o.Bm + tg_ssd_brow(&d, pair, t);
      for (int64_t e = tid; e < np; e += nt) {
        if (t % d.K == 0) bnd[(t / d.K) * np + e] = dh[e];
        dh[e] = ssd_step_elem(a, dh[e], dtt, Bt[e / P], xt[e % P]);
      }
    }
    /* pass B: dh is the adjoint carried from the step after */
    float dA = 0.0f, dD = 0.0f; /* thread 0's sums */
    for (int64_t e = tid; e < np; e += nt) dh[e] = 0.0f;
    for (int64_t j = d.nk - 1; j >= 0; j--) {
      const int64_t t0 = j * d.K, t1 = ssd_min(t0 + d.K, d.L);
      for (int64_t t = t0; t < t1; t++) {
        const float dtt = o.dt[tg_ssd_dtix(&d, pair, t)], a = expf(__fmul_rn(dtt, Ah));
        const float *xt = o.x + tg_ssd_xrow(&d, pair, t), *Bt = o.Bm + tg_ssd_brow(&d, pair, t);
        const float *prev = t == t0 ? bnd + j * np : hs + (t - t0 - 1) * np;
        for (int64_t e = tid; e < np; e += nt)
          hs[(t - t0) * np + e] = ssd_step_elem(a, prev[e], dtt, Bt[e / P], xt[e % P]);
      }
      __syncthreads(); /* the block's states are read across threads below */
      for (int64_t t = t1 - 1; t >= t0; t--) {
        const float *hp = t == t0 ? bnd + j * np : hs + (t - t0 - 1) * np, *ht = hs + (t - t0) * np;
        const float *xt = o.x + tg_ssd_xrow(&d, pair, t), *dyt = dy + tg_ssd_xrow(&d, pair, t);
        const float *Bt = o.Bm + tg_ssd_brow(&d, pair, t), *Ct = o.Cm + tg_ssd_brow(&d, pair, t);
        const float dtt = o.dt[tg_ssd_dtix(&d, pair, t)], ea = expf(__fmul_rn(dtt, Ah));
        float part = 0.0f;
        for (int64_t e = tid; e < np; e += nt) {
          dh[e] += __fmul_rn(Ct[e / P], dyt[e % P]);
          part += __fmul_rn(hp[e], dh[e]);
        }
        red[tid] = part;
        __syncthreads(); /* dh_t and red complete */
        for (int64_t p = tid; p < P; p += nt) {
          float s = 0.0f;
          for (int64_t n = 0; n < N; n++) s += __fmul_rn(dh[n * P + p], Bt[n]);
          u[p] = s;
          if (dx) {
            const float g = o.D ? __fmul_rn(dtt, s) + __fmul_rn(Dh, dyt[p]) : __fmul_rn(dtt, s);
            dx[tg_ssd_xrow(&d, pair, t) + p] += g;
          }
        }
        for (int64_t n = tid; n < N; n += nt) {
          if (dBp) {
            float s = 0.0f;
            for (int64_t p = 0; p < P; p++) s += __fmul_rn(dh[n * P + p], xt[p]);
            dBp[tg_ssd_hrow(&d, pair, t) + n] = __fmul_rn(dtt, s);
          }
          if (dCp) {
            float s = 0.0f;
            for (int64_t p = 0; p < P; p++) s += __fmul_rn(ht[n * P + p], dyt[p]);
            dCp[tg_ssd_hrow(&d, pair, t) + n] = s;
          }
        }
        for (int64_t half = nt / 2; half > 0; half /= 2) {
          __syncthreads();
          if (tid < half) red[tid] += red[tid + half];
        }
        __syncthreads(); /* u and red[0] complete; nobody reads dh any more this step */
        if (tid == 0) {
          const float r = red[0];
          float xu = 0.0f;
          for (int64_t p = 0; p < P; p++) xu += __fmul_rn(xt[p], u[p]);
          if (ddt) ddt[tg_ssd_dtix(&d, pair, t)] += xu + __fmul_rn(__fmul_rn(Ah, ea), r);
          dA += __fmul_rn(__fmul_rn(dtt, ea), r);
          if (o.D) {
            float s = 0.0f;
            for (int64_t p = 0; p < P; p++) s += __fmul_rn(xt[p], dyt[p]);
            dD += s;
          }
        }
        for (int64_t e = tid; e < np; e += nt) dh[e] = __fmul_rn(dh[e], ea);
        __syncthreads(); /* thread 0 is done with u and red before the next step rewrites them */
      }
    }
    if (tid == 0) {
      ws[w.dAp + pair] = dA;
      ws[w.dDp + pair] = dD;
    }
  }
}

/* tg_ssd_reduce_row for every (b, t, g, n): dB/dC [B, L, G, N] += the group's heads, in order. */
static __global__ void k_ssd_bwd_groups(tg_ssd_dims d, const float *ws, float *dB, float *dC) {
  const tg_ssd_bwd_layout w = tg_ssd_bwd_layout_of(&d);
  const int64_t N = d.N, hpg = d.H / d.G, items = d.B * d.L * d.G * N;
  for (int64_t i = ssd_first(); i < items; i += ssd_stride()) {
    const int64_t n = i % N, g = (i / N) % d.G, bt = i / N / d.G;
    float sb = 0.0f, sc = 0.0f;
    for (int64_t k = 0; k < hpg; k++) {
      const size_t at = (size_t)((bt * d.H + g * hpg + k) * N + n);
      if (dB) sb += ws[w.dBp + at];
      if (dC) sc += ws[w.dCp + at];
    }
    if (dB) dB[i] += sb;
    if (dC) dC[i] += sc;
  }
}

/* tg_ssd_reduce_head for every head: dA/dD [H] += the batch's pair partials, in order. */
static __global__ void k_ssd_bwd_heads(tg_ssd_dims d, const float *ws, float *dA, float *dD) {
  const tg_ssd_bwd_layout w = tg_ssd_bwd_layout_of(&d);
  for (int64_t h = ssd_first(); h < d.H; h += ssd_stride()) {
    float sa = 0.0f, sd = 0.0f;
    for (int64_t b = 0; b < d.B; b++) {
      sa += ws[w.dAp + b * d.H + h];
      sd += ws[w.dDp + b * d.H + h];
    }
    if (dA) dA[h] += sa;
    if (dD) dD[h] += sd;
  }
}

tg_status tg_cuda_ssd_scan_bwd(const tg_kernel_args *a) {
  const tg_ssd_dims d = tg_ssd_dims_of(a);
  const ssd_ops o = ssd_ops_of(a);
  const float *dy = a->out_grad; /* [B, L, H, P] */
  float *dx = a->in_grad[0], *ddt = a->in_grad[1], *dA = a->in_grad[2]; /* like x, dt, A */
  float *dB = a->in_grad[3], *dC = a->in_grad[4];                        /* [B, L, G, N] each */
  float *dD = a->attr->i[1] ? a->in_grad[5] : NULL;                      /* [H] */
  if (!dx && !ddt && !dA && !dB && !dC && !dD) return TG_OK;
  tg_status st = ssd_check_ws(a, tg_ssd_bwd_layout_of(&d).total, "backward");
  if (st != TG_OK) return st;
  float *ws = (float *)a->ws;
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  k_ssd_bwd_pairs<<<ssd_item_blocks(d.B * d.H), SSD_BWD_THREADS, 0, s>>>(d, o, dy, dx, ddt, dB != NULL,
                                                                          dC != NULL, ws);
  if ((st = ssd_launched("k_ssd_bwd_pairs", a)) != TG_OK) return st;
  if (dB || dC) {
    k_ssd_bwd_groups<<<tg_cuda_blocks(d.B * d.L * d.G * d.N), TG_CUDA_THREADS, 0, s>>>(d, ws, dB, dC);
    if ((st = ssd_launched("k_ssd_bwd_groups", a)) != TG_OK) return st;
  }
  if (dA || dD) {
    k_ssd_bwd_heads<<<tg_cuda_blocks(d.H), TG_CUDA_THREADS, 0, s>>>(d, ws, dA, dD);
    if ((st = ssd_launched("k_ssd_bwd_heads", a)) != TG_OK) return st;
  }
  return TG_OK;
}
