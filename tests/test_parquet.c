/* Parquet reader: committed seed files (values from their formulas), the conformance files of
 * parquet-testing, the OHLCV files against the Lean CSVs they were made from, and a dump mode
 * (TG_DUMP_PARQUET=dir) for tools/crosscheck_parquet.py. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "data/readers/parquet/parquet.h"
#include "data/readers/timeconv.h"
#include "support/check.h"
#include "support/files.h"

/* ---------------------------------------------------------------- helpers */

static int is_dir(const char *p) {
  struct stat sb;
  return p && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static char g_src[2048] = "..", g_shared[2048] = "../../shared/data";

typedef struct pq {
  tg_pq_file f;
  unsigned char *buf;
  size_t len;
  char path[4096];
} pq;

/* Opens dir/name; returns 0 (and counts a failure) when it cannot. */
static int pq_open(pq *p, const char *dir, const char *name) {
  snprintf(p->path, sizeof p->path, "%s/%s", dir, name);
  p->buf = tg_test_read_file(p->path, &p->len);
  CHECK_MSG(p->buf != NULL, "cannot read %s", p->path);
  if (!p->buf) return 0;
  tg_status st = tg_pq_open(&p->f, p->path, p->buf, p->len);
  CHECK_MSG(st == TG_OK, "%s: %s", p->path, tg_last_error());
  if (st != TG_OK) {
    free(p->buf);
    return 0;
  }
  return 1;
}

static void pq_close(pq *p) {
  tg_pq_close(&p->f);
  free(p->buf);
}

/* Column `name` as doubles (NaN for nulls) into a fresh array; valid optional. NULL on failure. */
static double *col_f64(pq *p, const char *name, uint8_t **valid, int64_t *nulls) {
  int c = tg_pq_find(&p->f, name);
  CHECK_MSG(c >= 0, "%s: no column %s", p->path, name);
  if (c < 0) return NULL;
  double *v = malloc(sizeof(double) * (size_t)(p->f.num_rows + 1));
  uint8_t *ok = malloc((size_t)p->f.num_rows + 1);
  int64_t nn = 0;
  tg_status st = tg_pq_read_f64(&p->f, c, v, ok, &nn);
  CHECK_MSG(st == TG_OK, "%s: %s", name, tg_last_error());
  if (st != TG_OK) {
    free(v);
    free(ok);
    return NULL;
  }
  if (valid) *valid = ok;
  else free(ok);
  if (nulls) *nulls = nn;
  return v;
}

static int64_t *col_i64(pq *p, const char *name, uint8_t **valid, int64_t *nulls) {
  int c = tg_pq_find(&p->f, name);
  CHECK_MSG(c >= 0, "%s: no column %s", p->path, name);
  if (c < 0) return NULL;
  int64_t *v = malloc(sizeof(int64_t) * (size_t)(p->f.num_rows + 1));
  uint8_t *ok = malloc((size_t)p->f.num_rows + 1);
  int64_t nn = 0;
  tg_status st = tg_pq_read_i64(&p->f, c, v, ok, &nn);
  CHECK_MSG(st == TG_OK, "%s: %s", name, tg_last_error());
  if (st != TG_OK) {
    free(v);
    free(ok);
    return NULL;
  }
  if (valid) *valid = ok;
  else free(ok);
  if (nulls) *nulls = nn;
  return v;
}

/* Status of reading column name (as doubles, or as int64 when as_int), with the message kept. */
static tg_status col_status(pq *p, const char *name, int as_int) {
  int c = tg_pq_find(&p->f, name);
  if (c < 0) return TG_ERR_INVALID;
  void *v = malloc(8 * (size_t)(p->f.num_rows + 1));
  tg_status st = as_int ? tg_pq_read_i64(&p->f, c, v, NULL, NULL) : tg_pq_read_f64(&p->f, c, v, NULL, NULL);
  free(v);
  return st;
}

static tg_status parse_file(const char *dir, const char *name, const tg_read_opts *o, tg_bars *b) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  size_t len;
  unsigned char *buf = tg_test_read_file(path, &len);
  tg_bars_init(b);
  if (!buf) return tg_error(TG_ERR_IO, "cannot read %s", path);
  tg_status st = tg_parquet_parse(path, buf, len, o, b);
  free(buf);
  if (st != TG_OK) tg_bars_free(b); /* the caller owns what a failed parse reserved */
  return st;
}

/* ---------------------------------------------------------------- seed files (repository) */

static void test_seed_bars(const char *dir) {
  tg_bars b;
  CHECK_OK(parse_file(dir, "bars_v1_snappy.parquet", NULL, &b));
  CHECK(b.n == 50 && strcmp(b.format, "parquet") == 0);
  int bad = 0;
  for (int64_t i = 0; i < b.n; i++) {
    double o = 100 + 0.25 * (double)(i % 8);
    bad += b.ts[i] != (1600000000000000LL + i * 60000000LL) * 1000 || b.open[i] != o || b.high[i] != o + 1 ||
           b.low[i] != o - 1 || b.close[i] != 100.5 + 0.25 * (double)(i % 5) || b.volume[i] != (double)(i * 10);
  }
  CHECK_MSG(bad == 0, "%d rows differ", bad);
  tg_bars_free(&b);

  /* the column map by name, a price scale, and appending to a series that has bars */
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  o.columns = " close = Open , open=Close,volume=4";
  o.price_scale = 2;
  CHECK_OK(parse_file(dir, "bars_v1_snappy.parquet", &o, &b));
  CHECK(b.n == 50 && b.close[9] == 2 * 100.25 && b.open[9] == 2 * 101.5 && b.volume[9] == 101.5);
  tg_bars_free(&b);
  o.columns = "bid=Open";
  CHECK_STATUS(parse_file(dir, "bars_v1_snappy.parquet", &o, &b), TG_ERR_INVALID);
  o.columns = "close=Nope";
  CHECK_STATUS(parse_file(dir, "bars_v1_snappy.parquet", &o, &b), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "Nope") && strstr(tg_last_error(), "Volume INT64"), "%s", tg_last_error());
  o.columns = "close=ts"; /* a timestamp read as a price is a number too; only the names matter here */
  CHECK_OK(parse_file(dir, "bars_v1_snappy.parquet", &o, &b));
  tg_bars_free(&b);

  /* nulls: an error naming column and row by default, NaN on request; naive times in a zone */
  CHECK_STATUS(parse_file(dir, "bars_v2_zstd_nulls.parquet", NULL, &b), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "'close'") && strstr(tg_last_error(), "row 3"), "%s", tg_last_error());
  memset(&o, 0, sizeof o);
  o.nulls = TG_NULLS_NAN;
  CHECK_OK(parse_file(dir, "bars_v2_zstd_nulls.parquet", &o, &b));
  CHECK(b.n == 40);
  int64_t base = tg_days_from_civil(2021, 3, 13) * 86400 + 20 * 3600; /* naive local seconds of row 0 */
  bad = 0;
  for (int64_t i = 0; i < b.n; i++) {
    bad += b.ts[i] != (base + i * 3600) * TG_NS_PER_S || b.open[i] != 50 + 0.5 * (double)i ||
           b.high[i] != 51 + 0.5 * (double)i || b.low[i] != 49 + 0.5 * (double)i || b.volume[i] != 1000 + (double)i;
    bad += i % 7 == 3 ? !isnan(b.close[i]) : b.close[i] != 50.25 + 0.5 * (double)i;
  }
  CHECK_MSG(bad == 0, "%d rows differ (UTC reading)", bad);
  tg_bars_free(&b);
  if (tg_tz_check("America/New_York") == TG_OK) {
    o.tz = "America/New_York";
    CHECK_OK(parse_file(dir, "bars_v2_zstd_nulls.parquet", &o, &b));
    bad = 0;
    for (int64_t i = 0; i < b.n; i++) {
      int64_t utc = 0;
      CHECK_OK(tg_tz_local_to_utc("America/New_York", base + i * 3600, &utc));
      bad += b.ts[i] != utc * TG_NS_PER_S;
    }
    CHECK_MSG(bad == 0, "%d times differ across the DST change", bad);
    CHECK(b.ts[0] == (base + 5 * 3600) * TG_NS_PER_S); /* 20:00 EST is 01:00 UTC */
    tg_bars_free(&b);
    o.tz = "Mars/Olympus";
    CHECK_STATUS(parse_file(dir, "bars_v2_zstd_nulls.parquet", &o, &b), TG_ERR_INVALID);
  }
  /* an INT32 without a DATE annotation is no time; a ts with a type tickgrad cannot read as time either */
  o.tz = NULL;
  o.columns = "ts=volume";
  CHECK_STATUS(parse_file(dir, "bars_v2_zstd_nulls.parquet", &o, &b), TG_ERR_UNSUPPORTED);
  CHECK_MSG(strstr(tg_last_error(), "volume INT32"), "%s", tg_last_error());
  o.columns = NULL;
  /* UTC-adjusted timestamps ignore the zone */
  o.tz = "America/New_York";
  CHECK_OK(parse_file(dir, "bars_v1_snappy.parquet", &o, &b));
  CHECK(b.n == 50 && b.ts[0] == 1600000000000000LL * 1000);
  tg_bars_free(&b);

  /* a file without bar columns names what it has */
  CHECK_STATUS(parse_file(dir, "tiny.parquet", NULL, &b), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "'ts'") && strstr(tg_last_error(), "x INT64 optional"), "%s", tg_last_error());
  /* an integer column named by the map is an epoch count in a unit read from its magnitude */
  o.tz = NULL;
  o.columns = "ts=x,open=x,high=x,low=x,close=x";
  CHECK_OK(parse_file(dir, "tiny.parquet", &o, &b));
  CHECK(b.n == 5 && b.ts[0] == 1 && b.ts[3] == 1LL << 40 && isnan(b.volume[0]) && isnan(b.volume[4]) && b.close[1] == -2);
  tg_bars_free(&b);

  /* a failed parse into a series that holds bars leaves them as they were */
  char path[4096];
  snprintf(path, sizeof path, "%s/bars_v2_zstd_nulls.parquet", dir);
  size_t len = 0;
  unsigned char *buf = tg_test_read_file(path, &len);
  CHECK(buf != NULL);
  if (buf) {
    tg_bars acc;
    tg_bars_init(&acc);
    for (int i = 0; i < 3; i++) CHECK_OK(tg_bars_push(&acc, i, 1, 2, 0.5, 1.5, 10, 0));
    CHECK_STATUS(tg_parquet_parse(path, buf, len, NULL, &acc), TG_ERR_FORMAT); /* a null close */
    CHECK(acc.n == 3 && acc.instrument == NULL && acc.close[2] == 1.5 && acc.volume[2] == 10 && !acc.format[0]);
    memset(&o, 0, sizeof o);
    o.nulls = TG_NULLS_NAN;
    CHECK_OK(tg_parquet_parse(path, buf, len, &o, &acc));
    CHECK(acc.n == 43 && acc.close[2] == 1.5 && acc.volume[3] == 1000);
    tg_bars_free(&acc);
    free(buf);
  }
}

