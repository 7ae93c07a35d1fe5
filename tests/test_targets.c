/* Targets beyond log returns, against hand-made cases: a column, labels joined to bars, triple barriers, purging by a
 * label's span, classification metrics, and the errors for bad inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/tickgrad.h"

#define T0 1704153600LL /* 2024-01-02 00:00 UTC */
#define HOUR 3600000000000LL

static char g_tmp[256];

/* n hourly bars from T0 with the given closes (open = close); inst ids when k > 1 (bar i belongs to ids[i % k]). */
static void hand_bars(tg_bars *b, const double *close, int64_t n, int k, const uint32_t *ids) {
  tg_bars_init(b);
  tg_bars_reserve(b, n, k > 1);
  for (int64_t i = 0; i < n; i++) {
    int64_t ts = T0 * 1000000000LL + (k > 1 ? i / k : i) * HOUR;
    tg_bars_push(b, ts, close[i], close[i], close[i], close[i], 1.0, k > 1 ? ids[i % k] : 0);
  }
}

static const char *write_labels(const char *name, const char *text) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", g_tmp, name);
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
  return path;
}

static tg_status label_targets(const tg_bars *b, const char *name, const char *text, FILE *warn, tg_targets *y) {
  tg_layout lay;
  tg_status st = tg_layout_build(b, &lay);
  if (st != TG_OK) return st;
  tg_target_opts o = {0};
  char spec[600];
  snprintf(spec, sizeof spec, "labels:%s", write_labels(name, text));
  st = tg_target_parse(spec, &o);
  o.warn = warn;
  if (st == TG_OK) st = tg_targets_compute(b, &lay, &o, y);
  tg_layout_free(&lay);
  return st;
}

static int msg_has(const char *s) { return strstr(tg_last_error(), s) != NULL; }

static void parse_forms(void) {
  tg_target_opts o;
  CHECK_OK(tg_target_parse("logret", &o));
  CHECK(o.kind == TG_TARGET_LOGRET);
  CHECK_OK(tg_target_parse("col:spread:logdiff", &o));
  CHECK(o.kind == TG_TARGET_COLUMN && strcmp(o.column, "spread") == 0 && o.transform == TG_COL_LOGDIFF);
  CHECK_OK(tg_target_parse("col:a:b", &o));
  CHECK(strcmp(o.column, "a:b") == 0 && o.transform == TG_COL_LEVEL);
  CHECK_OK(tg_target_parse("triple-barrier:2,1.5,12", &o));
  CHECK(o.kind == TG_TARGET_TRIPLE_BARRIER && o.tb_up == 2 && o.tb_down == 1.5 && o.tb_bars == 12);
  CHECK(tg_target_is_class(&o));
  CHECK_STATUS(tg_target_parse("triple-barrier:2,1.5", &o), TG_ERR_INVALID);
  CHECK_STATUS(tg_target_parse("triple-barrier:0,1,5", &o), TG_ERR_INVALID);
  CHECK_STATUS(tg_target_parse("price", &o), TG_ERR_INVALID);
  CHECK(msg_has("price") && msg_has("triple-barrier:UP,DOWN,BARS"));
}

/* A column value beyond float32's range is refused naming the target, the bar and its time (not left to become an Inf
 * target, an Inf training std, a scale of 1 and an Inf loss); as a difference of two values in range too. */
static void column_beyond_float(tg_bars *b, const tg_layout *lay, tg_target_opts *o) {
  tg_targets y;
  double keep = b->cols[0].values[4];
  b->cols[0].values[4] = 1e300;
  o->transform = TG_COL_LEVEL;
  CHECK_STATUS(tg_targets_compute(b, lay, o, &y), TG_ERR_NUMERIC);
  CHECK_MSG(msg_has("target col:spread: bar 4 (2024-01-02 04:00:00) holds 1e+300") && msg_has("float32"), "%s",
            tg_last_error());
  o->transform = TG_COL_LOGDIFF; /* a log ratio of any two positive doubles fits */
  CHECK_OK(tg_targets_compute(b, lay, o, &y));
  tg_targets_free(&y);
  b->cols[0].values[4] = 3e38;
  b->cols[0].values[5] = -3e38;
  o->transform = TG_COL_DIFF;
  CHECK_STATUS(tg_targets_compute(b, lay, o, &y), TG_ERR_NUMERIC);
  CHECK_MSG(msg_has("col:spread:diff: bar 4 (2024-01-02 04:00:00)") && msg_has("bar 5 (2024-01-02 05:00:00)") &&
            msg_has("difference -6e+38"), "%s", tg_last_error());
  b->cols[0].values[4] = keep;
  b->cols[0].values[5] = 16;
  o->transform = TG_COL_LOGDIFF;
}

