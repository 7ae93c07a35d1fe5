/* The reader entry point: format by content, folders, globs, mixed formats, reorder warnings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "support/files.h"
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
  CHECK(sorted && b.reordered > 0);
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
    CHECK_OK(tg_bars_read(path, &o, &b));
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
  const char *shared = getenv("TG_SHARED_DATA");
  if (!shared || access(shared, R_OK) != 0) {
    printf("skipped the shared-data part: TG_SHARED_DATA (../shared/data) is absent\n");
    return tg_test_finish();
  }
  test_shared(shared);
  return tg_test_finish();
}
