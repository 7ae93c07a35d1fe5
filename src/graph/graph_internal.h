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
  tg_kernel_args args; /* built by plan; run and backward pass it to the kernels */
  const tg_op_kernels *kern; /* the plan's backend's kernels for the op (NULL for leaves) */
  tg_dtype compute;          /* the dtype the plan chose for the op's kernels (see tg_plan_opts.precision) */
} tg_node;

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
  /* after plan */
  int planned;
  tg_plan_opts opts;
  const struct tg_backend *backend;
  int n_bufs;
  tg_buffer *bufs;
  void *arena;
  size_t arena_bytes, unshared_bytes;
  void *ws;          /* shared kernel workspace (ops with a workspace), ws_bytes long */
  size_t ws_bytes;
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

/* Runs node n's forward (backward = 0) or backward kernel timed, adding to the profile (profile.c; g->prof set). */
tg_status tg_graph_profile_call(tg_graph *g, tg_node *n, int backward);

static inline tg_node *tg_node_of(const tg_tensor *t) { return (tg_node *)(void *)t; }

/* store internals used by the graph */
int tg_store_declare(tg_store *s, const char *name, int ndim, const int64_t *shape, tg_init init,
                     int *index_out);
int tg_store_is_final(const tg_store *s);

#endif
