/* safetensors reading (strict validation) and atomic writing. Data is little-endian; so is the host. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/alloc.h"
#include "base/files.h"
#include "base/json.h"
#include "tickgrad/checkpoint.h"

/* Headers above this size are refused (the reference implementation uses the same limit). */
#define TG_ST_MAX_HEADER ((uint64_t)100 * 1000 * 1000)

typedef struct st_dtype {
  const char *name;
  size_t size;
  int supported;
  tg_dtype dtype;
} st_dtype;

/* Every dtype the safetensors format defines with a whole-byte size; tickgrad reads four (BF16 as raw uint16). */
static const st_dtype st_dtypes[] = {
    {"F32", 4, 1, TG_F32},  {"I32", 4, 1, TG_I32},  {"I64", 8, 1, TG_I64},
    {"F64", 8, 0, TG_F32},  {"F16", 2, 0, TG_F32},  {"BF16", 2, 1, TG_BF16},
    {"I8", 1, 0, TG_F32},   {"U8", 1, 0, TG_F32},   {"I16", 2, 0, TG_F32},
    {"U16", 2, 0, TG_F32},  {"U32", 4, 0, TG_F32},  {"U64", 8, 0, TG_F32},
    {"BOOL", 1, 0, TG_F32}, {"F8_E4M3", 1, 0, TG_F32}, {"F8_E5M2", 1, 0, TG_F32},
    {"F8_E8M0", 1, 0, TG_F32},
};

struct tg_safetensors {
  unsigned char *data; /* [data_len] the byte buffer after the header */
  size_t data_len;
  tg_json_doc *doc;    /* owns the full names and the metadata strings */
  int n;
  tg_tensor *tensors;  /* [n] */
  const char **names;  /* [n] full names (tensor.name is cut to TG_NAME_MAX-1 bytes) */
  void **copies;       /* [n] aligned copies of tensors whose offset is not element-aligned */
  const tg_json *meta; /* the __metadata__ object or NULL */
};

