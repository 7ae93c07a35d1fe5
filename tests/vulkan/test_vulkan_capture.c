/* A planned training step recorded once on vulkan:0 and replayed: an MLP's AdamW steps (dropout reading the run counter
 * from device memory, clipping, a schedule) give bitwise the eager steps' losses and within 1e-4 the CPU's; the step is
 * recorded (not left eager), and a replayed step is one submit of its compute (reading its loss and the optimizer's
 * scalars back are one copy each); a bad index inside a replayed step is raised after it. */
#include <math.h>
#include <string.h>
#include "backend/vulkan/vk_device.h"
#include "graph/backend.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_test.h"

#define B 64
#define F 16
#define STEPS 8

/* Losses of STEPS AdamW steps of a small MLP on dev, capture on or off; *captured: the step was recorded; *submits: the
 * most queue submits one tg_step_run made after the first (-1 on the CPU). 0 on failure. */
static int mlp_losses(tg_device dev, int capture, float *loss, int *captured, int64_t *submits) {
  const tg_backend *be = tg_backend_for(dev.kind);
  const int64_t xs[2] = {B, F}, ys[2] = {B, 1}, w1[2] = {32, F}, b1[1] = {32}, w2[2] = {1, 32}, b2[1] = {1};
  tg_init fan = {TG_INIT_FAN_IN, 0, 0};
  tg_store *s = tg_store_new(dev, 9);
  tg_graph *g = tg_graph_new(s, "mlp");
  tg_tensor *x = tg_input(g, "x", TG_F32, 2, xs), *y = tg_input(g, "y", TG_F32, 2, ys);
  tg_tensor *h = tg_dropout(g, tg_silu(g, tg_linear(g, x, tg_param(g, "w1", 2, w1, fan), tg_param(g, "b1", 1, b1, fan))), 0.1f);
  tg_tensor *p = tg_linear(g, h, tg_param(g, "w2", 2, w2, fan), tg_param(g, "b2", 1, b2, fan));
  tg_tensor *l = tg_mse_loss(g, p, y);
  tg_plan_opts o = tg_plan_defaults(dev);
  o.training = 1;
  tg_optim_config oc = tg_optim_defaults(TG_ADAMW);
  oc.clip_norm = 0.5f;
  oc.schedule = (tg_lr_schedule){TG_LR_COSINE, 3, STEPS, 0.1f};
  tg_optim *opt = NULL;
  tg_step *step = NULL;
  float hx[B * F], hy[B];
  void *dx = NULL, *dy = NULL;
  int ok = l && tg_graph_plan(g, &o) == TG_OK && tg_optim_new(s, &oc, &opt) == TG_OK &&
           be->alloc(dev, sizeof hx, &dx) == TG_OK && be->alloc(dev, sizeof hy, &dy) == TG_OK;
  tg_tensor tx, ty;
  ok = ok && tg_tensor_view(&tx, "bx", dev, TG_F32, 2, xs, dx) == TG_OK && tg_tensor_view(&ty, "by", dev, TG_F32, 2, ys, dy) == TG_OK &&
       tg_graph_bind(g, "x", &tx) == TG_OK && tg_graph_bind(g, "y", &ty) == TG_OK && tg_step_new(g, l, opt, &step) == TG_OK;
  if (ok) tg_step_set_capture(step, capture);
  tg_vk_dev *d = NULL;
  if (dev.kind == TG_VULKAN) tg_vk_device(dev.index, &d);
  *submits = d ? 0 : -1;
  for (int t = 0; ok && t < STEPS; t++) {
    for (int i = 0; i < B * F; i++) hx[i] = 2.0f * tg_rng_uniform(5, (uint64_t)t, (uint64_t)i) - 1.0f;
    for (int i = 0; i < B; i++) hy[i] = sinf(3.0f * hx[i * F]) + hx[i * F + 1];
    ok = be->from_host(dev, dx, hx, sizeof hx) == TG_OK && be->from_host(dev, dy, hy, sizeof hy) == TG_OK;
    uint64_t before = d ? d->submits : 0;
    ok = ok && tg_step_run(step, &loss[t]) == TG_OK;
    if (d && t >= 2 && (int64_t)(d->submits - before) > *submits) *submits = (int64_t)(d->submits - before);
  }
  if (!ok) fprintf(stderr, "mlp on %s: %s\n", dev.kind == TG_CPU ? "cpu" : "vulkan", tg_last_error());
  *captured = ok && step && tg_step_captured(step);
  if (d && step && capture && !*captured) fprintf(stderr, "not recorded: %s\n", tg_step_capture_error(step));
  tg_step_free(step);
  if (dx) be->free(dev, dx);
  if (dy) be->free(dev, dy);
  tg_optim_free(opt);
  tg_graph_free(g);
  tg_store_free(s);
  return ok;
}

/* An embedding step (gather_rows of a table parameter [5, 3] by an index input [4]) recorded on vulkan:0, then replayed
 * with an index outside the table written into the same buffer: the replay raises the fault its kernel recorded. */
