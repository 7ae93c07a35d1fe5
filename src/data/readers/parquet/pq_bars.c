/* Parquet: tg_parquet_parse, which maps a file's columns onto a bar series (ts, open..volume, an integer instrument
 * column; the rest as extras). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <strings.h>
#include "base/intmath.h"
#include "base/alloc.h"
#include "data/readers/parquet/parquet.h"
#include "data/readers/timeconv.h"

enum { TS, OPEN, HIGH, LOW, CLOSE, VOLUME, NROLES };
static const char *const role_names[NROLES] = {"ts", "open", "high", "low", "close", "volume"};

/* "a INT64 TIMESTAMP(MICROS,UTC) optional, b DOUBLE required, ..." into buf */
static void list_columns(const tg_pq_file *f, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = '\0';
  for (int c = 0; c < f->ncols && k + 1 < n; c++) {
    char one[384];
    tg_pq_describe(&f->cols[c], one, sizeof one);
    int w = snprintf(buf + k, n - k, "%s%s", c ? ", " : "", one);
    if (w < 0) break;
    k += (size_t)w;
  }
  if (f->ncols == 0) snprintf(buf, n, "no columns");
}

static tg_status missing(const tg_pq_file *f, const char *role) {
  char cols[768];
  list_columns(f, cols, sizeof cols);
  return tg_error(TG_ERR_FORMAT, "%s: no '%s' column; the file has: %s (name them with the column map, e.g. "
                  "\"ts=Date,close=Price\")", f->path, role, cols);
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

/* The column map "ts=Date,open=Open": by name (case-insensitive), or by position. */
static tg_status parse_map(const tg_pq_file *f, const char *spec, int map[NROLES]) {
  char buf[1024];
  if (strlen(spec) >= sizeof buf) return tg_error(TG_ERR_INVALID, "%s: column map longer than %zu bytes", f->path, sizeof buf - 1);
  snprintf(buf, sizeof buf, "%s", spec);
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    if (!eq) return tg_error(TG_ERR_INVALID, "%s: column map item '%s' is not role=column", f->path, trim(item));
    *eq = '\0';
    char *key = trim(item), *val = trim(eq + 1);
    int role = -1;
    for (int r = 0; r < NROLES; r++)
      if (strcasecmp(key, role_names[r]) == 0) role = r;
    if (role < 0)
      return tg_error(TG_ERR_INVALID, "%s: column map: unknown role '%s' (use ts, open, high, low, close, volume)",
                      f->path, key);
    int c = tg_pq_find(f, val);
    if (c < 0 && *val && strspn(val, "0123456789") == strlen(val) && strlen(val) < 9) c = atoi(val);
    if (c < 0 || c >= f->ncols) {
      char cols[768];
      list_columns(f, cols, sizeof cols);
      return tg_error(TG_ERR_FORMAT, "%s: column map: no column '%s' for %s; the file has: %s", f->path, val, key, cols);
    }
    map[role] = c;
  }
  return TG_OK;
}

static int find_ts(const tg_pq_file *f) {
  static const char *const names[] = {"ts", "time", "timestamp", "date", "datetime"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    int c = tg_pq_find(f, names[i]);
    if (c >= 0) return c;
  }
  for (int c = 0; c < f->ncols; c++)
    if ((f->cols[c].logical == TG_PQ_LT_TIMESTAMP || f->cols[c].physical == TG_PQ_INT96) && f->cols[c].max_rep == 0) return c;
  return -1;
}


/* Naive wall-clock nanoseconds in zone tz to UTC in place (tg_tz_local_to_utc's rules for gaps and
 * repeated hours). */
static tg_status local_to_utc(const char *path, const char *col, const char *tz, int64_t *ts, int64_t n) {
  tg_tz_memo memo = {0, 0, 0};
  for (int64_t i = 0; i < n; i++) {
    int64_t s = tg_floor_div(ts[i], TG_NS_PER_S), frac = ts[i] - s * TG_NS_PER_S, u = 0;
    tg_status st = tg_tz_local_to_utc_memo(tz, &memo, s, &u);
    if (st != TG_OK) return st;
    if (__builtin_mul_overflow(u, TG_NS_PER_S, &u) || __builtin_add_overflow(u, frac, &u))
      return tg_error(TG_ERR_FORMAT, "%s: column '%s' row %lld: time out of range after the zone shift", path, col,
                      (long long)i);
    ts[i] = u;
  }
  return TG_OK;
}

/* Reads the ts column into ts[n] as UTC nanoseconds. TIMESTAMP columns carry their unit; naive ones
 * (isAdjustedToUTC false), DATE and INT96 are wall-clock times converted from opts->tz when it is set.
 * A plain INT64 column is an epoch count (UTC) whose unit is read from the largest magnitude: under
 * 1e11 seconds, under 1e14 milliseconds, under 1e17 microseconds, else nanoseconds (unambiguous for
 * times after 1973). */