static void test_seed_types(const char *dir) {
  pq p;
  if (!pq_open(&p, dir, "types_gzip_crc.parquet")) return;
  CHECK(p.f.num_rows == 30 && p.f.ncols == 13);
  int64_t n = p.f.num_rows, nulls = -1;
  int64_t *b = col_i64(&p, "b", NULL, NULL), *i32 = col_i64(&p, "i32", NULL, NULL), *i64 = col_i64(&p, "i64", NULL, NULL);
  int64_t *u32 = col_i64(&p, "u32", NULL, NULL), *u64 = col_i64(&p, "u64", NULL, NULL), *d32 = col_i64(&p, "d32", NULL, NULL);
  int64_t *tns = col_i64(&p, "tns", NULL, NULL), *dec_raw = col_i64(&p, "dec", NULL, NULL);
  double *f32 = col_f64(&p, "f32", NULL, NULL), *f64 = col_f64(&p, "f64", NULL, NULL), *u64d = col_f64(&p, "u64", NULL, NULL);
  double *dec = col_f64(&p, "dec", NULL, NULL), *h = col_f64(&p, "h", NULL, NULL), *u32d = col_f64(&p, "u32", NULL, NULL);
  uint8_t *valid = NULL;
  int64_t *opt = col_i64(&p, "opt", &valid, &nulls);
  if (b && i32 && i64 && u32 && u64 && d32 && tns && dec_raw && f32 && f64 && u64d && dec && h && u32d && opt) {
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
      bad += b[i] != (i % 3 == 0) || i32[i] != i * 1000 - 15000 || i64[i] != i * 1000000000000LL - 3;
      bad += u32[i] != 4000000000LL + i || (uint64_t)u64[i] != (1ULL << 63) + (uint64_t)i || d32[i] != 18000 + i;
      bad += tns[i] != 1600000000123456789LL + i || dec_raw[i] != i * 125 - 1000;
      bad += f32[i] != (double)(float)(i * 0.5 - 3) || f64[i] != (double)i * 0.1 || h[i] != (double)i * 0.5;
      bad += u64d[i] != (double)((1ULL << 63) + (uint64_t)i) || u32d[i] != 4000000000.0 + (double)i;
      bad += dec[i] != (double)(i * 125 - 1000) / 100;
      bad += i % 4 == 0 ? (valid[i] != 0 || opt[i] != 0) : (valid[i] != 1 || opt[i] != i * 3);
    }
    CHECK_MSG(bad == 0, "%d values differ", bad);
    CHECK(nulls == 8);
  }
  free(b), free(i32), free(i64), free(u32), free(u64), free(d32), free(tns), free(dec_raw), free(f32), free(f64);
  free(u64d), free(dec), free(h), free(u32d), free(opt), free(valid);
  CHECK_STATUS(col_status(&p, "s", 0), TG_ERR_UNSUPPORTED);
  CHECK_MSG(strstr(tg_last_error(), "'s'") && strstr(tg_last_error(), "BYTE_ARRAY"), "%s", tg_last_error());
  CHECK_STATUS(col_status(&p, "f64", 1), TG_ERR_INVALID);
  char d[256];
  tg_pq_describe(&p.f.cols[tg_pq_find(&p.f, "tns")], d, sizeof d);
  CHECK_MSG(strcmp(d, "tns INT64 TIMESTAMP(NANOS,UTC) optional") == 0, "%s", d);
  tg_pq_describe(&p.f.cols[tg_pq_find(&p.f, "dec")], d, sizeof d);
  CHECK_MSG(strcmp(d, "dec FIXED_LEN_BYTE_ARRAY(8) DECIMAL(18,2) optional") == 0, "%s", d);

  /* the file has page CRCs: a flipped byte inside a page is named by column, row group and page */
  unsigned char *copy = malloc(p.len);
  memcpy(copy, p.buf, p.len);
  tg_pq_file g;
  const tg_pq_chunk *k = &p.f.rgs[0].chunks[tg_pq_find(&p.f, "i64")];
  copy[k->start + k->size - 3] ^= 0x40; /* in the last page's data */
  CHECK_OK(tg_pq_open(&g, "flipped.parquet", copy, p.len));
  int64_t *v = malloc(8 * (size_t)n);
  CHECK_STATUS(tg_pq_read_i64(&g, tg_pq_find(&g, "i64"), v, NULL, NULL), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "CRC") && strstr(tg_last_error(), "column 'i64', row group 0, page"), "%s",
            tg_last_error());
  CHECK_OK(tg_pq_read_i64(&g, tg_pq_find(&g, "i32"), v, NULL, NULL)); /* other columns still read */
  free(v);
  tg_pq_close(&g);
  free(copy);
  pq_close(&p);
}

static void test_seed_encodings(const char *dir) {
  pq p;
  if (!pq_open(&p, dir, "delta_split_v2.parquet")) return;
  int64_t n = p.f.num_rows;
  CHECK(n == 300);
  int64_t *d32 = col_i64(&p, "d32", NULL, NULL), *d64 = col_i64(&p, "d64", NULL, NULL);
  int64_t *si32 = col_i64(&p, "si32", NULL, NULL), *si64 = col_i64(&p, "si64", NULL, NULL);
  int64_t *flag = col_i64(&p, "flag", NULL, NULL), *idec = col_i64(&p, "idec", NULL, NULL);
  double *sf = col_f64(&p, "sf", NULL, NULL), *sd = col_f64(&p, "sd", NULL, NULL), *idecd = col_f64(&p, "idec", NULL, NULL);
  if (d32 && d64 && si32 && si64 && flag && idec && sf && sd && idecd) {
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
      bad += d32[i] != (i * i * 7919) % 100003 - 50000;
      bad += d64[i] != i * i * i * 1000003 - (1LL << 40) + (i == 150 ? 1LL << 62 : 0);
      bad += si32[i] != i * 77 - 9000 || si64[i] != i * 100000000000LL - 7 || flag[i] != ((i / 5) % 2 == 0);
      bad += sf[i] != (double)(float)sin((double)i) || sd[i] != (double)i / 7;
      bad += idec[i] != i * 3 - 100 || idecd[i] != (double)(i * 3 - 100) / 10;
    }
    CHECK_MSG(bad == 0, "%d values differ", bad);
  }
  free(d32), free(d64), free(si32), free(si64), free(flag), free(idec), free(sf), free(sd), free(idecd);
  pq_close(&p);
}

/* Extra columns: every further column kept by name (strings as categories, nulls missing), the rest named in a
 * warning; a pyarrow file with dictionary and PLAIN strings over three row groups, and the many-types file. */
