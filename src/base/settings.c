/* The settings engine: finding rows, setting values from text with range checks, checking, comparing, --help. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "base/parse.h"
#include "base/settings.h"
#include "base/settings_internal.h"

const tg_setting *tg_settings_find(const tg_settings *t, const char *key) {
  for (int i = 0; key && i < t->n; i++)
    if (strcmp(t->rows[i].key, key) == 0) return &t->rows[i];
  return NULL;
}

const char *tg_setting_flag(const tg_setting *s, char *buf, size_t n) {
  if (s->flag) {
    snprintf(buf, n, "%s", s->flag);
    return buf;
  }
  const char *dot = strrchr(s->key, '.');
  snprintf(buf, n, "--%s", dot ? dot + 1 : s->key);
  for (char *p = buf + 2; *p; p++)
    if (*p == '_') *p = '-';
  return buf;
}

/* ---- numbers ---- */

int ts_whole(tg_setting_type type) { return type == TG_SET_INT || type == TG_SET_INT64; }

int ts_in_range(const tg_setting *s, double v) {
  int lo_ok = s->flags & TG_SET_LO_OPEN ? v > s->lo : v >= s->lo;
  int hi_ok = s->flags & TG_SET_HI_OPEN ? v < s->hi : v <= s->hi;
  return lo_ok && hi_ok;
}

/* "a whole number in [1, 1000000]", "a number in (0, 1)" (then the row's help, when asked and it has one) */
static const char *want(const tg_setting *s, tg_setting_type type, int help, char *buf, size_t n) {
  const char *fmt = ts_whole(type) ? "a whole number in %c%.0f, %.0f%c%s%s%s" : "a number in %c%g, %g%c%s%s%s";
  help = help && s->help;
  snprintf(buf, n, fmt, s->flags & TG_SET_LO_OPEN ? '(' : '[', s->lo, s->hi, s->flags & TG_SET_HI_OPEN ? ')' : ']',
           help ? " (" : "", help ? s->help : "", help ? ")" : "");
  return buf;
}

tg_status ts_set_number(const tg_settings *t, void *cfg, const tg_setting *s, double v, const char *where) {
  char w[256];
  if (!ts_in_range(s, v) || (ts_whole(s->type) && v != floor(v)))
    return tg_error(TG_ERR_INVALID, "%s: %s (%s) is %g; want %s", t->name, s->key, where, v, want(s, s->type, 1, w, sizeof w));
  void *p = (char *)cfg + s->off;
  switch (s->type) {
    case TG_SET_DOUBLE: *(double *)p = v; break;
    case TG_SET_FLOAT: *(float *)p = (float)v; break;
    case TG_SET_INT: *(int *)p = (int)v; break;
    case TG_SET_INT64: *(int64_t *)p = (int64_t)v; break;
    default: return tg_error(TG_ERR_INVALID, "%s: %s is not a number setting", t->name, s->key);
  }
  return TG_OK;
}

static double number_of(const void *cfg, const tg_setting *s) {
  const void *p = (const char *)cfg + s->off;
  switch (s->type) {
    case TG_SET_DOUBLE: return *(const double *)p;
    case TG_SET_FLOAT: return *(const float *)p;
    case TG_SET_INT: return *(const int *)p;
    case TG_SET_INT64: return (double)*(const int64_t *)p;
    default: return 0;
  }
}

/* ---- lists ---- */

int *ts_count(void *cfg, const tg_setting *s) { return (int *)((char *)cfg + s->count_off); }
static int count_of(const void *cfg, const tg_setting *s) { return *(const int *)((const char *)cfg + s->count_off); }

/* n elements v [n] of the list s, each in range (whole for int lists, increasing when asked); v read only when n
 * is allowed. */
