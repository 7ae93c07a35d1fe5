/* Splits with holes: a bad target value or a long label costs exactly the windows whose target row it is (counted by
 * hand), the sampler and the stage draw only valid starts, and the window export lists only those. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"

#define T0 1704153600LL /* 2024-01-02 00:00 UTC */
#define HOUR 3600000000000LL
#define N 1000 /* bars; by the default fractions train is rows [0, 700), validation [700, 850), test [850, 1000) */
#define L 4    /* window; the target row is its last (offset 3) */

static char g_tmp[256];

/* N hourly bars from T0 (closes 100 + i % 7) and a numeric column "x" = 1 + i % 5, with x[bad[i]] = v. */
static void bars_with_x(tg_bars *b, const int *bad, int n_bad, double v) {
  tg_bars_init(b);
  tg_bars_reserve(b, N, 0);
  for (int64_t i = 0; i < N; i++) {
    double c = 100 + (double)(i % 7);
    tg_bars_push(b, T0 * 1000000000LL + i * HOUR, c, c, c, c, 1.0, 0);
  }
  CHECK_OK(tg_bars_add_column(b, "x", TG_COLUMN_NUMERIC));
  for (int64_t i = 0; i < N; i++) b->cols[0].values[i] = 1 + (double)(i % 5);
  for (int i = 0; i < n_bad; i++) b->cols[0].values[bad[i]] = v;
}

/* The dataset of features "logret" (warm-up 1), windows of L bars and the target spec (one horizon of 1 bar). */
static tg_status build(const tg_bars *b, const char *target, tg_dataset *ds) {
  tg_dataset_opts o = {0};
  tg_status st = tg_target_parse(target, &o.targets);
  if (st != TG_OK) return st;
  o.features.spec = "logret";
  o.splits.window = L;
  return tg_dataset_build(b, &o, ds);
}

/* 1 when position p is a start of split s (inside one of its runs). */
static int in_runs(const tg_split *s, int k, int64_t p) {
  for (int64_t r = 0; r < tg_split_n_runs(s, k); r++) {
    int64_t a, e;
    tg_split_run(s, r, &a, &e);
    if (p >= a && p < e) return 1;
  }
  return 0;
}

/* By hand, clean: train starts 1 (past logret's warm-up) .. 695 (the target row p + 3 reads x[p + 4], which must be
 * a train row, < 700): 695; validation 700 .. 845: 146; test 850 .. 995: 146. */
static void clean_control(void) {
  tg_bars b;
  tg_dataset ds;
  bars_with_x(&b, NULL, 0, 0);
  CHECK_OK(build(&b, "col:x", &ds));
  const tg_split *tr = &ds.splits.s[TG_TRAIN];
  CHECK_MSG(tr->count == 695 && ds.splits.s[TG_VAL].count == 146 && ds.splits.s[TG_TEST].count == 146,
            "clean counts %lld %lld %lld", (long long)tr->count, (long long)ds.splits.s[TG_VAL].count,
            (long long)ds.splits.s[TG_TEST].count);
  CHECK(tr->n_runs == 1 && tr->run_begin[0] == 1 && tr->run_end[0] == 696);
  char buf[200];
  for (int s = 0; s < TG_SPLIT_COUNT; s++) {
    CHECK(ds.splits.s[s].dropped[TG_DROP_TARGET] == 0 && ds.splits.s[s].dropped[TG_DROP_SPAN] == 0);
    CHECK(tg_split_drops_str(&ds.splits.s[s], NULL, buf, sizeof buf)[0] == 0);
  }
  tg_dataset_free(&ds);
  tg_bars_free(&b);
}

/* One bad x at row 100: only row 99's target reads it, so only the window starting at 96 goes (694 of 695). */
static void one_bad_value(double v) {
  tg_bars b;
  tg_dataset ds;
  int bad[1] = {100};
  bars_with_x(&b, bad, 1, v);
  CHECK_OK(build(&b, "col:x", &ds));
  const tg_split *tr = &ds.splits.s[TG_TRAIN];
  CHECK_MSG(tr->count == 694, "x = %g at row 100: train %lld, want 694", v, (long long)tr->count);
  CHECK(tr->dropped[TG_DROP_TARGET] == 1 && tr->dropped[TG_DROP_SPAN] == 0);
  CHECK(!in_runs(tr, 1, 96) && in_runs(tr, 1, 95) && in_runs(tr, 1, 97) && in_runs(tr, 1, 695));
  CHECK(tr->begin[0] == 1 && tr->end[0] == 696 && tr->n_runs == 2);
  CHECK(ds.splits.s[TG_VAL].count == 146 && ds.splits.s[TG_TEST].count == 146);
  char buf[200];
  tg_target_opts t = {0};
  CHECK_OK(tg_target_parse("col:x", &t));
  CHECK_MSG(strcmp(tg_split_drops_str(tr, &t, buf, sizeof buf), "1 dropped: target 'x' missing or not finite at 1 bar")
            == 0, "%s", buf);
  tg_dataset_free(&ds);
  tg_bars_free(&b);
}

