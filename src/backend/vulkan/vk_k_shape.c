/* Vulkan kernels of the shape ops: concat and slice as strided row copies (shaders/rows_copy.comp), transpose
 * (shaders/transpose.comp), reshape (a view the planner aliases: nothing to do). Forwards move any dtype as 32-bit
 * words; backwards add f32 gradients. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_kernels.h"
#include "ops/shape_split.h"

#define GROUP 256

typedef struct rows_args {
  uint64_t src, dst;
  uint32_t rows, len, src_stride, src_off, dst_stride, dst_off, add;
} rows_args;

/* Words per element of t (1 for f32 and i32, 2 for i64). */
static int64_t words_of(const tg_tensor *t) { return (int64_t)(tg_dtype_size(t->dtype) / 4); }

/* rows x len words from src (row stride ss, offset so) to dst (row stride ds, offset do_), added as f32 when add. */
static tg_status rows_move(const tg_kernel_args *a, const void *src, void *dst, int64_t rows, int64_t len, int64_t ss,
                           int64_t so, int64_t ds, int64_t do_, int add) {
  int64_t far = rows * (ss > ds ? ss : ds) + len;
  tg_status st = tg_vk_fits(a->node_name, far);
  if (st != TG_OK) return st;
  if (rows == 0 || len == 0) return TG_OK;
  rows_args p = {tg_vk_addr(src), tg_vk_addr(dst), (uint32_t)rows, (uint32_t)len, (uint32_t)ss, (uint32_t)so, (uint32_t)ds,
                 (uint32_t)do_, (uint32_t)add};
  return tg_vk_dispatch(a->out->device.index, TG_VK_K_rows_copy, &p, sizeof p, tg_vk_groups((uint64_t)(rows * len), GROUP));
}

/* concat along d: input k is [A, Sk, C], the output [A, S, C]; the backward adds each input's rows back. */
static tg_status concat_run(const tg_kernel_args *a, int backward) {
  int d = (int)a->attr->i[0];
  int64_t A, S, C, w = backward ? 1 : words_of(a->out), off = 0;
  tg_split_at(a->out, d, &A, &S, &C);
  tg_status st = TG_OK;
  for (int k = 0; k < a->n_in && st == TG_OK; k++) {
    int64_t Sk = a->in[k]->shape[d];
    if (!backward)
      st = rows_move(a, a->in[k]->data, a->out->data, A, Sk * C * w, Sk * C * w, 0, S * C * w, off * C * w, 0);
    else if (a->in_grad[k])
      st = rows_move(a, a->out_grad, a->in_grad[k], A, Sk * C, S * C, off * C, Sk * C, 0, 1);
    off += Sk;
  }
  return st;
}

tg_status tg_vk_concat_fwd(const tg_kernel_args *a) { return concat_run(a, 0); }
tg_status tg_vk_concat_bwd(const tg_kernel_args *a) { return concat_run(a, 1); }

/* slice: x [A, S, C] -> out [A, len, C] = x[:, start:start+len, :]. */
tg_status tg_vk_slice_fwd(const tg_kernel_args *a) {
  int64_t A, S, C, start = a->attr->i[1], len = a->attr->i[2], w = words_of(a->in[0]);
  tg_split_at(a->in[0], (int)a->attr->i[0], &A, &S, &C);
  return rows_move(a, a->in[0]->data, a->out->data, A, len * C * w, S * C * w, start * C * w, len * C * w, 0, 0);
}

tg_status tg_vk_slice_bwd(const tg_kernel_args *a) {
  if (!a->in_grad[0]) return TG_OK;
  int64_t A, S, C, start = a->attr->i[1], len = a->attr->i[2];
  tg_split_at(a->in[0], (int)a->attr->i[0], &A, &S, &C);
  return rows_move(a, a->out_grad, a->in_grad[0], A, len * C, len * C, 0, S * C, start * C, 1);
}

tg_status tg_vk_reshape_fwd(const tg_kernel_args *a) {
  (void)a;
  return TG_OK;
}

tg_status tg_vk_reshape_bwd(const tg_kernel_args *a) {
  (void)a;
  return TG_OK;
}

/* transpose: x [A, P, B, Q, C] -> out [A, Q, B, P, C]. */
static tg_status transpose_run(const tg_kernel_args *a, int backward) {
  const tg_tensor *x = a->in[0];
  tg_tr_dims t = tg_tr_split(x, (int)a->attr->i[0], (int)a->attr->i[1]);
  int64_t w = backward ? 1 : words_of(x), n = tg_numel(x) * w;
  tg_status st = tg_vk_fits(a->node_name, n);
  if (st != TG_OK) return st;
  if (n == 0 || (backward && !a->in_grad[0])) return TG_OK;
  struct { uint64_t src, dst; uint32_t a, x, b, y, c, add; } p = {
      backward ? tg_vk_addr(a->out_grad) : tg_vk_addr(x->data), backward ? tg_vk_addr(a->in_grad[0]) : tg_vk_addr(a->out->data),
      (uint32_t)t.A, (uint32_t)(backward ? t.P : t.Q), (uint32_t)t.B, (uint32_t)(backward ? t.Q : t.P),
      (uint32_t)(t.C * w), (uint32_t)backward};
  return tg_vk_dispatch(a->out->device.index, TG_VK_K_transpose, &p, sizeof p, tg_vk_groups((uint64_t)n, GROUP));
}

tg_status tg_vk_transpose_fwd(const tg_kernel_args *a) { return transpose_run(a, 0); }
tg_status tg_vk_transpose_bwd(const tg_kernel_args *a) { return transpose_run(a, 1); }
