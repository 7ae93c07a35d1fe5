/* Dataset layer: targets, purged chronological splits, train-only normalisation, window indices, the
 * resumable sampler, staging (zero-copy on the host, counted copies on cpu:1) and a gather graph end to end. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/timeconv.h"
#include "support/bars.h"
#include "support/check.h"
#include "tickgrad/dataset.h"
#include "tickgrad/graph.h"
#include "tickgrad/rng.h"

static uint64_t g_seed;

static void make_bars(tg_bars *b, int64_t n, int k, uint64_t stream) {
  tg_test_bars(b, n, k, g_seed, stream, 4, 7);
}

static void targets(void) {
  tg_bars b;
  make_bars(&b, 60, 2, 1);
  b.close[2] = b.close[0] * exp(0.0004); /* instrument 0, bars 0 -> 1: a move inside the dead zone */
  tg_layout lay;
  tg_targets y;
  CHECK_OK(tg_layout_build(&b, &lay));
  tg_target_opts to = {.nh = 3, .horizons = {1, 5, 2}, .class_horizon = 0, .dead_zone = 0.0005};
  CHECK_OK(tg_targets_compute(&b, &lay, &to, &y));
  CHECK(y.nh == 3 && y.hmax == 5 && y.k == 2);
  int bad = 0;
  for (int j = 0; j < 2; j++) {
    int64_t m = lay.seg[j + 1] - lay.seg[j];
    for (int64_t p = 0; p < m; p++) {
      int64_t r = lay.rows[lay.seg[j] + p];
      for (int q = 0; q < 3; q++) {
        int h = to.horizons[q];
        float want = p + h < m ? (float)log(b.close[lay.rows[lay.seg[j] + p + h]] / b.close[r]) : NAN;
        bad += !(isnan(want) ? isnan(y.ret[r * 3 + q]) : y.ret[r * 3 + q] == want);
      }
      double f1 = p + 1 < m ? log(b.close[lay.rows[lay.seg[j] + p + 1]] / b.close[r]) : NAN;
      int cls = isnan(f1) ? -1 : f1 > 0.0005 ? 2 : f1 < -0.0005 ? 0 : 1;
      bad += y.cls[r] != cls;
      bad += p + 1 < m ? y.next_open[r] != b.open[lay.rows[lay.seg[j] + p + 1]] || y.next_close[r] != b.close[lay.rows[lay.seg[j] + p + 1]]
                       : !isnan(y.next_open[r]) || !isnan(y.next_close[r]);
    }
    CHECK(y.last_valid[j] == lay.rows[lay.seg[j + 1] - 1 - 5]);
  }
  CHECK_MSG(bad == 0, "%d target values wrong", bad);
  CHECK(y.cls[0] == TG_CLASS_FLAT);
  CHECK(y.last_valid_row == 48 && y.last_valid[1] == 49 && y.last_valid[0] == 48);
  tg_targets_free(&y);
  tg_target_opts bad_h = {.nh = 1, .horizons = {0}};
  CHECK_STATUS(tg_targets_compute(&b, &lay, &bad_h, &y), TG_ERR_INVALID);
  tg_target_opts bad_c = {.nh = 1, .horizons = {1}, .class_horizon = 1};
  CHECK_STATUS(tg_targets_compute(&b, &lay, &bad_c, &y), TG_ERR_INVALID);
  tg_target_opts bad_d = {.dead_zone = -1};
  CHECK_STATUS(tg_targets_compute(&b, &lay, &bad_d, &y), TG_ERR_INVALID);
  CHECK_OK(tg_targets_compute(&b, &lay, NULL, &y)); /* defaults: one horizon of 1 bar */
  CHECK(y.nh == 1 && y.horizons[0] == 1 && y.last_valid_row == 56);
  tg_targets_free(&y);
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

/* Marks every row a window (plus targets when with_targets) of split s uses. */
static void mark_rows(const tg_layout *lay, const tg_splits *sp, int s, int with_targets, unsigned char *mark) {
  const tg_split *x = &sp->s[s];
  for (int j = 0; j < sp->k; j++)
    for (int64_t p = x->begin[j]; p < x->end[j]; p++) {
      int64_t last = p + sp->window - 1 + (with_targets ? sp->horizon : 0);
      for (int64_t q = p; q <= last; q++) mark[lay->rows[q]] = 1;
    }
}