static int st_host_is_le(void) {
  const uint32_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

static const st_dtype *st_dtype_find(const char *name) {
  for (size_t k = 0; k < sizeof st_dtypes / sizeof st_dtypes[0]; k++)
    if (strcmp(st_dtypes[k].name, name) == 0) return &st_dtypes[k];
  return NULL;
}

static const char *st_dtype_name(tg_dtype t) {
  switch (t) {
    case TG_F32: return "F32";
    case TG_I32: return "I32";
    case TG_I64: return "I64";
    case TG_BF16: return "BF16";
    default: return NULL;
  }
}

void tg_safetensors_free(tg_safetensors *f) {
  if (!f) return;
  if (f->copies)
    for (int i = 0; i < f->n; i++) tg_free(f->copies[i]);
  tg_free(f->copies);
  tg_free(f->tensors);
  tg_free(f->names);
  tg_json_free(f->doc);
  tg_free(f->data);
  tg_free(f);
}

int tg_safetensors_count(const tg_safetensors *f) { return f ? f->n : 0; }

const tg_tensor *tg_safetensors_at(const tg_safetensors *f, int i) {
  if (!f || i < 0 || i >= f->n) return NULL;
  return &f->tensors[i];
}

const tg_tensor *tg_safetensors_find(const tg_safetensors *f, const char *name) {
  if (!f || !name) return NULL;
  for (int i = 0; i < f->n; i++)
    if (strcmp(f->names[i], name) == 0) return &f->tensors[i];
  return NULL;
}

const char *tg_safetensors_meta(const tg_safetensors *f, const char *key) {
  if (!f || !key) return NULL;
  const tg_json *v = tg_json_get(f->meta, key);
  return v ? v->str : NULL;
}

/* ---- reading ---- */

/* One tensor entry of the header, as validated. */
typedef struct st_entry {
  const char *name;
  const tg_json *node;
  const st_dtype *dt;  /* NULL: a dtype safetensors does not define (or one with sub-byte size) */
  const char *dtype_str;
  int ndim;
  int64_t shape[TG_MAX_DIMS];
  uint64_t begin, end;
} st_entry;

static int st_entry_cmp(const void *a, const void *b) {
  const st_entry *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return 0;
}

static tg_status st_parse_metadata(const char *what, const tg_json *m) {
  if (m->type != TG_JSON_OBJECT)
    return tg_error(TG_ERR_FORMAT, "%s: byte %zu: __metadata__ must be an object of strings, not %s",
                    what, m->offset, tg_json_type_name(m->type));
  for (const tg_json *c = m->first; c; c = c->next)
    if (c->type != TG_JSON_STRING)
      return tg_error(TG_ERR_FORMAT, "%s: byte %zu: __metadata__ value \"%s\" must be a string, not %s",
                      what, c->offset, c->key, tg_json_type_name(c->type));
  return TG_OK;
}

/* Checks one tensor entry's structure: {"dtype": str, "shape": [int...], "data_offsets": [b, e]}. */
static tg_status st_parse_entry(const char *what, const tg_json *t, size_t data_len, st_entry *e) {
  memset(e, 0, sizeof *e);
  e->name = t->key;
  e->node = t;
  if (t->type != TG_JSON_OBJECT)
    return tg_error(TG_ERR_FORMAT, "%s: byte %zu: tensor '%s': entry must be an object, not %s", what,
                    t->offset, t->key, tg_json_type_name(t->type));
  const tg_json *dtype = NULL, *shape = NULL, *offs = NULL;
  for (const tg_json *c = t->first; c; c = c->next) {
    if (strcmp(c->key, "dtype") == 0) dtype = c;
    else if (strcmp(c->key, "shape") == 0) shape = c;
    else if (strcmp(c->key, "data_offsets") == 0) offs = c;
    else
      return tg_error(TG_ERR_FORMAT, "%s: byte %zu: tensor '%s': unknown field \"%s\"", what,
                      c->key_offset, t->key, c->key);
  }
  const char *missing = !dtype ? "dtype" : !shape ? "shape" : !offs ? "data_offsets" : NULL;
  if (missing)
    return tg_error(TG_ERR_FORMAT, "%s: byte %zu: tensor '%s': missing field \"%s\"", what, t->offset,
                    t->key, missing);
  if (dtype->type != TG_JSON_STRING)
    return tg_error(TG_ERR_FORMAT, "%s: byte %zu: tensor '%s': dtype must be a string", what,
                    dtype->offset, t->key);
  e->dtype_str = dtype->str;
  e->dt = st_dtype_find(dtype->str);
  if (shape->type != TG_JSON_ARRAY)
    return tg_error(TG_ERR_FORMAT, "%s: byte %zu: tensor '%s': shape must be an array", what,
                    shape->offset, t->key);
  if (shape->count > TG_MAX_DIMS)
    return tg_error(TG_ERR_FORMAT, "%s: byte %zu: tensor '%s': %d dimensions, at most %d supported",
                    what, shape->offset, t->key, shape->count, TG_MAX_DIMS);
  uint64_t numel = 1;
  int overflow = 0;
  for (const tg_json *d = shape->first; d; d = d->next) {
    if (d->type != TG_JSON_INT || d->i < 0)
      return tg_error(TG_ERR_FORMAT, "%s: byte %zu: tensor '%s': shape entries must be integers >= 0",
                      what, d->offset, t->key);
    if (d->i != 0 && numel > UINT64_MAX / (uint64_t)d->i) overflow = 1;
    else numel *= (uint64_t)d->i;
    e->shape[e->ndim++] = d->i;
  }
  if (offs->type != TG_JSON_ARRAY || offs->count != 2 || offs->first->type != TG_JSON_INT ||
      offs->first->next->type != TG_JSON_INT || offs->first->i < 0 || offs->first->next->i < 0)
    return tg_error(TG_ERR_FORMAT, "%s: byte %zu: tensor '%s': data_offsets must be [begin, end], two integers >= 0",
                    what, offs->offset, t->key);
  e->begin = (uint64_t)offs->first->i;
  e->end = (uint64_t)offs->first->next->i;
  if (e->begin > e->end)
    return tg_error(TG_ERR_FORMAT, "%s: byte %zu: tensor '%s': data_offsets [%llu, %llu] end before they begin",
                    what, offs->offset, t->key, (unsigned long long)e->begin, (unsigned long long)e->end);
  if (e->end > data_len)
    return tg_error(TG_ERR_FORMAT,
                    "%s: byte %zu: tensor '%s': data_offsets [%llu, %llu] run past the %zu data bytes "
                    "(file truncated?)",
                    what, offs->offset, t->key, (unsigned long long)e->begin,
                    (unsigned long long)e->end, data_len);
  if (overflow || (e->dt && numel > UINT64_MAX / e->dt->size))
    return tg_error(TG_ERR_FORMAT, "%s: byte %zu: tensor '%s': the shape's size overflows 64 bits",
                    what, shape->offset, t->key);
  if (e->dt && numel * (uint64_t)e->dt->size != e->end - e->begin)
    return tg_error(TG_ERR_FORMAT,
                    "%s: byte %zu: tensor '%s': %s with %llu elements needs %llu bytes but "
                    "data_offsets span %llu",
                    what, offs->offset, t->key, e->dt->name, (unsigned long long)numel,
                    (unsigned long long)(numel * (uint64_t)e->dt->size),
                    (unsigned long long)(e->end - e->begin));
  return TG_OK;
}

/* Tensors must tile the data buffer: sorted by offset each begins where the previous ends, and the
 * last ends at the end of the file (the reference implementation requires the same). */
static tg_status st_check_layout(const char *what, st_entry *es, int n, size_t data_len) {
  qsort(es, (size_t)n, sizeof *es, st_entry_cmp);
  uint64_t at = 0;
  for (int i = 0; i < n; i++) {
    if (es[i].begin != at) {
      if (es[i].begin < at)
        return tg_error(TG_ERR_FORMAT, "%s: tensor '%s' (data_offsets [%llu, %llu]) overlaps tensor '%s'",
                        what, es[i].name, (unsigned long long)es[i].begin,
                        (unsigned long long)es[i].end, es[i - 1].name);
      return tg_error(TG_ERR_FORMAT, "%s: tensor '%s' begins at data byte %llu, leaving bytes %llu..%llu unused",
                      what, es[i].name, (unsigned long long)es[i].begin, (unsigned long long)at,
                      (unsigned long long)es[i].begin - 1);
    }
    at = es[i].end;
  }
  if (at != data_len)
    return tg_error(TG_ERR_FORMAT, "%s: the tensors cover %llu data bytes but the file has %zu after the header",
                    what, (unsigned long long)at, data_len);
  return TG_OK;
}

/* Builds the tensors of a file from its header text and data (taking ownership of data). */
static tg_status st_build(const char *what, const char *header, size_t header_len,
                          unsigned char *data, size_t data_len, tg_safetensors **out) {
  tg_safetensors *f = tg_calloc(1, sizeof *f);
  if (!f) {
    tg_free(data);
    return tg_error(TG_ERR_NOMEM, "%s: out of memory", what);
  }
  f->data = data;
  f->data_len = data_len;
  st_entry *es = NULL;
  tg_status st = tg_json_parse(header, header_len, what, 8, &f->doc);
  if (st != TG_OK) goto fail;
  const tg_json *root = tg_json_root(f->doc);
  if (root->type != TG_JSON_OBJECT) {
    st = tg_error(TG_ERR_FORMAT, "%s: byte %zu: the header must be a JSON object, not %s", what,
                  root->offset, tg_json_type_name(root->type));
    goto fail;
  }
  int n = 0;
  for (const tg_json *c = root->first; c; c = c->next) {
    if (strcmp(c->key, "__metadata__") == 0) {
      if ((st = st_parse_metadata(what, c)) != TG_OK) goto fail;
      f->meta = c;
    } else {
      n++;
    }
  }
  es = tg_calloc(n ? (size_t)n : 1, sizeof *es);
  f->tensors = tg_calloc(n ? (size_t)n : 1, sizeof *f->tensors);
  f->names = tg_calloc(n ? (size_t)n : 1, sizeof *f->names);
  f->copies = tg_calloc(n ? (size_t)n : 1, sizeof *f->copies);
  if (!es || !f->tensors || !f->names || !f->copies) {
    st = tg_error(TG_ERR_NOMEM, "%s: out of memory for %d tensors", what, n);
    goto fail;
  }
  int k = 0;
  const st_entry *unsupported = NULL;
  for (const tg_json *c = root->first; c; c = c->next) {
    if (c == f->meta) continue;
    if (c->key[0] == '\0') {
      st = tg_error(TG_ERR_FORMAT, "%s: byte %zu: a tensor has an empty name", what, c->key_offset);
      goto fail;
    }
    if ((st = st_parse_entry(what, c, data_len, &es[k])) != TG_OK) goto fail;
    k++;
  }
  /* entry order is document order until the layout check sorts a copy */
  for (int i = 0; i < n; i++)
    if (!es[i].dt || !es[i].dt->supported) {
      if (!unsupported) unsupported = &es[i];
    }
  char uname[96] = "", udtype[32] = "";
  if (unsupported) {
    snprintf(uname, sizeof uname, "%s", unsupported->name);
    snprintf(udtype, sizeof udtype, "%s", unsupported->dtype_str);
  }
  /* tensors in document order, then the layout check (which sorts es) */
  for (int i = 0; i < n; i++) {
    const st_entry *e = &es[i];
    tg_tensor *t = &f->tensors[i];
    f->names[i] = e->name;
    snprintf(t->name, sizeof t->name, "%s", e->name);
    t->dtype = e->dt && e->dt->supported ? e->dt->dtype : TG_F32;
    t->device.kind = TG_CPU;
    t->device.index = 0;
    t->ndim = e->ndim;
    memcpy(t->shape, e->shape, sizeof t->shape);
    size_t bytes = (size_t)(e->end - e->begin);
    size_t align = e->dt ? e->dt->size : 1;
    if (bytes == 0) {
      t->data = data;
    } else if (e->begin % align != 0) {
      f->copies[i] = tg_malloc(bytes);
      if (!f->copies[i]) {
        st = tg_error(TG_ERR_NOMEM, "%s: out of memory", what);
        goto fail;
      }
      memcpy(f->copies[i], data + e->begin, bytes);
      t->data = f->copies[i];
    } else {
      t->data = data + e->begin;
    }
  }
  f->n = n;
  if ((st = st_check_layout(what, es, n, data_len)) != TG_OK) goto fail;
  if (unsupported) {
    st = tg_error(TG_ERR_UNSUPPORTED,
                  "%s: tensor '%s' has dtype %s; tickgrad reads F32, BF16, I32 and I64 (convert it to "
                  "F32 first)",
                  what, uname, udtype);
    goto fail;
  }
  tg_free(es);
  *out = f;
  return TG_OK;
fail:
  tg_free(es);
  tg_safetensors_free(f);
  return st;
}

static uint64_t st_read_u64le(const unsigned char *b) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; k--) v = (v << 8) | b[k];
  return v;
}

