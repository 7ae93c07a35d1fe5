/* Lean's AlgoSeek tick zips as a source: one zip, a folder or a glob of them read in date order as one stream, each
 * day's CSV member read through tick_zip.c, inflated whole or streamed (docs/TICKS.md). */
#include <dirent.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "base/alloc.h"
#include "data/readers/csv/csv_internal.h"
#include "data/readers/ticks/lean_internal.h"

static const char *base_name(const char *path) {
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}

static int by_base_name(const void *a, const void *b) {
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  int c = strcmp(base_name(x), base_name(y));
  return c ? c : strcmp(x, y);
}

static tg_status add_path(tg_lean_impl *L, int64_t *cap, const char *dir, const char *name) {
  if (L->n_paths == *cap) {
    int64_t c = *cap ? *cap * 2 : 16;
    char **p = tg_malloc((size_t)c * sizeof *p);
    if (!p) return tg_error(TG_ERR_NOMEM, "%s: out of memory", name);
    if (L->n_paths) memcpy(p, L->paths, (size_t)L->n_paths * sizeof *p);
    tg_free(L->paths);
    L->paths = p, *cap = c;
  }
  size_t n = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
  char *s = tg_malloc(n);
  if (!s) return tg_error(TG_ERR_NOMEM, "%s: out of memory", name);
  snprintf(s, n, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
  L->paths[L->n_paths++] = s;
  return TG_OK;
}

/* The zips that path names: itself, a folder's *_trade.zip (or *_quote.zip) files, or a glob's matches. */
static tg_status list_paths(tg_tick_source *s, tg_lean_impl *L, const char *path) {
  struct stat sb;
  int64_t cap = 0;
  tg_status st = TG_OK;
  const char *tail = s->kind == TG_TICK_TRADES ? "_trade.zip" : "_quote.zip";
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    DIR *d = opendir(path);
    if (!d) return tg_error(TG_ERR_IO, "%s: cannot open the folder", path);
    for (struct dirent *e; st == TG_OK && (e = readdir(d));) {
      size_t n = strlen(e->d_name), t = strlen(tail);
      if (n > t && strcasecmp(e->d_name + n - t, tail) == 0) st = add_path(L, &cap, path, e->d_name);
    }
    closedir(d);
  } else if (strpbrk(path, "*?[")) {
    glob_t g;
    int rc = glob(path, 0, NULL, &g);
    for (size_t i = 0; rc == 0 && st == TG_OK && i < g.gl_pathc; i++) st = add_path(L, &cap, NULL, g.gl_pathv[i]);
    if (rc == 0) globfree(&g);
  } else {
    st = add_path(L, &cap, NULL, path);
  }
  if (st == TG_OK && L->n_paths == 0)
    st = tg_error(TG_ERR_IO, "%s: no Lean tick zips (*%s) found", path, tail);
  if (st == TG_OK) qsort(L->paths, (size_t)L->n_paths, sizeof *L->paths, by_base_name);
  return st;
}

/* The zip's date from its name (YYYYMMDD_...) as naive seconds at midnight; yyyymmdd gets the 8 digits. */
static tg_status zip_day(const char *path, tg_lean_impl *L, char *yyyymmdd) {
  const char *b = base_name(path);
  int y = 0, m = 0, d = 0, ok = strlen(b) > 9 && b[8] == '_';
  for (int i = 0; ok && i < 8; i++) ok = b[i] >= '0' && b[i] <= '9';
  if (ok) sscanf(b, "%4d%2d%2d", &y, &m, &d);
  if (!ok || !tg_valid_date(y, m, d))
    return tg_error(TG_ERR_FORMAT, "%s: not a Lean tick zip name (YYYYMMDD_trade.zip, YYYYMMDD_quote.zip): the "
                    "date of its times comes from the name", path);
  memcpy(yyyymmdd, b, 8);
  yyyymmdd[8] = '\0';
  L->day_s = tg_days_from_civil(y, m, d) * 86400;
  return TG_OK;
}

