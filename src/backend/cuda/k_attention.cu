/* CUDA kernels for attention (forward and backward): a thread per query row or key, an online softmax, no atomics. */
#include <math.h>
#include <string.h>
#include "backend/cuda/cuda_internal.h"
#include "ops/attention_args.h"
extern "C" { /* the kernel declarations are called from C (the op table) */
#include "backend/cuda/cuda_kernels.h"
}

/* Every kernel gives a thread one (b, h, query row i) or, for dk and dv, one (b, h, key j), numbered so that the
 * lanes of a warp hold neighbouring rows (keys) of one head: they walk the other side's rows in the same order and
 * read the same k_j (q_i) at the same time. Sums are float (FP32 throughout, FMA contraction allowed); each thread
 * adds its own terms in a fixed order, so results are deterministic. The probabilities are never stored:
 * backward recomputes p_ij = exp(s_ij - m_i) / l_i from per-row statistics of a first pass.
 * A thread keeps its own rows (q_i and dO_i, or k_j and v_j) in registers when dh <= DC, and its accumulators in
 * chunks of AC columns, walking the keys (rows) once per chunk and recomputing the scores each time. Past 64 columns
 * (DC = 0) it reads its own rows where they lie, with chunks of 32: slower, but any dh works. dk and dv take chunks
 * of 32 from dh 33 on too: two rows and two full accumulators of 64 would not fit the 255 registers of a thread. */

#define ATTN_VARIANTS 5 /* dh <= 8, 16, 32, 64, and the generic path */

/* Loops over a register array must unroll fully for the array to stay in registers (nvcc); the emulator's host
 * compiler has no such pragma and needs none. */
#ifdef __NVCC__
#define ATTN_UNROLL _Pragma("unroll")
#else
#define ATTN_UNROLL
#endif

/* One attention call as the kernels see it. */
typedef struct attn_call {
  tg_attn_dims d;
  const float *q, *k, *v; /* q [B, Tq, d]; k, v [B, Tk, d] */
  const float *o, *dout;  /* backward: the forward's output and its gradient, [B, Tq, d] each */
  float *out;             /* forward: [B, Tq, d] */
  float *dq, *dk, *dv;    /* backward: like q, k, v; NULL where no gradient is wanted */
  float *stats;           /* backward: [3, B, H, Tq]: row max m_i, 1 / sum l_i, D_i = dO_i . o_i */
} attn_call;

/* A thread's own row of dh floats: copied into registers when DC > 0 (then dh <= DC), else read where it lies. */
template <int DC> struct attn_row {
  float r[DC > 0 ? DC : 1];
  const float *p; /* [dh] */

  __device__ void load(const float *src, int64_t dh) {
    p = src;
    if constexpr (DC > 0) {
      ATTN_UNROLL
      for (int c = 0; c < DC; c++) r[c] = c < dh ? src[c] : 0.0f;
    }
  }

  /* this row . x over the dh columns, in column order */
  __device__ float dot(const float *x, int64_t dh) const {
    float s = 0.0f;
    if constexpr (DC > 0) {
      ATTN_UNROLL
      for (int c = 0; c < DC; c++)
        if (c < dh) s += r[c] * x[c];
    } else {
      for (int64_t c = 0; c < dh; c++) s += p[c] * x[c];
    }
    return s;
  }
};

/* Accumulator chunk of a thread: acc[c] holds column c0 + c (c0 + c < dh). */
template <int AC> static __device__ inline void acc_zero(float *acc) {
  ATTN_UNROLL
  for (int c = 0; c < AC; c++) acc[c] = 0.0f;
}
/* acc += w * x[c0 ..) */
template <int AC> static __device__ inline void acc_axpy(float *acc, float w, const float *x, int64_t c0, int64_t dh) {
  ATTN_UNROLL
  for (int c = 0; c < AC; c++)
    if (c0 + c < dh) acc[c] += w * x[c0 + c];
}
/* acc *= f */
template <int AC> static __device__ inline void acc_scale(float *acc, float f) {
  ATTN_UNROLL
  for (int c = 0; c < AC; c++) acc[c] *= f;
}
/* dst[c0 ..) += f * acc (add = 1) or = f * acc (add = 0) */
template <int AC>
static __device__ inline void acc_store(float *dst, const float *acc, float f, int64_t c0, int64_t dh, int add) {
  ATTN_UNROLL
  for (int c = 0; c < AC; c++)
    if (c0 + c < dh) dst[c0 + c] = add ? dst[c0 + c] + f * acc[c] : f * acc[c];
}

