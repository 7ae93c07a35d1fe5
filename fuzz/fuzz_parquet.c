/* libFuzzer target: the Parquet reader must read or refuse any bytes without a crash, hang or leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "data/readers/parquet/parquet.h"
#include "tickgrad/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* the bar mapping, with and without a zone (naive times are converted) and nulls as NaN */
  tg_read_opts o = {0};
  o.nulls = (size & 1) ? TG_NULLS_NAN : TG_NULLS_ERROR;
  o.tz = (size & 2) ? "America/New_York" : NULL;
  tg_bars b;
  tg_bars_init(&b);
  (void)tg_parquet_parse("fuzz.parquet", data, size, &o, &b);
  tg_bars_free(&b);
  /* every column through the column API, so files without bar columns are decoded too */
  tg_pq_file f;
  if (tg_pq_open(&f, "fuzz.parquet", data, size) != TG_OK) return 0;
  void *v = malloc(8 * (size_t)(f.num_rows + 1));
  uint8_t *valid = malloc((size_t)f.num_rows + 1);
  for (int c = 0; v && valid && c < f.ncols; c++) {
    tg_pq_kind k;
    if (tg_pq_string_kind(&f, c, &k) == TG_OK) { /* strings as category codes */
      tg_categories cats = {0};
      (void)tg_pq_read_codes(&f, c, &cats, v, NULL);
      tg_categories_free(&cats);
      continue;
    }
    if (tg_pq_column_kind(&f, c, &k) != TG_OK) continue;
    if (k.lane == TG_PQ_LANE_I64) (void)tg_pq_read_i64(&f, c, v, (c & 1) ? valid : NULL, NULL);
    (void)tg_pq_read_f64(&f, c, v, (c & 1) ? NULL : valid, NULL);
  }
  free(v);
  free(valid);
  tg_pq_close(&f);
  return 0;
}
