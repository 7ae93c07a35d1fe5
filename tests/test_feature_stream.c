/* Feature stream: rows pushed one bar at a time equal tg_features_compute bitwise (any interleaving, DST, reset and
 * replay, covariates), no heap calls per push, and bad bars, instruments and times are refused without changing the
 * state. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "data/readers/timeconv.h"
#include "support/check.h"
#include "support/heap_count.h"
#include "tickgrad/dataset.h"
#include "tickgrad/rng.h"

#define ODD_SPEC "logret,vol:2,vol:50,rsi:3,macd:3:7:2,dist_mean:2,logvol_z:5,inst,tod,dow"
#define NY "America/New_York"

static uint64_t g_seed;

/* 3 instruments (ids 7, 19, 300) on random walks from `start` (days since 1970), one step every 7 minutes;
 * at each step instrument j has a bar with probability 0.9, 0.5, 0.25 (uneven counts, shared timestamps),
 * and now and then a second bar at the same instant. Some bars are flat (high == low) or have no volume. */
static void make_bars(tg_bars *b, int64_t steps, int64_t start_day, uint64_t stream) {
  static const double p[3] = {0.9, 0.5, 0.25};
  static const uint32_t ids[3] = {7, 19, 300};
  double last[3] = {100.0, 3.5, 2400.0};
  tg_bars_init(b);
  tg_bars_reserve(b, steps * 4, 1);
  int64_t t0 = start_day * TG_NS_PER_DAY, q = 0;
  for (int64_t s = 0; s < steps; s++)
    for (int j = 0; j < 3; j++) {
      int reps = tg_rng_uniform(g_seed, stream, q++) < p[j] ? 1 : 0;
      if (reps && tg_rng_uniform(g_seed, stream, q++) < 0.03) reps = 2;
      for (int r = 0; r < reps; r++, q += 8) {
        double o = last[j] * exp(0.001 * tg_rng_normal(g_seed, stream, q));
        double c = o * exp(0.004 * tg_rng_normal(g_seed, stream, q + 1));
        double h = fmax(o, c) * exp(fabs(0.002 * tg_rng_normal(g_seed, stream, q + 2)));
        double l = fmin(o, c) * exp(-fabs(0.002 * tg_rng_normal(g_seed, stream, q + 3)));
        double v = 500.0 * exp(0.7 * tg_rng_normal(g_seed, stream, q + 4));
        double u = tg_rng_uniform(g_seed, stream, q + 5);
        if (u < 0.04) h = l = o = c;
        if (u > 0.97) v = 0.0;
        last[j] = c;
        tg_bars_push(b, t0 + s * 7 * 60 * TG_NS_PER_S, o, h, l, c, v, ids[j]);
      }
    }
}

typedef struct batch {
  tg_layout lay;
  tg_features fx;
} batch;

static void batch_make(const tg_bars *b, const char *spec, const char *tz, batch *out) {
  tg_feature_opts fo = {.spec = spec, .tz = tz};
  CHECK_OK(tg_layout_build(b, &out->lay));
  CHECK_OK(tg_features_compute(b, &out->lay, &fo, &out->fx));
}

static void batch_free(batch *x) {
  tg_features_free(&x->fx);
  tg_layout_free(&x->lay);
}

/* Pushes row r of the bars; 1 when the pushed row is bitwise the batch row and valid is as the batch says. */
static int push_row(tg_feature_stream *s, const tg_bars *b, const batch *x, int64_t r, float *row) {
  int j = x->lay.inst[r], valid = -1;
  tg_status st = tg_feature_stream_push(s, j, b->ts[r], b->open[r], b->high[r], b->low[r], b->close[r], b->volume[r],
                                        row, &valid);
  if (st != TG_OK) {
    fprintf(stderr, "row %lld: %s\n", (long long)r, tg_last_error());
    return 0;
  }
  int same = memcmp(row, x->fx.x + r * x->fx.f, (size_t)x->fx.f * sizeof(float)) == 0;
  return same && valid == (r >= x->fx.first_valid[j]);
}

