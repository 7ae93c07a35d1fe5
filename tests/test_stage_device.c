/* The sampler's keyed permutation, and batches produced on the stage's device (tg_stage_next): on cpu:0 and cpu:1 here, on CUDA when a GPU is present. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "base/alloc.h"
#include "base/shuffle.h"
#include "data/readers/timeconv.h"
#include "support/bars.h"
#include "support/check.h"
#include "tickgrad/dataset.h"
#include "tickgrad/device.h"
#include "tickgrad/rng.h"

static uint64_t g_seed;

static void make_bars(tg_bars *b, int64_t n, int k, uint64_t stream) {
  tg_test_bars(b, n, k, g_seed, stream, 3, 1);
}

/* ---- the permutation ---- */

/* A one-instrument split of count windows starting at position 0, so a start is its element. */
static void one_split(tg_splits *sp, int64_t *begin, int64_t *end, int64_t count) {
  memset(sp, 0, sizeof *sp);
  sp->k = 1;
  begin[0] = 0, end[0] = count;
  sp->s[TG_TRAIN].begin = begin, sp->s[TG_TRAIN].end = end, sp->s[TG_TRAIN].count = count;
}

/* Epoch `epoch`'s whole order of s into out [count]. */
static void epoch_order(tg_sampler *s, uint64_t epoch, int64_t *out) {
  int64_t got = 0;
  CHECK_OK(tg_sampler_seek(s, epoch, 0));
  CHECK_OK(tg_sampler_next(s, out, s->count, &got));
  CHECK(got == s->count);
}

static void permutations(void) {
  int64_t counts[] = {1, 2, 3, 7, 1000, 4097}, begin[1], end[1];
  int64_t *a = malloc(4097 * sizeof *a), *c = malloc(4097 * sizeof *c);
  unsigned char *seen = malloc(4097);
  for (size_t q = 0; q < sizeof counts / sizeof *counts; q++) {
    int64_t n = counts[q];
    tg_splits sp;
    one_split(&sp, begin, end, n);
    int bad = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
      tg_sampler s;
      CHECK_OK(tg_sampler_init(&s, &sp, TG_TRAIN, seed * 0x9E3779B97F4A7C15ull, 1));
      for (uint64_t epoch = 0; epoch < 4; epoch++) {
        epoch_order(&s, epoch * 1000003, a);
        memset(seen, 0, (size_t)n);
        for (int64_t i = 0; i < n; i++) bad += a[i] < 0 || a[i] >= n || seen[a[i]]++;
      }
      tg_sampler_free(&s);
    }
    CHECK_MSG(bad == 0, "count %lld: %d elements missing, repeated or out of range", (long long)n, bad);
  }
  /* count 1000: epochs and seeds give other orders, none close to the identity */
  tg_splits sp;
  one_split(&sp, begin, end, 1000);
  tg_sampler s, t;
  CHECK_OK(tg_sampler_init(&s, &sp, TG_TRAIN, 5, 1));
  CHECK_OK(tg_sampler_init(&t, &sp, TG_TRAIN, 6, 1));
  epoch_order(&s, 0, a);
  epoch_order(&s, 1, c);
  int same_epoch = 0, fixed = 0, ascending = 0;
  for (int i = 0; i < 1000; i++) same_epoch += a[i] == c[i], fixed += a[i] == i, ascending += i && a[i] == a[i - 1] + 1;
  epoch_order(&t, 0, c);
  int same_seed = 0;
  for (int i = 0; i < 1000; i++) same_seed += a[i] == c[i];
  CHECK_MSG(same_epoch < 100 && same_seed < 100, "orders agree in %d (next epoch) and %d (next seed) of 1000 places",
            same_epoch, same_seed);
  CHECK_MSG(fixed < 100 && ascending < 100, "%d fixed points and %d ascending steps in 1000", fixed, ascending);
  /* count 2: both orders occur */
  tg_sampler_free(&t);
  one_split(&sp, begin, end, 2);
  CHECK_OK(tg_sampler_init(&t, &sp, TG_TRAIN, 5, 1));
  int swapped = 0;
  for (uint64_t e = 0; e < 64; e++) {
    epoch_order(&t, e, c);
    swapped += c[0] == 1;
  }
  CHECK_MSG(swapped > 8 && swapped < 56, "count 2: swapped in %d of 64 epochs", swapped);
  tg_sampler_free(&t);
  /* resume: batches of 37 over 2.5 epochs, then a fresh sampler sought to each recorded position */
  one_split(&sp, begin, end, 1000);
  CHECK_OK(tg_sampler_seek(&s, 0, 0));
  int64_t run[2600], pos_e[80], pos_c[80], at[80], got = 0, total = 0;
  int calls = 0;
  while (total < 2500) {
    pos_e[calls] = (int64_t)s.epoch, pos_c[calls] = (int64_t)s.cursor, at[calls] = total;
    CHECK_OK(tg_sampler_next(&s, run + total, 37, &got));
    total += got, calls++;
  }
  CHECK(s.epoch == 2);
  int resumed_bad = 0;
  for (int i = 0; i < calls; i += 7) {
    int64_t again[2600], n = 0;
    CHECK_OK(tg_sampler_init(&t, &sp, TG_TRAIN, 5, 1));
    CHECK_OK(tg_sampler_seek(&t, (uint64_t)pos_e[i], (uint64_t)pos_c[i]));
    while (at[i] + n < total) {
      CHECK_OK(tg_sampler_next(&t, again + n, 37, &got));
      n += got;
    }
    resumed_bad += memcmp(again, run + at[i], (size_t)(total - at[i]) * sizeof *again) != 0;
    tg_sampler_free(&t);
  }
  CHECK_MSG(resumed_bad == 0, "%d resumed runs differ", resumed_bad);
  tg_sampler_free(&s);
  free(a);
  free(c);
  free(seen);
}

