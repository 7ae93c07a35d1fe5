/* The reader entry point: files, directories and globs (bad files skipped on request), compressed or not; the format
 * is chosen by magic bytes; every file's bars checked. */
#define _DEFAULT_SOURCE /* MAP_POPULATE */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/alloc.h"
#include "data/readers/common_columns.h"
#include "data/readers/decompress.h"
#include "data/readers/roll/roll_internal.h"
#include "data/readers/ticks/tick_files.h"
#include "tickgrad/data.h"

typedef tg_status (*reader_fn)(const char *, const void *, size_t, const tg_read_opts *, tg_bars *);

/* Picks the reader from the first bytes: Parquet "PAR1"; DBN "DBN", a zstd frame (compressed DBN)
 * or a skippable frame (legacy DBZ, which the DBN reader refuses by name); anything else is text. */
static reader_fn pick_reader(const unsigned char *p, size_t len, const char **format) {
  if (len >= 4 && memcmp(p, "PAR1", 4) == 0) {
    *format = "parquet";
    return tg_parquet_parse;
  }
  if ((len >= 3 && memcmp(p, "DBN", 3) == 0) ||
      (len >= 4 && p[0] == 0x28 && p[1] == 0xB5 && p[2] == 0x2F && p[3] == 0xFD) ||
      (len >= 4 && (p[0] & 0xF0) == 0x50 && p[1] == 0x2A && p[2] == 0x4D && p[3] == 0x18)) {
    *format = "dbn";
    return tg_dbn_parse;
  }
  *format = "csv";
  return tg_csv_parse;
}

/* A whole file's bytes: mapped from the page cache (nothing copied, no fresh memory to fault in) or, where it cannot
 * be mapped, read into a tg_malloc'ed buffer. A file that another process truncates while it is mapped ends the
 * process with SIGBUS, as in every reader that maps files; the project's own writers replace files by rename. */
typedef struct file_bytes {
  unsigned char *p;
  size_t len;
  int mapped; /* 1: munmap(p, len); 0: tg_free(p) */
} file_bytes;

static void file_bytes_free(file_bytes *fb) {
  if (fb->mapped) munmap(fb->p, fb->len);
  else tg_free(fb->p);
  fb->p = NULL;
}

static tg_status read_whole(const char *path, file_bytes *fb) {
  memset(fb, 0, sizeof *fb);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tg_error(TG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return tg_error(TG_ERR_IO, "%s: not a regular file", path);
  }
  size_t n = (size_t)st.st_size;
  int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
  flags |= MAP_POPULATE; /* every page mapped in one call instead of a fault per few pages */
#endif
  void *m = n ? mmap(NULL, n, PROT_READ, flags, fd, 0) : MAP_FAILED;
  if (m != MAP_FAILED) {
    close(fd);
    fb->p = m;
    fb->len = n;
    fb->mapped = 1;
    return TG_OK;
  }
  unsigned char *buf = tg_malloc(n + 1);
  if (!buf) {
    close(fd);
    return tg_error(TG_ERR_NOMEM, "%s: out of memory for %zu bytes", path, n);
  }
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (got != n) {
    tg_free(buf);
    return tg_error(TG_ERR_IO, "%s: read %zu of %zu bytes", path, got, n);
  }
  buf[n] = '\0';
  fb->p = buf;
  fb->len = n;
  return TG_OK;
}