static tg_status check_list(const tg_settings *t, const tg_setting *s, const double *v, int n, const char *where) {
  char w[256];
  if (n < s->min_n || n > s->max_n)
    return tg_error(TG_ERR_INVALID, "%s: %s (%s): %d given; want %d..%d", t->name, s->key, where, n, s->min_n, s->max_n);
  for (int k = 0; k < n; k++) {
    int inc_bad = (s->flags & TG_SET_INCREASING) && k > 0 && !(v[k] > v[k - 1]);
    if (!ts_in_range(s, v[k]) || (ts_whole(s->elem) && v[k] != floor(v[k])) || inc_bad)
      return tg_error(TG_ERR_INVALID, "%s: %s (%s): %g at position %d; want %s%s", t->name, s->key, where, v[k], k + 1,
                      want(s, s->elem, 0, w, sizeof w), s->flags & TG_SET_INCREASING ? ", each above the one before" : "");
  }
  return TG_OK;
}

tg_status ts_set_list(const tg_settings *t, void *cfg, const tg_setting *s, const double *v, int n, const char *where) {
  tg_status st = check_list(t, s, v, n, where);
  if (st != TG_OK) return st;
  for (int k = 0; k < n; k++) {
    if (s->elem == TG_SET_FLOAT) ((float *)((char *)cfg + s->off))[k] = (float)v[k];
    else ((int *)((char *)cfg + s->off))[k] = (int)v[k];
  }
  *ts_count(cfg, s) = n;
  return TG_OK;
}

static double elem_of(const void *cfg, const tg_setting *s, int k) {
  const void *p = (const char *)cfg + s->off;
  return s->elem == TG_SET_FLOAT ? ((const float *)p)[k] : ((const int *)p)[k];
}

/* "0.1,0.5,0.9"; "" or "none": no element */
static tg_status set_list_text(const tg_settings *t, void *cfg, const tg_setting *s, const char *text, const char *where) {
  double v[TS_MAX_LIST + 1];
  int n = 0;
  char what[160];
  snprintf(what, sizeof what, "%s: %s (%s) '%s'", t->name, s->key, where, text);
  if (*text && strcmp(text, "none") != 0) {
    for (const char *p = text; n <= s->max_n && n <= TS_MAX_LIST;) {
      char tok[64];
      size_t len = strcspn(p, ",");
      snprintf(tok, sizeof tok, "%.*s", (int)(len < sizeof tok - 1 ? len : sizeof tok - 1), p);
      if (len >= sizeof tok - 1 || tg_parse_double(tok, -INFINITY, INFINITY, what, &v[n]) != TG_OK)
        return tg_error(TG_ERR_INVALID, "%s: want numbers separated by commas%s%s%s", what, s->help ? " (" : "",
                        s->help ? s->help : "", s->help ? ")" : "");
      n++;
      if (!p[len]) break;
      p += len + 1;
    }
  }
  return ts_set_list(t, cfg, s, v, n, where);
}

/* ---- strings, names ---- */

tg_status ts_set_string(const tg_settings *t, void *cfg, const tg_setting *s, const char *v, const char *where) {
  char *p = (char *)cfg + s->off;
  if (s->type == TG_SET_ENUM) {
    char names[256] = "";
    for (int k = 0; s->names[k]; k++) {
      if (strcmp(v, s->names[k]) == 0) {
        *(int *)p = k;
        return TG_OK;
      }
      size_t at = strlen(names);
      snprintf(names + at, sizeof names - at, "%s%s", k == 0 ? "" : s->names[k + 1] ? ", " : " or ", s->names[k]);
    }
    return tg_error(TG_ERR_INVALID, "%s: %s (%s) is '%s'; want %s", t->name, s->key, where, v, names);
  }
  if (s->type == TG_SET_STRS) {
    int *n = ts_count(cfg, s);
    if (*n >= s->max_n) return tg_error(TG_ERR_INVALID, "%s: %s (%s): more than %d given", t->name, s->key, where, s->max_n);
    if (!v[0] || strlen(v) >= s->size)
      return tg_error(TG_ERR_INVALID, "%s: %s (%s): '%.64s' is empty or longer than %zu bytes", t->name, s->key, where, v,
                      s->size - 1);
    snprintf(p + (size_t)*n * s->size, s->size, "%s", v);
    (*n)++;
    return TG_OK;
  }
  if (strlen(v) >= s->size)
    return tg_error(TG_ERR_INVALID, "%s: %s (%s): '%.64s...' is longer than %zu bytes", t->name, s->key, where, v, s->size - 1);
  snprintf(p, s->size, "%s", v);
  return TG_OK;
}

