/* Executing a planned graph: bind inputs, run forward, backward into the flat gradient buffer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/backend.h"
#include "graph/graph_internal.h"
#include "graph/store_mirror.h"

#define GUARD_BYTE 0xA5

static tg_node *find_input(const tg_graph *g, const char *name) {
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i]->op == TG_OP_INPUT && strcmp(g->nodes[i]->out.name, name) == 0) return g->nodes[i];
  return NULL;
}

/* The first op reading node n, for error messages. */
static const tg_node *first_consumer(const tg_graph *g, const tg_node *n) {
  for (int i = n->id + 1; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_in; k++)
      if (g->nodes[i]->in[k] == n) return g->nodes[i];
  return NULL;
}

tg_status tg_graph_bind(tg_graph *g, const char *name, const tg_tensor *t) {
  char a[64], b[64];
  if (!g || !name || !t) return tg_error(TG_ERR_INVALID, "bind: NULL argument");
  if (!g->planned)
    return tg_error(TG_ERR_INVALID, "graph '%s': bind '%s' before plan; plan the graph first", g->name, name);
  tg_node *n = find_input(g, name);
  if (!n) return tg_error(TG_ERR_INVALID, "graph '%s': no input named '%s'", g->name, name);
  const tg_node *c = first_consumer(g, n);
  const char *op = c ? tg_op_get(c->op)->name : "(none)";
  const char *node = c ? c->out.name : "-";
  if (!tg_device_eq(t->device, g->opts.device))
    return tg_error(TG_ERR_DEVICE,
                    "graph '%s': op '%s' (%s): input '%s' bound to tensor '%s' on %s, but the graph "
                    "is planned for %s; stage the data on %s explicitly",
                    g->name, op, node, name, t->name, tg_device_str(t->device, a, sizeof a),
                    tg_device_str(g->opts.device, b, sizeof b), b);
  if (t->dtype != n->out.dtype || !tg_shape_eq(t, &n->out))
    return tg_error(TG_ERR_SHAPE, "graph '%s': input '%s' wants %s %s, tensor '%s' is %s %s", g->name,
                    name, tg_dtype_name(n->out.dtype), tg_shape_str(&n->out, a, sizeof a), t->name,
                    tg_dtype_name(t->dtype), tg_shape_str(t, b, sizeof b));
  if (!t->data && tg_numel(t) > 0)
    return tg_error(TG_ERR_INVALID, "graph '%s': input '%s': tensor '%s' has no data", g->name, name, t->name);
  n->out.data = t->data;
  n->bound = 1;
  for (int i = n->id + 1; i < g->n_nodes; i++)
    if (g->nodes[i]->root == n) g->nodes[i]->out.data = t->data; /* views of this input */
  return TG_OK;
}

/* Prefixes a kernel's error with the graph's name. */
static tg_status kernel_failed(const tg_graph *g, tg_status st) {
  char msg[900];
  snprintf(msg, sizeof msg, "%s", tg_last_error());
  return tg_error(st, "graph '%s': %s", g->name, msg);
}

/* TICKGRAD_TRACE=devices (or a comma list containing it): print each op's kernel, output and device
 * for the first forward and the first backward of every graph, to stderr. */
static int trace_wanted(void) {
  const char *t = getenv("TICKGRAD_TRACE");
  return t && strstr(t, "devices") != NULL;
}

static void trace_op(tg_graph *g, const tg_node *n, const char *pass) {
  char dev[16];
  fprintf(stderr, "trace: graph '%s' %s %-22s -> %-24s on %s\n", g->name, pass, tg_op_get(n->op)->name, n->out.name,
          tg_device_str(g->opts.device, dev, sizeof dev));
}

static tg_status poison_arena(tg_graph *g) {
  for (int i = 0; i < g->n_bufs; i++) {
    tg_status st = g->backend->fill_bytes(g->opts.device, (char *)g->arena + g->bufs[i].offset, g->bufs[i].bytes, 0xFF);
    if (st != TG_OK) return st;
  }
  return TG_OK;
}

/* A bf16 plan's GEMM kernels read the store's bf16 mirror of the parameters: made again if the values were written. */
static tg_status mirror_fresh(tg_graph *g) {
  return g->store && g->opts.precision == TG_BF16 ? tg_store_mirror_refresh(g->store) : TG_OK;
}