/* The end of a chunk loop over the dh columns: 1 where one chunk holds them all (dh <= DC <= AC), so that c0 = 0 is
 * known at compile time. */
template <int DC, int AC> static __device__ inline int64_t attn_cols(int64_t dh) {
  return DC > 0 && DC <= AC ? 1 : dh;
}

/* Where row r of [B, H, T] lies: batch b, head h, position t (a query row or a key). */
typedef struct attn_at {
  int64_t b, h, t;
} attn_at;

static __device__ inline attn_at attn_locate(const tg_attn_dims *d, int64_t r, int64_t T) {
  attn_at at;
  int64_t bh = r / T;
  at.t = r - bh * T;
  at.b = bh / d->H;
  at.h = bh - at.b * d->H;
  return at;
}

/* Offset of (b, position t, head h)'s dh columns in a [B, T, d] tensor. */
static __device__ inline int64_t attn_off(const tg_attn_dims *d, int64_t b, int64_t T, int64_t t, int64_t h) {
  return (b * T + t) * d->d + h * d->dh;
}

/* The first query row that sees key j (rows i0 .. Tq-1 all do: the visible count grows with i); Tq when none does.
 * Compares only, so any offset (INT64_MIN, INT64_MAX) is safe. */
static __device__ inline int64_t attn_first_row(const tg_attn_dims *d, int64_t j) {
  if (!d->causal || d->offset >= j) return 0; /* row 0 sees min(Tk, offset + 1) > j keys */
  if (d->offset <= j - d->Tq) return d->Tq;   /* j - offset >= Tq */
  return j - d->offset;                       /* offset in (j - Tq, j): row i sees j iff i + offset >= j */
}

/* This thread's first row and the step to its next (a grid-stride loop over rows). */
static __device__ inline int64_t attn_first() { return blockIdx.x * (int64_t)blockDim.x + threadIdx.x; }
static __device__ inline int64_t attn_step() { return (int64_t)gridDim.x * blockDim.x; }

/* ---- forward ---- */

/* out_i = sum_j p_ij v_j over the n_i visible keys, a thread per (b, h, i): the online softmax keeps the running
 * max m and sum l of exp(s_ij - m) and rescales the accumulated output when m grows; a row with no key writes 0. */
template <int DC, int AC> static __global__ void k_attn_fwd(attn_call c) {
  const tg_attn_dims d = c.d;
  const int64_t rows = d.B * d.H * d.Tq;
  for (int64_t r = attn_first(); r < rows; r += attn_step()) {
    const attn_at at = attn_locate(&d, r, d.Tq);
    const int64_t n = tg_attn_visible(d.causal, d.offset, d.Tk, at.t);
    float *orow = c.out + attn_off(&d, at.b, d.Tq, at.t, at.h); /* [dh] */
    const float *kh = c.k + attn_off(&d, at.b, d.Tk, 0, at.h);  /* key j at kh + j d */
    const float *vh = c.v + attn_off(&d, at.b, d.Tk, 0, at.h);  /* value j at vh + j d */
    attn_row<DC> q;
    q.load(c.q + attn_off(&d, at.b, d.Tq, at.t, at.h), d.dh);
    for (int64_t c0 = 0; c0 < attn_cols<DC, AC>(d.dh); c0 += AC) {
      float acc[AC];
      acc_zero<AC>(acc);
      float m = -INFINITY, l = 0.0f;
      for (int64_t j = 0; j < n; j++) {
        float s = d.scale * q.dot(kh + j * d.d, d.dh);
        if (s > m) { /* a new max: rescale what is summed so far (by 0 at the first key) */
          float f = expf(m - s);
          l *= f;
          acc_scale<AC>(acc, f);
          m = s;
        }
        float p = expf(s - m); /* a NaN score stays NaN here */
        l += p;
        acc_axpy<AC>(acc, p, vh + j * d.d, c0, d.dh);
      }
      acc_store<AC>(orow, acc, n > 0 ? 1.0f / l : 0.0f, c0, d.dh, 0); /* acc is 0 when n == 0 */
    }
  }
}

/* ---- backward ---- */

/* Pass 1, a thread per (b, h, i): the row's max m_i and 1 / l_i of its scores (0 and 0 for a row with no key) and
 * D_i = dO_i . o_i, into stats [3, B, H, Tq]. */
