/* Features: causality (future bars changed, past rows bitwise equal), per-instrument isolation, values against
 * plain references, warm-up marking, spec errors. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "data/readers/timeconv.h"
#include "support/check.h"
#include "tickgrad/dataset.h"
#include "tickgrad/rng.h"

#define ALL_SPEC "logret,range,body,wicks,logvol_z:20,vol:10,vol:30,rsi:14,macd,dist_mean:20,tod,dow,inst"

static uint64_t g_seed;

/* One random bar after close `prev` (draws from stream `stream`, counters 8i..). */
static void random_bar(uint64_t stream, int64_t i, double prev, double *o, double *h, double *l, double *c, double *v) {
  uint64_t q = (uint64_t)i * 8;
  *o = prev * exp(0.001 * tg_rng_normal(g_seed, stream, q));
  *c = *o * exp(0.003 * tg_rng_normal(g_seed, stream, q + 1));
  *h = fmax(*o, *c) * exp(fabs(0.002 * tg_rng_normal(g_seed, stream, q + 2)));
  *l = fmin(*o, *c) * exp(-fabs(0.002 * tg_rng_normal(g_seed, stream, q + 3)));
  *v = 1000.0 * exp(0.5 * tg_rng_normal(g_seed, stream, q + 4));
  if (tg_rng_uniform(g_seed, stream, q + 5) < 0.05) *h = *l = *o = *c; /* some flat bars (zero range) */
}

/* n bars of k instruments, interleaved at the same instants (k bars per minute step). */
static void make_bars(tg_bars *b, int64_t n, int k, uint64_t stream) {
  tg_bars_init(b);
  tg_bars_reserve(b, n, k > 1);
  double last[8] = {100, 50, 2000, 7, 30, 1, 9, 12};
  int64_t t0 = tg_days_from_civil(2021, 3, 10) * TG_NS_PER_DAY + 13 * 3600 * TG_NS_PER_S;
  for (int64_t i = 0; i < n; i++) {
    int j = (int)(i % k);
    double o, h, l, c, v;
    random_bar(stream, i, last[j], &o, &h, &l, &c, &v);
    last[j] = c;
    tg_bars_push(b, t0 + (i / k) * 37 * 60 * TG_NS_PER_S, o, h, l, c, v, (uint32_t)(10 + 3 * j));
  }
}

