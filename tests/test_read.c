/* The reader entry point: format by content, folders, globs, mixed formats, reorder warnings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "support/check.h"
#include "support/files.h"
#include <zlib.h>
#include <zstd.h>
#include "tickgrad/data.h"

static void write_file(const char *path, const void *bytes, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(bytes, 1, n, f) == n);
  fclose(f);
}

static void test_local(const char *src) {
  char dir[] = "/tmp/tickgrad_read_XXXXXX", path[512], seed[512];
  CHECK(mkdtemp(dir) != NULL);
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  tg_bars b;
  /* a folder of CSVs, one of them newest-first: concatenated and sorted, with a counted warning */
  const char *a = "ts,open,high,low,close,volume\n2021-01-04,1,2,0.5,1.5,10\n2021-01-05,1.5,2,1,1.8,11\n";
  const char *c = "ts,open,high,low,close,volume\n2021-01-03,1,1,1,1,1\n2021-01-02,1,1,1,1,1\n2021-01-06,1,1,1,1,1\n";
  snprintf(path, sizeof path, "%s/a.csv", dir);
  write_file(path, a, strlen(a));
  snprintf(path, sizeof path, "%s/b.csv", dir);
  write_file(path, c, strlen(c));
  FILE *warn = tmpfile();
  o.warn = warn;
  CHECK_OK(tg_bars_read(dir, &o, &b));
  CHECK(b.n == 5 && strcmp(b.format, "csv") == 0 && strstr(b.source, "and 1 more"));
  int sorted = 1;
  for (int64_t i = 1; i < b.n; i++) sorted &= b.ts[i - 1] <= b.ts[i];
  CHECK_MSG(sorted && b.reordered == 2, "%lld bars counted out of order; 2 are (01-03 after 01-05, 01-02 after 01-03)",
            (long long)b.reordered);
  char msg[512] = {0};
  rewind(warn);
  CHECK(fread(msg, 1, sizeof msg - 1, warn) > 0 && strstr(msg, "out of time order"));
  fclose(warn);
  o.warn = NULL;
  tg_bars_free(&b);
  /* a glob picks the same files */
  snprintf(path, sizeof path, "%s/*.csv", dir);
  CHECK_OK(tg_bars_read(path, &o, &b));
  CHECK(b.n == 5);
  tg_bars_free(&b);
  /* the format comes from the content: a Parquet file named .csv is read as Parquet */
  size_t n = 0;
  snprintf(seed, sizeof seed, "%s/fuzz/corpus/parquet/bars_v1_snappy.parquet", src);
  char *pq = (char *)tg_test_read_file(seed, &n);
  CHECK_MSG(pq != NULL, "missing %s", seed);
  if (pq) {
    snprintf(path, sizeof path, "%s/really_parquet.csv", dir);
    write_file(path, pq, n);
    o.allow_ohlc = 1; /* the fixture's row 9 closes above its high */
    CHECK_OK(tg_bars_read(path, &o, &b));
    o.allow_ohlc = 0;
    CHECK(strcmp(b.format, "parquet") == 0 && b.n > 0);
    tg_bars_free(&b);
    /* one series comes from one format: a folder mixing CSV and Parquet is refused by name */
    CHECK_STATUS(tg_bars_read(dir, &o, &b), TG_ERR_FORMAT);
    CHECK_MSG(strstr(tg_last_error(), "really_parquet.csv") && strstr(tg_last_error(), "parquet"), "%s", tg_last_error());
    CHECK(b.n == 0 && b.ts == NULL);
    unlink(path);
    free(pq);
  }
  /* nothing to read */
  snprintf(path, sizeof path, "%s/*.dbn", dir);
  CHECK_STATUS(tg_bars_read(path, &o, &b), TG_ERR_IO);
  CHECK(strstr(tg_last_error(), "no file matches") != NULL);
  snprintf(path, sizeof path, "%s/missing.csv", dir);
  CHECK_STATUS(tg_bars_read(path, &o, &b), TG_ERR_IO);
  CHECK(strstr(tg_last_error(), "missing.csv") != NULL);
  snprintf(path, sizeof path, "%s/a.csv", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/b.csv", dir);
  unlink(path);
  CHECK_STATUS(tg_bars_read(dir, &o, &b), TG_ERR_IO);
  CHECK(strstr(tg_last_error(), "no files") != NULL);
  rmdir(dir);
}

/* tg_bars_read of text written to dir/name; the status, the bars in *b (freed by the caller on success). */
static tg_status read_text(const char *dir, const char *name, const char *text, const tg_read_opts *o, tg_bars *b) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  write_file(path, text, strlen(text));
  return tg_bars_read(path, o, b);
}

static int msg_has(const char *a, const char *b) {
  const char *m = tg_last_error();
  int ok = strstr(m, a) && (!b || strstr(m, b));
  if (!ok) fprintf(stderr, "message: %s\n", m);
  return ok;
}

