/* Resampling: interval strings; 5m/1h/1d buckets on synthetic bars against a plain reference;
 * several instruments; New York's DST days; sessions; empty input and bad options; and Lean's SPY
 * minutes against Lean's own hourly and daily bars (../shared/data, skipped when absent). */
#include <dirent.h>
#include <math.h>
#include <string.h>
#include "data/readers/timeconv.h"
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/data.h"
#include "tickgrad/synth.h"

#define MIN_NS (60LL * TG_NS_PER_S)
#define HOUR_NS (3600LL * TG_NS_PER_S)
#define NY "America/New_York"

static int64_t parse_iv(const char *s) {
  int64_t ns = -1;
  return tg_interval_parse(s, &ns) == TG_OK ? ns : -1;
}

static void test_interval_parse(void) {
  CHECK(parse_iv("30s") == 30 * TG_NS_PER_S);
  CHECK(parse_iv("5m") == 5 * MIN_NS);
  CHECK(parse_iv("15min") == 15 * MIN_NS);
  CHECK(parse_iv("1h") == HOUR_NS);
  CHECK(parse_iv("4h") == 4 * HOUR_NS);
  CHECK(parse_iv("1d") == TG_NS_PER_DAY);
  CHECK(parse_iv("1w") == 7 * TG_NS_PER_DAY);
  CHECK(parse_iv("250ms") == 250000000LL);
  CHECK(parse_iv("10us") == 10000LL);
  CHECK(parse_iv("7ns") == 7);
  const char *bad[] = {"", "m", "5", "5x", "0m", "-5m", "+5m", "5 m", " 5m", "1.5h", "5M", "5mm", "1d ",
                       "99999999999999999999s", "106752d", "9223372036854775807h"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int64_t ns = 123;
    tg_status st = tg_interval_parse(bad[i], &ns);
    CHECK_MSG(st == TG_ERR_INVALID && ns == 123, "'%s' parsed as %lld", bad[i], (long long)ns);
  }
  CHECK(parse_iv("106751d") == 106751LL * TG_NS_PER_DAY);
  CHECK_STATUS(tg_interval_parse(NULL, NULL), TG_ERR_INVALID);
  int64_t dummy;
  tg_interval_parse("5q", &dummy);
  CHECK(strstr(tg_last_error(), "unknown unit") != NULL);
}

/* A plain reference: one instrument, UTC, consecutive bars with the same floor(ts / interval). */
static void reference_utc(const tg_bars *in, int64_t iv, int ss, int se, tg_bars *out) {
  tg_bars_init(out);
  int64_t key = 0;
  int open = 0;
  double o = 0, h = 0, l = 0, c = 0, v = 0;
  for (int64_t i = 0; i <= in->n; i++) {
    int64_t k = 0;
    if (i < in->n) {
      int64_t minute = in->ts[i] % TG_NS_PER_DAY / MIN_NS;
      if (ss < se && (minute < ss || minute >= se)) continue;
      k = in->ts[i] / iv * iv;
    }
    if (open && (i == in->n || k != key)) tg_bars_push(out, key, o, h, l, c, v, 0);
    if (i == in->n) break;
    if (open && k == key) {
      h = in->high[i] > h ? in->high[i] : h;
      l = in->low[i] < l ? in->low[i] : l;
      c = in->close[i];
      v += in->volume[i];
    } else {
      key = k, o = in->open[i], h = in->high[i], l = in->low[i], c = in->close[i], v = in->volume[i], open = 1;
    }
  }
}

static int same_bars(const tg_bars *a, const tg_bars *b) {
  if (a->n != b->n) return 0;
  for (int64_t i = 0; i < a->n; i++)
    if (a->ts[i] != b->ts[i] || a->open[i] != b->open[i] || a->high[i] != b->high[i] || a->low[i] != b->low[i] ||
        a->close[i] != b->close[i] || a->volume[i] != b->volume[i])
      return 0;
  return 1;
}

