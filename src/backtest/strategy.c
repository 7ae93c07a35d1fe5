/* Rule strategies: parsing "buy-and-hold" and "sma-cross:FAST,SLOW", and their causal target positions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tickgrad/backtest.h"

#define SMA_MAX 1000000

static const char *SMA_WANT = "want sma-cross:FAST,SLOW with whole numbers 1 <= FAST < SLOW <= 1000000, e.g. sma-cross:20,50";

/* A whole number in [1, SMA_MAX] at *p, followed by stop; advances *p past it. */
static int take_int(const char **p, char stop, int *out) {
  if (**p < '0' || **p > '9') return 0;
  char *end;
  errno = 0;
  long v = strtol(*p, &end, 10);
  if (errno || *end != stop || v < 1 || v > SMA_MAX) return 0;
  *out = (int)v;
  *p = end + (stop ? 1 : 0);
  return 1;
}

tg_status tg_strategy_parse(const char *text, tg_strategy *out) {
  if (!text || !out) return tg_error(TG_ERR_INVALID, "strategy: no text given; want buy-and-hold or sma-cross:FAST,SLOW");
  memset(out, 0, sizeof *out);
  if (!strcmp(text, "buy-and-hold")) {
    out->kind = TG_STRATEGY_BUY_HOLD;
    snprintf(out->name, sizeof out->name, "buy-and-hold");
    return TG_OK;
  }
  const char *pre = "sma-cross:";
  if (strncmp(text, pre, strlen(pre)) != 0)
    return tg_error(TG_ERR_INVALID, "strategy '%s': unknown; want buy-and-hold or sma-cross:FAST,SLOW", text);
  const char *p = text + strlen(pre);
  int fast, slow;
  if (!take_int(&p, ',', &fast) || !take_int(&p, '\0', &slow))
    return tg_error(TG_ERR_INVALID, "strategy '%s': %s", text, SMA_WANT);
  if (fast >= slow)
    return tg_error(TG_ERR_INVALID, "strategy '%s': the fast average (%d bars) must be shorter than the slow one (%d); %s",
                    text, fast, slow, SMA_WANT);
  out->kind = TG_STRATEGY_SMA_CROSS;
  out->fast = fast;
  out->slow = slow;
  snprintf(out->name, sizeof out->name, "sma-cross:%d,%d", fast, slow);
  return TG_OK;
}

/* Mean of close[t-k+1 .. t], summed afresh in order, so a decision depends on its own window only. */
static double sma(const double *close, int64_t t, int k) {
  double s = 0;
  for (int64_t i = t - k + 1; i <= t; i++) s += close[i];
  return s / (double)k;
}

tg_status tg_strategy_targets(const tg_strategy *s, const tg_bars *bars, double *target) {
  if (!s || !bars || !target) return tg_error(TG_ERR_INVALID, "strategy targets: missing strategy, bars or output");
  if (s->kind != TG_STRATEGY_BUY_HOLD && s->kind != TG_STRATEGY_SMA_CROSS)
    return tg_error(TG_ERR_INVALID, "strategy targets: unknown strategy kind %d", (int)s->kind);
  for (int64_t t = 0; t < bars->n; t++) {
    if (s->kind == TG_STRATEGY_BUY_HOLD) target[t] = 1.0;
    else if (t + 1 < s->slow) target[t] = 0.0;
    else target[t] = sma(bars->close, t, s->fast) > sma(bars->close, t, s->slow) ? 1.0 : 0.0;
  }
  return TG_OK;
}