static void test_seed_extras(const char *dir) {
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  FILE *warn = tmpfile();
  o.warn = warn;
  tg_bars b;
  CHECK_OK(parse_file(dir, "bars_extra_v2.parquet", &o, &b));
  CHECK(b.n == 60 && b.n_cols == 6);
  const tg_bar_column *memo = tg_bars_column(&b, "memo"), *sym = tg_bars_column(&b, "sym");
  CHECK(memo && memo->kind == TG_COLUMN_CATEGORY && sym && sym->kind == TG_COLUMN_CATEGORY);
  if (memo && sym && b.n == 60) { /* DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY (prefixes shared with the value before) */
    int bad = 0;
    for (int64_t i = 0; i < b.n; i++) {
      char want[16];
      snprintf(want, sizeof want, "m%d", (int)(i * i % 11));
      bad += strcmp(tg_categories_name(&memo->cats, memo->codes[i]), want) != 0;
      snprintf(want, sizeof want, "SYM%d%.*s", (int)(i % 5), (int)(i % 3), "xx");
      bad += i % 9 == 4 ? sym->codes[i] != TG_CATEGORY_MISSING : strcmp(tg_categories_name(&sym->cats, sym->codes[i]), want) != 0;
    }
    CHECK_MSG(bad == 0, "%d delta-encoded strings differ", bad);
  }
  const tg_bar_column *sec = tg_bars_column(&b, "sector"), *note = tg_bars_column(&b, "note");
  const tg_bar_column *score = tg_bars_column(&b, "score"), *count = tg_bars_column(&b, "count");
  CHECK(sec && sec->kind == TG_COLUMN_CATEGORY && note && note->kind == TG_COLUMN_CATEGORY);
  CHECK(score && score->kind == TG_COLUMN_NUMERIC && count && count->kind == TG_COLUMN_NUMERIC);
  if (sec && note && score && count && b.n == 60) {
    static const char *const sectors[4] = {"tech", "energy", "banks", "\xc3\xa9nergie"};
    int bad = 0;
    for (int64_t i = 0; i < b.n; i++) {
      char want[16];
      snprintf(want, sizeof want, "n%d", (int)(i % 7));
      bad += b.ts[i] != (1700000000000000LL + i * 3600000000LL) * 1000 || b.close[i] != 10.25 + 0.5 * (double)i;
      bad += i % 10 == 7 ? sec->codes[i] != TG_CATEGORY_MISSING
                         : strcmp(tg_categories_name(&sec->cats, sec->codes[i]), sectors[(i * 7) % 4]) != 0;
      bad += strcmp(tg_categories_name(&note->cats, note->codes[i]), want) != 0;
      bad += i % 6 == 5 ? !isnan(score->values[i]) : score->values[i] != 0.5 * (double)i - 3;
      bad += count->values[i] != (double)(i * 3 - 20);
    }
    CHECK_MSG(bad == 0, "%d extra values differ", bad);
    CHECK(sec->cats.n == 4 && note->cats.n == 7); /* the row groups' dictionaries merged by name */
  }
  tg_bars_free(&b);
  char msg[2048] = {0};
  rewind(warn);
  CHECK(fread(msg, 1, sizeof msg - 1, warn) > 0);
  CHECK_MSG(strstr(msg, "bars_extra_v2.parquet: column tags.list.element INT32 optional is not kept") &&
                strstr(msg, "a repeated (list) column") && strstr(msg, "column day INT32 DATE optional is not kept") &&
                strstr(msg, "a time column"),
            "%s", msg);
  fclose(warn);
  o.warn = NULL;

  /* a column the series holds with the other kind: an error naming it, the series as it was */
  tg_bars acc;
  tg_bars_init(&acc);
  CHECK_OK(tg_bars_add_column(&acc, "count", TG_COLUMN_CATEGORY));
  char path[4096];
  snprintf(path, sizeof path, "%s/bars_extra_v2.parquet", dir);
  size_t len = 0;
  unsigned char *buf = tg_test_read_file(path, &len);
  if (buf) {
    CHECK_STATUS(tg_parquet_parse(path, buf, len, NULL, &acc), TG_ERR_FORMAT);
    CHECK_MSG(strstr(tg_last_error(), "'count'"), "%s", tg_last_error());
    CHECK(acc.n == 0 && acc.n_cols == 1);
    free(buf);
  }
  tg_bars_free(&acc);

  /* every type the column reader knows, the bar fields named by the map */
  o.columns = "ts=tns,open=f64,high=f64,low=f64,close=f64";
  CHECK_OK(parse_file(dir, "types_gzip_crc.parquet", &o, &b));
  CHECK_MSG(b.n == 30 && b.n_cols == 10, "%lld bars, %d columns", (long long)b.n, b.n_cols);
  const tg_bar_column *str = tg_bars_column(&b, "s"), *opt = tg_bars_column(&b, "opt"), *u64 = tg_bars_column(&b, "u64");
  const tg_bar_column *flag = tg_bars_column(&b, "b"), *dec = tg_bars_column(&b, "dec");
  CHECK(str && str->kind == TG_COLUMN_CATEGORY && opt && u64 && flag && dec && !tg_bars_column(&b, "d32"));
  if (str && opt && u64 && flag && dec && b.n == 30) {
    int bad = 0;
    for (int64_t i = 0; i < b.n; i++) {
      char want[16];
      snprintf(want, sizeof want, "%d", (int)i);
      bad += strcmp(tg_categories_name(&str->cats, str->codes[i]), want) != 0;
      bad += i % 4 == 0 ? !isnan(opt->values[i]) : opt->values[i] != (double)(i * 3);
      bad += u64->values[i] != (double)((1ULL << 63) + (uint64_t)i) || flag->values[i] != (i % 3 == 0);
      bad += dec->values[i] != (double)(i * 125 - 1000) / 100;
    }
    CHECK_MSG(bad == 0, "%d extra values differ", bad);
  }
  tg_bars_free(&b);
}

/* Parses bytes as bars and reads every column through the column API; returns how many of those
 * calls succeeded, and counts a failure for any status other than the expected refusals. */
static int exercise(const unsigned char *b, size_t len, const char *what, size_t at) {
  int ok = 0;
  tg_bars bars;
  tg_bars_init(&bars);
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  o.nulls = TG_NULLS_NAN;
  tg_status st = tg_parquet_parse("x.parquet", b, len, &o, &bars);
  ok += st == TG_OK;
  CHECK_MSG(st == TG_OK || st == TG_ERR_FORMAT || st == TG_ERR_UNSUPPORTED, "%s at %zu: %s", what, at, tg_last_error());
  tg_bars_free(&bars);
  tg_pq_file f;
  if (tg_pq_open(&f, "x.parquet", b, len) != TG_OK) return ok;
  for (int c = 0; c < f.ncols; c++) {
    tg_pq_kind k;
    void *v = malloc(8 * (size_t)(f.num_rows + 1));
    st = tg_pq_column_kind(&f, c, &k);
    if (st == TG_OK)
      st = k.lane == TG_PQ_LANE_F64 ? tg_pq_read_f64(&f, c, v, NULL, NULL) : tg_pq_read_i64(&f, c, v, NULL, NULL);
    tg_categories cats;
    memset(&cats, 0, sizeof cats);
    if (st != TG_OK && f.cols[c].physical == TG_PQ_BYTE_ARRAY && tg_pq_string_kind(&f, c, &k) == TG_OK) st = tg_pq_read_codes(&f, c, &cats, v, NULL);
    tg_categories_free(&cats);
    ok += st == TG_OK;
    CHECK_MSG(st == TG_OK || st == TG_ERR_FORMAT || st == TG_ERR_UNSUPPORTED, "%s at %zu: %s", what, at, tg_last_error());
    free(v);
  }
  tg_pq_close(&f);
  return ok;
}

/* Every prefix of a file is refused; every single-byte change of it reads or is refused cleanly
 * (under ASan this is where an out-of-bounds read would show). */
static void test_truncation_and_flips(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  size_t len;
  unsigned char *full = tg_test_read_file(path, &len);
  CHECK(full != NULL);
  if (!full) return;
  int ok_prefixes = 0, flips_ok = 0;
  for (size_t cut = 0; cut < len; cut++) {
    unsigned char *b = malloc(cut ? cut : 1); /* exact size, so ASan sees any overread */
    memcpy(b, full, cut);
    ok_prefixes += exercise(b, cut, "prefix", cut);
    free(b);
  }
  CHECK_MSG(ok_prefixes == 0, "%d truncated copies of %s read as valid", ok_prefixes, name);
  static const unsigned char deltas[] = {0x01, 0x80, 0xff, 0x7f};
  for (size_t at = 0; at < len; at++) {
    unsigned char *b = malloc(len);
    memcpy(b, full, len);
    b[at] ^= deltas[at % 4];
    flips_ok += exercise(b, len, "flip", at) > 0;
    free(b);
  }
  printf("%s: all %zu prefixes refused; of %zu one-byte changes %d still read (some columns)\n", name, len, len, flips_ok);
  free(full);
}

/* ---------------------------------------------------------------- hand-made files */

