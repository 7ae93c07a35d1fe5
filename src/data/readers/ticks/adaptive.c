/* Imbalance and run bars (AFML ch. 2): warm-up, EWMA expectations, and the threshold clamped to [floor, cap] x S0. */
#include <math.h>
#include "data/readers/ticks/builder_internal.h"

static int is_run(tg_bar_kind k) { return k >= TG_BARS_TICK_RUN; }

void tg_adaptive_init(tg_adaptive *a, const tg_bar_recipe *r) {
  *a = (tg_adaptive){.warm_left = r->warmup, .e_t = r->size};
}

/* The warm-up is over: the expectations the first bar is cut by, or the error for flow with no side at all. */
static tg_status warm_end(tg_bar_builder *b) {
  tg_adaptive *a = &b->ad;
  if (a->warm_signed == 0)
    return tg_error(TG_ERR_INVALID,
                    "%s bars: none of the %lld warm-up trades has a side (b = 0 for all: %s), so no bar would ever "
                    "close; %s",
                    tg_bar_kind_name(b->r.kind), (long long)a->warm_n,
                    b->o.no_tick_rule ? "no side in the data and the tick rule is off" : "the price never moved",
                    b->o.no_tick_rule ? "turn the tick rule on" : "use a longer warmup or another kind of bar");
  double n = (double)a->warm_n;
  a->e_imb = a->warm_bv / n;
  a->e_buy = a->warm_buy / n;
  a->e_sell = a->warm_sell / n;
  a->s0 = b->r.size * (a->warm_v / n);
  return TG_OK;
}

static double threshold(tg_adaptive *a, const tg_bar_recipe *r) {
  double raw = is_run(r->kind) ? a->e_t * fmax(a->e_buy, a->e_sell) : a->e_t * fabs(a->e_imb);
  double lo = r->floor * a->s0, hi = r->cap * a->s0;
  a->clamped = raw < lo ? -1 : raw > hi ? 1 : 0;
  return raw < lo ? lo : raw > hi ? hi : raw;
}

tg_status tg_adaptive_add(tg_bar_builder *b, int sign, double v, int *close) {
  tg_adaptive *a = &b->ad;
  double buy = sign > 0 ? v : 0, sell = sign < 0 ? v : 0;
  a->theta += sign * v;
  a->buy += buy;
  a->sell += sell;
  a->ticks++;
  *close = 0;
  if (a->warm_left > 0) {
    a->warm_n++;
    a->warm_signed += sign != 0;
    a->warm_bv += sign * v;
    a->warm_buy += buy;
    a->warm_sell += sell;
    a->warm_v += v;
    if (--a->warm_left > 0) return TG_OK;
    tg_status st = warm_end(b);
    if (st != TG_OK) return st;
  }
  double stat = is_run(b->r.kind) ? fmax(a->buy, a->sell) : fabs(a->theta);
  *close = stat >= threshold(a, &b->r);
  if (*close && a->clamped) *(a->clamped < 0 ? &b->st.floor_hits : &b->st.cap_hits) += 1;
  return TG_OK;
}

void tg_adaptive_bar_done(tg_adaptive *a, const tg_bar_recipe *r) {
  double al = r->alpha, t = (double)a->ticks;
  a->e_t = al * t + (1 - al) * a->e_t;
  a->e_imb = al * (a->theta / t) + (1 - al) * a->e_imb;
  a->e_buy = al * (a->buy / t) + (1 - al) * a->e_buy;
  a->e_sell = al * (a->sell / t) + (1 - al) * a->e_sell;
  a->theta = a->buy = a->sell = 0;
  a->ticks = 0;
}
