/* Vulkan kernel of window_rows (shaders/window.comp): an invocation per output row index; a t that ends no window is a
 * fault, raised here in the CPU's words. */
#include <stdint.h>
#include <string.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_fault.h"
#include "backend/vulkan/vk_kernels.h"
#include "ops/index_errors.h"

typedef struct window_args {
  uint64_t t, out, fault;
  uint32_t n, w, rows, wide, op;
} window_args;

tg_status tg_vk_window_rows_fwd(const tg_kernel_args *a) {
  const tg_tensor *t = a->in[0];
  int64_t W = a->attr->i[0], rows = a->attr->i[1], N = tg_numel(t);
  int dev = a->out->device.index;
  tg_status st = tg_vk_fits(a->node_name, 2 * N * W);
  void *fault = NULL;
  if (st == TG_OK) st = tg_vk_fault_slot(dev, &fault);
  if (st != TG_OK || N == 0) return st;
  window_args p = {.t = tg_vk_addr(t->data), .out = tg_vk_addr(a->out->data), .fault = tg_vk_addr(fault),
                   .n = (uint32_t)N, .w = (uint32_t)W, .rows = (uint32_t)rows, .wide = t->dtype == TG_I64,
                   .op = TG_OP_WINDOW_ROWS};
  if ((st = tg_vk_dispatch(dev, TG_VK_K_window, &p, sizeof p, tg_vk_groups((uint64_t)N * W, 256))) != TG_OK) return st;
  tg_vk_fault f;
  int found;
  if ((st = tg_vk_fault_take(dev, &f, &found)) != TG_OK || !found) return st;
  double v = (double)f.value;
  if (!p.wide) { /* the f32's bits */
    float x;
    uint32_t bits = (uint32_t)f.value;
    memcpy(&x, &bits, sizeof x);
    v = x;
  }
  return tg_window_bad_row(a, f.pos, v);
}
