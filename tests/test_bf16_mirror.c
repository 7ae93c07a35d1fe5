/* The store's bf16 mirror: the optimizer update keeps it bitwise tg_bf16_pack of the values (eager and captured steps,
 * SGD and AdamW, a skipped step), writes through tg_store_values make it again before a bf16 run (a copy from another
 * store, a checkpoint load), and bf16 GEMMs reading it equal bf16 GEMMs rounding the same weights per call, bitwise;
 * on the CPU and, where there is one, a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/bf16.h"
#include "graph/backend.h"
#include "graph/store_mirror.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"

#define B 8    /* rows */
#define G 2    /* stacked_linear groups */
#define IN 5
#define HID 6  /* per group */
#define HID2 7
#define OUT 3
#define STEPS 4

/* The net's tensors: pred [B, OUT] and the scalar MSE loss against y. */
typedef struct net {
  tg_graph *g;
  tg_tensor *pred, *loss;
} net;

static const char *const k_weights[5] = {"sw", "sb", "w1", "b1", "w2"};

/* A weight: a parameter, or (as_input: the reference that rounds per call) an input of the same name and shape. */
static tg_tensor *weight(tg_graph *g, int as_input, const char *name, int ndim, const int64_t *shape) {
  tg_init fan = {TG_INIT_FAN_IN, 0, 0};
  return as_input ? tg_input(g, name, TG_F32, ndim, shape) : tg_param(g, name, ndim, shape, fan);
}

/* x [B, G, IN] (a parameter) -> stacked_linear -> tanh -> linear -> tanh -> matmul with a view of w2 [HID2 * OUT]:
 * every GEMM op reading a weight, one through a reshape. */
static net build(tg_store *s, const char *name, int as_input) {
  net n = {tg_graph_new(s, name), NULL, NULL};
  const int64_t xs[3] = {B, G, IN}, sws[3] = {G, HID, IN}, sbs[2] = {G, HID}, w1s[2] = {HID2, G * HID},
                b1s[1] = {HID2}, w2s[1] = {HID2 * OUT}, w2v[2] = {HID2, OUT}, hs[2] = {B, G * HID}, ys[2] = {B, OUT};
  tg_init u = {TG_INIT_UNIFORM, -1.0f, 1.0f};
  tg_tensor *x = tg_param(n.g, "x", 3, xs, u);
  tg_tensor *h = tg_stacked_linear(n.g, x, weight(n.g, as_input, "sw", 3, sws), weight(n.g, as_input, "sb", 2, sbs));
  h = tg_tanh(n.g, tg_reshape(n.g, h, 2, hs));
  h = tg_tanh(n.g, tg_linear(n.g, h, weight(n.g, as_input, "w1", 2, w1s), weight(n.g, as_input, "b1", 1, b1s)));
  n.pred = tg_matmul(n.g, h, tg_reshape(n.g, weight(n.g, as_input, "w2", 1, w2s), 2, w2v), 0, 0);
  n.loss = tg_mse_loss(n.g, n.pred, tg_input(n.g, "y", TG_F32, 2, ys));
  CHECK_MSG(n.loss != NULL, "build %s: %s", name, tg_last_error());
  return n;
}

static tg_status plan(net *n, tg_device dev, tg_dtype precision, int training) {
  tg_plan_opts o = tg_plan_defaults(dev);
  o.precision = precision;
  o.training = training;
  return tg_graph_plan(n->g, &o);
}

/* Binds input name of g to data [numel floats] on dev. */
static tg_status bind(tg_graph *g, tg_device dev, const char *name, int ndim, const int64_t *shape, const void *data) {
  tg_tensor t;
  tg_tensor_view(&t, name, dev, TG_F32, ndim, shape, (void *)data);
  return tg_graph_bind(g, name, &t);
}

/* Binds the reference net's weights to the store's values (only read), so its kernels round them per call. */
static void bind_weights(net *r, tg_device dev, const tg_store *s) {
  for (int k = 0; k < 5; k++) {
    tg_param_info p = tg_store_param(s, tg_store_find(s, k_weights[k]));
    CHECK_OK(bind(r->g, dev, k_weights[k], p.ndim, p.shape, tg_store_values_read(s) + p.offset));
  }
}

/* A host copy of n floats (or, bf16, n halves) at src on dev; freed by the caller. */
static void *fetch(tg_device dev, const void *src, size_t bytes) {
  void *h = malloc(bytes ? bytes : 1);
  CHECK_OK(tg_device_download(dev, h, src, bytes));
  return h;
}

