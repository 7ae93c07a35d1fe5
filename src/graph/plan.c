/* Planning: device and kernel checks, activation liveness, and the arena layout with reuse. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "graph/backend.h"
#include "graph/graph_internal.h"
#include "graph/store_mirror.h"

#define ARENA_ALIGN 64
#define GUARD_BYTE 0xA5

tg_plan_opts tg_plan_defaults(tg_device dev) {
  tg_plan_opts o;
  memset(&o, 0, sizeof o);
  o.device = dev;
  o.training = 1;
  return o;
}

static size_t align_up(size_t x) { return (x + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1); }

static tg_status check_devices_and_kernels(tg_graph *g, const tg_plan_opts *o) {
  char want[16], have[16];
  if (o->precision != TG_F32 && o->precision != TG_BF16) { /* a value that is no dtype at all shows as its number */
    char prec[16];
    snprintf(prec, sizeof prec, "%d", (int)o->precision);
    return tg_error(TG_ERR_INVALID, "graph '%s': precision %s is not one of f32, bf16", g->name,
                    (int)o->precision >= 0 && o->precision < TG_DTYPE_COUNT ? tg_dtype_name(o->precision) : prec);
  }
  tg_device_str(o->device, want, sizeof want);
  for (int i = 0; i < g->n_nodes; i++) {
    tg_node *n = g->nodes[i];
    const tg_op_def *def = tg_op_get(n->op);
    if (def->flags & TG_OPF_LEAF) continue;
    for (int k = 0; k < n->n_in; k++) {
      tg_node *in = n->in[k];
      if (in->op == TG_OP_PARAM && !tg_device_eq(tg_store_device(g->store), o->device))
        return tg_error(TG_ERR_DEVICE,
                        "graph '%s': op '%s' (%s) reads parameter '%s' on %s but the graph is "
                        "planned for %s; create the store on %s or plan on %s",
                        g->name, def->name, n->out.name, in->out.name,
                        tg_device_str(tg_store_device(g->store), have, sizeof have), want, want,
                        have);
    }
    const tg_backend *be = tg_backend_for(o->device.kind);
    n->compute = o->precision == TG_BF16 && tg_op_is_gemm(n->op) ? TG_BF16 : TG_F32;
    n->kern = be ? be->kernels(n->op, n->compute) : NULL;
    if (n->compute == TG_BF16 && (!n->kern || !n->kern->fwd))
      return tg_error(TG_ERR_UNSUPPORTED, "graph '%s': op '%s' (%s) has no bf16 %s kernel in this build; plan with "
                      "precision f32", g->name, def->name, n->out.name, want);
    if (!n->kern || !n->kern->fwd)
      return tg_error(TG_ERR_UNSUPPORTED, "graph '%s': op '%s' (%s) has no %s kernel in this build",
                      g->name, def->name, n->out.name, want);
    if (o->training && n->requires_grad && !n->kern->bwd)
      return tg_error(TG_ERR_UNSUPPORTED,
                      "graph '%s': op '%s' (%s) has no %s backward kernel in this build", g->name,
                      def->name, n->out.name, want);
  }
  return TG_OK;
}

/* Adds a buffer of bytes live over [first, last]; returns its index or -1. */
static int add_buffer(tg_graph *g, int *cap, size_t bytes, int first, int last, const char *owner,
                      int is_grad) {
  if (g->n_bufs == *cap) {
    int nc = *cap ? *cap * 2 : 64;
    tg_buffer *nb = tg_malloc((size_t)nc * sizeof *nb);
    if (!nb) return -1;
    if (g->n_bufs) memcpy(nb, g->bufs, (size_t)g->n_bufs * sizeof *nb);
    tg_free(g->bufs);
    g->bufs = nb;
    *cap = nc;
  }
  tg_buffer *b = &g->bufs[g->n_bufs];
  b->bytes = bytes;
  b->offset = 0;
  b->first = first;
  b->last = last;
  b->owner = owner;
  b->is_grad = is_grad;
  return g->n_bufs++;
}

static void extend(tg_buffer *b, int t) {
  if (!b) return;
  if (t < b->first) b->first = t;
  if (t > b->last) b->last = t;
}

