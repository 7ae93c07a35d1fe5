/* The graph's opt-in profile: calls and FLOPs per op kind for a known graph, no allocation while on, same results. */
#include <string.h>
#include "base/alloc.h"
#include "support/check.h"
#include "support/heap_count.h"
#include "tickgrad/tickgrad.h"

#define B 16
#define IN 8
#define HID 16
#define SEQ 3
#define LH 2 /* the lstm's hidden size */

static float xs[B * IN], ys[B], seq[2 * SEQ * IN];

/* x [16, 8] -> linear 8x16 -> tanh -> linear 16x1 -> mse against y; beside it a batched matmul of x viewed as
 * [2, 8, 8] by a parameter [8, 8]^T and an lstm over seq [2, 3, 8] (hidden 2), both summed into the loss. */
static tg_tensor *build(tg_graph *g) {
  int64_t xsh[2] = {B, IN}, ysh[2] = {B, 1}, ssh[3] = {2, SEQ, IN}, x3[3] = {2, 8, IN};
  int64_t w1[2] = {HID, IN}, b1[1] = {HID}, w2[2] = {1, HID}, b2[1] = {1}, wm[2] = {8, IN};
  int64_t wih[2] = {4 * LH, IN}, whh[2] = {4 * LH, LH};
  tg_init fan = {TG_INIT_FAN_IN, 0, 0};
  tg_tensor *x = tg_input(g, "x", TG_F32, 2, xsh), *y = tg_input(g, "y", TG_F32, 2, ysh);
  tg_tensor *s = tg_input(g, "seq", TG_F32, 3, ssh);
  tg_tensor *h = tg_tanh(g, tg_linear(g, x, tg_param(g, "w1", 2, w1, fan), tg_param(g, "b1", 1, b1, fan)));
  tg_tensor *p = tg_linear(g, h, tg_param(g, "w2", 2, w2, fan), tg_param(g, "b2", 1, b2, fan));
  tg_tensor *mm = tg_matmul(g, tg_reshape(g, x, 3, x3), tg_param(g, "wm", 2, wm, fan), 0, 1);
  tg_tensor *l = tg_lstm(g, s, NULL, NULL, tg_param(g, "wih", 2, wih, fan), tg_param(g, "whh", 2, whh, fan), NULL);
  return tg_add(g, tg_add(g, tg_mse_loss(g, p, y), tg_mean(g, mm)), tg_mean(g, l));
}

static const tg_op_profile *find(const tg_op_profile *ps, int n, const char *op) {
  for (int i = 0; i < n; i++)
    if (strcmp(ps[i].op, op) == 0) return &ps[i];
  return NULL;
}

static tg_status step(tg_graph *g, tg_tensor *loss) {
  tg_status st = tg_graph_run(g);
  return st != TG_OK ? st : tg_graph_backward(g, loss);
}

