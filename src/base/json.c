/* A small strict JSON reader with byte offsets in its errors, and a text builder that escapes strings. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/files.h"
#include "base/json.h"

#define JSON_BLOCK_NODES 256

typedef struct json_block {
  struct json_block *next;
  int used;
  tg_json nodes[JSON_BLOCK_NODES];
} json_block;

struct tg_json_doc {
  json_block *blocks;
  char *strings; /* every decoded string and key, NUL-terminated; fits in len + 1 bytes */
  size_t str_used;
  tg_json *root;
};

typedef struct json_parser {
  const unsigned char *p; /* [len] */
  size_t len, pos, base;
  const char *what;
  tg_json_doc *doc;
} json_parser;

static tg_status json_fail(json_parser *ps, size_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static tg_status json_fail(json_parser *ps, size_t at, const char *fmt, ...) {
  char reason[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  return tg_error(TG_ERR_FORMAT, "%s: byte %zu: %s", ps->what, ps->base + at, reason);
}

/* A printable rendering of the byte at pos for error messages. */
static const char *json_byte_str(const json_parser *ps, size_t pos, char *buf, size_t n) {
  if (pos >= ps->len) return "end of input";
  unsigned char c = ps->p[pos];
  if (c >= 0x21 && c < 0x7f) snprintf(buf, n, "'%c'", c);
  else snprintf(buf, n, "byte 0x%02x", c);
  return buf;
}

static tg_json *json_node_new(json_parser *ps) {
  json_block *b = ps->doc->blocks;
  if (!b || b->used == JSON_BLOCK_NODES) {
    b = tg_malloc(sizeof *b);
    if (!b) return NULL;
    b->next = ps->doc->blocks;
    b->used = 0;
    ps->doc->blocks = b;
  }
  tg_json *v = &b->nodes[b->used++];
  memset(v, 0, sizeof *v);
  return v;
}

static void json_skip_ws(json_parser *ps) {
  while (ps->pos < ps->len) {
    unsigned char c = ps->p[ps->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    ps->pos++;
  }
}

/* Length of the well-formed UTF-8 sequence at s (avail bytes readable), or 0. */
static size_t json_utf8_seq(const unsigned char *s, size_t avail) {
  unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c == 0xe0) n = 3, lo = 0xa0;
  else if (c >= 0xe1 && c <= 0xec) n = 3;
  else if (c == 0xed) n = 3, hi = 0x9f;
  else if (c >= 0xee && c <= 0xef) n = 3;
  else if (c == 0xf0) n = 4, lo = 0x90;
  else if (c >= 0xf1 && c <= 0xf3) n = 4;
  else if (c == 0xf4) n = 4, hi = 0x8f;
  else return 0;
  if (avail < n) return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t k = 2; k < n; k++)
    if (s[k] < 0x80 || s[k] > 0xbf) return 0;
  return n;
}

int tg_json_utf8_valid(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    size_t k = json_utf8_seq(u + i, n - i);
    if (!k) return 0;
    i += k;
  }
  return 1;
}

static int json_hex4(const unsigned char *s, unsigned *out) {
  unsigned v = 0;
  for (int k = 0; k < 4; k++) {
    unsigned char c = s[k];
    unsigned d;
    if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
    else return 0;
    v = v * 16 + d;
  }
  *out = v;
  return 1;
}