/* Storage owners (a view's is its input's) and consumer counts. */
static void link_nodes(tg_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    tg_node *n = g->nodes[i];
    n->n_consumers = 0;
    n->root = (tg_op_get(n->op)->flags & TG_OPF_VIEW) ? n->in[0]->root : n;
  }
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_in; k++) g->nodes[i]->in[k]->n_consumers++;
}

/* The buffer holding n's value when backward and recompute read it, NULL for leaves. */
static tg_buffer *value_buf(tg_graph *g, const tg_node *n) {
  const tg_node *r = n->root;
  int b = r->dropped && r->rbuf >= 0 ? r->rbuf : r->buf;
  return b >= 0 ? &g->bufs[b] : NULL;
}

/* A value buffer per storage owner from its forward, and a second from its recompute when it is dropped. */
static tg_status value_buffers(tg_graph *g, int *cap) {
  for (int i = 0; i < g->n_nodes; i++) {
    tg_node *n = g->nodes[i];
    n->buf = n->grad_buf = n->rbuf = -1;
    if (tg_op_get(n->op)->flags & TG_OPF_LEAF || n->root != n) continue;
    size_t bytes = align_up(tg_nbytes(&n->out));
    int again = n->dropped && n->recompute;
    n->buf = add_buffer(g, cap, bytes, i, i, n->out.name, 0);
    if (n->buf >= 0 && again) n->rbuf = add_buffer(g, cap, bytes, n->t_rc, n->t_rc, n->out.name, 0);
    if (n->buf < 0 || (again && n->rbuf < 0)) return tg_error(TG_ERR_NOMEM, "plan: out of host memory");
  }
  return TG_OK;
}

/* Each value lives from its write to its last reader: forward consumers, backward steps whose op reads its inputs or
 * its output, recomputes that read it; graph outputs to the end. */
static void value_liveness(tg_graph *g, int training) {
  for (int i = 0; i < g->n_nodes; i++) {
    tg_node *n = g->nodes[i];
    if (n->root->buf >= 0) {
      if (n->n_consumers == 0) extend(&g->bufs[n->root->buf], g->t_end); /* graph outputs stay readable */
      if (tg_node_bwd_reads_output(n, training)) extend(value_buf(g, n), n->t_bwd);
      if (n->recompute) extend(value_buf(g, n), n->t_rc);
    }
    int reads = tg_node_bwd_reads_inputs(n, training);
    for (int k = 0; k < n->n_in; k++) {
      tg_node *in = n->in[k];
      if (in->root->buf < 0) continue;
      extend(&g->bufs[in->root->buf], i);
      if (reads) extend(value_buf(g, in), n->t_bwd);
      if (n->recompute) extend(value_buf(g, in), n->t_rc);
    }
  }
}

/* Gradient buffers: written first by the latest consumer's backward, read by the node's own. */
static tg_status grad_buffers(tg_graph *g, int *cap) {
  for (int i = 0; i < g->n_nodes; i++) {
    tg_node *n = g->nodes[i];
    if (!n->requires_grad || n->op == TG_OP_PARAM || n->root != n) continue;
    int first = n->n_consumers == 0 ? g->n_nodes : n->t_bwd;
    n->grad_buf = add_buffer(g, cap, align_up(tg_nbytes(&n->out)), first, n->t_bwd, n->out.name, 1);
    if (n->grad_buf < 0) return tg_error(TG_ERR_NOMEM, "plan: out of host memory");
  }
  for (int i = 0; i < g->n_nodes; i++) {
    tg_node *n = g->nodes[i];
    if (!n->requires_grad) continue;
    if (n->n_consumers == 0 && n->root->grad_buf >= 0)
      extend(&g->bufs[n->root->grad_buf], g->n_nodes); /* a seed may be written at the start */
    for (int k = 0; k < n->n_in; k++) {
      tg_node *in = n->in[k];
      if (in->requires_grad && in->root->grad_buf >= 0) extend(&g->bufs[in->root->grad_buf], n->t_bwd);
    }
    if (n->root != n && n->root->grad_buf >= 0) extend(&g->bufs[n->root->grad_buf], n->t_bwd);
  }
  return TG_OK;
}

