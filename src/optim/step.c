/* The one training (or inference) step: forward, loss copy, backward, reduce, update in one order, eager or, on a
 * backend that captures, eager once and then a captured graph replayed. */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/clock.h"
#include "graph/capture.h"
#include "graph/store_mirror.h"
#include "optim/optim_internal.h"
#include "tickgrad/device.h"
#include "tickgrad/step.h"

struct tg_step {
  tg_graph *g;
  const tg_tensor *loss;
  tg_optim *o;
  float *loss_slot; /* [1] on the device: the loss copied right after the forward */
  int capture, calls;
  tg_capture *cap;  /* the captured step, once there is one */
  tg_step_reduce_fn reduce; /* between backward and the optimizer (NULL: none) */
  void *reduce_ctx;
  tg_step_times last; /* the last call's phases (eager calls) */
  char capture_error[512];
};

tg_status tg_step_new(tg_graph *g, const tg_tensor *loss, tg_optim *o, tg_step **out) {
  *out = NULL;
  int training = 0;
  if (!g || !tg_graph_planned(g, &training)) return tg_error(TG_ERR_INVALID, "step: the graph must be planned first");
  const char *name = tg_graph_name(g);
  if (o && (!loss || !training))
    return tg_error(TG_ERR_INVALID, "step: graph '%s': a training step needs a loss and a plan with training = 1", name);
  if (loss && tg_numel(loss) != 1)
    return tg_error(TG_ERR_SHAPE, "step: graph '%s': '%s' is not a scalar", name, loss->name);
  if (o && tg_optim_store(o) != tg_graph_store(g))
    return tg_error(TG_ERR_INVALID, "step: graph '%s': the optimizer belongs to another store", name);
  tg_step *s = tg_calloc(1, sizeof *s);
  if (!s) return tg_error(TG_ERR_NOMEM, "step: out of host memory");
  s->g = g;
  s->loss = loss;
  s->o = o;
  s->capture = 1;
  float zero = 0.0f;
  tg_status st = loss ? tg_device_upload(tg_graph_device(g), &zero, sizeof zero, (void **)&s->loss_slot) : TG_OK;
  if (st != TG_OK) {
    tg_free(s);
    return st;
  }
  *out = s;
  return TG_OK;
}

void tg_step_free(tg_step *s) {
  if (!s) return;
  tg_capture_free(s->cap);
  if (s->loss_slot) tg_device_free(tg_graph_device(s->g), s->loss_slot);
  tg_free(s);
}

void tg_step_set_capture(tg_step *s, int on) { s->capture = on; }
void tg_step_set_reduce(tg_step *s, tg_step_reduce_fn fn, void *ctx) {
  s->reduce = fn;
  s->reduce_ctx = ctx;
}
int tg_step_captured(const tg_step *s) { return s->cap != NULL; }
const char *tg_step_capture_error(const tg_step *s) { return s->capture_error; }
const tg_step_times *tg_step_last_times(const tg_step *s) { return &s->last; }

/* Queues the step's device work in its one order: forward, loss copy, backward, reduce, optimizer update; each phase
 * timed (queueing time on an asynchronous device). */
static tg_status step_enqueue(void *ctx) {
  tg_step *s = ctx;
  tg_graph *g = s->g;
  double t0 = tg_clock_seconds();
  tg_status st = tg_graph_run(g);
  if (st == TG_OK && s->loss) st = tg_graph_copy_out(g, s->loss_slot, s->loss, sizeof(float));
  double t1 = tg_clock_seconds();
  if (st == TG_OK && s->o) st = tg_graph_backward(g, s->loss);
  double t2 = tg_clock_seconds();
  tg_store *store = tg_graph_store(g);
  if (st == TG_OK && s->o && s->reduce) st = s->reduce(s->reduce_ctx, tg_store_grads(store), tg_store_numel(store), s->loss_slot);
  if (st == TG_OK && s->o) st = tg_optim_enqueue(s->o);
  s->last = (tg_step_times){t1 - t0, t2 - t1, tg_clock_seconds() - t2};
  return st;
}

/* Captures one step; on failure the reason is kept and the step stays eager. */
static void step_capture(tg_step *s) {
  if (tg_capture_record(s->g, step_enqueue, s, &s->cap) != TG_OK)
    snprintf(s->capture_error, sizeof s->capture_error, "%s", tg_last_error());
}

tg_status tg_step_run(tg_step *s, float *loss_out) {
  if (!s) return tg_error(TG_ERR_INVALID, "step: NULL step");
  tg_graph *g = s->g;
  if (!tg_graph_planned(g, NULL)) return tg_error(TG_ERR_INVALID, "step: graph '%s' is no longer planned", tg_graph_name(g));
  tg_store *store = tg_graph_store(g);
  /* a rebound input, a new seed, or a bf16 mirror of the parameters made since (the update writes it): capture again */
  if (s->cap && !tg_capture_current(s->cap)) {
    tg_capture_free(s->cap);
    s->cap = NULL;
  }
  /* a stale bf16 mirror of the parameters is made here, before a capture (which must never record it) or a launch */
  tg_status st = store ? tg_store_mirror_refresh(store) : TG_OK;
  if (st != TG_OK) return st;
  if (tg_graph_can_capture(g) && s->capture && s->calls >= 1 && !s->cap && !s->capture_error[0] &&
      tg_graph_inputs_bound(g))
    step_capture(s);
  if (s->cap && s->capture) {
    s->last = (tg_step_times){0, 0, 0};
    st = tg_capture_launch(s->cap);
  } else {
    st = step_enqueue(s);
  }
  tg_device dev = tg_graph_device(g);
  double t0 = tg_clock_seconds();
  if (st == TG_OK && s->loss && loss_out) st = tg_device_download(dev, loss_out, s->loss_slot, sizeof(float));
  if (st == TG_OK && s->o) st = tg_optim_finish(s->o);
  if (st == TG_OK && !s->loss) st = tg_device_sync(dev);
  if (!s->cap || !s->capture) s->last.update += tg_clock_seconds() - t0;
  if (st == TG_OK) s->calls++;
  return st;
}
