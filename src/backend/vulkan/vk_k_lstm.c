/* Vulkan kernels of lstm, as the CPU's k_lstm.c: the products by the tiled GEMM (vk_gemm.h), the steps a host loop of a
 * GEMM and a cell dispatch each (shaders/lstm.comp), which orders them; the backward's dG [B, T, 4H] and carried dh,
 * dc [B, H] in the plan's workspace (the device's scratch without one, tg_vk_workspace), laid out as the CPU's
 * (tg_lstm_ws_floats). The forward needs none. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_gemm.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "ops/lstm_args.h"

enum { HAS_C0 = 1, HAS_BIAS = 2, LAST = 4, TO_DC0 = 8 };
enum { MODE_FWD, MODE_BWD };

/* Push constants of shaders/lstm.comp. */
typedef struct lstm_push {
  uint64_t y, dy, c0, bias, dG, dh, dc, dc0;
  uint32_t B, T, H, t, mode, flags;
} lstm_push;

_Static_assert(sizeof(lstm_push) <= TG_VK_PUSH_MAX, "lstm_push exceeds the push constants");

static lstm_push push_of(const tg_lstm_args *l, int mode) {
  return (lstm_push){.y = tg_vk_addr(l->out), .c0 = tg_vk_addr(l->c0), .bias = tg_vk_addr(l->bias),
                     .B = (uint32_t)l->B, .T = (uint32_t)l->T, .H = (uint32_t)l->H, .mode = (uint32_t)mode,
                     .flags = (l->c0 ? HAS_C0 : 0) | (l->bias ? HAS_BIAS : 0)};
}

/* The cell dispatch of step t, with the step's flags added to the call's. */
static tg_status cells(const tg_kernel_args *a, lstm_push p, int64_t t, uint32_t flags) {
  p.t = (uint32_t)t, p.flags |= flags;
  return tg_vk_dispatch(a->out->device.index, TG_VK_K_lstm, &p, sizeof p, tg_vk_groups((uint64_t)p.B * p.H, 256));
}

/* C [m, n] (+)= A [m, k] B^T, B [n, k] packed; A and C rows strided lda and ldc. */
static tg_status gemm_abt(const tg_kernel_args *a, int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                          const float *B, float *C, int64_t ldc, int accumulate) {
  tg_vk_gemm g = {.batch = 1, .m = m, .n = n, .k = k, .a = A, .b = B, .c = C, .a_st = {0, lda, 1},
                  .b_st = {0, 1, k}, .c_st = {0, ldc, 1}, .accumulate = accumulate};
  return tg_vk_gemm_run(a, &g);
}

tg_status tg_vk_lstm_fwd(const tg_kernel_args *a) {
  tg_lstm_args l = tg_lstm_args_of(a);
  int64_t B = l.B, T = l.T, In = l.In, H = l.H, R = T * 6 * H; /* R: floats per batch row of out */
  tg_status st = tg_vk_fits(a->node_name, B * R);
  /* gate slots of every step: x W_ih^T, rows (b, t) of out strided 6H */
  if (st == TG_OK) st = gemm_abt(a, B * T, 4 * H, In, l.x, In, l.w_ih, l.out + 2 * H, 6 * H, 0);
  lstm_push p = push_of(&l, MODE_FWD);
  for (int64_t t = 0; t < T && st == TG_OK; t++) {
    float *gates = l.out + t * 6 * H + 2 * H; /* [B, 4H], rows strided R */
    if (t > 0) /* += h_{t-1} W_hh^T */
      st = gemm_abt(a, B, 4 * H, H, l.out + (t - 1) * 6 * H, R, l.w_hh, gates, R, 1);
    else if (l.h0)
      st = gemm_abt(a, B, 4 * H, H, l.h0, H, l.w_hh, gates, R, 1);
    if (st == TG_OK) st = cells(a, p, t, 0);
  }
  return st;
}

/* dW_hh [4H, H] += dG_t^T h_{t-1}, dG_t [B, 4H] rows strided T*4H, h_{t-1} [B, H] rows strided ldh. */
static tg_status dw_hh_step(const tg_kernel_args *a, const tg_lstm_args *l, const float *dGt, const float *h,
                            int64_t ldh) {
  int64_t T = l->T, H = l->H;
  tg_vk_gemm g = {.batch = 1, .m = 4 * H, .n = H, .k = l->B, .a = dGt, .b = h, .c = l->dw_hh, .a_st = {0, 1, T * 4 * H},
                  .b_st = {0, ldh, 1}, .c_st = {0, H, 1}, .accumulate = 1};
  return tg_vk_gemm_run(a, &g);
}

