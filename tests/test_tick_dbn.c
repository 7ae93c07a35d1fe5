/* DBN tick files: Databento's own test files (trades, tbbo, mbp-1) decoded as trades and quotes, wrong schemas and a
 * truncated record refused by name. Skipped when ../shared/data is absent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/ticks.h"

static char g_root[2048];

static tg_status read_all(const char *file, tg_tick_kind kind, void *buf, int64_t cap, int64_t *n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", g_root, file);
  tg_tick_source *s = NULL;
  *n = 0;
  tg_status st = tg_tick_open(file[0] == '/' ? file : path, kind, NULL, &s);
  size_t each = kind == TG_TICK_TRADES ? sizeof(tg_trade) : sizeof(tg_quote);
  for (int64_t got = 1; st == TG_OK && got > 0 && *n < cap; *n += got)
    st = tg_tick_next(s, (char *)buf + (size_t)*n * each, cap - *n, &got);
  tg_tick_close(s);
  return st;
}

/* Values from the files' bytes, as Databento's decoder gives them: ES (instrument 5482) on 2020-12-28, both trades
 * at 3720.25 with the seller as aggressor ('A'). */
static void test_trades(void) {
  tg_trade t[8];
  int64_t n;
  const char *files[] = {"test_data.trades.dbn", "test_data.tbbo.dbn"};
  for (int f = 0; f < 2; f++) {
    CHECK_OK(read_all(files[f], TG_TICK_TRADES, t, 8, &n));
    CHECK_MSG(n == 2, "%s: %lld trades", files[f], (long long)n);
    if (n != 2) continue;
    CHECK(t[0].ts == 1609160400098821953LL && t[1].ts == 1609160400107665963LL);
    CHECK(t[0].price == 3720.25 && t[1].price == 3720.25 && t[0].size == 5 && t[1].size == 21);
    CHECK(t[0].side == TG_SIDE_SELL && t[1].side == TG_SIDE_SELL && t[0].flags == 0 && t[1].line == 1);
  }
  /* mbp-1's records here are book updates (action 'A'), not trades */
  CHECK_OK(read_all("test_data.mbp-1.dbn", TG_TICK_TRADES, t, 8, &n));
  CHECK(n == 0);
}

static void test_quotes(void) {
  tg_quote q[8];
  int64_t n;
  CHECK_OK(read_all("test_data.mbp-1.dbn", TG_TICK_QUOTES, q, 8, &n));
  CHECK(n == 2);
  if (n == 2) CHECK(q[0].bid == 3720.25 && q[0].ask == 3720.5 && q[0].bid_size == 24 && q[0].ask_size == 11 &&
                    q[1].ask_size == 12);
  CHECK_OK(read_all("test_data.tbbo.dbn", TG_TICK_QUOTES, q, 8, &n));
  CHECK(n == 2);
}

static void test_refused(void) {
  tg_trade t[8];
  int64_t n;
  CHECK_STATUS(read_all("test_data.trades.dbn", TG_TICK_QUOTES, t, 8, &n), TG_ERR_UNSUPPORTED);
  CHECK(strstr(tg_last_error(), "holds trades records") != NULL);
  CHECK_STATUS(read_all("test_data.mbo.dbn", TG_TICK_TRADES, t, 8, &n), TG_ERR_UNSUPPORTED);
  CHECK(strstr(tg_last_error(), "test_data.mbo.dbn: the file holds mbo records") != NULL);
  /* the trades file cut 10 bytes short: its last record is truncated */
  char src[4096], cut[256];
  snprintf(src, sizeof src, "%s/test_data.trades.dbn", g_root);
  snprintf(cut, sizeof cut, "/tmp/tg_tick_dbn_%ld.dbn", (long)getpid());
  size_t len;
  unsigned char *b = tg_test_read_file(src, &len);
  FILE *f = b ? fopen(cut, "wb") : NULL;
  if (f) {
    fwrite(b, 1, len - 10, f);
    fclose(f);
    CHECK_STATUS(read_all(cut, TG_TICK_TRADES, t, 8, &n), TG_ERR_FORMAT);
    CHECK(strstr(tg_last_error(), "record 1 declares 48 bytes but the file ends first") != NULL);
    /* the second trade moved to another instrument: one pass makes one instrument's bars */
    size_t second = 8 + (size_t)(b[4] | b[5] << 8 | b[6] << 16 | (size_t)b[7] << 24) + 48;
    b[second + 4] ^= 1;
    f = fopen(cut, "wb");
    if (f) {
      fwrite(b, 1, len, f);
      fclose(f);
    }
    CHECK_STATUS(read_all(cut, TG_TICK_TRADES, t, 8, &n), TG_ERR_UNSUPPORTED);
    CHECK(strstr(tg_last_error(), "record 1 is instrument 5483, the first record's is 5482") != NULL);
    remove(cut);
  }
  free(b);
}

int main(void) {
  const char *shared = getenv("TG_SHARED_DATA");
  snprintf(g_root, sizeof g_root, "%s/dbn-ticks/databento-dbn", shared ? shared : "");
  struct stat sb;
  if (!shared || !*shared || stat(g_root, &sb) != 0)
    return tg_test_skip("no DBN tick files: set TG_SHARED_DATA to the shared data folder (../shared/data)");
  test_trades();
  test_quotes();
  test_refused();
  return tg_test_finish();
}