/* 1 when every parameter's mirror is bitwise tg_bf16_pack of its values; names the first that is not. */
static int mirror_fresh(tg_device dev, const tg_store *s, const char *when) {
  size_t n = tg_store_numel(s);
  const uint16_t *mirror = tg_store_mirror(s);
  CHECK_MSG(mirror != NULL, "%s: the store has no bf16 mirror", when);
  if (!mirror) return 0;
  float *v = fetch(dev, tg_store_values_read(s), n * sizeof(float));
  uint16_t *m = fetch(dev, mirror, n * sizeof(uint16_t)), *want = malloc(n * sizeof(uint16_t));
  tg_bf16_pack(want, v, n);
  int ok = 1;
  for (int i = 0; i < tg_store_count(s) && ok; i++) {
    tg_param_info p = tg_store_param(s, i);
    for (size_t e = 0; e < p.numel && ok; e++)
      if (m[p.offset + e] != want[p.offset + e]) {
        CHECK_MSG(0, "%s: mirror of '%s'[%zu] is 0x%04x, its value %.9g rounds to 0x%04x", when, p.name, e,
                  m[p.offset + e], (double)v[p.offset + e], want[p.offset + e]);
        ok = 0;
      }
  }
  free(v);
  free(m);
  free(want);
  return ok;
}

/* 1 when n floats at a and b on dev are bitwise equal. */
static int same_floats(tg_device dev, const void *a, const void *b, size_t n, const char *what) {
  float *ha = fetch(dev, a, n * sizeof(float)), *hb = fetch(dev, b, n * sizeof(float));
  int same = memcmp(ha, hb, n * sizeof(float)) == 0;
  CHECK_MSG(same, "%s differ (first %.9g vs %.9g)", what, (double)ha[0], (double)hb[0]);
  free(ha);
  free(hb);
  return same;
}

/* The parameter name's floats in s (device memory): values, or gradients. */
static const float *param_at(tg_store *s, const char *name, int grads) {
  size_t off = tg_store_param(s, tg_store_find(s, name)).offset;
  return (grads ? tg_store_grads(s) : tg_store_values_read(s)) + off;
}

/* a (reading the mirror) against r (the same weights, from a's values, rounded per call): the predictions (a's into
 * pred [B, OUT] on the host) and the gradient of x, whose backward reads every weight. */
static void check_same_as_rounding(tg_device dev, net *a, tg_store *sa, net *r, tg_store *sr, const char *when,
                                   float *pred) {
  const tg_backend *be = tg_backend_for(dev.kind);
  char what[160];
  CHECK_OK(be->copy(dev, tg_store_values(sr), param_at(sa, "x", 0), (size_t)(B * G * IN) * sizeof(float)));
  CHECK_OK(tg_graph_run(a->g));
  CHECK_OK(tg_graph_run(r->g));
  snprintf(what, sizeof what, "%s: predictions reading the mirror and rounding per call", when);
  same_floats(dev, a->pred->data, r->pred->data, (size_t)(B * OUT), what);
  CHECK_OK(tg_device_download(dev, pred, a->pred->data, (size_t)(B * OUT) * sizeof(float)));
  CHECK_OK(tg_graph_backward(a->g, a->loss)); /* after the comparison: backward may reuse the predictions' memory */
  CHECK_OK(tg_graph_backward(r->g, r->loss));
  snprintf(what, sizeof what, "%s: gradients of x reading the mirror and rounding per call", when);
  same_floats(dev, param_at(sa, "x", 1), param_at(sr, "x", 1), (size_t)(B * G * IN), what);
}

/* The other net's predictions, run now, equal pred [B, OUT] (host) bitwise. */
static void check_same_pred(tg_device dev, net *other, const float *pred, const char *what) {
  CHECK_OK(tg_graph_run(other->g));
  float got[B * OUT];
  CHECK_OK(tg_device_download(dev, got, other->pred->data, sizeof got));
  CHECK_MSG(memcmp(got, pred, sizeof got) == 0, "%s differ (first %.9g vs %.9g)", what, (double)got[0], (double)pred[0]);
}

/* Training steps of net a under optimizer config c keep the mirror fresh; a skipped step changes neither; a and the
 * per-call reference agree; then new values written through tg_store_values (a copy from another store, a checkpoint
 * load) are seen by the next bf16 run. */
