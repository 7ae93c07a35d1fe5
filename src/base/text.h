/* A growing text buffer: appends, printf, and out-of-memory recorded once (the caller checks oom at the end). */
#ifndef TG_BASE_TEXT_H
#define TG_BASE_TEXT_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Zero-initialise; data is NUL-terminated once len > 0. Appends after an out-of-memory failure do nothing. */
typedef struct tg_text {
  char *data;
  size_t len, cap;
  int oom;
} tg_text;

void tg_text_append(tg_text *b, const char *s, size_t n);
void tg_text_puts(tg_text *b, const char *s);
/* Formats any length (no truncation). */
void tg_text_printf(tg_text *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void tg_text_vprintf(tg_text *b, const char *fmt, va_list ap);
void tg_text_free(tg_text *b);

/* The shortest decimal (6 to 17 significant digits, %g style) that reads back as v, or as the float v when is_float,
 * into buf [40]; returns buf. The one way numbers are written where they must read back exactly. */
const char *tg_format_real(char *buf, double v, int is_float);
/* v as "%.*g" with digits significant digits (0: tg_format_real's shortest text, -1: its shortest for the float v) into
 * buf [40], or `otherwise` when v is
 * NaN or infinite: "null" in JSON, "" (an empty field) in CSV. Returns buf or otherwise. */
const char *tg_format_finite(char *buf, double v, int digits, const char *otherwise);
/* A printed table's cell: fmt (which shows v) into buf [n], or "-" when v is NaN or infinite (a statistic that is
 * undefined for these bars, such as a return after an equity of zero). Returns buf. */
const char *tg_format_cell(char *buf, size_t n, double v, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