static void test_synthetic_utc(void) {
  tg_synth_config c = tg_synth_defaults();
  c.bars = 390 * 10; /* ten sessions, 14:30-21:00 UTC */
  c.seed = 5;
  tg_bars m, out, ref;
  CHECK_OK(tg_synth_generate(&c, &m));
  struct {
    const char *iv;
    int ss, se;
    int64_t want;
  } cases[] = {{"5m", 0, 0, 780}, {"1h", 0, 0, 70}, {"1d", 0, 0, 10}, {"1h", 900, 1200, 50}, {"30m", 870, 871, 10},
               {"1m", 0, 0, 3900}, {"1w", 0, 0, 2}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    tg_resample_opts o = {parse_iv(cases[k].iv), NULL, cases[k].ss, cases[k].se};
    CHECK_OK(tg_bars_resample(&m, &o, &out));
    reference_utc(&m, o.interval_ns, cases[k].ss, cases[k].se, &ref);
    CHECK_MSG(out.n == cases[k].want, "%s %d-%d: %lld buckets, want %lld", cases[k].iv, cases[k].ss, cases[k].se,
              (long long)out.n, (long long)cases[k].want);
    CHECK_MSG(same_bars(&out, &ref), "%s %d-%d differs from the reference", cases[k].iv, cases[k].ss, cases[k].se);
    CHECK(out.instrument == NULL && strcmp(out.format, "synthetic") == 0);
    tg_bars_free(&out);
    tg_bars_free(&ref);
  }
  /* 1h buckets start on the clock hour: 14:00 holds 14:30-14:59 (30 bars), 15:00 a full hour */
  tg_resample_opts o = {HOUR_NS, "UTC", 0, 0};
  CHECK_OK(tg_bars_resample(&m, &o, &out));
  double v30 = 0, v60 = 0;
  for (int i = 0; i < 30; i++) v30 += m.volume[i];
  for (int i = 30; i < 90; i++) v60 += m.volume[i];
  CHECK(out.ts[0] % TG_NS_PER_DAY == 14 * HOUR_NS && out.volume[0] == v30 && out.open[0] == m.open[0]);
  CHECK(out.ts[1] % TG_NS_PER_DAY == 15 * HOUR_NS && out.volume[1] == v60 && out.close[1] == m.close[89]);
  /* 1m to 1h then 1h to 1d equals 1m to 1d */
  tg_bars day_a, day_b;
  tg_resample_opts d = {TG_NS_PER_DAY, NULL, 0, 0};
  CHECK_OK(tg_bars_resample(&out, &d, &day_a));
  CHECK_OK(tg_bars_resample(&m, &d, &day_b));
  CHECK(same_bars(&day_a, &day_b));
  tg_bars_free(&day_a);
  tg_bars_free(&day_b);
  tg_bars_free(&out);
  tg_bars_free(&m);
}

/* The bars of one instrument, ids dropped. */
static void pick(const tg_bars *in, uint32_t id, tg_bars *out) {
  tg_bars_init(out);
  for (int64_t i = 0; i < in->n; i++)
    if (in->instrument[i] == id)
      tg_bars_push(out, in->ts[i], in->open[i], in->high[i], in->low[i], in->close[i], in->volume[i], 0);
}

