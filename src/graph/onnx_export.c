/* ONNX export of a graph: walk the nodes an output needs, parameters and constants as initializers, inputs and outputs
 * with a dynamic batch axis, metadata; packed by protobuf-c and written atomically. */
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "base/files.h"
#include "graph/onnx_internal.h"
#include "tickgrad/version.h"

#define ONNX_IR_VERSION 8 /* the IR version of opset 17 (ONNX 1.12) */

int tg_onnx_available(char *why, size_t cap) {
  if (why && cap) why[0] = '\0';
  return 1;
}

static int32_t onnx_dtype(tg_dtype dt) {
  switch (dt) {
    case TG_F32: return ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    case TG_I32: return ONNX__TENSOR_PROTO__DATA_TYPE__INT32;
    case TG_I64: return ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    default: return ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
  }
}

/* A graph input or output: name, dtype and dims, those that differ between the two batch sizes as "batch". */
static Onnx__ValueInfoProto *value_info(ox_ctx *c, const char *name, const tg_tensor *t, const tg_tensor *t2) {
  Onnx__ValueInfoProto *v = ox_alloc(c, sizeof *v);
  Onnx__TypeProto *tp = ox_alloc(c, sizeof *tp);
  Onnx__TypeProto__Tensor *tt = ox_alloc(c, sizeof *tt);
  Onnx__TensorShapeProto *sh = ox_alloc(c, sizeof *sh);
  Onnx__TensorShapeProto__Dimension **dims = ox_alloc(c, (size_t)(t->ndim > 0 ? t->ndim : 1) * sizeof *dims);
  if (!v || !tp || !tt || !sh || !dims) return NULL;
  onnx__value_info_proto__init(v);
  onnx__type_proto__init(tp);
  onnx__type_proto__tensor__init(tt);
  onnx__tensor_shape_proto__init(sh);
  for (int k = 0; k < t->ndim; k++) {
    Onnx__TensorShapeProto__Dimension *d = ox_alloc(c, sizeof *d);
    if (!d) return NULL;
    onnx__tensor_shape_proto__dimension__init(d);
    if (t->shape[k] != t2->shape[k]) {
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      d->dim_param = "batch";
    } else {
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      d->dim_value = t->shape[k];
    }
    dims[k] = d;
  }
  sh->n_dim = (size_t)t->ndim;
  sh->dim = dims;
  tt->has_elem_type = 1;
  tt->elem_type = onnx_dtype(t->dtype);
  tt->shape = sh;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  v->name = (char *)name;
  v->type = tp;
  return v;
}

/* The two graphs were built by the same calls: same nodes, ops and inputs. */
static tg_status check_twins(const tg_onnx_spec *s) {
  const tg_graph *a = s->graph[0], *b = s->graph[1];
  if (!a || !b || s->batch[0] == s->batch[1] || s->n_out < 1 || s->n_out > TG_ONNX_MAX_IO || s->n_in > TG_ONNX_MAX_IO ||
      s->n_const > TG_ONNX_MAX_IO || s->n_meta > TG_ONNX_MAX_META)
    return tg_error(TG_ERR_INVALID, "onnx export of %s: needs the model built at two batch sizes and 1 to %d outputs",
                    s->model, TG_ONNX_MAX_IO);
  tg_status st = tg_graph_status(a);
  if (st == TG_OK) st = tg_graph_status(b);
  if (st != TG_OK) return st;
  int same = a->n_nodes == b->n_nodes;
  for (int i = 0; same && i < a->n_nodes; i++) {
    const tg_node *x = a->nodes[i], *y = b->nodes[i];
    same = x->op == y->op && x->n_in == y->n_in && x->out.ndim == y->out.ndim && x->out.dtype == y->out.dtype;
    for (int k = 0; same && k < x->n_in; k++) same = x->in[k]->id == y->in[k]->id;
  }
  for (int k = 0; same && k < s->n_out; k++)
    same = s->out[k][0] && s->out[k][1] && tg_node_of(s->out[k][0])->id == tg_node_of(s->out[k][1])->id &&
           tg_node_of(s->out[k][0])->id < a->n_nodes && a->nodes[tg_node_of(s->out[k][0])->id] == tg_node_of(s->out[k][0]);
  if (!same)
    return tg_error(TG_ERR_INVALID, "onnx export of %s: the graphs at batch %lld and %lld differ; the model's builder must "
                    "make the same nodes at every batch size", s->model, (long long)s->batch[0], (long long)s->batch[1]);
  return TG_OK;
}