/* One check of the bars per rule, the same on every read: the file, the row and the value named; the relaxations. */
static void test_checks(void) {
  char dir[] = "/tmp/tickgrad_checks_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  tg_bars b;
  const char *head = "ts,open,high,low,close,volume\n2021-01-04,1,2,0.5,1.5,10\n";
  char text[512];
  snprintf(text, sizeof text, "%s2021-01-05,1.5,2,1,1.8,11\n2021-01-05,1.5,2,1,1.9,12\n", head);
  CHECK_STATUS(read_text(dir, "dup.csv", text, &o, &b), TG_ERR_FORMAT);
  CHECK(msg_has("dup.csv: row 2", "and row 3 share one timestamp") && msg_has("--duplicates", NULL));
  o.duplicates = TG_DUPS_LAST;
  CHECK_OK(read_text(dir, "dup.csv", text, &o, &b));
  CHECK(b.n == 2 && b.close[1] == 1.9);
  tg_bars_free(&b);
  o.duplicates = TG_DUPS_FIRST;
  CHECK_OK(read_text(dir, "dup.csv", text, &o, &b));
  CHECK(b.n == 2 && b.close[1] == 1.8);
  tg_bars_free(&b);
  o.duplicates = TG_DUPS_ERROR;
  /* the same time for two instruments is no duplicate */
  CHECK_OK(read_text(dir, "two.csv", "ts,symbol,open,high,low,close\n2021-01-04,A,1,2,0.5,1.5\n2021-01-04,B,1,2,0.5,1.5\n",
                     &o, &b));
  CHECK(b.n == 2);
  tg_bars_free(&b);
  snprintf(text, sizeof text, "%s2021-01-05,1.5,1,2,1.8,11\n", head);
  CHECK_STATUS(read_text(dir, "ohlc.csv", text, &o, &b), TG_ERR_FORMAT);
  CHECK(msg_has("ohlc.csv: row 2", "high 1") && msg_has("--allow-ohlc", NULL));
  o.allow_ohlc = 1;
  CHECK_OK(read_text(dir, "ohlc.csv", text, &o, &b));
  tg_bars_free(&b);
  o.allow_ohlc = 0;
  snprintf(text, sizeof text, "%s2021-01-05,1.5,2,1,1.8,-3\n", head);
  CHECK_STATUS(read_text(dir, "vol.csv", text, &o, &b), TG_ERR_FORMAT);
  CHECK(msg_has("vol.csv: row 2", "volume is -3"));
  const char *bad[4] = {"1e-320", "1e308", "0", "-2"};
  for (int k = 0; k < 4; k++) {
    snprintf(text, sizeof text, "%s2021-01-05,1,1,%s,%s,1\n", head, bad[k], bad[k]);
    if (k == 1) snprintf(text, sizeof text, "%s2021-01-05,1,1e308,1,1e308,1\n", head);
    CHECK_STATUS(read_text(dir, "px.csv", text, &o, &b), TG_ERR_FORMAT);
    CHECK(msg_has("px.csv: row 2", "log return"));
  }
  /* duplicates across two files of a folder */
  char sub[600], p1[700];
  snprintf(sub, sizeof sub, "%s/two", dir);
  CHECK(mkdir(sub, 0700) == 0);
  snprintf(p1, sizeof p1, "%s/a.csv", sub);
  write_file(p1, head, strlen(head));
  snprintf(p1, sizeof p1, "%s/b.csv", sub);
  write_file(p1, head, strlen(head));
  CHECK_STATUS(tg_bars_read(sub, &o, &b), TG_ERR_FORMAT);
  CHECK(msg_has("share the time 2021-01-04", "different files"));
  o.duplicates = TG_DUPS_LAST;
  CHECK_OK(tg_bars_read(sub, &o, &b));
  CHECK(b.n == 1);
  tg_bars_free(&b);
  o.duplicates = TG_DUPS_ERROR;
  /* a folder with a file that cannot be read: named with the flag that skips it; skipped (and said) with the flag */
  snprintf(p1, sizeof p1, "%s/b.csv", sub);
  write_file(p1, "not,a\nbar,file\n", 16);
  CHECK(tg_bars_read(sub, &o, &b) != TG_OK);
  CHECK(msg_has("b.csv", "--skip-bad-files"));
  o.skip_bad_files = 1;
  o.warn = tmpfile();
  CHECK_OK(tg_bars_read(sub, &o, &b));
  CHECK(b.n == 1);
  tg_bars_free(&b);
  char msg[1024] = {0};
  rewind(o.warn);
  CHECK(fread(msg, 1, sizeof msg - 1, o.warn) > 0 && strstr(msg, "skipped") && strstr(msg, "b.csv"));
  fclose(o.warn);
  o.warn = NULL;
  o.skip_bad_files = 0;
  snprintf(p1, sizeof p1, "%s/a.csv", sub);
  unlink(p1);
  snprintf(p1, sizeof p1, "%s/b.csv", sub);
  unlink(p1);
  rmdir(sub);
  /* the time column under the names files use, and pandas' to_csv of a frame with a DatetimeIndex */
  const char *heads[6] = {"timestamp_utc", "datetime", "ts_event", "index", "Unnamed: 0", ""};
  for (int k = 0; k < 6; k++) {
    snprintf(text, sizeof text, "%s,open,high,low,close,volume\n2021-01-04 00:00:00,1.0,2.0,0.5,1.5,10.0\n"
             "2021-01-05 00:00:00,1.5,2.0,1.0,1.8,11.0\n", heads[k]);
    CHECK_MSG(read_text(dir, "named.csv", text, &o, &b) == TG_OK, "header '%s': %s", heads[k], tg_last_error());
    CHECK(b.n == 2 && b.ts[1] - b.ts[0] == 86400000000000LL && b.close[1] == 1.8 && b.n_cols == 0);
    tg_bars_free(&b);
  }
  const char *paths[6] = {"dup.csv", "two.csv", "ohlc.csv", "vol.csv", "px.csv", "named.csv"};
  for (int k = 0; k < 6; k++) {
    snprintf(p1, sizeof p1, "%s/%s", dir, paths[k]);
    unlink(p1);
  }
  rmdir(dir);
}