/* inf at rows 50, 100, .., 950: target rows 49, 99, ..: train loses the 13 whose rows are 49 .. 649 (682 of 695; row
 * 699's window is past the split anyway), validation those at 749 and 799 (144 of 146; 849's is past it), test 899
 * and 949 (144). */
static void inf_every_50(tg_dataset *ds, tg_bars *b) {
  int bad[19];
  for (int i = 0; i < 19; i++) bad[i] = 50 * (i + 1);
  bars_with_x(b, bad, 19, INFINITY);
  CHECK_OK(build(b, "col:x", ds));
  const tg_split *s = ds->splits.s;
  CHECK_MSG(s[TG_TRAIN].count == 682 && s[TG_VAL].count == 144 && s[TG_TEST].count == 144, "counts %lld %lld %lld",
            (long long)s[TG_TRAIN].count, (long long)s[TG_VAL].count, (long long)s[TG_TEST].count);
  CHECK(s[TG_TRAIN].dropped[TG_DROP_TARGET] == 13 && s[TG_VAL].dropped[TG_DROP_TARGET] == 2 &&
        s[TG_TEST].dropped[TG_DROP_TARGET] == 2);
  int bad_in = 0;
  for (int i = 0; i < 19; i++) bad_in += in_runs(&s[TG_TRAIN], 1, bad[i] - 1 - (L - 1));
  CHECK(bad_in == 0);
}

/* Labels on every 10th bar without an end; with one at bar 500 ending at the last bar, only the window whose target
 * row is 500 (start 497) goes: 695 of the control's 696 (reach 0: starts 1 .. 696). */
static void long_label(void) {
  tg_bars b;
  bars_with_x(&b, NULL, 0, 0);
  char *text = malloc(N * 64), path[2][320];
  for (int far = 0; far < 2; far++) {
    strcpy(text, "ts,label,end\n");
    for (int i = 0; i < N; i += 10) {
      char ts[32], end[32] = "", line[96];
      time_t t = (time_t)(T0 + i * 3600LL), e = (time_t)(T0 + (N - 1) * 3600LL);
      strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", gmtime(&t));
      if (far && i == 500) strftime(end, sizeof end, "%Y-%m-%d %H:%M:%S", gmtime(&e));
      snprintf(line, sizeof line, "%s,%s,%s\n", ts, (i / 10) % 2 ? "a" : "b", end);
      strcat(text, line);
    }
    snprintf(path[far], sizeof path[far], "labels:%s/labels%d.csv", g_tmp, far);
    FILE *f = fopen(path[far] + 7, "w");
    fputs(text, f);
    fclose(f);
  }
  tg_dataset c, d;
  CHECK_OK(build(&b, path[0], &c));
  CHECK_OK(build(&b, path[1], &d));
  const tg_split *ct = &c.splits.s[TG_TRAIN], *dt = &d.splits.s[TG_TRAIN];
  CHECK_MSG(ct->count == 696 && dt->count == 695, "labels: control %lld, with a far end %lld", (long long)ct->count,
            (long long)dt->count);
  CHECK(dt->dropped[TG_DROP_SPAN] == 1 && dt->dropped[TG_DROP_TARGET] == 0 && ct->dropped[TG_DROP_SPAN] == 0);
  CHECK(!in_runs(dt, 1, 497) && in_runs(dt, 1, 496) && in_runs(dt, 1, 498));
  CHECK(d.splits.s[TG_VAL].count == c.splits.s[TG_VAL].count && d.splits.s[TG_TEST].count == c.splits.s[TG_TEST].count);
  char buf[200];
  tg_target_opts t = {0};
  CHECK_OK(tg_target_parse(path[1], &t));
  CHECK_MSG(strcmp(tg_split_drops_str(dt, &t, buf, sizeof buf), "1 dropped: 1 label ends past the split") == 0, "%s",
            buf);
  tg_dataset_free(&c);
  tg_dataset_free(&d);
  tg_bars_free(&b);
  unlink(path[0] + 7);
  unlink(path[1] + 7);
  free(text);
}

/* A shuffled epoch of the holed training split draws every valid start once and no hole; the stage's batches (on the
 * host, and through a copying device) hold exactly those windows. */
