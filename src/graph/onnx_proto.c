/* The ONNX writer's protobuf-c plumbing: a pool that owns every message, and node, attribute and initializer helpers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "graph/onnx_internal.h"

struct ox_chunk {
  ox_chunk *next;
  max_align_t data[];
};

void *ox_alloc(ox_ctx *c, size_t bytes) {
  ox_chunk *k = tg_calloc(1, sizeof *k + (bytes ? bytes : 1));
  if (!k) {
    c->nomem = 1;
    return NULL;
  }
  k->next = c->chunks;
  c->chunks = k;
  return k->data;
}

char *ox_str(ox_ctx *c, const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = len >= 0 ? ox_alloc(c, (size_t)len + 1) : NULL;
  if (s) vsnprintf(s, (size_t)len + 1, fmt, aq);
  va_end(aq);
  return s;
}

void ox_free(ox_ctx *c) {
  while (c->chunks) {
    ox_chunk *next = c->chunks->next;
    tg_free(c->chunks);
    c->chunks = next;
  }
  tg_free(c->nodes);
  tg_free(c->inits);
  c->nodes = NULL;
  c->inits = NULL;
}

/* Appends p to the growing array *arr of *n (capacity *cap). */
static void push(ox_ctx *c, void ***arr, size_t *n, size_t *cap, void *p) {
  if (!p) return;
  if (*n == *cap) {
    size_t ncap = *cap ? 2 * *cap : 64;
    void **grown = tg_malloc(ncap * sizeof *grown);
    if (!grown) {
      c->nomem = 1;
      return;
    }
    if (*n) memcpy(grown, *arr, *n * sizeof *grown);
    tg_free(*arr);
    *arr = grown;
    *cap = ncap;
  }
  (*arr)[(*n)++] = p;
}

Onnx__NodeProto *ox_node(ox_ctx *c, const char *op_type, int n_in, const char *const *in, const char *out) {
  Onnx__NodeProto *n = ox_alloc(c, sizeof *n);
  char **ins = ox_alloc(c, (size_t)(n_in > 0 ? n_in : 1) * sizeof *ins);
  char **outs = ox_alloc(c, sizeof *outs);
  if (!n || !ins || !outs || !out) return NULL;
  onnx__node_proto__init(n);
  for (int k = 0; k < n_in; k++) ins[k] = (char *)(in[k] ? in[k] : ""); /* "": an optional input left out */
  outs[0] = (char *)out;
  n->n_input = (size_t)n_in;
  n->input = ins;
  n->n_output = 1;
  n->output = outs;
  n->op_type = (char *)op_type;
  n->name = ox_str(c, "%s#%zu", out, c->n_nodes);
  push(c, (void ***)&c->nodes, &c->n_nodes, &c->cap_nodes, n);
  return n;
}

/* A new attribute of node n (NULL: out of memory, or n is NULL after an earlier failure). */
static Onnx__AttributeProto *attr(ox_ctx *c, Onnx__NodeProto *n, const char *name, Onnx__AttributeProto__AttributeType t) {
  if (!n) return NULL;
  Onnx__AttributeProto *a = ox_alloc(c, sizeof *a);
  Onnx__AttributeProto **list = ox_alloc(c, (n->n_attribute + 1) * sizeof *list);
  if (!a || !list) return NULL;
  onnx__attribute_proto__init(a);
  a->name = (char *)name;
  a->has_type = 1;
  a->type = t;
  if (n->n_attribute) memcpy(list, n->attribute, n->n_attribute * sizeof *list);
  list[n->n_attribute++] = a;
  n->attribute = list;
  return a;
}

void ox_attr_int(ox_ctx *c, Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto *a = attr(c, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  if (a) a->has_i = 1, a->i = v;
}

void ox_attr_float(ox_ctx *c, Onnx__NodeProto *n, const char *name, float v) {
  Onnx__AttributeProto *a = attr(c, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  if (a) a->has_f = 1, a->f = v;
}

void ox_attr_ints(ox_ctx *c, Onnx__NodeProto *n, const char *name, int count, const int64_t *v) {
  Onnx__AttributeProto *a = attr(c, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  int64_t *copy = ox_alloc(c, (size_t)(count > 0 ? count : 1) * sizeof *copy);
  if (!a || !copy) return;
  memcpy(copy, v, (size_t)count * sizeof *copy);
  a->n_ints = (size_t)count;
  a->ints = copy;
}

/* An initializer's header: name, dims, data type; the caller fills the data. */
static Onnx__TensorProto *init_tensor(ox_ctx *c, const char *name, int ndim, const int64_t *dims, int32_t type) {
  Onnx__TensorProto *t = ox_alloc(c, sizeof *t);
  int64_t *d = ox_alloc(c, (size_t)(ndim > 0 ? ndim : 1) * sizeof *d);
  if (!t || !d || !name) return NULL;
  onnx__tensor_proto__init(t);
  if (ndim > 0) memcpy(d, dims, (size_t)ndim * sizeof *d);
  t->n_dims = (size_t)ndim;
  t->dims = d;
  t->has_data_type = 1;
  t->data_type = type;
  t->name = (char *)name;
  push(c, (void ***)&c->inits, &c->n_inits, &c->cap_inits, t);
  return t;
}

static size_t count_of(int ndim, const int64_t *dims) {
  size_t n = 1;
  for (int k = 0; k < ndim; k++) n *= (size_t)dims[k];
  return n;
}

const char *ox_init_f32(ox_ctx *c, const char *name, int ndim, const int64_t *dims, const float *data) {
  Onnx__TensorProto *t = init_tensor(c, name, ndim, dims, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
  size_t n = count_of(ndim, dims);
  float *copy = ox_alloc(c, (n ? n : 1) * sizeof *copy);
  if (!t || !copy) return NULL;
  memcpy(copy, data, n * sizeof *copy);
  t->n_float_data = n;
  t->float_data = copy;
  return name;
}

const char *ox_init_i64(ox_ctx *c, const char *name, int ndim, const int64_t *dims, const int64_t *data) {
  Onnx__TensorProto *t = init_tensor(c, name, ndim, dims, ONNX__TENSOR_PROTO__DATA_TYPE__INT64);
  size_t n = count_of(ndim, dims);
  int64_t *copy = ox_alloc(c, (n ? n : 1) * sizeof *copy);
  if (!t || !copy) return NULL;
  memcpy(copy, data, n * sizeof *copy);
  t->n_int64_data = n;
  t->int64_data = copy;
  return name;
}

const char *ox_init_bool(ox_ctx *c, const char *name, int ndim, const int64_t *dims, const uint8_t *data) {
  Onnx__TensorProto *t = init_tensor(c, name, ndim, dims, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL);
  size_t n = count_of(ndim, dims);
  int32_t *v = ox_alloc(c, (n ? n : 1) * sizeof *v); /* bool is kept in int32_data, one value per element */
  if (!t || !v) return NULL;
  for (size_t i = 0; i < n; i++) v[i] = data[i] != 0;
  t->n_int32_data = n;
  t->int32_data = v;
  return name;
}

const char *ox_ints(ox_ctx *c, const tg_node *n, const char *what, int count, const int64_t *v) {
  int64_t dims[1] = {count};
  return ox_init_i64(c, ox_tmp(c, n, what), 1, dims, v);
}

const char *ox_scalar(ox_ctx *c, const tg_node *n, const char *what, float v) {
  return ox_init_f32(c, ox_tmp(c, n, what), 0, NULL, &v);
}

const char *ox_tmp(ox_ctx *c, const tg_node *n, const char *what) { return ox_str(c, "%s/%s", n->out.name, what); }
