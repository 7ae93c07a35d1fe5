/* Parquet: the thrift compact protocol decoder (bounded nesting, lists bounded by the bytes left). */
#include <stdarg.h>
#include <stdio.h>
#include "data/readers/parquet/parquet.h"

tg_status tg_pq_fail(const tg_pq_where *w, tg_status st, int64_t offset, const char *fmt, ...) {
  char reason[512], where[320] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  if (w->column) {
    int k = snprintf(where, sizeof where, " (column '%s'", w->column);
    if (k > 0 && (size_t)k < sizeof where && w->row_group >= 0)
      k += snprintf(where + k, sizeof where - (size_t)k, ", row group %d", w->row_group);
    if (k > 0 && (size_t)k < sizeof where && w->page >= 0)
      k += snprintf(where + k, sizeof where - (size_t)k, ", page %d", w->page);
    if (k > 0 && (size_t)k < sizeof where) snprintf(where + k, sizeof where - (size_t)k, ")");
  }
  if (offset >= 0) return tg_error(st, "%s: byte %lld: %s%s", w->path, (long long)offset, reason, where);
  return tg_error(st, "%s: %s%s", w->path, reason, where);
}

int64_t tg_thrift_offset(const tg_thrift *t) { return (int64_t)(t->p - t->base); }

