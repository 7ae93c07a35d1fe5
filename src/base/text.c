/* The growing text buffer behind JSON writing, the report's pages and config files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/text.h"

static int reserve(tg_text *b, size_t extra) {
  if (b->oom) return 0;
  if (b->len + extra + 1 <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) cap *= 2;
  char *p = tg_malloc(cap);
  if (!p) {
    b->oom = 1;
    return 0;
  }
  if (b->len) memcpy(p, b->data, b->len);
  p[b->len] = '\0';
  tg_free(b->data);
  b->data = p;
  b->cap = cap;
  return 1;
}

void tg_text_append(tg_text *b, const char *s, size_t n) {
  if (!reserve(b, n)) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void tg_text_puts(tg_text *b, const char *s) { tg_text_append(b, s, strlen(s)); }

void tg_text_vprintf(tg_text *b, const char *fmt, va_list ap) {
  char small[256];
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n < 0) {
    b->oom = 1;
  } else if ((size_t)n < sizeof small) {
    tg_text_append(b, small, (size_t)n);
  } else if (reserve(b, (size_t)n)) {
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
    b->len += (size_t)n;
  }
  va_end(again);
}

void tg_text_printf(tg_text *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tg_text_vprintf(b, fmt, ap);
  va_end(ap);
}

void tg_text_free(tg_text *b) {
  tg_free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->oom = 0;
}

const char *tg_format_real(char *buf, double v, int is_float) {
  for (int digits = 6; digits <= 17; digits++) {
    snprintf(buf, 40, "%.*g", digits, v);
    double back = strtod(buf, NULL);
    if (is_float ? (float)back == (float)v : back == v) break;
  }
  return buf;
}

const char *tg_format_finite(char *buf, double v, int digits, const char *otherwise) {
  if (!isfinite(v)) return otherwise;
  if (digits > 0) snprintf(buf, 40, "%.*g", digits, v);
  else tg_format_real(buf, v, digits < 0);
  return buf;
}

const char *tg_format_cell(char *buf, size_t n, double v, const char *fmt, ...) {
  if (!isfinite(v)) {
    snprintf(buf, n, "-");
    return buf;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, n, fmt, ap);
  va_end(ap);
  return buf;
}