/* ---- batches ---- */

/* A batch copied to the host. */
typedef struct host_batch {
  int64_t b;
  int64_t idx[64 * 24], rows[64], inst[64];
  int32_t labels[64];
} host_batch;

#define MAX_B 64

static void fetch(tg_stage *st, const tg_batch *bt, host_batch *h) {
  h->b = bt->b;
  CHECK_OK(tg_stage_to_host(st, &bt->idx, h->idx));
  CHECK_OK(tg_stage_to_host(st, &bt->rows, h->rows));
  CHECK_OK(tg_stage_to_host(st, &bt->labels, h->labels));
  CHECK_OK(tg_stage_to_host(st, &bt->inst, h->inst));
}

static int batch_eq(const host_batch *a, const host_batch *b, int64_t L) {
  return a->b == b->b && memcmp(a->idx, b->idx, (size_t)(a->b * L) * 8) == 0 &&
         memcmp(a->rows, b->rows, (size_t)a->b * 8) == 0 && memcmp(a->labels, b->labels, (size_t)a->b * 4) == 0 &&
         memcmp(a->inst, b->inst, (size_t)a->b * 8) == 0;
}

/* The batch tg_sampler_next and tg_window_index give for the next b windows of s. */
static void reference(const tg_dataset *ds, tg_sampler *s, int64_t b, host_batch *h) {
  int64_t starts[MAX_B], L = ds->window;
  CHECK_OK(tg_sampler_next(s, starts, b, &h->b));
  tg_tensor ti, tr;
  tg_tensor_view(&ti, "idx", tg_cpu(0), TG_I64, 2, (int64_t[]){h->b, L}, h->idx);
  tg_tensor_view(&tr, "rows", tg_cpu(0), TG_I64, 1, (int64_t[]){h->b}, h->rows);
  CHECK_OK(tg_window_index(&ds->layout, (int)L, starts, h->b, &ti, &tr));
  for (int64_t i = 0; i < h->b; i++) h->labels[i] = ds->y.cls[h->rows[i]], h->inst[i] = ds->layout.inst[h->rows[i]];
}

/* Rows of the feature and target tables a streamed batch points at equal the dataset's rows of the
 * reference batch, and its indices lie in half `half`. */
