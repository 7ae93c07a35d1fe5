/* The loop over a thrift struct's fields, shared by the metadata and page-header parsers.
 * FIELDS_BEGIN opens the loop with `st`, `id` (field id), `ft` (field type) and a scratch `v`; the
 * caller writes the `case` labels; FIELDS_END closes the struct and returns st. */
#ifndef TG_PQ_FIELDS_H
#define TG_PQ_FIELDS_H

#include "data/readers/parquet/parquet.h"

#define FIELDS_BEGIN(t, type, what)                                                  \
  tg_status st = tg_thrift_begin(t, type, what);                                    \
  if (st != TG_OK) return st;                                                       \
  int last_ = 0, id = 0, ft = 0;                                                    \
  while ((st = tg_thrift_field(t, &last_, &id, &ft)) == TG_OK && ft != TG_TT_STOP) { \
    int64_t v = 0;                                                                  \
    (void)v;                                                                        \
    switch (id)

#define FIELDS_END(t)       \
    if (st != TG_OK) break; \
  }                         \
  tg_thrift_end(t);         \
  return st

#endif
