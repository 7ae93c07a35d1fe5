/* CSV times: the date formats of real bar files, epoch numbers by magnitude, and Lean's file dates. */
#include <string.h>
#include "data/readers/csv/csv_internal.h"
#include "data/readers/timeconv.h"

/* Years whose instants fit int64 nanoseconds since 1970. */
#define YEAR_MIN 1678
#define YEAR_MAX 2261
#define MS_PER_DAY 86400000LL

static inline int is_digit(char c) { return (unsigned)(c - '0') < 10; }

/* Reads between lo and hi digits at *pp (no more digits may follow when hi is reached... the
 * caller checks what comes next); returns the count read, 0 when fewer than lo. */
static int read_digits(const char **pp, const char *e, int lo, int hi, int64_t *v) {
  const char *p = *pp;
  int64_t x = 0;
  int n = 0;
  while (p < e && n < hi && is_digit(*p)) {
    x = x * 10 + (*p - '0');
    p++;
    n++;
  }
  if (n < lo || (p < e && is_digit(*p))) return 0;
  *pp = p;
  *v = x;
  return n;
}

static int lower(char c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static int ok_date(int64_t y, int64_t m, int64_t d) {
  return y >= YEAR_MIN && y <= YEAR_MAX && tg_valid_date(y, (int)m, (int)d);
}

/* A time of day at *pp: H[H][:MM[:SS[.f]]] or HHMM[SS], then an optional AM/PM (after a space or
 * '-', as in "11-AM"), then when allow_zone an optional Z, UTC, GMT or +hh[:mm]. Fills ns after
 * midnight and the zone offset in seconds (*zoned set when one was given). Must reach e. */
static int parse_clock(const char *p, const char *e, int allow_zone, int64_t *ns, int *zoned, int64_t *off_s) {
  int64_t h = 0, mi = 0, s = 0, frac = 0;
  const char *q = p;
  int run = 0;
  while (q < e && is_digit(*q)) q++, run++;
  int had_minutes = 0, had_seconds = 0;
  if (run == 4 || run == 6) { /* 0930, 093000 */
    h = (p[0] - '0') * 10 + (p[1] - '0');
    mi = (p[2] - '0') * 10 + (p[3] - '0');
    if (run == 6) s = (p[4] - '0') * 10 + (p[5] - '0');
    p = q;
    had_minutes = 1;
    had_seconds = run == 6;
  } else if (run == 1 || run == 2) {
    h = run == 1 ? p[0] - '0' : (p[0] - '0') * 10 + (p[1] - '0');
    p = q;
    if (p < e && *p == ':') {
      p++;
      if (!read_digits(&p, e, 2, 2, &mi)) return 0;
      had_minutes = 1;
      if (p < e && *p == ':') {
        p++;
        if (!read_digits(&p, e, 2, 2, &s)) return 0;
        had_seconds = 1;
      }
    }
  } else {
    return 0;
  }
  if (had_seconds && p < e && (*p == '.' || *p == ',') && p + 1 < e && is_digit(p[1])) {
    p++;
    int64_t scale = 100000000;
    while (p < e && is_digit(*p)) {
      frac += (*p - '0') * scale;
      scale /= 10;
      p++;
    }
  }
  /* AM / PM */
  const char *r = p;
  if (r < e && (*r == ' ' || *r == '-')) r++;
  if (e - r >= 2 && (lower(r[0]) == 'a' || lower(r[0]) == 'p') && lower(r[1]) == 'm' &&
      (e - r == 2 || !((r[2] | 0x20) >= 'a' && (r[2] | 0x20) <= 'z'))) {
    if (h < 1 || h > 12) return 0;
    if (lower(r[0]) == 'a') h = h == 12 ? 0 : h;
    else h = h == 12 ? 12 : h + 12;
    p = r + 2;
  }
  if (h > 23 || mi > 59 || s > 59) return 0;
  *zoned = 0;
  *off_s = 0;
  if (allow_zone && p < e) {
    const char *z = p;
    if (*z == ' ') z++;
    if (z < e && e - z == 1 && (*z == 'Z' || *z == 'z')) {
      *zoned = 1;
      p = e;
    } else if (e - z == 3 && ((lower(z[0]) == 'u' && lower(z[1]) == 't' && lower(z[2]) == 'c') ||
                              (lower(z[0]) == 'g' && lower(z[1]) == 'm' && lower(z[2]) == 't'))) {
      *zoned = 1;
      p = e;
    } else if (had_minutes && z < e && (*z == '+' || *z == '-')) {
      int sign = *z == '-' ? -1 : 1;
      z++;
      int64_t oh = 0, om = 0;
      if (!read_digits(&z, e, 2, 2, &oh)) {
        if (!read_digits(&z, e, 4, 4, &oh)) return 0;
        om = oh % 100;
        oh /= 100;
      } else if (z < e) {
        if (*z == ':') z++;
        if (!read_digits(&z, e, 2, 2, &om)) return 0;
      }
      if (oh > 18 || om > 59) return 0;
      *zoned = 1;
      *off_s = sign * (oh * 3600 + om * 60);
      p = z;
    }
  }
  if (p != e) return 0;
  *ns = ((h * 60 + mi) * 60 + s) * TG_NS_PER_S + frac;
  return 1;
}

int tg_csv_tod_parse(const char *p, const char *e, int64_t *ns) {
  int zoned;
  int64_t off;
  return p < e && parse_clock(p, e, 0, ns, &zoned, &off);
}

/* What follows a date: nothing, or a separator (' ' or 'T') and a time of day. */
static int parse_after_date(const char *p, const char *e, int64_t *tod, int *zoned, int64_t *off) {
  *tod = 0;
  *zoned = 0;
  *off = 0;
  if (p == e) return 1;
  if (*p == 'T' || *p == 't') p++;
  else {
    if (*p != ' ') return 0;
    while (p < e && *p == ' ') p++;
  }
  return p < e && parse_clock(p, e, 1, tod, zoned, off);
}

/* YYYY-MM-DD (or / .): year first. Fills the date and where the rest starts. */
static int parse_ymd(const char **pp, const char *e, int64_t *y, int64_t *m, int64_t *d) {
  const char *p = *pp;
  if (!read_digits(&p, e, 4, 4, y) || p >= e) return 0;
  char sep = *p;
  if (sep != '-' && sep != '/' && sep != '.') return 0;
  p++;
  if (!read_digits(&p, e, 1, 2, m) || p >= e || *p != sep) return 0;
  p++;
  if (!read_digits(&p, e, 1, 2, d)) return 0;
  *pp = p;
  return 1;
}

/* A sep B sep YYYY: year last; *sep receives the separator. */
static int parse_yearlast(const char **pp, const char *e, int64_t *a, int64_t *b, int64_t *y, char *sep) {
  const char *p = *pp;
  if (!read_digits(&p, e, 1, 2, a) || p >= e) return 0;
  char c = *p;
  if (c != '-' && c != '/' && c != '.') return 0;
  p++;
  if (!read_digits(&p, e, 1, 2, b) || p >= e || *p != c) return 0;
  p++;
  if (!read_digits(&p, e, 4, 4, y)) return 0;
  *sep = c;
  *pp = p;
  return 1;
}

/* YYYYMMDD, optionally followed by HHMMSS with no separator. */
static int parse_compact(const char **pp, const char *e, int64_t *y, int64_t *m, int64_t *d) {
  const char *p = *pp;
  for (int i = 0; i < 8; i++)
    if (p + i >= e || !is_digit(p[i])) return 0;
  *y = (p[0] - '0') * 1000 + (p[1] - '0') * 100 + (p[2] - '0') * 10 + (p[3] - '0');
  *m = (p[4] - '0') * 10 + (p[5] - '0');
  *d = (p[6] - '0') * 10 + (p[7] - '0');
  *pp = p + 8;
  return 1;
}

/* An integer with an optional fraction: sign, up to 19 digits, optional '.' digits. The fraction
 * comes back as nanoseconds-of-a-unit numerator over 1e9. */
static int parse_epoch_number(const char *p, const char *e, int64_t *v, int64_t *frac9, int *has_frac) {
  int neg = 0;
  if (p < e && (*p == '-' || *p == '+')) neg = *p++ == '-';
  int64_t x = 0;
  int n = 0;
  while (p < e && is_digit(*p)) {
    if (x > (INT64_MAX - 9) / 10) return 0;
    x = x * 10 + (*p - '0');
    p++;
    n++;
  }
  if (n == 0) return 0;
  int64_t f = 0;
  *has_frac = 0;
  if (p < e && *p == '.') {
    p++;
    *has_frac = 1;
    int64_t scale = 100000000;
    while (p < e && is_digit(*p)) {
      f += (*p - '0') * scale;
      scale /= 10;
      p++;
    }
  }
  if (p != e) return 0;
  *v = neg ? -x : x;
  *frac9 = neg ? -f : f;
  return 1;
}

static int64_t civil_ns(int64_t y, int64_t m, int64_t d, int64_t tod, int64_t off_s) {
  return (tg_days_from_civil(y, (int)m, (int)d) * 86400 - off_s) * TG_NS_PER_S + tod;
}

int tg_csv_time_parse(const tg_csv_timefmt *fmt, const char *p, const char *e, int64_t *ns, int *absolute) {
  int64_t y, m, d, tod, off;
  int zoned;
  *absolute = 0;
  switch (fmt->kind) {
    case TG_CSV_TIME_YMD:
      if (!parse_ymd(&p, e, &y, &m, &d)) return 0;
      break;
    case TG_CSV_TIME_DMY:
    case TG_CSV_TIME_MDY: {
      int64_t a, b;
      char sep;
      if (!parse_yearlast(&p, e, &a, &b, &y, &sep)) return 0;
      d = fmt->kind == TG_CSV_TIME_DMY ? a : b;
      m = fmt->kind == TG_CSV_TIME_DMY ? b : a;
      break;
    }
    case TG_CSV_TIME_COMPACT:
      if (!parse_compact(&p, e, &y, &m, &d)) return 0;
      if (e - p == 6 && is_digit(*p)) { /* 20200131093000 */
        if (!parse_clock(p, e, 0, &tod, &zoned, &off) || !ok_date(y, m, d)) return 0;
        *ns = civil_ns(y, m, d, tod, 0);
        return 1;
      }
      break;
    case TG_CSV_TIME_EPOCH: {
      int64_t v, f;
      int has_frac;
      if (!parse_epoch_number(p, e, &v, &f, &has_frac)) return 0;
      int64_t u = fmt->unit_ns;
      if (v > INT64_MAX / u - 1 || v < INT64_MIN / u + 1) return 0;
      *ns = v * u + f * u / TG_NS_PER_S; /* |f| < 1e9 and u <= 1e9: no overflow */
      *absolute = 1;
      return 1;
    }
    case TG_CSV_TIME_DAYMS: {
      int64_t v, f;
      int has_frac;
      if (!parse_epoch_number(p, e, &v, &f, &has_frac) || has_frac || v < 0 || v >= MS_PER_DAY) return 0;
      *ns = fmt->day_ns + v * 1000000;
      return 1;
    }
    default:
      return 0;
  }
  if (!ok_date(y, m, d) || !parse_after_date(p, e, &tod, &zoned, &off)) return 0;
  *ns = civil_ns(y, m, d, tod, off);
  *absolute = zoned;
  return 1;
}

int tg_csv_time_parse_cached(const tg_csv_timefmt *fmt, tg_csv_day_cache *cache, const char *p, const char *e,
                             int64_t *ns, int *absolute) {
  int dated = fmt->kind == TG_CSV_TIME_YMD || fmt->kind == TG_CSV_TIME_DMY || fmt->kind == TG_CSV_TIME_MDY ||
              fmt->kind == TG_CSV_TIME_COMPACT;
  if (!dated) return tg_csv_time_parse(fmt, p, e, ns, absolute);
  int n = cache->len;
  if (n && e - p >= n && memcmp(p, cache->text, (size_t)n) == 0 && (e - p == n || !is_digit(p[n]))) {
    int64_t tod, off;
    int zoned;
    if (!parse_after_date(p + n, e, &tod, &zoned, &off)) return 0;
    *ns = (cache->day * 86400 - off) * TG_NS_PER_S + tod;
    *absolute = zoned;
    return 1;
  }
  if (!tg_csv_time_parse(fmt, p, e, ns, absolute)) return 0;
  /* remember the date part: the digits and separators before the time */
  const char *q = p;
  int64_t y, m, d, a, b;
  char sep;
  int ok = fmt->kind == TG_CSV_TIME_YMD       ? parse_ymd(&q, e, &y, &m, &d)
           : fmt->kind == TG_CSV_TIME_COMPACT ? parse_compact(&q, e, &y, &m, &d)
                                              : parse_yearlast(&q, e, &a, &b, &y, &sep);
  if (fmt->kind == TG_CSV_TIME_DMY) d = a, m = b;
  if (fmt->kind == TG_CSV_TIME_MDY) m = a, d = b;
  if (ok && q - p <= (ptrdiff_t)sizeof cache->text && (q == e || !is_digit(*q))) {
    cache->len = (int)(q - p);
    memcpy(cache->text, p, (size_t)cache->len);
    cache->day = tg_days_from_civil(y, (int)m, (int)d);
  } else {
    cache->len = 0;
  }
  return 1;
}

int tg_csv_date_only(const char *p, const char *e) {
  int64_t y, m, d, a, b;
  char sep;
  const char *q = p;
  if (parse_ymd(&q, e, &y, &m, &d) && q == e) return ok_date(y, m, d);
  q = p;
  if (parse_yearlast(&q, e, &a, &b, &y, &sep) && q == e) return 1;
  q = p;
  if (e - p == 8 && parse_compact(&q, e, &y, &m, &d)) return ok_date(y, m, d);
  return 0;
}

int tg_csv_time_detect(const tg_csv_field *vals, int n, int64_t path_day, tg_csv_timefmt *fmt) {
  memset(fmt, 0, sizeof *fmt);
  const char *p = vals[0].p, *e = vals[0].e;
  int64_t v, f, y, m, d;
  int has_frac;
  if (p == e) return 0;
  int number = parse_epoch_number(p, e, &v, &f, &has_frac);
  if (number && !has_frac && path_day != INT64_MIN && v >= 0 && v < MS_PER_DAY && *p != '-' && *p != '+') {
    fmt->kind = TG_CSV_TIME_DAYMS;
    fmt->day_ns = path_day * TG_NS_PER_DAY;
    return 1;
  }
  const char *q = p;
  if (parse_compact(&q, e, &y, &m, &d) && ok_date(y, m, d) && (q == e || !is_digit(*q) || e - q == 6)) {
    fmt->kind = TG_CSV_TIME_COMPACT;
    int64_t ns;
    int abs_;
    if (tg_csv_time_parse(fmt, p, e, &ns, &abs_)) return 1;
  }
  if (number) {
    if (v < 100000000) return 0; /* before 1973-03 as seconds: not a time we recognise */
    fmt->kind = TG_CSV_TIME_EPOCH;
    fmt->unit_ns = v < 10000000000LL          ? TG_NS_PER_S /* seconds until 2286 */
                   : v < 10000000000000LL    ? 1000000     /* milliseconds */
                   : v < 10000000000000000LL ? 1000        /* microseconds */
                                             : 1;          /* nanoseconds */
    return 1;
  }
  q = p;
  if (parse_ymd(&q, e, &y, &m, &d)) {
    fmt->kind = TG_CSV_TIME_YMD;
  } else {
    int64_t a, b;
    char sep;
    q = p;
    if (!parse_yearlast(&q, e, &a, &b, &y, &sep)) return 0;
    int dayfirst = sep == '.', decided = 0;
    for (int i = 0; i < n && !decided; i++) {
      q = vals[i].p;
      char s2;
      if (!parse_yearlast(&q, vals[i].e, &a, &b, &y, &s2) || s2 != sep) continue;
      if (a > 12 && b <= 12) dayfirst = 1, decided = 1;
      else if (b > 12 && a <= 12) dayfirst = 0, decided = 1;
    }
    fmt->kind = dayfirst ? TG_CSV_TIME_DMY : TG_CSV_TIME_MDY;
  }
  int64_t ns;
  int abs_;
  if (tg_csv_time_parse(fmt, p, e, &ns, &abs_)) return 1;
  fmt->kind = TG_CSV_TIME_NONE;
  return 0;
}

/* YYYYMMDD at the start of [p, e) followed by the end or '_', '.', '-': days, or INT64_MIN. */
static int64_t name_day(const char *p, const char *e) {
  if (e - p < 8) return INT64_MIN;
  for (int i = 0; i < 8; i++)
    if (!is_digit(p[i])) return INT64_MIN;
  if (e - p > 8 && p[8] != '_' && p[8] != '.' && p[8] != '-') return INT64_MIN;
  int64_t y = (p[0] - '0') * 1000 + (p[1] - '0') * 100 + (p[2] - '0') * 10 + (p[3] - '0');
  int m = (p[4] - '0') * 10 + (p[5] - '0'), d = (p[6] - '0') * 10 + (p[7] - '0');
  if (!ok_date(y, m, d)) return INT64_MIN;
  return tg_days_from_civil(y, m, d);
}

int64_t tg_csv_path_day(const char *path) {
  if (!path) return INT64_MIN;
  const char *e = path + strlen(path);
  while (e > path && e[-1] == '/') e--;
  while (e > path) {
    const char *s = e;
    while (s > path && s[-1] != '/') s--;
    int64_t day = name_day(s, e);
    if (day != INT64_MIN) return day;
    e = s;
    while (e > path && e[-1] == '/') e--;
  }
  return INT64_MIN;
}

const char *tg_csv_time_name(const tg_csv_timefmt *fmt) {
  switch (fmt->kind) {
    case TG_CSV_TIME_YMD: return "YYYY-MM-DD[ HH:MM[:SS]]";
    case TG_CSV_TIME_DMY: return "DD.MM.YYYY[ HH:MM[:SS]] (day first)";
    case TG_CSV_TIME_MDY: return "MM/DD/YYYY[ HH:MM[:SS]] (month first)";
    case TG_CSV_TIME_COMPACT: return "YYYYMMDD[ HH:MM[:SS]]";
    case TG_CSV_TIME_EPOCH:
      return fmt->unit_ns == TG_NS_PER_S ? "epoch seconds"
             : fmt->unit_ns == 1000000   ? "epoch milliseconds"
             : fmt->unit_ns == 1000      ? "epoch microseconds"
                                         : "epoch nanoseconds";
    case TG_CSV_TIME_DAYMS: return "milliseconds since midnight (date from the file name)";
    default: return "unknown";
  }
}
