/* Tensor views, shapes, dtypes and device descriptors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tickgrad/tensor.h"

tg_device tg_cpu(int index) { return (tg_device){TG_CPU, index}; }
tg_device tg_cuda(int index) { return (tg_device){TG_CUDA, index}; }
int tg_device_eq(tg_device a, tg_device b) { return a.kind == b.kind && a.index == b.index; }

/* Every kind's name, by its number: the device strings' prefixes. */
static const char *const k_kind_names[TG_DEVICE_KIND_COUNT] = {[TG_CPU] = "cpu", [TG_CUDA] = "cuda", [TG_VULKAN] = "vulkan"};
#define KIND_SYNTAX "cpu[:N], cuda[:N] or vulkan[:N]"

const char *tg_device_kind_name(tg_device_kind k) {
  return (int)k >= 0 && k < TG_DEVICE_KIND_COUNT ? k_kind_names[k] : "?";
}

const char *tg_device_str(tg_device d, char *buf, size_t n) {
  snprintf(buf, n, "%s:%d", tg_device_kind_name(d.kind), d.index);
  return buf;
}

tg_status tg_device_parse(const char *s, tg_device *out) {
  if (!s) return tg_error(TG_ERR_INVALID, "device: missing name (use " KIND_SYNTAX ")");
  size_t len = strcspn(s, ":");
  int kind = -1;
  for (int k = 0; k < TG_DEVICE_KIND_COUNT; k++)
    if (strlen(k_kind_names[k]) == len && strncmp(s, k_kind_names[k], len) == 0) kind = k;
  if (kind < 0) return tg_error(TG_ERR_INVALID, "device '%s': unknown kind (use " KIND_SYNTAX ")", s);
  const char *rest = s + len;
  long index = 0;
  if (*rest == ':') {
    char *end;
    index = strtol(rest + 1, &end, 10);
    if (end == rest + 1 || *end != '\0' || index < 0 || index > 1024)
      return tg_error(TG_ERR_INVALID, "device '%s': bad index (use e.g. %s:0)", s, k_kind_names[kind]);
  }
  out->kind = (tg_device_kind)kind;
  out->index = (int)index;
  return TG_OK;
}

size_t tg_dtype_size(tg_dtype t) {
  switch (t) {
    case TG_F32: return 4;
    case TG_I32: return 4;
    case TG_I64: return 8;
    case TG_BF16: return 2;
    default: return 0;
  }
}

const char *tg_dtype_name(tg_dtype t) {
  switch (t) {
    case TG_F32: return "f32";
    case TG_I32: return "i32";
    case TG_I64: return "i64";
    case TG_BF16: return "bf16";
    default: return "?";
  }
}

int64_t tg_numel(const tg_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

size_t tg_nbytes(const tg_tensor *t) { return (size_t)tg_numel(t) * tg_dtype_size(t->dtype); }

tg_status tg_tensor_view(tg_tensor *t, const char *name, tg_device dev, tg_dtype dtype, int ndim,
                         const int64_t *shape, void *data) {
  if (ndim < 0 || ndim > TG_MAX_DIMS)
    return tg_error(TG_ERR_INVALID, "tensor '%s': %d dims (at most %d)", name ? name : "", ndim,
                    TG_MAX_DIMS);
  if (dtype < 0 || dtype >= TG_DTYPE_COUNT)
    return tg_error(TG_ERR_INVALID, "tensor '%s': unknown dtype %d", name ? name : "", (int)dtype);
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", name ? name : "");
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0)
      return tg_error(TG_ERR_INVALID, "tensor '%s': dim %d is negative (%lld)", t->name, i,
                      (long long)shape[i]);
    t->shape[i] = shape[i];
  }
  t->ndim = ndim;
  t->dtype = dtype;
  t->device = dev;
  t->data = data;
  return TG_OK;
}

int tg_shape_eq(const tg_tensor *a, const tg_tensor *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

const char *tg_shape_str(const tg_tensor *t, char *buf, size_t n) {
  size_t used = 0;
  int w = snprintf(buf, n, "[");
  used = w > 0 ? (size_t)w : 0;
  for (int i = 0; i < t->ndim && used < n; i++) {
    w = snprintf(buf + used, n - used, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    if (w > 0) used += (size_t)w;
  }
  if (used < n) snprintf(buf + used, n - used, "]");
  return buf;
}