static tg_status read_ts(const tg_pq_file *f, int c, const tg_read_opts *opts, int64_t *ts, uint8_t *valid) {
  const tg_pq_column *col = &f->cols[c];
  int64_t mult = 0; /* 0: infer the unit from the magnitude */
  int naive = 0;
  if (col->logical == TG_PQ_LT_TIMESTAMP) {
    mult = col->time_unit == TG_PQ_MILLIS ? 1000000 : col->time_unit == TG_PQ_MICROS ? 1000 : 1;
    naive = !col->utc;
  } else if (col->physical == TG_PQ_INT96) {
    mult = 1;
    naive = 1;
  } else if (col->logical == TG_PQ_LT_DATE) {
    mult = TG_NS_PER_DAY;
    naive = 1;
  } else if (col->physical != TG_PQ_INT64 || (col->logical != 0 && col->logical != TG_PQ_LT_INTEGER)) {
    char d[384];
    tg_pq_describe(col, d, sizeof d);
    return tg_error(TG_ERR_UNSUPPORTED, "%s: time column %s: tickgrad reads times from TIMESTAMP, DATE, INT96 or plain "
                    "INT64 (epoch) columns", f->path, d);
  }
  int64_t nulls = 0, n = f->num_rows;
  tg_status st = tg_pq_read_i64(f, c, ts, valid, &nulls);
  if (st != TG_OK) return st;
  if (nulls) {
    for (int64_t i = 0; i < n; i++)
      if (!valid[i])
        return tg_error(TG_ERR_FORMAT, "%s: column '%s' is null at row %lld (0-based); every bar needs a time", f->path,
                        col->name, (long long)i);
  }
  if (mult == 0) { /* epoch integers: seconds, milli-, micro- or nanoseconds by magnitude */
    uint64_t big = 0;
    for (int64_t i = 0; i < n; i++) {
      uint64_t a = ts[i] < 0 ? (uint64_t)0 - (uint64_t)ts[i] : (uint64_t)ts[i];
      big = a > big ? a : big;
    }
    mult = big < 100000000000ULL ? TG_NS_PER_S : big < 100000000000000ULL ? 1000000 : big < 100000000000000000ULL ? 1000 : 1;
  }
  if (mult != 1)
    for (int64_t i = 0; i < n; i++)
      if (__builtin_mul_overflow(ts[i], mult, &ts[i]))
        return tg_error(TG_ERR_FORMAT, "%s: column '%s' row %lld: time out of the int64 nanosecond range", f->path,
                        col->name, (long long)i);
  if (naive && opts->tz && *opts->tz) return local_to_utc(f->path, col->name, opts->tz, ts, n);
  return TG_OK;
}

/* A flat integer column named instrument or instrument_id (any case) that no bar field took: the bars' instrument
 * ids, as a CSV file's numbers give them; -1 when there is none. */
static int find_instrument(const tg_pq_file *f, const int map[NROLES]) {
  static const char *const names[] = {"instrument", "instrument_id"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    int c = tg_pq_find(f, names[i]), taken = 0;
    for (int r = 0; r < NROLES; r++) taken |= c >= 0 && map[r] == c;
    if (c < 0 || taken) continue;
    const tg_pq_column *col = &f->cols[c];
    if ((col->physical == TG_PQ_INT32 || col->physical == TG_PQ_INT64) && col->max_rep == 0 &&
        (col->logical == 0 || col->logical == TG_PQ_LT_INTEGER))
      return c;
  }
  return -1;
}

/* The ids of instrument column c into ids[num_rows]: every one present and in [0, 2^32). */
static tg_status read_instrument(const tg_pq_file *f, int c, uint32_t *ids, uint8_t *valid) {
  int64_t n = f->num_rows, nulls = 0;
  int64_t *v = tg_malloc((size_t)n * sizeof *v + 1);
  if (!v) return tg_error(TG_ERR_NOMEM, "%s: out of memory for %lld instrument ids", f->path, (long long)n);
  tg_status st = tg_pq_read_i64(f, c, v, valid, &nulls);
  for (int64_t i = 0; st == TG_OK && i < n; i++) {
    if (!valid[i])
      st = tg_error(TG_ERR_FORMAT, "%s: column '%s' is null at row %lld (0-based); every bar needs its instrument",
                    f->path, f->cols[c].name, (long long)i);
    else if (v[i] < 0 || v[i] > (int64_t)UINT32_MAX)
      st = tg_error(TG_ERR_FORMAT, "%s: column '%s' row %lld (0-based): %lld is not an instrument id (0 .. %u)",
                    f->path, f->cols[c].name, (long long)i, (long long)v[i], UINT32_MAX);
    else ids[i] = (uint32_t)v[i];
  }
  tg_free(v);
  return st;
}