/* gzip and zstd CSV files read as the plain file does, found by their bytes whatever their names. */
static void test_compressed(void) {
  char dir[] = "/tmp/tickgrad_gz_XXXXXX", path[600];
  CHECK(mkdtemp(dir) != NULL);
  const char *csv = "ts,open,high,low,close,volume\n2021-01-04,1,2,0.5,1.5,10\n2021-01-05,1.5,2,1,1.8,11\n"
                    "2021-01-06,1.8,2.5,1.7,2.2,9\n";
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  tg_bars plain, gz, zs;
  snprintf(path, sizeof path, "%s/plain.csv", dir);
  write_file(path, csv, strlen(csv));
  CHECK_OK(tg_bars_read(path, &o, &plain));
  snprintf(path, sizeof path, "%s/bars.csv.gz", dir);
  gzFile g = gzopen(path, "wb");
  CHECK(g != NULL && gzwrite(g, csv, (unsigned)strlen(csv)) == (int)strlen(csv));
  gzclose(g);
  CHECK_OK(tg_bars_read(path, &o, &gz));
  size_t bound = ZSTD_compressBound(strlen(csv));
  char *z = malloc(bound);
  size_t zn = ZSTD_compress(z, bound, csv, strlen(csv), 3);
  CHECK(!ZSTD_isError(zn));
  snprintf(path, sizeof path, "%s/bars.data", dir); /* no telling extension */
  write_file(path, z, zn);
  CHECK_OK(tg_bars_read(path, &o, &zs));
  const tg_bars *v[2] = {&gz, &zs};
  for (int k = 0; k < 2; k++) {
    CHECK(v[k]->n == plain.n && strcmp(v[k]->format, "csv") == 0);
    for (int64_t i = 0; i < plain.n && v[k]->n == plain.n; i++)
      CHECK(v[k]->ts[i] == plain.ts[i] && v[k]->close[i] == plain.close[i] && v[k]->volume[i] == plain.volume[i]);
  }
  /* a truncated gzip file is an error naming it, not a NUL byte in a CSV */
  snprintf(path, sizeof path, "%s/bars.csv.gz", dir);
  FILE *f = fopen(path, "rb");
  unsigned char buf[4096];
  size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f) fclose(f);
  snprintf(path, sizeof path, "%s/cut.csv.gz", dir);
  write_file(path, buf, n / 2);
  tg_bars_free(&gz);
  CHECK_STATUS(tg_bars_read(path, &o, &gz), TG_ERR_FORMAT);
  CHECK(msg_has("cut.csv.gz", "gzip"));
  tg_bars_free(&plain);
  tg_bars_free(&zs);
  free(z);
  const char *names[4] = {"plain.csv", "bars.csv.gz", "bars.data", "cut.csv.gz"};
  for (int k = 0; k < 4; k++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[k]);
    unlink(path);
  }
  rmdir(dir);
}

static void test_shared(const char *shared) {
  char path[1024];
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  tg_bars b;
  /* a folder of Lean minute files (dates in the names): 12,423 bars over 9 days */
  snprintf(path, sizeof path, "%s/lean/crypto/coinbase/minute/btcusd", shared);
  CHECK_OK(tg_bars_read(path, &o, &b));
  CHECK_MSG(b.n == 12423, "btcusd minutes: %lld", (long long)b.n);
  tg_bars_free(&b);
  /* a compressed DBN file through the same entry point, with its instrument column */
  snprintf(path, sizeof path, "%s/dbn/databento-dbn/test_data.ohlcv-1m.v3.dbn.zst", shared);
  CHECK_OK(tg_bars_read(path, &o, &b));
  CHECK(strcmp(b.format, "dbn") == 0 && b.n == 2 && b.instrument != NULL);
  tg_bars_free(&b);
}

int main(void) {
  const char *src = getenv("TG_SOURCE_DIR");
  test_local(src ? src : "..");
  test_checks();
  test_compressed();
  const char *shared = getenv("TG_SHARED_DATA");
  if (!shared || access(shared, R_OK) != 0) {
    printf("skipped the shared-data part: TG_SHARED_DATA (../shared/data) is absent\n");
    return tg_test_finish();
  }
  test_shared(shared);
  return tg_test_finish();
}