/* One file: inflated when gzip or zstd compressed, parsed by the reader its bytes call for, its bars checked. */
static tg_status read_one(const char *path, const tg_read_opts *opts, tg_bars *out) {
  file_bytes fb;
  unsigned char *plain = NULL;
  size_t plain_len = 0;
  const char *codec = NULL;
  tg_status st = read_whole(path, &fb);
  if (st != TG_OK) return st;
  st = tg_data_inflate(path, fb.p, fb.len, &plain, &plain_len, &codec);
  if (st != TG_OK) {
    file_bytes_free(&fb);
    return st;
  }
  const unsigned char *bytes = plain ? plain : fb.p;
  size_t len = plain ? plain_len : fb.len;
  const char *format;
  reader_fn fn = pick_reader(bytes, len, &format);
  st = fn(path, bytes, len, opts, out);
  tg_free(plain);
  file_bytes_free(&fb);
  if (st == TG_OK && !out->format[0]) snprintf(out->format, sizeof out->format, "%s", format);
  if (st == TG_OK) st = tg_lean_contract_tag(path, out);
  tg_read_opts per_file = *opts; /* several contracts share times until they are stitched: duplicates checked then */
  if (tg_bars_column(out, "contract")) per_file.duplicates = TG_DUPS_FIRST;
  if (st == TG_OK) st = tg_bars_check(out, &per_file, path);
  return st;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The regular files directly inside dir, sorted by name (hidden files skipped). */
static tg_status list_dir(const char *dir, char ***names, size_t *count) {
  DIR *d = opendir(dir);
  if (!d) return tg_error(TG_ERR_IO, "%s: cannot open folder: %s", dir, strerror(errno));
  size_t n = 0, cap = 0;
  char **v = NULL;
  struct dirent *e;
  tg_status st = TG_OK;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    size_t need = strlen(dir) + strlen(e->d_name) + 2;
    char *full = tg_malloc(need);
    if (!full) {
      st = tg_error(TG_ERR_NOMEM, "%s: out of memory listing files", dir);
      break;
    }
    snprintf(full, need, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (stat(full, &sb) != 0 || !S_ISREG(sb.st_mode)) {
      tg_free(full);
      continue;
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      char **nv = tg_malloc(cap * sizeof *nv);
      if (!nv) {
        tg_free(full);
        st = tg_error(TG_ERR_NOMEM, "%s: out of memory listing files", dir);
        break;
      }
      if (n) memcpy(nv, v, n * sizeof *nv);
      tg_free(v);
      v = nv;
    }
    v[n++] = full;
  }
  closedir(d);
  if (st != TG_OK) {
    for (size_t i = 0; i < n; i++) tg_free(v[i]);
    tg_free(v);
    return st;
  }
  if (n) qsort(v, n, sizeof *v, cmp_str);
  *names = v;
  *count = n;
  return TG_OK;
}

/* The files of a folder or a glob; with opts->skip_bad_files one that fails is skipped with a warning line. */
static tg_status read_many(const char *what, char **paths, size_t n, const tg_read_opts *opts, tg_bars *out) {
  if (n == 0) return tg_error(TG_ERR_IO, "%s: no files", what);
  tg_status st = TG_OK;
  tg_common_cols cc;
  memset(&cc, 0, sizeof cc);
  size_t first = n, read = 0;
  for (size_t i = 0; i < n && st == TG_OK; i++) {
    tg_bars one;
    tg_bars_init(&one);
    st = read_one(paths[i], opts, &one);
    if (st == TG_OK && read > 0 && strcmp(one.format, out->format) != 0)
      st = tg_error(TG_ERR_FORMAT, "%s: %s is %s but %s is %s; one series comes from one format", what,
                    paths[i], one.format, paths[first], out->format);
    if (st != TG_OK && opts->skip_bad_files) {
      if (opts->warn) fprintf(opts->warn, "warning: %s: skipped %s: %s\n", what, paths[i], tg_last_error());
      tg_bars_free(&one);
      st = TG_OK;
      continue;
    }
    if (st != TG_OK) {
      char why[1024];
      snprintf(why, sizeof why, "%s", tg_last_error());
      st = tg_error(st, "%s (file %zu of %zu in %s; --skip-bad-files 1 skips files that cannot be read)", why, i + 1, n,
                    what);
    }
    if (st == TG_OK && read == 0) snprintf(out->format, sizeof out->format, "%s", one.format), first = i;
    if (st == TG_OK && read > 0) st = tg_common_cols_keep(&cc, out, paths[first], &one, paths[i]);
    if (st == TG_OK) st = tg_bars_append(out, &one), read++;
    tg_bars_free(&one);
  }
  if (st == TG_OK && read == 0) st = tg_error(TG_ERR_IO, "%s: none of its %zu files could be read", what, n);
  if (st == TG_OK && read > 1) snprintf(out->source, sizeof out->source, "%s and %zu more", paths[first], read - 1);
  else if (st == TG_OK) snprintf(out->source, sizeof out->source, "%s", paths[first]);
  if (st == TG_OK) tg_common_cols_warn(&cc, opts->warn, what);
  tg_common_cols_free(&cc);
  return st;
}

/* Bars whose time is before that of a bar read ahead of them: those truly out of time order (bars that share a
 * timestamp, in any instrument order, count none). */
static int64_t count_late(const tg_bars *b) {
  int64_t late = 0, latest = INT64_MIN;
  for (int64_t i = 0; i < b->n; i++) {
    if (b->ts[i] < latest) late++;
    else latest = b->ts[i];
  }
  return late;
}

/* Several futures contracts: stitched by opts->roll (bars sorted), the adjusted prices checked again. */
static tg_status roll(tg_bars *b, const tg_read_opts *opts, const char *path) {
  if (opts->rolls) tg_roll_list_free(opts->rolls);
  if (!tg_bars_column(b, "contract") || (opts->no_checks && !opts->roll)) return TG_OK; /* inspect reports as read */
  tg_roll_spec spec = {.adjust = opts->adjust};
  tg_status st = opts->roll ? tg_roll_parse(opts->roll, &spec) : TG_OK;
  if (st == TG_OK) st = tg_bars_roll(b, &spec, path, opts->warn, opts->rolls);
  if (st == TG_OK && !opts->no_checks) st = tg_bars_check(b, opts, path);
  return st;
}

tg_status tg_bars_read(const char *path, const tg_read_opts *opts, tg_bars *out) {
  tg_read_opts defaults;
  memset(&defaults, 0, sizeof defaults);
  if (!opts) opts = &defaults;
  tg_bars_init(out);
  if (!path || !*path) return tg_error(TG_ERR_INVALID, "read: empty path");
  struct stat sb;
  tg_status st;
  if (opts->quotes && *opts->quotes && !(opts->by && *opts->by)) {
    return tg_error(TG_ERR_INVALID, "%s: quotes %s given without a bar recipe: --quotes merges quote ticks into bars "
                    "made from trade ticks by --by RECIPE", path, opts->quotes);
  } else if (opts->by && *opts->by) { /* ticks: the recipe's bars, checked as a file's are */
    st = tg_tick_bars_read(path, opts, out);
    /* several futures contracts' bars overlap in time until roll() stitches (and checks) them */
    if (st == TG_OK && !tg_bars_column(out, "contract")) st = tg_bars_check(out, opts, path);
  } else if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    char **names = NULL;
    size_t n = 0;
    st = list_dir(path, &names, &n);
    if (st == TG_OK) st = read_many(path, names, n, opts, out);
    for (size_t i = 0; i < n; i++) tg_free(names[i]);
    tg_free(names);
  } else if (strpbrk(path, "*?[") && stat(path, &sb) != 0) {
    glob_t gl;
    int rc = glob(path, 0, NULL, &gl);
    if (rc == GLOB_NOMATCH) return tg_error(TG_ERR_IO, "%s: no file matches", path);
    if (rc != 0) return tg_error(TG_ERR_IO, "%s: cannot expand the pattern", path);
    st = read_many(path, gl.gl_pathv, gl.gl_pathc, opts, out);
    globfree(&gl);
  } else {
    st = read_one(path, opts, out);
    if (st == TG_OK) snprintf(out->source, sizeof out->source, "%s", path);
  }
  if (st != TG_OK && !(opts->by && *opts->by)) st = tg_tick_hint_ticks(path, st);
  int64_t late = st == TG_OK ? count_late(out) : 0;
  if (st == TG_OK) st = tg_bars_sort(out, NULL);
  if (st == TG_OK) st = roll(out, opts, path);
  if (st == TG_OK && !opts->no_checks) st = tg_bars_dedupe(out, opts->duplicates, path);
  if (st != TG_OK) {
    tg_bars_free(out);
    return st;
  }
  out->reordered = late;
  if (late && opts->warn)
    fprintf(opts->warn, "warning: %s: %lld of %lld bars were out of time order and have been sorted\n",
            out->source, (long long)late, (long long)out->n);
  return TG_OK;
}