/* Every row in file (time) order; returns the rows that differ. */
static int64_t replay_rows(tg_feature_stream *s, const tg_bars *b, const batch *x, float *row) {
  int64_t bad = 0;
  for (int64_t r = 0; r < b->n; r++)
    if (!push_row(s, b, x, r, row) && bad++ < 5) fprintf(stderr, "row %lld differs\n", (long long)r);
  return bad;
}

/* Every row instrument by instrument (last instrument first): another interleaving of the same per-instrument order. */
static int64_t replay_by_instrument(tg_feature_stream *s, const tg_bars *b, const batch *x, float *row) {
  int64_t bad = 0;
  for (int j = x->lay.k - 1; j >= 0; j--)
    for (int64_t p = x->lay.seg[j]; p < x->lay.seg[j + 1]; p++)
      if (!push_row(s, b, x, x->lay.rows[p], row) && bad++ < 5)
        fprintf(stderr, "row %lld differs (by instrument)\n", (long long)x->lay.rows[p]);
  return bad;
}

/* The stream's description matches the batch's, and every row matches in two interleavings and after a reset. */
static void stream_equals_batch(const char *spec, const char *tz, int64_t start_day, uint64_t stream) {
  tg_bars b;
  make_bars(&b, 3000, start_day, stream);
  batch x;
  batch_make(&b, spec, tz, &x);
  CHECK(x.lay.k == 3);
  tg_feature_opts fo = {.spec = spec, .tz = tz};
  tg_feature_stream *s = NULL;
  CHECK_OK(tg_feature_stream_new(&fo, x.lay.ids, x.lay.k, &s));
  if (!s) return;
  const char *what = spec ? spec : "default", *zone = tz ? tz : "UTC";
  int f = tg_feature_stream_width(s);
  CHECK_MSG(f == x.fx.f, "width %d, batch %d", f, x.fx.f);
  if (f != x.fx.f) return;
  CHECK(tg_feature_stream_warmup(s) == x.fx.warmup_max);
  for (int c = 0; c < f && c < x.fx.f; c++)
    CHECK_MSG(strcmp(tg_feature_stream_name(s, c), x.fx.names[c]) == 0, "column %d: %s", c,
              tg_feature_stream_name(s, c));
  CHECK(tg_feature_stream_name(s, -1) == NULL && tg_feature_stream_name(s, f) == NULL);
  int64_t nan = 0, num = 0, counts[3] = {0, 0, 0};
  for (int64_t i = 0; i < b.n * x.fx.f; i++) {
    if (isnan(x.fx.x[i])) nan++;
    else num++;
  }
  for (int64_t r = 0; r < b.n; r++) counts[x.lay.inst[r]]++;
  CHECK_MSG(nan > 0 && num > 0 && counts[2] > x.fx.warmup_max && counts[0] > 2 * counts[2],
            "the series has warm-up and valid entries and uneven instruments (%lld, %lld, %lld)", (long long)counts[0],
            (long long)counts[1], (long long)counts[2]);
  float *row = malloc((size_t)f * sizeof *row);
  int64_t bad = replay_rows(s, &b, &x, row);
  CHECK_MSG(bad == 0, "%s, tz %s: %lld rows differ from the batch features", what, zone, (long long)bad);
  /* reset and replay in another interleaving, counting heap calls */
  tg_feature_stream_reset(s);
  long heap0 = tg_test_heap_calls();
  bad = replay_by_instrument(s, &b, &x, row);
  long heap = tg_test_heap_calls() - heap0;
  CHECK_MSG(bad == 0, "%s, tz %s: after a reset, %lld rows pushed by instrument differ", what, zone, (long long)bad);
  CHECK_MSG(heap == 0, "%ld heap calls in %lld pushes", heap, (long long)b.n);
  tg_feature_stream_reset(s);
  bad = replay_rows(s, &b, &x, row);
  CHECK_MSG(bad == 0, "%s, tz %s: after a second reset, %lld rows differ", what, zone, (long long)bad);
  free(row);
  tg_feature_stream_free(s);
  batch_free(&x);
  tg_bars_free(&b);
}