static void check_split(const tg_bars *b, const tg_layout *lay, const tg_split_opts *o, const char *what) {
  tg_splits sp;
  tg_status st = tg_splits_make(b, lay, o, &sp);
  CHECK_MSG(st == TG_OK, "%s: %s", what, tg_last_error());
  if (st != TG_OK) return;
  int64_t n = b->n, L = o->window, h = o->horizon;
  unsigned char *used = calloc((size_t)n, 1), *val = calloc((size_t)n, 1);
  int touch = 0, gap_bad = 0, inside_bad = 0;
  for (int s = 0; s + 1 < TG_SPLIT_COUNT; s++) {
    memset(used, 0, (size_t)n);
    memset(val, 0, (size_t)n);
    for (int e = 0; e <= s; e++) mark_rows(lay, &sp, e, 1, used); /* every earlier split with targets */
    for (int e = s + 1; e < TG_SPLIT_COUNT; e++) mark_rows(lay, &sp, e, 1, val);
    for (int64_t r = 0; r < n; r++) touch += used[r] && val[r];
  }
  for (int s = 0; s < TG_SPLIT_COUNT; s++) {
    const tg_split *x = &sp.s[s];
    int64_t count = 0;
    for (int j = 0; j < sp.k; j++) {
      count += x->end[j] - x->begin[j];
      for (int64_t p = x->begin[j]; p < x->end[j]; p++) {
        int64_t r0 = lay->rows[p], r1 = lay->rows[p + L - 1 + h];
        inside_bad += p < lay->seg[j] + o->warmup || p + L + h > lay->seg[j + 1] || b->ts[r0] < x->ts_begin ||
                      b->ts[r1] >= x->ts_end;
      }
      if (s > 0 && sp.s[s - 1].end[j] > sp.s[s - 1].begin[j] && x->end[j] > x->begin[j])
        gap_bad += x->begin[j] - (sp.s[s - 1].end[j] - 1) < L + h + o->embargo;
    }
    CHECK_MSG(count == x->count, "%s: split %d count", what, s);
  }
  CHECK_MSG(sp.s[TG_TRAIN].count > 0 && sp.s[TG_VAL].count > 0, "%s: empty split", what);
  CHECK_MSG(touch == 0, "%s: %d rows shared between a split's windows+targets and a later split's", what, touch);
  CHECK_MSG(gap_bad == 0, "%s: %d purge gaps below window + horizon", what, gap_bad);
  CHECK_MSG(inside_bad == 0, "%s: %d windows outside their split", what, inside_bad);
  free(used);
  free(val);
  tg_splits_free(&sp);
}

