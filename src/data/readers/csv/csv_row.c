/* One streamed CSV row under its header: the header's layout, the file reader's field-count rule, the bar checks. */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/bar_check.h"
#include "data/readers/csv/csv_internal.h"

tg_status tg_csv_parse_row(const char *path, const char *header, const char *row, int64_t row_no,
                           const tg_read_opts *opts, tg_bars *out) {
  size_t hn = strlen(header), rn = strlen(row);
  tg_csv_layout lay;
  tg_status st = tg_csv_sniff(path, header, header + hn, &lay);
  if (st != TG_OK) return st;
  int64_t got = tg_csv_field_count(row, row + rn, lay.delim);
  if (got != lay.ncols)
    return tg_error(TG_ERR_FORMAT, "%s: line %lld: %lld fields, expected %lld like the %s (split at %s)", path,
                    (long long)row_no, (long long)got, (long long)lay.ncols, lay.has_header ? "header" : "other rows",
                    tg_csv_delim_desc(lay.delim));
  char *buf = tg_malloc(hn + rn + 3);
  if (!buf) return tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
  memcpy(buf, header, hn);
  buf[hn] = '\n';
  memcpy(buf + hn + 1, row, rn);
  buf[hn + rn + 1] = '\n';
  buf[hn + rn + 2] = '\0';
  int64_t n0 = out->n;
  st = tg_csv_parse_numbered(path, buf, hn + rn + 2, opts, row_no, out);
  tg_free(buf);
  if (st == TG_OK && out->n != n0 + 1)
    st = tg_error(TG_ERR_FORMAT, "%s: line %lld: expected one bar, the line holds %lld", path, (long long)row_no,
                  (long long)(out->n - n0));
  if (st == TG_OK) {
    tg_bars one;
    tg_bars_view(out, n0, out->n, NULL, &one);
    st = tg_bars_check_line(&one, opts, path, row_no);
  }
  return st;
}
