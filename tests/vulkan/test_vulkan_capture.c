/* A planned training step recorded once on vulkan:0 and replayed: an MLP's AdamW steps (dropout reading the run counter
 * from device memory, clipping, a schedule) give bitwise the eager steps' losses and within 1e-4 the CPU's; the step is
 * recorded (not left eager), and a replayed step is one submit of its compute (reading its loss and the optimizer's
 * scalars back are one copy each); a bad index inside a replayed step is raised after it. */
#include <math.h>
#include <string.h>
#include "backend/vulkan/vk_device.h"
#include "graph/backend.h"
#include "support/check.h"
#include "support/mlp_step.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_test.h"

#define STEPS 8

/* Counts the queue submits each tg_step_run makes on vulkan:0: the most of any after the second step. */
typedef struct submit_count {
  tg_vk_dev *d;
  uint64_t before;
  int64_t most;
} submit_count;

static void count_submits(void *ctx, int step, int before) {
  submit_count *c = ctx;
  if (before) c->before = c->d->submits;
  else if (step >= 2 && (int64_t)(c->d->submits - c->before) > c->most) c->most = (int64_t)(c->d->submits - c->before);
}

/* The support's MLP for STEPS steps on vulkan:0, capture on or off; *submits as count_submits counts them. */
static int vk_losses(int capture, float *loss, int *captured, int64_t *submits) {
  submit_count c = {0};
  CHECK_OK(tg_vk_device(0, &c.d));
  int ok = c.d && tg_test_mlp_losses((tg_device){TG_VULKAN, 0}, TG_F32, capture, TG_RECOMPUTE_NONE, STEPS, loss,
                                     captured, count_submits, &c);
  *submits = c.most;
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
  float cpu[STEPS], eager[STEPS], replay[STEPS];
  int cap_cpu, cap_eager, cap_replay;
  int64_t sub_eager, sub_replay;
  CHECK(tg_test_mlp_losses(tg_cpu(0), TG_F32, 1, TG_RECOMPUTE_NONE, STEPS, cpu, &cap_cpu, NULL, NULL));
  CHECK(vk_losses(0, eager, &cap_eager, &sub_eager));
  CHECK(vk_losses(1, replay, &cap_replay, &sub_replay));
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