static void splits(void) {
  tg_bars b1, b3;
  make_bars(&b1, 2000, 1, 2);
  make_bars(&b3, 3000, 3, 3);
  tg_layout l1, l3;
  CHECK_OK(tg_layout_build(&b1, &l1));
  CHECK_OK(tg_layout_build(&b3, &l3));
  tg_split_opts o = {.window = 32, .horizon = 4, .warmup = 33};
  check_split(&b1, &l1, &o, "defaults L32 h4");
  tg_splits sp;
  CHECK_OK(tg_splits_make(&b1, &l1, &o, &sp));
  /* single instrument: train rows [0, 1400), val [1400, 1700), test [1700, 2000) */
  CHECK(sp.s[TG_TRAIN].begin[0] == 33 && sp.s[TG_TRAIN].end[0] == 1400 - 32 - 4 + 1);
  CHECK(sp.s[TG_VAL].begin[0] == 1400 && sp.s[TG_VAL].end[0] == 1700 - 36 + 1);
  CHECK(sp.s[TG_TEST].begin[0] == 1700 && sp.s[TG_TEST].end[0] == 2000 - 36 + 1);
  CHECK(sp.s[TG_VAL].begin[0] - (sp.s[TG_TRAIN].end[0] - 1) == 32 + 4);
  tg_splits_free(&sp);
  tg_split_opts o2 = {.window = 100, .horizon = 10, .warmup = 5, .embargo = 7, .frac_train = 0.5, .frac_val = 0.25};
  check_split(&b1, &l1, &o2, "L100 h10 embargo 7");
  check_split(&b3, &l3, &o2, "3 instruments L100 h10 embargo 7");
  tg_split_opts o3 = {.window = 1, .horizon = 1, .frac_train = 0.8, .frac_val = 0.2};
  check_split(&b1, &l1, &o3, "L1 h1, no test");
  CHECK_OK(tg_splits_make(&b1, &l1, &o3, &sp));
  CHECK(sp.s[TG_TEST].count == 0);
  tg_splits_free(&sp);
  /* by date: validation from the 400th step, test from the 700th */
  int64_t t0 = b3.ts[0], step = 300 * TG_NS_PER_S;
  tg_split_opts o4 = {.window = 20, .horizon = 3, .warmup = 10, .by_date = 1, .val_start_ns = t0 + 400 * step,
                      .test_start_ns = t0 + 700 * step};
  check_split(&b3, &l3, &o4, "3 instruments by date");
  CHECK_OK(tg_splits_make(&b3, &l3, &o4, &sp));
  for (int j = 0; j < 3; j++) {
    CHECK(b3.ts[l3.rows[sp.s[TG_VAL].begin[j]]] == t0 + 400 * step);
    CHECK(b3.ts[l3.rows[sp.s[TG_TRAIN].end[j] - 1 + 22]] == t0 + 399 * step);
  }
  CHECK(sp.s[TG_TEST].count == 3 * (1000 - 700 - 22));
  tg_splits_free(&sp);
  o4.test_start_ns = INT64_MAX;
  check_split(&b3, &l3, &o4, "by date, no test");
  /* errors */
  tg_split_opts small = {.window = 64, .horizon = 5, .warmup = 33, .frac_train = 0.95, .frac_val = 0.03};
  CHECK_STATUS(tg_splits_make(&b1, &l1, &small, &sp), TG_ERR_INVALID); /* 60 bars of validation < 69 */
  CHECK_MSG(strstr(tg_last_error(), "validation split") && strstr(tg_last_error(), "69 bars"), "%s", tg_last_error());
  small.frac_val = 0.04; /* validation fits; 20 bars of test do not */
  CHECK_STATUS(tg_splits_make(&b1, &l1, &small, &sp), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "test split") && strstr(tg_last_error(), "20 bars"), "%s", tg_last_error());
  tg_split_opts small2 = {.window = 64, .horizon = 5, .warmup = 33, .frac_train = 0.04, .frac_val = 0.5};
  CHECK_STATUS(tg_splits_make(&b1, &l1, &small2, &sp), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "training split") && strstr(tg_last_error(), "warm-up"), "%s", tg_last_error());
  tg_split_opts many = {.window = 64, .horizon = 5, .min_windows = 500};
  CHECK_STATUS(tg_splits_make(&b1, &l1, &many, &sp), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "validation split"), "%s", tg_last_error());
  tg_split_opts late = {.window = 8, .horizon = 1, .by_date = 1, .val_start_ns = b1.ts[1999] + 1,
                        .test_start_ns = b1.ts[1999] + 2};
  CHECK_STATUS(tg_splits_make(&b1, &l1, &late, &sp), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "holds no bars"), "%s", tg_last_error());
  tg_split_opts badf = {.window = 8, .frac_train = 0.8, .frac_val = 0.4};
  CHECK_STATUS(tg_splits_make(&b1, &l1, &badf, &sp), TG_ERR_INVALID);
  tg_split_opts badw = {.window = 0};
  CHECK_STATUS(tg_splits_make(&b1, &l1, &badw, &sp), TG_ERR_INVALID);
  tg_layout_free(&l1);
  tg_layout_free(&l3);
  tg_bars_free(&b1);
  tg_bars_free(&b3);
}

/* A non-finite value on a training row is named: column, bar, time and why (past the warm-up: float32's range; inside
 * it: the warm-up), not "not finite on the training rows". */
