/* Graph construction: nodes, leaves (parameters and inputs), the sticky build error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "graph/backend.h"
#include "graph/graph_internal.h"

tg_graph *tg_graph_new(tg_store *store, const char *name) {
  tg_graph *g = tg_calloc(1, sizeof *g);
  if (!g) {
    tg_error(TG_ERR_NOMEM, "graph '%s': out of host memory", name ? name : "");
    return NULL;
  }
  snprintf(g->name, sizeof g->name, "%s", name ? name : "graph");
  g->store = store;
  g->seed = 0x7469636b67726164ull; /* "tickgrad" */
  return g;
}

void tg_graph_release_plan(tg_graph *g) {
  for (int i = 0; g->backend && g->backend->unprepare && i < g->n_nodes; i++) {
    g->backend->unprepare(g->nodes[i]->args.prepared);
    g->nodes[i]->args.prepared = g->nodes[i]->bargs.prepared = NULL;
  }
  if (g->arena && g->backend) g->backend->free(g->opts.device, g->arena);
  if (g->rng_ctr && g->backend) g->backend->free(g->opts.device, g->rng_ctr);
  if (g->ws && g->backend) g->backend->free(g->opts.device, g->ws);
  g->ws = NULL;
  g->ws_bytes = 0;
  g->arena = NULL;
  g->rng_ctr = NULL;
  tg_free(g->bufs);
  g->bufs = NULL;
  g->n_bufs = 0;
  tg_free(g->segs);
  g->segs = NULL;
  g->n_segs = 0;
  g->planned = 0;
}

void tg_graph_free(tg_graph *g) {
  if (!g) return;
  tg_graph_release_plan(g);
  tg_graph_profile_enable(g, 0);
  for (int i = 0; i < g->n_nodes; i++) tg_free(g->nodes[i]);
  tg_free(g->nodes);
  tg_free(g->block_names);
  tg_free(g);
}

const char *const tg_precision_names[4] = {"fp32", "bf16", "auto", NULL};

tg_status tg_graph_status(const tg_graph *g) { return g ? g->status : TG_ERR_INVALID; }

tg_status tg_graph_set_seed(tg_graph *g, uint64_t seed, uint64_t offset) {
  g->seed = seed;
  g->rng_offset = offset;
  if (!g->planned) return TG_OK;
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->args.seed = g->nodes[i]->bargs.seed = seed;
  uint64_t c[2] = {offset, offset};
  return g->backend->from_host(g->opts.device, g->rng_ctr, c, sizeof c);
}

uint64_t tg_graph_rng_seed(const tg_graph *g) { return g->seed; }
uint64_t tg_graph_rng_offset(const tg_graph *g) { return g->rng_offset; }

tg_tensor *tg_graph_fail(tg_graph *g, tg_status s, const char *fmt, ...) {
  if (g && g->status == TG_OK) {
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    g->status = tg_error(s, "graph '%s': %s", g->name, msg);
    snprintf(g->error, sizeof g->error, "%s", tg_last_error());
  }
  return NULL;
}

/* A build error reported by a callee through tg_error: keep its message. */
static tg_tensor *fail_with_last(tg_graph *g, tg_status s) {
  if (g->status == TG_OK) {
    g->status = tg_error(s, "graph '%s': %s", g->name, tg_last_error());
    snprintf(g->error, sizeof g->error, "%s", tg_last_error());
  }
  return NULL;
}

int tg_graph_check_inputs(tg_graph *g, const char *op, int n, tg_tensor *const *xs) {
  if (!g) return 0;
  if (g->status != TG_OK) return 0;
  if (g->planned) {
    tg_graph_fail(g, TG_ERR_INVALID, "%s: the graph is already planned; build all ops first", op);
    return 0;
  }
  for (int i = 0; i < n; i++) {
    if (!xs[i]) {
      tg_graph_fail(g, TG_ERR_INVALID, "%s: operand %d is NULL (an earlier build call failed?)", op, i);
      return 0;
    }
    tg_node *nd = tg_node_of(xs[i]);
    if (nd->id < 0 || nd->id >= g->n_nodes || g->nodes[nd->id] != nd) {
      tg_graph_fail(g, TG_ERR_INVALID, "%s: operand '%s' belongs to another graph", op, xs[i]->name);
      return 0;
    }
  }
  return 1;
}