/* Validates the 8-byte length against the total size; returns the header length. */
static tg_status st_check_header_len(const char *what, const unsigned char *first8, size_t total,
                                     size_t *header_len) {
  if (total < 8)
    return tg_error(TG_ERR_FORMAT,
                    "%s: byte 0: the file has %zu bytes, too short for the 8-byte header length",
                    what, total);
  uint64_t n = st_read_u64le(first8);
  if (n > TG_ST_MAX_HEADER)
    return tg_error(TG_ERR_FORMAT, "%s: byte 0: header length %llu is over the %llu-byte limit", what,
                    (unsigned long long)n, (unsigned long long)TG_ST_MAX_HEADER);
  if (n > total - 8)
    return tg_error(TG_ERR_FORMAT,
                    "%s: byte 0: header length %llu runs past the end of the file (%zu bytes; "
                    "truncated?)",
                    what, (unsigned long long)n, total);
  if (n < 2)
    return tg_error(TG_ERR_FORMAT, "%s: byte 0: header length %llu is too short for a JSON object",
                    what, (unsigned long long)n);
  *header_len = (size_t)n;
  return TG_OK;
}

tg_status tg_safetensors_parse(const void *bytes, size_t len, const char *what,
                               tg_safetensors **out) {
  if (!out) return tg_error(TG_ERR_INVALID, "tg_safetensors_parse: out is NULL");
  *out = NULL;
  if (!what) what = "safetensors";
  if (!bytes && len) return tg_error(TG_ERR_INVALID, "%s: bytes is NULL", what);
  if (!st_host_is_le())
    return tg_error(TG_ERR_UNSUPPORTED, "%s: safetensors data is little-endian; this host is not", what);
  const unsigned char *b = bytes;
  size_t hlen = 0;
  tg_status st = st_check_header_len(what, b, len, &hlen);
  if (st != TG_OK) return st;
  size_t data_len = len - 8 - hlen;
  unsigned char *data = tg_malloc(data_len ? data_len : 1);
  if (!data) return tg_error(TG_ERR_NOMEM, "%s: out of memory for %zu data bytes", what, data_len);
  if (data_len) memcpy(data, b + 8 + hlen, data_len);
  return st_build(what, (const char *)b + 8, hlen, data, data_len, out);
}

