/* The bar builder's state, shared by its bar bookkeeping (builder.c) and its imbalance and run thresholds (adaptive.c). */
#ifndef TG_DATA_TICKS_BUILDER_INTERNAL_H
#define TG_DATA_TICKS_BUILDER_INTERNAL_H

#include <stdint.h>
#include "tickgrad/ticks.h"

/* The bar being filled. */
typedef struct tg_open_bar {
  int open;
  int64_t ts, bucket; /* first trade's time; a time bar's interval start */
  double o, h, l, c;
  double volume, notional, buy_volume, sell_volume;
  int64_t count;
} tg_open_bar;

/* Imbalance and run bars: the warm-up sums, the expectations, and the open bar's sums. */
typedef struct tg_adaptive {
  int64_t warm_left, warm_n, warm_signed;
  double warm_bv, warm_buy, warm_sell, warm_v;
  double s0;                        /* SIZE x V0: the guards' scale */
  double e_t, e_imb, e_buy, e_sell; /* the EWMAs */
  double theta, buy, sell;          /* this bar: sum of b v, of buy v, of sell v */
  int64_t ticks;
  int clamped;                      /* -1 floor, 1 cap, 0 neither: the threshold last compared */
} tg_adaptive;

struct tg_bar_builder {
  tg_bar_recipe r;
  tg_bar_opts o;
  tg_bars *out;
  int col0;             /* out->cols index of trade_count; the others follow */
  tg_bar_stats st;
  int64_t last_ts;      /* INT64_MIN before any record */
  double last_price;    /* the tick rule: the previous trade's price (NaN before one) and its sign */
  int last_sign;
  double bid, ask;      /* the last quote (NaN before one) */
  double spread_sum;
  int64_t spread_n;
  tg_open_bar bar;
  tg_adaptive ad;
};

/* The adaptive state of recipe r, before the first trade. */
void tg_adaptive_init(tg_adaptive *a, const tg_bar_recipe *r);
/* Adds a trade of sign b and weight v; *close = 1 when the bar should close after it. TG_ERR_INVALID when the warm-up
 * ends without a signed trade. */
tg_status tg_adaptive_add(tg_bar_builder *b, int sign, double v, int *close);
/* After a bar closed: the EWMAs take its length and means, the sums restart. */
void tg_adaptive_bar_done(tg_adaptive *a, const tg_bar_recipe *r);

#endif
