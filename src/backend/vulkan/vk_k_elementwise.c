/* Vulkan kernels of the elementwise ops: the binary ops with suffix broadcasting (shaders/binary.comp) and scale and
 * the activations (shaders/unary.comp), one dispatch each on the device the tensors live on. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_kernels.h"

#define GROUP 256 /* local_size_x of both shaders */

static tg_status count_of(const tg_kernel_args *a, const tg_tensor *t, uint32_t *out) {
  int64_t n = tg_numel(t);
  *out = (uint32_t)n;
  return tg_vk_fits(a->node_name, n);
}

/* ---- binary: push constants of shaders/binary.comp ---- */
typedef struct bin_args {
  uint64_t a, b, o, dy, ga, gb, y;
  uint32_t n, na, nb, op, mode, has_ga, has_gb;
} bin_args;

enum { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV };

static tg_status bin_run(const tg_kernel_args *a, uint32_t op, int backward) {
  bin_args p = {.a = tg_vk_addr(a->in[0]->data), .b = tg_vk_addr(a->in[1]->data), .op = op};
  tg_status st;
  if ((st = count_of(a, a->out, &p.n)) != TG_OK || (st = count_of(a, a->in[0], &p.na)) != TG_OK ||
      (st = count_of(a, a->in[1], &p.nb)) != TG_OK)
    return st;
  if (p.n == 0) return TG_OK;
  int dev = a->out->device.index;
  if (!backward) {
    p.o = tg_vk_addr(a->out->data);
    return tg_vk_dispatch(dev, TG_VK_K_binary, &p, sizeof p, tg_vk_groups(p.n, GROUP));
  }
  p.dy = tg_vk_addr(a->out_grad), p.y = op == BIN_DIV ? tg_vk_addr(a->out->data) : 0;
  p.ga = tg_vk_addr(a->in_grad[0]), p.gb = tg_vk_addr(a->in_grad[1]);
  p.has_ga = a->in_grad[0] != NULL, p.has_gb = a->in_grad[1] != NULL;
  if ((p.has_ga && p.na == p.n) || (p.has_gb && p.nb == p.n)) {
    p.mode = 1;
    if ((st = tg_vk_dispatch(dev, TG_VK_K_binary, &p, sizeof p, tg_vk_groups(p.n, GROUP))) != TG_OK) return st;
  }
  uint32_t small = p.na < p.n ? p.na : p.nb; /* the broadcast operand, when it wants a gradient */
  if ((p.has_ga && p.na < p.n) || (p.has_gb && p.nb < p.n)) {
    p.mode = 2;
    if ((st = tg_vk_dispatch(dev, TG_VK_K_binary, &p, sizeof p, tg_vk_groups(small, 1))) != TG_OK) return st; /* a group each */
  }
  return TG_OK;
}

tg_status tg_vk_add_fwd(const tg_kernel_args *a) { return bin_run(a, BIN_ADD, 0); }
tg_status tg_vk_add_bwd(const tg_kernel_args *a) { return bin_run(a, BIN_ADD, 1); }
tg_status tg_vk_sub_fwd(const tg_kernel_args *a) { return bin_run(a, BIN_SUB, 0); }
tg_status tg_vk_sub_bwd(const tg_kernel_args *a) { return bin_run(a, BIN_SUB, 1); }
tg_status tg_vk_mul_fwd(const tg_kernel_args *a) { return bin_run(a, BIN_MUL, 0); }
tg_status tg_vk_mul_bwd(const tg_kernel_args *a) { return bin_run(a, BIN_MUL, 1); }
tg_status tg_vk_div_fwd(const tg_kernel_args *a) { return bin_run(a, BIN_DIV, 0); }
tg_status tg_vk_div_bwd(const tg_kernel_args *a) { return bin_run(a, BIN_DIV, 1); }

/* ---- unary: push constants of shaders/unary.comp; op numbers as its switches ---- */
typedef struct un_args {
  uint64_t x, y, dy, o;
  uint32_t n, op, bwd;
  float s;
} un_args;

enum { UN_SCALE, UN_RELU, UN_TANH, UN_SIGMOID, UN_ELU, UN_SILU, UN_SOFTPLUS, UN_EXP, UN_LOG, UN_SQRT, UN_GELU };

static tg_status un_run(const tg_kernel_args *a, uint32_t op, int backward) {
  un_args p = {.x = tg_vk_addr(a->in[0]->data), .op = op, .bwd = (uint32_t)backward, .s = a->attr ? a->attr->f[0] : 0.0f};
  tg_status st = count_of(a, a->out, &p.n);
  if (st != TG_OK || p.n == 0) return st;
  if (!backward) {
    p.o = tg_vk_addr(a->out->data);
  } else {
    if (!a->in_grad[0]) return TG_OK;
    p.y = tg_vk_addr(a->out->data), p.dy = tg_vk_addr(a->out_grad), p.o = tg_vk_addr(a->in_grad[0]);
  }
  return tg_vk_dispatch(a->out->device.index, TG_VK_K_unary, &p, sizeof p, tg_vk_groups(p.n, GROUP));
}

#define UNARY(stem, op)                                                                                                \
  tg_status tg_vk_##stem##_fwd(const tg_kernel_args *a) { return un_run(a, op, 0); }                                   \
  tg_status tg_vk_##stem##_bwd(const tg_kernel_args *a) { return un_run(a, op, 1); }
UNARY(scale, UN_SCALE)
UNARY(relu, UN_RELU)
UNARY(tanh, UN_TANH)
UNARY(sigmoid, UN_SIGMOID)
UNARY(elu, UN_ELU)
UNARY(silu, UN_SILU)
UNARY(softplus, UN_SOFTPLUS)
UNARY(exp, UN_EXP)
UNARY(log, UN_LOG)
UNARY(sqrt, UN_SQRT)
UNARY(gelu, UN_GELU)
#undef UNARY
