/* Parquet: the thrift compact protocol encoder the writer uses (field headers by id delta, zigzag varints). */
#include "data/readers/parquet/pq_write.h"

static void put_byte(tg_thrift_out *t, uint8_t b) { tg_text_append(t->b, (const char *)&b, 1); }

void tg_tw_varint(tg_thrift_out *t, uint64_t v) {
  uint8_t buf[10];
  size_t n = 0;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    buf[n++] = (uint8_t)(b | (v ? 0x80 : 0));
  } while (v);
  tg_text_append(t->b, (const char *)buf, n);
}

static void zigzag(tg_thrift_out *t, int64_t v) { tg_tw_varint(t, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }

/* A field header: the id as a delta from the struct's previous field when it fits in 4 bits, else in full. */
static void field(tg_thrift_out *t, int id, int type) {
  int delta = id - t->last[t->depth];
  if (delta > 0 && delta <= 15) {
    put_byte(t, (uint8_t)(delta << 4 | type));
  } else {
    put_byte(t, (uint8_t)type);
    zigzag(t, id);
  }
  t->last[t->depth] = id;
}

void tg_tw_i32(tg_thrift_out *t, int id, int32_t v) {
  field(t, id, TG_TT_I32);
  zigzag(t, v);
}

void tg_tw_i64(tg_thrift_out *t, int id, int64_t v) {
  field(t, id, TG_TT_I64);
  zigzag(t, v);
}

void tg_tw_bool(tg_thrift_out *t, int id, int v) { field(t, id, v ? TG_TT_TRUE : TG_TT_FALSE); }

void tg_tw_string(tg_thrift_out *t, int id, const char *s) {
  field(t, id, TG_TT_BINARY);
  tg_tw_elem_string(t, s);
}

void tg_tw_elem_string(tg_thrift_out *t, const char *s) {
  size_t n = strlen(s);
  tg_tw_varint(t, n);
  tg_text_append(t->b, s, n);
}

void tg_tw_elem_i32(tg_thrift_out *t, int32_t v) { zigzag(t, v); }

void tg_tw_list(tg_thrift_out *t, int id, int elem, uint32_t n) {
  field(t, id, TG_TT_LIST);
  if (n < 15) {
    put_byte(t, (uint8_t)(n << 4 | (uint32_t)elem));
  } else {
    put_byte(t, (uint8_t)(0xf0 | elem));
    tg_tw_varint(t, n);
  }
}

void tg_tw_begin(tg_thrift_out *t, int id) {
  if (id > 0) field(t, id, TG_TT_STRUCT);
  t->last[++t->depth] = 0;
}

void tg_tw_end(tg_thrift_out *t) {
  put_byte(t, TG_TT_STOP);
  t->depth--;
}