/* Reads exactly n bytes (n may be 0). */
static tg_status st_read_all(FILE *fp, const char *path, void *dst, size_t n, size_t at) {
  if (n && fread(dst, 1, n, fp) != n)
    return tg_error(ferror(fp) ? TG_ERR_IO : TG_ERR_FORMAT, "%s: byte %zu: read of %zu bytes failed%s",
                    path, at, n, ferror(fp) ? "" : " (file truncated while reading)");
  return TG_OK;
}

tg_status tg_safetensors_load(const char *path, tg_safetensors **out) {
  if (!out) return tg_error(TG_ERR_INVALID, "tg_safetensors_load: out is NULL");
  *out = NULL;
  if (!path) return tg_error(TG_ERR_INVALID, "tg_safetensors_load: path is NULL");
  if (!st_host_is_le())
    return tg_error(TG_ERR_UNSUPPORTED, "%s: safetensors data is little-endian; this host is not", path);
  FILE *fp = fopen(path, "rb");
  if (!fp) return tg_error(TG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    fclose(fp);
    return tg_error(TG_ERR_IO, "%s: not a regular file", path);
  }
  size_t total = (size_t)sb.st_size;
  unsigned char first8[8] = {0};
  char *header = NULL;
  unsigned char *data = NULL;
  size_t hlen = 0, data_len = 0;
  tg_status st = st_read_all(fp, path, first8, total < 8 ? total : 8, 0);
  if (st == TG_OK) st = st_check_header_len(path, first8, total, &hlen);
  if (st == TG_OK) {
    data_len = total - 8 - hlen;
    header = tg_malloc(hlen);
    data = tg_malloc(data_len ? data_len : 1);
    if (!header || !data) st = tg_error(TG_ERR_NOMEM, "%s: out of memory reading %zu bytes", path, total);
  }
  if (st == TG_OK) st = st_read_all(fp, path, header, hlen, 8);
  if (st == TG_OK) st = st_read_all(fp, path, data, data_len, 8 + hlen);
  fclose(fp);
  if (st != TG_OK) {
    tg_free(header);
    tg_free(data);
    return st;
  }
  st = st_build(path, header, hlen, data, data_len, out);
  tg_free(header);
  return st;
}