/* A minimal thrift compact writer for crafting metadata the writers never produce. */
typedef struct wbuf {
  unsigned char b[4096];
  size_t n;
  int last[16], depth;
} wbuf;
static void w_byte(wbuf *w, unsigned v) { w->b[w->n++] = (unsigned char)v; }
static void w_var(wbuf *w, uint64_t v) {
  while (v >= 0x80) {
    w_byte(w, (unsigned)(v & 0x7f) | 0x80);
    v >>= 7;
  }
  w_byte(w, (unsigned)v);
}
static void w_field(wbuf *w, int id, int type) {
  int d = id - w->last[w->depth];
  if (d > 0 && d < 16) w_byte(w, (unsigned)(d << 4 | type));
  else {
    w_byte(w, (unsigned)type);
    w_var(w, (uint64_t)(((int64_t)id << 1) ^ ((int64_t)id >> 63)));
  }
  w->last[w->depth] = id;
}
static void w_int(wbuf *w, int id, int64_t v) {
  w_field(w, id, TG_TT_I64);
  w_var(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
static void w_i32(wbuf *w, int id, int64_t v) {
  w_field(w, id, TG_TT_I32);
  w_var(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
static void w_str(wbuf *w, int id, const char *s) {
  w_field(w, id, TG_TT_BINARY);
  w_var(w, strlen(s));
  memcpy(w->b + w->n, s, strlen(s));
  w->n += strlen(s);
}
static void w_begin(wbuf *w, int id) { /* id < 0: a list element */
  if (id >= 0) w_field(w, id, TG_TT_STRUCT);
  w->last[++w->depth] = 0;
}
static void w_end(wbuf *w) {
  w_byte(w, 0);
  w->depth--;
}
static void w_list(wbuf *w, int id, int elem, unsigned n) {
  w_field(w, id, TG_TT_LIST);
  if (n < 15) w_byte(w, n << 4 | (unsigned)elem);
  else {
    w_byte(w, 0xf0 | (unsigned)elem);
    w_var(w, n);
  }
}

typedef struct craft {
  int64_t rows;          /* FileMetaData and row group num_rows */
  int32_t page_values;   /* the data page's num_values */
  int32_t usize_extra;   /* added to the uncompressed size */
  int codec;
  int encoding;          /* of the values */
  int crc;               /* 0 none, 1 right, 2 wrong */
  int nest;              /* wrap the leaf in this many optional groups */
  int dict_index;        /* RLE_DICTIONARY: the single index used */
} craft;

/* One INT64 column "v" with values 10, 20, 30 (rows 3) unless the craft says otherwise. */
static size_t make_file(const craft *c, unsigned char *out) {
  unsigned char data[64];
  size_t dn = 0;
  int64_t vals[3] = {10, 20, 30};
  wbuf page = {.n = 0};
  unsigned char body[64];
  size_t bn = 0;
  if (c->encoding == TG_PQ_RLE_DICTIONARY) { /* dictionary page of 3 values, data: width 2, run of 3 */
    for (int i = 0; i < 3; i++) memcpy(data + 8 * i, &vals[i], 8);
    dn = 24;
    body[bn++] = 2;
    body[bn++] = 3 << 1;
    body[bn++] = (unsigned char)c->dict_index;
  } else {
    for (int i = 0; i < 3; i++) memcpy(body + 8 * i, &vals[i], 8);
    bn = 24;
  }
  size_t n = 0;
  memcpy(out, "PAR1", 4);
  n = 4;
  int64_t chunk_start = 4;
  if (dn) {
    w_begin(&page, -1);
    w_i32(&page, 1, TG_PQ_PAGE_DICTIONARY);
    w_i32(&page, 2, (int64_t)dn);
    w_i32(&page, 3, (int64_t)dn);
    w_begin(&page, 7);
    w_i32(&page, 1, 3);
    w_i32(&page, 2, TG_PQ_PLAIN);
    w_end(&page);
    w_end(&page);
    memcpy(out + n, page.b, page.n);
    n += page.n;
    memcpy(out + n, data, dn);
    n += dn;
    page.n = 0;
  }
  int64_t data_page = (int64_t)n;
  w_begin(&page, -1);
  w_i32(&page, 1, TG_PQ_PAGE_DATA);
  w_i32(&page, 2, (int64_t)bn + c->usize_extra);
  w_i32(&page, 3, (int64_t)bn);
  if (c->crc) {
    uint32_t crc = 0xffffffffu; /* zlib's crc32, spelled out */
    for (size_t i = 0; i < bn; i++) {
      crc ^= body[i];
      for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
    }
    crc = ~crc ^ (c->crc == 2 ? 1u : 0u);
    w_i32(&page, 4, (int32_t)crc);
  }
  w_begin(&page, 5);
  w_i32(&page, 1, c->page_values);
  w_i32(&page, 2, c->encoding);
  w_i32(&page, 3, TG_PQ_RLE);
  w_i32(&page, 4, TG_PQ_RLE);
  w_end(&page);
  w_end(&page);
  memcpy(out + n, page.b, page.n);
  n += page.n;
  memcpy(out + n, body, bn);
  n += bn;
  int64_t chunk_size = (int64_t)n - chunk_start;

  wbuf m = {.n = 0};
  w_begin(&m, -1);
  w_i32(&m, 1, 1);
  w_list(&m, 2, TG_TT_STRUCT, (unsigned)(2 + c->nest));
  w_begin(&m, -1);
  w_str(&m, 4, "schema");
  w_i32(&m, 5, 1);
  w_end(&m);
  for (int g = 0; g < c->nest; g++) {
    w_begin(&m, -1);
    w_i32(&m, 3, TG_PQ_OPTIONAL);
    w_str(&m, 4, "g");
    w_i32(&m, 5, 1);
    w_end(&m);
  }
  w_begin(&m, -1);
  w_i32(&m, 1, TG_PQ_INT64);
  w_i32(&m, 3, TG_PQ_REQUIRED);
  w_str(&m, 4, "v");
  w_end(&m);
  w_int(&m, 3, c->rows);
  w_list(&m, 4, TG_TT_STRUCT, 1);
  w_begin(&m, -1);
  w_list(&m, 1, TG_TT_STRUCT, 1);
  w_begin(&m, -1);
  w_int(&m, 2, chunk_start);
  w_begin(&m, 3);
  w_i32(&m, 1, TG_PQ_INT64);
  w_list(&m, 2, TG_TT_I32, 1);
  w_byte(&m, 0);
  w_list(&m, 3, TG_TT_BINARY, 1);
  w_var(&m, 1);
  w_byte(&m, 'v');
  w_i32(&m, 4, c->codec);
  w_int(&m, 5, c->rows);
  w_int(&m, 6, chunk_size);
  w_int(&m, 7, chunk_size);
  w_int(&m, 9, data_page);
  if (dn) w_int(&m, 11, chunk_start);
  w_end(&m);
  w_end(&m);
  w_int(&m, 2, chunk_size);
  w_int(&m, 3, c->rows);
  w_end(&m);
  w_end(&m);
  memcpy(out + n, m.b, m.n);
  n += m.n;
  uint32_t ml = (uint32_t)m.n;
  memcpy(out + n, &ml, 4);
  memcpy(out + n + 4, "PAR1", 4);
  return n + 8;
}

static tg_status read_crafted(const craft *c, int64_t *vals, int64_t *rows) {
  unsigned char buf[8192];
  size_t n = make_file(c, buf);
  unsigned char *exact = malloc(n);
  memcpy(exact, buf, n);
  tg_pq_file f;
  tg_status st = tg_pq_open(&f, "crafted.parquet", exact, n);
  if (st == TG_OK) {
    *rows = f.num_rows;
    int64_t *v = malloc(sizeof(int64_t) * (size_t)(f.num_rows + 1));
    if (!v) st = TG_ERR_NOMEM;
    else st = tg_pq_read_i64(&f, 0, v, NULL, NULL);
    if (st == TG_OK) memcpy(vals, v, sizeof(int64_t) * (size_t)(f.num_rows < 3 ? f.num_rows : 3));
    free(v);
    tg_pq_close(&f);
  }
  free(exact);
  return st;
}

static void test_crafted(void) {
  craft base = {.rows = 3, .page_values = 3, .codec = TG_PQ_UNCOMPRESSED, .encoding = TG_PQ_PLAIN};
  int64_t v[3] = {0}, rows = 0;
  CHECK_OK(read_crafted(&base, v, &rows));
  CHECK(rows == 3 && v[0] == 10 && v[1] == 20 && v[2] == 30);
  craft c = base;
  c.crc = 1;
  CHECK_OK(read_crafted(&c, v, &rows));
  c.crc = 2;
  CHECK_STATUS(read_crafted(&c, v, &rows), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "CRC mismatch") && strstr(tg_last_error(), "column 'v', row group 0, page 0"), "%s",
            tg_last_error());
  c = base;
  c.encoding = TG_PQ_RLE_DICTIONARY;
  c.dict_index = 1;
  CHECK_OK(read_crafted(&c, v, &rows));
  CHECK(v[0] == 20 && v[2] == 20);
  c.dict_index = 3; /* past the dictionary */
  CHECK_STATUS(read_crafted(&c, v, &rows), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "dictionary index 3 out of range"), "%s", tg_last_error());
  /* a billion rows claimed by a 300-byte file: refused before allocating */
  c = base;
  c.rows = 1000000000;
  CHECK_STATUS(read_crafted(&c, v, &rows), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "refusing it as corrupt"), "%s", tg_last_error());
  /* a page saying 4 GB: refused, not allocated */
  c = base;
  c.codec = TG_PQ_SNAPPY;
  c.usize_extra = 2000000000;
  CHECK_STATUS(read_crafted(&c, v, &rows), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "more than the codec can produce"), "%s", tg_last_error());
  c = base;
  c.usize_extra = 5;
  CHECK_STATUS(read_crafted(&c, v, &rows), TG_ERR_FORMAT);
  /* more values in the page than rows in the row group; fewer values than rows */
  c = base;
  c.page_values = 7;
  CHECK_STATUS(read_crafted(&c, v, &rows), TG_ERR_FORMAT);
  c.page_values = 2;
  CHECK_STATUS(read_crafted(&c, v, &rows), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "ends after 2 of its 3 values"), "%s", tg_last_error());
  /* codecs tickgrad does not have are named */
  c = base;
  c.codec = TG_PQ_LZ4_RAW;
  CHECK_STATUS(read_crafted(&c, v, &rows), TG_ERR_UNSUPPORTED);
  CHECK_MSG(strstr(tg_last_error(), "LZ4_RAW"), "%s", tg_last_error());
  c.codec = TG_PQ_BROTLI;
  CHECK_STATUS(read_crafted(&c, v, &rows), TG_ERR_UNSUPPORTED);
  c = base;
  c.encoding = TG_PQ_DELTA_BYTE_ARRAY;
  CHECK_STATUS(read_crafted(&c, v, &rows), TG_ERR_UNSUPPORTED);
  /* schema nesting deeper than the limit */
  c = base;
  c.nest = 70;
  CHECK_STATUS(read_crafted(&c, v, &rows), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "deeper"), "%s", tg_last_error());

  /* thrift: nesting bound, lists longer than the bytes, a footer longer than the file */
  unsigned char deep[300];
  size_t n = 0;
  memcpy(deep, "PAR1", 4);
  n = 4;
  for (int i = 0; i < 200; i++) deep[n++] = 0x1c; /* field 1, struct, ever deeper */
  uint32_t ml = (uint32_t)(n - 4);
  memcpy(deep + n, &ml, 4);
  memcpy(deep + n + 4, "PAR1", 4);
  tg_pq_file f;
  CHECK_STATUS(tg_pq_open(&f, "deep.parquet", deep, n + 8), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "nested deeper"), "%s", tg_last_error());
  unsigned char lst[32] = "PAR1";
  n = 4;
  lst[n++] = 0x19; /* field 1 list */
  lst[n++] = 0xfc; /* of structs, long form */
  lst[n++] = 0xff, lst[n++] = 0xff, lst[n++] = 0xff, lst[n++] = 0xff, lst[n++] = 0x07;
  ml = (uint32_t)(n - 4);
  memcpy(lst + n, &ml, 4);
  memcpy(lst + n + 4, "PAR1", 4);
  CHECK_STATUS(tg_pq_open(&f, "list.parquet", lst, n + 8), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "more than the bytes left"), "%s", tg_last_error());
  ml = 1000;
  memcpy(lst + n, &ml, 4);
  CHECK_STATUS(tg_pq_open(&f, "len.parquet", lst, n + 8), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "footer length 1000"), "%s", tg_last_error());
  CHECK_STATUS(tg_pq_open(&f, "short.parquet", "PAR1PAR1", 8), TG_ERR_FORMAT);
  memcpy(lst + n + 4, "PARE", 4);
  CHECK_STATUS(tg_pq_open(&f, "enc.parquet", lst, n + 8), TG_ERR_UNSUPPORTED);
}

