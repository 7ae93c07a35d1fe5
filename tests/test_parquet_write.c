/* The Parquet writer: bars written and read back by the project's reader bit for bit (times, prices, NaN and signed
 * zeros, numeric and category columns with missing values, several pages, a wide dictionary), the writer chosen by
 * the extension, and the errors (a name used twice, an unwritable path) that leave files as they were. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "tickgrad/ticks.h"

static uint64_t bits(double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  return u;
}

static int same_f64(const double *a, const double *b, int64_t n, int64_t *at) {
  for (int64_t i = 0; i < n; i++)
    if (bits(a[i]) != bits(b[i])) return *at = i, 0;
  return 1;
}

/* A random-ish double from a 64-bit state: every kind of value a column may hold, NaN and infinities included. */
static double value(uint64_t *s, int64_t i) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  switch (i % 11) {
    case 0: return NAN;
    case 1: return -0.0;
    case 2: return 5e-324; /* the smallest subnormal */
    case 3: return 1.7976931348623157e308;
    case 4: return -INFINITY;
    default: {
      double d;
      uint64_t u = *s >> 2; /* a finite double: exponent below 0x7ff */
      memcpy(&d, &u, 8);
      return d;
    }
  }
}

/* n bars with every field filled from the generator, an instrument column when with_instrument, a numeric extra
 * column "x" and a category "venue" of names names (every 7th missing; name 3 is the empty string). */
static void make(tg_bars *b, int64_t n, int names, int with_instrument) {
  tg_bars_init(b);
  CHECK_OK(tg_bars_reserve(b, n, with_instrument));
  uint64_t s = 42;
  for (int64_t i = 0; i < n; i++) {
    int64_t ts = i == 0 ? INT64_MIN + 1 : i == 1 ? -1 : 1704205800123456789LL + i * 1000003;
    tg_status st = tg_bars_push(b, ts, value(&s, i), value(&s, i + 1), value(&s, i + 2), value(&s, i + 3),
                                value(&s, i + 4), (uint32_t)(i * 2654435761u));
    if (st != TG_OK) CHECK_OK(st);
  }
  CHECK_OK(tg_bars_add_column(b, "x", TG_COLUMN_NUMERIC));
  CHECK_OK(tg_bars_add_column(b, "venue", TG_COLUMN_CATEGORY));
  tg_bar_column *x = &b->cols[0], *v = &b->cols[1];
  for (int64_t i = 0; i < n; i++) x->values[i] = value(&s, i + 5);
  for (int k = 0; k < names; k++) {
    char name[32];
    if (k == 3) name[0] = '\0';
    else snprintf(name, sizeof name, "venue \xc3\xa9 %d", k);
    uint32_t code;
    CHECK_OK(tg_categories_intern(&v->cats, name, strlen(name), &code));
  }
  for (int64_t i = 0; i < n; i++) v->codes[i] = names == 0 || i % 7 == 0 ? TG_CATEGORY_MISSING : (uint32_t)(i % names);
}

