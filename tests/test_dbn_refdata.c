/* DBN definition and statistics records: synthetic files of versions 1-3 decoded field by field, malformed records
 * refused naming the file and record, and Databento's own two test files (when ../shared/data is there). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "support/check.h"
#include "support/dbn_write.h"
#include "tickgrad/data.h"

#define ESH4_EXPIRY 1710509400000000000LL /* 2024-03-15 13:30 UTC */
#define ESM4_EXPIRY 1718976600000000000LL /* 2024-06-21 13:30 UTC */
#define T0 1704067200000000000LL          /* 2024-01-01 */

static tg_status parse(const tg_test_dbn *b, tg_dbn_refdata *r) { return tg_dbn_refdata_parse("syn.dbn", b->p, b->n, r); }

static int has(const char *needle) { return strstr(tg_last_error(), needle) != NULL; }

/* Two outrights, a calendar spread and a call, in each version's layout. */
static void test_definitions(void) {
  for (int v = 1; v <= 3; v++) {
    tg_test_dbn b;
    tg_test_dbn_begin(&b, v, 9, 0, NULL, NULL);
    tg_test_dbn_definition(&b, 101, T0, "ESH4", 'F', ESH4_EXPIRY, 50, 0.25);
    tg_test_dbn_definition(&b, 102, T0 + 1, "ESM4", 'F', ESM4_EXPIRY, 50, 0.25);
    tg_test_dbn_definition(&b, 103, T0 + 2, "ESH4-ESM4", 'S', ESH4_EXPIRY, NAN, 0.05);
    tg_test_dbn_definition(&b, 104, T0 + 3, "ESH4 C5000", 'C', INT64_MIN, 50, NAN);
    tg_dbn_refdata r;
    CHECK_OK(parse(&b, &r));
    CHECK_MSG(r.n_defs == 4 && r.n_stats == 0 && r.version == v && !strcmp(r.schema, "definition"),
              "v%d: %lld definitions, schema %s", v, (long long)r.n_defs, r.schema);
    if (r.n_defs == 4) {
      const tg_instrument_def *d = r.defs;
      CHECK(d[0].id == 101 && !strcmp(d[0].symbol, "ESH4") && d[0].instrument_class == 'F');
      CHECK(d[0].expiration == ESH4_EXPIRY && d[0].multiplier == 50 && d[0].tick_size == 0.25 && d[0].ts == T0);
      CHECK(d[1].expiration == ESM4_EXPIRY && d[1].record == 1);
      CHECK(!strcmp(d[2].symbol, "ESH4-ESM4") && d[2].instrument_class == 'S' && isnan(d[2].multiplier) &&
            d[2].tick_size == 0.05);
      CHECK(d[3].instrument_class == 'C' && d[3].expiration == INT64_MIN && isnan(d[3].tick_size));
      CHECK(tg_dbn_refdata_find(&r, 103) == &d[2] && tg_dbn_refdata_find(&r, 999) == NULL);
    }
    tg_dbn_refdata_free(&r);
    tg_test_dbn_free(&b);
  }
  CHECK(!strcmp(tg_instrument_class_name('S'), "future spread") && tg_instrument_class_is_outright('F') &&
        !tg_instrument_class_is_outright('S') && !tg_instrument_class_is_outright('C'));
}

/* A later definition of the same id replaces the earlier for tg_dbn_refdata_find. */
static void test_redefinition(void) {
  tg_test_dbn b;
  tg_test_dbn_begin(&b, 2, 9, 0, NULL, NULL);
  tg_test_dbn_definition(&b, 7, T0, "GCZ3", 'F', ESH4_EXPIRY, 100, 0.1);
  tg_test_dbn_definition(&b, 7, T0 + 5, "GCZ3", 'F', ESH4_EXPIRY, 100, 0.2);
  tg_test_dbn_definition(&b, 3, T0 + 6, "GCG4", 'F', ESH4_EXPIRY, 100, 0.3);
  tg_test_dbn_definition(&b, 9, T0 + 7, "GCJ4", 'F', ESH4_EXPIRY, 100, 0.4);
  tg_test_dbn_definition(&b, 3, T0 + 8, "GCG4", 'F', ESH4_EXPIRY, 100, 0.5);
  tg_dbn_refdata r;
  CHECK_OK(parse(&b, &r));
  const tg_instrument_def *d = tg_dbn_refdata_find(&r, 7);
  CHECK(r.n_defs == 5 && r.n_ids == 3 && d && d->tick_size == 0.2 && d->record == 1);
  d = tg_dbn_refdata_find(&r, 3); /* the last of the ids' definitions, wherever the others are */
  CHECK(d && d->tick_size == 0.5 && d->record == 4);
  d = tg_dbn_refdata_find(&r, 9);
  CHECK(d && d->record == 3);
  CHECK(!tg_dbn_refdata_find(&r, 8) && !tg_dbn_refdata_find(&r, 1) && !tg_dbn_refdata_find(&r, 10));
  tg_dbn_refdata_free(&r);
  tg_test_dbn_free(&b);
}