/* ---------------------------------------------------------------- parquet-testing */

static int contains(const char *s, const char *what) { return strstr(s, what) != NULL; }

static void test_alltypes(const char *dir) {
  static const struct {
    const char *name;
    int n, first_id;
  } files[] = {{"alltypes_plain.parquet", 8, 4}, {"alltypes_plain.snappy.parquet", 2, 6}, {"alltypes_dictionary.parquet", 2, 0}};
  static const int ids8[8] = {4, 5, 6, 7, 2, 3, 0, 1}, ids2s[2] = {6, 7}, ids2d[2] = {0, 1};
  static const int64_t ts8[8] = {1235865600000000000LL, 1235865660000000000LL, 1238544000000000000LL, 1238544060000000000LL,
                                 1233446400000000000LL, 1233446460000000000LL, 1230768000000000000LL, 1230768060000000000LL};
  for (int k = 0; k < 3; k++) {
    pq p;
    if (!pq_open(&p, dir, files[k].name)) continue;
    CHECK(p.f.num_rows == files[k].n && p.f.ncols == 11);
    const int *ids = k == 0 ? ids8 : k == 1 ? ids2s : ids2d;
    int64_t *id = col_i64(&p, "id", NULL, NULL), *bo = col_i64(&p, "bool_col", NULL, NULL);
    int64_t *ti = col_i64(&p, "tinyint_col", NULL, NULL), *si = col_i64(&p, "smallint_col", NULL, NULL);
    int64_t *in = col_i64(&p, "int_col", NULL, NULL), *bi = col_i64(&p, "bigint_col", NULL, NULL);
    int64_t *ts = col_i64(&p, "timestamp_col", NULL, NULL);
    double *fl = col_f64(&p, "float_col", NULL, NULL), *db = col_f64(&p, "double_col", NULL, NULL);
    if (id && bo && ti && si && in && bi && ts && fl && db) {
      int bad = 0;
      for (int i = 0; i < files[k].n; i++) {
        int odd = i % 2;
        bad += id[i] != ids[i] || bo[i] != !odd || ti[i] != odd || si[i] != odd || in[i] != odd || bi[i] != 10 * odd;
        bad += fl[i] != (odd ? (double)1.1f : 0) || db[i] != (odd ? 10.1 : 0);
        int64_t want = k == 0 ? ts8[i] : k == 1 ? ts8[2 + i] : ts8[6 + i];
        bad += ts[i] != want;
      }
      CHECK_MSG(bad == 0, "%s: %d values differ", files[k].name, bad);
    }
    free(id), free(bo), free(ti), free(si), free(in), free(bi), free(ts), free(fl), free(db);
    CHECK_STATUS(col_status(&p, "string_col", 0), TG_ERR_UNSUPPORTED);
    pq_close(&p);
  }
}

static void test_checksum_files(const char *dir) {
  pq u, s;
  if (!pq_open(&u, dir, "datapage_v1-uncompressed-checksum.parquet")) return;
  if (!pq_open(&s, dir, "datapage_v1-snappy-compressed-checksum.parquet")) {
    pq_close(&u);
    return;
  }
  CHECK(u.f.num_rows == 5120 && s.f.num_rows == 5120);
  const char *names[2] = {"a", "b"};
  const int64_t sums[2] = {43118090240LL, 129016125440LL};
  for (int c = 0; c < 2; c++) {
    int64_t *a = col_i64(&u, names[c], NULL, NULL), *b = col_i64(&s, names[c], NULL, NULL);
    if (a && b) {
      int64_t sum = 0;
      int diff = 0;
      for (int64_t i = 0; i < 5120; i++) sum += a[i], diff += a[i] != b[i];
      CHECK_MSG(sum == sums[c] && diff == 0, "%s: sum %lld, %d differ", names[c], (long long)sum, diff);
      CHECK(a[0] == (c ? 1734763876 : 50462976));
    }
    free(a), free(b);
  }
  pq_close(&u);
  pq_close(&s);
  /* corrupt: a's first page and b's second page have wrong CRCs */
  pq x;
  if (pq_open(&x, dir, "datapage_v1-corrupt-checksum.parquet")) {
    CHECK_STATUS(col_status(&x, "a", 1), TG_ERR_FORMAT);
    CHECK_MSG(contains(tg_last_error(), "CRC mismatch") && contains(tg_last_error(), "column 'a', row group 0, page 0"),
              "%s", tg_last_error());
    CHECK_STATUS(col_status(&x, "b", 1), TG_ERR_FORMAT);
    CHECK_MSG(contains(tg_last_error(), "CRC mismatch") && contains(tg_last_error(), "column 'b', row group 0, page 1"),
              "%s", tg_last_error());
    pq_close(&x);
  }
  const char *dicts[2] = {"plain-dict-uncompressed-checksum.parquet", "rle-dict-snappy-checksum.parquet"};
  for (int k = 0; k < 2; k++) {
    if (!pq_open(&x, dir, dicts[k])) continue;
    int64_t *v = col_i64(&x, "long_field", NULL, NULL);
    if (v) {
      int bad = 0;
      for (int64_t i = 0; i < x.f.num_rows; i++) bad += v[i] != 0;
      CHECK(x.f.num_rows == 1000 && bad == 0);
    }
    free(v);
    CHECK_STATUS(col_status(&x, "binary_field", 0), TG_ERR_UNSUPPORTED);
    pq_close(&x);
  }
  if (pq_open(&x, dir, "rle-dict-uncompressed-corrupt-checksum.parquet")) {
    CHECK_STATUS(col_status(&x, "long_field", 1), TG_ERR_FORMAT);
    CHECK_MSG(contains(tg_last_error(), "CRC mismatch") && contains(tg_last_error(), "page 0"), "%s", tg_last_error());
    pq_close(&x);
  }
}