/* Liveness of every activation and activation gradient on the timeline tg_plan_recompute laid out. */
static tg_status compute_buffers(tg_graph *g, int training) {
  int cap = 0;
  tg_free(g->bufs);
  g->bufs = NULL;
  g->n_bufs = 0;
  tg_status st = value_buffers(g, &cap);
  if (st != TG_OK) return st;
  value_liveness(g, training);
  return training ? grad_buffers(g, &cap) : TG_OK;
}

typedef struct { int index; size_t bytes; } order_item;

static int order_cmp(const void *pa, const void *pb) {
  const order_item *a = pa, *b = pb;
  if (a->bytes != b->bytes) return a->bytes < b->bytes ? 1 : -1;
  return a->index - b->index;
}

/* Offsets a buffer may not take: at in (lo, hi) is forbidden. */
typedef struct { int64_t lo, hi; } span;

static int span_cmp(const void *pa, const void *pb) {
  const span *a = pa, *b = pb;
  return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The offsets at which [at + a, at + a + len) would overlap [lo, hi). */
static span forbid(size_t lo, size_t hi, size_t a, size_t len) {
  return (span){(int64_t)lo - (int64_t)a - (int64_t)len, (int64_t)hi - (int64_t)a};
}

/* What placed buffer o forbids b: with overlapping lifetimes (or no reuse) b's bytes and guard may not touch o's; at
 * other times they may share memory, but no buffer's bytes may lie on another's guard (guards are checked after the
 * whole run; two guards may coincide). Returns the spans added to out. */
static int forbidden_by(const tg_buffer *o, const tg_buffer *b, size_t guard, int no_reuse, span *out) {
  size_t o_end = o->offset + o->bytes, o_hi = o_end + guard;
  if (no_reuse || (o->first <= b->last && b->first <= o->last)) {
    out[0] = forbid(o->offset, o_hi, 0, b->bytes + guard);
    return 1;
  }
  if (!guard) return 0;
  out[0] = forbid(o->offset, o_end, b->bytes, guard); /* b's guard on o's bytes */
  out[1] = forbid(o_end, o_hi, 0, b->bytes);          /* b's bytes on o's guard */
  return 2;
}

/* The lowest offset outside every forbidden span. */
static size_t first_fit(span *busy, int nb) {
  qsort(busy, (size_t)nb, sizeof *busy, span_cmp);
  int64_t at = 0;
  for (int j = 0; j < nb; j++) {
    if (busy[j].lo >= at) break;
    if (busy[j].hi > at) at = busy[j].hi;
  }
  return (size_t)at;
}

/* Greedy first fit, largest first: each buffer takes the lowest offset free over its lifetime. */
static tg_status layout(tg_graph *g, size_t guard, int no_reuse) {
  int n = g->n_bufs;
  g->arena_bytes = g->unshared_bytes = 0;
  if (n == 0) return TG_OK;
  guard = guard ? align_up(guard) : 0;
  order_item *order = tg_malloc((size_t)n * sizeof *order);
  span *busy = tg_malloc(2 * (size_t)n * sizeof *busy);
  int *placed = tg_malloc((size_t)n * sizeof *placed);
  if (!order || !busy || !placed) {
    tg_free(order);
    tg_free(busy);
    tg_free(placed);
    return tg_error(TG_ERR_NOMEM, "plan: out of host memory");
  }
  for (int i = 0; i < n; i++) {
    order[i].index = i;
    order[i].bytes = g->bufs[i].bytes;
    g->unshared_bytes += g->bufs[i].bytes;
  }
  qsort(order, (size_t)n, sizeof *order, order_cmp);
  for (int oi = 0; oi < n; oi++) {
    tg_buffer *b = &g->bufs[order[oi].index];
    int nb = 0;
    for (int j = 0; j < oi; j++) nb += forbidden_by(&g->bufs[placed[j]], b, guard, no_reuse, busy + nb);
    b->offset = first_fit(busy, nb);
    if (b->offset + b->bytes + guard > g->arena_bytes) g->arena_bytes = b->offset + b->bytes + guard;
    placed[oi] = order[oi].index;
  }
  g->unshared_bytes += (size_t)n * guard;
  tg_free(order);
  tg_free(busy);
  tg_free(placed);
  return TG_OK;
}

/* The store's bf16 mirror of what input k of n reads, when n computes in bf16 and the input is a parameter or a view of
 * one (contiguous, at an offset into the store's values); NULL otherwise. */
static const uint16_t *input_bf16(tg_graph *g, const tg_node *n, int k) {
  const uint16_t *mirror = g->store ? tg_store_mirror(g->store) : NULL;
  if (n->compute != TG_BF16 || !mirror || n->in[k]->root->op != TG_OP_PARAM) return NULL;
  ptrdiff_t at = (const float *)n->in[k]->out.data - tg_store_values_unmarked(g->store); /* its offset in the store */
  if (at < 0 || (size_t)at + (size_t)tg_numel(&n->in[k]->out) > tg_store_numel(g->store)) return NULL;
  return mirror + at;
}

/* n's kernel arguments; with bwd, reading the recomputed values of dropped owners (backward and recompute). */
static void build_args(tg_graph *g, tg_node *n, int bwd) {
  tg_kernel_args *a = bwd ? &n->bargs : &n->args;
  memset(a, 0, sizeof *a);
  a->n_in = n->n_in;
  for (int k = 0; k < n->n_in; k++) {
    a->in[k] = bwd ? tg_node_bwd_value(n->in[k]) : &n->in[k]->out;
    a->in_grad[k] = n->in[k]->requires_grad ? n->in[k]->grad : NULL;
    a->in_bf16[k] = input_bf16(g, n, k);
  }
  a->out = bwd ? tg_node_bwd_value(n) : &n->out;
  a->out_grad = n->grad;
  a->attr = &n->attr;
  a->seed = g->seed;
  a->rng_stream = (uint64_t)n->id;
  a->rng_offset_dev = g->opts.device.kind == TG_CPU ? NULL : g->rng_ctr + 1;
  a->node_name = n->out.name;
  a->compute = n->compute;
}

/* What the backend prepares per node once (GEMM primitives for their shapes), released with the plan. */
static tg_status prepare_nodes(tg_graph *g, const tg_backend *be) {
  if (!be->prepare) return TG_OK;
  for (int i = 0; i < g->n_nodes; i++) {
    tg_node *n = g->nodes[i];
    if (tg_op_get(n->op)->flags & TG_OPF_LEAF) continue;
    tg_status st = be->prepare(n->op, &n->args, &n->args.prepared);
    if (st != TG_OK) return st;
    n->bargs.prepared = n->args.prepared; /* the same shapes, read from recomputed values or kept ones */
    if (n->args.prepared && be->prepared_bytes) g->prepared_bytes += be->prepared_bytes(n->args.prepared);
    if (n->args.compute != n->compute) { /* a bf16 GEMM node the backend settled to f32: no mirror reads either */
      n->compute = n->bargs.compute = n->args.compute;
      memset(n->args.in_bf16, 0, sizeof n->args.in_bf16);
      memset(n->bargs.in_bf16, 0, sizeof n->bargs.in_bf16);
    }
  }
  return TG_OK;
}

/* One scratch region for every op that asks for one, as large as the largest request. */
static tg_status plan_workspace(tg_graph *g, const tg_backend *be, const tg_plan_opts *opts) {
  size_t need = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const tg_op_def *d = tg_op_get(g->nodes[i]->op);
    if (d->workspace) {
      size_t b = d->workspace(&g->nodes[i]->args);
      if (b > need) need = b;
    }
  }
  if (need == 0) return TG_OK;
  need = align_up(need);
  tg_status st = be->alloc(opts->device, need, &g->ws);
  if (st != TG_OK) {
    char dev[16];
    return tg_error(st, "graph '%s': out of memory on %s for the %.1f MiB kernel workspace: %s", g->name,
                    tg_device_str(opts->device, dev, sizeof dev), (double)need / 1048576.0, tg_last_error());
  }
  g->ws_bytes = need;
  for (int i = 0; i < g->n_nodes; i++)
    if (tg_op_get(g->nodes[i]->op)->workspace) {
      g->nodes[i]->args.ws = g->nodes[i]->bargs.ws = g->ws;
      g->nodes[i]->args.ws_bytes = g->nodes[i]->bargs.ws_bytes = need;
    }
  return TG_OK;
}

