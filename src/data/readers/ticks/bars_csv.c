/* Bars as CSV: the bar fields, the instrument, then every extra column by name; written atomically. And the writer
 * chosen by a path's extension. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "base/alloc.h"
#include "base/files.h"
#include "data/readers/timeconv.h"
#include "tickgrad/ticks.h"

#define LINE_MAX_LEN 65536

/* Appends "," and the number (empty when NaN or infinite) to line at *len. */
static void put_num(char *line, size_t *len, double v) {
  int w = isfinite(v) ? snprintf(line + *len, LINE_MAX_LEN - *len, ",%.17g", v)
                      : snprintf(line + *len, LINE_MAX_LEN - *len, ",");
  *len += (size_t)w < LINE_MAX_LEN - *len ? (size_t)w : LINE_MAX_LEN - 1 - *len;
}

static void put_text(char *line, size_t *len, const char *s) {
  int w = snprintf(line + *len, LINE_MAX_LEN - *len, ",%s", s);
  *len += (size_t)w < LINE_MAX_LEN - *len ? (size_t)w : LINE_MAX_LEN - 1 - *len;
}

static size_t header(const tg_bars *b, char *line) {
  size_t len = (size_t)snprintf(line, LINE_MAX_LEN, "ts,open,high,low,close,volume");
  if (b->instrument) put_text(line, &len, "instrument");
  for (int k = 0; k < b->n_cols; k++) put_text(line, &len, b->cols[k].name);
  line[len++] = '\n';
  return len;
}

static size_t row(const tg_bars *b, int64_t i, char *line) {
  char ts[TG_TIME_TEXT];
  size_t len = (size_t)snprintf(line, LINE_MAX_LEN, "%s", tg_format_time(b->ts[i], ts, sizeof ts));
  double f[5] = {b->open[i], b->high[i], b->low[i], b->close[i], b->volume[i]};
  for (int k = 0; k < 5; k++) put_num(line, &len, f[k]);
  if (b->instrument) put_num(line, &len, b->instrument[i]);
  for (int k = 0; k < b->n_cols; k++) {
    const tg_bar_column *c = &b->cols[k];
    if (c->kind == TG_COLUMN_NUMERIC) put_num(line, &len, c->values[i]);
    else put_text(line, &len, c->codes[i] == TG_CATEGORY_MISSING ? "" : tg_categories_name(&c->cats, c->codes[i]));
  }
  line[len++] = '\n';
  return len;
}

/* Rows go out through one buffer of OUT_LEN bytes, written whenever the next row might not fit. */
#define OUT_LEN (16 * LINE_MAX_LEN)

tg_status tg_bars_write_csv(const tg_bars *b, const char *path) {
  char *out = tg_malloc(OUT_LEN);
  if (!out) return tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
  tg_atomic_file f;
  tg_status st = tg_atomic_open(&f, path);
  size_t len = header(b, out);
  for (int64_t i = 0; st == TG_OK && i < b->n; i++) {
    if (OUT_LEN - len <= LINE_MAX_LEN) {
      st = tg_atomic_write(&f, out, len);
      len = 0;
    }
    if (st == TG_OK) len += row(b, i, out + len);
  }
  if (st == TG_OK) st = tg_atomic_write(&f, out, len);
  if (st == TG_OK) st = tg_atomic_commit(&f);
  tg_free(out);
  return st;
}

tg_status tg_bars_write(const tg_bars *b, const char *path) {
  size_t n = strlen(path);
  if (n >= 8 && strcasecmp(path + n - 8, ".parquet") == 0) return tg_bars_write_parquet(b, path);
  return tg_bars_write_csv(b, path);
}