/* The expected-values CSV of the delta files: the first 9 columns are integers, empty for null. */
static void test_delta_expect(const char *dir, const char *name, const char *expect) {
  pq p;
  if (!pq_open(&p, dir, name)) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, expect);
  size_t len;
  char *csv = (char *)tg_test_read_file(path, &len);
  CHECK(csv != NULL);
  if (!csv) {
    pq_close(&p);
    return;
  }
  csv[len] = '\0';
  int64_t n = p.f.num_rows;
  CHECK(n == 100);
  int64_t *cols[9];
  uint8_t *valid[9];
  for (int c = 0; c < 9; c++) {
    valid[c] = malloc((size_t)n);
    cols[c] = malloc(8 * (size_t)n);
    CHECK_OK(tg_pq_read_i64(&p.f, c, cols[c], valid[c], NULL));
  }
  /* the string columns (DELTA_BYTE_ARRAY) as category codes */
  enum { MAXS = 16 };
  int ns = p.f.ncols - 9 < MAXS ? p.f.ncols - 9 : MAXS;
  tg_categories cats[MAXS];
  uint32_t *codes[MAXS];
  memset(cats, 0, sizeof cats);
  for (int c = 0; c < ns; c++) {
    codes[c] = malloc(4 * (size_t)n);
    CHECK_OK(tg_pq_read_codes(&p.f, 9 + c, &cats[c], codes[c], NULL));
  }
  char *line = strchr(csv, '\n');
  int64_t row = 0;
  int bad = 0, nulls = 0, strings = 0;
  while (line && line[1] && row < n) {
    char *s = line + 1;
    for (int c = 0; c < 9 + ns; c++) {
      if (*s == ',' || *s == '\n' || !*s) { /* empty: null */
        bad += c < 9 ? valid[c][row] != 0 : codes[c - 9][row] != TG_CATEGORY_MISSING;
        nulls++;
      } else if (c < 9) {
        s++; /* quote */
        long long want = strtoll(s, &s, 10);
        s++;
        bad += valid[c][row] != 1 || cols[c][row] != want;
      } else {
        char *e = strchr(++s, '"');
        uint32_t code = codes[c - 9][row];
        bad += !e || code == TG_CATEGORY_MISSING || strlen(tg_categories_name(&cats[c - 9], code)) != (size_t)(e - s) ||
               memcmp(tg_categories_name(&cats[c - 9], code), s, (size_t)(e - s)) != 0;
        strings++;
        s = e ? e + 1 : s;
      }
      if (*s == ',') s++;
    }
    row++;
    line = strchr(s, '\n');
  }
  CHECK_MSG(row == n && bad == 0, "%s: %lld rows checked, %d differ", name, (long long)row, bad);
  printf("%s: %lld rows x 9 integer and %d string columns match %s (%d nulls, %d strings)\n", name, (long long)row, ns,
         expect, nulls, strings);
  for (int c = 0; c < 9; c++) free(cols[c]), free(valid[c]);
  for (int c = 0; c < ns; c++) free(codes[c]), tg_categories_free(&cats[c]);
  free(csv);
  for (int c = 9; c < p.f.ncols; c++) CHECK_STATUS(col_status(&p, p.f.cols[c].name, 0), TG_ERR_UNSUPPORTED);
  pq_close(&p);
}

static void test_misc_conformance(const char *dir) {
  pq p;
  if (pq_open(&p, dir, "datapage_v2.snappy.parquet")) {
    int64_t *b = col_i64(&p, "b", NULL, NULL), *d = col_i64(&p, "d", NULL, NULL);
    double *c = col_f64(&p, "c", NULL, NULL);
    static const double cw[5] = {2, 3, 4, 5, 2};
    static const int dw[5] = {1, 1, 1, 0, 1};
    if (b && c && d)
      for (int i = 0; i < 5; i++) CHECK(b[i] == i + 1 && c[i] == cw[i] && d[i] == dw[i]);
    free(b), free(c), free(d);
    CHECK_STATUS(col_status(&p, "e.list.element", 1), TG_ERR_UNSUPPORTED);
    CHECK_MSG(contains(tg_last_error(), "'e.list.element'") && contains(tg_last_error(), "repeated"), "%s", tg_last_error());
    CHECK_STATUS(col_status(&p, "a", 0), TG_ERR_UNSUPPORTED);
    pq_close(&p);
  }
  if (pq_open(&p, dir, "nulls.snappy.parquet")) { /* an optional int inside an optional struct: all null */
    int64_t nulls = 0;
    uint8_t *valid = NULL;
    double *v = col_f64(&p, "b_struct.b_c_int", &valid, &nulls);
    CHECK(p.f.num_rows == 8 && nulls == 8 && p.f.cols[0].max_def == 2);
    if (v) CHECK(isnan(v[0]) && valid[7] == 0);
    free(v), free(valid);
    pq_close(&p);
  }
  if (pq_open(&p, dir, "single_nan.parquet")) {
    int64_t nulls = 0;
    double *v = col_f64(&p, "mycol", NULL, &nulls);
    CHECK(p.f.num_rows == 1 && nulls == 1 && v && isnan(v[0]));
    free(v);
    pq_close(&p);
  }
  if (pq_open(&p, dir, "dict-page-offset-zero.parquet")) {
    int64_t *v = col_i64(&p, "l_partkey", NULL, NULL);
    int bad = 0;
    for (int64_t i = 0; v && i < p.f.num_rows; i++) bad += v[i] != 1552;
    CHECK(p.f.num_rows == 39 && v && bad == 0);
    free(v);
    pq_close(&p);
  }
  if (pq_open(&p, dir, "concatenated_gzip_members.parquet")) { /* two gzip members in one page; UINT64 */
    int64_t *v = col_i64(&p, "long_col", NULL, NULL);
    int bad = 0;
    for (int64_t i = 0; v && i < p.f.num_rows; i++) bad += v[i] != i + 1;
    CHECK(p.f.num_rows == 513 && v && bad == 0);
    free(v);
    pq_close(&p);
  }
  if (pq_open(&p, dir, "int32_with_null_pages.parquet")) {
    uint8_t *valid = NULL;
    int64_t nulls = 0;
    int64_t *v = col_i64(&p, "int32_field", &valid, &nulls);
    if (v) {
      int64_t mn = INT64_MAX, mx = INT64_MIN, sum = 0, n200 = 0;
      for (int64_t i = 0; i < 1000; i++)
        if (valid[i]) mn = v[i] < mn ? v[i] : mn, mx = v[i] > mx ? v[i] : mx, sum += v[i];
      for (int64_t i = 200; i < 300; i++) n200 += !valid[i];
      CHECK_MSG(nulls == 275 && mn == -2136906554 && mx == 2145722375 && sum == -12383254597LL && n200 == 100 &&
                    v[0] == -654807448 && !valid[4] && v[4] == 0,
                "nulls %lld min %lld max %lld sum %lld", (long long)nulls, (long long)mn, (long long)mx, (long long)sum);
    }
    free(v), free(valid);
    pq_close(&p);
  }
  const char *empties[2] = {"page_v2_empty_compressed.parquet", "datapage_v2_empty_datapage.snappy.parquet"};
  for (int k = 0; k < 2; k++) {
    if (!pq_open(&p, dir, empties[k])) continue;
    int64_t nulls = 0;
    double *v = col_f64(&p, p.f.cols[0].name, NULL, &nulls);
    CHECK_MSG(v && nulls == p.f.num_rows && p.f.num_rows == (k ? 1 : 10) && isnan(v[0]), "%s", empties[k]);
    free(v);
    pq_close(&p);
  }
  if (pq_open(&p, dir, "float16_nonzeros_and_nans.parquet")) {
    uint8_t *valid = NULL;
    double *v = col_f64(&p, "x", &valid, NULL);
    if (v)
      CHECK(!valid[0] && v[1] == 1 && v[2] == -2 && isnan(v[3]) && v[4] == 0 && !signbit(v[4]) && v[5] == -1 &&
            v[6] == 0 && signbit(v[6]) && v[7] == 2);
    free(v), free(valid);
    pq_close(&p);
  }
  if (pq_open(&p, dir, "byte_stream_split.zstd.parquet")) {
    double *f = col_f64(&p, "f32", NULL, NULL), *d = col_f64(&p, "f64", NULL, NULL);
    if (f && d) {
      double sf = 0, sd = 0;
      for (int i = 0; i < 300; i++) sf += f[i], sd += d[i];
      CHECK(f[0] == (double)1.764052391052246f && f[299] == (double)0.3700558841228485f);
      CHECK(d[0] == -1.3065268517353166 && d[299] == -0.17858909208732915);
      CHECK(fabs(sf - 8.258872919715941) < 1e-9 && fabs(sd + 41.22919022747558) < 1e-9);
    }
    free(f), free(d);
    pq_close(&p);
  }
  if (pq_open(&p, dir, "byte_stream_split_extended.gzip.parquet")) { /* each split column equals its plain twin */
    const char *pairs[] = {"float16", "float", "double", "int32", "int64", "decimal"};
    for (int k = 0; k < 6; k++) {
      char a[64], b[64];
      snprintf(a, sizeof a, "%s_plain", pairs[k]);
      snprintf(b, sizeof b, "%s_byte_stream_split", pairs[k]);
      uint8_t *va = NULL, *vb = NULL;
      int64_t na = -1, nb = -2;
      double *x = col_f64(&p, a, &va, &na), *y = col_f64(&p, b, &vb, &nb);
      int bad = 0;
      for (int64_t i = 0; x && y && i < p.f.num_rows; i++)
        bad += va[i] != vb[i] || (va[i] && memcmp(&x[i], &y[i], 8) != 0);
      CHECK_MSG(x && y && bad == 0 && na == nb, "%s: %d differ", pairs[k], bad);
      free(x), free(y), free(va), free(vb);
    }
    CHECK_STATUS(col_status(&p, "flba5_plain", 0), TG_ERR_UNSUPPORTED);
    pq_close(&p);
  }
  if (pq_open(&p, dir, "lz4_raw_compressed.parquet")) {
    CHECK_STATUS(col_status(&p, "c0", 1), TG_ERR_UNSUPPORTED);
    CHECK_MSG(contains(tg_last_error(), "LZ4"), "%s", tg_last_error());
    pq_close(&p);
  }
  /* the string columns' data pages run past their column chunks (an old writer's sizes) */
  char path[4096];
  snprintf(path, sizeof path, "%s/nation.dict-malformed.parquet", dir);
  size_t len;
  unsigned char *buf = tg_test_read_file(path, &len);
  tg_pq_file f;
  CHECK(buf && tg_pq_open(&f, path, buf, len) == TG_ERR_FORMAT);
  CHECK_MSG(contains(tg_last_error(), "runs past the end of its column chunk") && contains(tg_last_error(), "column 'name'"),
            "%s", tg_last_error());
  free(buf);
}

