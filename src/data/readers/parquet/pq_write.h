/* Parquet writer internals: the thrift compact encoder over a byte buffer (the format's enums are parquet.h's). */
#ifndef TG_DATA_PQ_WRITE_H
#define TG_DATA_PQ_WRITE_H

#include <stdint.h>
#include "base/text.h"
#include "data/readers/parquet/parquet.h"

/* Appends to b; zero-initialise with b set. depth counts open structs (the outermost is the one begun with id 0). */
typedef struct tg_thrift_out {
  tg_text *b;
  int depth;
  int last[TG_PQ_MAX_NESTING + 1]; /* the previous field id of each open struct */
} tg_thrift_out;

void tg_tw_varint(tg_thrift_out *t, uint64_t v);
void tg_tw_i32(tg_thrift_out *t, int id, int32_t v);
void tg_tw_i64(tg_thrift_out *t, int id, int64_t v);
void tg_tw_bool(tg_thrift_out *t, int id, int v);
void tg_tw_string(tg_thrift_out *t, int id, const char *s);
/* A list field's header of n elements of wire type elem; the elements follow (tg_tw_elem_*, or tg_tw_begin(t, 0)
 * and tg_tw_end for structs). */
void tg_tw_list(tg_thrift_out *t, int id, int elem, uint32_t n);
void tg_tw_elem_i32(tg_thrift_out *t, int32_t v);
void tg_tw_elem_string(tg_thrift_out *t, const char *s);
/* A struct field id (0: a list element or the outermost struct, no header), and its end (the stop byte). */
void tg_tw_begin(tg_thrift_out *t, int id);
void tg_tw_end(tg_thrift_out *t);

#endif