static tg_status read_price(const tg_pq_file *f, int c, const tg_read_opts *opts, double *out, uint8_t *valid) {
  int64_t nulls = 0;
  tg_status st = tg_pq_read_f64(f, c, out, valid, &nulls);
  if (st != TG_OK || !nulls || opts->nulls == TG_NULLS_NAN) return st;
  for (int64_t i = 0; i < f->num_rows; i++)
    if (!valid[i])
      return tg_error(TG_ERR_FORMAT, "%s: column '%s' is null at row %lld (0-based); read with nulls=NaN to keep such "
                      "rows as NaN", f->path, f->cols[c].name, (long long)i);
  return TG_OK;
}

tg_status tg_parquet_parse(const char *path, const void *bytes, size_t len, const tg_read_opts *opts, tg_bars *out) {
  tg_read_opts defaults;
  memset(&defaults, 0, sizeof defaults);
  if (!opts) opts = &defaults;
  tg_status st = tg_tz_check(opts->tz);
  if (st != TG_OK) return st;
  tg_pq_file f;
  if ((st = tg_pq_open(&f, path, bytes, len)) != TG_OK) return st;
  int map[NROLES];
  for (int r = 0; r < NROLES; r++) map[r] = -1;
  if (opts->columns && *opts->columns) st = parse_map(&f, opts->columns, map);
  if (st == TG_OK && map[TS] < 0) map[TS] = find_ts(&f);
  for (int r = OPEN; r < NROLES && st == TG_OK; r++)
    if (map[r] < 0) map[r] = tg_pq_find(&f, role_names[r]);
  for (int r = TS; r < VOLUME && st == TG_OK; r++) /* volume may be absent */
    if (map[r] < 0) st = missing(&f, role_names[r]);
  int64_t n = f.num_rows, base = out->n;
  uint8_t *valid = NULL;
  if (st == TG_OK) st = tg_bars_reserve(out, base + n, 0);
  /* the six columns are written whole: their pages mapped at once, not faulted in one by one; a count of rows far
   * above the file's bytes (a corrupt or hostile footer) keeps them lazy, so that an early error commits nothing */
  if (st == TG_OK && (uint64_t)n <= (uint64_t)len * 4) {
    double *fresh[5] = {out->open, out->high, out->low, out->close, out->volume};
    tg_prefault(out->ts + base, (size_t)n * sizeof *out->ts);
    for (int k = 0; k < 5; k++) tg_prefault(fresh[k] + base, (size_t)n * sizeof(double));
  }
  if (st == TG_OK && !(valid = tg_malloc((size_t)n + 1)))
    st = tg_error(TG_ERR_NOMEM, "%s: out of memory for %lld rows", path, (long long)n);
  if (st == TG_OK) st = read_ts(&f, map[TS], opts, out->ts + base, valid);
  double *cols[NROLES] = {NULL, out->open, out->high, out->low, out->close, out->volume};
  for (int r = OPEN; r < NROLES && st == TG_OK; r++) {
    if (map[r] >= 0) st = read_price(&f, map[r], opts, cols[r] + base, valid);
    else
      for (int64_t i = 0; i < n; i++) cols[r][base + i] = NAN; /* no volume column: volume unknown, not 0 */
  }
  if (st == TG_OK && opts->price_scale != 0 && opts->price_scale != 1) {
    double s = opts->price_scale;
    for (int r = OPEN; r <= CLOSE; r++)
      for (int64_t i = 0; i < n; i++) cols[r][base + i] *= s;
  }
  int inst = st == TG_OK ? find_instrument(&f, map) : -1, added = 0;
  uint32_t *ids = NULL;
  if (inst >= 0 && !(ids = tg_malloc((size_t)n * sizeof *ids + 1)))
    st = tg_error(TG_ERR_NOMEM, "%s: out of memory for %lld instrument ids", path, (long long)n);
  if (ids) st = read_instrument(&f, inst, ids, valid);
  if (st == TG_OK && ids && !out->instrument && (st = tg_bars_reserve(out, out->cap, 1)) == TG_OK) added = 1;
  unsigned char *used = st == TG_OK ? tg_calloc((size_t)f.ncols + 1, 1) : NULL;
  if (st == TG_OK && !used) st = tg_error(TG_ERR_NOMEM, "%s: out of memory for %d columns", path, f.ncols);
  if (st == TG_OK) {
    for (int r = 0; r < NROLES; r++)
      if (map[r] >= 0) used[map[r]] = 1;
    if (inst >= 0) used[inst] = 1;
    st = tg_pq_read_extras(&f, used, opts->warn, out, base);
  }
  tg_free(used);
  if (st != TG_OK && added) { /* a failed parse adds no instrument column */
    tg_free(out->instrument);
    out->instrument = NULL;
  }
  if (st == TG_OK) {
    if (out->instrument)
      for (int64_t i = 0; i < n; i++) out->instrument[base + i] = ids ? ids[i] : 0;
    out->n = base + n;
    snprintf(out->format, sizeof out->format, "parquet");
  }
  tg_free(valid);
  tg_free(ids);
  tg_pq_close(&f);
  return st;
}