static void test_instruments(void) {
  tg_synth_config c = tg_synth_defaults();
  c.bars = 390 * 3;
  c.instruments = 3;
  c.correlation = 0.3;
  tg_bars m, out;
  CHECK_OK(tg_synth_generate(&c, &m));
  tg_resample_opts o = {5 * MIN_NS, NULL, 0, 0};
  CHECK_OK(tg_bars_resample(&m, &o, &out));
  CHECK(out.n == 3 * 78 * 3 && out.instrument != NULL);
  int64_t moved = -1;
  CHECK_OK(tg_bars_sort(&out, &moved));
  CHECK(moved == 0); /* already in (ts, instrument) order */
  for (uint32_t id = 0; id < 3; id++) {
    tg_bars one, r_one, r_all;
    pick(&m, id, &one);
    CHECK_OK(tg_bars_resample(&one, &o, &r_one));
    pick(&out, id, &r_all);
    CHECK_MSG(same_bars(&r_one, &r_all), "instrument %u resampled alone differs", id);
    tg_bars_free(&one);
    tg_bars_free(&r_one);
    tg_bars_free(&r_all);
  }
  /* sparse, large ids and an instrument that stops mid-bucket: same buckets, ids carried through */
  uint32_t ids[3] = {7, 100000, 4000000000u};
  const int64_t cut = m.ts[602 * 3]; /* instrument 1 has no bars from here (18:02 on day 2) */
  tg_bars sparse, out2;
  tg_bars_init(&sparse);
  CHECK_OK(tg_bars_reserve(&sparse, m.n, 1));
  for (int64_t i = 0; i < m.n; i++)
    if (m.instrument[i] != 1 || m.ts[i] < cut)
      tg_bars_push(&sparse, m.ts[i], m.open[i], m.high[i], m.low[i], m.close[i], m.volume[i], ids[m.instrument[i]]);
  CHECK_OK(tg_bars_resample(&sparse, &o, &out2));
  int64_t bad = 0, n_cut = 0, j = 0;
  for (int64_t i = 0; i < out.n; i++) {
    if (out.instrument[i] == 1 && out.ts[i] > cut) continue; /* no bars left */
    if (j >= out2.n) {
      bad++;
      break;
    }
    int is_cut = out.instrument[i] == 1 && out.ts[i] <= cut && cut < out.ts[i] + o.interval_ns;
    n_cut += is_cut && out2.volume[j] < out.volume[i] && out2.close[j] == m.close[601 * 3 + 1];
    bad += out2.ts[j] != out.ts[i] || out2.instrument[j] != ids[out.instrument[i]] || out2.open[j] != out.open[i] ||
           (!is_cut && (out2.close[j] != out.close[i] || out2.volume[j] != out.volume[i]));
    j++;
  }
  CHECK_MSG(bad == 0 && n_cut == 1 && j == out2.n, "sparse ids: %lld differences, %lld cut buckets, %lld of %lld",
            (long long)bad, (long long)n_cut, (long long)j, (long long)out2.n);
  CHECK_OK(tg_bars_sort(&out2, &moved));
  CHECK(moved == 0);
  tg_bars_free(&sparse);
  tg_bars_free(&out2);
  tg_bars_free(&out);
  tg_bars_free(&m);
}

/* Half-hour bars, volume 1, open = close = bar number, from UTC day d0 for `days` days. */
static void half_hours(int64_t d0, int days, tg_bars *b) {
  tg_bars_init(b);
  for (int64_t i = 0; i < days * 48; i++) {
    double p = (double)(i + 1);
    tg_bars_push(b, d0 * TG_NS_PER_DAY + i * 30 * MIN_NS, p, p + 0.5, p - 0.5, p, 1, 0);
  }
}

static int64_t ny_utc(int y, int m, int d, int hh, int mm) {
  int64_t s = 0;
  tg_tz_local_to_utc(NY, tg_days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60, &s);
  return s * TG_NS_PER_S;
}

