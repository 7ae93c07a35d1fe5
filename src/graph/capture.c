/* Capture and replay of a planned graph's device work through its backend, and what it baked in. */
#include <stdio.h>
#include "base/alloc.h"
#include "graph/capture.h"
#include "graph/graph_internal.h"
#include "graph/store_mirror.h"

struct tg_capture {
  tg_graph *g;
  void *cg;               /* the backend's captured graph */
  void **bound;           /* [n_nodes] input data pointers it baked in (NULL for other nodes) */
  uint64_t seed;          /* the graph's seed it baked in */
  const uint16_t *mirror; /* the store's bf16 mirror its update writes (NULL: none then) */
};

const char *tg_graph_name(const tg_graph *g) { return g->name; }

int tg_graph_planned(const tg_graph *g, int *training) {
  if (training) *training = g->planned && g->opts.training;
  return g->planned;
}

tg_store *tg_graph_store(const tg_graph *g) { return g->store; }

tg_device tg_graph_device(const tg_graph *g) { return g->opts.device; }

tg_status tg_graph_copy_out(tg_graph *g, void *dst, const tg_tensor *t, size_t bytes) {
  return g->backend->copy(g->opts.device, dst, t->data, bytes);
}

int tg_graph_inputs_bound(const tg_graph *g) {
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i]->op == TG_OP_INPUT && !g->nodes[i]->bound) return 0;
  return 1;
}

int tg_graph_can_capture(const tg_graph *g) { return g->planned && g->backend->capture_begin != NULL; }

/* The capture's snapshot of what it baked in: input pointers, seed, mirror. */
static void capture_note(tg_capture *c) {
  tg_graph *g = c->g;
  for (int i = 0; i < g->n_nodes; i++) c->bound[i] = g->nodes[i]->op == TG_OP_INPUT ? g->nodes[i]->out.data : NULL;
  c->seed = g->seed;
  c->mirror = g->store ? tg_store_mirror(g->store) : NULL;
}

tg_status tg_capture_record(tg_graph *g, tg_capture_work work, void *ctx, tg_capture **out) {
  *out = NULL;
  if (!tg_graph_can_capture(g)) return tg_error(TG_ERR_INVALID, "graph '%s': its backend does not capture", g->name);
  tg_capture *c = tg_calloc(1, sizeof *c);
  void **bound = tg_calloc((size_t)g->n_nodes, sizeof *bound);
  if (!c || !bound) {
    tg_free(c);
    tg_free(bound);
    return tg_error(TG_ERR_NOMEM, "graph '%s': out of host memory for a capture", g->name);
  }
  c->g = g;
  c->bound = bound;
  const tg_backend *be = g->backend;
  int dev = g->opts.device.index;
  uint64_t rng = g->rng_offset;
  tg_status st = be->capture_begin(dev);
  if (st == TG_OK) {
    tg_status run = work(ctx);
    char why[512];
    snprintf(why, sizeof why, "%s", run == TG_OK ? "" : tg_last_error());
    st = be->capture_end(dev, &c->cg);
    if (run != TG_OK) st = tg_error(run, "%s", why);
  }
  g->rng_offset = rng;
  if (st != TG_OK) {
    tg_capture_free(c);
    return st;
  }
  capture_note(c);
  *out = c;
  return TG_OK;
}

int tg_capture_current(const tg_capture *c) {
  const tg_graph *g = c->g;
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i]->op == TG_OP_INPUT && c->bound[i] != g->nodes[i]->out.data) return 0;
  return c->seed == g->seed && (!g->store || c->mirror == tg_store_mirror(g->store));
}

tg_status tg_capture_launch(tg_capture *c) {
  tg_graph *g = c->g;
  tg_status st = g->backend->graph_launch(c->cg);
  if (st == TG_OK) {
    g->fwd_offset = g->rng_offset++;
    g->ran = 1;
  }
  return st;
}

void tg_capture_free(tg_capture *c) {
  if (!c) return;
  if (c->cg) c->g->backend->graph_free(c->cg);
  tg_free(c->bound);
  tg_free(c);
}
