/* CSV layout: the delimiter, a preamble line to skip, and whether the first row is a header. */
#include <string.h>
#include "data/readers/csv/csv_internal.h"

static const char k_delims[4] = {',', ';', '\t', '|'};
#define SAMPLE_BYTES ((size_t)4 << 20)

/* The most frequent value of c[0..n) (ties: the larger value) and how often it occurs. */
static int64_t mode_of(const int64_t *c, int n, int *freq) {
  int64_t best = 0;
  int bf = 0;
  for (int i = 0; i < n; i++) {
    int f = 0;
    for (int j = 0; j < n; j++) f += c[j] == c[i];
    if (f > bf || (f == bf && c[i] > best)) {
      best = c[i];
      bf = f;
    }
  }
  *freq = bf;
  return best;
}

/* A line that can be a preamble: it does not start like a number or a date. */
static int preamble_like(const tg_csv_line *ln) {
  const char *p = ln->p;
  while (p < ln->e && (*p == ' ' || *p == '\t' || *p == '"')) p++;
  return p < ln->e && !((unsigned)(*p - '0') < 10 || *p == '-' || *p == '+' || *p == '.');
}

tg_status tg_csv_sniff(const char *path, const char *buf, const char *end, tg_csv_layout *lay) {
  memset(lay, 0, sizeof *lay);
  const char *pos = buf;
  if (end - pos >= 3 && memcmp(pos, "\xEF\xBB\xBF", 3) == 0) pos += 3;
  if (pos == end) return tg_error(TG_ERR_FORMAT, "%s: empty file", path);

  tg_csv_line lines[TG_CSV_SAMPLE_LINES];
  int n = 0;
  int64_t no = 1;
  size_t bytes = 0;
  while (pos < end && n < TG_CSV_SAMPLE_LINES && bytes < SAMPLE_BYTES) {
    tg_csv_line ln;
    tg_status st = tg_csv_line_read(path, pos, end, no++, &ln);
    if (st != TG_OK) return st;
    bytes += (size_t)(ln.next - pos);
    pos = ln.next;
    if (tg_csv_blank(ln.p, ln.e)) continue;
    lines[n++] = ln;
  }
  if (n == 0) return tg_error(TG_ERR_FORMAT, "%s: no data rows (the file holds only blank lines)", path);

  /* the delimiter whose field count is the same on most lines, then the one giving more fields */
  int64_t counts[TG_CSV_SAMPLE_LINES], best_counts[TG_CSV_SAMPLE_LINES];
  int best_freq = 0;
  int64_t best_mode = 0;
  char best = 0;
  for (int d = 0; d < 4; d++) {
    for (int i = 0; i < n; i++) counts[i] = tg_csv_field_count(lines[i].p, lines[i].e, k_delims[d]);
    int freq;
    int64_t mode = mode_of(counts, n, &freq);
    if (mode < 2) continue;
    if (freq > best_freq || (freq == best_freq && mode > best_mode)) {
      best = k_delims[d];
      best_freq = freq;
      best_mode = mode;
      memcpy(best_counts, counts, sizeof(int64_t) * (size_t)n);
    }
  }
  if (!best)
    return tg_error(TG_ERR_FORMAT,
                    "%s: line %lld: no delimiter found (tried ',', ';', tab and '|'); a bar file needs a time "
                    "column and price columns",
                    path, (long long)lines[0].no);
  lay->delim = best;
  lay->altdec = best == ';' ? ',' : 0;
  lay->ncols = best_mode;

  /* up to three lines with fewer fields before the first full one, none of them looking like data,
   * are a preamble (a source URL, a title) */
  int first = 0;
  while (first < n && first < 3 && best_counts[first] < best_mode && preamble_like(&lines[first])) first++;
  if (first < n && best_counts[first] != best_mode) first = 0;
  lay->first = lines[first].p;
  lay->first_no = lines[first].no;

  /* a header is a first row in which no field is a number */
  const char *p = lines[first].p;
  int more = 1, numbers = 0;
  while (more) {
    tg_csv_field f;
    double v;
    p = tg_csv_field_next(p, lines[first].e, best, &f, &more);
    numbers += !f.bad && tg_csv_number_parse(f.p, f.e, lay->altdec, &v) == TG_CSV_NUM_OK;
  }
  lay->has_header = numbers == 0;
  int rows = n - first - lay->has_header;
  const char *from = lay->has_header ? lines[first].next : lines[first].p;
  lay->bytes_per_line = rows > 0 && pos > from ? (double)(pos - from) / rows : 32.0;
  return TG_OK;
}