tg_status tg_bars_read_paths(int n, const char *const *paths, const tg_read_opts *opts, tg_bars *out) {
  tg_bars_init(out);
  if (n < 1) return tg_error(TG_ERR_INVALID, "data: no files given");
  if (n > 1 && opts && opts->by && opts->quotes && *opts->quotes)
    return tg_error(TG_ERR_INVALID, "data: %d tick paths and one quotes file (%s): quotes merge into the bars of one "
                    "path (a folder or a glob of Lean zips is one path)", n, opts->quotes);
  tg_common_cols cc;
  memset(&cc, 0, sizeof cc);
  for (int i = 0; i < n; i++) {
    tg_bars one;
    tg_status st = tg_bars_read(paths[i], opts, &one);
    if (st != TG_OK) {
      char why[1024];
      snprintf(why, sizeof why, "%s", tg_last_error());
      tg_bars_free(out);
      tg_common_cols_free(&cc);
      return tg_error(st, "data '%s': %s", paths[i], why);
    }
    if (i > 0) st = tg_common_cols_keep(&cc, out, paths[0], &one, paths[i]);
    if (st == TG_OK) st = tg_bars_append(out, &one);
    if (i == 0) snprintf(out->source, sizeof out->source, "%s", one.source);
    if (i == 0) snprintf(out->format, sizeof out->format, "%s", one.format);
    out->reordered += one.reordered;
    tg_bars_free(&one);
    if (st != TG_OK) {
      tg_bars_free(out);
      tg_common_cols_free(&cc);
      return st;
    }
  }
  if (n == 1) return TG_OK;
  snprintf(out->source, sizeof out->source, "%.200s and %d more", paths[0], n - 1);
  tg_read_opts defaults;
  memset(&defaults, 0, sizeof defaults);
  tg_status st = tg_bars_sort(out, NULL);
  if (st == TG_OK) st = roll(out, opts ? opts : &defaults, out->source); /* contracts that only meet across paths */
  if (st == TG_OK && opts && !opts->no_checks) st = tg_bars_dedupe(out, opts->duplicates, out->source);
  if (st != TG_OK) tg_bars_free(out);
  else if (opts) tg_common_cols_warn(&cc, opts->warn, out->source);
  tg_common_cols_free(&cc);
  return st;
}