static tg_node *new_node(tg_graph *g, tg_op op, tg_dtype dtype, int ndim, const int64_t *shape) {
  if (ndim < 0 || ndim > TG_MAX_DIMS) {
    tg_graph_fail(g, TG_ERR_SHAPE, "%s: result would have %d dims (at most %d)",
                  tg_op_get(op)->name, ndim, TG_MAX_DIMS);
    return NULL;
  }
  if (g->n_nodes == g->cap_nodes) {
    int cap = g->cap_nodes ? g->cap_nodes * 2 : 64;
    tg_node **nn = tg_malloc((size_t)cap * sizeof *nn);
    if (!nn) {
      tg_graph_fail(g, TG_ERR_NOMEM, "out of host memory for %d nodes", cap);
      return NULL;
    }
    if (g->n_nodes) memcpy(nn, g->nodes, (size_t)g->n_nodes * sizeof *nn);
    tg_free(g->nodes);
    g->nodes = nn;
    g->cap_nodes = cap;
  }
  tg_node *n = tg_calloc(1, sizeof *n);
  if (!n) {
    tg_graph_fail(g, TG_ERR_NOMEM, "out of host memory for a node");
    return NULL;
  }
  n->op = op;
  n->id = g->n_nodes;
  n->block = g->in_block ? g->n_blocks - 1 : -1;
  n->buf = n->grad_buf = n->rbuf = -1;
  n->param_index = -1;
  n->out.dtype = dtype;
  n->out.ndim = ndim;
  for (int i = 0; i < ndim; i++) n->out.shape[i] = shape[i];
  n->out.device = g->store ? tg_store_device(g->store) : tg_cpu(0);
  g->nodes[g->n_nodes++] = n;
  return n;
}

tg_tensor *tg_graph_add(tg_graph *g, tg_op op, int n_in, tg_tensor *const *in, tg_dtype dtype,
                        int ndim, const int64_t *shape, const tg_attr *attr) {
  const tg_op_def *def = tg_op_get(op);
  if (!tg_graph_check_inputs(g, def ? def->name : "?", n_in, in)) return NULL;
  if (!def || n_in < def->min_in || n_in > def->max_in)
    return tg_graph_fail(g, TG_ERR_INVALID, "%s: %d operands (wants %d to %d)",
                         def ? def->name : "?", n_in, def ? def->min_in : 0, def ? def->max_in : 0);
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0)
      return tg_graph_fail(g, TG_ERR_SHAPE, "%s: negative result dim %d", def->name, i);
  tg_node *n = new_node(g, op, dtype, ndim, shape);
  if (!n) return NULL;
  n->n_in = n_in;
  for (int i = 0; i < n_in; i++) {
    n->in[i] = tg_node_of(in[i]);
    if (n->in[i]->requires_grad && !(def->flags & TG_OPF_NO_GRAD) && dtype == TG_F32)
      n->requires_grad = 1;
  }
  if (attr) n->attr = *attr;
  snprintf(n->out.name, sizeof n->out.name, "%s_%d", def->name, n->id);
  return &n->out;
}

tg_tensor *tg_param(tg_graph *g, const char *name, int ndim, const int64_t *shape, tg_init init) {
  if (!g || g->status != TG_OK) return NULL;
  if (!g->store) return tg_graph_fail(g, TG_ERR_INVALID, "param '%s': the graph has no store", name);
  if (g->planned)
    return tg_graph_fail(g, TG_ERR_INVALID, "param '%s': the graph is already planned", name);
  int index;
  if (!tg_store_declare(g->store, name, ndim, shape, init, &index))
    return fail_with_last(g, TG_ERR_SHAPE);
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i]->op == TG_OP_PARAM && g->nodes[i]->param_index == index) return &g->nodes[i]->out;
  tg_node *n = new_node(g, TG_OP_PARAM, TG_F32, ndim, shape);
  if (!n) return NULL;
  n->param_index = index;
  n->requires_grad = 1;
  snprintf(n->out.name, sizeof n->out.name, "%s", name);
  return &n->out;
}

