/* The synthetic market: a seeded calendar, a regime chain, GARCH volatility, an optional planted
 * AR(1) component, Brownian-bridge highs and lows, log-normal volume (the model is in synth.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/intmath.h"
#include "base/alloc.h"
#include "data/readers/timeconv.h"
#include "tickgrad/rng.h"
#include "tickgrad/synth.h"

/* The same bits on every machine: no fused multiply-adds (GCC in ISO C mode, as built here, never
 * contracts; clang needs telling). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define NS_PER_MIN (60LL * TG_NS_PER_S)
#define GARCH_A 0.06
#define GARCH_B 0.92
#define SHARED_SLOT 0xFFFFFFFFull
#define TWO_PI 6.283185307179586

/* Philox streams: (kind << 32) | slot, where slot is the instrument or SHARED_SLOT. */
enum { STREAM_SHOCK = 1, STREAM_PATH, STREAM_REGIME, STREAM_MARKET, STREAM_PRICE0 };

static const double k_regime_vol[3] = {0.6, 1.0, 1.7};
static const double k_regime_volume[3] = {0.75, 1.0, 1.5};
static const double k_regime_dir[3] = {1.0, 0.0, -1.0};

tg_synth_config tg_synth_defaults(void) {
  tg_synth_config c;
  memset(&c, 0, sizeof c);
  c.start_ns = tg_days_from_civil(2020, 1, 2) * TG_NS_PER_DAY;
  c.interval_ns = NS_PER_MIN;
  c.bars = 10000;
  c.instruments = 1;
  c.seed = 1;
  c.session_start_min = 14 * 60 + 30;
  c.session_end_min = 21 * 60;
  c.price = 100.0;
  c.volatility = 0.2;
  c.regime_bars = 2000.0;
  return c;
}

/* Four words of stream (kind, slot) at counter t. */
static void draw(const tg_synth_config *c, int kind, uint64_t slot, int64_t t, uint32_t w[4]) {
  tg_philox(c->seed, ((uint64_t)kind << 32) | slot, (uint64_t)t, w);
}

/* Uniform in (0, 1), exactly representable: never 0, so its log is finite. */
static double unit_open(uint32_t w) { return ((double)w + 0.5) * (1.0 / 4294967296.0); }

/* Two independent standard normals from two words (Box-Muller). */
static void normal_pair(uint32_t w0, uint32_t w1, double *n0, double *n1) {
  double r = sqrt(-2.0 * log(unit_open(w0))), a = TWO_PI * unit_open(w1);
  *n0 = r * cos(a);
  if (n1) *n1 = r * sin(a);
}


/* Monday 0 .. Sunday 6 of a day count since 1970-01-01 (a Thursday). */
static int weekday(int64_t day) { return (int)(((day + 3) % 7 + 7) % 7); }

static tg_status check_config(const tg_synth_config *c) {
  if (c->interval_ns <= 0 || c->interval_ns > 366 * TG_NS_PER_DAY)
    return tg_error(TG_ERR_INVALID, "synth: interval_ns %lld must be in (0, 366 days]", (long long)c->interval_ns);
  if (c->bars < 0 || c->bars > (1LL << 31))
    return tg_error(TG_ERR_INVALID, "synth: bars %lld must be in [0, 2^31]", (long long)c->bars);
  if (c->instruments < 1 || c->instruments > 65536)
    return tg_error(TG_ERR_INVALID, "synth: instruments %d must be in [1, 65536]", c->instruments);
  if (c->bars * (int64_t)c->instruments > (1LL << 31))
    return tg_error(TG_ERR_INVALID, "synth: %lld bars x %d instruments is more than 2^31 bars", (long long)c->bars,
                    c->instruments);
  if (!(c->correlation >= 0.0 && c->correlation < 1.0))
    return tg_error(TG_ERR_INVALID, "synth: correlation %g must be in [0, 1)", c->correlation);
  if (!(c->signal > -1.0 && c->signal < 1.0))
    return tg_error(TG_ERR_INVALID, "synth: signal %g must be in (-1, 1)", c->signal);
  if (c->session_start_min < 0 || c->session_end_min > 1440 || c->session_start_min > c->session_end_min)
    return tg_error(TG_ERR_INVALID, "synth: session %d..%d minutes must satisfy 0 <= start <= end <= 1440",
                    c->session_start_min, c->session_end_min);
  if (!(c->price > 0.0 && c->price < 1e12)) return tg_error(TG_ERR_INVALID, "synth: price %g must be in (0, 1e12)", c->price);
  if (!(c->volatility > 0.0 && c->volatility <= 10.0))
    return tg_error(TG_ERR_INVALID, "synth: volatility %g must be in (0, 10]", c->volatility);
  if (!(c->volume >= 0.0 && c->volume < 1e15)) return tg_error(TG_ERR_INVALID, "synth: volume %g must be in [0, 1e15)", c->volume);
  if (!(c->regime_bars == 0.0 || (c->regime_bars >= 1.0 && c->regime_bars < 1e15)))
    return tg_error(TG_ERR_INVALID, "synth: regime_bars %g must be 0 or at least 1", c->regime_bars);
  if (!(c->regime_drift >= 0.0 && c->regime_drift < 1.0))
    return tg_error(TG_ERR_INVALID, "synth: regime_drift %g must be in [0, 1)", c->regime_drift);
  if (c->start_ns < -100000LL * TG_NS_PER_DAY || c->start_ns > 100000LL * TG_NS_PER_DAY) {
    char t[TG_TIME_TEXT];
    return tg_error(TG_ERR_INVALID, "synth: start_ns %lld (%s) is outside the years 1696..2243", (long long)c->start_ns,
                    tg_format_time(c->start_ns, t, sizeof t));
  }
  return TG_OK;
}