/* Reads every Parquet file under dir with the column API and with tg_parquet_parse; prints a line per
 * file. Nothing may crash; corrupt files must fail somewhere. */
/* A message without the leading "<path>: " and the trailing " (column ...)". */
static const char *reason(const char *msg, const char *path) {
  static char buf[512];
  size_t n = strlen(path);
  if (strncmp(msg, path, n) == 0 && msg[n] == ':') msg += n + 2;
  snprintf(buf, sizeof buf, "%s", msg);
  char *c = strstr(buf, " (column '");
  if (c) *c = '\0';
  return buf;
}

static void survey(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  char *names[256];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 256)
    if (strstr(e->d_name, ".parquet")) names[n++] = strdup(e->d_name);
  closedir(d);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (strcmp(names[i], names[j]) > 0) {
        char *t = names[i];
        names[i] = names[j];
        names[j] = t;
      }
  for (int i = 0; i < n; i++) {
    char path[4096], line[2048];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    size_t len;
    unsigned char *buf = tg_test_read_file(path, &len);
    tg_pq_file f;
    tg_status st = tg_pq_open(&f, path, buf, len);
    int corrupt = strstr(names[i], "corrupt") || strstr(names[i], "malformed");
    if (st != TG_OK) {
      printf("  %-48s open: %s: %s\n", names[i], tg_status_name(st), reason(tg_last_error(), path));
      CHECK_MSG(corrupt || st == TG_ERR_UNSUPPORTED, "%s", tg_last_error());
      free(buf);
      free(names[i]);
      continue;
    }
    int okc = 0, failures = 0;
    line[0] = '\0';
    for (int c = 0; c < f.ncols; c++) {
      void *v = malloc(8 * (size_t)(f.num_rows + 1));
      tg_pq_kind k;
      st = tg_pq_column_kind(&f, c, &k);
      if (st == TG_OK) st = k.lane == TG_PQ_LANE_F64 ? tg_pq_read_f64(&f, c, v, NULL, NULL) : tg_pq_read_i64(&f, c, v, NULL, NULL);
      tg_categories cats;
      memset(&cats, 0, sizeof cats);
      if (st != TG_OK && f.cols[c].physical == TG_PQ_BYTE_ARRAY && tg_pq_string_kind(&f, c, &k) == TG_OK) st = tg_pq_read_codes(&f, c, &cats, v, NULL);
      tg_categories_free(&cats);
      free(v);
      if (st == TG_OK) {
        okc++;
        continue;
      }
      failures += st != TG_ERR_UNSUPPORTED;
      size_t l = strlen(line);
      snprintf(line + l, sizeof line - l, "; %s: %s: %s", f.cols[c].name, tg_status_name(st), reason(tg_last_error(), path));
    }
    tg_bars b;
    tg_bars_init(&b);
    tg_read_opts o;
    memset(&o, 0, sizeof o);
    o.nulls = TG_NULLS_NAN;
    st = tg_parquet_parse(path, buf, len, &o, &b);
    printf("  %-48s %lld rows, %d of %d columns read%s | bars: %s\n", names[i], (long long)f.num_rows, okc, f.ncols, line,
           st == TG_OK ? "ok" : tg_status_name(st));
    CHECK_MSG(!corrupt || failures > 0, "%s read without an error", names[i]);
    CHECK_MSG(corrupt || failures == 0, "%s: unexpected errors%s", names[i], line);
    tg_bars_free(&b);
    tg_pq_close(&f);
    free(buf);
    free(names[i]);
  }
}

/* ---------------------------------------------------------------- OHLCV files vs Lean CSVs */

typedef struct lean {
  int64_t n;
  int64_t *ts; /* naive seconds of the CSV's clock */
  double *o, *h, *l, *c, *v;
} lean;

static void lean_push(lean *L, int64_t ts, double o, double h, double l, double c, double v) {
  if ((L->n & 1023) == 0) {
    size_t cap = (size_t)L->n + 1024;
    L->ts = realloc(L->ts, cap * 8);
    L->o = realloc(L->o, cap * 8), L->h = realloc(L->h, cap * 8), L->l = realloc(L->l, cap * 8);
    L->c = realloc(L->c, cap * 8), L->v = realloc(L->v, cap * 8);
  }
  L->ts[L->n] = ts, L->o[L->n] = o, L->h[L->n] = h, L->l[L->n] = l, L->c[L->n] = c, L->v[L->n] = v;
  L->n++;
}

static void lean_free(lean *L) { free(L->ts), free(L->o), free(L->h), free(L->l), free(L->c), free(L->v); }

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* ES minute files of the Dec 2013 contract: "ms,o,h,l,c,v", the date in the file name. */
static int lean_es(const char *shared, lean *L) {
  char dir[2400];
  snprintf(dir, sizeof dir, "%s/lean/future/cme/minute/es", shared);
  DIR *d = opendir(dir);
  if (!d) return 0;
  char *names[64];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strstr(e->d_name, "_trade_201312.csv") && n < 64) names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    int y, m, dd;
    sscanf(names[i], "%4d%2d%2d", &y, &m, &dd);
    int64_t day = tg_days_from_civil(y, m, dd) * 86400;
    size_t len;
    char *text = (char *)tg_test_read_file(path, &len);
    text[len] = '\0';
    for (char *s = text; *s;) {
      long long ms;
      double o, h, l, c, v;
      int used = 0;
      if (sscanf(s, "%lld,%lf,%lf,%lf,%lf,%lf%n", &ms, &o, &h, &l, &c, &v, &used) != 6) break;
      lean_push(L, day + ms / 1000, o, h, l, c, v);
      s += used;
      while (*s == '\n' || *s == '\r') s++;
    }
    free(text);
    free(names[i]);
  }
  return 1;
}

/* SPY hourly: "YYYYMMDD HH:MM,o,h,l,c,v" in New York time, prices in 1/10000 dollar. */
static int lean_spy(const char *shared, lean *L) {
  char path[4096];
  snprintf(path, sizeof path, "%s/lean/equity/usa/hour/spy.csv", shared);
  size_t len;
  char *text = (char *)tg_test_read_file(path, &len);
  if (!text) return 0;
  text[len] = '\0';
  for (char *s = text; *s;) {
    int y, m, d, hh, mm, used = 0;
    long long o, h, l, c, v;
    if (sscanf(s, "%4d%2d%2d %d:%d,%lld,%lld,%lld,%lld,%lld%n", &y, &m, &d, &hh, &mm, &o, &h, &l, &c, &v, &used) != 10) break;
    lean_push(L, tg_days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60, (double)o / 10000, (double)h / 10000,
              (double)l / 10000, (double)c / 10000, (double)v);
    s += used;
    while (*s == '\n' || *s == '\r') s++;
  }
  free(text);
  return 1;
}

static int same_bars(const tg_bars *b, const lean *L, const char *what) {
  if (b->n != L->n) {
    CHECK_MSG(0, "%s: %lld bars, the CSV has %lld", what, (long long)b->n, (long long)L->n);
    return 0;
  }
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < L->n; i++) {
    int d = b->ts[i] != L->ts[i] * TG_NS_PER_S || b->open[i] != L->o[i] || b->high[i] != L->h[i] || b->low[i] != L->l[i] ||
            b->close[i] != L->c[i] || b->volume[i] != L->v[i];
    if (d && first < 0) first = i;
    bad += d;
  }
  CHECK_MSG(bad == 0, "%s: %lld bars differ, first at %lld", what, (long long)bad, (long long)first);
  return bad == 0;
}