static void check_replayed_fault(void) {
  const tg_device dev = {TG_VULKAN, 0};
  const tg_backend *be = tg_backend_for(TG_VULKAN);
  const int64_t ts[2] = {5, 3}, is[1] = {4}, ys[2] = {4, 3};
  tg_init fan = {TG_INIT_FAN_IN, 0, 0};
  tg_store *s = tg_store_new(dev, 9);
  tg_graph *g = tg_graph_new(s, "embed");
  tg_tensor *idx = tg_input(g, "idx", TG_I64, 1, is), *y = tg_input(g, "y", TG_F32, 2, ys);
  tg_tensor *l = tg_mse_loss(g, tg_gather_rows(g, tg_param(g, "table", 2, ts, fan), idx), y);
  tg_plan_opts o = tg_plan_defaults(dev);
  o.training = 1;
  tg_optim_config oc = tg_optim_defaults(TG_ADAM);
  tg_optim *opt = NULL;
  tg_step *step = NULL;
  int64_t good[4] = {0, 4, 2, 4}, bad[4] = {0, 4, 7, 1};
  float zeros[12] = {0};
  void *di = NULL, *dy = NULL;
  tg_tensor ti, ty;
  CHECK_OK(tg_graph_plan(g, &o));
  CHECK_OK(tg_optim_new(s, &oc, &opt));
  CHECK_OK(be->alloc(dev, sizeof good, &di));
  CHECK_OK(be->alloc(dev, sizeof zeros, &dy));
  CHECK_OK(be->from_host(dev, dy, zeros, sizeof zeros));
  CHECK_OK(tg_tensor_view(&ti, "idx", dev, TG_I64, 1, is, di));
  CHECK_OK(tg_tensor_view(&ty, "y", dev, TG_F32, 2, ys, dy));
  CHECK_OK(tg_graph_bind(g, "idx", &ti));
  CHECK_OK(tg_graph_bind(g, "y", &ty));
  CHECK_OK(tg_step_new(g, l, opt, &step));
  float loss = 0;
  for (int t = 0; t < 3; t++) {
    CHECK_OK(be->from_host(dev, di, good, sizeof good));
    CHECK_OK(tg_step_run(step, &loss));
  }
  CHECK_MSG(tg_step_captured(step), "the embedding step was not recorded: %s", tg_step_capture_error(step));
  CHECK_OK(be->from_host(dev, di, bad, sizeof bad));
  CHECK(tg_step_run(step, &loss) == TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "in a replayed step, a gather_rows kernel found 7 at flat position 2"),
            "the replayed step's fault: %s", tg_last_error());
  CHECK_OK(be->from_host(dev, di, good, sizeof good));
  CHECK_OK(tg_step_run(step, &loss)); /* the record was cleared */
  tg_step_free(step);
  be->free(dev, di);
  be->free(dev, dy);
  tg_optim_free(opt);
  tg_graph_free(g);
  tg_store_free(s);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  const tg_device vk = {TG_VULKAN, 0};
  float cpu[STEPS], eager[STEPS], replay[STEPS];
  int cap_cpu, cap_eager, cap_replay;
  int64_t sub_cpu, sub_eager, sub_replay;
  CHECK(mlp_losses(tg_cpu(0), 1, cpu, &cap_cpu, &sub_cpu));
  CHECK(mlp_losses(vk, 0, eager, &cap_eager, &sub_eager));
  CHECK(mlp_losses(vk, 1, replay, &cap_replay, &sub_replay));
  CHECK(!cap_cpu && !cap_eager);
  CHECK_MSG(cap_replay, "the vulkan:0 training step was not recorded");
  CHECK_MSG(memcmp(eager, replay, sizeof eager) == 0, "recorded and eager vulkan:0 losses differ");
  for (int t = 0; t < STEPS; t++) {
    double e = fabs((double)replay[t] - (double)cpu[t]) / (1e-6 + fabs((double)cpu[t]));
    CHECK_MSG(e <= 1e-4, "step %d: vulkan:0 loss %.9g, cpu %.9g (rel %.2e)", t, (double)replay[t], (double)cpu[t], e);
  }
  /* a replayed step: its recorded commands (1), then the loss and the optimizer's scalars read back (1 each) */
  CHECK_MSG(sub_replay == 3, "a replayed step made %lld submits (want 1 for the step, 2 for reading back)",
            (long long)sub_replay);
  printf("mlp: %d AdamW steps on vulkan:0, recorded once and replayed: losses as eager bitwise, within 1e-4 of cpu:0's "
         "(%.6f -> %.6f); submits per step %lld replayed (1 + 2 read-backs), %lld eager\n", STEPS, (double)replay[0],
         (double)replay[STEPS - 1], (long long)sub_replay, (long long)sub_eager);
  check_replayed_fault();
  return tg_test_finish();
}