/* The arena did not fit: the plan's numbers, and (when the inputs share a leading batch dimension
 * and the device says what is free) the batch that would fit if activations scale with it. */
static tg_status arena_failed(tg_graph *g, const tg_plan_opts *opts, tg_status st) {
  char dev[16], why[600], fit[400] = "";
  snprintf(why, sizeof why, "%s", tg_last_error());
  tg_device_str(opts->device, dev, sizeof dev);
  double mib = 1048576.0, pbytes = g->store ? (double)tg_store_numel(g->store) * sizeof(float) : 0.0;
  int64_t batch = -1;
  const char *input = NULL;
  for (int i = 0; i < g->n_nodes; i++) {
    const tg_node *n = g->nodes[i];
    if (n->op != TG_OP_INPUT || n->out.ndim < 1) continue;
    if (batch < 0) batch = n->out.shape[0], input = n->out.name;
    else if (n->out.shape[0] != batch) batch = 0; /* no common batch dimension */
  }
  tg_device_info info;
  const tg_backend *be = tg_backend_for(opts->device.kind);
  if (batch > 0 && be && be->info && be->info(opts->device.index, &info) == TG_OK) {
    double per_row = (double)g->arena_bytes / (double)batch;
    int64_t rows = (int64_t)((double)info.free_bytes / per_row);
    snprintf(fit, sizeof fit, "; the device has %.1f MiB free, so with activations proportional to the batch "
             "(dim 0 of input '%s' = %lld) a batch of about %lld would fit", (double)info.free_bytes / mib, input,
             (long long)batch, (long long)(rows < batch ? rows : batch - 1));
  }
  char rc[96] = "";
  if (g->recompute != TG_RECOMPUTE_NONE)
    snprintf(rc, sizeof rc, "; recompute %s, %.1f MiB without", tg_recompute_name(g->recompute),
             (double)g->arena_plain / mib);
  return tg_error(st, "graph '%s': out of memory on %s for the %.1f MiB activation arena (plan: parameters %.1f "
                  "MiB%s, activations %.1f MiB in %d buffers, %.1f MiB without reuse%s)%s: %s",
                  g->name, dev, (double)g->arena_bytes / mib, pbytes / mib, opts->training ? " + the same for gradients" : "",
                  (double)g->arena_bytes / mib, g->n_bufs, (double)g->unshared_bytes / mib, rc, fit, why);
}

