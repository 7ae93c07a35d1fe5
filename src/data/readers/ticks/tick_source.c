/* Tick sources: a file opened by its content (DBN, CSV or a Lean zip), a folder or glob of Lean zips, a source over
 * records in memory, and the checked read. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "base/alloc.h"
#include "data/readers/ticks/source_internal.h"

tg_status tg_tick_source_alloc(const char *name, tg_tick_kind kind, const tg_tick_opts *opts, tg_tick_source **out) {
  tg_tick_source *s = tg_calloc(1, sizeof *s);
  if (!s) return tg_error(TG_ERR_NOMEM, "%s: out of memory", name);
  s->kind = kind;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->unit = "record";
  snprintf(s->format, sizeof s->format, "memory");
  if (opts) s->opts = *opts;
  snprintf(s->tz, sizeof s->tz, "%s", s->opts.tz ? s->opts.tz : "");
  s->opts.tz = s->tz;
  s->last_ts = INT64_MIN;
  *out = s;
  return TG_OK;
}

/* The format by the first bytes: plain DBN, compressed files refused by name, anything else CSV. */
static tg_status open_format(tg_tick_source *s, FILE *f) {
  unsigned char m[4] = {0};
  size_t got = fread(m, 1, sizeof m, f);
  rewind(f);
  if (got >= 3 && memcmp(m, "DBN", 3) == 0) return tg_tick_dbn_open(s, f);
  if (got == 4 && ((m[0] == 0x28 && m[1] == 0xB5 && m[2] == 0x2F && m[3] == 0xFD) || (m[0] == 0x1F && m[1] == 0x8B)))
    return tg_error(TG_ERR_UNSUPPORTED, "%s: a compressed file (zstd or gzip); tick files are streamed, so "
                    "decompress it first (zstd -d, gunzip)", s->name);
  return tg_tick_csv_open(s, f);
}

/* 1 when path is a folder, a glob, or a file that starts as a zip does: Lean's tick zips. */
static int is_lean(const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0) return strpbrk(path, "*?[") != NULL;
  if (S_ISDIR(sb.st_mode)) return 1;
  unsigned char m[2] = {0};
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(m, 1, sizeof m, f) : 0;
  if (f) fclose(f);
  return got == 2 && m[0] == 'P' && m[1] == 'K';
}

tg_status tg_tick_open(const char *path, tg_tick_kind kind, const tg_tick_opts *opts, tg_tick_source **out) {
  *out = NULL;
  tg_tick_source *s = NULL;
  tg_status st;
  if (is_lean(path)) {
    if ((st = tg_tick_source_alloc(path, kind, opts, &s)) != TG_OK) return st;
    if ((st = tg_tick_lean_open(s, path)) != TG_OK) tg_free(s);
    else *out = s;
    return st;
  }
  FILE *f = fopen(path, "rb");
  if (!f) return tg_error(TG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  st = tg_tick_source_alloc(path, kind, opts, &s);
  if (st == TG_OK && (st = open_format(s, f)) != TG_OK) tg_free(s);
  if (st != TG_OK) {
    fclose(f);
    return st;
  }
  *out = s;
  return TG_OK;
}

/* 1 when path is a plain DBN file. */
static int is_dbn(const char *path) {
  unsigned char m[3] = {0};
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(m, 1, sizeof m, f) : 0;
  if (f) fclose(f);
  return got == 3 && memcmp(m, "DBN", 3) == 0;
}

/* A DBN source read to its end leniently (its instruments counted), then its contracts named. */
static tg_status dbn_contracts(tg_tick_source *s, tg_tick_contracts *out) {
  enum { CHUNK = 4096 };
  size_t each = s->kind == TG_TICK_TRADES ? sizeof(tg_trade) : sizeof(tg_quote);
  void *buf = tg_malloc(CHUNK * each);
  if (!buf) return tg_error(TG_ERR_NOMEM, "%s: out of memory", s->name);
  tg_status st = TG_OK;
  for (int64_t n = 1; st == TG_OK && n > 0;) st = tg_tick_next(s, buf, CHUNK, &n);
  tg_free(buf);
  return st == TG_OK ? tg_tick_dbn_contracts(s, out) : st;
}

tg_status tg_tick_contracts_list(const char *path, tg_tick_kind kind, tg_tick_contracts *out) {
  *out = (tg_tick_contracts){0};
  int lean = is_lean(path);
  if (!lean && !is_dbn(path)) return TG_OK;
  tg_tick_source *s = NULL;
  tg_tick_opts lenient = {.lenient = 1};
  tg_status st = tg_tick_open(path, kind, lean ? NULL : &lenient, &s);
  if (st == TG_OK) st = lean ? tg_tick_lean_contracts(s, out) : dbn_contracts(s, out);
  tg_tick_close(s);
  if (st != TG_OK) tg_tick_contracts_free(out);
  return st;
}

void tg_tick_contracts_free(tg_tick_contracts *c) {
  tg_free(c->names);
  *c = (tg_tick_contracts){0};
}

typedef struct mem_impl {
  const unsigned char *p;
  int64_t n, at;
} mem_impl;

static tg_status mem_fill(tg_tick_source *s, void *buf, int64_t cap, int64_t *n) {
  mem_impl *m = s->impl;
  size_t each = s->kind == TG_TICK_TRADES ? sizeof(tg_trade) : sizeof(tg_quote);
  *n = m->n - m->at < cap ? m->n - m->at : cap;
  memcpy(buf, m->p + (size_t)m->at * each, (size_t)*n * each);
  m->at += *n;
  return TG_OK;
}

static void mem_close(tg_tick_source *s) { tg_free(s->impl); }

tg_status tg_tick_open_memory(const void *records, int64_t n, tg_tick_kind kind, const tg_tick_opts *opts,
                              const char *name, tg_tick_source **out) {
  *out = NULL;
  tg_tick_source *s = NULL;
  tg_status st = tg_tick_source_alloc(name ? name : "memory", kind, opts, &s);
  if (st != TG_OK) return st;
  mem_impl *m = tg_calloc(1, sizeof *m);
  if (!m) {
    tg_free(s);
    return tg_error(TG_ERR_NOMEM, "%s: out of memory", s->name);
  }
  *m = (mem_impl){.p = records, .n = n};
  s->impl = m;
  s->fill = mem_fill;
  s->close = mem_close;
  *out = s;
  return TG_OK;
}

tg_status tg_tick_next(tg_tick_source *s, void *buf, int64_t cap, int64_t *n) {
  *n = 0;
  while (*n == 0) { /* a chunk whose records were all dropped is not the end */
    int64_t got = 0;
    tg_status st = s->fill(s, buf, cap, &got);
    if (st != TG_OK || got == 0) return st;
    *n = got;
    if ((st = tg_tick_check(s, buf, n)) != TG_OK) return st;
  }
  return TG_OK;
}

tg_tick_kind tg_tick_source_kind(const tg_tick_source *s) { return s->kind; }
const tg_tick_counts *tg_tick_source_counts(const tg_tick_source *s) { return &s->counts; }
const char *tg_tick_source_format(const tg_tick_source *s) { return s->format; }
const char *tg_tick_source_contracts(const tg_tick_source *s) { return s->contracts; }

void tg_tick_close(tg_tick_source *s) {
  if (!s) return;
  if (s->close) s->close(s);
  tg_free(s);
}
