/* Parquet: the extra columns beside the bars (every further column read as numbers or as category codes). */
#include "data/readers/bar_columns.h"
#include "data/readers/parquet/parquet.h"

/* How column c is kept: numeric or a category (returns 1), or not (0, with the reason in why). */
static int extra_kind(const tg_pq_file *f, int c, tg_column_kind *kind, char *why, size_t n) {
  const tg_pq_column *col = &f->cols[c];
  tg_pq_kind k;
  if (col->max_rep > 0) {
    snprintf(why, n, "a repeated (list) column");
    return 0;
  }
  if (col->logical == TG_PQ_LT_TIMESTAMP || col->logical == TG_PQ_LT_DATE || col->logical == TG_PQ_LT_TIME ||
      col->physical == TG_PQ_INT96) {
    snprintf(why, n, "a time column (only the bar time is read)");
    return 0;
  }
  if (col->physical == TG_PQ_BYTE_ARRAY) {
    *kind = TG_COLUMN_CATEGORY;
    if (tg_pq_string_kind(f, c, &k) == TG_OK) return 1;
    snprintf(why, n, "BYTE_ARRAY that is not text");
    return 0;
  }
  *kind = TG_COLUMN_NUMERIC;
  if (tg_pq_column_kind(f, c, &k) == TG_OK) return 1;
  snprintf(why, n, "%s", tg_last_error());
  return 0;
}

static void skipped(FILE *warn, const tg_pq_file *f, int c, const char *why) {
  if (!warn) return;
  char d[384];
  tg_pq_describe(&f->cols[c], d, sizeof d);
  fprintf(warn, "warning: %s: column %s is not kept as an extra column: %s\n", f->path, d, why);
}

tg_status tg_pq_read_extras(const tg_pq_file *f, const unsigned char *used, FILE *warn, tg_bars *out, int64_t base) {
  int64_t n = f->num_rows;
  const int cols0 = out->n_cols;
  for (int j = 0; j < cols0; j++) tg_bar_column_set_missing(&out->cols[j], base, base + n);
  tg_status st = TG_OK;
  for (int c = 0; c < f->ncols && st == TG_OK; c++) {
    if (used[c]) continue;
    tg_column_kind kind;
    char why[512];
    if (!extra_kind(f, c, &kind, why, sizeof why)) {
      skipped(warn, f, c, why);
      continue;
    }
    const char *name = f->cols[c].name;
    int j = tg_bars_column_index(out, name);
    if (!*name || j >= cols0) { /* no name, or two leaves of one: schemas no writer makes */
      skipped(warn, f, c, *name ? "a second column of that name" : "it has no name");
      continue;
    }
    if (j >= 0 && out->cols[j].kind != kind) {
      st = tg_error(TG_ERR_FORMAT, "%s: column '%s' is %s here but %s in the bars read before", f->path, name,
                    kind == TG_COLUMN_NUMERIC ? "numeric" : "text", kind == TG_COLUMN_NUMERIC ? "text" : "numeric");
      break;
    }
    if (j < 0) {
      if ((st = tg_bars_add_column(out, name, kind)) != TG_OK) break;
      j = out->n_cols - 1;
    }
    tg_bar_column *col = &out->cols[j];
    st = kind == TG_COLUMN_NUMERIC ? tg_pq_read_f64(f, c, col->values + base, NULL, NULL)
                                   : tg_pq_read_codes(f, c, &col->cats, col->codes + base, NULL);
    if (st == TG_OK || st == TG_ERR_NOMEM) continue;
    /* an extra column the reader cannot decode costs that column, not the bars */
    const char *msg = tg_last_error();
    size_t pl = strlen(f->path);
    snprintf(why, sizeof why, "%s", strncmp(msg, f->path, pl) == 0 && msg[pl] == ':' ? msg + pl + 2 : msg);
    skipped(warn, f, c, why);
    if (j >= cols0) tg_bars_drop_column(out, j);
    else tg_bar_column_set_missing(col, base, base + n);
    st = TG_OK;
  }
  if (st != TG_OK) tg_bar_columns_truncate(out, cols0);
  return st;
}