static void norm_not_finite(const tg_bars *b, const tg_layout *lay, const tg_splits *sp, tg_features *fx, int64_t r0) {
  tg_norm c;
  float keep = fx->x[r0 * fx->f + 2];
  fx->x[r0 * fx->f + 2] = INFINITY;
  char want[160], t[TG_TIME_TEXT];
  snprintf(want, sizeof want, "column 2 'vol_10' is inf at bar %lld (%s), a training row", (long long)r0,
           tg_format_time(b->ts[r0], t, sizeof t));
  CHECK_STATUS(tg_norm_fit_times(fx, lay, sp, b->ts, &c), TG_ERR_NUMERIC);
  CHECK_MSG(strstr(tg_last_error(), want) && strstr(tg_last_error(), "past the column's warm-up") &&
            strstr(tg_last_error(), "float32"), "%s", tg_last_error());
  int32_t warm = fx->warmup[2];
  fx->warmup[2] = 1 << 30; /* the same bar inside the column's warm-up */
  CHECK_STATUS(tg_norm_fit(fx, lay, sp, &c), TG_ERR_NUMERIC);
  CHECK_MSG(strstr(tg_last_error(), "inside the column's warm-up") && !strstr(tg_last_error(), " (20"), "%s",
            tg_last_error());
  fx->warmup[2] = warm;
  fx->x[r0 * fx->f + 2] = keep;
}

