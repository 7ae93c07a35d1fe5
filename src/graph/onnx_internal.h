/* The ONNX writer's pieces: a pool owning every protobuf-c message, node and initializer helpers, the op mapping. */
#ifndef TG_GRAPH_ONNX_INTERNAL_H
#define TG_GRAPH_ONNX_INTERNAL_H

#include <onnx/onnx.pb-c.h>
#include "graph/graph_internal.h"
#include "graph/onnx.h"

typedef struct ox_chunk ox_chunk;

/* One export: the pool (chunks freed together), the nodes and initializers made so far, the first error. */
typedef struct ox_ctx {
  ox_chunk *chunks;
  int nomem;
  Onnx__NodeProto **nodes;
  size_t n_nodes, cap_nodes;
  Onnx__TensorProto **inits;
  size_t n_inits, cap_inits;
  const tg_onnx_spec *spec;
  const tg_graph *g;          /* graph[0]: the one whose shapes the nodes are written with */
  const tg_graph *g2;         /* graph[1]: the same nodes at the other batch size */
} ox_ctx;

/* Zeroed memory from the pool (NULL and ctx->nomem set when out of memory). */
void *ox_alloc(ox_ctx *c, size_t bytes);
/* A pooled string from a printf format. */
char *ox_str(ox_ctx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void ox_free(ox_ctx *c);

/* A node op_type(in...) -> out, appended in order; attributes are added to what it returns (NULL: out of memory). */
Onnx__NodeProto *ox_node(ox_ctx *c, const char *op_type, int n_in, const char *const *in, const char *out);
void ox_attr_int(ox_ctx *c, Onnx__NodeProto *n, const char *name, int64_t v);
void ox_attr_float(ox_ctx *c, Onnx__NodeProto *n, const char *name, float v);
void ox_attr_ints(ox_ctx *c, Onnx__NodeProto *n, const char *name, int count, const int64_t *v);

/* Initializers named name (returned, pooled): f32 or i64 of a shape, or a bool tensor (values 0/1). */
const char *ox_init_f32(ox_ctx *c, const char *name, int ndim, const int64_t *dims, const float *data);
const char *ox_init_i64(ox_ctx *c, const char *name, int ndim, const int64_t *dims, const int64_t *data);
const char *ox_init_bool(ox_ctx *c, const char *name, int ndim, const int64_t *dims, const uint8_t *data);
/* A 1-d i64 initializer of n values (axes, shapes, starts) named after node n and what. */
const char *ox_ints(ox_ctx *c, const tg_node *n, const char *what, int count, const int64_t *v);
/* A scalar f32 initializer named after node n and what. */
const char *ox_scalar(ox_ctx *c, const tg_node *n, const char *what, float v);
/* The name of an intermediate value of node n's mapping. */
const char *ox_tmp(ox_ctx *c, const tg_node *n, const char *what);

/* Node n (of graph[0]; n2 is the same node of graph[1]) as ONNX nodes writing n's name. TG_ERR_UNSUPPORTED naming the
 * op, the node and the model when the op has no ONNX form (or none with a dynamic batch). */
tg_status ox_map_node(ox_ctx *c, const tg_node *n, const tg_node *n2);

#endif
