/* Synthetic DBN files for tests: metadata with symbol mappings, trades, definitions and statistics records. */
#ifndef TG_TEST_DBN_WRITE_H
#define TG_TEST_DBN_WRITE_H

#include <stddef.h>
#include <stdint.h>

/* A DBN file being built: version 1-3 (the records' layouts follow it). */
typedef struct tg_test_dbn {
  unsigned char *p; /* [n] */
  size_t n, cap;
  int version;
} tg_test_dbn;

/* Starts b with the prelude and metadata of version and schema (DBN's number: 4 trades, 9 definition, 10
 * statistics), one mapping per raw[i] -> ids[i] (an interval of 2020-01-01 .. 2030-01-01). */
void tg_test_dbn_begin(tg_test_dbn *b, int version, unsigned schema, int n_maps, const char *const *raw,
                       const uint32_t *ids);
/* A TradeMsg: price in units (1e-9 fixed point written), side 'A', 'B' or 'N'. */
void tg_test_dbn_trade(tg_test_dbn *b, uint32_t id, int64_t ts, double price, uint32_t size, char side);
/* An InstrumentDefMsg of b's version: expiration INT64_MIN and NaN multiplier or tick write DBN's undefined values;
 * the multiplier goes in unit_of_measure_qty. */
void tg_test_dbn_definition(tg_test_dbn *b, uint32_t id, int64_t ts, const char *raw_symbol, char instrument_class,
                            int64_t expiration, double multiplier, double tick_size);
/* A StatMsg of b's version (update action new, price undefined). */
void tg_test_dbn_stat(tg_test_dbn *b, uint32_t id, int64_t ts, uint16_t stat_type, int64_t ts_ref, int64_t quantity);
/* Writes b to path; 0 on success. */
int tg_test_dbn_save(const tg_test_dbn *b, const char *path);
void tg_test_dbn_free(tg_test_dbn *b);

#endif