/* ---- writing ---- */

static tg_status st_check_name(const char *path, const char *kind, const char *s) {
  if (!s) return tg_error(TG_ERR_INVALID, "%s: a %s is NULL", path, kind);
  if (!tg_json_utf8_valid(s, strlen(s)))
    return tg_error(TG_ERR_INVALID, "%s: %s \"%s\" is not valid UTF-8", path, kind, s);
  return TG_OK;
}

static tg_status st_check_inputs(const char *path, int n, const tg_tensor *ts, int n_meta,
                                 const tg_kv *meta) {
  if (n < 0 || n_meta < 0 || (n && !ts) || (n_meta && !meta))
    return tg_error(TG_ERR_INVALID, "%s: bad tensor or metadata list", path);
  for (int i = 0; i < n; i++) {
    const tg_tensor *t = &ts[i];
    char dev[16];
    tg_status st = st_check_name(path, "tensor name", t->name);
    if (st != TG_OK) return st;
    if (t->name[0] == '\0' || strcmp(t->name, "__metadata__") == 0)
      return tg_error(TG_ERR_INVALID, "%s: tensor %d has the reserved or empty name \"%s\"", path, i, t->name);
    if (!st_dtype_name(t->dtype))
      return tg_error(TG_ERR_INVALID, "%s: tensor '%s': unknown dtype %d", path, t->name, (int)t->dtype);
    if (t->ndim < 0 || t->ndim > TG_MAX_DIMS)
      return tg_error(TG_ERR_INVALID, "%s: tensor '%s': ndim %d", path, t->name, t->ndim);
    for (int d = 0; d < t->ndim; d++)
      if (t->shape[d] < 0)
        return tg_error(TG_ERR_INVALID, "%s: tensor '%s': negative dimension", path, t->name);
    if (t->device.kind != TG_CPU)
      return tg_error(TG_ERR_DEVICE, "%s: tensor '%s' is on %s; copy it to the host before saving",
                      path, t->name, tg_device_str(t->device, dev, sizeof dev));
    if (tg_nbytes(t) && !t->data)
      return tg_error(TG_ERR_INVALID, "%s: tensor '%s' has no data", path, t->name);
    for (int j = 0; j < i; j++)
      if (strcmp(ts[j].name, t->name) == 0)
        return tg_error(TG_ERR_INVALID, "%s: tensor name '%s' appears twice", path, t->name);
  }
  for (int i = 0; i < n_meta; i++) {
    tg_status st = st_check_name(path, "metadata key", meta[i].key);
    if (st == TG_OK) st = st_check_name(path, "metadata value", meta[i].value);
    if (st != TG_OK) return st;
    for (int j = 0; j < i; j++)
      if (strcmp(meta[j].key, meta[i].key) == 0)
        return tg_error(TG_ERR_INVALID, "%s: metadata key '%s' appears twice", path, meta[i].key);
  }
  return TG_OK;
}