static int streamed_bad(tg_stage *st, const tg_dataset *ds, const tg_batch *bt, const host_batch *ref, int half) {
  const tg_tensor *xt = tg_stage_features(st), *yt = tg_stage_targets(st);
  int64_t L = ds->window, F = ds->fx.f, H = ds->y.nh, hx = xt->shape[0] / 2, hy = yt->shape[0] / 2;
  float *x = malloc(tg_nbytes(xt)), *y = malloc(tg_nbytes(yt));
  host_batch got;
  CHECK_OK(tg_stage_to_host(st, xt, x));
  CHECK_OK(tg_stage_to_host(st, yt, y));
  fetch(st, bt, &got);
  int bad = got.b != ref->b;
  for (int64_t i = 0; i < ref->b && !bad; i++) {
    for (int64_t l = 0; l < L; l++) {
      int64_t slot = got.idx[i * L + l];
      bad += slot < half * hx || slot >= (half + 1) * hx ||
             memcmp(x + slot * F, ds->fx.x + ref->idx[i * L + l] * F, (size_t)F * 4) != 0;
    }
    int64_t r = got.rows[i];
    bad += r < half * hy || r >= (half + 1) * hy || memcmp(y + r * H, ds->y.ret + ref->rows[i] * H, (size_t)H * 4) != 0;
    bad += got.labels[i] != ref->labels[i] || got.inst[i] != ref->inst[i];
  }
  free(x);
  free(y);
  return bad;
}

/* Distinct values of idx [n]. */
static int64_t distinct(const int64_t *idx, int64_t n) {
  int64_t d = 0;
  for (int64_t i = 0; i < n; i++) {
    int seen = 0;
    for (int64_t j = 0; j < i && !seen; j++) seen = idx[j] == idx[i];
    d += !seen;
  }
  return d;
}

/* Bytes one batch of b windows moves besides its streamed rows: idx, rows, labels, inst. */
static uint64_t index_bytes(int64_t b, int64_t L) { return (uint64_t)(b * L * 8 + b * 8 + b * 4 + b * 8); }

/* cpu:0 computes batches in place; cpu:1 goes through the host and copies; both equal the reference. */
static void next_on_cpu(const tg_dataset *ds) {
  int64_t L = ds->window, calls = ds->splits.s[TG_TRAIN].count / 40 + 2 /* > one epoch: 54 windows a call */;
  tg_stage *h, *d;
  CHECK_OK(tg_stage_new(tg_cpu(0), TG_STAGE_RESIDENT, MAX_B, &h));
  CHECK_OK(tg_stage_new(tg_cpu(1), TG_STAGE_RESIDENT, MAX_B, &d));
  CHECK_OK(tg_stage_dataset(h, ds));
  CHECK_OK(tg_stage_dataset(d, ds));
  tg_stage_stats d0 = tg_stage_stats_get(d);
  tg_sampler sh, sd, sr;
  CHECK_OK(tg_sampler_init(&sh, &ds->splits, TG_TRAIN, 11, 1));
  CHECK_OK(tg_sampler_init(&sd, &ds->splits, TG_TRAIN, 11, 1));
  CHECK_OK(tg_sampler_init(&sr, &ds->splits, TG_TRAIN, 11, 1));
  static host_batch ref, hb, db;
  tg_batch bh, bd;
  void *addr[4] = {0};
  int wrong = 0, moved = 0, position = 0, short_batch = 0;
  uint64_t allocs = 0, want_d = d0.h2d_bytes;
  for (int64_t c = 0; c < calls; c++) {
    int64_t b = c % 5 == 4 ? 13 : MAX_B, gh = 0, gd = 0;
    reference(ds, &sr, b, &ref);
    uint64_t a0 = tg_alloc_count();
    CHECK_OK(tg_stage_next(h, &sh, b, &bh, &gh));
    allocs += tg_alloc_count() - a0;
    CHECK_OK(tg_stage_next(d, &sd, b, &bd, &gd));
    fetch(h, &bh, &hb);
    fetch(d, &bd, &db);
    wrong += gh != ref.b || gd != ref.b || !batch_eq(&hb, &ref, L) || !batch_eq(&db, &hb, L);
    position += sh.epoch != sr.epoch || sh.cursor != sr.cursor || sd.epoch != sr.epoch || sd.cursor != sr.cursor;
    short_batch += ref.b < b;
    if (c == 0) addr[0] = bh.idx.data, addr[1] = bh.rows.data, addr[2] = bd.idx.data, addr[3] = bd.labels.data;
    moved += bh.idx.data != addr[0] || bh.rows.data != addr[1] || bd.idx.data != addr[2] || bd.labels.data != addr[3];
    want_d += index_bytes(gd, L);
  }
  CHECK_MSG(wrong == 0 && position == 0, "%d batches differ from tg_sampler_next + tg_window_index, %d positions", wrong,
            position);
  CHECK_MSG(sr.epoch == 1 && short_batch <= 1, "epoch %llu, %d short batches: the run should cross one epoch end",
            (unsigned long long)sr.epoch, short_batch);
  CHECK_MSG(moved == 0, "batch buffers moved %d times", moved);
  CHECK_MSG(allocs == 0, "cpu:0 tg_stage_next allocated %llu times", (unsigned long long)allocs);
  tg_stage_stats s0 = tg_stage_stats_get(h), s1 = tg_stage_stats_get(d);
  CHECK_MSG(s0.h2d_bytes == 0 && s0.h2d_copies == 0 && s0.d2h_bytes == 0 && s0.batches == (uint64_t)calls,
            "cpu:0 moved %llu bytes in %llu batches", (unsigned long long)s0.h2d_bytes, (unsigned long long)s0.batches);
  CHECK_MSG(s1.h2d_bytes == want_d && s1.batches == (uint64_t)calls, "cpu:1 moved %llu bytes to the device, expected %llu",
            (unsigned long long)s1.h2d_bytes, (unsigned long long)want_d);
  /* in order without shuffling */
  tg_sampler so;
  CHECK_OK(tg_sampler_init(&so, &ds->splits, TG_VAL, 3, 0));
  int64_t g = 0;
  CHECK_OK(tg_stage_next(h, &so, 4, &bh, &g));
  fetch(h, &bh, &hb);
  CHECK(g == 4 && hb.idx[0] == ds->layout.rows[ds->splits.s[TG_VAL].begin[0]] &&
        hb.idx[3 * L] == ds->layout.rows[ds->splits.s[TG_VAL].begin[0] + 3]);
  tg_sampler_free(&so);
  tg_sampler_free(&sh);
  tg_sampler_free(&sd);
  tg_sampler_free(&sr);
  tg_stage_free(h);
  tg_stage_free(d);
}