/* The calendar: bar starts, the volatility and volume season of each bar, and whether it opens a
 * session (an overnight gap before it). */
typedef struct calendar {
  int64_t *ts;       /* [n] */
  double *season_s;  /* [n] volatility multiplier */
  double *season_v;  /* [n] volume multiplier */
  uint8_t *first;    /* [n] */
  int session_mode;
  int64_t bars_per_session;
  double bars_per_year, days_per_year, bars_per_day;
} calendar;

static void calendar_free(calendar *k) {
  tg_free(k->ts);
  tg_free(k->season_s);
  tg_free(k->season_v);
  tg_free(k->first);
}

static tg_status calendar_build(const tg_synth_config *c, calendar *k) {
  int64_t n = c->bars, iv = c->interval_ns;
  memset(k, 0, sizeof *k);
  k->ts = tg_malloc(sizeof(int64_t) * (size_t)n + 1);
  k->season_s = tg_malloc(sizeof(double) * (size_t)n + 1);
  k->season_v = tg_malloc(sizeof(double) * (size_t)n + 1);
  k->first = tg_malloc((size_t)n + 1);
  if (!k->ts || !k->season_s || !k->season_v || !k->first) {
    calendar_free(k);
    return tg_error(TG_ERR_NOMEM, "synth: out of memory for a calendar of %lld bars", (long long)n);
  }
  int skip_weekends = !c->weekends && iv <= TG_NS_PER_DAY;
  k->days_per_year = skip_weekends ? 252.0 : 365.25;
  k->session_mode = iv < TG_NS_PER_DAY && c->session_start_min < c->session_end_min;
  const int64_t limit = 106000LL * TG_NS_PER_DAY; /* 2260: int64 nanoseconds end in 2262 */
  int64_t i = 0;
  if (k->session_mode) {
    int64_t s0 = c->session_start_min * NS_PER_MIN, len = (c->session_end_min - c->session_start_min) * NS_PER_MIN;
    int64_t bps = (len + iv - 1) / iv;
    k->bars_per_session = bps;
    k->bars_per_day = (double)bps;
    k->bars_per_year = k->days_per_year * (double)bps;
    for (int64_t day = tg_floor_div(c->start_ns, TG_NS_PER_DAY); i < n; day++) {
      if (day * TG_NS_PER_DAY > limit) goto too_late;
      if (skip_weekends && weekday(day) >= 5) continue;
      for (int64_t b = 0; b < bps && i < n; b++) {
        int64_t t = day * TG_NS_PER_DAY + s0 + b * iv;
        if (t < c->start_ns) continue;
        double q = 0.0;
        if (bps >= 2) {
          double u = ((double)b + 0.5) * (double)iv / (double)len;
          q = 2.0 * (u < 1.0 ? u : 1.0) - 1.0;
        }
        k->ts[i] = t;
        k->season_s[i] = bps >= 2 ? sqrt(0.6 + 1.2 * q * q) : 1.0;
        k->season_v[i] = bps >= 2 ? 0.5 + 1.5 * q * q : 1.0;
        k->first[i] = b == 0;
        i++;
      }
    }
  } else {
    k->bars_per_day = (double)TG_NS_PER_DAY / (double)iv;
    k->bars_per_year = (iv <= TG_NS_PER_DAY ? k->days_per_year : 365.25) * k->bars_per_day;
    for (int64_t t = c->start_ns; i < n; t += iv) {
      if (t > limit) goto too_late;
      if (skip_weekends && weekday(tg_floor_div(t, TG_NS_PER_DAY)) >= 5) continue;
      k->ts[i] = t;
      k->season_s[i] = 1.0;
      k->season_v[i] = 1.0;
      k->first[i] = 0;
      i++;
    }
  }
  return TG_OK;
too_late:
  calendar_free(k);
  char t[TG_TIME_TEXT];
  return tg_error(TG_ERR_INVALID, "synth: %lld bars from %s (start_ns) run past the year 2260", (long long)n,
                  tg_format_time(c->start_ns, t, sizeof t));
}