static void test_dst(void) {
  tg_bars b, out;
  /* autumn: 2021-11-07 has 25 hours in New York (01:00-02:00 twice) */
  half_hours(tg_days_from_civil(2021, 11, 6), 3, &b);
  tg_resample_opts day = {TG_NS_PER_DAY, NY, 0, 0};
  CHECK_OK(tg_bars_resample(&b, &day, &out));
  CHECK(out.n == 4);
  if (out.n == 4) {
    int64_t want_ts[4] = {ny_utc(2021, 11, 5, 0, 0), ny_utc(2021, 11, 6, 0, 0), ny_utc(2021, 11, 7, 0, 0),
                          ny_utc(2021, 11, 8, 0, 0)};
    double want_v[4] = {8, 48, 50, 38};
    for (int i = 0; i < 4; i++)
      CHECK_MSG(out.ts[i] == want_ts[i] && out.volume[i] == want_v[i], "autumn day %d: ts %lld volume %g", i,
                (long long)out.ts[i], out.volume[i]);
    CHECK(out.ts[2] == (tg_days_from_civil(2021, 11, 7) * 24 + 4) * HOUR_NS); /* midnight EDT */
    CHECK(out.ts[3] == (tg_days_from_civil(2021, 11, 8) * 24 + 5) * HOUR_NS); /* midnight EST */
    CHECK(out.open[2] == b.open[56] && out.close[2] == b.close[105] && out.high[2] == b.high[105]);
  }
  tg_bars_free(&out);
  /* hours: the repeated 01:00 stays two buckets (05:00 and 06:00 UTC); every bucket is one real hour */
  tg_resample_opts hour = {HOUR_NS, NY, 0, 0};
  CHECK_OK(tg_bars_resample(&b, &hour, &out));
  int64_t bad = 0;
  for (int64_t i = 0; i < out.n; i++) bad += out.ts[i] != b.ts[0] + i * HOUR_NS || out.volume[i] != 2;
  CHECK_MSG(out.n == 72 && bad == 0, "autumn hours: %lld buckets, %lld wrong", (long long)out.n, (long long)bad);
  tg_bars_free(&out);
  /* the session filter follows local time: 09:30-16:00 is 13:30 UTC before, 14:30 UTC after */
  tg_resample_opts sess = {TG_NS_PER_DAY, NY, 570, 960};
  CHECK_OK(tg_bars_resample(&b, &sess, &out));
  CHECK(out.n == 3);
  if (out.n == 3) {
    CHECK(out.volume[0] == 13 && out.volume[1] == 13 && out.volume[2] == 13);
    CHECK(out.open[0] == b.open[27] && out.close[0] == b.close[39]);   /* Nov 6: 13:30 .. 19:30 UTC */
    CHECK(out.open[2] == b.open[125] && out.close[2] == b.close[137]); /* Nov 8: 14:30 .. 20:30 UTC */
    CHECK(out.ts[2] == ny_utc(2021, 11, 8, 0, 0));
  }
  tg_bars_free(&out);
  tg_bars_free(&b);

  /* spring: 2021-03-14 has 23 hours */
  half_hours(tg_days_from_civil(2021, 3, 13), 3, &b);
  CHECK_OK(tg_bars_resample(&b, &day, &out));
  CHECK(out.n == 4);
  if (out.n == 4) {
    CHECK(out.ts[2] == (tg_days_from_civil(2021, 3, 14) * 24 + 5) * HOUR_NS && out.volume[2] == 46);
    CHECK(out.ts[3] == (tg_days_from_civil(2021, 3, 15) * 24 + 4) * HOUR_NS && out.volume[3] == 40);
    CHECK(out.volume[0] == 10 && out.volume[1] == 48);
  }
  tg_bars_free(&out);
  tg_resample_opts two = {2 * HOUR_NS, NY, 0, 0}; /* 02:00 does not exist on the 14th: that bucket starts at 03:00 */
  CHECK_OK(tg_bars_resample(&b, &two, &out));
  int64_t at3 = ny_utc(2021, 3, 14, 3, 0), found = 0, sum = 0;
  for (int64_t i = 0; i < out.n; i++) {
    found += out.ts[i] == at3 && out.volume[i] == 2; /* 03:00-04:00 EDT only */
    sum += (int64_t)out.volume[i];
    if (i) bad += out.ts[i] <= out.ts[i - 1];
  }
  CHECK(found == 1 && sum == b.n && bad == 0);
  tg_bars_free(&out);
  tg_bars_free(&b);

  /* a half-hour zone: hourly buckets start at hh:30 UTC in Kolkata */
  half_hours(tg_days_from_civil(2021, 6, 1), 1, &b);
  tg_resample_opts kol = {HOUR_NS, "Asia/Kolkata", 0, 0};
  CHECK_OK(tg_bars_resample(&b, &kol, &out));
  bad = 0;
  for (int64_t i = 0; i < out.n; i++) bad += out.ts[i] % HOUR_NS != 30 * MIN_NS;
  CHECK(out.n == 25 && bad == 0 && out.volume[0] == 1 && out.volume[1] == 2);
  tg_bars_free(&out);
  tg_bars_free(&b);
}