static void test_counts(void) {
  tg_store *s = tg_store_new(tg_cpu(0), 3);
  tg_graph *g = tg_graph_new(s, "profiled");
  tg_tensor *loss = build(g);
  CHECK_STATUS(tg_graph_profile_enable(g, 1), TG_ERR_INVALID); /* before plan */
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  CHECK_OK(tg_graph_plan(g, &o));
  int64_t xsh[2] = {B, IN}, ysh[2] = {B, 1}, ssh[3] = {2, SEQ, IN};
  tg_tensor xt, yt, st;
  tg_tensor_view(&xt, "xs", tg_cpu(0), TG_F32, 2, xsh, xs);
  tg_tensor_view(&yt, "ys", tg_cpu(0), TG_F32, 2, ysh, ys);
  tg_tensor_view(&st, "seq", tg_cpu(0), TG_F32, 3, ssh, seq);
  CHECK_OK(tg_graph_bind(g, "x", &xt));
  CHECK_OK(tg_graph_bind(g, "y", &yt));
  CHECK_OK(tg_graph_bind(g, "seq", &st));
  CHECK(tg_graph_profile_get(g, NULL, 0) == 0); /* off */
  CHECK_OK(step(g, loss));
  float unprofiled = *(const float *)loss->data, w_grad0 = tg_store_grads(s)[0];
  CHECK_OK(tg_graph_profile_enable(g, 1));
  CHECK(tg_graph_profile_get(g, NULL, 0) == 0); /* nothing ran yet */
  CHECK_OK(step(g, loss));                       /* a warm-up: nothing is allocated after it */
  tg_graph_profile_reset(g);
  uint64_t lib_before = tg_alloc_count();
#if TG_TEST_HEAP_COUNTED
  long heap_before = tg_test_heap_calls();
#endif
  for (int r = 0; r < 3; r++) CHECK_OK(step(g, loss));
  CHECK_MSG(tg_alloc_count() == lib_before, "the library allocated %llu times in 3 profiled steps",
            (unsigned long long)(tg_alloc_count() - lib_before));
#if TG_TEST_HEAP_COUNTED
  CHECK_MSG(tg_test_heap_calls() == heap_before, "the process allocated %ld times in 3 profiled steps",
            tg_test_heap_calls() - heap_before);
#endif
  CHECK(*(const float *)loss->data == unprofiled); /* profiling changes no result */
  CHECK(tg_store_grads(s)[0] == w_grad0);
  tg_op_profile ps[32];
  int n = tg_graph_profile_get(g, ps, 32);
  CHECK(n > 0 && n <= 32);
  /* an entry per op kind that ran */
  CHECK(find(ps, n, "tanh") && find(ps, n, "mse_loss") && find(ps, n, "add"));
  CHECK(!find(ps, n, "param") && !find(ps, n, "input")); /* leaves have no kernels */
  const tg_op_profile *lin = find(ps, n, "linear"), *mm = find(ps, n, "matmul"), *ls = find(ps, n, "lstm");
  CHECK(lin && mm && ls && find(ps, n, "tanh"));
  if (lin && mm && ls) {
    CHECK(lin->gemm == 1 && mm->gemm == 1 && ls->gemm == 0 && find(ps, n, "tanh")->gemm == 0);
    CHECK(lin->fwd_calls == 6 && lin->bwd_calls == 6 && mm->fwd_calls == 3 && mm->bwd_calls == 3);
    /* per step: linear 2*16*16*8 + 2*16*1*16 forward; backward w1's gradient only (x is data), w2's and h's */
    CHECK(lin->fwd_flops == 3.0 * (4096 + 512));
    CHECK(lin->bwd_flops == 3.0 * (4096 + 2 * 512));
    /* matmul [2, 8, 8] x [8, 8]^T: 2*2*8*8*8 forward; backward the parameter's gradient only */
    CHECK(mm->fwd_flops == 3.0 * 2048 && mm->bwd_flops == 3.0 * 2048);
    /* lstm B 2, T 3, I 8, H 2, no h0: x W_ih^T 2*2*3*8*8 = 768 and 2 steps of 2*2*8*2 = 64 forward; backward dW_ih
     * 768, dW_hh 2 x 64 and the carried dh 2 x 64 (x is data: no dx) */
    CHECK(ls->fwd_flops == 3.0 * (768 + 128) && ls->bwd_flops == 3.0 * (768 + 128 + 128));
    CHECK(lin->fwd_s >= 0 && lin->bwd_s >= 0 && ls->fwd_s > 0);
  }
  tg_graph_profile_reset(g);
  CHECK(tg_graph_profile_get(g, NULL, 0) == 0);
  CHECK_OK(tg_graph_run(g)); /* forward only */
  n = tg_graph_profile_get(g, ps, 32);
  lin = find(ps, n, "linear");
  CHECK(lin && lin->fwd_calls == 2 && lin->bwd_calls == 0 && lin->bwd_flops == 0);
  CHECK(tg_graph_profile_get(g, ps, 1) == n); /* the count, whatever max */
  CHECK_OK(tg_graph_profile_enable(g, 0));
  CHECK(tg_graph_profile_get(g, ps, 32) == 0);
  tg_graph_free(g);
  tg_store_free(s);
}

/* cpu:1 is host memory too: allowed, kept by a new plan, and a graph is freed with profiling on. */
static void test_other_host_device(void) {
  tg_store *s = tg_store_new(tg_cpu(1), 3);
  tg_graph *g = tg_graph_new(s, "cpu1");
  build(g);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(1));
  CHECK_OK(tg_graph_plan(g, &o));
  CHECK_OK(tg_graph_profile_enable(g, 1));
  CHECK_OK(tg_graph_profile_enable(g, 1)); /* again: zeroed, nothing leaked */
  CHECK_OK(tg_graph_plan(g, &o));          /* a new plan on the host keeps it on */
  CHECK(tg_graph_profile_get(g, NULL, 0) == 0);
  tg_graph_free(g);
  tg_store_free(s);
}

int main(void) {
  for (int i = 0; i < B * IN; i++) xs[i] = tg_rng_normal(1, 0, (uint64_t)i);
  for (int i = 0; i < B; i++) ys[i] = tg_rng_normal(1, 1, (uint64_t)i);
  for (int i = 0; i < 2 * SEQ * IN; i++) seq[i] = tg_rng_normal(1, 2, (uint64_t)i);
  test_counts();
  test_other_host_device();
  return tg_test_finish();
}
