/* Graph behaviour: device strictness, build errors, arena reuse, no allocation in a training step. */
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "support/check.h"
#include "support/heap_count.h"
#include "tickgrad/tickgrad.h"


static const int64_t X_SHAPE[2] = {16, 8};
static const int64_t Y_SHAPE[2] = {16, 1};

/* x [16, 8] -> linear 8x16 -> tanh -> linear 16x1 ; mse against y [16, 1] */
static tg_tensor *build_mlp(tg_graph *g, tg_tensor **pred) {
  int64_t w1[2] = {16, 8}, b1[1] = {16}, w2[2] = {1, 16}, b2[1] = {1};
  tg_init fan = {TG_INIT_FAN_IN, 0, 0};
  tg_tensor *x = tg_input(g, "x", TG_F32, 2, X_SHAPE);
  tg_tensor *y = tg_input(g, "y", TG_F32, 2, Y_SHAPE);
  tg_tensor *h = tg_tanh(g, tg_linear(g, x, tg_param(g, "fc1.weight", 2, w1, fan), tg_param(g, "fc1.bias", 1, b1, fan)));
  tg_tensor *p = tg_linear(g, h, tg_param(g, "fc2.weight", 2, w2, fan), tg_param(g, "fc2.bias", 1, b2, fan));
  if (pred) *pred = p;
  return tg_mse_loss(g, p, y);
}

static void test_device_strictness(void) {
  tg_store *s = tg_store_new(tg_cpu(1), 1);
  tg_graph *g = tg_graph_new(s, "strict");
  tg_tensor *loss = build_mlp(g, NULL);
  CHECK(loss != NULL);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  CHECK_STATUS(tg_graph_plan(g, &o), TG_ERR_DEVICE);
  const char *m = tg_last_error();
  CHECK_MSG(strstr(m, "linear") && strstr(m, "fc1.weight") && strstr(m, "cpu:1") && strstr(m, "cpu:0"),
            "message: %s", m);
  /* planned on the store's device, then bound to data on another device */
  o = tg_plan_defaults(tg_cpu(1));
  CHECK_OK(tg_graph_plan(g, &o));
  float xs[16 * 8] = {0};
  tg_tensor x;
  tg_tensor_view(&x, "batch_x", tg_cpu(0), TG_F32, 2, X_SHAPE, xs);
  CHECK_STATUS(tg_graph_bind(g, "x", &x), TG_ERR_DEVICE);
  m = tg_last_error();
  CHECK_MSG(strstr(m, "linear") && strstr(m, "batch_x") && strstr(m, "cpu:0") && strstr(m, "cpu:1"),
            "message: %s", m);
  /* a wrong shape is a shape error naming both shapes */
  tg_tensor_view(&x, "batch_x", tg_cpu(1), TG_F32, 2, Y_SHAPE, xs);
  CHECK_STATUS(tg_graph_bind(g, "x", &x), TG_ERR_SHAPE);
  CHECK_MSG(strstr(tg_last_error(), "[16, 8]") && strstr(tg_last_error(), "[16, 1]"), "%s", tg_last_error());
  /* an unbound input is reported by name */
  CHECK_STATUS(tg_graph_run(g), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "'x'"), "%s", tg_last_error());
  /* a backend that is not compiled in is refused at plan time */
  if (!tg_backend_compiled(TG_CUDA)) {
    o = tg_plan_defaults(tg_cuda(0));
    CHECK_STATUS(tg_graph_plan(g, &o), TG_ERR_DEVICE);
    CHECK_MSG(strstr(tg_last_error(), "cuda:0"), "%s", tg_last_error());
  }
  tg_graph_free(g);
  tg_store_free(s);
}

static void test_sticky_build_error(void) {
  tg_graph *g = tg_graph_new(NULL, "bad");
  int64_t a[2] = {3, 4}, b[2] = {5, 6};
  tg_tensor *x = tg_input(g, "x", TG_F32, 2, a);
  tg_tensor *y = tg_input(g, "y", TG_F32, 2, b);
  CHECK(tg_matmul(g, x, y, 0, 0) == NULL);
  CHECK(tg_graph_status(g) == TG_ERR_SHAPE);
  CHECK(tg_relu(g, x) == NULL); /* sticky: later builders refuse */
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  CHECK_STATUS(tg_graph_plan(g, &o), TG_ERR_SHAPE);
  CHECK_MSG(strstr(tg_last_error(), "matmul"), "%s", tg_last_error());
  tg_graph_free(g);
}

/* A message that wraps the last one ("outer: %s" with tg_last_error()) keeps the inner text whole;
 * a parameter declared twice with different shapes names the graph once and the parameter. */
