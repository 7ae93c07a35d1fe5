/* Extra columns: the CSV reader keeps further columns by name; sort, append and several files keep them aligned. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/alloc.h"
#include "support/check.h"
#include "tickgrad/data.h"

static tg_status parse(const char *path, const char *text, tg_bars *b) {
  tg_bars_init(b);
  size_t len = strlen(text);
  char *buf = malloc(len ? len : 1); /* an exact-size copy, so ASan sees any over-read */
  memcpy(buf, text, len);
  tg_status st = tg_csv_parse(path, buf, len, NULL, b);
  free(buf);
  return st;
}

static const tg_bar_column *col(const tg_bars *b, const char *name, tg_column_kind kind) {
  const tg_bar_column *c = tg_bars_column(b, name);
  CHECK_MSG(c && c->kind == kind, "column '%s' %s", name, c ? "has the other kind" : "is missing");
  return c && c->kind == kind ? c : NULL;
}

/* The name of row i's category, or "-" when missing. */
static const char *cat(const tg_bar_column *c, int64_t i) {
  return c->codes[i] == TG_CATEGORY_MISSING ? "-" : tg_categories_name(&c->cats, c->codes[i]);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static char *read_all(FILE *f) {
  static char buf[4096];
  rewind(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  return buf;
}

/* How many times part occurs in s. */
static int count(const char *s, const char *part) {
  int n = 0;
  for (const char *p = strstr(s, part); p; p = strstr(p + 1, part)) n++;
  return n;
}

static void test_kept(void) {
  /* pandas' unnamed index, a numeric column with every kind of missing value, text with quotes and commas */
  const char *text = ",Date,Open,High,Low,Close,Adj Close,sector,\"sig \"\"a\"\"\",flips\n"
                     "0,2021-01-04,1,2,0.5,1.5,1.4,tech,1,5\n"
                     "1,2021-01-05,1.5,2,1,1.8,,\"banks, big\",NA,6\n"
                     "2,2021-01-06,1.8,2,1,1.9,NaN,,null,-7.25\n"
                     "3,2021-01-07,1.9,2,1,1.7,1.6,tech,-inf,x\"y\n"
                     "4,2021-01-08,1.7,2,1,1.6,1e3,\"said \"\"hi\"\"\",1.5e-3,N/A\n";
  tg_bars b;
  CHECK_OK(parse("kept.csv", text, &b));
  CHECK(b.n == 5 && b.n_cols == 4);
  if (b.n_cols == 4) {
    CHECK(!strcmp(b.cols[0].name, "Adj Close") && !strcmp(b.cols[1].name, "sector") &&
          !strcmp(b.cols[2].name, "sig \"a\"") && !strcmp(b.cols[3].name, "flips"));
  }
  CHECK(tg_bars_column(&b, "") == NULL && tg_bars_column(&b, "adj close") == NULL && tg_bars_column(&b, "Close") == NULL);
  const tg_bar_column *adj = col(&b, "Adj Close", TG_COLUMN_NUMERIC), *sec = col(&b, "sector", TG_COLUMN_CATEGORY);
  const tg_bar_column *sig = col(&b, "sig \"a\"", TG_COLUMN_NUMERIC), *fl = col(&b, "flips", TG_COLUMN_CATEGORY);
  if (adj) CHECK(adj->values[0] == 1.4 && isnan(adj->values[1]) && isnan(adj->values[2]) && adj->values[4] == 1000);
  if (sig)
    CHECK(sig->values[0] == 1 && isnan(sig->values[1]) && isnan(sig->values[2]) && sig->values[3] == -INFINITY &&
          sig->values[4] == 1.5e-3);
  if (sec) {
    CHECK_MSG(!strcmp(cat(sec, 0), "tech") && !strcmp(cat(sec, 1), "banks, big") && !strcmp(cat(sec, 2), "-") &&
                  !strcmp(cat(sec, 3), "tech") && !strcmp(cat(sec, 4), "said \"hi\""),
              "%s|%s|%s|%s|%s", cat(sec, 0), cat(sec, 1), cat(sec, 2), cat(sec, 3), cat(sec, 4));
    CHECK(sec->cats.n == 3 && sec->codes[0] == sec->codes[3]);
    CHECK(tg_categories_find(&sec->cats, "tech", 4) == sec->codes[0] &&
          tg_categories_find(&sec->cats, "Tech", 4) == TG_CATEGORY_MISSING);
  }
  /* numbers until a text value: the column becomes a category of every value's text */
  if (fl) CHECK(!strcmp(cat(fl, 0), "5") && !strcmp(cat(fl, 2), "-7.25") && !strcmp(cat(fl, 3), "x\"y") && !strcmp(cat(fl, 4), "-"));
  tg_column_report r[4];
  CHECK_OK(tg_bars_inspect_columns(&b, r));
  CHECK(r[0].missing == 2 && r[0].distinct == 0 && r[1].missing == 1 && r[1].distinct == 3 && r[2].missing == 2);
  CHECK(r[3].kind == TG_COLUMN_CATEGORY && r[3].missing == 1 && r[3].distinct == 4 && !strcmp(r[3].name, "flips"));
  tg_bars_free(&b);
  CHECK(b.n_cols == 0 && b.cols == NULL);

  /* a file without a header has only the positional layout; a left-out volume becomes an extra column */
  CHECK_OK(parse("lean.csv", "20131006 22:00,1,2,0.5,1.5,10,77,abc\n20131006 22:01,1,2,0.5,1.5,11,78,abd\n", &b));
  CHECK(b.n == 2 && b.n_cols == 0);
  tg_bars_free(&b);
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  o.columns = "volume=none";
  tg_bars_init(&b);
  const char *v = "ts,open,high,low,close,Volume\n2021-01-04,1,2,0.5,1.5,10\n";
  CHECK_OK(tg_csv_parse("novol.csv", v, strlen(v), &o, &b));
  const tg_bar_column *vol = col(&b, "Volume", TG_COLUMN_NUMERIC);
  CHECK(isnan(b.volume[0]) && vol && vol->values[0] == 10);
  tg_bars_free(&b);
  /* semicolons with decimal commas; Date and Time as two columns stay bar fields */
  CHECK_OK(parse("semi.csv", "Date;Time;Open;High;Low;Close;Spread\n04.01.2021;10:00;1,5;2;1;1,75;0,25\n", &b));
  const tg_bar_column *spread = col(&b, "Spread", TG_COLUMN_NUMERIC);
  CHECK(b.n_cols == 1 && spread && spread->values[0] == 0.25);
  tg_bars_free(&b);
}

static void test_errors(void) {
  tg_bars b;
  CHECK_STATUS(parse("dup.csv", "ts,open,high,low,close,x,y,x\n2021-01-04,1,2,0.5,1.5,1,2,3\n", &b), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "dup.csv") && strstr(tg_last_error(), "'x' twice") &&
                strstr(tg_last_error(), "columns 6 and 8"),
            "%s", tg_last_error());
  CHECK(b.n == 0 && b.n_cols == 0);
  tg_bars_free(&b);
  /* a repeated bar field name: the second copy would be an extra column of the same name */
  CHECK_STATUS(parse("dup2.csv", "ts,open,high,low,close,close\n2021-01-04,1,2,0.5,1.5,1\n", &b), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "'close' twice"), "%s", tg_last_error());
  tg_bars_free(&b);
  /* names that differ only in case name one field twice: an error naming both, unless the map says which */
  CHECK_STATUS(parse("case.csv", "ts,open,high,low,close,Close\n2021-01-04,1,2,0.5,1.5,1.6\n", &b), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "case.csv: line 1: columns 'close' and 'Close' both name close") &&
                strstr(tg_last_error(), "close=Close"), "%s", tg_last_error());
  tg_bars_free(&b);
  CHECK_STATUS(parse("vol.csv", "ts,open,high,low,close,Volume,volume\n2021-01-04,1,2,0.5,1.5,7,8\n", &b),
               TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "columns 'Volume' and 'volume' both name volume"), "%s", tg_last_error());
  tg_bars_free(&b);
  {
    tg_read_opts o;
    memset(&o, 0, sizeof o);
    o.columns = "close=Close";
    const char *text = "ts,open,high,low,close,Close\n2021-01-04,1,2,0.5,1.5,1.6\n";
    tg_bars_init(&b);
    CHECK_OK(tg_csv_parse("case.csv", text, strlen(text), &o, &b));
    CHECK(b.n == 1 && b.close[0] == 1.6);
    tg_bars_free(&b);
  }

  /* parsing into a series: union of the columns; numbers here against text there is an error that leaves it */
  CHECK_OK(parse("a.csv", "ts,open,high,low,close,k,n\n2021-01-04,1,2,0.5,1.5,a,1\n", &b));
  const char *more = "ts,open,high,low,close,n,m\n2021-01-05,1,2,0.5,1.5,2,3\n";
  CHECK_OK(tg_csv_parse("b.csv", more, strlen(more), NULL, &b));
  const tg_bar_column *k = col(&b, "k", TG_COLUMN_CATEGORY), *n = col(&b, "n", TG_COLUMN_NUMERIC),
                      *m = col(&b, "m", TG_COLUMN_NUMERIC);
  CHECK(b.n == 2 && b.n_cols == 3);
  if (k && n && m) CHECK(!strcmp(cat(k, 0), "a") && !strcmp(cat(k, 1), "-") && n->values[1] == 2 && isnan(m->values[0]) && m->values[1] == 3);
  const char *bad = "ts,open,high,low,close,n,z\n2021-01-06,1,2,0.5,1.5,oops,1\n";
  CHECK_STATUS(tg_csv_parse("c.csv", bad, strlen(bad), NULL, &b), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "c.csv") && strstr(tg_last_error(), "'n'"), "%s", tg_last_error());
  CHECK(b.n == 2 && b.n_cols == 3 && tg_bars_column(&b, "z") == NULL);
  /* numbers join a category column the series holds as names */
  const char *nums = "ts,open,high,low,close,k\n2021-01-07,1,2,0.5,1.5,42\n";
  CHECK_OK(tg_csv_parse("d.csv", nums, strlen(nums), NULL, &b));
  k = col(&b, "k", TG_COLUMN_CATEGORY);
  if (k) CHECK(b.n == 3 && !strcmp(cat(k, 2), "42"));
  tg_bars_free(&b);

  /* the column store's own rules */
  tg_bars_init(&b);
  CHECK_OK(tg_bars_add_column(&b, "x", TG_COLUMN_NUMERIC));
  CHECK_STATUS(tg_bars_add_column(&b, "x", TG_COLUMN_CATEGORY), TG_ERR_INVALID);
  CHECK_STATUS(tg_bars_add_column(&b, "", TG_COLUMN_NUMERIC), TG_ERR_INVALID);
  CHECK_OK(tg_bars_push(&b, 5, 1, 1, 1, 1, 1, 0));
  CHECK(isnan(b.cols[0].values[0]));
  b.cols[0].values[0] = 7;
  CHECK_OK(tg_bars_reset_column(&b, 0, TG_COLUMN_CATEGORY));
  CHECK(b.cols[0].codes[0] == TG_CATEGORY_MISSING && b.cols[0].values == NULL);
  tg_bars_drop_column(&b, 0);
  CHECK(b.n_cols == 0 && b.cols == NULL && tg_bars_column_index(&b, "x") == -1);
  tg_bars_free(&b);
}