tg_status ts_set_bool(const tg_settings *t, void *cfg, const tg_setting *s, int v, const char *where) {
  if (v != 0 && v != 1) return tg_error(TG_ERR_INVALID, "%s: %s (%s) is %d; want 0 or 1", t->name, s->key, where, v);
  *(int *)((char *)cfg + s->off) = v;
  return TG_OK;
}

/* ---- setting from text ---- */

tg_status tg_setting_set_text(const tg_settings *t, void *cfg, const tg_setting *s, const char *text, const char *where) {
  char what[160];
  if (!text) return tg_error(TG_ERR_INVALID, "%s: %s (%s) needs a value", t->name, s->key, where);
  snprintf(what, sizeof what, "%s: %s (%s)", t->name, s->key, where);
  switch (s->type) {
    case TG_SET_DOUBLE: case TG_SET_FLOAT: case TG_SET_INT: case TG_SET_INT64: {
      double v;
      if (tg_parse_double(text, -INFINITY, INFINITY, what, &v) != TG_OK) return TG_ERR_INVALID;
      return ts_set_number(t, cfg, s, v, where);
    }
    case TG_SET_UINT64: return tg_parse_uint64(text, what, (uint64_t *)((char *)cfg + s->off));
    case TG_SET_BOOL: {
      int v = !strcmp(text, "1") || !strcmp(text, "true") ? 1 : !strcmp(text, "0") || !strcmp(text, "false") ? 0 : -1;
      if (v < 0) return tg_error(TG_ERR_INVALID, "%s is '%s'; want 0, 1, false or true", what, text);
      return ts_set_bool(t, cfg, s, v, where);
    }
    case TG_SET_NUMS: return set_list_text(t, cfg, s, text, where);
    default: return ts_set_string(t, cfg, s, text, where);
  }
}

tg_status tg_settings_set(const tg_settings *t, void *cfg, const char *key, const char *text) {
  const tg_setting *s = tg_settings_find(t, key);
  if (!s) return tg_error(TG_ERR_INVALID, "%s: unknown setting '%s'", t->name, key ? key : "");
  return tg_setting_set_text(t, cfg, s, text, "set");
}

static int flag_is(const tg_setting *s, const char *flag) {
  char buf[96];
  return flag && strcmp(tg_setting_flag(s, buf, sizeof buf), flag) == 0;
}

int tg_settings_flag_known(const tg_settings *t, const char *flag) {
  for (int i = 0; i < t->n; i++)
    if (flag_is(&t->rows[i], flag)) return 1;
  return 0;
}

tg_status tg_settings_set_flag(const tg_settings *t, void *cfg, const char *flag, const char *text, unsigned variant,
                               const char *vname) {
  const tg_setting *other = NULL;
  for (int i = 0; i < t->n; i++) {
    const tg_setting *s = &t->rows[i];
    if (!flag_is(s, flag)) continue;
    if (variant && s->only && !(s->only & variant)) {
      other = s;
      continue;
    }
    return tg_setting_set_text(t, cfg, s, text, flag);
  }
  if (other) return tg_error(TG_ERR_INVALID, "%s sets %s, which does not apply to %s", flag, other->key, vname);
  return tg_error(TG_ERR_INVALID, "unknown flag '%s'", flag ? flag : "");
}

/* ---- checking, comparing ---- */