tg_status tg_graph_run(tg_graph *g) {
  if (!g || !g->planned) return tg_error(TG_ERR_INVALID, "run: graph '%s' is not planned", g ? g->name : "?");
  for (int i = 0; i < g->n_nodes; i++) {
    const tg_node *n = g->nodes[i];
    if (n->op == TG_OP_INPUT && !n->bound)
      return tg_error(TG_ERR_INVALID, "graph '%s': input '%s' is not bound (tg_graph_bind before run)",
                      g->name, n->out.name);
  }
  if (g->opts.poison) {
    tg_status st = poison_arena(g);
    if (st != TG_OK) return st;
  }
  tg_status fresh = mirror_fresh(g);
  if (fresh != TG_OK) return fresh;
  tg_status adv = g->backend->advance_counter(g->opts.device, g->rng_ctr);
  if (adv != TG_OK) return adv;
  g->fwd_offset = g->rng_offset++;
  int trace = !(g->traced & 1) && trace_wanted();
  g->traced |= 1;
  for (int i = 0; i < g->n_nodes; i++) {
    tg_node *n = g->nodes[i];
    const tg_op_def *def = tg_op_get(n->op);
    if (def->flags & TG_OPF_LEAF) continue;
    if (trace) trace_op(g, n, "forward ");
    n->args.rng_offset = g->fwd_offset;
    tg_status st = g->prof ? tg_graph_profile_call(g, n, &n->args, 0) : n->kern->fwd(&n->args);
    if (st != TG_OK) {
      g->ran = 0;
      return kernel_failed(g, st);
    }
  }
  g->ran = 1;
  return TG_OK;
}

/* Zeroes a gradient buffer the first time anything writes to it in this pass. */
static tg_status ready_grad(tg_graph *g, tg_node *n) {
  tg_node *r = n->root;
  if (r->grad_ready || r->op == TG_OP_PARAM) return TG_OK;
  r->grad_ready = 1;
  return g->backend->fill_f32(g->opts.device, r->grad, (size_t)tg_numel(&r->out), 0.0f);
}

/* A segment's recomputed values: its nodes' forward kernels again, in order, reading and writing the recomputed
 * buffers, with the forward's dropout offset (the counters are not advanced, so every backend draws the same). */
static tg_status recompute_segment(tg_graph *g, const tg_segment *s, int trace) {
  if (trace)
    fprintf(stderr, "trace: graph '%s' recompute %s '%s' (nodes %d..%d)\n", g->name, s->block >= 0 ? "block" : "segment",
            s->block >= 0 ? g->block_names[s->block] : "between blocks", s->lo, s->hi);
  for (int j = s->lo; j <= s->hi; j++) {
    tg_node *n = g->nodes[j];
    if (!n->recompute) continue;
    if (trace) trace_op(g, n, "recompute");
    n->bargs.rng_offset = g->fwd_offset;
    tg_status st = g->prof ? tg_graph_profile_call(g, n, &n->bargs, 0) : n->kern->fwd(&n->bargs);
    if (st != TG_OK) return kernel_failed(g, st);
  }
  return TG_OK;
}

/* 1 when n's backward may write input k's gradient without it being zeroed first: nothing wrote it yet this pass, it
 * is the whole of its root's buffer (not a parameter's), and no other input of n shares that root. */
static int grad_may_start_fresh(const tg_node *n, int k) {
  const tg_node *in = n->in[k], *r = in->root;
  if (r->grad_ready || r->op == TG_OP_PARAM || in->grad != r->grad || tg_numel(&in->out) != tg_numel(&r->out))
    return 0;
  for (int j = 0; j < n->n_in; j++)
    if (j != k && n->in[j]->root == r) return 0;
  return 1;
}

/* Node n's backward kernel, once its gradient has been written this pass. An input gradient the kernel writes first
 * is zeroed first, unless the backend's kernel can start it fresh (args.grad_fresh): then the zeroing pass over its
 * memory is skipped and the kernel adds into +0 itself, with the same bits. */
static tg_status backward_node(tg_graph *g, tg_node *n, int trace) {
  const tg_op_def *def = tg_op_get(n->op);
  if ((def->flags & TG_OPF_LEAF) || !n->requires_grad || !n->root->grad_ready) return TG_OK;
  tg_status st;
  unsigned can = g->backend->bwd_fresh ? g->backend->bwd_fresh(n->op) : 0u, fresh = 0u;
  for (int k = 0; k < n->n_in; k++) {
    if (!n->in[k]->requires_grad) continue;
    if ((can >> k & 1u) && grad_may_start_fresh(n, k)) {
      n->in[k]->root->grad_ready = 1;
      fresh |= 1u << k;
    } else if ((st = ready_grad(g, n->in[k])) != TG_OK) {
      return st;
    }
  }
  n->bargs.grad_fresh = fresh;
  if (trace) trace_op(g, n, "backward");
  n->bargs.rng_offset = g->fwd_offset;
  st = g->prof ? tg_graph_profile_call(g, n, &n->bargs, 1) : n->kern->bwd(&n->bargs);
  if (st != TG_OK) return kernel_failed(g, st);
  return TG_OK;
}

/* Start's gradient: zeroed, then the seed (1 for a scalar loss). */
static tg_status write_seed(tg_graph *g, tg_node *start, const float *seed) {
  tg_status st = ready_grad(g, start);
  if (st != TG_OK) return st;
  size_t n_out = (size_t)tg_numel(&start->out);
  if (seed) return g->backend->copy(g->opts.device, start->grad, seed, n_out * sizeof(float));
  return g->backend->fill_f32(g->opts.device, start->grad, 1, 1.0f);
}