static void test_statistics(void) {
  for (int v = 2; v <= 3; v++) {
    tg_test_dbn b;
    tg_test_dbn_begin(&b, v, 10, 0, NULL, NULL);
    tg_test_dbn_stat(&b, 101, T0, TG_DBN_STAT_OPEN_INTEREST, T0 - 86400000000000LL, 2250000);
    tg_test_dbn_stat(&b, 102, T0 + 9, TG_DBN_STAT_OPEN_INTEREST, INT64_MIN, 12);
    tg_dbn_refdata r;
    CHECK_OK(parse(&b, &r));
    CHECK_MSG(r.n_stats == 2 && r.n_defs == 0 && !strcmp(r.schema, "statistics"), "v%d: %lld statistics", v,
              (long long)r.n_stats);
    if (r.n_stats == 2) {
      const tg_dbn_stat *s = r.stats;
      CHECK(s[0].id == 101 && s[0].type == TG_DBN_STAT_OPEN_INTEREST && s[0].quantity == 2250000 &&
            s[0].ts_ref == T0 - 86400000000000LL && s[0].ts == T0 && s[0].update_action == 1 && isnan(s[0].price));
      CHECK(s[1].ts_ref == INT64_MIN && s[1].quantity == 12 && s[1].record == 1);
    }
    tg_dbn_refdata_free(&r);
    tg_test_dbn_free(&b);
  }
}

static void test_refused(void) {
  tg_test_dbn b;
  tg_dbn_refdata r;
  /* a trades file is not reference data */
  tg_test_dbn_begin(&b, 2, 4, 0, NULL, NULL);
  tg_test_dbn_trade(&b, 1, T0, 10, 1, 'B');
  CHECK_STATUS(parse(&b, &r), TG_ERR_UNSUPPORTED);
  CHECK(has("syn.dbn: byte 24: the file holds trades records (schema 4)"));
  tg_test_dbn_free(&b);
  /* a trade record inside a definition file */
  tg_test_dbn_begin(&b, 2, 9, 0, NULL, NULL);
  tg_test_dbn_definition(&b, 1, T0, "ESH4", 'F', ESH4_EXPIRY, 50, 0.25);
  tg_test_dbn_trade(&b, 1, T0, 10, 1, 'B');
  CHECK_STATUS(parse(&b, &r), TG_ERR_UNSUPPORTED);
  CHECK(has("record 1 has rtype 0x00"));
  /* the same file cut inside its last record */
  b.n -= 10;
  CHECK_STATUS(parse(&b, &r), TG_ERR_FORMAT);
  CHECK(has("record 1 declares 48 bytes but only 38 remain"));
  tg_test_dbn_free(&b);
  /* a v3 definition record cut to the v2 length (its length field says 400 bytes) */
  tg_test_dbn_begin(&b, 3, 9, 0, NULL, NULL);
  size_t at = b.n;
  tg_test_dbn_definition(&b, 1, T0, "ESH4", 'F', ESH4_EXPIRY, 50, 0.25);
  b.p[at] = 400 / 4;
  b.n = at + 400;
  CHECK_STATUS(parse(&b, &r), TG_ERR_FORMAT);
  CHECK(has("record 0 (definition) is 400 bytes; a DBN version 3 definition record needs 520"));
  tg_test_dbn_free(&b);
  /* a length field below the header */
  tg_test_dbn_begin(&b, 2, 10, 0, NULL, NULL);
  at = b.n;
  tg_test_dbn_stat(&b, 1, T0, 9, T0, 5);
  b.p[at] = 3;
  CHECK_STATUS(parse(&b, &r), TG_ERR_FORMAT);
  CHECK(has("record 0: length field 3"));
  /* a version this reader does not know */
  b.p[at] = 64 / 4;
  b.p[3] = 4;
  CHECK_STATUS(parse(&b, &r), TG_ERR_UNSUPPORTED);
  CHECK(has("DBN version 4 is newer"));
  tg_test_dbn_free(&b);
  CHECK(r.defs == NULL && r.stats == NULL && r.n_defs == 0);
}

/* Databento's test files (DBN v2): two XNAS MSFT definitions (a stock: no expiry, multiplier or tick) and two GLBX
 * statistics (lowest offer and session high, price 100, no quantity). */
static void test_shared(const char *root) {
  char path[4096];
  tg_dbn_refdata r;
  snprintf(path, sizeof path, "%s/test_data.definition.dbn", root);
  CHECK(tg_dbn_refdata_sniff(path) == 1);
  CHECK_OK(tg_dbn_refdata_read(path, &r));
  CHECK(r.version == 2 && r.n_defs == 2);
  if (r.n_defs == 2) {
    CHECK(r.defs[0].id == 6819 && r.defs[1].id == 6830 && !strcmp(r.defs[0].symbol, "MSFT"));
    CHECK(r.defs[0].instrument_class == 'K' && r.defs[0].expiration == INT64_MIN && isnan(r.defs[0].tick_size) &&
          isnan(r.defs[0].multiplier) && r.defs[0].ts == 1633331241618018154LL);
  }
  tg_dbn_refdata_free(&r);
  snprintf(path, sizeof path, "%s/test_data.statistics.dbn", root);
  CHECK_OK(tg_dbn_refdata_read(path, &r));
  CHECK(r.n_stats == 2);
  if (r.n_stats == 2) {
    CHECK(r.stats[0].id == 146945 && r.stats[0].type == 7 && r.stats[1].type == 5 && r.stats[0].price == 100 &&
          isnan(r.stats[0].quantity) && r.stats[0].ts_ref == INT64_MIN && r.stats[1].ts == 1682269536071497081LL);
  }
  tg_dbn_refdata_free(&r);
  snprintf(path, sizeof path, "%s/test_data.trades.dbn", root);
  CHECK(tg_dbn_refdata_sniff(path) == 0);
}

int main(void) {
  test_definitions();
  test_redefinition();
  test_statistics();
  test_refused();
  const char *shared = getenv("TG_SHARED_DATA");
  char root[2048];
  snprintf(root, sizeof root, "%s/dbn-ticks/databento-dbn", shared ? shared : "");
  struct stat sb;
  if (shared && *shared && stat(root, &sb) == 0) test_shared(root);
  else printf("no DBN test files (TG_SHARED_DATA unset or without dbn-ticks/): the shared-file checks are skipped\n");
  return tg_test_finish();
}