/* Adds contract to the source's list of those seen, once. */
static void note_contract(tg_tick_source *s, const char *contract) {
  size_t n = strlen(contract), len = strlen(s->contracts);
  for (const char *p = strstr(s->contracts, contract); p; p = strstr(p + 1, contract))
    if ((p == s->contracts || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0')) return;
  snprintf(s->contracts + len, sizeof s->contracts - len, "%s%s", len ? ", " : "", contract);
}

/* The member to read: the only trade (quote) CSV, or the contract asked for (lenient without one: the nearest expiry);
 * errors name the zip and the contracts. */
static tg_status pick_member(tg_tick_source *s, tg_lean_impl *L, const char *path, const char *day, int64_t *at,
                             int *futures) {
  int64_t n = tg_zip_count(L->zip), found = -1;
  char list[256] = "";
  if (n == 0) return tg_error(TG_ERR_FORMAT, "%s: no members", path);
  for (int64_t i = 0; i < n; i++) {
    tg_lean_member m;
    tg_status st = tg_lean_member_parse(path, tg_zip_name(L->zip, i), day, &m);
    if (st != TG_OK) return st;
    if (m.what == TG_LEAN_OPEN_INTEREST)
      return tg_error(TG_ERR_UNSUPPORTED, "%s: open interest (%s): not a trade or quote file", path,
                      tg_zip_name(L->zip, i));
    if ((m.what == TG_LEAN_QUOTES) != (s->kind == TG_TICK_QUOTES))
      return tg_error(TG_ERR_FORMAT, "%s: member %s holds %s, and it was opened as %s", path, tg_zip_name(L->zip, i),
                      m.what == TG_LEAN_QUOTES ? "quotes" : "trades", s->kind == TG_TICK_QUOTES ? "quotes" : "trades");
    if (m.futures && m.what == TG_LEAN_QUOTES)
      return tg_error(TG_ERR_UNSUPPORTED, "%s: futures quote ticks (%s) are not read yet", path, tg_zip_name(L->zip, i));
    size_t len = strlen(list);
    snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", m.futures ? m.contract : "(no contract)");
    if (m.futures) note_contract(s, m.contract);
    int nearest = !L->contract[0] && s->opts.lenient && m.futures && (found < 0 || strcmp(m.contract, L->read) < 0);
    if (L->contract[0] ? strcmp(m.contract, L->contract) == 0 : n == 1 || nearest) {
      found = i, *futures = m.futures;
      snprintf(L->read, sizeof L->read, "%s", m.futures ? m.contract : "");
    }
  }
  if (found >= 0) return *at = found, TG_OK;
  snprintf(L->held, sizeof L->held, "%s", list);
  if (L->contract[0]) return *at = -1, TG_OK; /* the contract did not trade that day */
  return tg_error(TG_ERR_UNSUPPORTED, "%s: %lld contracts (%s): name one with --contract YYYYMM, or give --roll "
                  "volume|open_interest|calendar[:N] (and --adjust difference|ratio|none) for one continuous series",
                  path, (long long)n, list);
}

/* Opens the next zip's member for reading; s->name becomes zip:member for messages. */
static tg_status open_next(tg_tick_source *s, tg_lean_impl *L) {
  const char *path = L->paths[L->next++];
  char day[9];
  int64_t at = 0;
  int futures = 0;
  snprintf(s->name, sizeof s->name, "%s", path);
  tg_status st = zip_day(path, L, day);
  if (st == TG_OK) st = tg_zip_open(path, &L->buffers, &L->zip);
  if (st == TG_OK) st = pick_member(s, L, path, day, &at, &futures);
  if (st == TG_OK && at < 0) { /* a zip without the contract asked for */
    tg_zip_close(L->zip);
    L->zip = NULL;
    return TG_OK;
  }
  if (st == TG_OK) st = tg_zip_member_open(L->zip, at);
  if (st != TG_OK) return st;
  L->members++;
  snprintf(s->name, sizeof s->name, "%s:%s", path, tg_zip_name(L->zip, at));
  L->scale = futures ? 1.0 : 10000.0;
  snprintf(s->format, sizeof s->format, "lean %s %s", futures ? "futures" : "equity",
           s->kind == TG_TICK_TRADES ? "trades" : "quotes");
  L->bid = L->ask = L->bid_size = L->ask_size = 0; /* each day's book starts empty */
  return tg_zip_member_lines(L->zip, &L->lr, s->name);
}

static void close_zip(tg_lean_impl *L) {
  tg_line_reader_free(&L->lr);
  tg_zip_close(L->zip);
  L->zip = NULL;
}

/* Records of one member per call, so the checks after it name the right one. */
static tg_status lean_fill(tg_tick_source *s, void *buf, int64_t cap, int64_t *n) {
  tg_lean_impl *L = s->impl;
  size_t each = s->kind == TG_TICK_TRADES ? sizeof(tg_trade) : sizeof(tg_quote);
  *n = 0;
  while (*n < cap) {
    tg_status st;
    if (!L->zip) {
      if (*n > 0) return TG_OK;
      if (L->next == L->n_paths && !L->members && L->contract[0] && L->n_paths == 1)
        return tg_error(TG_ERR_INVALID, "%s: no contract %s here (it holds %s)", s->name, L->contract, L->held);
      if (L->next == L->n_paths && !L->members && L->contract[0])
        return tg_error(TG_ERR_INVALID, "%s: no contract %s in any of its %lld zips (the last holds %s)", L->root,
                        L->contract, (long long)L->n_paths, L->held);
      if (L->next == L->n_paths) return TG_OK;
      if ((st = open_next(s, L)) != TG_OK) return st;
      if (!L->zip) continue;
    }
    const char *p, *e;
    int got, made = 0;
    if ((st = tg_line_next(&L->lr, &p, &e, &got)) != TG_OK) return st;
    if (!got) close_zip(L);
    else if (!tg_csv_blank(p, e)) {
      if ((st = tg_lean_row(s, L, p, e, (char *)buf + (size_t)*n * each, &made)) != TG_OK) return st;
      *n += made;
    }
  }
  return TG_OK;
}

static void lean_close(tg_tick_source *s) {
  tg_lean_impl *L = s->impl;
  close_zip(L);
  tg_zip_buffers_free(&L->buffers);
  for (int64_t i = 0; i < L->n_paths; i++) tg_free(L->paths[i]);
  tg_free(L->paths);
  tg_free(L);
}

tg_status tg_tick_lean_open(tg_tick_source *s, const char *path) {
  tg_lean_impl *L = tg_calloc(1, sizeof *L);
  if (!L) return tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
  s->impl = L;
  s->close = lean_close;
  s->fill = lean_fill;
  s->unit = "line";
  snprintf(s->format, sizeof s->format, "lean");
  const char *c = s->opts.contract;
  if (c && (strlen(c) != 6 || strspn(c, "0123456789") != 6)) {
    lean_close(s);
    return tg_error(TG_ERR_INVALID, "contract '%s' is not an expiry YYYYMM", c);
  }
  snprintf(L->contract, sizeof L->contract, "%s", c ? c : "");
  snprintf(L->root, sizeof L->root, "%s", path);
  tg_status st = list_paths(s, L, path);
  if (st != TG_OK) lean_close(s);
  return st;
}

static int by_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

tg_status tg_tick_lean_contracts(tg_tick_source *s, tg_tick_contracts *out) {
  tg_lean_impl *L = s->impl;
  tg_status st = TG_OK;
  int cap = 0;
  for (int64_t i = 0; i < L->n_paths && st == TG_OK; i++) {
    char day[9];
    if ((st = zip_day(L->paths[i], L, day)) != TG_OK || (st = tg_zip_open(L->paths[i], &L->buffers, &L->zip)) != TG_OK) break;
    for (int64_t k = 0; k < tg_zip_count(L->zip) && st == TG_OK; k++) {
      tg_lean_member m;
      if ((st = tg_lean_member_parse(L->paths[i], tg_zip_name(L->zip, k), day, &m)) != TG_OK || !m.futures) continue;
      int seen = 0;
      for (int c = 0; c < out->n && !seen; c++) seen = strcmp(out->names[c], m.contract) == 0;
      if (seen) continue;
      if (out->n == cap) {
        cap = cap ? cap * 2 : 16;
        char(*v)[TG_CONTRACT_NAME_MAX] = tg_malloc((size_t)cap * sizeof *v);
        if (!v) {
          st = tg_error(TG_ERR_NOMEM, "%s: out of memory listing contracts", s->name);
          break;
        }
        if (out->n) memcpy(v, out->names, (size_t)out->n * sizeof *v);
        tg_free(out->names);
        out->names = v;
      }
      memcpy(out->names[out->n++], m.contract, sizeof m.contract);
    }
    close_zip(L);
  }
  if (st == TG_OK && out->n) qsort(out->names, (size_t)out->n, sizeof *out->names, by_name);
  return st;
}

void tg_oi_series_free(tg_oi_series *o) {
  tg_free(o->ts);
  tg_free(o->value);
  *o = (tg_oi_series){0};
}

tg_status tg_oi_series_push(tg_oi_series *o, int64_t ts, double v, const char *name) {
  if (o->n == o->cap) {
    int64_t cap = o->cap ? o->cap * 2 : 64;
    int64_t *t = tg_malloc((size_t)cap * sizeof *t);
    double *x = tg_malloc((size_t)cap * sizeof *x);
    if (!t || !x) {
      tg_free(t), tg_free(x);
      return tg_error(TG_ERR_NOMEM, "%s: out of memory for open interest", name);
    }
    if (o->n) memcpy(t, o->ts, (size_t)o->n * sizeof *t), memcpy(x, o->value, (size_t)o->n * sizeof *x);
    tg_free(o->ts), tg_free(o->value);
    o->ts = t, o->value = x, o->cap = cap;
  }
  o->ts[o->n] = ts, o->value[o->n++] = v;
  return TG_OK;
}

/* The rows of contract's member of the open interest zip at path (none when there is no such member). */
static tg_status oi_zip(tg_tick_source *s, tg_lean_impl *L, const char *path, const char *contract, tg_oi_series *o) {
  char day[9];
  tg_status st = zip_day(path, L, day);
  if (st == TG_OK) st = tg_zip_open(path, &L->buffers, &L->zip);
  int64_t at = -1;
  for (int64_t i = 0; st == TG_OK && at < 0 && i < tg_zip_count(L->zip); i++) {
    tg_lean_member m;
    st = tg_lean_member_parse(path, tg_zip_name(L->zip, i), day, &m);
    if (st == TG_OK && m.what == TG_LEAN_OPEN_INTEREST && strcmp(m.contract, contract) == 0) at = i;
  }
  if (st == TG_OK && at >= 0) {
    snprintf(s->name, sizeof s->name, "%.400s:%.100s", path, tg_zip_name(L->zip, at));
    st = tg_zip_member_open(L->zip, at);
    if (st == TG_OK) st = tg_zip_member_lines(L->zip, &L->lr, s->name);
    for (int got = 1; st == TG_OK && got;) {
      const char *p, *e;
      int64_t ts;
      double v;
      if ((st = tg_line_next(&L->lr, &p, &e, &got)) != TG_OK || !got || tg_csv_blank(p, e)) continue;
      if ((st = tg_lean_oi_row(s, L, p, e, &ts, &v)) == TG_OK) st = tg_oi_series_push(o, ts, v, s->name);
    }
  }
  close_zip(L);
  return st;
}

tg_status tg_tick_lean_open_interest(tg_tick_source *s, const char *contract, tg_oi_series *out) {
  tg_lean_impl *L = s->impl;
  tg_status st = TG_OK;
  for (int64_t i = 0; i < L->n_paths && st == TG_OK; i++) {
    const char *trade = L->paths[i];
    size_t n = strlen(trade);
    if (n < 10 || strcasecmp(trade + n - 10, "_trade.zip") != 0) continue;
    char path[4096];
    int w = snprintf(path, sizeof path, "%.*s_openinterest.zip", (int)(n - 10), trade);
    struct stat sb;
    if (w < 0 || (size_t)w >= sizeof path || stat(path, &sb) != 0) continue;
    st = oi_zip(s, L, path, contract, out);
  }
  return st;
}