/* Covariate columns on the bars: obs (observed, often missing, instrument 300 without a value for its first 400
 * bars), fut (known), st (one value per instrument, sometimes missing) and grp (names; "late" only in the last tenth
 * of the rows, so the vocabulary fitted on training rows lacks it). */
static void add_covariates(tg_bars *b, uint64_t stream) {
  static const char *names[5] = {"energy", "banks", "tech", "retail", "mining"};
  tg_bars_add_column(b, "obs", TG_COLUMN_NUMERIC);
  tg_bars_add_column(b, "fut", TG_COLUMN_NUMERIC);
  tg_bars_add_column(b, "st", TG_COLUMN_NUMERIC);
  tg_bars_add_column(b, "grp", TG_COLUMN_CATEGORY);
  tg_bar_column *obs = &b->cols[0], *fut = &b->cols[1], *st = &b->cols[2], *grp = &b->cols[3];
  int64_t seen300 = 0;
  for (int64_t r = 0; r < b->n; r++) {
    uint64_t q = 1000000 + (uint64_t)r * 6;
    uint32_t id = b->instrument[r];
    seen300 += id == 300;
    obs->values[r] = tg_rng_uniform(g_seed, stream, q) < 0.3 || (id == 300 && seen300 <= 400)
                         ? NAN : tg_rng_normal(g_seed, stream, q + 1);
    fut->values[r] = tg_rng_uniform(g_seed, stream, q + 2) < 0.1 ? NAN : (double)(r % 17) - 8.0;
    st->values[r] = tg_rng_uniform(g_seed, stream, q + 3) < 0.2 ? NAN : 1.0 + 0.5 * (double)(id % 7);
    const char *name = names[(int)(tg_rng_uniform(g_seed, stream, q + 4) * 5.0) % 5];
    if (r >= b->n - b->n / 10 && r % 3 == 0) name = "late";
    uint32_t code = TG_CATEGORY_MISSING;
    if (tg_rng_uniform(g_seed, stream, q + 5) >= 0.1) tg_categories_intern(&grp->cats, name, strlen(name), &code);
    grp->codes[r] = code;
  }
}

/* Pushes row r with its covariate inputs (leads from the batch, as a caller that knows them would give them). */
static int push_row_ex(tg_feature_stream *s, const tg_bars *b, const batch *x, int64_t r, float *row) {
  int n_in = tg_feature_stream_n_inputs(s), n_num = tg_feature_stream_n_num_inputs(s), j = x->lay.inst[r], valid = -1;
  double num[16];
  const char *cat[4];
  for (int i = 0; i < n_in && i < 16; i++) {
    const char *name = tg_feature_stream_input_name(s, i);
    const tg_bar_column *c = tg_bars_column(b, name);
    if (i >= n_num) {
      cat[i - n_num] = c->codes[r] == TG_CATEGORY_MISSING ? NULL : tg_categories_name(&c->cats, c->codes[r]);
    } else if (c) {
      num[i] = c->values[r];
    } else { /* a lead: its batch column */
      int col = 0;
      while (strcmp(x->fx.names[col], name) != 0) col++;
      num[i] = x->fx.x[r * x->fx.f + col];
    }
  }
  tg_status st = tg_feature_stream_push_ex(s, j, b->ts[r], b->open[r], b->high[r], b->low[r], b->close[r], b->volume[r],
                                           num, cat, row, &valid);
  if (st != TG_OK) {
    fprintf(stderr, "row %lld: %s\n", (long long)r, tg_last_error());
    return 0;
  }
  return memcmp(row, x->fx.x + r * x->fx.f, (size_t)x->fx.f * sizeof(float)) == 0 && valid == (r >= x->fx.first_valid[j]);
}

/* Covariates: push_ex equals the batch bitwise (cat ids through a vocabulary fitted on training rows, known leads,
 * carried values and their warm-ups) in two interleavings, without heap calls; push is refused. */