/* The arena of the same plan without recomputation, for the numbers that compare the two. */
static tg_status plain_arena(tg_graph *g, const tg_plan_opts *opts) {
  tg_status st = tg_plan_recompute(g, TG_RECOMPUTE_NONE);
  if (st == TG_OK) st = compute_buffers(g, opts->training);
  if (st == TG_OK) st = layout(g, opts->guard_bytes, opts->no_reuse);
  g->arena_plain = g->arena_bytes;
  return st;
}

/* Timeline, buffers and layout for the plan's recompute mode (and the arena without it). */
static tg_status plan_memory(tg_graph *g, const tg_plan_opts *opts) {
  int mode = opts->training ? opts->recompute : TG_RECOMPUTE_NONE;
  link_nodes(g);
  tg_status st = mode != TG_RECOMPUTE_NONE ? plain_arena(g, opts) : TG_OK;
  if (st == TG_OK) st = tg_plan_recompute(g, mode);
  if (st == TG_OK) st = compute_buffers(g, opts->training);
  if (st == TG_OK) st = layout(g, opts->guard_bytes, opts->no_reuse);
  if (mode == TG_RECOMPUTE_NONE) g->arena_plain = g->arena_bytes;
  return st;
}

/* Misuse the plan itself finds: a block left open, an unknown recompute mode. */
static tg_status check_plan_args(tg_graph *g, const tg_plan_opts *opts) {
  if (g->status == TG_OK && g->in_block)
    tg_graph_fail(g, TG_ERR_INVALID, "plan: block '%s' was begun but never ended (tg_graph_block_end)",
                  g->block_names[g->n_blocks - 1]);
  if (g->status != TG_OK) return tg_error(g->status, "%s", g->error);
  if (!tg_recompute_name(opts->recompute))
    return tg_error(TG_ERR_INVALID, "graph '%s': plan: recompute %d is not one of none, blocks, all", g->name,
                    opts->recompute);
  return TG_OK;
}

