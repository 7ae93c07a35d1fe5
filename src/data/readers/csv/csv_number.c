/* CSV numbers: a decimal parser with Clinger's exact fast path and strtod (C locale) for the rest. */
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/csv/csv_internal.h"

/* Powers of ten that a double holds exactly. */
static const double k_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static pthread_once_t g_c_locale_once = PTHREAD_ONCE_INIT;
static locale_t g_c_locale = (locale_t)0;

static void make_c_locale(void) { g_c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

/* strtod over a bounded copy of [p, e) read with '.' as the decimal point whatever the process
 * locale says. The text has already been checked to be a well-formed number. */
static tg_csv_num slow_parse(const char *p, const char *e, char altdec, double *out) {
  size_t n = (size_t)(e - p);
  char small[128];
  char *buf = n < sizeof small ? small : tg_malloc(n + 1);
  if (!buf) return TG_CSV_NUM_BAD;
  for (size_t i = 0; i < n; i++) buf[i] = altdec && p[i] == altdec ? '.' : p[i];
  buf[n] = '\0';
  pthread_once(&g_c_locale_once, make_c_locale);
  locale_t old = g_c_locale ? uselocale(g_c_locale) : (locale_t)0;
  char *end = NULL;
  double v = strtod(buf, &end);
  if (g_c_locale) uselocale(old);
  int full = end == buf + n;
  if (buf != small) tg_free(buf);
  if (!full) return TG_CSV_NUM_BAD;
  *out = v;
  return isfinite(v) ? TG_CSV_NUM_OK : TG_CSV_NUM_INF;
}

/* Case-insensitive equality of [p, e) and the lower-case word w. */
static int word_is(const char *p, const char *e, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(e - p) != n) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = p[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
    if (c != w[i]) return 0;
  }
  return 1;
}

static tg_csv_num special_word(const char *p, const char *e) {
  static const char *const nulls[] = {"nan", "-nan", "+nan", "na", "n/a", "#n/a", "null", "none", "nil"};
  for (size_t i = 0; i < sizeof nulls / sizeof *nulls; i++)
    if (word_is(p, e, nulls[i])) return TG_CSV_NUM_NULL;
  if (p < e && (*p == '-' || *p == '+')) p++;
  if (word_is(p, e, "inf") || word_is(p, e, "infinity")) return TG_CSV_NUM_INF;
  return TG_CSV_NUM_BAD;
}

tg_csv_num tg_csv_number_parse(const char *p, const char *e, char altdec, double *out) {
  const char *s = p;
  if (p == e) return TG_CSV_NUM_NULL;
  int neg = 0;
  if (*p == '-' || *p == '+') {
    neg = *p == '-';
    p++;
  }
  uint64_t w = 0;   /* the first 19 significant digits */
  int nd = 0;       /* how many of them there are */
  int64_t exp10 = 0;
  int any = 0, dropped = 0;
  while (p < e && (unsigned)(*p - '0') < 10) {
    unsigned d = (unsigned)(*p - '0');
    any = 1;
    if (nd < 19) {
      w = w * 10 + d;
      nd += w != 0;
    } else {
      exp10++;
      dropped |= d != 0;
    }
    p++;
  }
  if (p < e && (*p == '.' || (altdec && *p == altdec))) {
    p++;
    while (p < e && (unsigned)(*p - '0') < 10) {
      unsigned d = (unsigned)(*p - '0');
      any = 1;
      if (nd < 19) {
        w = w * 10 + d;
        nd += w != 0;
        exp10--;
      } else {
        dropped |= d != 0;
      }
      p++;
    }
  }
  if (!any) return special_word(s, e);
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    int eneg = 0;
    if (p < e && (*p == '-' || *p == '+')) {
      eneg = *p == '-';
      p++;
    }
    if (p == e || (unsigned)(*p - '0') >= 10) return TG_CSV_NUM_BAD;
    int64_t ev = 0;
    while (p < e && (unsigned)(*p - '0') < 10) {
      if (ev < 1000000) ev = ev * 10 + (*p - '0');
      p++;
    }
    exp10 += eneg ? -ev : ev;
  }
  if (p != e) return TG_CSV_NUM_BAD;
  if (!dropped) {
    if (w == 0) {
      *out = neg ? -0.0 : 0.0;
      return TG_CSV_NUM_OK;
    }
    /* Clinger: w and 10^|exp10| are exact doubles, so one multiply or divide rounds correctly */
    if (w <= (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
      double v = (double)w;
      v = exp10 < 0 ? v / k_pow10[-exp10] : v * k_pow10[exp10];
      *out = neg ? -v : v;
      return TG_CSV_NUM_OK;
    }
  }
  return slow_parse(s, e, altdec, out);
}