/* Streaming through tg_stage_next: batch k points into half k % 2, and the rows there are the right ones. */
static void streaming(tg_device dev, const tg_dataset *ds, const char *what) {
  int64_t L = ds->window, F = ds->fx.f, H = ds->y.nh;
  tg_stage *st;
  CHECK_OK(tg_stage_new(dev, TG_STAGE_STREAMING, MAX_B, &st));
  CHECK_OK(tg_stage_dataset(st, ds));
  CHECK(tg_stage_features(st)->shape[0] == 2 * MAX_B * L && tg_stage_targets(st)->shape[0] == 2 * MAX_B);
  tg_sampler s, sr;
  CHECK_OK(tg_sampler_init(&s, &ds->splits, TG_TRAIN, 21, 1));
  CHECK_OK(tg_sampler_init(&sr, &ds->splits, TG_TRAIN, 21, 1));
  static host_batch ref;
  int bad = 0;
  uint64_t want = 0;
  for (int k = 0; k < 6; k++) {
    int64_t b = k == 3 ? 7 : MAX_B, got = 0;
    tg_batch bt;
    reference(ds, &sr, b, &ref);
    CHECK_OK(tg_stage_next(st, &s, b, &bt, &got));
    bad += got != ref.b || streamed_bad(st, ds, &bt, &ref, k % 2);
    want += (uint64_t)(distinct(ref.idx, b * L) * F * 4 + b * H * 4) + index_bytes(b, L);
  }
  tg_stage_stats ss = tg_stage_stats_get(st);
  CHECK_MSG(bad == 0, "%s: %d streamed batches point at the wrong rows or half", what, bad);
  CHECK_MSG(ss.h2d_bytes == want && ss.h2d_copies == 6 * 6, "%s: moved %llu bytes in %llu copies, expected %llu in 36",
            what, (unsigned long long)ss.h2d_bytes, (unsigned long long)ss.h2d_copies, (unsigned long long)want);
  tg_sampler_free(&s);
  tg_sampler_free(&sr);
  tg_stage_free(st);
}