static void check_device(tg_device dev, const char *label, const tg_optim_config *c) {
  const tg_backend *be = tg_backend_for(dev.kind);
  char when[160];
  tg_store *sa = tg_store_new(dev, 11), *sr = tg_store_new(dev, 12), *sb = tg_store_new(dev, 13);
  net a = build(sa, "mirror", 0), r = build(sr, "rounding", 1), nb = build(sb, "other", 0);
  CHECK_OK(plan(&a, dev, TG_BF16, 1));
  CHECK_OK(plan(&r, dev, TG_BF16, 1));
  CHECK_OK(plan(&nb, dev, TG_BF16, 0));
  CHECK_MSG(tg_store_mirror(sa) && tg_store_mirror(sb) && tg_store_mirror(sr), "%s: a bf16 plan made no mirror", label);
  float yh[B * OUT];
  for (int i = 0; i < B * OUT; i++) yh[i] = 0.5f * sinf(0.7f * (float)i);
  const int64_t ys[2] = {B, OUT};
  void *y = NULL;
  CHECK_OK(tg_device_upload(dev, yh, sizeof yh, &y));
  CHECK_OK(bind(a.g, dev, "y", 2, ys, y));
  CHECK_OK(bind(r.g, dev, "y", 2, ys, y));
  CHECK_OK(bind(nb.g, dev, "y", 2, ys, y));
  bind_weights(&r, dev, sa);

  tg_optim *o = NULL;
  tg_step *step = NULL;
  CHECK_OK(tg_optim_new(sa, c, &o));
  CHECK_OK(tg_step_new(a.g, a.loss, o, &step));
  for (int t = 0; t < STEPS && step; t++) {
    float loss = NAN;
    CHECK_OK(tg_step_run(step, &loss));
    snprintf(when, sizeof when, "%s: after step %d (loss %.6f)", label, t, (double)loss);
    mirror_fresh(dev, sa, when);
  }
  if (tg_device_captures(dev)) CHECK_MSG(step && tg_step_captured(step), "%s: the step was not captured", label);
  float pred_before[B * OUT], pred_after[B * OUT];
  snprintf(when, sizeof when, "%s: after %d steps", label, STEPS);
  check_same_as_rounding(dev, &a, sa, &r, sr, when, pred_before);

  /* a non-finite gradient: the update is skipped, values and mirror stay as they were */
  size_t n = tg_store_numel(sa);
  float *before = fetch(dev, tg_store_values_read(sa), n * sizeof(float)), nan = NAN;
  CHECK_OK(be->from_host(dev, tg_store_grads(sa), &nan, sizeof nan));
  CHECK_STATUS(tg_optim_step(o), TG_ERR_NUMERIC);
  float *after = fetch(dev, tg_store_values_read(sa), n * sizeof(float));
  CHECK_MSG(memcmp(before, after, n * sizeof(float)) == 0, "%s: a skipped update changed the values", label);
  snprintf(when, sizeof when, "%s: after a skipped update", label);
  mirror_fresh(dev, sa, when);

  /* another store's values copied in (as the DQN target sync does): the next bf16 run rounds them again */
  CHECK_OK(be->copy(dev, tg_store_values(sa), tg_store_values_read(sb), n * sizeof(float)));
  snprintf(when, sizeof when, "%s: after a copy from another store", label);
  check_same_as_rounding(dev, &a, sa, &r, sr, when, pred_after);
  mirror_fresh(dev, sa, when);
  check_same_pred(dev, &nb, pred_after, "predictions after the copy and of the source store's own graph");
  CHECK_MSG(memcmp(pred_before, pred_after, sizeof pred_after) != 0, "%s: the copied values changed no prediction",
            label);

  /* a checkpoint load (the trained values, saved before the copy) */
  char path[] = "/tmp/tickgrad_bf16_mirrorXXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  CHECK_OK(be->from_host(dev, tg_store_values(sb), before, n * sizeof(float)));
  CHECK_OK(tg_store_save(sb, path));
  CHECK_OK(tg_store_load(sa, path));
  unlink(path);
  snprintf(when, sizeof when, "%s: after a checkpoint load", label);
  float pred_loaded[B * OUT];
  check_same_as_rounding(dev, &a, sa, &r, sr, when, pred_loaded);
  mirror_fresh(dev, sa, when);
  check_same_pred(dev, &nb, pred_loaded, "predictions after the load and of the saved store's own graph");
  CHECK_MSG(memcmp(pred_before, pred_loaded, sizeof pred_loaded) == 0, "%s: the loaded trained values do not give "
            "the trained predictions", label);
  printf("%s: %d steps, the mirror bitwise tg_bf16_pack of the values after each, a skipped step, a copy and a load\n",
         label, STEPS);
  free(before);
  free(after);
  tg_step_free(step);
  tg_optim_free(o);
  tg_device_free(dev, y);
  tg_graph_free(a.g);
  tg_graph_free(r.g);
  tg_graph_free(nb.g);
  tg_store_free(sa);
  tg_store_free(sr);
  tg_store_free(sb);
}