/* When the seed may be written: where start's gradient buffer becomes live on the timeline (from the start of
 * backward for graph outputs and gradients outside the arena; else at its latest consumer's backward, after what
 * is recomputed before it, which may share its memory). */
static int seed_time(const tg_graph *g, const tg_node *start) {
  int b = start->root->grad_buf;
  return b >= 0 ? g->bufs[b].first : g->n_nodes;
}

/* The walk follows the plan's timeline from the last node down, so each segment is recomputed exactly where its
 * buffers were laid out (also when backward starts below it; a segment wholly above the start is skipped). */
static tg_status backward_from(tg_graph *g, tg_node *start, const float *seed) {
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->grad_ready = 0;
  int t_seed = seed_time(g, start), seeded = t_seed <= g->n_nodes;
  tg_status st = mirror_fresh(g);
  if (st == TG_OK && seeded) st = write_seed(g, start, seed);
  if (st != TG_OK) return st;
  int trace = !(g->traced & 2) && trace_wanted();
  g->traced |= 2;
  int s = g->n_segs - 1;
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    if (s >= 0 && g->segs[s].hi == i) {
      if (g->segs[s].lo <= start->id && (st = recompute_segment(g, &g->segs[s], trace)) != TG_OK) return st;
      s--;
    }
    if (!seeded && g->nodes[i]->t_bwd >= t_seed) {
      if ((st = write_seed(g, start, seed)) != TG_OK) return st;
      seeded = 1;
    }
    if (i <= start->id && (st = backward_node(g, g->nodes[i], trace)) != TG_OK) return st;
  }
  return TG_OK;
}

static tg_status check_backward(tg_graph *g, const tg_tensor *out, const char *what) {
  if (!g || !out) return tg_error(TG_ERR_INVALID, "%s: NULL graph or tensor", what);
  if (!g->planned || !g->opts.training)
    return tg_error(TG_ERR_INVALID, "graph '%s': %s needs a plan with training = 1", g->name, what);
  if (!g->ran)
    return tg_error(TG_ERR_INVALID, "graph '%s': %s before a successful run", g->name, what);
  const tg_node *n = tg_node_of(out);
  if (n->id < 0 || n->id >= g->n_nodes || g->nodes[n->id] != n)
    return tg_error(TG_ERR_INVALID, "graph '%s': %s of '%s', which belongs to another graph", g->name, what, out->name);
  if (!n->requires_grad)
    return tg_error(TG_ERR_INVALID, "graph '%s': %s of '%s', which depends on no parameter", g->name,
                    what, out->name);
  return TG_OK;
}

tg_status tg_graph_backward(tg_graph *g, const tg_tensor *loss) {
  tg_status st = check_backward(g, loss, "backward");
  if (st != TG_OK) return st;
  if (loss->ndim != 0 && tg_numel(loss) != 1) {
    char s[64];
    return tg_error(TG_ERR_SHAPE, "graph '%s': backward of '%s' %s: the loss must be a scalar (use "
                    "tg_graph_backward_seeded otherwise)", g->name, loss->name, tg_shape_str(loss, s, sizeof s));
  }
  if (g->store && (st = tg_store_zero_grads(g->store)) != TG_OK) return st;
  return backward_from(g, tg_node_of(loss), NULL);
}

tg_status tg_graph_backward_seeded(tg_graph *g, const tg_tensor *out, const float *seed) {
  tg_status st = check_backward(g, out, "backward_seeded");
  if (st != TG_OK) return st;
  if (!seed) return tg_error(TG_ERR_INVALID, "graph '%s': backward_seeded with a NULL seed", g->name);
  return backward_from(g, tg_node_of(out), seed);
}

const float *tg_graph_grad(const tg_graph *g, const tg_tensor *t) {
  if (!g || !t || !g->planned) return NULL;
  const tg_node *n = tg_node_of(t);
  if (n->id < 0 || n->id >= g->n_nodes || g->nodes[n->id] != n) return NULL;
  return n->grad;
}

tg_status tg_graph_check_guards(const tg_graph *g) {
  if (!g || !g->planned) return tg_error(TG_ERR_INVALID, "check_guards: graph not planned");
  size_t guard = (g->opts.guard_bytes + 63) & ~(size_t)63;
  unsigned char chunk[256];
  for (int i = 0; i < g->n_bufs; i++) {
    const char *at = (const char *)g->arena + g->bufs[i].offset + g->bufs[i].bytes;
    for (size_t done = 0; done < guard; done += sizeof chunk) {
      size_t len = guard - done < sizeof chunk ? guard - done : sizeof chunk;
      tg_status st = g->backend->to_host(g->opts.device, chunk, at + done, len);
      if (st != TG_OK) return st;
      for (size_t j = 0; j < len; j++)
        if (chunk[j] != GUARD_BYTE)
          return tg_error(TG_ERR_INVALID, "graph '%s': guard byte %zu after the %s buffer of '%s' was overwritten",
                          g->name, done + j, g->bufs[i].is_grad ? "gradient" : "value", g->bufs[i].owner);
    }
  }
  return TG_OK;
}