/* The weight, bias and input gradients from the finished dG [B, T, 4H], in the CPU's order. */
static tg_status param_grads(const tg_kernel_args *a, const tg_lstm_args *l, const float *dG) {
  int64_t B = l->B, T = l->T, In = l->In, H = l->H, R = T * 6 * H;
  tg_status st = TG_OK;
  if (l->dx) { /* dx [B*T, I] += dG W_ih */
    tg_vk_gemm g = {.batch = 1, .m = B * T, .n = In, .k = 4 * H, .a = dG, .b = l->w_ih, .c = l->dx,
                    .a_st = {0, 4 * H, 1}, .b_st = {0, In, 1}, .c_st = {0, In, 1}, .accumulate = 1};
    if ((st = tg_vk_gemm_run(a, &g)) != TG_OK) return st;
  }
  if (l->dw_ih) { /* dW_ih [4H, I] += dG^T x */
    tg_vk_gemm g = {.batch = 1, .m = 4 * H, .n = In, .k = B * T, .a = dG, .b = l->x, .c = l->dw_ih,
                    .a_st = {0, 1, 4 * H}, .b_st = {0, In, 1}, .c_st = {0, In, 1}, .accumulate = 1};
    if ((st = tg_vk_gemm_run(a, &g)) != TG_OK) return st;
  }
  if (l->dw_hh) /* dW_hh [4H, H] += sum over t of dG_t^T h_{t-1} */
    for (int64_t t = 0; t < T && st == TG_OK; t++) {
      if (t > 0)
        st = dw_hh_step(a, l, dG + t * 4 * H, l->out + (t - 1) * 6 * H, R);
      else if (l->h0)
        st = dw_hh_step(a, l, dG, l->h0, H);
    }
  return st != TG_OK || !l->dbias ? st : tg_vk_col_sums(a, dG, l->dbias, B * T, 4 * H);
}

tg_status tg_vk_lstm_bwd(const tg_kernel_args *a) {
  tg_lstm_args l = tg_lstm_args_of(a);
  if (!l.dx && !l.dh0 && !l.dc0 && !l.dw_ih && !l.dw_hh && !l.dbias) return TG_OK;
  int64_t B = l.B, T = l.T, H = l.H;
  void *ws = NULL;
  tg_status st = tg_vk_fits(a->node_name, B * T * 6 * H);
  if (st == TG_OK) st = tg_vk_workspace(a, sizeof(float) * (size_t)tg_lstm_ws_floats(B, T, H), &ws);
  if (st != TG_OK) return st;
  float *dG = ws;                 /* [B, T, 4H] */
  float *dh = dG + B * T * 4 * H; /* [B, H]: dG_{t+1} W_hh */
  float *dc = dh + B * H;         /* [B, H]: gradient reaching c_t from step t+1 */
  lstm_push p = push_of(&l, MODE_BWD);
  p.dy = tg_vk_addr(l.dout), p.dG = tg_vk_addr(dG), p.dh = tg_vk_addr(dh), p.dc = tg_vk_addr(dc);
  p.dc0 = tg_vk_addr(l.dc0);
  for (int64_t t = T - 1; t >= 0 && st == TG_OK; t--) {
    st = cells(a, p, t, (t == T - 1 ? LAST : 0) | (t == 0 && l.dc0 ? TO_DC0 : 0));
    const float *dGt = dG + t * 4 * H; /* [B, 4H], rows strided T*4H */
    tg_vk_gemm g = {.batch = 1, .m = B, .n = H, .k = 4 * H, .a = dGt, .b = l.w_hh, .c = t > 0 ? dh : l.dh0,
                    .a_st = {0, T * 4 * H, 1}, .b_st = {0, H, 1}, .c_st = {0, H, 1}, .accumulate = t == 0};
    if (st == TG_OK && g.c) st = tg_vk_gemm_run(a, &g); /* dh = dG_t W_hh, or dh0 += it at step 0 */
  }
  return st == TG_OK ? param_grads(a, &l, dG) : st;
}