template <int DC> static __global__ void k_attn_stats(attn_call c) {
  const tg_attn_dims d = c.d;
  const int64_t rows = d.B * d.H * d.Tq;
  for (int64_t r = attn_first(); r < rows; r += attn_step()) {
    const attn_at at = attn_locate(&d, r, d.Tq);
    const int64_t n = tg_attn_visible(d.causal, d.offset, d.Tk, at.t);
    const int64_t qo = attn_off(&d, at.b, d.Tq, at.t, at.h);
    const float *kh = c.k + attn_off(&d, at.b, d.Tk, 0, at.h);
    float m = 0.0f, inv = 0.0f;
    if (n > 0) {
      attn_row<DC> q;
      q.load(c.q + qo, d.dh);
      float l = 0.0f;
      m = -INFINITY;
      for (int64_t j = 0; j < n; j++) {
        float s = d.scale * q.dot(kh + j * d.d, d.dh);
        if (s > m) {
          l *= expf(m - s);
          m = s;
        }
        l += expf(s - m);
      }
      inv = 1.0f / l;
    }
    float D = 0.0f;
    for (int64_t x = 0; x < d.dh; x++) D += c.dout[qo + x] * c.o[qo + x];
    c.stats[r] = m;
    c.stats[rows + r] = inv;
    c.stats[2 * rows + r] = D;
  }
}

/* Pass 2, a thread per (b, h, i) with a visible key: dq_i += scale sum_j p_ij (dO_i . v_j - D_i) k_j. */
template <int DC, int AC> static __global__ void k_attn_dq(attn_call c) {
  const tg_attn_dims d = c.d;
  const int64_t rows = d.B * d.H * d.Tq;
  for (int64_t r = attn_first(); r < rows; r += attn_step()) {
    const attn_at at = attn_locate(&d, r, d.Tq);
    const int64_t n = tg_attn_visible(d.causal, d.offset, d.Tk, at.t);
    if (n == 0) continue; /* no key: nothing to add */
    const int64_t qo = attn_off(&d, at.b, d.Tq, at.t, at.h);
    const float *kh = c.k + attn_off(&d, at.b, d.Tk, 0, at.h);
    const float *vh = c.v + attn_off(&d, at.b, d.Tk, 0, at.h);
    const float m = c.stats[r], inv = c.stats[rows + r], D = c.stats[2 * rows + r];
    attn_row<DC> q, g; /* q_i, dO_i */
    q.load(c.q + qo, d.dh);
    g.load(c.dout + qo, d.dh);
    for (int64_t c0 = 0; c0 < attn_cols<DC, AC>(d.dh); c0 += AC) {
      float acc[AC]; /* sum_j dS_ij k_j */
      acc_zero<AC>(acc);
      for (int64_t j = 0; j < n; j++) {
        float p = expf(d.scale * q.dot(kh + j * d.d, d.dh) - m) * inv;
        float ds = p * (g.dot(vh + j * d.d, d.dh) - D);
        acc_axpy<AC>(acc, ds, kh + j * d.d, c0, d.dh);
      }
      acc_store<AC>(c.dq + qo, acc, d.scale, c0, d.dh, 1);
    }
  }
}

/* Pass 3, a thread per (b, h, key j): over the rows i that see j, dk_j += scale sum_i dS_ij q_i and
 * dv_j += sum_i p_ij dO_i (each when wanted). Rows are walked from the last down to the first that sees j, so the
 * lanes of a warp start together and read the same row until each stops. */
template <int DC, int AC> static __global__ void k_attn_dkv(attn_call c) {
  const tg_attn_dims d = c.d;
  const int64_t rows = d.B * d.H * d.Tq, keys = d.B * d.H * d.Tk;
  for (int64_t r = attn_first(); r < keys; r += attn_step()) {
    const attn_at at = attn_locate(&d, r, d.Tk);
    const int64_t i0 = attn_first_row(&d, at.t);
    if (i0 >= d.Tq) continue; /* no row sees this key */
    const int64_t ko = attn_off(&d, at.b, d.Tk, at.t, at.h);
    const float *qh = c.q + attn_off(&d, at.b, d.Tq, 0, at.h);    /* q_i at qh + i d */
    const float *gh = c.dout + attn_off(&d, at.b, d.Tq, 0, at.h); /* dO_i at gh + i d */
    const float *st = c.stats + (at.b * d.H + at.h) * d.Tq;       /* the head's row statistics, [3][rows] apart */
    attn_row<DC> k, v; /* k_j, v_j */
    k.load(c.k + ko, d.dh);
    v.load(c.v + ko, d.dh);
    for (int64_t c0 = 0; c0 < attn_cols<DC, AC>(d.dh); c0 += AC) {
      float ak[AC], av[AC]; /* sum_i dS_ij q_i, sum_i p_ij dO_i */
      acc_zero<AC>(ak);
      acc_zero<AC>(av);
      for (int64_t i = d.Tq - 1; i >= i0; i--) {
        const float *qi = qh + i * d.d, *gi = gh + i * d.d;
        float p = expf(d.scale * k.dot(qi, d.dh) - st[i]) * st[rows + i];
        if (c.dk) acc_axpy<AC>(ak, p * (v.dot(gi, d.dh) - st[2 * rows + i]), qi, c0, d.dh);
        if (c.dv) acc_axpy<AC>(av, p, gi, c0, d.dh);
      }
      if (c.dk) acc_store<AC>(c.dk + ko, ak, d.scale, c0, d.dh, 1);
      if (c.dv) acc_store<AC>(c.dv + ko, av, 1.0f, c0, d.dh, 1);
    }
  }
}