static void test_empty_and_errors(void) {
  tg_bars empty, out, b;
  tg_bars_init(&empty);
  tg_resample_opts o = {5 * MIN_NS, NULL, 570, 960};
  CHECK_OK(tg_bars_resample(&empty, &o, &out));
  CHECK(out.n == 0);
  tg_bars_free(&out);
  half_hours(tg_days_from_civil(2021, 6, 1), 1, &b);
  o.session_start_min = 0, o.session_end_min = 0;
  o.interval_ns = 0;
  CHECK_STATUS(tg_bars_resample(&b, &o, &out), TG_ERR_INVALID);
  o.interval_ns = -5;
  CHECK_STATUS(tg_bars_resample(&b, &o, &out), TG_ERR_INVALID);
  o.interval_ns = HOUR_NS;
  o.tz = "Mars/Olympus";
  CHECK_STATUS(tg_bars_resample(&b, &o, &out), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "Mars/Olympus") != NULL);
  o.tz = NULL;
  o.session_start_min = -10, o.session_end_min = 100;
  CHECK_STATUS(tg_bars_resample(&b, &o, &out), TG_ERR_INVALID);
  o.session_start_min = 600, o.session_end_min = 1500;
  CHECK_STATUS(tg_bars_resample(&b, &o, &out), TG_ERR_INVALID);
  o.session_start_min = 0, o.session_end_min = 0;
  CHECK_STATUS(tg_bars_resample(&b, &o, &b), TG_ERR_INVALID);
  CHECK_STATUS(tg_bars_resample(&b, NULL, &out), TG_ERR_INVALID);
  int64_t t = b.ts[3];
  b.ts[3] = b.ts[4], b.ts[4] = t;
  CHECK_STATUS(tg_bars_resample(&b, &o, &out), TG_ERR_INVALID);
  char want[100], t0[TG_TIME_TEXT], t1[TG_TIME_TEXT];
  snprintf(want, sizeof want, "bar 4 (%s, after %s;", tg_format_time(b.ts[4], t1, sizeof t1),
           tg_format_time(b.ts[3], t0, sizeof t0));
  CHECK_MSG(strstr(tg_last_error(), "sorted") != NULL && strstr(tg_last_error(), want) && out.n == 0, "%s",
            tg_last_error());
  b.ts[4] = b.ts[3] = t; /* equal times are fine */
  CHECK_OK(tg_bars_resample(&b, &o, &out));
  tg_bars_free(&out);
  /* a session that drops every bar gives no buckets */
  o.session_start_min = 1439, o.session_end_min = 1440;
  CHECK_OK(tg_bars_resample(&b, &o, &out));
  CHECK(out.n == 0);
  tg_bars_free(&out);
  tg_bars_free(&b);
}

/* ---- Lean SPY ---- */

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "ms,o,h,l,c,v" lines of one day (New York time, deci-cents kept as they are). */
static int read_lean_minutes(const char *path, int y, int mo, int d, tg_bars *out) {
  size_t len;
  char *buf = (char *)tg_test_read_file(path, &len);
  if (!buf) return 0;
  int64_t day_s = tg_days_from_civil(y, mo, d) * 86400;
  int rows = 0;
  for (char *p = buf; *p;) {
    long long ms, o, h, l, c, v;
    if (sscanf(p, "%lld,%lld,%lld,%lld,%lld,%lld", &ms, &o, &h, &l, &c, &v) == 6) {
      int64_t utc = 0;
      tg_tz_local_to_utc(NY, day_s + ms / 1000, &utc);
      tg_bars_push(out, utc * TG_NS_PER_S + ms % 1000 * 1000000, (double)o, (double)h, (double)l, (double)c, (double)v, 0);
      rows++;
    }
    char *nl = strchr(p, '\n');
    p = nl ? nl + 1 : p + strlen(p);
  }
  free(buf);
  return rows;
}

/* "YYYYMMDD HH:MM,o,h,l,c,v" rows whose date is in days[0..ndays). */
static void read_lean_bars(const char *path, const int64_t *days, int ndays, tg_bars *out) {
  size_t len;
  char *buf = (char *)tg_test_read_file(path, &len);
  tg_bars_init(out);
  if (!buf) return;
  for (char *p = buf; *p;) {
    int y, mo, d, hh, mm;
    long long o, h, l, c, v;
    if (sscanf(p, "%4d%2d%2d %d:%d,%lld,%lld,%lld,%lld,%lld", &y, &mo, &d, &hh, &mm, &o, &h, &l, &c, &v) == 10) {
      int64_t day = tg_days_from_civil(y, mo, d), utc = 0;
      for (int k = 0; k < ndays; k++)
        if (days[k] == day) {
          tg_tz_local_to_utc(NY, day * 86400 + hh * 3600 + mm * 60, &utc);
          tg_bars_push(out, utc * TG_NS_PER_S, (double)o, (double)h, (double)l, (double)c, (double)v, 0);
        }
    }
    char *nl = strchr(p, '\n');
    p = nl ? nl + 1 : p + strlen(p);
  }
  free(buf);
}

/* Lean's reference bar at ts, or -1. */
static int64_t find_ts(const tg_bars *b, int64_t ts) {
  for (int64_t i = 0; i < b->n; i++)
    if (b->ts[i] == ts) return i;
  return -1;
}

