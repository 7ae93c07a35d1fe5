/* The built-in synthetic market: seeded OHLCV bars with regimes, volatility clustering, intraday
 * seasonality and an optional planted predictable component. The default data set for demos and
 * tests: with the planted signal a model must find an edge; with signal 0 it must not. */
#ifndef TICKGRAD_SYNTH_H
#define TICKGRAD_SYNTH_H

#include <stdint.h>
#include "tickgrad/data.h"
#include "tickgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The model, bar by bar (t counts the bars of one instrument, across sessions):
 *
 *   r_t = log(close_t / open_t) = mu_t + sigma_t * x_t                  (the bar's log return)
 *   x_t = signal * x_{t-1} + sqrt(1 - signal^2) * e_t,   x_0 = e_0       (standardized return)
 *   e_t = sqrt(correlation) * m_t + sqrt(1 - correlation) * z_t         (m_t shared by all instruments)
 *   sigma_t = s_bar * v_regime(t) * season(t) * sqrt(h_t)
 *   h_t = (1 - 0.06 - 0.92) + 0.06 * h_{t-1} * e_{t-1}^2 + 0.92 * h_{t-1},   h_0 = 1   (GARCH(1,1))
 *   mu_t = regime_drift * d_regime(t) * sigma_t
 *
 * m_t, z_t are independent standard normals. s_bar is the per-bar volatility that gives the
 * annualised `volatility` (252 trading days a year unless weekends trade). The hidden regime is a
 * Markov chain over three states, calm / normal / turbulent, with volatility multipliers 0.6, 1.0,
 * 1.7 (scaled so their mean square is 1), volume multipliers 0.75, 1.0, 1.5 and drift directions
 * d = +1, 0, -1; each bar it switches with probability 1 / regime_bars to one of the other two
 * states. All instruments share one regime chain when correlation > 0; otherwise each has its own.
 * season(t) is 1 except for intraday bars of a session with two or more bars, where it is the
 * U shape sqrt(0.6 + 1.2 q^2), q = 2 u - 1, u = (position of the bar's middle in the session) in
 * [0, 1] (mean square 1 over a session: loud open and close, quiet lunch).
 *
 * THE PLANTED SIGNAL: E[x_t | past] = signal * x_{t-1}. The previous bar's standardized return
 * predicts the next one with correlation `signal` (the best linear predictor, R^2 = signal^2). A
 * model sees x_{t-1} as r_{t-1} divided by a causal volatility estimate (for example the square root
 * of an exponential moving average of r^2). With signal = 0 and regime_drift = 0 the x_t are
 * independent and mu_t = 0: the log price is a martingale, nothing in the past predicts the sign or
 * mean of the next return (only its size is predictable: clustering, seasonality, regimes).
 *
 * Prices: the first open is `price` for instrument 0 and price * exp(0.5 N(0,1)) for the others.
 * Within a session each open equals the previous close; the first bar of each intraday session
 * opens with an overnight gap, open = previous close * exp(0.3 * s_day * N(0,1)), s_day the daily
 * volatility (the gap is not part of r_t). High and low come from the exact distribution of the
 * maximum and minimum of a Brownian bridge from open to close with variance sigma_t^2, so
 * low <= min(open, close) <= max(open, close) <= high always, and all prices are positive.
 *
 * Volume: log-normal, log V_t = log(volume * vs(u) * w_regime) + 0.5 log h_t + 0.4 (|e_t| - 0.798)
 * + 0.35 N(0,1) - 0.06125, vs(u) = 0.5 + 1.5 q^2 (U shape, mean 1) for intraday sessions, rounded
 * to a whole number >= 1: larger in loud regimes, after large moves and at the open and close.
 *
 * Calendar: for an interval under one day with session_start_min < session_end_min, each trading
 * day has bars starting at session_start, session_start + interval, ... while before session_end
 * (UTC minutes of day; the last bar may run past the end). Otherwise (round the clock, or an interval
 * of a day or more) bars follow each other every interval from start_ns. Saturdays and Sundays
 * (UTC) have no bars unless weekends is set (ignored for intervals over one day). The first bar
 * is the first one at or after start_ns.
 *
 * Determinism: every random number is Philox (tg_philox) at (seed, stream, bar), so the same
 * config gives bitwise the same bars on any machine with an IEEE double libm (log, exp, sqrt, cos,
 * sin), independently of threads and time. */
typedef struct tg_synth_config {
  int64_t start_ns;       /* earliest bar start, UTC ns (default 2020-01-02 00:00, a Thursday) */
  int64_t interval_ns;    /* bar length (default 1 minute) */
  int64_t bars;           /* bars per instrument (default 10,000) */
  int instruments;        /* 1..65536 (default 1); more than one adds the instrument column, ids 0..K-1 */
  double correlation;     /* [0, 1): share of each shock's variance common to all instruments (default 0) */
  uint64_t seed;          /* default 1 */
  double signal;          /* planted strength in (-1, 1): lag-1 correlation of x (default 0) */
  int session_start_min;  /* trading session for intraday bars, UTC minutes of day (default 870..1260, */
  int session_end_min;    /*   14:30..21:00 UTC = 09:30..16:00 New York winter time); equal: round the clock */
  int weekends;           /* 1: Saturdays and Sundays trade too (default 0) */
  double price;           /* first open of instrument 0 (default 100) */
  double volatility;      /* annualised volatility of log returns, (0, 10] (default 0.2) */
  double volume;          /* mean volume of a bar; 0: 5e7 a day spread over the day's bars (default 0) */
  double regime_bars;     /* mean bars between regime switches; 0: no switching, always normal (default 2000) */
  double regime_drift;    /* drift of the calm/turbulent regimes in sigma units per bar, [0, 1) (default 0) */
} tg_synth_config;

tg_synth_config tg_synth_defaults(void);

/* Generates cfg->bars bars for each instrument, sorted by (ts, instrument), format "synthetic".
 * out is initialised by this call. Bad configuration is TG_ERR_INVALID naming the field. */
tg_status tg_synth_generate(const tg_synth_config *cfg, tg_bars *out);

#ifdef __cplusplus
}
#endif
#endif