static void copy_bars(tg_bars *dst, const tg_bars *src) {
  tg_bars_init(dst);
  tg_bars_append(dst, src);
}

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Change every bar after row t (prices, volumes, later timestamps), recompute, compare rows <= t. */
static void causality(int64_t n, int k, const char *tz) {
  tg_bars b;
  make_bars(&b, n, k, 1);
  tg_layout lay;
  tg_features fx;
  tg_feature_opts fo = {.spec = ALL_SPEC, .tz = tz};
  CHECK_OK(tg_layout_build(&b, &lay));
  CHECK_OK(tg_features_compute(&b, &lay, &fo, &fx));
  int64_t ts_list[] = {0, 1, 2, 13, 40, n / 3, n / 2 + 1, n - 2};
  int bad = 0, changed = 0;
  for (size_t q = 0; q < sizeof ts_list / sizeof ts_list[0]; q++) {
    int64_t t = ts_list[q];
    tg_bars b2;
    copy_bars(&b2, &b);
    for (int64_t i = t + 1; i < n; i++) {
      double o, h, l, c, v;
      random_bar(100 + q, i, b.close[i] * (0.5 + tg_rng_uniform(g_seed, 200 + q, i)), &o, &h, &l, &c, &v);
      b2.open[i] = o, b2.high[i] = h, b2.low[i] = l, b2.close[i] = c, b2.volume[i] = v;
      b2.ts[i] = b.ts[i] + (int64_t)(i - t) * 1000 * TG_NS_PER_S; /* still in time order */
    }
    tg_layout lay2;
    tg_features fx2;
    CHECK_OK(tg_layout_build(&b2, &lay2));
    CHECK_OK(tg_features_compute(&b2, &lay2, &fo, &fx2));
    for (int c = 0; c < fx.f; c++) {
      for (int64_t r = 0; r <= t; r++)
        if (!same_bits(fx.x[r * fx.f + c], fx2.x[r * fx.f + c])) {
          if (bad++ < 5) fprintf(stderr, "t %lld: column %s row %lld changed\n", (long long)t, fx.names[c], (long long)r);
        }
      for (int64_t r = t + 1; r < n; r++) changed += !same_bits(fx.x[r * fx.f + c], fx2.x[r * fx.f + c]);
    }
    tg_features_free(&fx2);
    tg_layout_free(&lay2);
    tg_bars_free(&b2);
  }
  CHECK_MSG(bad == 0, "%d past entries changed (k %d)", bad, k);
  CHECK_MSG(changed > 0, "changing the future changed nothing: the test has no teeth");
  tg_features_free(&fx);
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

/* Features of each instrument in a mixed series equal those of that instrument alone. */
static void per_instrument(void) {
  tg_bars mix, one;
  make_bars(&mix, 900, 3, 2);
  tg_bars_init(&one);
  for (int64_t i = 0; i < mix.n; i++)
    if (mix.instrument[i] == 13)
      tg_bars_push(&one, mix.ts[i], mix.open[i], mix.high[i], mix.low[i], mix.close[i], mix.volume[i], 0);
  tg_feature_opts fo = {.spec = TG_FEATURES_DEFAULT, .tz = NULL};
  tg_layout lm, lo;
  tg_features fm, f1;
  CHECK_OK(tg_layout_build(&mix, &lm));
  CHECK_OK(tg_layout_build(&one, &lo));
  CHECK(lm.k == 3 && lm.ids[1] == 13 && lo.k == 1);
  CHECK_OK(tg_features_compute(&mix, &lm, &fo, &fm));
  CHECK_OK(tg_features_compute(&one, &lo, &fo, &f1));
  CHECK(fm.f == f1.f && f1.n == 300);
  int bad = 0;
  for (int64_t p = 0; p < 300; p++) {
    int64_t r = lm.rows[lm.seg[1] + p];
    CHECK(mix.instrument[r] == 13);
    bad += memcmp(fm.x + r * fm.f, f1.x + p * f1.f, (size_t)fm.f * sizeof(float)) != 0;
  }
  CHECK_MSG(bad == 0, "%d rows of instrument 13 differ from the instrument alone", bad);
  /* warm-up per instrument: first valid row of each instrument is its warmup_max-th bar */
  for (int j = 0; j < 3; j++) CHECK(fm.first_valid[j] == lm.rows[lm.seg[j] + fm.warmup_max]);
  CHECK(fm.first_valid_row == fm.first_valid[2]);
  /* one-hot of the instrument */
  tg_feature_opts fi = {.spec = "inst", .tz = NULL};
  tg_features fh;
  CHECK_OK(tg_features_compute(&mix, &lm, &fi, &fh));
  CHECK(fh.f == 3 && strcmp(fh.names[2], "inst=16") == 0 && !fh.scale[0]);
  CHECK(fh.x[0] == 1.0f && fh.x[1] == 0.0f && fh.x[3 + 1] == 1.0f && fh.x[5 * 3 + 2] == 1.0f);
  tg_features_free(&fh);
  tg_features_free(&fm);
  tg_features_free(&f1);
  tg_layout_free(&lm);
  tg_layout_free(&lo);
  tg_bars_free(&mix);
  tg_bars_free(&one);
}

static double mean_of(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i];
  return s / n;
}

static double var_of(const double *x, int n, int ddof) {
  double m = mean_of(x, n), s = 0;
  for (int i = 0; i < n; i++) s += (x[i] - m) * (x[i] - m);
  return s / (n - ddof);
}