/* live[i]: some output needs node i. */
static void mark_live(const tg_onnx_spec *s, char *live) {
  const tg_graph *g = s->graph[0];
  for (int k = 0; k < s->n_out; k++) live[tg_node_of(s->out[k][0])->id] = 1;
  for (int i = g->n_nodes - 1; i >= 0; i--)
    if (live[i])
      for (int k = 0; k < g->nodes[i]->n_in; k++) live[g->nodes[i]->in[k]->id] = 1;
}

static int find_name(const char *const *names, int n, const char *name) {
  for (int k = 0; k < n; k++)
    if (names[k] && strcmp(names[k], name) == 0) return k;
  return -1;
}

/* A parameter's values as an initializer, once; a value that is not finite is an error naming it. */
static tg_status param_init(ox_ctx *c, const tg_node *n, char *done) {
  if (done[n->param_index]) return TG_OK;
  done[n->param_index] = 1;
  tg_param_info p = tg_store_param(c->g->store, n->param_index);
  const float *v = tg_store_values_read(c->g->store) + p.offset;
  for (size_t i = 0; i < p.numel; i++)
    if (!isfinite(v[i]))
      return tg_error(TG_ERR_NUMERIC, "onnx export of %s: parameter '%s' holds %g at index %zu; nothing was written",
                      c->spec->model, p.name, (double)v[i], i);
  ox_init_f32(c, p.name, p.ndim, p.shape, v);
  return TG_OK;
}

/* Leaves and ops of the live nodes, in order; graph inputs into *ins. */
static tg_status walk(ox_ctx *c, const char *live, Onnx__ValueInfoProto **ins, size_t *n_ins) {
  const tg_onnx_spec *s = c->spec;
  char *done = tg_calloc((size_t)tg_store_count(c->g->store) + 1, 1);
  if (!done) return tg_error(TG_ERR_NOMEM, "onnx export: out of memory");
  tg_status st = TG_OK;
  for (int i = 0; st == TG_OK && i < c->g->n_nodes; i++) {
    const tg_node *n = c->g->nodes[i], *n2 = c->g2->nodes[i];
    if (!live[i]) continue;
    if (n->op == TG_OP_PARAM) {
      st = param_init(c, n, done);
    } else if (n->op == TG_OP_INPUT) {
      int k = find_name(s->const_name, s->n_const, n->out.name);
      if (k >= 0)
        ox_init_f32(c, n->out.name, n->out.ndim, n->out.shape, s->const_data[k]);
      else if (find_name(s->in_name, s->n_in, n->out.name) >= 0)
        ins[(*n_ins)++] = value_info(c, n->out.name, &n->out, &n2->out);
      else
        st = tg_error(TG_ERR_INVALID, "onnx export of %s: input '%s' is neither an input of the file nor a constant",
                      s->model, n->out.name);
    } else {
      st = ox_map_node(c, n, n2);
    }
  }
  tg_free(done);
  if (st == TG_OK && c->nomem) st = tg_error(TG_ERR_NOMEM, "onnx export of %s: out of memory", s->model);
  return st;
}

