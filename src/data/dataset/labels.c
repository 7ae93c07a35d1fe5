/* The labels: target: a CSV of ts[,instrument],label[,end] joined to the bar at or just before each label's time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/alloc.h"
#include "base/intmath.h"
#include "base/files.h"
#include "data/readers/csv/csv_internal.h"
#include "data/dataset/targets_internal.h"
#include "data/readers/timeconv.h"

#define MAX_LABEL_CLASSES 256
#define MAX_FIELDS 64

enum { F_TS = 0, F_INST, F_LABEL, F_END, F_COUNT };
static const char *const k_field_names[F_COUNT][5] = {
    {"ts", "time", "timestamp", "datetime", "date"},
    {"instrument", "symbol", "ticker", "instrument_id", NULL},
    {"label", "class", NULL, NULL, NULL},
    {"end", "exit", "end_ts", NULL, NULL},
};

typedef struct label_rec {
  int inst, name;
  int64_t ts, end, line; /* end INT64_MIN: none */
} label_rec;

typedef struct label_file {
  const char *path, *tz;
  label_rec *rec;
  int64_t n, cap;
  char (*names)[TG_NAME_MAX]; /* [n_names] in order of first appearance */
  int n_names;
} label_file;

static void label_file_free(label_file *f) {
  tg_free(f->rec);
  tg_free(f->names);
}

/* Splits a line into at most MAX_FIELDS fields; returns how many. */
static int split(const tg_csv_line *ln, char delim, tg_csv_field *fs) {
  int n = 0, more = 1;
  const char *p = ln->p;
  while (more && n < MAX_FIELDS) p = tg_csv_field_next(p, ln->e, delim, &fs[n++], &more);
  return n;
}

static int field_is(const tg_csv_field *f, const char *name) {
  size_t len = (size_t)(f->e - f->p);
  return strlen(name) == len && strncasecmp(f->p, name, len) == 0;
}

static tg_status map_header(const label_file *lf, const tg_csv_line *ln, char delim, int *col) {
  tg_csv_field fs[MAX_FIELDS];
  int n = split(ln, delim, fs);
  for (int k = 0; k < F_COUNT; k++) col[k] = -1;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < F_COUNT; k++)
      for (int a = 0; a < 5 && k_field_names[k][a]; a++)
        if (col[k] < 0 && field_is(&fs[i], k_field_names[k][a])) col[k] = i;
  if (col[F_TS] < 0 || col[F_LABEL] < 0) {
    char hdr[120];
    return tg_error(TG_ERR_FORMAT, "labels %s line %lld: the header (%s) needs a time column (ts, time, timestamp, "
                    "datetime or date) and a label column (label or class); instrument and end are optional",
                    lf->path, (long long)ln->no, tg_csv_quote(ln->p, ln->e, hdr, sizeof hdr));
  }
  return TG_OK;
}

/* One time field into UTC ns (wall-clock times read in lf->tz). */
static tg_status parse_time(const label_file *lf, const tg_csv_timefmt *fmt, const tg_csv_field *f, int64_t line,
                            const char *what, int64_t *ns) {
  int absolute = 0;
  char buf[64];
  if (!tg_csv_time_parse(fmt, f->p, f->e, ns, &absolute))
    return tg_error(TG_ERR_FORMAT, "labels %s line %lld: %s '%s' is not a time in the file's format (%s)", lf->path,
                    (long long)line, what, tg_csv_quote(f->p, f->e, buf, sizeof buf), tg_csv_time_name(fmt));
  if (absolute || tg_tz_is_utc(lf->tz)) return TG_OK;
  int64_t s = *ns / TG_NS_PER_S - (*ns % TG_NS_PER_S < 0), utc_s = 0;
  tg_status st = tg_tz_local_to_utc(lf->tz, s, &utc_s);
  if (st == TG_OK) *ns = utc_s * TG_NS_PER_S + (*ns - s * TG_NS_PER_S);
  return st;
}