#define NEAR(a, b, tol) (fabs((double)(a) - (double)(b)) <= (tol) * (1.0 + fabs((double)(b))))

/* Every column against a direct float64 computation at every valid row. */
static void values(void) {
  int64_t n = 400;
  tg_bars b;
  make_bars(&b, n, 1, 3);
  tg_layout lay;
  tg_features fx;
  tg_feature_opts fo = {.spec = "logret,range,body,wicks,logvol_z:7,vol:5,rsi:6,macd:3:8:4,dist_mean:9", .tz = NULL};
  CHECK_OK(tg_layout_build(&b, &lay));
  CHECK_OK(tg_features_compute(&b, &lay, &fo, &fx));
  const char *want[] = {"logret", "range", "body", "wick_up", "wick_lo", "logvol_z_7", "vol_5", "rsi_6",
                        "macd_3_8_4", "macd_signal_3_8_4", "dist_mean_9"};
  CHECK(fx.f == 11);
  for (int c = 0; c < fx.f && c < 11; c++) CHECK_MSG(strcmp(fx.names[c], want[c]) == 0, "%s", fx.names[c]);
  int warm[] = {1, 0, 0, 0, 0, 6, 5, 6, 7 + 3, 7 + 3, 8};
  for (int c = 0; c < 11; c++) CHECK_MSG(fx.warmup[c] == warm[c], "%s warm-up %d", fx.names[c], fx.warmup[c]);
  CHECK(fx.warmup_max == 10 && fx.first_valid_row == 10);
  double *c = b.close, *lv = malloc(sizeof(double) * (size_t)n), *ret = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) lv[i] = log1p(b.volume[i]), ret[i] = i ? log(c[i] / c[i - 1]) : 0.0;
  double ef = c[0], es = c[0], sig = 0, ag = 0, al = 0;
  int bad = 0, nan_ok = 1;
  for (int64_t i = 0; i < n; i++) {
    const float *x = fx.x + i * fx.f;
    for (int k = 0; k < 11; k++) nan_ok &= (i < warm[k]) == (isnan(x[k]) != 0);
    double rg = b.high[i] - b.low[i];
    double ref[11] = {i ? ret[i] : NAN, rg / c[i], rg > 0 ? (c[i] - b.open[i]) / rg : 0,
                      rg > 0 ? (b.high[i] - fmax(b.open[i], c[i])) / rg : 0, rg > 0 ? (fmin(b.open[i], c[i]) - b.low[i]) / rg : 0};
    if (i >= 6) {
      double sd = sqrt(var_of(lv + i - 6, 7, 0));
      ref[5] = sd > 0 ? (lv[i] - mean_of(lv + i - 6, 7)) / sd : 0;
    }
    if (i >= 5) ref[6] = sqrt(var_of(ret + i - 4, 5, 1));
    if (i >= 1) {
      double d = c[i] - c[i - 1], g = d > 0 ? d : 0, l = d < 0 ? -d : 0;
      if (i <= 6) ag += g / 6, al += l / 6;
      else ag = (ag * 5 + g) / 6, al = (al * 5 + l) / 6;
      if (i >= 6) ref[7] = al > 0 ? 100 - 100 / (1 + ag / al) : (ag > 0 ? 100 : 50), ref[7] /= 100;
    }
    if (i > 0) ef += 0.5 * (c[i] - ef), es += (2.0 / 9.0) * (c[i] - es);
    double macd = (ef - es) / c[i];
    sig = i == 7 ? macd : sig + 0.4 * (macd - sig);
    ref[8] = macd, ref[9] = sig;
    if (i >= 8) ref[10] = c[i] / mean_of(c + i - 8, 9) - 1;
    for (int k = 0; k < 11; k++)
      if (i >= warm[k] && !NEAR(x[k], ref[k], 2e-5)) {
        if (bad++ < 8) fprintf(stderr, "row %lld %s: %.9g, reference %.9g\n", (long long)i, fx.names[k], x[k], ref[k]);
      }
  }
  CHECK_MSG(bad == 0, "%d values off", bad);
  CHECK_MSG(nan_ok, "warm-up entries are NaN exactly before each column's warm-up");
  free(lv);
  free(ret);
  tg_features_free(&fx);
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

