/* ONNX export of a built graph: its nodes mapped to ONNX nodes (opset 17), its parameters to initializers. */
#ifndef TG_GRAPH_ONNX_H
#define TG_GRAPH_ONNX_H

#include "tickgrad/graph.h"

#define TG_ONNX_OPSET 17
#define TG_ONNX_MAX_IO 8
#define TG_ONNX_MAX_META 16

/* What to export. The model is built twice by the same builder calls, at two batch sizes (graph[0] at batch[0],
 * graph[1] at batch[1], batch[0] != batch[1], one store holding the loaded weights): the two walks agree node by
 * node, and what differs between them (input and output dims, a reshape's target) is the dynamic batch axis "batch".
 *   inputs: the tg_input nodes the ONNX graph takes (by name; their batch dims become "batch");
 *   consts: the other tg_input nodes, each written as an initializer from data (numel floats of its shape);
 *   outputs: the nodes it gives, out[k][0] of graph[0] and out[k][1] of graph[1], named out_name[k].
 * Nodes no output depends on are left out. model names the model in errors ("op X of model Y has no ONNX form"). */
typedef struct tg_onnx_spec {
  const tg_graph *graph[2];
  int64_t batch[2];
  const char *model;
  int n_in;
  const char *in_name[TG_ONNX_MAX_IO];
  int n_const;
  const char *const_name[TG_ONNX_MAX_IO];
  const float *const_data[TG_ONNX_MAX_IO];
  int n_out;
  const tg_tensor *out[TG_ONNX_MAX_IO][2];
  const char *out_name[TG_ONNX_MAX_IO];
  int n_meta;                       /* metadata_props: key = value */
  const char *meta_key[TG_ONNX_MAX_META];
  const char *meta_value[TG_ONNX_MAX_META];
  const char *doc;                  /* the model's doc_string */
} tg_onnx_spec;

/* Writes the model to path atomically (nothing is written on any error). TG_ERR_UNSUPPORTED naming the op, the node
 * and the model for an op with no ONNX form, or this build's missing packages when it was built without protobuf-c;
 * TG_ERR_NUMERIC naming the parameter and index of a weight that is not finite; TG_ERR_IO naming the path. */
tg_status tg_onnx_export(const tg_onnx_spec *spec, const char *path);

/* 1 when this build writes ONNX files; else 0 and why[cap] names the packages it was built without. */
int tg_onnx_available(char *why, size_t cap);

#endif