/* Rows out of time order and newest-first files: every extra value stays with its bar. */
static void test_aligned(void) {
  tg_bars b;
  /* newest first: the reader reverses the rows */
  CHECK_OK(parse("desc.csv", "ts,open,high,low,close,day,tag\n2021-01-06,1,1,1,1,6,f\n2021-01-05,1,1,1,1,5,e\n"
                 "2021-01-04,1,1,1,1,4,d\n", &b));
  const tg_bar_column *day = col(&b, "day", TG_COLUMN_NUMERIC), *tag = col(&b, "tag", TG_COLUMN_CATEGORY);
  if (day && tag) CHECK(day->values[0] == 4 && day->values[2] == 6 && !strcmp(cat(tag, 0), "d") && !strcmp(cat(tag, 2), "f"));
  tg_bars_free(&b);
  /* a file out of order, read and sorted: day and tag name each bar's own day */
  char dir[] = "/tmp/tickgrad_cols_XXXXXX", path[512];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/mixed.csv", dir);
  char text[4096];
  size_t k = (size_t)snprintf(text, sizeof text, "ts,open,high,low,close,day,tag\n");
  int order[12] = {3, 1, 2, 9, 4, 12, 5, 7, 6, 8, 11, 10};
  for (int i = 0; i < 12; i++)
    k += (size_t)snprintf(text + k, sizeof text - k, "2021-01-%02d,%d,%d,%d,%d,%d,%s\n", order[i], order[i], order[i],
                          order[i], order[i], order[i] * 10, order[i] % 3 ? "odd" : "three");
  write_file(path, text);
  FILE *warn = tmpfile();
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  o.warn = warn;
  CHECK_OK(tg_bars_read(path, &o, &b));
  CHECK(b.n == 12 && b.reordered > 0);
  day = col(&b, "day", TG_COLUMN_NUMERIC);
  tag = col(&b, "tag", TG_COLUMN_CATEGORY);
  int bad = 0;
  for (int64_t i = 0; day && tag && i < b.n; i++)
    bad += day->values[i] != b.close[i] * 10 || strcmp(cat(tag, i), (int)b.close[i] % 3 ? "odd" : "three") != 0 ||
           b.close[i] != (double)(i + 1);
  CHECK_MSG(bad == 0, "%d rows lost their extra values in the sort", bad);
  tg_bars_free(&b);
  fclose(warn);

  /* append: numbers concatenated, category names merged by name, a column one side lacks missing there */
  tg_bars x, y;
  CHECK_OK(parse("x.csv", "ts,open,high,low,close,s,val\n2021-01-01,1,1,1,1,b,1\n2021-01-02,1,1,1,1,a,2\n", &x));
  CHECK_OK(parse("y.csv", "ts,open,high,low,close,s,wt\n2021-01-03,1,1,1,1,c,7\n2021-01-04,1,1,1,1,a,8\n"
                 "2021-01-05,1,1,1,1,,9\n", &y));
  CHECK_OK(tg_bars_append(&x, &y));
  const tg_bar_column *s = col(&x, "s", TG_COLUMN_CATEGORY), *v = col(&x, "val", TG_COLUMN_NUMERIC),
                      *w = col(&x, "wt", TG_COLUMN_NUMERIC);
  CHECK(x.n == 5 && x.n_cols == 3);
  if (s && v && w) {
    CHECK(!strcmp(cat(s, 0), "b") && !strcmp(cat(s, 1), "a") && !strcmp(cat(s, 2), "c") && !strcmp(cat(s, 3), "a") &&
          !strcmp(cat(s, 4), "-") && s->codes[1] == s->codes[3] && s->cats.n == 3);
    CHECK(v->values[1] == 2 && isnan(v->values[2]) && isnan(w->values[0]) && w->values[4] == 9);
  }
  /* the same name with another kind is refused and leaves dst as it was */
  tg_bars z;
  CHECK_OK(parse("z.csv", "ts,open,high,low,close,val,q\n2021-01-06,1,1,1,1,text,1\n", &z));
  CHECK_STATUS(tg_bars_append(&x, &z), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "'val'"), "%s", tg_last_error());
  CHECK(x.n == 5 && x.n_cols == 3);
  tg_bars_free(&x);
  tg_bars_free(&y);
  tg_bars_free(&z);
  unlink(path);
  rmdir(dir);
}