/* Time of day and day of week in New York across the spring DST change. */
static void calendar(void) {
  if (tg_tz_check("America/New_York") != TG_OK) {
    printf("no zone database: calendar features checked in UTC only\n");
  }
  tg_bars b;
  tg_bars_init(&b);
  int64_t mon = tg_days_from_civil(2021, 3, 8) * TG_NS_PER_DAY; /* a Monday */
  int64_t ts[3] = {mon + (14 * 3600 + 1800) * TG_NS_PER_S,            /* 09:30 EST Monday */
                   mon + 6 * TG_NS_PER_DAY + (13 * 3600 + 1800) * TG_NS_PER_S, /* Sunday 14th 09:30 EDT */
                   mon + 7 * TG_NS_PER_DAY + 3 * 3600 * TG_NS_PER_S};          /* Monday 03:00 UTC = Sunday 23:00 EDT */
  for (int i = 0; i < 3; i++) tg_bars_push(&b, ts[i], 10, 11, 9, 10, 5, 0);
  tg_layout lay;
  CHECK_OK(tg_layout_build(&b, &lay));
  int ny = tg_tz_check("America/New_York") == TG_OK;
  tg_feature_opts fo = {.spec = "tod,dow", .tz = ny ? "America/New_York" : NULL};
  tg_features fx;
  CHECK_OK(tg_features_compute(&b, &lay, &fo, &fx));
  CHECK(fx.f == 4 && strcmp(fx.names[0], "tod_sin") == 0 && strcmp(fx.names[3], "dow_cos") == 0);
  double tod[3] = {9.5, 9.5, 23.0}, dow[3] = {0, 6, 6};
  if (!ny) tod[0] = 14.5, tod[1] = 13.5, tod[2] = 3.0, dow[2] = 0;
  for (int i = 0; i < 3; i++) {
    const float *x = fx.x + i * 4;
    double a = 6.283185307179586 * tod[i] / 24.0, d = 6.283185307179586 * dow[i] / 7.0;
    CHECK_MSG(NEAR(x[0], sin(a), 1e-6) && NEAR(x[1], cos(a), 1e-6), "row %d tod %g %g", i, x[0], x[1]);
    CHECK_MSG(NEAR(x[2], sin(d), 1e-6) && NEAR(x[3], cos(d), 1e-6), "row %d dow %g %g", i, x[2], x[3]);
  }
  tg_features_free(&fx);
  tg_layout_free(&lay);
  tg_bars_free(&b);
  if (!ny) return;
  /* every 5 minutes across both 2021 changes: the cached offsets equal a lookup per bar */
  tg_bars_init(&b);
  int64_t days[2] = {tg_days_from_civil(2021, 3, 12), tg_days_from_civil(2021, 11, 5)};
  for (int d = 0; d < 2; d++)
    for (int64_t m = 0; m < 4 * 288; m++) tg_bars_push(&b, days[d] * TG_NS_PER_DAY + m * 300 * TG_NS_PER_S, 10, 11, 9, 10, 5, 0);
  CHECK_OK(tg_layout_build(&b, &lay));
  CHECK_OK(tg_features_compute(&b, &lay, &fo, &fx));
  int bad = 0;
  for (int64_t i = 0; i < b.n; i++) {
    int off = 0;
    tg_tz_offset_at_utc("America/New_York", b.ts[i] / TG_NS_PER_S, &off);
    int64_t local = b.ts[i] / TG_NS_PER_S + off;
    double a = 6.283185307179586 * (double)(local % 86400) / 86400.0;
    if (fabs(fx.x[i * 4] - sin(a)) > 1e-6 || fabs(fx.x[i * 4 + 1] - cos(a)) > 1e-6) {
      if (bad++ < 4) fprintf(stderr, "bar %lld: %g %g, per-bar %g %g\n", (long long)i, fx.x[i * 4], fx.x[i * 4 + 1], sin(a), cos(a));
    }
  }
  CHECK_MSG(bad == 0, "%d times of day differ from a per-bar zone lookup", bad);
  tg_features_free(&fx);
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

static void errors(void) {
  tg_bars b;
  make_bars(&b, 50, 1, 4);
  tg_layout lay;
  tg_features fx;
  CHECK_OK(tg_layout_build(&b, &lay));
  struct {
    const char *spec, *token;
  } bad[] = {{"logret,foo", "'foo'"},      {"vol:1", "'vol:1'"},           {"vol:x", "'vol:x'"},
             {"rsi:14:3", "'rsi:14:3'"},   {"macd:26:12:9", "'macd:26:12:9'"}, {"logret,,range", "empty"},
             {"vol:10,vol:10", "'vol:10'"}, {"tod:5", "'tod:5'"},          {"vol:200000", "'vol:200000'"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tg_feature_opts fo = {.spec = bad[i].spec, .tz = NULL};
    CHECK_STATUS(tg_features_compute(&b, &lay, &fo, &fx), TG_ERR_INVALID);
    CHECK_MSG(strstr(tg_last_error(), bad[i].token), "%s: %s", bad[i].spec, tg_last_error());
    CHECK_MSG(strstr(tg_last_error(), "valid names: logret, range, body, wicks, logvol_z"), "lists names: %s",
              tg_last_error());
  }
  tg_feature_opts fz = {.spec = "tod", .tz = "Mars/Olympus"};
  CHECK_STATUS(tg_features_compute(&b, &lay, &fz, &fx), TG_ERR_INVALID);
  /* defaults and whitespace */
  tg_feature_opts fd = {.spec = " logret , vol ", .tz = NULL};
  CHECK_OK(tg_features_compute(&b, &lay, &fd, &fx));
  CHECK(fx.f == 2 && strcmp(fx.names[1], "vol_20") == 0);
  tg_features_free(&fx);
  CHECK_OK(tg_features_compute(&b, &lay, NULL, &fx));
  CHECK_MSG(fx.f == 16, "default spec has %d columns", fx.f);
  CHECK(fx.warmup_max == 33 && fx.first_valid_row == 33); /* macd 25 + 8 */
  tg_features_free(&fx);
  /* bad bars */
  b.close[7] = NAN;
  CHECK_STATUS(tg_features_compute(&b, &lay, NULL, &fx), TG_ERR_NUMERIC);
  char want[80], t[TG_TIME_TEXT];
  snprintf(want, sizeof want, "bar 7 (%s)", tg_format_time(b.ts[7], t, sizeof t)); /* its time, not nanoseconds */
  CHECK_MSG(strstr(tg_last_error(), want), "%s", tg_last_error());
  b.close[7] = 10.0;
  b.ts[20] = b.ts[3];
  tg_layout l2;
  CHECK_STATUS(tg_layout_build(&b, &l2), TG_ERR_INVALID);
  snprintf(want, sizeof want, "row 20, %s,", tg_format_time(b.ts[20], t, sizeof t));
  CHECK_MSG(strstr(tg_last_error(), "tg_bars_sort") && strstr(tg_last_error(), want), "%s", tg_last_error());
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

int main(void) {
  g_seed = tg_test_seed(20240611);
  causality(700, 1, NULL);
  causality(900, 3, tg_tz_check("America/New_York") == TG_OK ? "America/New_York" : NULL);
  per_instrument();
  values();
  calendar();
  errors();
  return tg_test_finish();
}
