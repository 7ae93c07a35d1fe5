/* CSV lines: finding line ends eight bytes at a time while checking for NUL and non-UTF-8 bytes. */
#include <stdio.h>
#include <string.h>
#include "data/readers/csv/csv_internal.h"

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Nonzero when some byte of x is zero (exact on the lowest zero byte, which is all we need). */
static inline uint64_t has_zero(uint64_t x) { return (x - ONES) & ~x & HIGHS; }

int tg_csv_utf8_valid(const unsigned char *p, const unsigned char *e, size_t *bad) {
  const unsigned char *s = p;
  while (p < e) {
    unsigned c = *p;
    if (c < 0x80) {
      p++;
      continue;
    }
    int n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 1;
    else if (c == 0xE0) n = 2, lo = 0xA0;
    else if (c == 0xED) n = 2, hi = 0x9F; /* no surrogates */
    else if (c >= 0xE1 && c <= 0xEF) n = 2;
    else if (c == 0xF0) n = 3, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) n = 3;
    else if (c == 0xF4) n = 3, hi = 0x8F;
    else goto fail;
    if (e - p <= n) goto fail;
    if (p[1] < lo || p[1] > hi) goto fail;
    for (int i = 2; i <= n; i++)
      if (p[i] < 0x80 || p[i] > 0xBF) goto fail;
    p += n + 1;
  }
  return 1;
fail:
  *bad = (size_t)(p - s);
  return 0;
}

const char *tg_csv_quote(const char *p, const char *e, char *buf, size_t n) {
  size_t k = 0, shown = 0;
  for (; p < e && k + 8 < n; p++) {
    if (shown == 40) {
      memcpy(buf + k, "...", 3);
      k += 3;
      break;
    }
    unsigned char c = (unsigned char)*p;
    if (c >= 0x20 && c < 0x7F) buf[k++] = (char)c;
    else k += (size_t)snprintf(buf + k, n - k, "\\x%02X", c);
    shown++;
  }
  buf[k] = '\0';
  return buf;
}

int tg_csv_blank(const char *p, const char *e) {
  for (; p < e; p++)
    if (*p != ' ' && *p != '\t') return 0;
  return 1;
}

tg_status tg_csv_line_read(const char *path, const char *pos, const char *end, int64_t no, tg_csv_line *ln) {
  const char *p = pos;
  uint64_t high = 0, zero = 0;
  const uint64_t nl = ONES * '\n';
  /* eight bytes at a time while no newline is among them */
  while (end - p >= 8) {
    uint64_t x;
    memcpy(&x, p, 8);
    if (has_zero(x ^ nl)) break;
    high |= x;
    zero |= has_zero(x);
    p += 8;
  }
  while (p < end && *p != '\n') {
    high |= (unsigned char)*p;
    zero |= *p == '\0';
    p++;
  }
  size_t len = (size_t)(p - pos);
  if (len > TG_CSV_MAX_LINE)
    return tg_error(TG_ERR_FORMAT, "%s: line %lld is longer than 1 MiB (%zu bytes); is this a CSV file?", path,
                    (long long)no, len);
  if (zero) {
    const char *z = memchr(pos, '\0', len);
    return tg_error(TG_ERR_FORMAT, "%s: line %lld: a NUL byte at byte %zu of the line; is this a CSV file?", path,
                    (long long)no, (size_t)(z - pos) + 1);
  }
  if (high & HIGHS) {
    size_t bad = 0;
    if (!tg_csv_utf8_valid((const unsigned char *)pos, (const unsigned char *)p, &bad))
      return tg_error(TG_ERR_FORMAT, "%s: line %lld: byte %zu (0x%02X) is not UTF-8 text", path, (long long)no, bad + 1,
                      (unsigned char)pos[bad]);
  }
  ln->p = pos;
  ln->e = p > pos && p[-1] == '\r' ? p - 1 : p;
  ln->next = p < end ? p + 1 : end;
  ln->no = no;
  return TG_OK;
}

int64_t tg_csv_field_count(const char *p, const char *le, char delim) {
  int64_t n = 0;
  int more = 1;
  tg_csv_field f;
  while (more) {
    p = tg_csv_field_next(p, le, delim, &f, &more);
    n++;
  }
  return n;
}