static void covariates_equal_batch(const char *tz, int64_t start_day, uint64_t stream) {
  tg_bars b;
  make_bars(&b, 3000, start_day, stream);
  add_covariates(&b, stream);
  const char *spec = ODD_SPEC ",col:obs,cat:grp,known:fut,static:st";
  tg_dataset_opts o = {.features = {.spec = spec, .tz = tz, .leads = 3}, .no_normalize = 1};
  tg_dataset ds;
  CHECK_OK(tg_dataset_build(&b, &o, &ds));
  if (ds.norm.n_vocab != 1) return;
  CHECK(ds.norm.vocab[0].n == 5 && tg_vocab_id(&ds.norm.vocab[0], "late") == 0);
  tg_feature_opts fo = {.spec = spec, .tz = tz, .leads = 3, .vocab = ds.norm.vocab, .n_vocab = 1};
  batch x;
  CHECK_OK(tg_layout_build(&b, &x.lay));
  CHECK_OK(tg_features_compute(&b, &x.lay, &fo, &x.fx));
  CHECK(memcmp(x.fx.x, ds.fx.x, (size_t)b.n * (size_t)x.fx.f * sizeof(float)) == 0); /* recoded = given vocabulary */
  tg_feature_stream *s = NULL;
  CHECK_OK(tg_feature_stream_new(&fo, x.lay.ids, x.lay.k, &s));
  if (!s) return;
  int f = tg_feature_stream_width(s);
  CHECK(f == x.fx.f && tg_feature_stream_n_inputs(s) == 7 && tg_feature_stream_n_num_inputs(s) == 6);
  for (int c = 0; c < f && c < x.fx.f; c++) CHECK(strcmp(tg_feature_stream_name(s, c), x.fx.names[c]) == 0);
  CHECK(strcmp(tg_feature_stream_input_name(s, 2), "fut@+1") == 0 && strcmp(tg_feature_stream_input_name(s, 6), "grp") == 0);
  CHECK_MSG(x.fx.first_valid[2] >= x.lay.rows[x.lay.seg[2] + 400], "instrument 300 waits for its first obs");
  float *row = malloc((size_t)f * sizeof *row);
  CHECK_STATUS(tg_feature_stream_push(s, 0, b.ts[0], b.open[0], b.high[0], b.low[0], b.close[0], b.volume[0], row,
                                      NULL), TG_ERR_INVALID);
  int64_t bad = 0;
  for (int64_t r = 0; r < b.n; r++) bad += !push_row_ex(s, &b, &x, r, row);
  CHECK_MSG(bad == 0, "covariates: %lld rows differ from the batch", (long long)bad);
  tg_feature_stream_reset(s);
  long heap0 = tg_test_heap_calls();
  bad = 0;
  for (int j = x.lay.k - 1; j >= 0; j--)
    for (int64_t p = x.lay.seg[j]; p < x.lay.seg[j + 1]; p++) bad += !push_row_ex(s, &b, &x, x.lay.rows[p], row);
  long heap = tg_test_heap_calls() - heap0;
  CHECK_MSG(bad == 0, "covariates, by instrument after a reset: %lld rows differ", (long long)bad);
  CHECK_MSG(heap == 0, "%ld heap calls in %lld pushes", heap, (long long)b.n);
  free(row);
  tg_feature_stream_free(s);
  batch_free(&x);
  tg_dataset_free(&ds);
  tg_bars_free(&b);
}

/* The time of day through the stream's cached zone offsets equals a lookup per bar (the DST change is inside). */
static void time_of_day_per_bar(int64_t start_day) {
  tg_bars b;
  make_bars(&b, 3000, start_day, 9);
  uint32_t ids[3] = {7, 19, 300};
  tg_feature_opts fo = {.spec = "tod", .tz = NY};
  tg_feature_stream *s = NULL;
  CHECK_OK(tg_feature_stream_new(&fo, ids, 3, &s));
  if (!s) return;
  int bad = 0, offsets[2] = {0, 0};
  for (int64_t r = 0; r < b.n; r++) {
    float row[2];
    int j = b.instrument[r] == 7 ? 0 : b.instrument[r] == 19 ? 1 : 2, off = 0;
    CHECK_OK(tg_feature_stream_push(s, j, b.ts[r], b.open[r], b.high[r], b.low[r], b.close[r], b.volume[r], row, NULL));
    CHECK_OK(tg_tz_offset_at_utc(NY, b.ts[r] / TG_NS_PER_S, &off));
    offsets[off == -4 * 3600] = 1;
    double a = 6.283185307179586 * (double)((b.ts[r] / TG_NS_PER_S + off) % 86400) / 86400.0;
    if (fabs(row[0] - sin(a)) > 1e-6 || fabs(row[1] - cos(a)) > 1e-6) bad++;
  }
  CHECK_MSG(offsets[0] && offsets[1], "the series crosses a DST change");
  CHECK_MSG(bad == 0, "%d times of day differ from a zone lookup per bar", bad);
  tg_feature_stream_free(s);
  tg_bars_free(&b);
}