/* The model around the graph: IR version, opset, producer, metadata. */
static Onnx__ModelProto *model_of(ox_ctx *c, Onnx__GraphProto *graph) {
  const tg_onnx_spec *s = c->spec;
  Onnx__ModelProto *m = ox_alloc(c, sizeof *m);
  Onnx__OperatorSetIdProto *ops = ox_alloc(c, sizeof *ops), **opl = ox_alloc(c, sizeof *opl);
  Onnx__StringStringEntryProto **meta = ox_alloc(c, (size_t)(s->n_meta + 1) * sizeof *meta);
  if (!m || !ops || !opl || !meta) return NULL;
  onnx__model_proto__init(m);
  onnx__operator_set_id_proto__init(ops);
  ops->domain = "";
  ops->has_version = 1;
  ops->version = TG_ONNX_OPSET;
  opl[0] = ops;
  for (int k = 0; k < s->n_meta; k++) {
    Onnx__StringStringEntryProto *e = ox_alloc(c, sizeof *e);
    if (!e) return NULL;
    onnx__string_string_entry_proto__init(e);
    e->key = (char *)s->meta_key[k];
    e->value = (char *)s->meta_value[k];
    meta[k] = e;
  }
  m->has_ir_version = 1;
  m->ir_version = ONNX_IR_VERSION;
  m->n_opset_import = 1;
  m->opset_import = opl;
  m->producer_name = "tickgrad";
  m->producer_version = (char *)tg_version();
  m->doc_string = (char *)(s->doc ? s->doc : "");
  m->n_metadata_props = (size_t)s->n_meta;
  m->metadata_props = meta;
  m->graph = graph;
  return m;
}

/* Packs the model and writes it to path (temp + rename). */
static tg_status pack_write(const Onnx__ModelProto *m, const char *path) {
  size_t len = onnx__model_proto__get_packed_size(m);
  uint8_t *buf = tg_malloc(len ? len : 1);
  if (!buf) return tg_error(TG_ERR_NOMEM, "onnx export: out of memory for %zu bytes", len);
  size_t packed = onnx__model_proto__pack(m, buf);
  tg_status st = packed == len ? tg_write_atomic(path, buf, len)
                               : tg_error(TG_ERR_INVALID, "onnx export: protobuf-c packed %zu bytes of %zu", packed, len);
  tg_free(buf);
  return st;
}

tg_status tg_onnx_export(const tg_onnx_spec *s, const char *path) {
  if (!s || !path || !path[0]) return tg_error(TG_ERR_INVALID, "onnx export: a spec and an output path are required");
  tg_status st = check_twins(s);
  if (st != TG_OK) return st;
  ox_ctx c = {.spec = s, .g = s->graph[0], .g2 = s->graph[1]};
  char *live = tg_calloc((size_t)c.g->n_nodes + 1, 1);
  Onnx__ValueInfoProto **ins = ox_alloc(&c, (size_t)(c.g->n_nodes + 1) * sizeof *ins);
  Onnx__ValueInfoProto **outs = ox_alloc(&c, (size_t)s->n_out * sizeof *outs);
  Onnx__GraphProto *graph = ox_alloc(&c, sizeof *graph);
  size_t n_ins = 0;
  if (!live || !ins || !outs || !graph) st = tg_error(TG_ERR_NOMEM, "onnx export: out of memory");
  if (st == TG_OK) {
    mark_live(s, live);
    st = walk(&c, live, ins, &n_ins);
  }
  for (int k = 0; st == TG_OK && k < s->n_out; k++) {
    const tg_tensor *o = s->out[k][0];
    const char *name = o->name;
    ox_node(&c, "Identity", 1, &name, s->out_name[k]);
    outs[k] = value_info(&c, s->out_name[k], o, s->out[k][1]);
  }
  Onnx__ModelProto *m = NULL;
  if (st == TG_OK) {
    onnx__graph_proto__init(graph);
    graph->name = (char *)s->model;
    graph->n_node = c.n_nodes;
    graph->node = c.nodes;
    graph->n_initializer = c.n_inits;
    graph->initializer = c.inits;
    graph->n_input = n_ins;
    graph->input = ins;
    graph->n_output = (size_t)s->n_out;
    graph->output = outs;
    m = model_of(&c, graph);
  }
  if (st == TG_OK && (c.nomem || !m)) st = tg_error(TG_ERR_NOMEM, "onnx export of %s: out of memory", s->model);
  if (st == TG_OK) st = pack_write(m, path);
  tg_free(live);
  ox_free(&c);
  return st;
}