static void test_wrapped_messages(void) {
  tg_error(TG_ERR_INVALID, "inner message %d", 7);
  tg_error(TG_ERR_INVALID, "outer: %s", tg_last_error());
  CHECK_MSG(strcmp(tg_last_error(), "outer: inner message 7") == 0, "%s", tg_last_error());
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(s, "twice");
  int64_t a[1] = {3}, b[1] = {4};
  CHECK(tg_param(g, "w", 1, a, (tg_init){TG_INIT_ZEROS, 0, 0}) != NULL);
  CHECK(tg_param(g, "w", 1, b, (tg_init){TG_INIT_ZEROS, 0, 0}) == NULL);
  const char *m = tg_last_error();
  CHECK_MSG(strncmp(m, "graph 'twice': ", 15) == 0 && strstr(m + 15, "graph 'twice'") == NULL && strstr(m, "'w'"),
            "%s", m);
  tg_graph_free(g);
  tg_store_free(s);
}

static void test_arena_reuse(void) {
  /* a chain of 20 unary ops: in inference only two activations are ever live at once */
  tg_graph *g = tg_graph_new(NULL, "chain");
  int64_t shape[2] = {64, 64};
  tg_tensor *x = tg_input(g, "x", TG_F32, 2, shape);
  tg_tensor *h = x;
  for (int i = 0; i < 20; i++) h = (i % 2) ? tg_tanh(g, h) : tg_sigmoid(g, h);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  o.training = 0;
  CHECK_OK(tg_graph_plan(g, &o));
  tg_plan_stats st = tg_graph_stats(g);
  CHECK_MSG(st.arena_bytes == 2 * 64 * 64 * sizeof(float), "arena %zu", st.arena_bytes);
  CHECK(st.unshared_bytes == 20 * 64 * 64 * sizeof(float));
  float xs[64 * 64];
  for (int i = 0; i < 64 * 64; i++) xs[i] = (float)i / 4096.0f - 0.5f;
  tg_tensor xt;
  tg_tensor_view(&xt, "xs", tg_cpu(0), TG_F32, 2, shape, xs);
  CHECK_OK(tg_graph_bind(g, "x", &xt));
  CHECK_OK(tg_graph_run(g));
  /* the reused arena still computes the composition */
  double v = xs[100];
  for (int i = 0; i < 20; i++) v = (i % 2) ? tanh(v) : 1.0 / (1.0 + exp(-v));
  CHECK(fabs(((float *)h->data)[100] - v) < 1e-6);
  tg_graph_free(g);
}

static void test_no_allocation_in_step(void) {
  tg_store *s = tg_store_new(tg_cpu(0), 7);
  tg_graph *g = tg_graph_new(s, "mlp");
  tg_tensor *loss = build_mlp(g, NULL);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  CHECK_OK(tg_graph_plan(g, &o));
  tg_optim_config oc = tg_optim_defaults(TG_ADAMW);
  oc.clip_norm = 1.0f;
  tg_optim *opt = NULL;
  CHECK_OK(tg_optim_new(s, &oc, &opt));
  float xs[16 * 8], ys[16];
  for (int i = 0; i < 16 * 8; i++) xs[i] = (float)(i % 7) / 7.0f;
  for (int i = 0; i < 16; i++) ys[i] = (float)(i % 3);
  tg_tensor xt, yt;
  tg_tensor_view(&xt, "xs", tg_cpu(0), TG_F32, 2, X_SHAPE, xs);
  tg_tensor_view(&yt, "ys", tg_cpu(0), TG_F32, 2, Y_SHAPE, ys);
  CHECK_OK(tg_graph_bind(g, "x", &xt));
  CHECK_OK(tg_graph_bind(g, "y", &yt));
  /* warm-up step: thread pools and BLAS buffers start here */
  CHECK_OK(tg_graph_run(g));
  CHECK_OK(tg_graph_backward(g, loss));
  CHECK_OK(tg_optim_step(opt));
  uint64_t lib_before = tg_alloc_count();
#if TG_TEST_HEAP_COUNTED
  long heap_before = tg_test_heap_calls();
#endif
  for (int step = 0; step < 10; step++) {
    CHECK_OK(tg_graph_run(g));
    CHECK_OK(tg_graph_backward(g, loss));
    CHECK_OK(tg_optim_step(opt));
  }
  CHECK_MSG(tg_alloc_count() == lib_before, "library allocated %llu times in 10 steps",
            (unsigned long long)(tg_alloc_count() - lib_before));
#if TG_TEST_HEAP_COUNTED
  long heap = tg_test_heap_calls() - heap_before;
  CHECK_MSG(heap == 0, "the process allocated %ld times in 10 training steps", heap);
#else
  printf("heap interposition off under AddressSanitizer; library counter checked only\n");
#endif
  tg_optim_free(opt);
  tg_graph_free(g);
  tg_store_free(s);
}

int main(void) {
  test_device_strictness();
  test_sticky_build_error();
  test_wrapped_messages();
  test_arena_reuse();
  test_no_allocation_in_step();
  return tg_test_finish();
}
