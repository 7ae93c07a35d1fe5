/* CUDA kernels for the elementwise ops: binary ops with suffix broadcasting, scale and activations. */
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_internal.h"

/* Rounding follows the CPU: a product that feeds an addition is taken with __fmul_rn, and gradients
 * are accumulated with __fadd_rn, so nvcc never fuses them into an FMA the CPU does not do. */

#define EW_CHUNK_THREADS (1 << 16) /* broadcast-gradient threads aimed for (columns x row chunks) */
#define EW_MAX_CHUNKS 1024         /* row chunks per column at most */
#define EW_MIN_CHUNK_ROWS 16       /* rows per chunk at least */

/* Grid-stride loop of i over [0, n). */
#define EW_LOOP(i, n)                                                       \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += (int64_t)gridDim.x * blockDim.x)

/* Overflow-free logistic function: exp of a non-positive argument only. */
static __device__ __forceinline__ float ew_sigmoid(float x) {
  float e = expf(-fabsf(x));
  float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

/* ---- binary ops: out [n] = a [na] op b [nb]; one of na, nb is n, the other divides n ---- */

enum ew_bin { EW_ADD, EW_SUB, EW_MUL, EW_DIV };

struct bin_args {
  const float *a, *b; /* [na], [nb] */
  const float *y;     /* op output [n], read by div's backward only */
  const float *dy;    /* d objective / d output [n] */
  int64_t n, na, nb;
};

template <ew_bin OP>
static __device__ __forceinline__ float bin_apply(float x, float y) {
  if constexpr (OP == EW_ADD) return x + y;
  else if constexpr (OP == EW_SUB) return x - y;
  else if constexpr (OP == EW_MUL) return x * y;
  else return x / y;
}

/* d objective / d a at output element i, where b[ib] is its b operand. Reads b for mul and div only
 * (add and sub keep no inputs for backward). */
template <ew_bin OP>
static __device__ __forceinline__ float bin_grad_a(const bin_args &c, int64_t i, int64_t ib) {
  float dy = c.dy[i];
  if constexpr (OP == EW_MUL) return __fmul_rn(dy, c.b[ib]);
  else if constexpr (OP == EW_DIV) return dy / c.b[ib];
  else return dy;
}

/* d objective / d b at output element i, with operands a[ia], b[ib]. The CPU's g -= t is g + (-t). */
template <ew_bin OP>
static __device__ __forceinline__ float bin_grad_b(const bin_args &c, int64_t i, int64_t ia, int64_t ib) {
  float dy = c.dy[i];
  if constexpr (OP == EW_ADD) return dy;
  else if constexpr (OP == EW_SUB) return -dy;
  else if constexpr (OP == EW_MUL) return __fmul_rn(dy, c.a[ia]);
  else return -(dy * c.y[i] / c.b[ib]);
}

template <ew_bin OP>
static __global__ void bin_fwd_k(bin_args c, float *out /* [n] */) {
  EW_LOOP(i, c.n) {
    float x = c.a[c.na == c.n ? i : i % c.na], y = c.b[c.nb == c.n ? i : i % c.nb];
    out[i] = bin_apply<OP>(x, y);
  }
}

/* Gradients of the operands with the output's size (ga, gb [n] or NULL); one thread adds both, in
 * order, so ga == gb (x op x) accumulates correctly. */
template <ew_bin OP>
static __global__ void bin_bwd_full_k(bin_args c, float *ga, float *gb) {
  EW_LOOP(i, c.n) {
    int64_t ia = c.na == c.n ? i : i % c.na, ib = c.nb == c.n ? i : i % c.nb;
    if (ga) ga[i] = __fadd_rn(ga[i], bin_grad_a<OP>(c, i, ib));
    if (gb) gb[i] = __fadd_rn(gb[i], bin_grad_b<OP>(c, i, ia, ib));
  }
}

/* Gradient of the broadcast operand (a when SMALL_A, else b; ns elements, reps = n / ns repeats):
 * item t = (chunk k, column j) sums, in double and in row order, rows [k * rows, (k + 1) * rows) of
 * column j. With partial it stores the sum at partial[t] ([chunks, ns]); without (one chunk) it adds
 * the sum into g[j] ([ns]) directly. Adjacent threads take adjacent columns: coalesced. */
template <ew_bin OP, bool SMALL_A>
static __global__ void bin_bwd_small_k(bin_args c, int64_t ns, int64_t reps, int64_t rows, int64_t chunks,
                                       double *partial, float *g) {
  EW_LOOP(t, chunks * ns) {
    int64_t k = t / ns, j = t - k * ns;
    int64_t r1 = (k + 1) * rows < reps ? (k + 1) * rows : reps;
    double acc = 0.0;
    for (int64_t r = k * rows; r < r1; r++) {
      int64_t i = r * ns + j;
      acc += SMALL_A ? bin_grad_a<OP>(c, i, i) : bin_grad_b<OP>(c, i, i, j);
    }
    if (partial)
      partial[t] = acc;
    else
      g[j] = __fadd_rn(g[j], (float)acc);
  }
}

/* g[j] ([ns]) += sum over chunks k, in order, of partial[k, j] ([chunks, ns]). */
static __global__ void bin_bwd_chunks_k(const double *partial, int64_t chunks, int64_t ns, float *g) {
  EW_LOOP(j, ns) {
    double acc = 0.0;
    for (int64_t k = 0; k < chunks; k++) acc += partial[k * ns + j];
    g[j] = __fadd_rn(g[j], (float)acc);
  }
}

static bin_args bin_ctx(const tg_kernel_args *a) {
  bin_args c;
  c.a = (const float *)a->in[0]->data;
  c.b = (const float *)a->in[1]->data;
  c.y = (const float *)a->out->data;
  c.dy = a->out_grad;
  c.n = tg_numel(a->out);
  c.na = tg_numel(a->in[0]);
  c.nb = tg_numel(a->in[1]);
  return c;
}

template <ew_bin OP>
static tg_status bin_fwd(const tg_kernel_args *a, const char *kernel) {
  bin_args c = bin_ctx(a);
  cudaStream_t stream = tg_cuda_stream(tg_cuda_dev_of(a));
  bin_fwd_k<OP><<<tg_cuda_blocks(c.n), TG_CUDA_THREADS, 0, stream>>>(c, (float *)a->out->data);
  return tg_cuda_launched(kernel, a->node_name);
}

/* The broadcast operand's gradient g [ns]: row chunks sized so that enough threads run, then (when
 * more than one chunk) the chunk sums added in chunk order. */
template <ew_bin OP, bool SMALL_A>
static tg_status bin_bwd_small(const tg_kernel_args *a, const bin_args &c, int64_t ns, float *g,
                               const char *kernel) {
  int dev = tg_cuda_dev_of(a);
  cudaStream_t stream = tg_cuda_stream(dev);
  int64_t reps = c.n / ns;
  int64_t chunks = EW_CHUNK_THREADS / ns, most = (reps + EW_MIN_CHUNK_ROWS - 1) / EW_MIN_CHUNK_ROWS;
  if (chunks > most) chunks = most;
  if (chunks > EW_MAX_CHUNKS) chunks = EW_MAX_CHUNKS;
  if (chunks < 1) chunks = 1;
  int64_t rows = (reps + chunks - 1) / chunks;
  chunks = (reps + rows - 1) / rows;
  double *partial = NULL; /* [chunks, ns] */
  if (chunks > 1) {
    partial = (double *)tg_cuda_scratch(dev, (size_t)(chunks * ns) * sizeof(double));
    if (!partial) return TG_ERR_NOMEM; /* tg_cuda_scratch has set the message */
  }
  bin_bwd_small_k<OP, SMALL_A>
      <<<tg_cuda_blocks(chunks * ns), TG_CUDA_THREADS, 0, stream>>>(c, ns, reps, rows, chunks, partial, g);
  tg_status st = tg_cuda_launched(kernel, a->node_name);
  if (st != TG_OK || !partial) return st;
  bin_bwd_chunks_k<<<tg_cuda_blocks(ns), TG_CUDA_THREADS, 0, stream>>>(partial, chunks, ns, g);
  return tg_cuda_launched(kernel, a->node_name);
}

template <ew_bin OP>
static tg_status bin_bwd(const tg_kernel_args *a, const char *kernel) {
  bin_args c = bin_ctx(a);
  float *ga = a->in_grad[0], *gb = a->in_grad[1];
  if (c.n == 0) return TG_OK;
  float *full_a = c.na == c.n ? ga : NULL, *full_b = c.nb == c.n ? gb : NULL;
  if (full_a || full_b) {
    cudaStream_t stream = tg_cuda_stream(tg_cuda_dev_of(a));
    bin_bwd_full_k<OP><<<tg_cuda_blocks(c.n), TG_CUDA_THREADS, 0, stream>>>(c, full_a, full_b);
    tg_status st = tg_cuda_launched(kernel, a->node_name);
    if (st != TG_OK) return st;
  }
  if (ga && c.na < c.n) return bin_bwd_small<OP, true>(a, c, c.na, ga, kernel);
  if (gb && c.nb < c.n) return bin_bwd_small<OP, false>(a, c, c.nb, gb, kernel);
  return TG_OK;
}

tg_status tg_cuda_add_fwd(const tg_kernel_args *a) { return bin_fwd<EW_ADD>(a, "add_fwd"); }
tg_status tg_cuda_add_bwd(const tg_kernel_args *a) { return bin_bwd<EW_ADD>(a, "add_bwd"); }
tg_status tg_cuda_sub_fwd(const tg_kernel_args *a) { return bin_fwd<EW_SUB>(a, "sub_fwd"); }
tg_status tg_cuda_sub_bwd(const tg_kernel_args *a) { return bin_bwd<EW_SUB>(a, "sub_bwd"); }
tg_status tg_cuda_mul_fwd(const tg_kernel_args *a) { return bin_fwd<EW_MUL>(a, "mul_fwd"); }
tg_status tg_cuda_mul_bwd(const tg_kernel_args *a) { return bin_bwd<EW_MUL>(a, "mul_bwd"); }
tg_status tg_cuda_div_fwd(const tg_kernel_args *a) { return bin_fwd<EW_DIV>(a, "div_fwd"); }
tg_status tg_cuda_div_bwd(const tg_kernel_args *a) { return bin_bwd<EW_DIV>(a, "div_bwd"); }

/* ---- unary ops: out [n] = f(x [n]); backward dx [n] += the op's term ----
 * Each op is a functor: fwd(x, s) is the output, bwd(x, y, dy, s) the gradient term, where s is
 * attr f[0] (scale factor, elu alpha). READS_X / READS_Y follow op_table.c's bwd_needs: backward
 * loads only those (the others' buffers may already hold something else). */

struct un_scale {
  static constexpr bool READS_X = false, READS_Y = false;
  static __device__ float fwd(float x, float s) { return x * s; }
  static __device__ float bwd(float, float, float dy, float s) { return dy * s; }
};
struct un_relu {
  static constexpr bool READS_X = false, READS_Y = true;
  static __device__ float fwd(float x, float) { return x < 0.0f ? 0.0f : x; } /* NaN passes through */
  static __device__ float bwd(float, float y, float dy, float) { return y > 0.0f ? dy : 0.0f; }
};
struct un_tanh {
  static constexpr bool READS_X = false, READS_Y = true;
  static __device__ float fwd(float x, float) { return tanhf(x); }
  static __device__ float bwd(float, float y, float dy, float) { return dy * (1.0f - __fmul_rn(y, y)); }
};
struct un_sigmoid {
  static constexpr bool READS_X = false, READS_Y = true;
  static __device__ float fwd(float x, float) { return ew_sigmoid(x); }
  static __device__ float bwd(float, float y, float dy, float) { return dy * y * (1.0f - y); }
};
struct un_elu {
  static constexpr bool READS_X = true, READS_Y = true;
  static __device__ float fwd(float x, float alpha) { return x > 0.0f ? x : alpha * expm1f(x); }
  static __device__ float bwd(float x, float y, float dy, float alpha) {
    return dy * (x > 0.0f ? 1.0f : y + alpha); /* y + alpha: d elu / dx for x <= 0 */
  }
};
struct un_silu {
  static constexpr bool READS_X = true, READS_Y = false;
  static __device__ float fwd(float x, float) { return x * ew_sigmoid(x); }
  static __device__ float bwd(float x, float, float dy, float) {
    float s = ew_sigmoid(x);
    return dy * s * (1.0f + __fmul_rn(x, 1.0f - s));
  }
};
/* Exact GELU (PyTorch's nn.GELU() default): x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2; d/dx = Phi(x) + x phi(x). */
struct un_gelu {
  static constexpr bool READS_X = true, READS_Y = false;
  static __device__ float cdf(float x) { return 0.5f * erfcf(__fmul_rn(x, -0.707106781186547524f)); }
  static __device__ float fwd(float x, float) { return __fmul_rn(x, cdf(x)); }
  static __device__ float bwd(float x, float, float dy, float) {
    float pdf = __fmul_rn(0.398942280401432678f, expf(__fmul_rn(-0.5f, __fmul_rn(x, x))));
    return __fmul_rn(dy, __fadd_rn(cdf(x), __fmul_rn(x, pdf)));
  }
};
/* PyTorch Softplus(beta=1, threshold=20): x above the threshold passes through. */
struct un_softplus {
  static constexpr bool READS_X = true, READS_Y = false;
  static __device__ float fwd(float x, float) { return x > 20.0f ? x : log1pf(expf(x)); }
  static __device__ float bwd(float x, float, float dy, float) { return x > 20.0f ? dy : dy * ew_sigmoid(x); }
};
struct un_exp {
  static constexpr bool READS_X = false, READS_Y = true;
  static __device__ float fwd(float x, float) { return expf(x); }
  static __device__ float bwd(float, float y, float dy, float) { return dy * y; }
};
struct un_log {
  static constexpr bool READS_X = true, READS_Y = false;
  static __device__ float fwd(float x, float) { return logf(x); }
  static __device__ float bwd(float x, float, float dy, float) { return dy / x; }
};
struct un_sqrt {
  static constexpr bool READS_X = false, READS_Y = true;
  static __device__ float fwd(float x, float) { return sqrtf(x); }
  static __device__ float bwd(float, float y, float dy, float) { return dy / (2.0f * y); }
};

template <class OP>
static __global__ void un_fwd_k(const float *x /* [n] */, float *out /* [n] */, int64_t n, float s) {
  EW_LOOP(i, n) out[i] = OP::fwd(x[i], s);
}

template <class OP>
static __global__ void un_bwd_k(const float *x /* [n] */, const float *y /* [n] */, const float *dy /* [n] */,
                                float *dx /* [n] */, int64_t n, float s) {
  EW_LOOP(i, n) {
    float xi = 0.0f, yi = 0.0f;
    if constexpr (OP::READS_X) xi = x[i];
    if constexpr (OP::READS_Y) yi = y[i];
    dx[i] = __fadd_rn(dx[i], OP::bwd(xi, yi, dy[i], s));
  }
}

template <class OP>
static tg_status un_fwd(const tg_kernel_args *a, const char *kernel) {
  int64_t n = tg_numel(a->out);
  float s = a->attr ? a->attr->f[0] : 0.0f;
  cudaStream_t stream = tg_cuda_stream(tg_cuda_dev_of(a));
  un_fwd_k<OP><<<tg_cuda_blocks(n), TG_CUDA_THREADS, 0, stream>>>((const float *)a->in[0]->data,
                                                             (float *)a->out->data, n, s);
  return tg_cuda_launched(kernel, a->node_name);
}

template <class OP>
static tg_status un_bwd(const tg_kernel_args *a, const char *kernel) {
  if (!a->in_grad[0]) return TG_OK;
  int64_t n = tg_numel(a->out);
  float s = a->attr ? a->attr->f[0] : 0.0f;
  cudaStream_t stream = tg_cuda_stream(tg_cuda_dev_of(a));
  un_bwd_k<OP><<<tg_cuda_blocks(n), TG_CUDA_THREADS, 0, stream>>>((const float *)a->in[0]->data,
                                                             (const float *)a->out->data, a->out_grad,
                                                             a->in_grad[0], n, s);
  return tg_cuda_launched(kernel, a->node_name);
}

tg_status tg_cuda_scale_fwd(const tg_kernel_args *a) { return un_fwd<un_scale>(a, "scale_fwd"); }
tg_status tg_cuda_scale_bwd(const tg_kernel_args *a) { return un_bwd<un_scale>(a, "scale_bwd"); }
tg_status tg_cuda_relu_fwd(const tg_kernel_args *a) { return un_fwd<un_relu>(a, "relu_fwd"); }
tg_status tg_cuda_relu_bwd(const tg_kernel_args *a) { return un_bwd<un_relu>(a, "relu_bwd"); }
tg_status tg_cuda_tanh_fwd(const tg_kernel_args *a) { return un_fwd<un_tanh>(a, "tanh_fwd"); }
tg_status tg_cuda_tanh_bwd(const tg_kernel_args *a) { return un_bwd<un_tanh>(a, "tanh_bwd"); }
tg_status tg_cuda_sigmoid_fwd(const tg_kernel_args *a) { return un_fwd<un_sigmoid>(a, "sigmoid_fwd"); }
tg_status tg_cuda_sigmoid_bwd(const tg_kernel_args *a) { return un_bwd<un_sigmoid>(a, "sigmoid_bwd"); }
tg_status tg_cuda_elu_fwd(const tg_kernel_args *a) { return un_fwd<un_elu>(a, "elu_fwd"); }
tg_status tg_cuda_elu_bwd(const tg_kernel_args *a) { return un_bwd<un_elu>(a, "elu_bwd"); }
tg_status tg_cuda_silu_fwd(const tg_kernel_args *a) { return un_fwd<un_silu>(a, "silu_fwd"); }
tg_status tg_cuda_silu_bwd(const tg_kernel_args *a) { return un_bwd<un_silu>(a, "silu_bwd"); }
tg_status tg_cuda_gelu_fwd(const tg_kernel_args *a) { return un_fwd<un_gelu>(a, "gelu_fwd"); }
tg_status tg_cuda_gelu_bwd(const tg_kernel_args *a) { return un_bwd<un_gelu>(a, "gelu_bwd"); }
tg_status tg_cuda_softplus_fwd(const tg_kernel_args *a) { return un_fwd<un_softplus>(a, "softplus_fwd"); }
tg_status tg_cuda_softplus_bwd(const tg_kernel_args *a) { return un_bwd<un_softplus>(a, "softplus_bwd"); }
tg_status tg_cuda_exp_fwd(const tg_kernel_args *a) { return un_fwd<un_exp>(a, "exp_fwd"); }
tg_status tg_cuda_exp_bwd(const tg_kernel_args *a) { return un_bwd<un_exp>(a, "exp_bwd"); }
tg_status tg_cuda_log_fwd(const tg_kernel_args *a) { return un_fwd<un_log>(a, "log_fwd"); }
tg_status tg_cuda_log_bwd(const tg_kernel_args *a) { return un_bwd<un_log>(a, "log_bwd"); }
tg_status tg_cuda_sqrt_fwd(const tg_kernel_args *a) { return un_fwd<un_sqrt>(a, "sqrt_fwd"); }
tg_status tg_cuda_sqrt_bwd(const tg_kernel_args *a) { return un_bwd<un_sqrt>(a, "sqrt_bwd"); }