static void next_errors(const tg_dataset *ds, const tg_dataset *other) {
  tg_stage *st;
  tg_batch bt;
  int64_t got = 0;
  tg_sampler s, none;
  memset(&none, 0, sizeof none);
  CHECK_OK(tg_stage_new(tg_cpu(0), TG_STAGE_RESIDENT, 8, &st));
  CHECK_OK(tg_sampler_init(&s, &other->splits, TG_TEST, 1, 1));
  CHECK_STATUS(tg_stage_next(st, &s, 8, &bt, &got), TG_ERR_INVALID); /* nothing staged */
  CHECK_OK(tg_stage_dataset(st, ds));
  CHECK_STATUS(tg_stage_next(st, &s, 8, &bt, &got), TG_ERR_INVALID); /* another dataset's split */
  CHECK_MSG(strstr(tg_last_error(), "staged dataset") && strstr(tg_last_error(), "this dataset's splits"), "%s",
            tg_last_error());
  CHECK(s.epoch == 0 && s.cursor == 0);
  CHECK_STATUS(tg_stage_next(st, &none, 8, &bt, &got), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "not initialised"), "%s", tg_last_error());
  tg_sampler_free(&s);
  CHECK_OK(tg_sampler_init(&s, &ds->splits, TG_TRAIN, 1, 1));
  CHECK_STATUS(tg_stage_next(st, &s, 9, &bt, &got), TG_ERR_INVALID); /* over max_batch */
  CHECK_STATUS(tg_stage_next(st, &s, 0, &bt, &got), TG_ERR_INVALID);
  CHECK(s.epoch == 0 && s.cursor == 0);
  tg_sampler_free(&s);
  tg_stage_free(st);
}

/* CUDA: resident batches computed on the device equal cpu:0's and move no bytes after the first;
 * streamed batches gather the same rows. */
static void next_on_cuda(const tg_dataset *ds) {
  int64_t L = ds->window, n = ds->fx.n, F = ds->fx.f, H = ds->y.nh;
  tg_stage *h, *d;
  CHECK_OK(tg_stage_new(tg_cpu(0), TG_STAGE_RESIDENT, MAX_B, &h));
  CHECK_OK(tg_stage_new(tg_cuda(0), TG_STAGE_RESIDENT, MAX_B, &d));
  CHECK_OK(tg_stage_dataset(h, ds));
  CHECK_OK(tg_stage_dataset(d, ds));
  tg_sampler sh, sd, vh, vd;
  CHECK_OK(tg_sampler_init(&sh, &ds->splits, TG_TRAIN, 11, 1));
  CHECK_OK(tg_sampler_init(&sd, &ds->splits, TG_TRAIN, 11, 1));
  CHECK_OK(tg_sampler_init(&vh, &ds->splits, TG_VAL, 12, 1));
  CHECK_OK(tg_sampler_init(&vd, &ds->splits, TG_VAL, 12, 1));
  static host_batch hb, db;
  tg_batch bh, bd;
  void *addr = NULL;
  int wrong = 0, moved = 0, grew = 0;
  uint64_t staged = (uint64_t)(n * F * 4 + n * H * 4), tables = (uint64_t)(n * 8 + n * 4 + n * 4),
           split = (uint64_t)(2 * sd.runs + 1) * 8, after_first = 0; /* the runs of starts: one per instrument
                                                                        without holes */
  int64_t calls = ds->splits.s[TG_TRAIN].count / 40 + 2 /* > one epoch: 54 windows a call */;
  for (int64_t c = 0; c < calls; c++) {
    int64_t b = c % 5 == 4 ? 13 : MAX_B, gh = 0, gd = 0;
    CHECK_OK(tg_stage_next(h, &sh, b, &bh, &gh));
    CHECK_OK(tg_stage_next(d, &sd, b, &bd, &gd));
    uint64_t now = tg_stage_stats_get(d).h2d_bytes;
    if (c == 0) {
      CHECK_MSG(now == staged + tables + split, "cuda:0: %llu bytes up after the first batch, expected %llu",
                (unsigned long long)now, (unsigned long long)(staged + tables + split));
      after_first = now, addr = bd.idx.data;
    }
    grew += now != after_first;
    moved += bd.idx.data != addr;
    fetch(h, &bh, &hb);
    fetch(d, &bd, &db);
    wrong += gh != gd || !batch_eq(&db, &hb, L) || sd.epoch != sh.epoch || sd.cursor != sh.cursor;
  }
  CHECK_MSG(wrong == 0, "cuda:0: %d batches differ from cpu:0's", wrong);
  printf("cuda:0 resident staging: %lld batches computed by the staging kernel, compared with cpu:0's\n", (long long)calls);
  CHECK_MSG(grew == 0, "cuda:0: %d batches after the first moved bytes to the device", grew);
  CHECK_MSG(moved == 0, "cuda:0: the batch buffers moved %d times", moved);
  /* another split uploads its offsets once; going back finds the first split's still on the device (two stay
   * resident: an epoch alternates the training and validation splits) */
  int64_t g = 0;
  CHECK_OK(tg_stage_next(d, &vd, MAX_B, &bd, &g));
  CHECK_OK(tg_stage_next(d, &vd, MAX_B, &bd, &g));
  CHECK_OK(tg_stage_next(h, &vh, MAX_B, &bh, &g));
  CHECK_OK(tg_stage_next(h, &vh, MAX_B, &bh, &g));
  fetch(h, &bh, &hb);
  fetch(d, &bd, &db);
  CHECK_MSG(batch_eq(&db, &hb, L), "cuda:0: the validation batch differs from cpu:0's");
  CHECK_OK(tg_stage_next(d, &sd, MAX_B, &bd, &g));
  CHECK(tg_stage_stats_get(d).h2d_bytes == after_first + (uint64_t)(2 * vd.runs + 1) * 8);
  tg_sampler_free(&sh);
  tg_sampler_free(&sd);
  tg_sampler_free(&vh);
  tg_sampler_free(&vd);
  tg_stage_free(h);
  tg_stage_free(d);
  streaming(tg_cuda(0), ds, "cuda:0 streaming");
}

