/* Graph internals shared by the builders, the planner, run and backward. */
#ifndef TG_GRAPH_INTERNAL_H
#define TG_GRAPH_INTERNAL_H

#include <stdio.h>
#include "graph/backend.h"
#include "ops/ops.h"
#include "tickgrad/graph.h"

/* A node: its output tensor comes first so a tg_tensor* from a builder is also a tg_node*. */
typedef struct tg_node {
  tg_tensor out;
  tg_op op;
  int id;
  int n_in;
  struct tg_node *in[TG_MAX_INPUTS];
  tg_attr attr;
  int requires_grad; /* some parameter upstream; always 0 for non-differentiable outputs */
  int param_index;   /* TG_OP_PARAM: index in the store */
  int bound;         /* TG_OP_INPUT: bound since plan */
  float *grad;       /* [numel(out)] gradient storage (arena or store), set by plan */
  /* planning */
  int buf;           /* arena buffer index of out's storage, -1 for leaves */
  int grad_buf;      /* arena buffer index of the gradient, -1 if none or in the store */
  struct tg_node *root; /* storage owner: self, or the node a chain of views aliases */
  int n_consumers;
  int grad_ready;    /* backward: the root's gradient buffer has been zeroed this pass */
  /* recomputation (plan_recompute.c) */
  int block;         /* the marked block it was built in, -1: none */
  int seg;           /* plan: the segment it is recomputed with, -1: none */
  int dropped;       /* plan, storage owners: freed after the last forward use, read again from rbuf */
  int recompute;     /* plan: its forward kernel runs again just before its segment's backward */
  int rbuf;          /* arena buffer index of the recomputed value (owners), -1 if none */
  int t_bwd, t_rc;   /* plan: times of its backward and of its recompute (-1: none) on the timeline */
  tg_tensor rout;    /* out with its data in the recomputed buffer (nodes whose owner is dropped) */
  tg_kernel_args args; /* built by plan; run passes it to the forward kernels */
  tg_kernel_args bargs; /* the same reading recomputed values: backward and the recompute pass it */
  const tg_op_kernels *kern; /* the plan's backend's kernels for the op (NULL for leaves) */
  tg_dtype compute;          /* the dtype the plan chose for the op's kernels (see tg_plan_opts.precision) */
} tg_node;

/* A run of nodes [lo, hi] recomputed together, just before the backward of node hi. */
typedef struct tg_segment {
  int lo, hi;
  int n_rc;     /* nodes with recompute set */
  int block;    /* the marked block, -1 for an implicit segment of TG_RECOMPUTE_ALL */
} tg_segment;

/* One region of the activation arena. */
typedef struct tg_buffer {
  size_t bytes;
  size_t offset;
  int first, last; /* live over steps [first, last] of the forward+backward timeline */
  const char *owner; /* node name, for the printed plan and guard errors */
  int is_grad;
} tg_buffer;

struct tg_graph {
  char name[TG_NAME_MAX];
  tg_store *store;
  tg_status status;
  char error[1024]; /* message of the sticky build error */
  int n_nodes, cap_nodes;
  tg_node **nodes;
  int n_blocks, in_block;           /* blocks begun; 1 while the last one is open */
  char (*block_names)[TG_NAME_MAX]; /* [n_blocks] */
  /* after plan */
  int planned;
  tg_plan_opts opts;
  const struct tg_backend *backend;
  int n_bufs;
  tg_buffer *bufs;
  void *arena;
  size_t arena_bytes, unshared_bytes;
  size_t arena_plain;  /* arena_bytes of the same plan without recomputation */
  int recompute;       /* the plan's effective tg_recompute */
  int n_segs;
  tg_segment *segs;    /* [n_segs] in node order, only those with something to recompute */
  int t_end;           /* the timeline's end: graph outputs live to it */
  void *ws;          /* shared kernel workspace (ops with a workspace), ws_bytes long */
  size_t ws_bytes;
  size_t prepared_bytes; /* the backend's prepare states' memory (tg_backend.prepared_bytes), summed over the nodes */
  uint64_t seed, rng_offset;
  uint64_t fwd_offset; /* rng offset used by the last run, replayed by backward */
  uint64_t *rng_ctr;   /* [2] in device memory: the next run's rng offset, this run's (kernels read it) */
  int traced;          /* TICKGRAD_TRACE=devices: bit 1 forward printed, bit 2 backward printed */
  int ran;             /* a run completed since plan */
  struct tg_graph_prof *prof; /* the profile's totals while profiling is on (profile.c), else NULL */
};

/* Sets the graph's sticky error (first one wins) and returns NULL, for builders. */
tg_tensor *tg_graph_fail(tg_graph *g, tg_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Validates that every input is non-NULL and belongs to g; on failure sets the sticky error. */
int tg_graph_check_inputs(tg_graph *g, const char *op, int n, tg_tensor *const *xs);
/* Appends a node with the given inputs, output dtype and shape; name is "<op>_<id>". Returns its
 * output tensor, or NULL on a previous error or out of memory. */
tg_tensor *tg_graph_add(tg_graph *g, tg_op op, int n_in, tg_tensor *const *in, tg_dtype dtype,
                        int ndim, const int64_t *shape, const tg_attr *attr);

void tg_graph_release_plan(tg_graph *g);

/* plan_recompute.c: marks segments, dropped owners and recomputed nodes for mode (NONE clears them), then the
 * times of every backward and recompute (node k's forward runs at time k; backward from time N on, node k's
 * recompute events of a segment just before the backward of its last node). */
tg_status tg_plan_recompute(tg_graph *g, int mode);
/* The tensor a backward or recompute kernel reads for n's value (its recomputed copy when its owner is dropped). */
const tg_tensor *tg_node_bwd_value(const tg_node *n);
/* 1 when n's backward reads its inputs' (outputs') data: a training plan and n needs a gradient. */
int tg_node_bwd_reads_inputs(const tg_node *n, int training);
int tg_node_bwd_reads_output(const tg_node *n, int training);
/* Runs node n's forward (backward = 0; recomputes too) or backward kernel on args a, timed, adding to the profile
 * (profile.c; g->prof set). */
tg_status tg_graph_profile_call(tg_graph *g, tg_node *n, const tg_kernel_args *a, int backward);

static inline tg_node *tg_node_of(const tg_tensor *t) { return (tg_node *)(void *)t; }

/* store internals used by the graph */
int tg_store_declare(tg_store *s, const char *name, int ndim, const int64_t *shape, tg_init init,
                     int *index_out);
int tg_store_is_final(const tg_store *s);

#endif