/* Bad bars, bad instruments and times going backwards are refused and change nothing: every good row after
 * them still equals the batch row of the good bars alone. */
static void bad_pushes(void) {
  tg_bars b;
  make_bars(&b, 400, tg_days_from_civil(2022, 6, 1), 5);
  batch x;
  batch_make(&b, TG_FEATURES_DEFAULT ",inst", NULL, &x);
  tg_feature_stream *s = NULL;
  CHECK_OK(tg_feature_stream_new(&(tg_feature_opts){.spec = TG_FEATURES_DEFAULT ",inst", .tz = NULL}, x.lay.ids, 3, &s));
  if (!s) return;
  int f = tg_feature_stream_width(s), bad = 0, refused = 0, kept = 1;
  float *row = malloc((size_t)f * sizeof *row);
  for (int64_t r = 0; r < b.n; r++) {
    int j = x.lay.inst[r];
    if (r % 7 == 3) { /* a bad bar first: each kind of fault in turn */
      double o = b.open[r], h = b.high[r], l = b.low[r], c = b.close[r], v = b.volume[r];
      const char *field = NULL;
      switch ((r / 7) % 7) {
        case 0: c = NAN, field = "close"; break;
        case 1: o = -1.0, field = "open"; break;
        case 2: h = INFINITY, field = "high"; break;
        case 3: l = 0.0, field = "low"; break;
        case 4: v = -1.0, field = "volume"; break;
        case 5: v = NAN, field = "volume"; break;
        default: h = l * 0.5, field = "below low"; break;
      }
      for (int c2 = 0; c2 < f; c2++) row[c2] = 12345.0f;
      int valid = 7;
      tg_status st = tg_feature_stream_push(s, j, b.ts[r], o, h, l, c, v, row, &valid);
      refused += st == TG_ERR_NUMERIC;
      CHECK_MSG(st == TG_ERR_NUMERIC && strstr(tg_last_error(), field), "row %lld (%s): %s", (long long)r, field,
                tg_last_error());
      for (int c2 = 0; c2 < f; c2++) kept &= row[c2] == 12345.0f;
      kept &= valid == 7;
    }
    if (r % 11 == 5) { /* an instrument index out of range, then a time before this instrument's last bar */
      CHECK_STATUS(tg_feature_stream_push(s, r % 2 ? 3 : -1, b.ts[r], 1, 1, 1, 1, 1, row, NULL), TG_ERR_INVALID);
      CHECK_MSG(strstr(tg_last_error(), "out of range"), "%s", tg_last_error());
      int64_t p = r; /* this instrument's previous bar */
      while (--p >= 0 && x.lay.inst[p] != j) {}
      if (p >= 0) {
        tg_status st = tg_feature_stream_push(s, j, b.ts[p] - 1, b.open[r], b.high[r], b.low[r], b.close[r],
                                              b.volume[r], row, NULL);
        CHECK_MSG(st == TG_ERR_INVALID && strstr(tg_last_error(), "earlier"), "row %lld: %s", (long long)r,
                  tg_last_error());
      }
    }
    bad += !push_row(s, &b, &x, r, row);
  }
  CHECK_MSG(refused >= 50, "%d bad bars refused", refused);
  CHECK_MSG(kept, "a refused push left the row and valid flag alone");
  CHECK_MSG(bad == 0, "%d good rows differ from the batch after refused pushes", bad);
  /* a bar at the same instant as the instrument's previous one is accepted */
  int64_t last = b.n - 1;
  CHECK_OK(tg_feature_stream_push(s, x.lay.inst[last], b.ts[last], 10, 11, 9, 10, 5, row, NULL));
  free(row);
  tg_feature_stream_free(s);
  batch_free(&x);
  tg_bars_free(&b);
}