/* ---- launch (host) ---- */

typedef void (*attn_kernel)(attn_call);

/* The variant for head width dh: registers for dh <= 8, 16, 32, 64, else the generic path. */
static int attn_variant(int64_t dh) { return dh <= 8 ? 0 : dh <= 16 ? 1 : dh <= 32 ? 2 : dh <= 64 ? 3 : 4; }

static const attn_kernel k_fwd[ATTN_VARIANTS] = {k_attn_fwd<8, 8>, k_attn_fwd<16, 16>, k_attn_fwd<32, 32>,
                                                 k_attn_fwd<64, 64>, k_attn_fwd<0, 32>};
static const attn_kernel k_stats[ATTN_VARIANTS] = {k_attn_stats<8>, k_attn_stats<16>, k_attn_stats<32>,
                                                   k_attn_stats<64>, k_attn_stats<0>};
static const attn_kernel k_dq[ATTN_VARIANTS] = {k_attn_dq<8, 8>, k_attn_dq<16, 16>, k_attn_dq<32, 32>,
                                                k_attn_dq<64, 64>, k_attn_dq<0, 32>};
static const attn_kernel k_dkv[ATTN_VARIANTS] = {k_attn_dkv<8, 8>, k_attn_dkv<16, 16>, k_attn_dkv<32, 32>,
                                                 k_attn_dkv<64, 32>, k_attn_dkv<0, 32>};

/* kern over n rows (n >= 1), a thread each, on the device's compute stream. */
static tg_status attn_launch(attn_kernel kern, const char *name, const tg_kernel_args *a, const attn_call *c,
                             int64_t n) {
  cudaStream_t s = tg_cuda_stream(tg_cuda_dev_of(a));
  kern<<<tg_cuda_blocks(n), TG_CUDA_THREADS, 0, s>>>(*c);
  return tg_cuda_launched(name, a->node_name);
}

static attn_call attn_call_of(const tg_kernel_args *a) {
  attn_call c;
  memset(&c, 0, sizeof c);
  c.d = tg_attn_dims_of(a);
  c.q = (const float *)a->in[0]->data;
  c.k = (const float *)a->in[1]->data;
  c.v = (const float *)a->in[2]->data;
  return c;
}

tg_status tg_cuda_attention_fwd(const tg_kernel_args *a) {
  attn_call c = attn_call_of(a);
  c.out = (float *)a->out->data;
  return attn_launch(k_fwd[attn_variant(c.d.dh)], "k_attn_fwd", a, &c, c.d.B * c.d.H * c.d.Tq);
}

tg_status tg_cuda_attention_bwd(const tg_kernel_args *a) {
  attn_call c = attn_call_of(a);
  c.dq = a->in_grad[0];
  c.dk = a->in_grad[1];
  c.dv = a->in_grad[2];
  if (!c.dq && !c.dk && !c.dv) return TG_OK;
  size_t need = sizeof(float) * (size_t)tg_attn_dev_ws_floats(&c.d);
  if (!a->ws || a->ws_bytes < need)
    return tg_error(TG_ERR_INVALID, "attention '%s': backward workspace is %zu bytes, needs %zu", a->node_name,
                    a->ws ? a->ws_bytes : (size_t)0, need);
  c.o = (const float *)a->out->data;
  c.dout = a->out_grad;
  c.stats = (float *)a->ws;
  const int v = attn_variant(c.d.dh);
  const int64_t rows = c.d.B * c.d.H * c.d.Tq, keys = c.d.B * c.d.H * c.d.Tk;
  tg_status st = attn_launch(k_stats[v], "k_attn_stats", a, &c, rows);
  if (st == TG_OK && c.dq) st = attn_launch(k_dq[v], "k_attn_dq", a, &c, rows);
  if (st == TG_OK && (c.dk || c.dv)) st = attn_launch(k_dkv[v], "k_attn_dkv", a, &c, keys);
  return st;
}
