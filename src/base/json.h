/* A small strict JSON reader (bounded depth, byte offsets in every error) and a JSON text builder. */
#ifndef TG_IO_JSON_H
#define TG_IO_JSON_H

#include <stddef.h>
#include "base/text.h"
#include <stdint.h>
#include "tickgrad/status.h"

#define TG_JSON_MAX_DEPTH 64

typedef enum tg_json_type {
  TG_JSON_NULL = 0,
  TG_JSON_FALSE,
  TG_JSON_TRUE,
  TG_JSON_INT,    /* an integer literal that fits int64 */
  TG_JSON_REAL,   /* a number with a fraction or exponent */
  TG_JSON_STRING,
  TG_JSON_ARRAY,
  TG_JSON_OBJECT,
} tg_json_type;

/* One value. Children of arrays and objects are a linked list in document order. */
typedef struct tg_json {
  tg_json_type type;
  size_t offset;       /* byte offset of the value's first character, plus the parse base */
  const char *key;     /* member of an object: its decoded key; otherwise NULL */
  size_t key_offset;   /* member of an object: offset of the key's opening quote */
  const char *str;     /* STRING: decoded UTF-8, NUL-terminated (never contains NUL) */
  size_t len;          /* STRING: bytes in str */
  int64_t i;           /* INT */
  double num;          /* INT and REAL */
  int count;           /* ARRAY, OBJECT: number of children */
  struct tg_json *first, *next;
} tg_json;

typedef struct tg_json_doc tg_json_doc;

/* Parses text[0..len) (not NUL-terminated; never read past len). Grammar per RFC 8259, plus:
 * strings must be valid UTF-8 and may not contain U+0000; object keys must be unique; nesting is
 * at most TG_JSON_MAX_DEPTH. Errors are TG_ERR_FORMAT "<what>: byte <base+offset>: <reason>". */
tg_status tg_json_parse(const char *text, size_t len, const char *what, size_t base,
                        tg_json_doc **out);
/* The whole file at path, read and parsed (errors name the path: a missing file is TG_ERR_IO). */
tg_status tg_json_parse_file(const char *path, tg_json_doc **out);
const tg_json *tg_json_root(const tg_json_doc *d);
void tg_json_free(tg_json_doc *d);
/* Member of an object by key (NULL if absent or obj is not an object). */
const tg_json *tg_json_get(const tg_json *obj, const char *key);
const char *tg_json_type_name(tg_json_type t);
/* 1 if s[0..n) is well-formed UTF-8 (no overlong forms, no surrogates, <= U+10FFFF). */
int tg_json_utf8_valid(const char *s, size_t n);

/* Appends s as a quoted JSON string: '"' and '\\' escaped, control characters as \n, \t, ... or
 * \u00XX; other bytes copied as they are (s should be UTF-8). */
void tg_json_append_string(tg_text *b, const char *s);
/* Appends v as a JSON number (digits as tg_format_finite's: significant digits, 0 the shortest text that reads back, -1
 * that of a float), or null when
 * v is NaN or infinite, which JSON cannot hold. Every double a JSON file holds is written through it. */
void tg_json_append_real(tg_text *b, double v, int digits);

#endif