static void column(void) {
  double c[6] = {100, 101, 102, 103, 104, 105};
  tg_bars b;
  hand_bars(&b, c, 6, 1, NULL);
  CHECK_OK(tg_bars_add_column(&b, "spread", TG_COLUMN_NUMERIC));
  double v[6] = {1, 2, NAN, 4, 8, 16};
  memcpy(b.cols[0].values, v, sizeof v);
  tg_layout lay;
  CHECK_OK(tg_layout_build(&b, &lay));
  tg_targets y;
  tg_target_opts o = {.nh = 2, .horizons = {1, 2}};
  CHECK_OK(tg_target_parse("col:spread:diff", &o) == TG_OK ? TG_OK : TG_ERR_INVALID);
  o.nh = 2, o.horizons[0] = 1, o.horizons[1] = 2;
  CHECK_OK(tg_targets_compute(&b, &lay, &o, &y));
  CHECK(y.ret[0] == 1.0f && isnan(y.ret[1]) && y.reach[0] == -1); /* row 0: 2-1, NaN-1 */
  CHECK(y.ret[6] == 4.0f && y.ret[7] == 12.0f && y.reach[3] == 2);
  CHECK(y.ret[8] == 8.0f && isnan(y.ret[9]) && y.reach[4] == -1 && y.reach[5] == -1 && y.n_classes == 0);
  tg_targets_free(&y);
  o.transform = TG_COL_LOGDIFF;
  CHECK_OK(tg_targets_compute(&b, &lay, &o, &y));
  CHECK(fabsf(y.ret[6] - (float)log(2.0)) < 1e-7f && fabsf(y.ret[7] - (float)log(4.0)) < 1e-7f);
  tg_targets_free(&y);
  b.cols[0].values[1] = -1;
  CHECK_STATUS(tg_targets_compute(&b, &lay, &o, &y), TG_ERR_NUMERIC);
  CHECK_MSG(msg_has("bar 1 (2024-01-02 01:00:00)") && msg_has("> 0") && !msg_has("ts 17"), "%s", tg_last_error());
  b.cols[0].values[1] = 2;
  column_beyond_float(&b, &lay, &o);
  strcpy(o.column, "sprd");
  CHECK_STATUS(tg_targets_compute(&b, &lay, &o, &y), TG_ERR_INVALID);
  CHECK(msg_has("sprd") && msg_has("spread"));
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

/* Triple barriers on closes worked out by hand with a 2-return volatility window, up 1 and down 0.5 sigma, 2 bars:
 * bar 2: sigma = sqrt(2) log(1.01) = 0.01407, next close 102 is +0.0198 >= sigma: up at 1; bar 3: sigma 0.02104,
 * 99 is -0.0299 <= -0.0105: down at 1; bar 5: sigma 0.0491, 103 and 103 move 0: time (2); bar 7: sigma 0 (two flat
 * returns), 104 is above the zero-width barrier: up. Bars 0, 1 lack the window, 8, 9 the two bars ahead. */
static void triple_barrier(void) {
  double c[10] = {100, 101, 100, 102, 99, 103, 103, 103, 104, 100};
  int want_cls[10] = {-1, -1, 2, 0, 2, 1, 1, 2, -1, -1}, want_reach[10] = {-1, -1, 1, 1, 1, 2, 2, 1, -1, -1};
  tg_bars b;
  hand_bars(&b, c, 10, 1, NULL);
  tg_layout lay;
  CHECK_OK(tg_layout_build(&b, &lay));
  tg_target_opts o;
  CHECK_OK(tg_target_parse("triple-barrier:1,0.5,2", &o));
  o.tb_vol_window = 2;
  tg_targets y;
  CHECK_OK(tg_targets_compute(&b, &lay, &o, &y));
  CHECK(y.n_classes == 3 && strcmp(y.class_names[0], "down") == 0 && strcmp(y.class_names[1], "time") == 0 &&
        strcmp(y.class_names[2], "up") == 0);
  for (int i = 0; i < 10; i++)
    CHECK_MSG(y.cls[i] == want_cls[i] && y.reach[i] == want_reach[i], "bar %d: class %d reach %d, want %d %d", i,
              y.cls[i], y.reach[i], want_cls[i], want_reach[i]);
  CHECK(y.last_valid[0] == 7);
  tg_targets_free(&y);
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

/* Labels at, between, before and after the bars; a repeat; a label's end. */
static void labels_join(void) {
  double c[10] = {100, 101, 102, 103, 104, 105, 106, 107, 108, 109};
  tg_bars b;
  hand_bars(&b, c, 10, 1, NULL);
  FILE *warn = tmpfile();
  tg_targets y;
  CHECK_OK(label_targets(&b, "a.csv",
                         "ts,label,end\n"
                         "2024-01-01 23:00:00,buy,\n"                  /* before the first bar: dropped */
                         "2024-01-02 02:30:00,buy,2024-01-02 05:00:00\n" /* bar 2, its end bar 5 */
                         "2024-01-02 02:10:00,buy,\n"                  /* bar 2 again, same name: counted once */
                         "2024-01-02 07:00:00,sell,\n"                 /* exactly bar 7 */
                         "2024-01-02 09:30:00,sell,\n"                 /* half an interval after the last bar: bar 9 */
                         "2024-01-02 14:00:00,buy,\n",                 /* five hours after it: dropped */
                         warn, &y));
  int want[10] = {1, 1, 0, 1, 1, 1, 1, 2, 1, 2}; /* buy 0, none 1, sell 2 */
  CHECK(y.n_classes == 3 && strcmp(y.class_names[0], "buy") == 0 && strcmp(y.class_names[1], "none") == 0 &&
        strcmp(y.class_names[2], "sell") == 0);
  for (int i = 0; i < 10; i++) CHECK_MSG(y.cls[i] == want[i], "bar %d: class %d, want %d", i, y.cls[i], want[i]);
  CHECK(y.reach[2] == 3 && y.reach[7] == 0 && y.reach[0] == 0);
  char text[512] = "";
  rewind(warn);
  size_t got = fread(text, 1, sizeof text - 1, warn);
  text[got] = '\0';
  CHECK_MSG(strstr(text, "2 of 6 labels dropped (1 before") && strstr(text, "1 more than") &&
            strstr(text, "1 repeated"), "warning: %s", text);
  fclose(warn);
  tg_targets_free(&y);

  CHECK_STATUS(label_targets(&b, "b.csv", "ts,label\n2024-01-02 03:00:00,buy\n2024-01-02 03:20:00,sell\n", NULL, &y),
               TG_ERR_FORMAT);
  CHECK(msg_has("lines 2 ('buy') and 3 ('sell')"));
  CHECK_STATUS(label_targets(&b, "c.csv", "when,label\n2024-01-02 03:00:00,buy\n", NULL, &y), TG_ERR_FORMAT);
  CHECK(msg_has("header") && msg_has("ts"));
  CHECK_STATUS(label_targets(&b, "d.csv", "ts,label\n2024-01-05 03:00:00,buy\n", NULL, &y), TG_ERR_INVALID);
  CHECK(msg_has("none of its 1 labels"));
  CHECK_STATUS(label_targets(&b, "e.csv", "ts,label\nyesterday,buy\n", NULL, &y), TG_ERR_FORMAT);
  CHECK(msg_has("yesterday"));
  CHECK_STATUS(label_targets(&b, "f.csv", "ts,label,end\n2024-01-02 03:00:00,buy,2024-01-02 01:00:00\n", NULL, &y),
               TG_ERR_FORMAT);
  CHECK(msg_has("line 2") && msg_has("end is before"));
  tg_bars_free(&b);

  uint32_t ids[2] = {3, 5};
  double c2[8] = {100, 50, 101, 51, 102, 52, 103, 53};
  hand_bars(&b, c2, 8, 2, ids);
  CHECK_OK(label_targets(&b, "g.csv", "ts,instrument,label\n2024-01-02 01:00:00,5,up\n2024-01-02 01:00:00,3,down\n",
                         NULL, &y));
  CHECK(y.n_classes == 3 && y.cls[3] == 2 && y.cls[2] == 0 && y.cls[0] == 1); /* down, none, up */
  tg_targets_free(&y);
  CHECK_STATUS(label_targets(&b, "h.csv", "ts,instrument,label\n2024-01-02 01:00:00,7,up\n", NULL, &y), TG_ERR_INVALID);
  CHECK(msg_has("instrument '7'") && msg_has("not in the bars"));
  CHECK_STATUS(label_targets(&b, "i.csv", "ts,label\n2024-01-02 01:00:00,up\n", NULL, &y), TG_ERR_FORMAT);
  CHECK(msg_has("2 instruments") && msg_has("instrument column"));
  tg_bars_free(&b);
}

/* A label whose span reaches past the training region must not train: purging by each label's end. */
static void purging(void) {
  enum { N = 200 };
  double c[N];
  for (int i = 0; i < N; i++) c[i] = 100 + (i % 7);
  tg_bars b;
  hand_bars(&b, c, N, 1, NULL);
  char text[N * 48 + 32] = "ts,label,end\n";
  for (int i = 0; i < N; i++) { /* every bar labelled, each label ending 10 bars later (or at the last bar) */
    char line[64];
    int e = i + 10 < N ? i + 10 : N - 1;
    snprintf(line, sizeof line, "2024-01-%02d %02d:00:00,%s,2024-01-%02d %02d:00:00\n", 2 + i / 24, i % 24,
             i % 2 ? "a" : "b", 2 + e / 24, e % 24);
    strcat(text, line);
  }
  tg_dataset_opts o = {0};
  char spec[600];
  snprintf(spec, sizeof spec, "labels:%s", write_labels("purge.csv", text));
  CHECK_OK(tg_target_parse(spec, &o.targets));
  o.features.spec = "logret";
  o.splits.window = 4;
  tg_dataset ds;
  CHECK_OK(tg_dataset_build(&b, &o, &ds));
  const tg_split *tr = &ds.splits.s[TG_TRAIN], *va = &ds.splits.s[TG_VAL];
  int64_t val_first = 0; /* the first bar of the validation region */
  while (val_first < N && b.ts[val_first] < va->ts_begin) val_first++;
  int64_t last = tr->end[0] - 1, row = last + 3;
  CHECK(tr->end[0] > tr->begin[0]);
  CHECK_MSG(row + ds.y.reach[row] < val_first, "last training window's label ends at bar %lld, validation starts at %lld",
            (long long)(row + ds.y.reach[row]), (long long)val_first);
  CHECK(row + 1 + ds.y.reach[row + 1] >= val_first); /* and it is the last such: the next one's label overlaps */
  CHECK(val_first - tr->end[0] - 3 >= 10);           /* 10 bars purged, not the 1 of a one-bar target */
  tg_dataset_free(&ds);
  tg_bars_free(&b);
}

static void class_metrics(void) {
  int32_t y[5] = {0, 1, 2, 1, -1};
  float p[15] = {0.7f, 0.2f, 0.1f, 0.1f, 0.3f, 0.6f, 0.2f, 0.2f, 0.6f, 0.1f, 0.8f, 0.1f, 1, 0, 0};
  double prior[3] = {0.5, 0.3, 0.2};
  int64_t cm[9];
  tg_class_report r = {.confusion = cm};
  CHECK_OK(tg_class_metrics(y, p, 5, 3, prior, &r));
  CHECK(r.n == 4 && fabs(r.accuracy - 0.75) < 1e-12);                          /* rows 0, 2, 3 right */
  CHECK(fabs(r.balanced_accuracy - (1.0 + 0.5 + 1.0) / 3) < 1e-12);            /* recalls 1, 1/2, 1 */
  double ll = -(log(0.7f) + log(0.3f) + log(0.6f) + log(0.8f)) / 4;
  CHECK(fabs(r.log_loss - ll) < 1e-9);
  CHECK(fabs(r.base_accuracy - 0.25) < 1e-12 && fabs(r.base_balanced_accuracy - 1.0 / 3) < 1e-12);
  CHECK(fabs(r.base_log_loss + (log(0.5) + 2 * log(0.3) + log(0.2)) / 4) < 1e-12);
  int64_t want_cm[9] = {1, 0, 0, 0, 1, 1, 0, 0, 1};
  CHECK(memcmp(cm, want_cm, sizeof cm) == 0);
  y[0] = 3;
  CHECK_STATUS(tg_class_metrics(y, p, 5, 3, prior, &r), TG_ERR_INVALID);
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_targets_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("no temporary folder");
  parse_forms();
  column();
  triple_barrier();
  labels_join();
  purging();
  class_metrics();
  return tg_test_finish();
}