static size_t json_utf8_put(char *o, unsigned cp) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xc0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  o[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* Reads the \u escape whose backslash is at pos (a surrogate pair takes two); returns the code point
 * in *cp and the escape's length in *used. */
static tg_status json_unicode_escape(json_parser *ps, size_t pos, unsigned *cp, size_t *used) {
  unsigned hi, lo;
  if (pos + 6 > ps->len || !json_hex4(ps->p + pos + 2, &hi))
    return json_fail(ps, pos, "\\u must be followed by four hex digits");
  if (hi >= 0xdc00 && hi <= 0xdfff)
    return json_fail(ps, pos, "unpaired low surrogate \\u%04x", hi);
  if (hi >= 0xd800 && hi <= 0xdbff) {
    if (pos + 12 > ps->len || ps->p[pos + 6] != '\\' || ps->p[pos + 7] != 'u' ||
        !json_hex4(ps->p + pos + 8, &lo) || lo < 0xdc00 || lo > 0xdfff)
      return json_fail(ps, pos, "high surrogate \\u%04x is not followed by a low surrogate", hi);
    *cp = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
    *used = 12;
    return TG_OK;
  }
  if (hi == 0) return json_fail(ps, pos, "\\u0000 (NUL) in a string is not supported");
  *cp = hi;
  *used = 6;
  return TG_OK;
}

/* A string token starting at the opening quote at ps->pos; the decoded text goes to the string
 * area. */
static tg_status json_parse_string(json_parser *ps, const char **out, size_t *out_len) {
  size_t start = ps->pos;
  char *o = ps->doc->strings + ps->doc->str_used;
  size_t n = 0;
  ps->pos++; /* opening quote */
  for (;;) {
    if (ps->pos >= ps->len) return json_fail(ps, start, "unterminated string");
    unsigned char c = ps->p[ps->pos];
    if (c == '"') {
      ps->pos++;
      break;
    }
    if (c < 0x20) return json_fail(ps, ps->pos, "control character 0x%02x inside a string", c);
    if (c == '\\') {
      if (ps->pos + 1 >= ps->len) return json_fail(ps, start, "unterminated string");
      unsigned char e = ps->p[ps->pos + 1];
      char simple = 0;
      switch (e) {
        case '"': simple = '"'; break;
        case '\\': simple = '\\'; break;
        case '/': simple = '/'; break;
        case 'b': simple = '\b'; break;
        case 'f': simple = '\f'; break;
        case 'n': simple = '\n'; break;
        case 'r': simple = '\r'; break;
        case 't': simple = '\t'; break;
        case 'u': break;
        default: {
          char b[16];
          return json_fail(ps, ps->pos, "invalid escape \\%s", json_byte_str(ps, ps->pos + 1, b, sizeof b));
        }
      }
      if (simple) {
        o[n++] = simple;
        ps->pos += 2;
      } else {
        unsigned cp = 0;
        size_t used = 0;
        tg_status st = json_unicode_escape(ps, ps->pos, &cp, &used);
        if (st != TG_OK) return st;
        n += json_utf8_put(o + n, cp);
        ps->pos += used;
      }
      continue;
    }
    size_t k = json_utf8_seq(ps->p + ps->pos, ps->len - ps->pos);
    if (!k) return json_fail(ps, ps->pos, "invalid UTF-8 byte 0x%02x inside a string", c);
    memcpy(o + n, ps->p + ps->pos, k);
    n += k;
    ps->pos += k;
  }
  o[n] = '\0';
  ps->doc->str_used += n + 1;
  *out = o;
  *out_len = n;
  return TG_OK;
}

static int json_is_digit(json_parser *ps, size_t pos) {
  return pos < ps->len && ps->p[pos] >= '0' && ps->p[pos] <= '9';
}

static tg_status json_parse_number(json_parser *ps, tg_json *v) {
  size_t start = ps->pos, pos = ps->pos;
  int neg = 0, is_int = 1;
  if (ps->p[pos] == '-') neg = 1, pos++;
  if (!json_is_digit(ps, pos)) return json_fail(ps, pos, "expected a digit");
  if (ps->p[pos] == '0') {
    pos++;
    if (json_is_digit(ps, pos)) return json_fail(ps, start, "numbers may not have leading zeros");
  } else {
    while (json_is_digit(ps, pos)) pos++;
  }
  if (pos < ps->len && ps->p[pos] == '.') {
    is_int = 0;
    pos++;
    if (!json_is_digit(ps, pos)) return json_fail(ps, pos, "expected a digit after '.'");
    while (json_is_digit(ps, pos)) pos++;
  }
  if (pos < ps->len && (ps->p[pos] == 'e' || ps->p[pos] == 'E')) {
    is_int = 0;
    pos++;
    if (pos < ps->len && (ps->p[pos] == '+' || ps->p[pos] == '-')) pos++;
    if (!json_is_digit(ps, pos)) return json_fail(ps, pos, "expected a digit in the exponent");
    while (json_is_digit(ps, pos)) pos++;
  }
  ps->pos = pos;
  if (is_int) {
    /* accumulate as a negative number so INT64_MIN fits */
    int64_t acc = 0;
    for (size_t k = start + (size_t)neg; k < pos; k++) {
      int d = ps->p[k] - '0';
      if (acc < (INT64_MIN + d) / 10) return json_fail(ps, start, "integer out of the 64-bit range");
      acc = acc * 10 - d;
    }
    if (!neg) {
      if (acc == INT64_MIN) return json_fail(ps, start, "integer out of the 64-bit range");
      acc = -acc;
    }
    v->type = TG_JSON_INT;
    v->i = acc;
    v->num = (double)acc;
    return TG_OK;
  }
  char buf[128];
  if (pos - start >= sizeof buf) return json_fail(ps, start, "number longer than %zu characters", sizeof buf - 1);
  memcpy(buf, ps->p + start, pos - start);
  buf[pos - start] = '\0';
  double d = strtod(buf, NULL);
  if (!isfinite(d)) return json_fail(ps, start, "number out of the double range");
  v->type = TG_JSON_REAL;
  v->num = d;
  return TG_OK;
}

static int json_key_cmp(const void *a, const void *b) {
  const tg_json *x = *(const tg_json *const *)a, *y = *(const tg_json *const *)b;
  return strcmp(x->key, y->key);
}

static tg_status json_check_unique(json_parser *ps, const tg_json *obj) {
  if (obj->count < 2) return TG_OK;
  const tg_json **kids = tg_malloc((size_t)obj->count * sizeof *kids);
  if (!kids) return tg_error(TG_ERR_NOMEM, "%s: out of memory checking JSON keys", ps->what);
  int n = 0;
  for (const tg_json *c = obj->first; c; c = c->next) kids[n++] = c;
  qsort(kids, (size_t)n, sizeof *kids, json_key_cmp);
  for (int k = 1; k < n; k++) {
    if (strcmp(kids[k - 1]->key, kids[k]->key) == 0) {
      size_t at = kids[k]->key_offset > kids[k - 1]->key_offset ? kids[k]->key_offset
                                                                 : kids[k - 1]->key_offset;
      char key[48];
      snprintf(key, sizeof key, "%s", kids[k]->key);
      tg_free(kids);
      return json_fail(ps, at, "duplicate key \"%s\"", key);
    }
  }
  tg_free(kids);
  return TG_OK;
}

static tg_status json_parse_value(json_parser *ps, int depth, tg_json **out);

static tg_status json_parse_container(json_parser *ps, int depth, tg_json *v) {
  int is_obj = ps->p[ps->pos] == '{';
  char close = is_obj ? '}' : ']';
  if (depth > TG_JSON_MAX_DEPTH)
    return json_fail(ps, ps->pos, "nesting deeper than %d levels", TG_JSON_MAX_DEPTH);
  v->type = is_obj ? TG_JSON_OBJECT : TG_JSON_ARRAY;
  ps->pos++;
  json_skip_ws(ps);
  if (ps->pos < ps->len && ps->p[ps->pos] == close) {
    ps->pos++;
    return TG_OK;
  }
  tg_json *last = NULL;
  char b[16];
  for (;;) {
    json_skip_ws(ps);
    const char *key = NULL;
    size_t key_len = 0, key_off = ps->pos;
    if (is_obj) {
      if (ps->pos >= ps->len || ps->p[ps->pos] != '"')
        return json_fail(ps, ps->pos, "expected a string key, found %s",
                         json_byte_str(ps, ps->pos, b, sizeof b));
      tg_status st = json_parse_string(ps, &key, &key_len);
      if (st != TG_OK) return st;
      json_skip_ws(ps);
      if (ps->pos >= ps->len || ps->p[ps->pos] != ':')
        return json_fail(ps, ps->pos, "expected ':' after a key, found %s",
                         json_byte_str(ps, ps->pos, b, sizeof b));
      ps->pos++;
    }
    tg_json *child = NULL;
    tg_status st = json_parse_value(ps, depth + 1, &child);
    if (st != TG_OK) return st;
    child->key = key;
    child->key_offset = ps->base + key_off;
    if (last) last->next = child;
    else v->first = child;
    last = child;
    v->count++;
    json_skip_ws(ps);
    if (ps->pos < ps->len && ps->p[ps->pos] == ',') {
      ps->pos++;
      continue;
    }
    if (ps->pos < ps->len && ps->p[ps->pos] == close) {
      ps->pos++;
      break;
    }
    return json_fail(ps, ps->pos, "expected ',' or '%c', found %s", close,
                     json_byte_str(ps, ps->pos, b, sizeof b));
  }
  return is_obj ? json_check_unique(ps, v) : TG_OK;
}

static tg_status json_parse_literal(json_parser *ps, tg_json *v) {
  static const struct {
    const char *text;
    tg_json_type type;
  } lits[] = {{"true", TG_JSON_TRUE}, {"false", TG_JSON_FALSE}, {"null", TG_JSON_NULL}};
  for (size_t k = 0; k < sizeof lits / sizeof lits[0]; k++) {
    size_t n = strlen(lits[k].text);
    if (ps->len - ps->pos >= n && memcmp(ps->p + ps->pos, lits[k].text, n) == 0) {
      v->type = lits[k].type;
      ps->pos += n;
      return TG_OK;
    }
  }
  char b[16];
  return json_fail(ps, ps->pos, "unexpected %s, expected a value", json_byte_str(ps, ps->pos, b, sizeof b));
}

static tg_status json_parse_value(json_parser *ps, int depth, tg_json **out) {
  json_skip_ws(ps);
  if (ps->pos >= ps->len) return json_fail(ps, ps->pos, "unexpected end of input, expected a value");
  tg_json *v = json_node_new(ps);
  if (!v) return tg_error(TG_ERR_NOMEM, "%s: out of memory parsing JSON", ps->what);
  v->offset = ps->base + ps->pos;
  *out = v;
  unsigned char c = ps->p[ps->pos];
  if (c == '{' || c == '[') return json_parse_container(ps, depth, v);
  if (c == '"') {
    v->type = TG_JSON_STRING;
    return json_parse_string(ps, &v->str, &v->len);
  }
  if (c == '-' || (c >= '0' && c <= '9')) return json_parse_number(ps, v);
  return json_parse_literal(ps, v);
}

void tg_json_free(tg_json_doc *d) {
  if (!d) return;
  json_block *b = d->blocks;
  while (b) {
    json_block *next = b->next;
    tg_free(b);
    b = next;
  }
  tg_free(d->strings);
  tg_free(d);
}

tg_status tg_json_parse(const char *text, size_t len, const char *what, size_t base,
                        tg_json_doc **out) {
  if (!out) return tg_error(TG_ERR_INVALID, "tg_json_parse: out is NULL");
  *out = NULL;
  if (!text && len) return tg_error(TG_ERR_INVALID, "tg_json_parse: text is NULL");
  tg_json_doc *d = tg_calloc(1, sizeof *d);
  if (!d || !(d->strings = tg_malloc(len + 1))) {
    tg_free(d);
    return tg_error(TG_ERR_NOMEM, "%s: out of memory for a %zu-byte JSON text", what ? what : "json", len);
  }
  json_parser ps = {(const unsigned char *)text, len, 0, base, what ? what : "json", d};
  tg_status st = json_parse_value(&ps, 1, &d->root);
  if (st == TG_OK) {
    json_skip_ws(&ps);
    if (ps.pos != ps.len) {
      char b[16];
      st = json_fail(&ps, ps.pos, "unexpected %s after the end of the JSON value",
                     json_byte_str(&ps, ps.pos, b, sizeof b));
    }
  }
  if (st != TG_OK) {
    tg_json_free(d);
    return st;
  }
  *out = d;
  return TG_OK;
}

const tg_json *tg_json_root(const tg_json_doc *d) { return d ? d->root : NULL; }

const tg_json *tg_json_get(const tg_json *obj, const char *key) {
  if (!obj || obj->type != TG_JSON_OBJECT) return NULL;
  for (const tg_json *c = obj->first; c; c = c->next)
    if (strcmp(c->key, key) == 0) return c;
  return NULL;
}

const char *tg_json_type_name(tg_json_type t) {
  switch (t) {
    case TG_JSON_NULL: return "null";
    case TG_JSON_FALSE:
    case TG_JSON_TRUE: return "boolean";
    case TG_JSON_INT: return "integer";
    case TG_JSON_REAL: return "number";
    case TG_JSON_STRING: return "string";
    case TG_JSON_ARRAY: return "array";
    case TG_JSON_OBJECT: return "object";
  }
  return "?";
}

/* ---- builder ---- */

void tg_json_append_string(tg_text *b, const char *s) {
  tg_text_append(b, "\"", 1);
  for (const unsigned char *u = (const unsigned char *)s; *u; u++) {
    char esc[8];
    switch (*u) {
      case '"': tg_text_append(b, "\\\"", 2); break;
      case '\\': tg_text_append(b, "\\\\", 2); break;
      case '\b': tg_text_append(b, "\\b", 2); break;
      case '\f': tg_text_append(b, "\\f", 2); break;
      case '\n': tg_text_append(b, "\\n", 2); break;
      case '\r': tg_text_append(b, "\\r", 2); break;
      case '\t': tg_text_append(b, "\\t", 2); break;
      default:
        if (*u < 0x20 || *u == 0x7f) {
          snprintf(esc, sizeof esc, "\\u%04x", *u);
          tg_text_append(b, esc, 6);
        } else {
          tg_text_append(b, (const char *)u, 1);
        }
    }
  }
  tg_text_append(b, "\"", 1);
}

tg_status tg_json_parse_file(const char *path, tg_json_doc **out) {
  char *text = NULL;
  size_t len = 0;
  *out = NULL;
  tg_status st = tg_read_file(path, &text, &len);
  if (st == TG_OK) st = tg_json_parse(text, len, path, 0, out);
  tg_free(text);
  return st;
}

void tg_json_append_real(tg_text *b, double v, int digits) {
  char buf[40];
  tg_text_puts(b, tg_format_finite(buf, v, digits, "null"));
}