static void test_ohlcv(const char *shared) {
  char dir[2400];
  snprintf(dir, sizeof dir, "%s/parquet-ohlcv", shared);
  lean es = {0}, spy = {0};
  if (!is_dir(dir) || !lean_es(shared, &es) || !lean_spy(shared, &spy)) {
    printf("skipped the OHLCV comparison: %s or the Lean CSVs are missing\n", dir);
    lean_free(&es);
    lean_free(&spy);
    return;
  }
  CHECK(es.n == 16673 && spy.n == 40832);
  const char *esf[2] = {"es_201312_1m.snappy.parquet", "es_201312_1m.zstd.parquet"};
  for (int k = 0; k < 2; k++) {
    tg_bars b;
    CHECK_OK(parse_file(dir, esf[k], NULL, &b)); /* naive times, and ES is UTC: no zone */
    if (same_bars(&b, &es, esf[k])) printf("%s: %lld bars equal the Lean CSVs\n", esf[k], (long long)b.n);
    tg_bars_free(&b);
  }
  const char *spyf[2] = {"spy_1h.gzip.parquet", "spy_1h.uncompressed.parquet"};
  for (int k = 0; k < 2; k++) {
    tg_bars b;
    CHECK_OK(parse_file(dir, spyf[k], NULL, &b)); /* wall clock as read */
    if (same_bars(&b, &spy, spyf[k])) printf("%s: %lld bars equal the Lean CSV\n", spyf[k], (long long)b.n);
    tg_bars_free(&b);
    if (tg_tz_check("America/New_York") != TG_OK) continue;
    tg_read_opts o;
    memset(&o, 0, sizeof o);
    o.tz = "America/New_York";
    CHECK_OK(parse_file(dir, spyf[k], &o, &b));
    int64_t bad = 0, checked = 0;
    for (int64_t i = 0; i < b.n && b.n == spy.n; i += (i % 1000 == 0 ? 1 : 37), checked++) {
      int64_t utc = 0;
      tg_tz_local_to_utc("America/New_York", spy.ts[i], &utc);
      bad += b.ts[i] != utc * TG_NS_PER_S;
    }
    CHECK_MSG(bad == 0 && checked > 1000, "%s in New York time: %lld of %lld differ", spyf[k], (long long)bad,
              (long long)checked);
    /* 1998-01-02 09:00 EST is 14:00 UTC; 2021-03-31 15:00 EDT is 19:00 UTC */
    CHECK(b.n == spy.n && b.ts[0] == (tg_days_from_civil(1998, 1, 2) * 86400 + 14 * 3600) * TG_NS_PER_S &&
          b.ts[b.n - 1] == (tg_days_from_civil(2021, 3, 31) * 86400 + 19 * 3600) * TG_NS_PER_S);
    tg_bars_free(&b);
  }
  /* through the public entry point: the dispatcher picks this reader and sorts nothing */
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, esf[1]);
  tg_bars b;
  CHECK_OK(tg_bars_read(path, NULL, &b));
  CHECK(b.n == es.n && strcmp(b.format, "parquet") == 0);
  tg_bars_free(&b);
  lean_free(&es);
  lean_free(&spy);
}

/* ---------------------------------------------------------------- dump mode */

static void dump_file(const char *path, const char *outdir) {
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  char csvp[4096], stp[4096];
  snprintf(csvp, sizeof csvp, "%s/%s.csv", outdir, base);
  snprintf(stp, sizeof stp, "%s/%s.status", outdir, base);
  FILE *st = fopen(stp, "w");
  if (!st) return;
  size_t len;
  unsigned char *buf = tg_test_read_file(path, &len);
  tg_pq_file f;
  tg_status s = buf ? tg_pq_open(&f, path, buf, len) : TG_ERR_IO;
  if (s != TG_OK) {
    fprintf(st, "*file*\t%s\t%s\n", tg_status_name(s), buf ? tg_last_error() : "cannot read");
    fclose(st);
    free(buf);
    return;
  }
  int64_t n = f.num_rows;
  void **vals = calloc((size_t)f.ncols + 1, sizeof *vals);
  uint8_t **valid = calloc((size_t)f.ncols + 1, sizeof *valid);
  int *mode = calloc((size_t)f.ncols + 1, sizeof *mode); /* 0 skip, 1 int, 2 unsigned, 3 double */
  for (int c = 0; c < f.ncols; c++) {
    tg_pq_kind k;
    const tg_pq_column *col = &f.cols[c];
    vals[c] = malloc(8 * (size_t)(n + 1));
    valid[c] = malloc((size_t)n + 1);
    s = tg_pq_column_kind(&f, c, &k);
    if (s == TG_OK) {
      if (k.lane == TG_PQ_LANE_F64 || col->logical == TG_PQ_LT_DECIMAL) {
        mode[c] = 3;
        s = tg_pq_read_f64(&f, c, vals[c], valid[c], NULL);
      } else {
        mode[c] = col->logical == TG_PQ_LT_INTEGER && !col->is_signed && col->physical == TG_PQ_INT64 ? 2 : 1;
        s = tg_pq_read_i64(&f, c, vals[c], valid[c], NULL);
      }
    }
    if (s != TG_OK) mode[c] = 0;
    fprintf(st, "%s\t%s\t%s\n", col->name, s == TG_OK ? "ok" : s == TG_ERR_UNSUPPORTED ? "unsupported" : tg_status_name(s),
            s == TG_OK ? "" : tg_last_error());
  }
  FILE *out = fopen(csvp, "w");
  if (out) {
    int first = 1;
    for (int c = 0; c < f.ncols; c++)
      if (mode[c]) fprintf(out, "%s\"%s\"", first ? "" : ",", f.cols[c].name), first = 0;
    fputc('\n', out);
    for (int64_t i = 0; i < n; i++) {
      first = 1;
      for (int c = 0; c < f.ncols; c++) {
        if (!mode[c]) continue;
        if (!first) fputc(',', out);
        first = 0;
        if (!valid[c][i]) continue;
        if (mode[c] == 3) fprintf(out, "%.17g", ((double *)vals[c])[i]);
        else if (mode[c] == 2) fprintf(out, "%llu", (unsigned long long)((int64_t *)vals[c])[i]);
        else fprintf(out, "%lld", (long long)((int64_t *)vals[c])[i]);
      }
      fputc('\n', out);
    }
    fclose(out);
  }
  for (int c = 0; c < f.ncols; c++) free(vals[c]), free(valid[c]);
  free(vals), free(valid), free(mode);
  fclose(st);
  tg_pq_close(&f);
  free(buf);
}

int main(int argc, char **argv) {
  const char *env = getenv("TG_SOURCE_DIR");
  if (env) snprintf(g_src, sizeof g_src, "%s", env);
  env = getenv("TG_SHARED_DATA");
  if (env) snprintf(g_shared, sizeof g_shared, "%s", env);
  const char *dump = getenv("TG_DUMP_PARQUET");
  if (dump) {
    for (int i = 1; i < argc; i++) dump_file(argv[i], dump);
    return 0;
  }
  char seeds[2400];
  snprintf(seeds, sizeof seeds, "%s/fuzz/corpus/parquet", g_src);
  if (!is_dir(seeds)) return tg_test_skip("fuzz/corpus/parquet not found (set TG_SOURCE_DIR to the checkout)");
  test_seed_bars(seeds);
  test_seed_types(seeds);
  test_seed_encodings(seeds);
  test_seed_extras(seeds);
  test_crafted();
  test_truncation_and_flips(seeds, "tiny.parquet");
  test_truncation_and_flips(seeds, "bars_v1_snappy.parquet");
  test_truncation_and_flips(seeds, "types_gzip_crc.parquet");
  test_truncation_and_flips(seeds, "bars_extra_v2.parquet");

  char pt[2400];
  snprintf(pt, sizeof pt, "%s/parquet-testing", g_shared);
  if (is_dir(pt)) {
    test_alltypes(pt);
    test_checksum_files(pt);
    test_delta_expect(pt, "delta_encoding_required_column.parquet", "delta_encoding_required_column_expect.csv");
    test_delta_expect(pt, "delta_encoding_optional_column.parquet", "delta_encoding_optional_column_expect.csv");
    test_misc_conformance(pt);
    printf("parquet-testing survey:\n");
    survey(pt);
  } else {
    printf("skipped the parquet-testing files: %s not found (TG_SHARED_DATA)\n", pt);
  }
  if (is_dir(g_shared)) {
    test_ohlcv(g_shared);
    char po[2400];
    snprintf(po, sizeof po, "%s/parquet-ohlcv", g_shared);
    printf("parquet-ohlcv survey:\n");
    survey(po);
  } else {
    printf("skipped the OHLCV files: %s not found (TG_SHARED_DATA)\n", g_shared);
  }
  return tg_test_finish();
}
