/* Steps as one call: eager, or on a backend that captures, eager once and then a captured graph replayed. */
#include <stdio.h>
#include <string.h>
#include "graph/backend.h"
#include "graph/graph_internal.h"
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
  void *cg;          /* the captured step, once there is one (the backend's graph) */
  void **bound;      /* [n_nodes] input data pointers the capture baked in (NULL for other nodes) */
  uint64_t seed;     /* the graph's seed the capture baked in */
  const uint16_t *mirror; /* the store's bf16 mirror the capture's update writes (NULL: none then) */
  tg_step_reduce_fn reduce; /* between backward and the optimizer (NULL: none) */
  void *reduce_ctx;
  char capture_error[512];
};

tg_status tg_step_new(tg_graph *g, const tg_tensor *loss, tg_optim *o, tg_step **out) {
  *out = NULL;
  if (!g || !g->planned) return tg_error(TG_ERR_INVALID, "step: the graph must be planned first");
  if (o && (!loss || !g->opts.training))
    return tg_error(TG_ERR_INVALID, "step: graph '%s': a training step needs a loss and a plan with training = 1",
                    g->name);
  if (loss && tg_numel(loss) != 1)
    return tg_error(TG_ERR_SHAPE, "step: graph '%s': '%s' is not a scalar", g->name, loss->name);
  if (o && tg_optim_store(o) != g->store)
    return tg_error(TG_ERR_INVALID, "step: graph '%s': the optimizer belongs to another store", g->name);
  tg_step *s = tg_calloc(1, sizeof *s);
  if (!s) return tg_error(TG_ERR_NOMEM, "step: out of host memory");
  s->g = g;
  s->loss = loss;
  s->o = o;
  s->capture = 1;
  s->bound = tg_calloc((size_t)g->n_nodes, sizeof *s->bound);
  if (!s->bound) {
    tg_free(s);
    return tg_error(TG_ERR_NOMEM, "step: out of host memory");
  }
  if (loss) {
    tg_status st = g->backend->alloc(g->opts.device, sizeof(float), (void **)&s->loss_slot);
    if (st != TG_OK) {
      tg_free(s->bound);
      tg_free(s);
      return st;
    }
  }
  *out = s;
  return TG_OK;
}

void tg_step_free(tg_step *s) {
  if (!s) return;
  if (s->cg) s->g->backend->graph_free(s->cg);
  if (s->loss_slot) s->g->backend->free(s->g->opts.device, s->loss_slot);
  tg_free(s->bound);
  tg_free(s);
}

void tg_step_set_capture(tg_step *s, int on) { s->capture = on; }
void tg_step_set_reduce(tg_step *s, tg_step_reduce_fn fn, void *ctx) {
  s->reduce = fn;
  s->reduce_ctx = ctx;
}
int tg_step_captured(const tg_step *s) { return s->cg != NULL; }
const char *tg_step_capture_error(const tg_step *s) { return s->capture_error; }

/* Queues the step's device work: forward, loss copy, backward, optimizer update. */
static tg_status step_enqueue(tg_step *s) {
  tg_graph *g = s->g;
  tg_status st = tg_graph_run(g);
  if (st == TG_OK && s->loss) st = g->backend->copy(g->opts.device, s->loss_slot, s->loss->data, sizeof(float));
  if (st == TG_OK && s->o) st = tg_graph_backward(g, s->loss);
  if (st == TG_OK && s->o && s->reduce)
    st = s->reduce(s->reduce_ctx, tg_store_grads(g->store), tg_store_numel(g->store), s->loss_slot);
  if (st == TG_OK && s->o) st = tg_optim_enqueue(s->o);
  return st;
}

static int inputs_bound(const tg_step *s) {
  for (int i = 0; i < s->g->n_nodes; i++)
    if (s->g->nodes[i]->op == TG_OP_INPUT && !s->g->nodes[i]->bound) return 0;
  return 1;
}

static int inputs_unchanged(const tg_step *s) {
  for (int i = 0; i < s->g->n_nodes; i++)
    if (s->g->nodes[i]->op == TG_OP_INPUT && s->bound[i] != s->g->nodes[i]->out.data) return 0;
  return 1;
}

/* Captures one step. Capture only records, so the host's run counter is put back; on failure the
 * reason is kept and the step stays eager. */
static void step_capture(tg_step *s) {
  tg_graph *g = s->g;
  const tg_backend *be = g->backend;
  int dev = g->opts.device.index;
  uint64_t rng = g->rng_offset;
  tg_status st = be->capture_begin(dev);
  if (st == TG_OK) {
    tg_status run = step_enqueue(s);
    char why[512];
    snprintf(why, sizeof why, "%s", run == TG_OK ? "" : tg_last_error());
    st = be->capture_end(dev, &s->cg);
    if (run != TG_OK) {
      if (s->cg) be->graph_free(s->cg);
      s->cg = NULL;
      st = tg_error(run, "%s", why);
    }
  }
  g->rng_offset = rng;
  for (int i = 0; i < g->n_nodes; i++) s->bound[i] = g->nodes[i]->op == TG_OP_INPUT ? g->nodes[i]->out.data : NULL;
  s->seed = g->seed;
  s->mirror = g->store ? tg_store_mirror(g->store) : NULL;
  if (st != TG_OK) snprintf(s->capture_error, sizeof s->capture_error, "%s", tg_last_error());
}

tg_status tg_step_run(tg_step *s, float *loss_out) {
  if (!s) return tg_error(TG_ERR_INVALID, "step: NULL step");
  tg_graph *g = s->g;
  if (!g->planned) return tg_error(TG_ERR_INVALID, "step: graph '%s' is no longer planned", g->name);
  tg_status st = TG_OK;
  const tg_backend *be = g->backend;
  /* a rebound input, a new seed, or a bf16 mirror of the parameters made since (the update writes it): capture again */
  if (s->cg && (!inputs_unchanged(s) || s->seed != g->seed || (g->store && s->mirror != tg_store_mirror(g->store)))) {
    be->graph_free(s->cg);
    s->cg = NULL;
  }
  /* a stale bf16 mirror of the parameters is made here, before a capture (which must never record it) or a launch */
  if (g->store && (st = tg_store_mirror_refresh(g->store)) != TG_OK) return st;
  if (be->capture_begin && s->capture && s->calls >= 1 && !s->cg && !s->capture_error[0] && inputs_bound(s))
    step_capture(s);
  if (s->cg && s->capture) {
    st = be->graph_launch(s->cg);
    if (st == TG_OK) {
      g->fwd_offset = g->rng_offset++; /* the captured counter kernel did the same on the device */
      g->ran = 1;
    }
  } else {
    st = step_enqueue(s);
  }
  if (st == TG_OK && s->loss && loss_out) st = g->backend->to_host(g->opts.device, loss_out, s->loss_slot, sizeof(float));
  if (st == TG_OK && s->o) st = tg_optim_finish(s->o);
  if (st == TG_OK && !s->loss) st = tg_device_sync(g->opts.device);
  if (st == TG_OK) s->calls++;
  return st;
}