tg_status tg_graph_plan(tg_graph *g, const tg_plan_opts *opts) {
  if (!g || !opts) return tg_error(TG_ERR_INVALID, "plan: NULL graph or options");
  tg_status st = check_plan_args(g, opts);
  if (st != TG_OK) return st;
  char dev[16];
  const tg_backend *be = tg_backend_for(opts->device.kind);
  if (!be)
    return tg_error(TG_ERR_DEVICE,
                    "graph '%s': cannot plan for %s: that backend is not compiled into this build "
                    "(see `tickgrad devices`)",
                    g->name, tg_device_str(opts->device, dev, sizeof dev));
  tg_graph_release_plan(g);
  if ((st = check_devices_and_kernels(g, opts)) != TG_OK) return st;
  if (g->store && (st = tg_store_finalize(g->store)) != TG_OK) return st;
  if (g->store && opts->precision == TG_BF16 && (st = tg_store_mirror_alloc(g->store, g->name)) != TG_OK) return st;
  if ((st = plan_memory(g, opts)) != TG_OK) return st;
  if (g->arena_bytes && (st = be->alloc(opts->device, g->arena_bytes, &g->arena)) != TG_OK) {
    tg_graph_release_plan(g);
    return arena_failed(g, opts, st);
  }
  g->backend = be;
  g->opts = *opts;
  uint64_t ctr[2] = {g->rng_offset, g->rng_offset};
  if ((st = be->alloc(opts->device, sizeof ctr, (void **)&g->rng_ctr)) != TG_OK ||
      (st = be->from_host(opts->device, g->rng_ctr, ctr, sizeof ctr)) != TG_OK) {
    tg_graph_release_plan(g);
    return st;
  }
  char *arena = g->arena;
  for (int i = 0; i < g->n_nodes; i++) {
    tg_node *n = g->nodes[i];
    n->out.device = opts->device;
    n->grad = NULL;
    if (n->op == TG_OP_PARAM) {
      tg_param_info p = tg_store_param(g->store, n->param_index);
      n->out.data = tg_store_values_unmarked(g->store) + p.offset;
      n->grad = tg_store_grads(g->store) + p.offset;
    } else if (n->op == TG_OP_INPUT) {
      n->out.data = NULL;
      n->bound = 0;
    } else if (n->root != n && (tg_op_get(n->root->op)->flags & TG_OPF_LEAF)) {
      n->out.data = n->root->out.data; /* a view of a parameter or input (bind refreshes inputs) */
      n->grad = n->root->grad;
    } else {
      n->out.data = arena + g->bufs[n->root->buf].offset;
      if (n->root->grad_buf >= 0) n->grad = (float *)(arena + g->bufs[n->root->grad_buf].offset);
    }
    n->rout = n->out;
    if (n->root->rbuf >= 0) n->rout.data = arena + g->bufs[n->root->rbuf].offset;
    if (n->op == TG_OP_DROPOUT) n->attr.i[0] = opts->training;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    build_args(g, g->nodes[i], 0);
    build_args(g, g->nodes[i], 1);
  }
  if ((st = plan_workspace(g, be, opts)) != TG_OK || (st = prepare_nodes(g, be)) != TG_OK) {
    tg_graph_release_plan(g);
    return st;
  }
  if (opts->guard_bytes)
    for (int i = 0; i < g->n_bufs; i++)
      be->fill_bytes(opts->device, arena + g->bufs[i].offset + g->bufs[i].bytes, align_up(opts->guard_bytes),
                     GUARD_BYTE);
  g->planned = 1;
  g->ran = 0;
  if (g->prof && !be->host_memory) tg_graph_profile_enable(g, 0); /* host timing means nothing there */
  if (opts->log) tg_graph_print_plan(g, opts->log);
  return TG_OK;
}