/* Compares our buckets with Lean's: times and volumes exactly; prices within tol (deci-cents),
 * high never below and low never above Lean's (the minutes span at least Lean's range). */
static void compare_lean(const char *what, const tg_bars *ours, const tg_bars *lean, double tol, int64_t *exact) {
  int64_t matched = 0, vol_bad = 0, price_bad = 0;
  *exact = 0;
  for (int64_t i = 0; i < ours->n; i++) {
    int64_t j = find_ts(lean, ours->ts[i]);
    if (j < 0) continue;
    matched++;
    vol_bad += ours->volume[i] != lean->volume[j];
    double dop = fabs(ours->open[i] - lean->open[j]), dcl = fabs(ours->close[i] - lean->close[j]);
    double dhi = ours->high[i] - lean->high[j], dlo = lean->low[j] - ours->low[i];
    int ok = dop <= tol && dcl <= tol && dhi >= 0 && dlo >= 0;
    price_bad += !ok;
    if (!ok)
      printf("  %s bar %lld: ours %.0f %.0f %.0f %.0f, lean %.0f %.0f %.0f %.0f\n", what, (long long)i, ours->open[i],
             ours->high[i], ours->low[i], ours->close[i], lean->open[j], lean->high[j], lean->low[j], lean->close[j]);
    *exact += ours->open[i] == lean->open[j] && ours->high[i] == lean->high[j] && ours->low[i] == lean->low[j] &&
              ours->close[i] == lean->close[j] && ours->volume[i] == lean->volume[j];
  }
  CHECK_MSG(matched == lean->n, "%s: %lld of Lean's %lld bars have a bucket with the same time", what, (long long)matched,
            (long long)lean->n);
  CHECK_MSG(vol_bad == 0, "%s: %lld volumes differ", what, (long long)vol_bad);
  CHECK_MSG(price_bad == 0, "%s: %lld bars outside the tolerance", what, (long long)price_bad);
}

/* Our own plain aggregation of the Lean minutes: session 09:30-16:00 New York, labelled by the
 * local clock hour (or day) through the zone code directly. */
static void reference_lean(const tg_bars *m, int daily, tg_bars *out) {
  tg_bars_init(out);
  int64_t key = INT64_MIN;
  for (int64_t i = 0; i < m->n; i++) {
    int off = 0;
    tg_tz_offset_at_utc(NY, m->ts[i] / TG_NS_PER_S, &off);
    int64_t local_s = m->ts[i] / TG_NS_PER_S + off, day = local_s / 86400, sod = local_s % 86400, k = 0;
    if (sod < 570 * 60 || sod >= 960 * 60) continue;
    tg_tz_local_to_utc(NY, day * 86400 + (daily ? 0 : sod / 3600 * 3600), &k);
    k *= TG_NS_PER_S;
    int64_t j = out->n - 1;
    if (k != key) {
      tg_bars_push(out, k, m->open[i], m->high[i], m->low[i], m->close[i], m->volume[i], 0);
      key = k;
    } else {
      out->high[j] = m->high[i] > out->high[j] ? m->high[i] : out->high[j];
      out->low[j] = m->low[i] < out->low[j] ? m->low[i] : out->low[j];
      out->close[j] = m->close[i];
      out->volume[j] += m->volume[i];
    }
  }
}