/* One instrument's bars, written to rows t * stride + offset of out. */
static void simulate(const tg_synth_config *c, const calendar *k, uint32_t inst, tg_bars *out, int64_t stride) {
  const uint64_t slot = inst, chain = c->correlation > 0.0 ? SHARED_SLOT : inst;
  const double s_bar = c->volatility / sqrt(k->bars_per_year), s_day = c->volatility / sqrt(k->days_per_year);
  const double vol_norm = sqrt((k_regime_vol[0] * k_regime_vol[0] + k_regime_vol[1] * k_regime_vol[1] +
                                k_regime_vol[2] * k_regime_vol[2]) / 3.0);
  const double base_volume = c->volume > 0.0 ? c->volume : 5e7 / k->bars_per_day;
  const double rho_m = sqrt(c->correlation), rho_z = sqrt(1.0 - c->correlation);
  const double ar_e = sqrt(1.0 - c->signal * c->signal);
  const double switch_p = c->regime_bars > 0.0 ? 1.0 / c->regime_bars : 0.0;
  uint32_t w[4];
  double price = c->price;
  if (inst > 0) {
    double g;
    draw(c, STREAM_PRICE0, slot, 0, w);
    normal_pair(w[0], w[1], &g, NULL);
    price = c->price * exp(0.5 * g);
  }
  int regime = 1;
  if (switch_p > 0.0) {
    draw(c, STREAM_REGIME, chain, 0, w);
    regime = (int)(unit_open(w[2]) * 3.0);
    if (regime > 2) regime = 2;
  }
  double h = 1.0, x_prev = 0.0, e_prev = 0.0, close_prev = price;
  for (int64_t t = 0; t < c->bars; t++) {
    if (t > 0) {
      if (switch_p > 0.0) {
        draw(c, STREAM_REGIME, chain, t, w);
        if (unit_open(w[0]) < switch_p) regime = (regime + (w[1] >> 31 ? 2 : 1)) % 3;
      }
      h = (1.0 - GARCH_A - GARCH_B) + GARCH_A * h * e_prev * e_prev + GARCH_B * h;
    }
    double z, eta, m = 0.0;
    draw(c, STREAM_SHOCK, slot, t, w);
    normal_pair(w[0], w[1], &z, NULL);
    normal_pair(w[2], w[3], &eta, NULL);
    if (c->correlation > 0.0) {
      uint32_t wm[4];
      draw(c, STREAM_MARKET, SHARED_SLOT, t, wm);
      normal_pair(wm[0], wm[1], &m, NULL);
    }
    double e = rho_m * m + rho_z * z;
    double x = t == 0 ? e : c->signal * x_prev + ar_e * e;
    double sigma = s_bar * (k_regime_vol[regime] / vol_norm) * k->season_s[t] * sqrt(h);
    double r = c->regime_drift * k_regime_dir[regime] * sigma + sigma * x;

    draw(c, STREAM_PATH, slot, t, w);
    double open = close_prev;
    if (k->first[t] && t > 0) {
      double g;
      normal_pair(w[2], w[3], &g, NULL);
      open = close_prev * exp(0.3 * s_day * g);
    }
    double close = open * exp(r), var = sigma * sigma;
    double up = 0.5 * (r + sqrt(r * r - 2.0 * var * log(unit_open(w[0]))));
    double dn = 0.5 * (r - sqrt(r * r - 2.0 * var * log(unit_open(w[1]))));
    double high = open * exp(up), low = open * exp(dn);
    double hi_oc = open > close ? open : close, lo_oc = open < close ? open : close;
    if (high < hi_oc) high = hi_oc; /* up >= max(0, r) in exact arithmetic: this only absorbs rounding */
    if (low > lo_oc) low = lo_oc;

    double lv = log(base_volume * k->season_v[t] * k_regime_volume[regime]) + 0.5 * log(h) +
                0.4 * (fabs(e) - 0.7978845608028654) + 0.35 * eta - 0.06125;
    double volume = floor(exp(lv) + 0.5);
    if (!(volume >= 1.0)) volume = 1.0;

    int64_t row = t * stride + inst;
    out->ts[row] = k->ts[t];
    out->open[row] = open;
    out->high[row] = high;
    out->low[row] = low;
    out->close[row] = close;
    out->volume[row] = volume;
    if (out->instrument) out->instrument[row] = inst;
    close_prev = close;
    x_prev = x;
    e_prev = e;
  }
}

tg_status tg_synth_generate(const tg_synth_config *cfg, tg_bars *out) {
  tg_bars_init(out);
  if (!cfg) return tg_error(TG_ERR_INVALID, "synth: no configuration (start from tg_synth_defaults())");
  tg_status st = check_config(cfg);
  if (st != TG_OK) return st;
  calendar k;
  if ((st = calendar_build(cfg, &k)) != TG_OK) return st;
  int64_t total = cfg->bars * cfg->instruments;
  if ((st = tg_bars_reserve(out, total > 0 ? total : 1, cfg->instruments > 1)) != TG_OK) {
    calendar_free(&k);
    return st;
  }
  for (int i = 0; i < cfg->instruments; i++) simulate(cfg, &k, (uint32_t)i, out, cfg->instruments);
  out->n = total;
  calendar_free(&k);
  snprintf(out->source, sizeof out->source, "synthetic seed %llu", (unsigned long long)cfg->seed);
  snprintf(out->format, sizeof out->format, "synthetic");
  return TG_OK;
}