tg_plan_stats tg_graph_stats(const tg_graph *g) {
  tg_plan_stats s;
  memset(&s, 0, sizeof s);
  s.arena_bytes = g->arena_bytes;
  s.unshared_bytes = g->unshared_bytes;
  s.workspace_bytes = g->ws_bytes;
  s.prepared_bytes = g->prepared_bytes;
  s.param_bytes = g->store ? tg_store_numel(g->store) * sizeof(float) : 0;
  s.nodes = g->n_nodes;
  s.buffers = g->n_bufs;
  s.recompute = g->recompute;
  s.segments = g->n_segs;
  for (int i = 0; i < g->n_segs; i++) s.recomputed += g->segs[i].n_rc;
  s.arena_bytes_no_recompute = g->arena_plain;
  return s;
}

static void print_bytes(FILE *f, size_t b) {
  if (b >= (1u << 20)) fprintf(f, "%.2f MiB", (double)b / (1u << 20));
  else if (b >= 1024) fprintf(f, "%.1f KiB", (double)b / 1024);
  else fprintf(f, "%zu B", b);
}

void tg_graph_print_plan(const tg_graph *g, FILE *f) {
  char dev[16];
  if (!g->planned) {
    fprintf(f, "graph '%s': not planned\n", g->name);
    return;
  }
  int ops = 0, params = 0, inputs = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i]->op == TG_OP_PARAM) params++;
    else if (g->nodes[i]->op == TG_OP_INPUT) inputs++;
    else ops++;
  }
  size_t pbytes = g->store ? tg_store_numel(g->store) * sizeof(float) : 0;
  fprintf(f, "plan '%s' on %s (%s): %d ops, %d parameters, %d inputs\n", g->name,
          tg_device_str(g->opts.device, dev, sizeof dev), g->opts.training ? "training" : "inference",
          ops, params, inputs);
  fprintf(f, "  parameters  ");
  print_bytes(f, pbytes);
  fprintf(f, " (%zu floats)", g->store ? tg_store_numel(g->store) : 0);
  if (g->opts.training) {
    fprintf(f, "; gradients ");
    print_bytes(f, pbytes);
  }
  fprintf(f, "\n  activations ");
  print_bytes(f, g->arena_bytes);
  fprintf(f, " in one arena (%d buffers, ", g->n_bufs);
  print_bytes(f, g->unshared_bytes);
  fprintf(f, " without reuse");
  if (g->recompute != TG_RECOMPUTE_NONE) {
    tg_plan_stats st = tg_graph_stats(g);
    fprintf(f, "; recompute %s: %d ops of %d segments run again in backward, ", tg_recompute_name(g->recompute),
            st.recomputed, st.segments);
    print_bytes(f, g->arena_plain);
    fprintf(f, " without");
  }
  fprintf(f, ")\n");
  if (g->ws_bytes) {
    fprintf(f, "  kernel workspace ");
    print_bytes(f, g->ws_bytes);
    fprintf(f, "\n");
  }
  if (g->prepared_bytes) {
    fprintf(f, "  kept by the kernels ");
    print_bytes(f, g->prepared_bytes);
    fprintf(f, " (bf16 copies of GEMM inputs, packed by the forward for the backward)\n");
  }
  if (g->opts.precision == TG_BF16) {
    int bf16 = 0, settled = 0; /* settled: GEMM ops the backend runs in f32, where bf16 would be slower */
    for (int i = 0; i < g->n_nodes; i++) {
      const tg_node *n = g->nodes[i];
      bf16 += n->kern && n->compute == TG_BF16;
      settled += n->kern && n->compute == TG_F32 && tg_op_is_gemm(n->op);
    }
    fprintf(f, "  precision bf16: %d GEMM ops with bf16 operands and f32 accumulation; ", bf16);
    if (settled)
      fprintf(f, "%d GEMM ops in f32 (too small for the device's bf16 GEMMs: rounding them would cost more than it "
              "saves); ", settled);
    fprintf(f, "the other %d ops in f32 (no bf16 kernels by design: norms, softmax, losses, scans, elementwise)\n",
            ops - bf16 - settled);
  }
}