static int test_lean(void) {
  const char *shared = getenv("TG_SHARED_DATA");
  char dir[1024], path[2048];
  snprintf(dir, sizeof dir, "%s/lean/equity/usa/minute/spy", shared ? shared : "../shared/data");
  DIR *dp = opendir(dir);
  if (!dp) {
    printf("Lean SPY comparison skipped: %s is missing (set TG_SHARED_DATA to the shared data folder)\n", dir);
    return 0;
  }
  char *names[64];
  int nn = 0;
  for (struct dirent *e; (e = readdir(dp)) && nn < 64;)
    if (strstr(e->d_name, "_spy_minute_trade.csv")) names[nn++] = strdup(e->d_name);
  closedir(dp);
  qsort(names, (size_t)nn, sizeof names[0], name_cmp);
  tg_bars m;
  tg_bars_init(&m);
  int64_t days[64];
  int rows = 0;
  for (int k = 0; k < nn; k++) {
    int y, mo, d;
    sscanf(names[k], "%4d%2d%2d", &y, &mo, &d);
    days[k] = tg_days_from_civil(y, mo, d);
    snprintf(path, sizeof path, "%s/%s", dir, names[k]);
    rows += read_lean_minutes(path, y, mo, d, &m);
    free(names[k]);
  }
  printf("Lean SPY: %d minute files, %d minutes\n", nn, rows);
  CHECK(nn >= 6 && m.n == rows && rows > 4000);

  tg_bars hour_lean, day_lean, hours, daily, ref;
  snprintf(path, sizeof path, "%s/../../hour/spy.csv", dir);
  read_lean_bars(path, days, nn, &hour_lean);
  snprintf(path, sizeof path, "%s/../../daily/spy.csv", dir);
  read_lean_bars(path, days, nn, &day_lean);
  printf("Lean SPY: %lld hourly and %lld daily reference bars on those days\n", (long long)hour_lean.n,
         (long long)day_lean.n);
  CHECK(hour_lean.n >= 42 && day_lean.n >= 6);

  /* Lean labels an hour bar by its clock hour: "09:00" holds 09:30-09:59 */
  tg_resample_opts ho = {HOUR_NS, NY, 570, 960};
  CHECK_OK(tg_bars_resample(&m, &ho, &hours));
  CHECK(hours.n == 7LL * nn);
  reference_lean(&m, 0, &ref);
  CHECK_MSG(same_bars(&hours, &ref), "hourly buckets differ from the plain aggregation");
  tg_bars_free(&ref);
  int64_t exact_h = 0, exact_d = 0;
  compare_lean("hour", &hours, &hour_lean, 300, &exact_h);

  tg_resample_opts dopt = {TG_NS_PER_DAY, NY, 570, 960};
  CHECK_OK(tg_bars_resample(&m, &dopt, &daily));
  CHECK(daily.n == nn);
  reference_lean(&m, 1, &ref);
  CHECK_MSG(same_bars(&daily, &ref), "daily buckets differ from the plain aggregation");
  tg_bars_free(&ref);
  compare_lean("day", &daily, &day_lean, 0, &exact_d);
  int64_t oc_bad = 0, hl_off = 0;
  for (int64_t i = 0; i < daily.n; i++) {
    int64_t j = find_ts(&day_lean, daily.ts[i]);
    if (j < 0) continue;
    oc_bad += daily.open[i] != day_lean.open[j] || daily.close[i] != day_lean.close[j];
    hl_off += fabs(daily.high[i] - day_lean.high[j]) > 100 || fabs(daily.low[i] - day_lean.low[j]) > 100;
  }
  CHECK_MSG(oc_bad == 0 && hl_off == 0, "daily: %lld opens/closes differ, %lld highs/lows off by more than a cent",
            (long long)oc_bad, (long long)hl_off);
  printf("Lean SPY: volumes equal on every bar; all of OHLCV equal on %lld of %lld hours and %lld of %lld days\n",
         (long long)exact_h, (long long)hour_lean.n, (long long)exact_d, (long long)day_lean.n);
  CHECK(exact_h * 5 >= hour_lean.n * 2 && exact_d * 5 >= day_lean.n * 4);

  /* the hourly buckets resampled to days (no session: their 09:00 label is before 09:30) equal the daily ones */
  tg_resample_opts d2 = {TG_NS_PER_DAY, NY, 0, 0};
  tg_bars daily2;
  CHECK_OK(tg_bars_resample(&hours, &d2, &daily2));
  CHECK(same_bars(&daily, &daily2));
  tg_bars_free(&daily2);
  tg_bars_free(&hours);
  tg_bars_free(&daily);
  tg_bars_free(&hour_lean);
  tg_bars_free(&day_lean);
  tg_bars_free(&m);
  return 1;
}

int main(void) {
  test_interval_parse();
  test_synthetic_utc();
  test_instruments();
  test_empty_and_errors();
  if (tg_tz_check(NY) != TG_OK) {
    if (tg_test_failed) return tg_test_finish();
    return tg_test_skip("no zone database (install tzdata): the New York DST and Lean parts need it");
  }
  test_dst();
  int lean = test_lean();
  int rc = tg_test_finish();
  if (!lean && rc == 0) printf("(the Lean comparison was skipped: shared data missing)\n");
  return rc;
}