/* Reads path back with no checks (the values include NaN and non-positive prices) and compares every value. */
static void compare(const tg_bars *w, const char *path) {
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  o.no_checks = 1;
  o.nulls = TG_NULLS_NAN;
  tg_bars r;
  CHECK_OK(tg_bars_read(path, &o, &r));
  CHECK(strcmp(r.format, "parquet") == 0);
  CHECK_MSG(r.n == w->n, "%lld rows read, %lld written", (long long)r.n, (long long)w->n);
  if (r.n != w->n) {
    tg_bars_free(&r);
    return;
  }
  int ts_ok = 1;
  for (int64_t i = 0; i < r.n; i++) ts_ok &= r.ts[i] == w->ts[i];
  CHECK(ts_ok);
  int64_t at = -1;
  CHECK_MSG(same_f64(r.open, w->open, r.n, &at), "open at %lld", (long long)at);
  CHECK_MSG(same_f64(r.high, w->high, r.n, &at), "high at %lld", (long long)at);
  CHECK_MSG(same_f64(r.low, w->low, r.n, &at), "low at %lld", (long long)at);
  CHECK_MSG(same_f64(r.close, w->close, r.n, &at), "close at %lld", (long long)at);
  CHECK_MSG(same_f64(r.volume, w->volume, r.n, &at), "volume at %lld", (long long)at);
  CHECK((r.instrument != NULL) == (w->instrument != NULL));
  if (r.instrument && w->instrument) {
    int ok = 1;
    for (int64_t i = 0; i < r.n; i++) ok &= r.instrument[i] == w->instrument[i];
    CHECK(ok);
  }
  CHECK_MSG(r.n_cols == w->n_cols, "%d extra columns read, %d written", r.n_cols, w->n_cols);
  for (int k = 0; k < w->n_cols && k < r.n_cols; k++) {
    const tg_bar_column *a = &w->cols[k], *c = &r.cols[k];
    CHECK(strcmp(a->name, c->name) == 0 && a->kind == c->kind);
    if (a->kind != c->kind) continue;
    if (a->kind == TG_COLUMN_NUMERIC) {
      CHECK_MSG(same_f64(c->values, a->values, r.n, &at), "column %s at %lld", a->name, (long long)at);
      continue;
    }
    if (r.n > 0) /* no bars: no row group, so no dictionary of names */
      CHECK_MSG(c->cats.n == a->cats.n, "%u names read, %u written", c->cats.n, a->cats.n);
    int ok = 1;
    for (int64_t i = 0; i < r.n; i++) {
      if (a->codes[i] == TG_CATEGORY_MISSING || c->codes[i] == TG_CATEGORY_MISSING) ok &= a->codes[i] == c->codes[i];
      else ok &= strcmp(tg_categories_name(&a->cats, a->codes[i]), tg_categories_name(&c->cats, c->codes[i])) == 0;
    }
    CHECK_MSG(ok, "column %s: a row's name differs", a->name);
  }
  if (r.n > 0) CHECK(tg_bars_hash(&r) == tg_bars_hash(w)); /* the whole series, names and codes too */
  tg_bars_free(&r);
}

static void round_trip(const char *dir, int64_t n, int names, int with_instrument) {
  char path[512];
  snprintf(path, sizeof path, "%s/b_%lld_%d_%d.parquet", dir, (long long)n, names, with_instrument);
  tg_bars b;
  make(&b, n, names, with_instrument);
  CHECK_OK(tg_bars_write_parquet(&b, path));
  compare(&b, path);
  tg_bars_free(&b);
}

/* The errors: nothing is written, and a file already at the path stays as it was. */
static void errors(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/keep.parquet", dir);
  FILE *f = fopen(path, "wb");
  fputs("old", f);
  fclose(f);
  tg_bars b;
  make(&b, 10, 2, 0);
  CHECK_OK(tg_bars_add_column(&b, "open", TG_COLUMN_NUMERIC));
  CHECK_STATUS(tg_bars_write_parquet(&b, path), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "two columns named 'open'") != NULL);
  char got[8] = {0};
  f = fopen(path, "rb");
  CHECK(f && fread(got, 1, sizeof got, f) == 3 && memcmp(got, "old", 3) == 0);
  if (f) fclose(f);
  tg_bars_drop_column(&b, 2);
  char bad[600];
  snprintf(bad, sizeof bad, "%s/no/such/folder/b.parquet", dir);
  CHECK(tg_bars_write_parquet(&b, bad) != TG_OK);
  CHECK(strstr(tg_last_error(), "no/such/folder") != NULL);
  /* the extension picks the writer; the CSV one for anything else */
  snprintf(path, sizeof path, "%s/by_ext.PARQUET", dir);
  CHECK_OK(tg_bars_write(&b, path));
  f = fopen(path, "rb");
  CHECK(f && fread(got, 1, 4, f) == 4 && memcmp(got, "PAR1", 4) == 0);
  if (f) fclose(f);
  snprintf(path, sizeof path, "%s/by_ext.csv", dir);
  CHECK_OK(tg_bars_write(&b, path));
  f = fopen(path, "rb");
  CHECK(f && fread(got, 1, 3, f) == 3 && memcmp(got, "ts,", 3) == 0);
  if (f) fclose(f);
  tg_bars_free(&b);
}

int main(void) {
  char dir[] = "/tmp/tg_pqw_XXXXXX";
  if (!mkdtemp(dir)) return tg_test_skip("mkdtemp failed");
  round_trip(dir, 1, 1, 0);
  round_trip(dir, 1000, 5, 0);
  round_trip(dir, 1000, 0, 0);          /* a category of no names: every value missing */
  round_trip(dir, 5000, 300, 0);        /* dictionary indices 9 bits wide */
  round_trip(dir, 1000, 3, 1);          /* the instrument column */
  round_trip(dir, (1 << 20) + 77, 2, 0); /* two data pages per column */
  round_trip(dir, 0, 2, 0);             /* no rows: no row group */
  errors(dir);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return tg_test_finish();
}