int main(void) {
  g_seed = tg_test_seed(2024);
  permutations();
  tg_bars b, b2;
  make_bars(&b, 3000, 2, 1);
  make_bars(&b2, 9000, 2, 2);
  tg_dataset ds, other;
  tg_dataset_opts o = {.targets = {.nh = 2, .horizons = {1, 3}, .dead_zone = 1e-4}, .splits = {.window = 24}};
  CHECK_OK(tg_dataset_build(&b, &o, &ds));
  CHECK_OK(tg_dataset_build(&b2, &o, &other));
  next_on_cpu(&ds);
  streaming(tg_cpu(1), &ds, "cpu:1 streaming");
  next_errors(&ds, &other);
  tg_dataset holed; /* a column target missing at every 97th row: splits with holes, many runs of starts */
  tg_dataset_opts oh = {.targets = {.kind = TG_TARGET_COLUMN, .column = "x", .nh = 2, .horizons = {1, 3}},
                        .splits = {.window = 24}};
  CHECK_OK(tg_bars_add_column(&b, "x", TG_COLUMN_NUMERIC));
  for (int64_t r = 0; r < b.n; r++) b.cols[0].values[r] = r % 97 == 50 ? NAN : (double)(r % 5);
  CHECK_OK(tg_dataset_build(&b, &oh, &holed));
  CHECK(holed.splits.s[TG_TRAIN].n_runs > 2 * 10 && holed.splits.s[TG_TRAIN].dropped[TG_DROP_TARGET] > 0);
  next_on_cpu(&holed);
  const char *want = getenv("TG_EXPECT_CUDA_DEVICE"); /* set for the emulated-CUDA build, which has one */
  if (tg_cuda_count() == 0) {
    CHECK_MSG(!(want && want[0] == '1'), "TG_EXPECT_CUDA_DEVICE=1 but no CUDA device: %s", tg_cuda_why_none());
    printf("skipped: no CUDA device\n");
  } else {
    next_on_cuda(&ds);
    next_on_cuda(&holed);
  }
  tg_dataset_free(&holed);
  tg_dataset_free(&ds);
  tg_dataset_free(&other);
  tg_bars_free(&b);
  tg_bars_free(&b2);
  return tg_test_finish();
}