/* f32 plans make no mirror; a bf16 plan made after an f32 step was captured gets one the next steps keep fresh (the
 * step is captured again so that its update writes it). */
static void check_mirror_after_capture(tg_device dev, const char *label) {
  tg_store *s = tg_store_new(dev, 21);
  net tr = build(s, "train_f32", 0), ev = build(s, "eval_bf16", 0);
  CHECK_OK(plan(&tr, dev, TG_F32, 1));
  CHECK_MSG(tg_store_mirror(s) == NULL, "%s: an f32 plan made a mirror", label);
  float yh[B * OUT] = {0};
  const int64_t ys[2] = {B, OUT};
  void *y = NULL;
  CHECK_OK(tg_device_upload(dev, yh, sizeof yh, &y));
  CHECK_OK(bind(tr.g, dev, "y", 2, ys, y));
  tg_optim_config c = tg_optim_defaults(TG_ADAM);
  tg_optim *o = NULL;
  tg_step *step = NULL;
  CHECK_OK(tg_optim_new(s, &c, &o));
  CHECK_OK(tg_step_new(tr.g, tr.loss, o, &step));
  for (int t = 0; t < 2 && step; t++) CHECK_OK(tg_step_run(step, NULL));
  CHECK_OK(plan(&ev, dev, TG_BF16, 0));
  CHECK_OK(bind(ev.g, dev, "y", 2, ys, y));
  CHECK_OK(tg_graph_run(ev.g));
  for (int t = 0; t < 2 && step; t++) CHECK_OK(tg_step_run(step, NULL));
  if (tg_device_captures(dev)) CHECK_MSG(step && tg_step_captured(step), "%s: the f32 step was not captured", label);
  char when[96];
  snprintf(when, sizeof when, "%s: f32 steps after a bf16 plan on their store", label);
  mirror_fresh(dev, s, when);
  tg_step_free(step);
  tg_optim_free(o);
  tg_device_free(dev, y);
  tg_graph_free(tr.g);
  tg_graph_free(ev.g);
  tg_store_free(s);
}

static void check_all(tg_device dev, const char *name) {
  tg_optim_config adamw = tg_optim_defaults(TG_ADAMW), sgd = tg_optim_defaults(TG_SGD);
  adamw.lr = 1e-2f, adamw.weight_decay = 0.1f, adamw.clip_norm = 1.0f;
  sgd.lr = 5e-2f, sgd.momentum = 0.9f, sgd.weight_decay = 0.01f;
  char label[64];
  snprintf(label, sizeof label, "%s adamw", name);
  check_device(dev, label, &adamw);
  snprintf(label, sizeof label, "%s sgd", name);
  check_device(dev, label, &sgd);
  sgd.momentum = 0.0f;
  snprintf(label, sizeof label, "%s sgd without momentum", name);
  check_device(dev, label, &sgd);
  check_mirror_after_capture(dev, name);
}

int main(void) {
  /* the CPU under both GEMM libraries: OpenBLAS reads the mirror widened, oneDNN's bf16 primitives (where the CPU has
   * them) read it as it is */
  setenv("TICKGRAD_GEMM", "openblas", 1);
  check_all(tg_cpu(0), "cpu (openblas)");
  setenv("TICKGRAD_GEMM", "onednn", 1);
  check_all(tg_cpu(0), "cpu (onednn)");
  unsetenv("TICKGRAD_GEMM");
  if (tg_cuda_count() == 0) {
    const char *want = getenv("TG_EXPECT_CUDA_DEVICE"); /* set for the emulated-CUDA build, which has one */
    CHECK_MSG(!(want && want[0] == '1'), "TG_EXPECT_CUDA_DEVICE=1 but no CUDA device: %s", tg_cuda_why_none());
    printf("no CUDA device (%s): checked the CPU only\n", tg_cuda_why_none());
    return tg_test_finish();
  }
  check_all(tg_cuda(0), "cuda");
  return tg_test_finish();
}
