/* Vulkan kernels of the sums and the mean losses: sum, mean, sum_last, mean_last, mse, huber and pinball, forward
 * (shaders/rows_sum.comp: a workgroup per row) and backward (shaders/rows_sum_grad.comp). */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"

#define GROUP 256 /* local_size_x of both shaders */

enum { TERM_X, TERM_MSE, TERM_HUBER, TERM_PINBALL };

/* The loss's constants as the shaders take them: huber's delta as q[0], pinball's quantiles q[0..nq). */
typedef struct loss_consts {
  uint32_t nq;
  float q[TG_MAX_QUANTILES];
} loss_consts;

typedef struct sum_args {
  uint64_t x, t, o;
  uint32_t rows, d, mode;
  float scale;
  loss_consts c;
} sum_args;

typedef struct grad_args {
  uint64_t x, t, gy, g0, g1;
  uint32_t n, d, mode, flags; /* flags: 1 g0 wanted, 2 g1 wanted */
  float scale;
  loss_consts c;
} grad_args;

_Static_assert(sizeof(sum_args) <= TG_VK_PUSH_MAX && sizeof(grad_args) <= TG_VK_PUSH_MAX, "push constants too large");

static loss_consts consts_of(const tg_kernel_args *a, uint32_t mode) {
  loss_consts c = {0};
  if (mode == TERM_HUBER) c.nq = 1, c.q[0] = a->attr->f[0];
  if (mode == TERM_PINBALL) {
    c.nq = (uint32_t)a->attr->i[0];
    for (uint32_t k = 0; k < c.nq && k < TG_MAX_QUANTILES; k++) c.q[k] = a->attr->f[k];
  }
  return c;
}

/* The rows and row length of a reduction: over the last dim (last) or over everything (one row). */
static tg_status rows_of(const tg_kernel_args *a, int last, int64_t *rows, int64_t *d) {
  const tg_tensor *x = a->in[0];
  int64_t n = tg_numel(x);
  *d = last ? x->shape[x->ndim - 1] : n;
  *rows = *d > 0 ? n / *d : (last ? tg_numel(a->out) : 1);
  if (*d > (int64_t)GROUP * TG_VK_GROUPS_MAX) /* a workgroup's lanes would loop past lavapipe's 65535 */
    return tg_error(TG_ERR_UNSUPPORTED, "%s: a sum over %lld elements, more than a Vulkan workgroup sums", a->node_name,
                    (long long)*d);
  return tg_vk_fits(a->node_name, n);
}

/* out [rows] = scale * sums of rows of d terms; an empty row's sum is 0 times scale (NaN for an empty mean, as the
 * CPU's 0 / 0), written on the host side of the shader since GPUs need not keep infinities. */
static tg_status sum_run(const tg_kernel_args *a, int last, int mean, uint32_t mode) {
  int64_t rows, d;
  tg_status st = rows_of(a, last, &rows, &d);
  if (st != TG_OK || rows == 0) return st;
  int dev = a->out->device.index;
  if (d == 0) {
    float v = mean || mode != TERM_X ? NAN : 0.0f;
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return tg_vk_fill_u32(dev, a->out->data, (size_t)rows, bits);
  }
  sum_args p = {.x = tg_vk_addr(a->in[0]->data), .t = mode != TERM_X ? tg_vk_addr(a->in[1]->data) : 0, .o = tg_vk_addr(a->out->data),
                .rows = (uint32_t)rows, .d = (uint32_t)d, .mode = mode,
                .scale = mean || mode != TERM_X ? (float)(1.0 / (double)d) : 1.0f, .c = consts_of(a, mode)};
  return tg_vk_dispatch(dev, TG_VK_K_rows_sum, &p, sizeof p, tg_vk_groups((uint64_t)rows, 1));
}

