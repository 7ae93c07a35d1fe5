/* Activation recomputation: which values a training plan frees after the forward and recomputes in backward, and when. */
#include <string.h>
#include "graph/graph_internal.h"

static const char *const MODE_NAMES[TG_RECOMPUTE_COUNT] = {"none", "blocks", "all"};

const char *tg_recompute_name(int mode) { return mode >= 0 && mode < TG_RECOMPUTE_COUNT ? MODE_NAMES[mode] : NULL; }

static int is_leaf(const tg_node *n) { return (tg_op_get(n->op)->flags & TG_OPF_LEAF) != 0; }

int tg_node_bwd_reads_inputs(const tg_node *n, int training) {
  return training && n->requires_grad && (tg_op_get(n->op)->bwd_needs & TG_BWD_NEEDS_INPUTS);
}

int tg_node_bwd_reads_output(const tg_node *n, int training) {
  return training && n->requires_grad && (tg_op_get(n->op)->bwd_needs & TG_BWD_NEEDS_OUTPUT);
}

const tg_tensor *tg_node_bwd_value(const tg_node *n) { return n->root->dropped ? &n->rout : &n->out; }

/* The last node (not a leaf) of any marked block, -1 when nothing is marked. */
static int last_marked(const tg_graph *g) {
  int last = -1;
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i]->block >= 0 && !is_leaf(g->nodes[i])) last = i;
  return last;
}

/* Each node's segment: its marked block (blocks, all); with all, also one segment per run of unmarked nodes that
 * ends before the last marked block (numbered after the blocks). Leaves stay in none. */
static void assign_segments(tg_graph *g, int mode) {
  int last = mode == TG_RECOMPUTE_ALL ? last_marked(g) : -1, run = -1, next = g->n_blocks;
  for (int i = 0; i < g->n_nodes; i++) {
    tg_node *n = g->nodes[i];
    n->seg = -1;
    if (mode == TG_RECOMPUTE_NONE || is_leaf(n)) continue;
    if (n->block >= 0) {
      n->seg = n->block;
      run = -1;
    } else if (i < last) {
      if (run < 0) run = next++;
      n->seg = run;
    }
  }
}

/* Storage owners in a segment whose every alias is read only inside that segment and is no graph output. */
static void mark_dropped(tg_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    tg_node *n = g->nodes[i];
    n->dropped = !is_leaf(n) && n->root == n && n->seg >= 0;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    tg_node *n = g->nodes[i];
    if (n->seg != n->root->seg || n->n_consumers == 0) n->root->dropped = 0;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k]->root->seg != n->seg) n->in[k]->root->dropped = 0;
  }
}

/* Nodes of dropped owners whose value something in backward reads: their own backward, a consumer's backward, or a
 * consumer's recompute. Consumers come later, so one reverse pass settles it. */
static void mark_recompute(tg_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->recompute = 0;
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    tg_node *c = g->nodes[i];
    if (is_leaf(c)) continue;
    if (c->root->dropped && tg_node_bwd_reads_output(c, 1)) c->recompute = 1;
    if (!c->recompute && !tg_node_bwd_reads_inputs(c, 1)) continue;
    for (int k = 0; k < c->n_in; k++)
      if (c->in[k]->root->dropped) c->in[k]->recompute = 1;
  }
}

/* Room for segment n in g->segs (cap entries so far). */
static tg_status grow_segments(tg_graph *g, int n, int *cap) {
  if (n < *cap) return TG_OK;
  int nc = *cap ? 2 * *cap : 16;
  tg_segment *s = tg_malloc((size_t)nc * sizeof *s);
  if (!s) return tg_error(TG_ERR_NOMEM, "plan: out of host memory for %d segments", nc);
  if (n) memcpy(s, g->segs, (size_t)n * sizeof *s);
  tg_free(g->segs);
  g->segs = s;
  *cap = nc;
  return TG_OK;
}

/* The segments with something to recompute, as [lo, hi] node ranges in node order (a segment's nodes are
 * consecutive but for leaves). */
static tg_status build_segments(tg_graph *g) {
  tg_free(g->segs);
  g->segs = NULL;
  g->n_segs = 0;
  int n = 0, cap = 0, cur = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const tg_node *nd = g->nodes[i];
    if (nd->seg < 0) continue;
    if (nd->seg != cur) {
      tg_status st = grow_segments(g, n, &cap);
      if (st != TG_OK) return st;
      g->segs[n++] = (tg_segment){i, i, 0, nd->seg < g->n_blocks ? nd->seg : -1};
      cur = nd->seg;
    }
    g->segs[n - 1].hi = i;
    g->segs[n - 1].n_rc += nd->recompute;
  }
  for (int s = 0; s < n; s++)
    if (g->segs[s].n_rc) g->segs[g->n_segs++] = g->segs[s];
  return TG_OK;
}

/* Backward from time N on, node k's after node k+1's; a segment's recompute events, in node order, just before the
 * backward of its last node. */
static void schedule(tg_graph *g) {
  int t = g->n_nodes, s = g->n_segs - 1;
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->t_rc = -1;
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    if (s >= 0 && g->segs[s].hi == i) {
      for (int j = g->segs[s].lo; j <= i; j++)
        if (g->nodes[j]->recompute) g->nodes[j]->t_rc = t++;
      s--;
    }
    g->nodes[i]->t_bwd = t++;
  }
  g->t_end = t;
}

tg_status tg_plan_recompute(tg_graph *g, int mode) {
  assign_segments(g, mode);
  mark_dropped(g);
  mark_recompute(g);
  tg_status st = build_segments(g);
  if (st != TG_OK) return st;
  schedule(g);
  g->recompute = mode;
  return TG_OK;
}