tg_tensor *tg_input(tg_graph *g, const char *name, tg_dtype dtype, int ndim, const int64_t *shape) {
  if (!g || g->status != TG_OK) return NULL;
  if (g->planned)
    return tg_graph_fail(g, TG_ERR_INVALID, "input '%s': the graph is already planned", name);
  if (dtype < 0 || dtype >= TG_DTYPE_COUNT)
    return tg_graph_fail(g, TG_ERR_INVALID, "input '%s': unknown dtype", name);
  if (dtype == TG_BF16)
    return tg_graph_fail(g, TG_ERR_UNSUPPORTED,
                         "input '%s': bf16 is a storage dtype only; no op computes in bf16 yet (widen it to f32 "
                         "before binding)", name);
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i]->op == TG_OP_INPUT && strcmp(g->nodes[i]->out.name, name) == 0)
      return tg_graph_fail(g, TG_ERR_INVALID, "input '%s': declared twice", name);
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) return tg_graph_fail(g, TG_ERR_SHAPE, "input '%s': negative dim %d", name, i);
  tg_node *n = new_node(g, TG_OP_INPUT, dtype, ndim, shape);
  if (!n) return NULL;
  snprintf(n->out.name, sizeof n->out.name, "%s", name);
  return &n->out;
}

/* ---- recomputation blocks ---- */

/* The misuse checks both markers share: a previous error, a planned graph. */
static int block_usable(tg_graph *g, const char *what) {
  if (g->status != TG_OK) return 0;
  if (g->planned) {
    tg_graph_fail(g, TG_ERR_INVALID, "%s: the graph is already planned; mark blocks while building", what);
    return 0;
  }
  return 1;
}

/* Room for one more block name. */
static int grow_block_names(tg_graph *g) {
  char (*names)[TG_NAME_MAX] = tg_malloc((size_t)(g->n_blocks + 1) * sizeof *names);
  if (!names) {
    tg_graph_fail(g, TG_ERR_NOMEM, "block_begin: out of host memory for %d blocks", g->n_blocks + 1);
    return 0;
  }
  if (g->n_blocks) memcpy(names, g->block_names, (size_t)g->n_blocks * sizeof *names);
  tg_free(g->block_names);
  g->block_names = names;
  return 1;
}

tg_status tg_graph_block_begin(tg_graph *g, const char *name) {
  if (!g) return tg_error(TG_ERR_INVALID, "block_begin: NULL graph");
  if (!block_usable(g, "block_begin")) return g->status;
  if (!name || !name[0] || strlen(name) >= TG_NAME_MAX) {
    tg_graph_fail(g, TG_ERR_INVALID, "block_begin: a block needs a name of 1 to %d bytes", TG_NAME_MAX - 1);
    return g->status;
  }
  if (g->in_block) {
    tg_graph_fail(g, TG_ERR_INVALID, "block_begin('%s'): block '%s' is still open (blocks do not nest; end it first)",
                  name, g->block_names[g->n_blocks - 1]);
    return g->status;
  }
  if (!grow_block_names(g)) return g->status;
  snprintf(g->block_names[g->n_blocks++], TG_NAME_MAX, "%s", name);
  g->in_block = 1;
  return TG_OK;
}

tg_status tg_graph_block_end(tg_graph *g) {
  if (!g) return tg_error(TG_ERR_INVALID, "block_end: NULL graph");
  if (!block_usable(g, "block_end")) return g->status;
  if (!g->in_block) {
    tg_graph_fail(g, TG_ERR_INVALID, "block_end: no block is open (tg_graph_block_begin first)");
    return g->status;
  }
  g->in_block = 0;
  return TG_OK;
}