/* Several files keep the columns every one has, and say which they dropped. */
static void test_several(void) {
  char dir[] = "/tmp/tickgrad_cols_XXXXXX", a[512], b2[512], c[512];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(a, sizeof a, "%s/a.csv", dir);
  snprintf(b2, sizeof b2, "%s/b.csv", dir);
  snprintf(c, sizeof c, "%s/c.csv", dir);
  write_file(a, "ts,open,high,low,close,both,only_a,kind,sector\n2021-01-01,1,1,1,1,1,5,3,x\n2021-01-03,1,1,1,1,3,5,3,y\n");
  write_file(b2, "ts,open,high,low,close,sector,only_b,kind,both\n2021-01-02,1,1,1,1,z,5,text,2\n");
  FILE *warn = tmpfile();
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  o.warn = warn;
  tg_bars b;
  CHECK_OK(tg_bars_read(dir, &o, &b));
  CHECK(b.n == 3 && b.n_cols == 2);
  const tg_bar_column *both = col(&b, "both", TG_COLUMN_NUMERIC), *sec = col(&b, "sector", TG_COLUMN_CATEGORY);
  if (both && sec)
    CHECK(both->values[0] == 1 && both->values[1] == 2 && both->values[2] == 3 && !strcmp(cat(sec, 1), "z") &&
          !strcmp(cat(sec, 2), "y"));
  const char *msg = read_all(warn);
  CHECK_MSG(strstr(msg, "kept only the extra columns every file has") && strstr(msg, "'only_a' (not in ") &&
                strstr(msg, "b.csv)") && strstr(msg, "'only_b' (not in ") && strstr(msg, "a.csv)") &&
                strstr(msg, "'kind' (numeric in ") && strstr(msg, "a category in "),
            "%s", msg);
  CHECK(count(msg, "kept only") == 1); /* one line (the other one counts the bars sorted) */
  fclose(warn);
  tg_bars_free(&b);
  /* tg_bars_read_paths: the same rule over its paths, named in the warning */
  write_file(c, "ts,open,high,low,close,both\n2021-01-04,1,1,1,1,4\n");
  warn = tmpfile();
  o.warn = warn;
  const char *paths[2] = {a, c};
  CHECK_OK(tg_bars_read_paths(2, paths, &o, &b));
  CHECK(b.n == 3 && b.n_cols == 1 && tg_bars_column(&b, "both") && tg_bars_column(&b, "both")->values[2] == 4);
  msg = read_all(warn);
  CHECK_MSG(strstr(msg, "'sector' (not in ") && strstr(msg, "c.csv)") && strstr(msg, "'only_a'"), "%s", msg);
  fclose(warn);
  tg_bars_free(&b);
  /* files with the same columns: no warning */
  unlink(b2);
  write_file(b2, "ts,open,high,low,close,both,only_a,kind,sector\n2021-01-02,1,1,1,1,2,5,3,z\n");
  warn = tmpfile();
  o.warn = warn;
  CHECK_OK(tg_bars_read(dir, &o, &b)); /* a, b and c: only "both" is in all three */
  CHECK(b.n == 4 && b.n_cols == 1);
  tg_bars_free(&b);
  unlink(c);
  CHECK_OK(tg_bars_read(dir, &o, &b));
  CHECK(b.n == 3 && b.n_cols == 4);
  tg_bars_free(&b);
  msg = read_all(warn);
  CHECK_MSG(count(msg, "'only_a'") == 1 && count(msg, "kept only") == 1, "%s", msg);
  fclose(warn);
  unlink(a);
  unlink(b2);
  rmdir(dir);
}