static tg_status bad(const tg_thrift *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static tg_status bad(const tg_thrift *t, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tg_pq_fail(t->w, TG_ERR_FORMAT, tg_thrift_offset(t), "%s: %s", t->what, msg);
}

static tg_status varint(tg_thrift *t, uint64_t *v) {
  uint64_t x = 0;
  for (int shift = 0;; shift += 7) {
    if (t->p >= t->end) return bad(t, "truncated varint");
    uint8_t b = *t->p++;
    if (shift == 63 && (b & 0x7e)) return bad(t, "varint overflows 64 bits");
    x |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
    if (shift == 63) return bad(t, "varint longer than 10 bytes");
  }
  *v = x;
  return TG_OK;
}

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

tg_status tg_thrift_field(tg_thrift *t, int *last, int *id, int *type) {
  if (t->p >= t->end) return bad(t, "truncated (a struct has no stop byte)");
  uint8_t b = *t->p++;
  int ty = b & 0x0f, delta = b >> 4;
  if (ty == TG_TT_STOP) {
    if (delta) return bad(t, "field header with stop type and delta %d", delta);
    *type = TG_TT_STOP;
    return TG_OK;
  }
  if (ty > TG_TT_STRUCT) return bad(t, "unknown field type %d", ty);
  if (delta) {
    *id = *last + delta;
  } else {
    uint64_t v = 0;
    tg_status st = varint(t, &v);
    if (st != TG_OK) return st;
    int64_t s = unzigzag(v);
    if (s < -32768 || s > 32767) return bad(t, "field id %lld out of range", (long long)s);
    *id = (int)s;
  }
  *last = *id;
  *type = ty;
  return TG_OK;
}

tg_status tg_thrift_int(tg_thrift *t, int type, int64_t lo, int64_t hi, const char *name, int64_t *v) {
  int64_t x;
  if (type == TG_TT_BYTE) {
    if (t->p >= t->end) return bad(t, "%s: truncated", name);
    x = (int8_t)*t->p++;
  } else if (type == TG_TT_I16 || type == TG_TT_I32 || type == TG_TT_I64) {
    uint64_t u = 0;
    tg_status st = varint(t, &u);
    if (st != TG_OK) return st;
    x = unzigzag(u);
    if ((type == TG_TT_I16 && (x < INT16_MIN || x > INT16_MAX)) || (type == TG_TT_I32 && (x < INT32_MIN || x > INT32_MAX)))
      return bad(t, "%s: %lld overflows its type", name, (long long)x);
  } else {
    return bad(t, "%s: expected an integer, got wire type %d", name, type);
  }
  if (x < lo || x > hi) return bad(t, "%s: value %lld out of range", name, (long long)x);
  *v = x;
  return TG_OK;
}

tg_status tg_thrift_bool(tg_thrift *t, int type, const char *name, int *v) {
  if (type != TG_TT_TRUE && type != TG_TT_FALSE) return bad(t, "%s: expected a boolean, got wire type %d", name, type);
  *v = type == TG_TT_TRUE;
  return TG_OK;
}

tg_status tg_thrift_binary(tg_thrift *t, int type, const char *name, const uint8_t **p, uint32_t *n) {
  if (type != TG_TT_BINARY) return bad(t, "%s: expected a string, got wire type %d", name, type);
  uint64_t len = 0;
  tg_status st = varint(t, &len);
  if (st != TG_OK) return st;
  if (len > (uint64_t)(t->end - t->p)) return bad(t, "%s: string of %lld bytes runs past the end", name, (long long)len);
  *p = t->p;
  *n = (uint32_t)len;
  t->p += len;
  return TG_OK;
}

static tg_status enter(tg_thrift *t) {
  if (++t->depth > TG_PQ_MAX_NESTING) return bad(t, "nested deeper than %d levels", TG_PQ_MAX_NESTING);
  return TG_OK;
}

tg_status tg_thrift_list(tg_thrift *t, int type, const char *name, int *elem, uint32_t *n) {
  if (type != TG_TT_LIST && type != TG_TT_SET) return bad(t, "%s: expected a list, got wire type %d", name, type);
  if (t->p >= t->end) return bad(t, "%s: truncated list header", name);
  uint8_t b = *t->p++;
  uint64_t size = b >> 4;
  int et = b & 0x0f;
  if (size == 15) {
    tg_status st = varint(t, &size);
    if (st != TG_OK) return st;
  }
  if (et == TG_TT_STOP || et > TG_TT_STRUCT) return bad(t, "%s: list of unknown element type %d", name, et);
  if (size > (uint64_t)(t->end - t->p))
    return bad(t, "%s: list claims %lld elements, more than the bytes left", name, (long long)size);
  *elem = et;
  *n = (uint32_t)size;
  return TG_OK;
}

tg_status tg_thrift_begin(tg_thrift *t, int type, const char *name) {
  if (type != TG_TT_STRUCT) return bad(t, "%s: expected a struct, got wire type %d", name, type);
  return enter(t);
}

void tg_thrift_end(tg_thrift *t) { t->depth--; }

tg_status tg_thrift_skip(tg_thrift *t, int type, int in_list) {
  tg_status st = TG_OK;
  uint64_t u = 0;
  switch (type) {
    case TG_TT_TRUE:
    case TG_TT_FALSE:
    case TG_TT_BYTE: /* a field's boolean is its wire type; inside lists and maps it is one byte */
      if ((type == TG_TT_TRUE || type == TG_TT_FALSE) && !in_list) return TG_OK;
      if (t->p >= t->end) return bad(t, "truncated byte");
      t->p++;
      return TG_OK;
    case TG_TT_I16:
    case TG_TT_I32:
    case TG_TT_I64: return varint(t, &u);
    case TG_TT_DOUBLE:
      if (t->end - t->p < 8) return bad(t, "truncated double");
      t->p += 8;
      return TG_OK;
    case TG_TT_BINARY: {
      const uint8_t *p;
      uint32_t n = 0;
      return tg_thrift_binary(t, type, "string", &p, &n);
    }
    case TG_TT_LIST:
    case TG_TT_SET: {
      int et = 0;
      uint32_t n = 0;
      if ((st = tg_thrift_list(t, type, "list", &et, &n)) != TG_OK) return st;
      if ((st = enter(t)) != TG_OK) return st;
      for (uint32_t i = 0; i < n && st == TG_OK; i++) st = tg_thrift_skip(t, et, 1);
      t->depth--;
      return st;
    }
    case TG_TT_MAP: {
      if ((st = varint(t, &u)) != TG_OK) return st;
      if (u == 0) return TG_OK;
      if (t->p >= t->end) return bad(t, "truncated map header");
      uint8_t kv = *t->p++;
      int kt = kv >> 4, vt = kv & 0x0f;
      if (kt == TG_TT_STOP || kt > TG_TT_STRUCT || vt == TG_TT_STOP || vt > TG_TT_STRUCT)
        return bad(t, "map of unknown types (0x%02x)", kv);
      if (u > (uint64_t)(t->end - t->p)) return bad(t, "map claims %lld entries, more than the bytes left", (long long)u);
      if ((st = enter(t)) != TG_OK) return st;
      for (uint64_t i = 0; i < u && st == TG_OK; i++) {
        st = tg_thrift_skip(t, kt, 1);
        if (st == TG_OK) st = tg_thrift_skip(t, vt, 1);
      }
      t->depth--;
      return st;
    }
    case TG_TT_STRUCT: {
      if ((st = enter(t)) != TG_OK) return st;
      int last = 0, id = 0, ft = 0;
      for (;;) {
        if ((st = tg_thrift_field(t, &last, &id, &ft)) != TG_OK) break;
        if (ft == TG_TT_STOP) break;
        if ((st = tg_thrift_skip(t, ft, 0)) != TG_OK) break;
      }
      t->depth--;
      return st;
    }
    default: return bad(t, "cannot skip unknown wire type %d", type);
  }
}