static void bad_streams(void) {
  uint32_t ids[3] = {1, 5, 9}, unsorted[3] = {1, 9, 5};
  tg_feature_stream *s = (tg_feature_stream *)&ids; /* must be set to NULL on failure */
  tg_feature_opts bad_spec = {.spec = "logret,vol:1"}, bad_tz = {.spec = "tod", .tz = "Mars/Olympus"}, ok = {.spec = NULL};
  CHECK_STATUS(tg_feature_stream_new(&bad_spec, ids, 3, &s), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "'vol:1'") && strstr(tg_last_error(), "valid names"), "%s", tg_last_error());
  CHECK(s == NULL);
  CHECK_STATUS(tg_feature_stream_new(&bad_tz, ids, 3, &s), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "Mars/Olympus"), "%s", tg_last_error());
  CHECK_STATUS(tg_feature_stream_new(&ok, unsorted, 3, &s), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "ascending"), "%s", tg_last_error());
  CHECK_STATUS(tg_feature_stream_new(&ok, ids, 0, &s), TG_ERR_INVALID);
  /* NULL opts: the default spec in UTC */
  CHECK_OK(tg_feature_stream_new(NULL, ids, 3, &s));
  if (!s) return;
  CHECK(tg_feature_stream_width(s) == 16 && tg_feature_stream_warmup(s) == 33);
  CHECK(strcmp(tg_feature_stream_name(s, 0), "logret") == 0 && strcmp(tg_feature_stream_name(s, 15), "dow_cos") == 0);
  tg_feature_stream_free(s);
  tg_feature_stream_free(NULL);
}

/* One instrument without an instrument column (layout ids {0}), every feature. */
static void single_instrument(const char *tz) {
  tg_bars m, b;
  make_bars(&m, 900, tg_days_from_civil(2021, 3, 10), 3);
  tg_bars_init(&b);
  for (int64_t r = 0; r < m.n; r++)
    if (m.instrument[r] == 19) tg_bars_push(&b, m.ts[r], m.open[r], m.high[r], m.low[r], m.close[r], m.volume[r], 0);
  const char *spec = "logret,range,body,wicks,logvol_z:20,vol:10,vol:30,rsi:14,macd,dist_mean:20,tod,dow,inst";
  batch x;
  batch_make(&b, spec, tz, &x);
  CHECK(x.lay.k == 1 && x.lay.ids[0] == 0);
  tg_feature_stream *s = NULL;
  CHECK_OK(tg_feature_stream_new(&(tg_feature_opts){.spec = spec, .tz = tz}, x.lay.ids, 1, &s));
  if (!s) return;
  float row[32];
  CHECK(tg_feature_stream_width(s) == 17 && x.fx.f == 17);
  int64_t bad = replay_rows(s, &b, &x, row);
  CHECK_MSG(bad == 0, "one instrument: %lld rows differ", (long long)bad);
  tg_feature_stream_free(s);
  batch_free(&x);
  tg_bars_free(&b);
  tg_bars_free(&m);
}

int main(void) {
  g_seed = tg_test_seed(20250301);
  const char *ny = tg_tz_check(NY) == TG_OK ? NY : NULL;
  if (!ny) printf("no zone database: the calendar features are checked in UTC only\n");
  int64_t autumn = tg_days_from_civil(2021, 10, 31), spring = tg_days_from_civil(2021, 3, 9);
  stream_equals_batch(NULL, ny, autumn, 1);
  stream_equals_batch(ODD_SPEC, ny, spring, 2);
  stream_equals_batch(ODD_SPEC ",range,body,wicks", NULL, autumn, 3);
  if (ny) {
    time_of_day_per_bar(autumn);
    time_of_day_per_bar(spring);
  }
  covariates_equal_batch(ny, autumn, 11);
  covariates_equal_batch(NULL, spring, 12);
  bad_pushes();
  bad_streams();
  single_instrument(ny);
  return tg_test_finish();
}