static void sampler_and_stage(const tg_dataset *ds) {
  const tg_split *tr = &ds->splits.s[TG_TRAIN];
  int64_t count = tr->count, got = 0;
  int64_t *starts = malloc((size_t)count * sizeof *starts);
  unsigned char *seen = calloc(N, 1);
  tg_sampler s;
  CHECK_OK(tg_sampler_init(&s, &ds->splits, TG_TRAIN, 7, 1));
  CHECK_OK(tg_sampler_next(&s, starts, count, &got));
  int bad = 0;
  for (int64_t i = 0; i < got; i++) {
    int64_t p = starts[i];
    bad += p < 0 || p >= N || !in_runs(tr, 1, p) || seen[p] || !(ds->y.reach[ds->layout.rows[p + L - 1]] >= 0);
    if (p >= 0 && p < N) seen[p] = 1;
  }
  CHECK_MSG(got == count && bad == 0, "sampler: %lld of %lld starts, %d not valid or repeated", (long long)got,
            (long long)count, bad);
  tg_device devs[2] = {tg_cpu(0), tg_cpu(1)};
  for (int d = 0; d < 2; d++) {
    tg_stage *st;
    tg_batch bt;
    int64_t idx[16 * L], n_bad = 0, taken = 0;
    CHECK_OK(tg_stage_new(devs[d], TG_STAGE_RESIDENT, 16, &st));
    CHECK_OK(tg_stage_dataset(st, ds));
    CHECK_OK(tg_sampler_seek(&s, 1, 0));
    while (taken < count) {
      CHECK_OK(tg_stage_next(st, &s, 16, &bt, &got));
      if (got < 1) break;
      CHECK_OK(tg_stage_to_host(st, &bt.idx, idx));
      for (int64_t i = 0; i < got; i++) /* one instrument: positions are rows */
        n_bad += !in_runs(tr, 1, idx[i * L]) || idx[i * L + L - 1] != idx[i * L] + L - 1;
      taken += got;
    }
    CHECK_MSG(taken == count && n_bad == 0, "stage on cpu:%d: %lld windows, %lld outside the valid starts", d,
              (long long)taken, (long long)n_bad);
    tg_stage_free(st);
  }
  tg_sampler_free(&s);
  free(starts);
  free(seen);
}

/* The window export (tft, encoder 8, 2 horizons: target row p + 7 reads x at p + 8 and p + 9) with one NaN x lists
 * the clean export's training starts less exactly the 2 whose target reads it, and every listed start's targets are
 * finite. */
static void export_lists_valid(void) {
  int64_t counts[2] = {0, 0};
  for (int nan = 0; nan < 2; nan++) {
    tg_bars b;
    int bad[1] = {300};
    bars_with_x(&b, bad, nan, NAN);
    tg_train_config c = tg_train_defaults(TG_MODEL_TFT);
    CHECK_OK(tg_train_config_set(&c, "target", "col:x"));
    CHECK_OK(tg_train_config_set(&c, "features", "logret,tod,dow"));
    CHECK_OK(tg_train_config_set(&c, "tft.enc_len", "8"));
    CHECK_OK(tg_train_config_set(&c, "horizons", "2"));
    c.log = NULL;
    char path[320];
    snprintf(path, sizeof path, "%s/w%d.safetensors", g_tmp, nan);
    CHECK_OK(tg_train_export_windows(&c, &b, path));
    tg_safetensors *f = NULL;
    CHECK_OK(tg_safetensors_load(path, &f));
    const tg_tensor *tr = f ? tg_safetensors_find(f, "train_starts") : NULL;
    const tg_tensor *y = f ? tg_safetensors_find(f, "y") : NULL, *rows = f ? tg_safetensors_find(f, "rows") : NULL;
    CHECK(tr && y && rows);
    if (tr && y && rows) {
      const int64_t *p = tr->data, *rw = rows->data;
      const float *yv = y->data; /* [n, 2] */
      int bad_y = 0;
      counts[nan] = tr->shape[0];
      for (int64_t i = 0; i < tr->shape[0]; i++) {
        int64_t r = rw[p[i] + 7];
        bad_y += !isfinite(yv[r * 2]) || !isfinite(yv[r * 2 + 1]) || (i > 0 && p[i] <= p[i - 1]);
      }
      CHECK_MSG(bad_y == 0, "export: %d starts with a missing target or out of order", bad_y);
    }
    /* every split's starts: the test split's after the validation split's */
    const tg_tensor *va = f ? tg_safetensors_find(f, "val_starts") : NULL, *te = f ? tg_safetensors_find(f, "test_starts") : NULL;
    CHECK(va && te && va->shape[0] > 0 && te->shape[0] > 0);
    if (va && te && va->shape[0] > 0 && te->shape[0] > 0)
      CHECK(((const int64_t *)te->data)[0] > ((const int64_t *)va->data)[va->shape[0] - 1]);
    tg_safetensors_free(f);
    unlink(path);
    tg_bars_free(&b);
  }
  CHECK_MSG(counts[1] == counts[0] - 2 && counts[0] > 600, "export: %lld training starts with a NaN x, %lld clean",
            (long long)counts[1], (long long)counts[0]);
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_split_holes_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("no temporary folder");
  clean_control();
  one_bad_value(NAN);
  one_bad_value(INFINITY);
  tg_bars b;
  tg_dataset ds;
  inf_every_50(&ds, &b);
  sampler_and_stage(&ds);
  tg_dataset_free(&ds);
  tg_bars_free(&b);
  long_label();
  export_lists_valid();
  rmdir(g_tmp);
  return tg_test_finish();
}