/* Numeric files stay one pass: a 20,000-row file with extra columns allocates a handful of buffers. */
static void test_allocations(void) {
  size_t cap = 20000 * 96;
  char *text = malloc(cap);
  size_t k = (size_t)snprintf(text, cap, "Date,Open,High,Low,Close,Volume,Adj Close,Trades,Side\n");
  for (int i = 0; i < 20000; i++)
    k += (size_t)snprintf(text + k, cap - k, "%d-01-01 %02d:%02d:00,%d.25,%d.5,%d,%d.125,%d,%d.5,%d,%s\n", 2000 + i / 1440,
                          i / 60 % 24, i % 60, i, i + 1, i, i, i * 7, i, i % 13, i % 3 ? "buy" : "sell");
  tg_bars b;
  tg_bars_init(&b);
  uint64_t before = tg_alloc_count();
  CHECK_OK(tg_csv_parse("many.csv", text, k, NULL, &b));
  uint64_t used = tg_alloc_count() - before;
  CHECK_MSG(used <= 40, "%llu allocations for 20,000 rows", (unsigned long long)used);
  const tg_bar_column *adj = col(&b, "Adj Close", TG_COLUMN_NUMERIC), *side = col(&b, "Side", TG_COLUMN_CATEGORY);
  if (adj && side) CHECK(b.n == 20000 && adj->values[19999] == 19999.5 && !strcmp(cat(side, 19998), "sell") && side->cats.n == 2);
  tg_bars_free(&b);
  free(text);
}

int main(void) {
  test_kept();
  test_errors();
  test_aligned();
  test_several();
  test_allocations();
  return tg_test_finish();
}