static int64_t find_id(const tg_layout *lay, uint32_t id) {
  int lo = 0, hi = lay->k;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (lay->ids[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < lay->k && lay->ids[lo] == id ? lo : -1;
}

static tg_status add_name(label_file *lf, const tg_csv_field *f, int64_t line, int *out) {
  size_t len = (size_t)(f->e - f->p);
  char buf[64];
  if (len == 0) return tg_error(TG_ERR_FORMAT, "labels %s line %lld: the label is empty", lf->path, (long long)line);
  if (len >= TG_NAME_MAX)
    return tg_error(TG_ERR_FORMAT, "labels %s line %lld: the label '%s' is longer than %d bytes", lf->path,
                    (long long)line, tg_csv_quote(f->p, f->e, buf, sizeof buf), TG_NAME_MAX - 1);
  for (int i = 0; i < lf->n_names; i++)
    if (strlen(lf->names[i]) == len && memcmp(lf->names[i], f->p, len) == 0) return *out = i, TG_OK;
  if (lf->n_names == MAX_LABEL_CLASSES)
    return tg_error(TG_ERR_FORMAT, "labels %s line %lld: more than %d distinct labels", lf->path, (long long)line,
                    MAX_LABEL_CLASSES);
  if (!lf->names && !(lf->names = tg_malloc(MAX_LABEL_CLASSES * sizeof *lf->names)))
    return tg_error(TG_ERR_NOMEM, "labels %s: out of memory", lf->path);
  memcpy(lf->names[lf->n_names], f->p, len);
  lf->names[lf->n_names][len] = '\0';
  *out = lf->n_names++;
  return TG_OK;
}

/* One data row into a record. */
static tg_status read_row(label_file *lf, const tg_bars *bars, const tg_layout *lay, const tg_csv_timefmt *fmt,
                          const int *col, tg_csv_ids *ids, const tg_csv_field *fs, int nf, int64_t line) {
  char buf[64];
  for (int k = 0; k < F_COUNT; k++)
    if (col[k] >= nf)
      return tg_error(TG_ERR_FORMAT, "labels %s line %lld: %d fields, the header names %d or more", lf->path,
                      (long long)line, nf, col[k] + 1);
  label_rec r = {.inst = 0, .end = INT64_MIN, .line = line};
  tg_status st = parse_time(lf, fmt, &fs[col[F_TS]], line, "the time", &r.ts);
  if (st == TG_OK && col[F_END] >= 0 && fs[col[F_END]].e > fs[col[F_END]].p)
    st = parse_time(lf, fmt, &fs[col[F_END]], line, "the end", &r.end);
  if (st != TG_OK) return st;
  if (r.end != INT64_MIN && r.end < r.ts)
    return tg_error(TG_ERR_FORMAT, "labels %s line %lld: the end is before the label's time", lf->path, (long long)line);
  if (col[F_INST] >= 0) {
    const tg_csv_field *f = &fs[col[F_INST]];
    uint32_t id = 0;
    if (!bars->instrument)
      return tg_error(TG_ERR_FORMAT, "labels %s line %lld: the labels name instruments but the bars have no "
                      "instrument column", lf->path, (long long)line);
    st = tg_csv_instrument_id(ids, lf->path, line, f->p, f->e, &id);
    if (st != TG_OK) return st;
    int64_t j = find_id(lay, id);
    if (j < 0)
      return tg_error(TG_ERR_INVALID, "labels %s line %lld: instrument '%s' (id %u) is not in the bars (%d "
                      "instruments, ids %u .. %u)", lf->path, (long long)line, tg_csv_quote(f->p, f->e, buf, sizeof buf),
                      id, lay->k, lay->ids[0], lay->ids[lay->k - 1]);
    r.inst = (int)j;
  } else if (lay->k > 1) {
    return tg_error(TG_ERR_FORMAT, "labels %s: the bars hold %d instruments; the labels need an instrument column",
                    lf->path, lay->k);
  }
  if ((st = add_name(lf, &fs[col[F_LABEL]], line, &r.name)) != TG_OK) return st;
  if (lf->n == lf->cap) {
    int64_t cap = lf->cap ? 2 * lf->cap : 1024;
    label_rec *p = tg_malloc((size_t)cap * sizeof *p);
    if (!p) return tg_error(TG_ERR_NOMEM, "labels %s: out of memory at line %lld", lf->path, (long long)line);
    if (lf->n) memcpy(p, lf->rec, (size_t)lf->n * sizeof *p);
    tg_free(lf->rec);
    lf->rec = p, lf->cap = cap;
  }
  lf->rec[lf->n++] = r;
  return TG_OK;
}

/* Reads every label of the file. */
static tg_status read_labels(label_file *lf, const tg_bars *bars, const tg_layout *lay) {
  char *buf = NULL;
  size_t len = 0;
  tg_status st = tg_read_file(lf->path, &buf, &len);
  if (st != TG_OK) return st;
  const char *end = buf + len;
  tg_csv_layout cl;
  tg_csv_line ln;
  int col[F_COUNT];
  tg_csv_field fs[MAX_FIELDS], sample[32];
  int ns = 0;
  if ((st = tg_csv_sniff(lf->path, buf, end, &cl)) != TG_OK) goto done;
  if (!cl.has_header) {
    st = tg_error(TG_ERR_FORMAT, "labels %s: the first line must be a header naming ts and label", lf->path);
    goto done;
  }
  if ((st = tg_csv_line_read(lf->path, cl.first, end, cl.first_no, &ln)) != TG_OK) goto done;
  if ((st = map_header(lf, &ln, cl.delim, col)) != TG_OK) goto done;
  const char *data = ln.next;
  int64_t data_no = ln.no + 1;
  for (const char *p = data; p < end && ns < 32; p = ln.next) { /* a sample of times settles their format */
    if ((st = tg_csv_line_read(lf->path, p, end, data_no + ns, &ln)) != TG_OK) goto done;
    if (tg_csv_blank(ln.p, ln.e)) continue;
    if (split(&ln, cl.delim, fs) > col[F_TS]) sample[ns++] = fs[col[F_TS]];
    else break;
  }
  tg_csv_timefmt fmt = {0};
  if (ns == 0 || !tg_csv_time_detect(sample, ns, INT64_MIN, &fmt)) {
    char q[64];
    st = ns ? tg_error(TG_ERR_FORMAT, "labels %s: the first label's time '%s' is not in a known format", lf->path,
                       tg_csv_quote(sample[0].p, sample[0].e, q, sizeof q))
            : tg_error(TG_ERR_FORMAT, "labels %s: no labels after the header", lf->path);
    goto done;
  }
  tg_csv_ids ids = {0};
  int64_t no = data_no;
  for (const char *p = data; p < end && st == TG_OK; p = ln.next, no++) {
    if ((st = tg_csv_line_read(lf->path, p, end, no, &ln)) != TG_OK) break;
    if (tg_csv_blank(ln.p, ln.e)) continue;
    int nf = split(&ln, cl.delim, fs);
    st = read_row(lf, bars, lay, &fmt, col, &ids, fs, nf, no);
  }
  tg_csv_ids_free(&ids);
done:
  tg_free(buf);
  return st;
}

/* Median interval between consecutive bars of each instrument (0 with fewer than two bars). */
static tg_status median_intervals(const tg_bars *bars, const tg_layout *lay, int64_t *med) {
  int64_t *d = tg_malloc((size_t)(lay->n + 1) * sizeof *d);
  if (!d) return tg_error(TG_ERR_NOMEM, "labels: out of memory");
  for (int j = 0; j < lay->k; j++) {
    int64_t m = lay->seg[j + 1] - lay->seg[j];
    for (int64_t p = 1; p < m; p++) d[p - 1] = bars->ts[lay->rows[lay->seg[j] + p]] - bars->ts[lay->rows[lay->seg[j] + p - 1]];
    if (m > 1) qsort(d, (size_t)(m - 1), sizeof *d, tg_cmp_i64);
    med[j] = m > 1 ? d[(m - 1) / 2] : 0;
  }
  tg_free(d);
  return TG_OK;
}

/* Last position in [lo, hi) whose bar has ts <= t, or lo - 1. */
static int64_t at_or_before(const tg_bars *b, const tg_layout *lay, int64_t lo, int64_t hi, int64_t t) {
  int64_t a = lo;
  while (a < hi) {
    int64_t mid = a + (hi - a) / 2;
    if (b->ts[lay->rows[mid]] <= t) a = mid + 1;
    else hi = mid;
  }
  return a - 1;
}

static int cmp_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* Joins the records to rows: cls holds the record's name index (-1: none), reach its end's bar, line the record. */
static tg_status join(const label_file *lf, const tg_bars *bars, const tg_layout *lay, const tg_target_opts *o,
                      tg_targets *out, int64_t *line, int64_t *joined) {
  int64_t *med = tg_malloc((size_t)lay->k * sizeof *med), before = 0, after = 0, dups = 0;
  tg_status st = med ? median_intervals(bars, lay, med) : tg_error(TG_ERR_NOMEM, "labels: out of memory");
  for (int64_t i = 0; i < lf->n && st == TG_OK; i++) {
    const label_rec *r = &lf->rec[i];
    int64_t p0 = lay->seg[r->inst], p1 = lay->seg[r->inst + 1];
    int64_t q = at_or_before(bars, lay, p0, p1, r->ts);
    if (q < p0) {
      before++;
      continue;
    }
    if (q == p1 - 1 && r->ts - bars->ts[lay->rows[q]] > med[r->inst]) {
      after++;
      continue;
    }
    int64_t row = lay->rows[q];
    int reach = r->end == INT64_MIN ? 0 : (int)(at_or_before(bars, lay, p0, p1, r->end) - q);
    char t[TG_TIME_TEXT];
    if (out->cls[row] >= 0 && out->cls[row] != r->name)
      st = tg_error(TG_ERR_FORMAT, "labels %s: lines %lld ('%s') and %lld ('%s') label the same bar (%s) "
                    "differently", lf->path, (long long)line[row], lf->names[out->cls[row]], (long long)r->line,
                    lf->names[r->name], tg_format_time(bars->ts[row], t, sizeof t));
    else if (out->cls[row] >= 0) dups++;
    else (*joined)++;
    out->cls[row] = r->name;
    line[row] = r->line;
    if (reach > out->reach[row]) out->reach[row] = reach;
  }
  if (st == TG_OK && o->warn && (before || after || dups))
    fprintf(o->warn, "labels %s: %lld of %lld labels dropped (%lld before their instrument's first bar, %lld more than "
            "one bar interval after its last); %lld repeated on a bar counted once\n", lf->path,
            (long long)(before + after), (long long)lf->n, (long long)before, (long long)after, (long long)dups);
  tg_free(med);
  return st;
}

tg_status tg_targets_labels(const tg_bars *bars, const tg_layout *lay, const tg_target_opts *o, tg_targets *out) {
  label_file lf = {.path = o->labels_path, .tz = o->tz};
  int64_t *line = tg_malloc((size_t)(bars->n + 1) * sizeof *line), joined = 0;
  tg_status st = line ? read_labels(&lf, bars, lay) : tg_error(TG_ERR_NOMEM, "labels: out of memory");
  for (int64_t r = 0; r < bars->n; r++) {
    out->cls[r] = -1;
    out->reach[r] = 0;
    for (int i = 0; i < out->nh; i++) out->ret[r * out->nh + i] = NAN;
  }
  if (st == TG_OK) st = join(&lf, bars, lay, o, out, line, &joined);
  if (st == TG_OK && joined == 0)
    st = tg_error(TG_ERR_INVALID, "labels %s: none of its %lld labels falls on a bar of the data", lf.path,
                  (long long)lf.n);
  if (st == TG_OK) { /* the classes sorted bytewise, with "none" for the bars left unlabelled */
    int none = joined < bars->n, C = lf.n_names;
    char (*sorted)[TG_NAME_MAX] = tg_malloc((size_t)(C + 1) * sizeof *sorted);
    int map[MAX_LABEL_CLASSES + 1];
    if (!sorted) st = tg_error(TG_ERR_NOMEM, "labels: out of memory");
    for (int i = 0; i < C && sorted; i++) {
      memcpy(sorted[i], lf.names[i], TG_NAME_MAX);
      if (strcmp(lf.names[i], "none") == 0) none = 0;
    }
    if (sorted && none) strcpy(sorted[C++], "none");
    if (sorted) qsort(sorted, (size_t)C, TG_NAME_MAX, cmp_name);
    for (int i = 0; sorted && i <= lf.n_names; i++) {
      const char *name = i < lf.n_names ? lf.names[i] : "none";
      char(*hit)[TG_NAME_MAX] = bsearch(name, sorted, (size_t)C, TG_NAME_MAX, cmp_name);
      map[i] = hit ? (int)(hit - sorted) : -1;
    }
    if (sorted && C < 2)
      st = tg_error(TG_ERR_INVALID, "labels %s: every bar has the class '%s'; a classifier needs two or more", lf.path,
                    sorted[0]);
    if (st == TG_OK) {
      for (int64_t r = 0; r < bars->n; r++) out->cls[r] = map[out->cls[r] >= 0 ? out->cls[r] : lf.n_names];
      st = tg_targets_set_classes(out, (const char(*)[TG_NAME_MAX])sorted, C);
    }
    tg_free(sorted);
  }
  label_file_free(&lf);
  tg_free(line);
  return st;
}