static void normalisation(void) {
  tg_bars b;
  make_bars(&b, 1500, 2, 4);
  for (int64_t i = 0; i < b.n; i++) b.volume[i] = 100.0; /* logvol_z is constant 0 */
  tg_layout lay;
  tg_features fx;
  tg_splits sp;
  CHECK_OK(tg_layout_build(&b, &lay));
  tg_feature_opts fo = {.spec = "logret,logvol_z:10,vol:10,tod,inst", .tz = NULL};
  CHECK_OK(tg_features_compute(&b, &lay, &fo, &fx));
  tg_split_opts so = {.window = 16, .horizon = 2, .warmup = fx.warmup_max};
  CHECK_OK(tg_splits_make(&b, &lay, &so, &sp));
  tg_norm a, c;
  CHECK_OK(tg_norm_fit(&fx, &lay, &sp, &a));
  /* which rows the training windows cover */
  unsigned char *train = calloc((size_t)b.n, 1);
  mark_rows(&lay, &sp, TG_TRAIN, 0, train);
  int64_t ntrain = 0;
  for (int64_t r = 0; r < b.n; r++) ntrain += train[r];
  CHECK(a.rows == ntrain);
  /* scramble every other row: the statistics do not move */
  for (int64_t r = 0; r < b.n; r++)
    if (!train[r])
      for (int q = 0; q < fx.f; q++) fx.x[r * fx.f + q] = 1e6f * tg_rng_normal(g_seed, 77, (uint64_t)(r * fx.f + q));
  CHECK_OK(tg_norm_fit(&fx, &lay, &sp, &c));
  CHECK(memcmp(a.mean, c.mean, (size_t)fx.f * sizeof(double)) == 0 && memcmp(a.std, c.std, (size_t)fx.f * sizeof(double)) == 0);
  tg_norm_free(&c);
  /* a training row does move them (the test has teeth) */
  int64_t r0 = lay.rows[sp.s[TG_TRAIN].begin[0] + 3];
  fx.x[r0 * fx.f] += 1.0f;
  CHECK_OK(tg_norm_fit(&fx, &lay, &sp, &c));
  CHECK(c.mean[0] != a.mean[0]);
  tg_norm_free(&c);
  fx.x[r0 * fx.f] -= 1.0f;
  norm_not_finite(&b, &lay, &sp, &fx, r0);
  /* constant and unscaled columns */
  CHECK(strcmp(fx.names[1], "logvol_z_10") == 0 && a.mean[1] == 0.0 && a.std[1] == 1.0);
  CHECK(!fx.scale[3] && a.mean[3] == 0.0 && a.std[3] == 1.0); /* tod_sin */
  CHECK(a.std[0] > 0.0 && a.std[0] < 0.1 && a.std[2] > 0.0);
  CHECK_OK(tg_norm_apply(&a, &fx));
  int finite = 1;
  double s0 = 0, s00 = 0;
  for (int64_t r = 0; r < b.n; r++) {
    if (!train[r]) continue;
    for (int q = 0; q < fx.f; q++) finite &= isfinite(fx.x[r * fx.f + q]) != 0;
    s0 += fx.x[r * fx.f], s00 += (double)fx.x[r * fx.f] * fx.x[r * fx.f];
  }
  CHECK(finite);
  CHECK_MSG(fabs(s0 / ntrain) < 1e-4 && fabs(s00 / ntrain - 1) < 1e-3, "train logret mean %g var %g", s0 / ntrain, s00 / ntrain);
  /* a constant nonzero column: centred, not divided by zero */
  tg_features k1 = {0};
  float col[6] = {5, 5, 5, 5, 5, 5};
  uint8_t scale = 1;
  k1.n = 6, k1.f = 1, k1.x = col, k1.scale = &scale;
  int64_t rows[6] = {0, 1, 2, 3, 4, 5}, seg[2] = {0, 6}, be[1] = {0}, en[1] = {3};
  int32_t inst[6] = {0};
  uint32_t ids[1] = {0};
  tg_layout l1 = {6, 1, ids, inst, rows, seg};
  tg_splits s1 = {.k = 1, .window = 2};
  s1.s[0].begin = be, s1.s[0].end = en, s1.s[0].count = 3;
  tg_norm n1;
  CHECK_OK(tg_norm_fit(&k1, &l1, &s1, &n1));
  CHECK(n1.rows == 4 && n1.std[0] == 1.0 && n1.mean[0] == 5.0);
  CHECK_OK(tg_norm_apply(&n1, &k1));
  CHECK(col[5] == 0.0f);
  tg_norm_free(&n1);
  free(train);
  tg_norm_free(&a);
  tg_splits_free(&sp);
  tg_features_free(&fx);
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

static void windows_and_sampler(void) {
  tg_bars b;
  make_bars(&b, 600, 3, 5);
  tg_layout lay;
  CHECK_OK(tg_layout_build(&b, &lay));
  int64_t starts[3] = {lay.seg[0], lay.seg[1] + 5, lay.seg[3] - 10}, L = 10;
  int64_t i64[30], last[3];
  int32_t i32[30];
  tg_tensor ti, tj, tl;
  tg_tensor_view(&ti, "idx", tg_cpu(0), TG_I64, 2, (int64_t[]){3, 10}, i64);
  tg_tensor_view(&tj, "idx32", tg_cpu(0), TG_I32, 2, (int64_t[]){3, 10}, i32);
  tg_tensor_view(&tl, "last", tg_cpu(0), TG_I64, 1, (int64_t[]){3}, last);
  CHECK_OK(tg_window_index(&lay, (int)L, starts, 3, &ti, &tl));
  CHECK_OK(tg_window_index(&lay, (int)L, starts, 3, &tj, NULL));
  int bad = 0;
  for (int i = 0; i < 3; i++) {
    for (int l = 0; l < L; l++) {
      int64_t r = i64[i * L + l];
      bad += r != lay.rows[starts[i] + l] || i32[i * L + l] != r || b.instrument[r] != b.instrument[i64[i * L]];
      bad += l > 0 && b.ts[r] <= b.ts[i64[i * L + l - 1]];
    }
    bad += last[i] != i64[i * L + L - 1];
  }
  CHECK_MSG(bad == 0, "%d wrong window rows", bad);
  int64_t cross[1] = {lay.seg[1] - 3};
  tg_tensor t1;
  tg_tensor_view(&t1, "idx", tg_cpu(0), TG_I64, 2, (int64_t[]){1, 10}, i64);
  CHECK_STATUS(tg_window_index(&lay, (int)L, cross, 1, &t1, NULL), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "another instrument"), "%s", tg_last_error());
  cross[0] = 595;
  CHECK_STATUS(tg_window_index(&lay, (int)L, cross, 1, &t1, NULL), TG_ERR_INVALID);
  CHECK_STATUS(tg_window_index(&lay, 9, starts, 3, &ti, NULL), TG_ERR_SHAPE);

  /* sampler */
  tg_splits sp;
  tg_split_opts so = {.window = 10, .horizon = 2, .warmup = 3};
  CHECK_OK(tg_splits_make(&b, &lay, &so, &sp));
  int64_t count = sp.s[TG_TRAIN].count;
  tg_sampler s, t;
  CHECK_OK(tg_sampler_init(&s, &sp, TG_TRAIN, 42, 1));
  CHECK(s.count == count);
  int64_t *e0 = malloc(sizeof(int64_t) * (size_t)count), *e1 = malloc(sizeof(int64_t) * (size_t)count);
  int64_t got = 0, pos = 0, buf[64];
  while (pos < count) {
    CHECK_OK(tg_sampler_next(&s, buf, 64, &got));
    memcpy(e0 + pos, buf, (size_t)got * sizeof(int64_t));
    pos += got;
    if (got < 64) break;
  }
  CHECK(pos == count && s.epoch == 0);
  /* a permutation of the split's starts */
  unsigned char *seen = calloc((size_t)b.n, 1);
  int dup = 0, outside = 0, moved = 0;
  for (int64_t i = 0; i < count; i++) {
    int ok = 0;
    for (int j = 0; j < 3; j++) ok |= e0[i] >= sp.s[TG_TRAIN].begin[j] && e0[i] < sp.s[TG_TRAIN].end[j];
    outside += !ok;
    dup += seen[e0[i]]++ != 0;
  }
  CHECK(dup == 0 && outside == 0);
  for (int64_t i = 0; i + 1 < count; i++) moved += e0[i + 1] != e0[i] + 1;
  CHECK_MSG(moved > count / 2, "shuffled order looks sorted");
  /* the next epoch is another order */
  CHECK_OK(tg_sampler_next(&s, buf, 64, &got));
  CHECK(s.epoch == 1 && got == 64 && memcmp(buf, e0, sizeof buf) != 0);
  /* resume: a fresh sampler seeked to (0, 100) continues with element 100 of epoch 0 */
  CHECK_OK(tg_sampler_init(&t, &sp, TG_TRAIN, 42, 1));
  CHECK_OK(tg_sampler_seek(&t, 0, 100));
  CHECK_OK(tg_sampler_next(&t, buf, 50, &got));
  CHECK(got == 50 && memcmp(buf, e0 + 100, 50 * sizeof(int64_t)) == 0);
  CHECK_OK(tg_sampler_seek(&t, 1, 0));
  CHECK_OK(tg_sampler_next(&t, e1, 64, &got));
  tg_sampler_seek(&s, 1, 0);
  CHECK_OK(tg_sampler_next(&s, buf, 64, &got));
  CHECK(memcmp(buf, e1, sizeof buf) == 0);
  CHECK_STATUS(tg_sampler_seek(&t, 0, (uint64_t)count + 1), TG_ERR_INVALID);
  tg_sampler_free(&t);
  /* another seed, another order; in order without shuffling */
  CHECK_OK(tg_sampler_init(&t, &sp, TG_TRAIN, 43, 1));
  CHECK_OK(tg_sampler_next(&t, buf, 64, &got));
  CHECK(memcmp(buf, e0, sizeof buf) != 0);
  tg_sampler_free(&t);
  CHECK_OK(tg_sampler_init(&t, &sp, TG_VAL, 1, 0));
  CHECK_OK(tg_sampler_next(&t, buf, 5, &got));
  CHECK(got == 5 && buf[0] == sp.s[TG_VAL].begin[0] && buf[4] == buf[0] + 4);
  tg_sampler_free(&t);
  free(seen);
  free(e0);
  free(e1);
  tg_sampler_free(&s);
  tg_splits_free(&sp);
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

/* Gathers [B, L, F] windows and [B, H] targets through a graph planned on dev, from a stage's tables,
 * and compares them with the dataset's rows. */
static void gather_check(tg_stage *st, const tg_dataset *ds, tg_device dev, const int64_t *starts, int64_t B,
                         const char *what) {
  tg_batch bt;
  CHECK_OK(tg_stage_batch(st, starts, B, &bt));
  const tg_tensor *xt = tg_stage_features(st), *yt = tg_stage_targets(st);
  int64_t L = ds->window, F = ds->fx.f, H = ds->y.nh;
  int64_t ish[2] = {B, L}, rsh[1] = {B};
  tg_graph *g = tg_graph_new(NULL, "gather");
  tg_tensor *table = tg_input(g, "table", TG_F32, 2, xt->shape);
  tg_tensor *ytab = tg_input(g, "ytable", TG_F32, 2, yt->shape);
  tg_tensor *idx = tg_input(g, "idx", TG_I64, 2, ish);
  tg_tensor *rows = tg_input(g, "rows", TG_I64, 1, rsh);
  tg_tensor *win = tg_gather_rows(g, table, idx);
  tg_tensor *tgt = tg_gather_rows(g, ytab, rows);
  tg_plan_opts po = tg_plan_defaults(dev);
  po.training = 0;
  CHECK_OK(tg_graph_plan(g, &po));
  CHECK(win && win->ndim == 3 && win->shape[0] == B && win->shape[1] == L && win->shape[2] == F);
  CHECK_OK(tg_graph_bind(g, "table", xt));
  CHECK_OK(tg_graph_bind(g, "ytable", yt));
  CHECK_OK(tg_graph_bind(g, "idx", &bt.idx));
  CHECK_OK(tg_graph_bind(g, "rows", &bt.rows));
  CHECK_OK(tg_graph_run(g));
  float *got = malloc(sizeof(float) * (size_t)(B * L * F)), *gy = malloc(sizeof(float) * (size_t)(B * H));
  int32_t *labels = malloc(sizeof(int32_t) * (size_t)B);
  CHECK_OK(tg_stage_to_host(st, win, got));
  CHECK_OK(tg_stage_to_host(st, tgt, gy));
  CHECK_OK(tg_stage_to_host(st, &bt.labels, labels));
  int bad = 0;
  for (int64_t i = 0; i < B; i++) {
    for (int64_t l = 0; l < L; l++) {
      int64_t r = ds->layout.rows[starts[i] + l];
      bad += memcmp(got + (i * L + l) * F, ds->fx.x + r * F, (size_t)F * sizeof(float)) != 0;
    }
    int64_t last = ds->layout.rows[starts[i] + L - 1];
    bad += memcmp(gy + i * H, ds->y.ret + last * H, (size_t)H * sizeof(float)) != 0;
    bad += labels[i] != ds->y.cls[last];
  }
  CHECK_MSG(bad == 0, "%s: %d gathered rows differ from the dataset", what, bad);
  free(got);
  free(gy);
  free(labels);
  tg_graph_free(g);
}

/* Distinct positions the windows at starts[0..b) cover. */
static int64_t distinct_positions(const int64_t *starts, int64_t b, int64_t L) {
  int64_t n = 0;
  for (int64_t i = 0; i < b; i++)
    for (int64_t p = starts[i]; p < starts[i] + L; p++) {
      int seen = 0;
      for (int64_t j = 0; j < i && !seen; j++) seen = p >= starts[j] && p < starts[j] + L;
      n += !seen;
    }
  return n;
}

static void staging(void) {
  tg_bars b;
  make_bars(&b, 3000, 2, 6);
  tg_dataset ds;
  tg_dataset_opts o = {.targets = {.nh = 2, .horizons = {1, 3}, .dead_zone = 1e-4}, .splits = {.window = 24}};
  CHECK_OK(tg_dataset_build(&b, &o, &ds));
  CHECK(ds.window == 24 && ds.splits.horizon == 3 && ds.norm.f == ds.fx.f && ds.x.shape[0] == 3000 && ds.x.shape[1] == 16);
  CHECK(ds.y_ret.shape[1] == 2 && ds.y_cls.dtype == TG_I32);
  int64_t B = 8, starts[8];
  tg_sampler s;
  CHECK_OK(tg_sampler_init(&s, &ds.splits, TG_TRAIN, 9, 1));
  int64_t got;
  CHECK_OK(tg_sampler_next(&s, starts, B, &got));

  /* the host: views, nothing copied, nothing allocated per batch */
  for (int mode = 0; mode < 2; mode++) {
    tg_stage *st;
    CHECK_OK(tg_stage_new(tg_cpu(0), (tg_stage_mode)mode, B, &st));
    CHECK_OK(tg_stage_dataset(st, &ds));
    CHECK(tg_stage_features(st)->data == ds.fx.x && tg_stage_targets(st)->data == ds.y.ret);
    CHECK(tg_stage_features(st)->shape[0] == 3000);
    gather_check(st, &ds, tg_cpu(0), starts, B, mode ? "cpu:0 streaming" : "cpu:0 resident");
    uint64_t allocs = tg_alloc_count();
    tg_batch bt;
    for (int i = 0; i < 20; i++) CHECK_OK(tg_stage_batch(st, starts, B, &bt));
    CHECK(tg_alloc_count() == allocs);
    tg_stage_stats ss = tg_stage_stats_get(st);
    CHECK_MSG(ss.h2d_bytes == 0 && ss.d2h_bytes == 0 && ss.h2d_copies == 0 && ss.d2h_copies == 0,
              "host staging moved %llu / %llu bytes", (unsigned long long)ss.h2d_bytes, (unsigned long long)ss.d2h_bytes);
    CHECK(ss.batches == 21);
    tg_stage_free(st);
  }
  /* cpu:1, a separate logical device: resident copies the tables once, batches move their indices */
  int64_t F = ds.fx.f, L = 24, H = 2, N = 3000;
  uint64_t per_batch = (uint64_t)(B * L * 8 + B * 8 + B * 4 + B * 8);
  tg_stage *st;
  CHECK_OK(tg_stage_new(tg_cpu(1), TG_STAGE_RESIDENT, B, &st));
  CHECK_OK(tg_stage_dataset(st, &ds));
  tg_stage_stats ss = tg_stage_stats_get(st);
  CHECK(ss.h2d_bytes == (uint64_t)(N * F * 4 + N * H * 4) && ss.d2h_bytes == 0);
  CHECK(tg_stage_features(st)->data != ds.fx.x && tg_stage_features(st)->device.index == 1);
  gather_check(st, &ds, tg_cpu(1), starts, B, "cpu:1 resident");
  ss = tg_stage_stats_get(st);
  CHECK(ss.h2d_bytes == (uint64_t)(N * F * 4 + N * H * 4) + per_batch);
  CHECK(ss.d2h_bytes == (uint64_t)(B * L * F * 4 + B * H * 4 + B * 4));
  tg_stage_free(st);
  /* streaming: the tables hold two halves of one batch each; each batch sends its distinct rows */
  CHECK_OK(tg_stage_new(tg_cpu(1), TG_STAGE_STREAMING, B, &st));
  CHECK_OK(tg_stage_dataset(st, &ds));
  CHECK(tg_stage_stats_get(st).h2d_bytes == 0);
  CHECK(tg_stage_features(st)->shape[0] == 2 * B * L && tg_stage_targets(st)->shape[0] == 2 * B);
  gather_check(st, &ds, tg_cpu(1), starts, B, "cpu:1 streaming");
  int64_t overlap[8] = {starts[0], starts[0] + 1, starts[0] + 2, starts[0] + 3, starts[0], starts[0], starts[0] + 1, starts[0] + 9};
  gather_check(st, &ds, tg_cpu(1), overlap, B, "cpu:1 streaming, overlapping windows");
  ss = tg_stage_stats_get(st);
  uint64_t want = 2 * ((uint64_t)(B * H * 4) + per_batch) +
                  (uint64_t)((distinct_positions(starts, B, L) + (9 + L)) * F * 4); /* the overlap batch: 33 rows */
  CHECK_MSG(ss.batches == 2 && ss.h2d_bytes == want, "streaming moved %llu bytes, expected %llu",
            (unsigned long long)ss.h2d_bytes, (unsigned long long)want);
  CHECK(ss.d2h_bytes == 2 * (uint64_t)(B * L * F * 4 + B * H * 4 + B * 4));
  tg_stage_free(st);
  /* errors */
  tg_stage *bad = NULL;
  if (!tg_backend_compiled(TG_CUDA)) {
    CHECK_STATUS(tg_stage_new(tg_cuda(0), TG_STAGE_RESIDENT, 8, &bad), TG_ERR_DEVICE);
    CHECK_MSG(strstr(tg_last_error(), "cuda:0") && strstr(tg_last_error(), "not compiled"), "%s", tg_last_error());
    CHECK(bad == NULL);
  }
  CHECK_OK(tg_stage_new(tg_cpu(0), TG_STAGE_RESIDENT, 4, &bad));
  tg_batch bt;
  CHECK_STATUS(tg_stage_batch(bad, starts, 4, &bt), TG_ERR_INVALID); /* no dataset yet */
  CHECK_OK(tg_stage_dataset(bad, &ds));
  CHECK_STATUS(tg_stage_batch(bad, starts, 5, &bt), TG_ERR_INVALID); /* over max_batch */
  tg_stage_free(bad);
  tg_sampler_free(&s);
  tg_dataset_free(&ds);
  /* too little data for the splits */
  tg_bars tiny;
  make_bars(&tiny, 100, 1, 7);
  CHECK_STATUS(tg_dataset_build(&tiny, NULL, &ds), TG_ERR_INVALID);
  tg_bars_free(&tiny);
  tg_bars_free(&b);
}

int main(void) {
  g_seed = tg_test_seed(777);
  targets();
  splits();
  normalisation();
  windows_and_sampler();
  staging();
  return tg_test_finish();
}