tg_status tg_settings_check(const tg_settings *t, const void *cfg) {
  char w[256];
  if (!cfg) return tg_error(TG_ERR_INVALID, "%s: NULL config", t->name);
  for (int i = 0; i < t->n; i++) {
    const tg_setting *s = &t->rows[i];
    const char *p = (const char *)cfg + s->off;
    switch (s->type) {
      case TG_SET_DOUBLE: case TG_SET_FLOAT: case TG_SET_INT: case TG_SET_INT64: {
        double v = number_of(cfg, s);
        if (!ts_in_range(s, v))
          return tg_error(TG_ERR_INVALID, "%s: %s is %g; want %s", t->name, s->key, v, want(s, s->type, 1, w, sizeof w));
        break;
      }
      case TG_SET_BOOL: case TG_SET_ENUM: {
        int v = *(const int *)p, n = 2;
        if (s->type == TG_SET_ENUM)
          for (n = 0; s->names[n];) n++;
        if (v < 0 || v >= n) return tg_error(TG_ERR_INVALID, "%s: %s is %d; want 0..%d", t->name, s->key, v, n - 1);
        break;
      }
      case TG_SET_STRING:
        if (!memchr(p, '\0', s->size)) return tg_error(TG_ERR_INVALID, "%s: %s is not a terminated string", t->name, s->key);
        break;
      case TG_SET_NUMS: {
        double v[TS_MAX_LIST];
        int n = count_of(cfg, s);
        for (int k = 0; k < n && k < s->max_n && k < TS_MAX_LIST; k++) v[k] = elem_of(cfg, s, k);
        tg_status st = check_list(t, s, v, n, "check");
        if (st != TG_OK) return st;
        break;
      }
      case TG_SET_STRS: {
        int n = count_of(cfg, s);
        if (n < s->min_n || n > s->max_n)
          return tg_error(TG_ERR_INVALID, "%s: %s: %d given; want %d..%d", t->name, s->key, n, s->min_n, s->max_n);
        break;
      }
      case TG_SET_UINT64: break;
    }
  }
  return TG_OK;
}

static int differ(const void *a, const void *b, const tg_setting *s) {
  const char *pa = (const char *)a + s->off, *pb = (const char *)b + s->off;
  switch (s->type) {
    case TG_SET_DOUBLE: case TG_SET_FLOAT: case TG_SET_INT: case TG_SET_INT64: return number_of(a, s) != number_of(b, s);
    case TG_SET_UINT64: return *(const uint64_t *)pa != *(const uint64_t *)pb;
    case TG_SET_BOOL: case TG_SET_ENUM: return *(const int *)pa != *(const int *)pb;
    case TG_SET_STRING: return strcmp(pa, pb) != 0;
    case TG_SET_NUMS: case TG_SET_STRS: {
      int n = count_of(a, s), d = n != count_of(b, s);
      for (int k = 0; !d && k < n; k++)
        d = s->type == TG_SET_NUMS ? elem_of(a, s, k) != elem_of(b, s, k)
                                   : strcmp(pa + (size_t)k * s->size, pb + (size_t)k * s->size) != 0;
      return d;
    }
  }
  return 0;
}

const tg_setting *tg_settings_diff(const tg_settings *t, const void *a, const void *b) {
  for (int i = 0; i < t->n; i++)
    if (!(t->rows[i].flags & TG_SET_RESUMABLE) && differ(a, b, &t->rows[i])) return &t->rows[i];
  return NULL;
}

/* ---- --help ---- */

const char *tg_setting_arg(const tg_setting *s) {
  static const char *const ARG[] = {"X", "X", "N", "N", "N", "0|1", "S", "S", "N,N,...", "S..."}; /* by type */
  if (s->arg) return s->arg;
  return (unsigned)s->type < sizeof ARG / sizeof ARG[0] ? ARG[s->type] : "S";
}

const char *tg_setting_type_name(tg_setting_type type) {
  static const char *const NAME[] = {"double", "float", "int", "int64", "uint64", "bool", "string", "enum", "numbers", "strings"};
  return (unsigned)type < sizeof NAME / sizeof NAME[0] ? NAME[type] : "?";
}

static void help_row(const tg_setting *s, const char *drop, FILE *f) {
  char flag[96], lhs[128];
  const char *help = s->help ? s->help : "";
  size_t nd = drop ? strlen(drop) : 0;
  if (nd && strncmp(help, drop, nd) == 0) help += nd;
  snprintf(lhs, sizeof lhs, "%s %s", tg_setting_flag(s, flag, sizeof flag), tg_setting_arg(s));
  fprintf(f, "  %-22s %s\n", lhs, help);
}

void tg_settings_help(const tg_settings *t, FILE *f) {
  for (int i = 0; i < t->n; i++) help_row(&t->rows[i], NULL, f);
}

void tg_settings_help_part(const tg_settings *t, unsigned only, const char *drop, FILE *f) {
  for (int i = 0; i < t->n; i++)
    if (only ? (t->rows[i].only & only) != 0 : t->rows[i].only == 0) help_row(&t->rows[i], drop, f);
}