static tg_status grad_run(const tg_kernel_args *a, int last, int mean, uint32_t mode) {
  int64_t rows, d;
  tg_status st = rows_of(a, last, &rows, &d);
  float *g0 = a->in_grad[0], *g1 = mode != TERM_X ? a->in_grad[1] : NULL;
  if (st != TG_OK || d == 0 || (!g0 && !g1)) return st;
  grad_args p = {.x = mode != TERM_X ? tg_vk_addr(a->in[0]->data) : 0, .t = mode != TERM_X ? tg_vk_addr(a->in[1]->data) : 0,
                 .gy = tg_vk_addr(a->out_grad), .g0 = tg_vk_addr(g0), .g1 = tg_vk_addr(g1), .n = (uint32_t)(rows * d),
                 .d = (uint32_t)d, .mode = mode, .flags = (g0 ? 1u : 0u) | (g1 ? 2u : 0u),
                 .scale = mean || mode != TERM_X ? (float)(1.0 / (double)d) : 1.0f, .c = consts_of(a, mode)};
  if (mode == TERM_PINBALL) p.n = (uint32_t)tg_numel(a->in[1]); /* an invocation per target, with its quantiles */
  return tg_vk_dispatch(a->out->device.index, TG_VK_K_rows_sum_grad, &p, sizeof p, tg_vk_groups(p.n, GROUP));
}

tg_status tg_vk_mean_of(int dev, const char *node, const float *x, int64_t n, float *out) {
  tg_status st = tg_vk_fits(node, n);
  if (st != TG_OK) return st;
  if (n > (int64_t)GROUP * TG_VK_GROUPS_MAX)
    return tg_error(TG_ERR_UNSUPPORTED, "%s: a mean of %lld terms, more than a Vulkan workgroup sums", node, (long long)n);
  if (n == 0) {
    float v = NAN;
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return tg_vk_fill_u32(dev, out, 1, bits);
  }
  sum_args p = {.x = tg_vk_addr(x), .o = tg_vk_addr(out), .rows = 1, .d = (uint32_t)n, .mode = TERM_X,
                .scale = (float)(1.0 / (double)n)};
  return tg_vk_dispatch(dev, TG_VK_K_rows_sum, &p, sizeof p, 1);
}

tg_status tg_vk_sum_fwd(const tg_kernel_args *a) { return sum_run(a, 0, 0, TERM_X); }
tg_status tg_vk_sum_bwd(const tg_kernel_args *a) { return grad_run(a, 0, 0, TERM_X); }
tg_status tg_vk_mean_fwd(const tg_kernel_args *a) { return sum_run(a, 0, 1, TERM_X); }
tg_status tg_vk_mean_bwd(const tg_kernel_args *a) { return grad_run(a, 0, 1, TERM_X); }
tg_status tg_vk_sum_last_fwd(const tg_kernel_args *a) { return sum_run(a, 1, 0, TERM_X); }
tg_status tg_vk_sum_last_bwd(const tg_kernel_args *a) { return grad_run(a, 1, 0, TERM_X); }
tg_status tg_vk_mean_last_fwd(const tg_kernel_args *a) { return sum_run(a, 1, 1, TERM_X); }
tg_status tg_vk_mean_last_bwd(const tg_kernel_args *a) { return grad_run(a, 1, 1, TERM_X); }
tg_status tg_vk_mse_fwd(const tg_kernel_args *a) { return sum_run(a, 0, 1, TERM_MSE); }
tg_status tg_vk_mse_bwd(const tg_kernel_args *a) { return grad_run(a, 0, 1, TERM_MSE); }
tg_status tg_vk_huber_fwd(const tg_kernel_args *a) { return sum_run(a, 0, 1, TERM_HUBER); }
tg_status tg_vk_huber_bwd(const tg_kernel_args *a) { return grad_run(a, 0, 1, TERM_HUBER); }
tg_status tg_vk_pinball_fwd(const tg_kernel_args *a) { return sum_run(a, 0, 1, TERM_PINBALL); }
tg_status tg_vk_pinball_bwd(const tg_kernel_args *a) { return grad_run(a, 0, 1, TERM_PINBALL); }