/* Data order: larger elements first (stable), so every tensor's offset is a multiple of its
 * element size, as the reference implementation lays files out. */
static void st_layout_order(int n, const tg_tensor *ts, int *order) {
  int k = 0;
  for (size_t size = 8; size >= 1; size /= 2)
    for (int i = 0; i < n; i++)
      if (tg_dtype_size(ts[i].dtype) == size) order[k++] = i;
}

tg_status tg_safetensors_save(const char *path, int n, const tg_tensor *tensors, int n_meta,
                              const tg_kv *meta) {
  if (!path || !*path) return tg_error(TG_ERR_INVALID, "tg_safetensors_save: path is empty");
  if (!st_host_is_le())
    return tg_error(TG_ERR_UNSUPPORTED, "%s: safetensors data is little-endian; this host is not", path);
  tg_status st = st_check_inputs(path, n, tensors, n_meta, meta);
  if (st != TG_OK) return st;
  int *order = tg_malloc((size_t)(n ? n : 1) * sizeof *order);
  if (!order) return tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
  st_layout_order(n, tensors, order);

  tg_text h = {0};
  tg_text_puts(&h, "{");
  if (n_meta > 0) {
    tg_text_puts(&h, "\"__metadata__\":{");
    for (int i = 0; i < n_meta; i++) {
      if (i) tg_text_puts(&h, ",");
      tg_json_append_string(&h, meta[i].key);
      tg_text_puts(&h, ":");
      tg_json_append_string(&h, meta[i].value);
    }
    tg_text_puts(&h, "}");
  }
  size_t at = 0;
  for (int k = 0; k < n; k++) {
    const tg_tensor *t = &tensors[order[k]];
    if (k || n_meta > 0) tg_text_puts(&h, ",");
    tg_json_append_string(&h, t->name);
    tg_text_printf(&h, ":{\"dtype\":\"%s\",\"shape\":[", st_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++) tg_text_printf(&h, "%s%lld", d ? "," : "", (long long)t->shape[d]);
    size_t bytes = tg_nbytes(t);
    tg_text_printf(&h, "],\"data_offsets\":[%zu,%zu]}", at, at + bytes);
    at += bytes;
  }
  tg_text_puts(&h, "}");
  while (h.len % 8) tg_text_puts(&h, " ");
  if (h.oom) {
    tg_free(order);
    tg_text_free(&h);
    return tg_error(TG_ERR_NOMEM, "%s: out of memory building the header", path);
  }

  tg_atomic_file f;
  st = tg_atomic_open(&f, path);
  unsigned char len8[8];
  uint64_t hl = h.len;
  for (int k = 0; k < 8; k++) len8[k] = (unsigned char)(hl >> (8 * k));
  if (st == TG_OK) st = tg_atomic_write(&f, len8, 8);
  if (st == TG_OK) st = tg_atomic_write(&f, h.data, h.len);
  for (int k = 0; k < n && st == TG_OK; k++) st = tg_atomic_write(&f, tensors[order[k]].data, tg_nbytes(&tensors[order[k]]));
  if (st == TG_OK) st = tg_atomic_commit(&f);
  tg_free(order);
  tg_text_free(&h);
  return st;
}
