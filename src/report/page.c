/* The report page's text: markup, escaped text, notes, number formatting, paths and file times. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "report/report_internal.h"

void rp_raw(rp_page *p, const char *html) { tg_text_puts(&p->b, html); }

void rp_rawf(rp_page *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tg_text_vprintf(&p->b, fmt, ap);
  va_end(ap);
}

void rp_text(rp_page *p, const char *s) {
  const char *run = s;
  for (; *s; s++) {
    const char *rep = NULL;
    switch (*s) {
    case '&': rep = "&amp;"; break;
    case '<': rep = "&lt;"; break;
    case '>': rep = "&gt;"; break;
    case '"': rep = "&quot;"; break;
    case '\'': rep = "&#39;"; break;
    default: continue;
    }
    tg_text_append(&p->b, run, (size_t)(s - run));
    tg_text_puts(&p->b, rep);
    run = s + 1;
  }
  tg_text_append(&p->b, run, (size_t)(s - run));
}

static void vtext(rp_page *p, const char *fmt, va_list ap) {
  char buf[2048];
  vsnprintf(buf, sizeof buf, fmt, ap);
  rp_text(p, buf);
}

void rp_textf(rp_page *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vtext(p, fmt, ap);
  va_end(ap);
}

void rp_unavailable(rp_page *p, const char *fmt, ...) {
  va_list ap;
  rp_raw(p, "<p class=\"na\">not available: ");
  va_start(ap, fmt);
  vtext(p, fmt, ap);
  va_end(ap);
  rp_raw(p, "</p>\n");
}

void rp_note(rp_page *p, const char *fmt, ...) {
  va_list ap;
  rp_raw(p, "<p class=\"note\">");
  va_start(ap, fmt);
  vtext(p, fmt, ap);
  va_end(ap);
  rp_raw(p, "</p>\n");
}

const char *rp_num(double v, char *buf, size_t n) {
  if (!isfinite(v)) snprintf(buf, n, "\xe2\x80\x93"); /* an en dash */
  else if (v == floor(v) && fabs(v) < 1e15) snprintf(buf, n, "%.0f", v);
  else if (fabs(v) >= 1000) snprintf(buf, n, "%.0f", v);
  else snprintf(buf, n, "%.4g", v);
  return buf;
}

int rp_path(char *buf, size_t n, const char *run, const char *file) {
  int k = snprintf(buf, n, "%s/%s", run, file);
  return k > 0 && (size_t)k < n;
}

int rp_is_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

void rp_mtime(const char *path, char *buf, size_t n) {
  struct stat sb;
  struct tm tmv;
  buf[0] = '\0';
  if (stat(path, &sb) != 0 || !gmtime_r(&sb.st_mtime, &tmv)) return;
  strftime(buf, n, "%Y-%m-%d %H:%M UTC", &tmv);
}
