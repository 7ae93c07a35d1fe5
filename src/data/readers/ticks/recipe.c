/* Bar recipes: "kind:SIZE[,key=value...]" into a tg_bar_recipe, with errors naming the text and what is wrong. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/parse.h"
#include "tickgrad/ticks.h"

static const char *const k_names[] = {"time",           "tick",             "volume",           "dollar",
                                      "tick_imbalance", "volume_imbalance", "dollar_imbalance", "tick_run",
                                      "volume_run",     "dollar_run"};
#define N_KINDS ((int)(sizeof k_names / sizeof k_names[0]))
#define TEXT_MAX 256

const char *tg_bar_kind_name(tg_bar_kind k) { return (int)k >= 0 && (int)k < N_KINDS ? k_names[k] : "unknown"; }

static int is_adaptive(tg_bar_kind k) { return k >= TG_BARS_TICK_IMBALANCE; }

static tg_status parse_kind(const char *text, const char *name, tg_bar_kind *k) {
  for (int i = 0; i < N_KINDS; i++)
    if (strcmp(name, k_names[i]) == 0) {
      *k = (tg_bar_kind)i;
      return TG_OK;
    }
  return tg_error(TG_ERR_INVALID,
                  "bar recipe '%s': unknown kind '%s'; want time, tick, volume, dollar, tick_imbalance, "
                  "volume_imbalance, dollar_imbalance, tick_run, volume_run or dollar_run",
                  text, name);
}

static tg_status parse_size(const char *text, const char *v, tg_bar_recipe *r) {
  char what[TEXT_MAX + 64];
  snprintf(what, sizeof what, "bar recipe '%s': size", text);
  if (r->kind == TG_BARS_TIME) {
    tg_status st = tg_interval_parse(v, &r->interval_ns);
    return st == TG_OK ? TG_OK : tg_error(st, "bar recipe '%s': %s", text, tg_last_error());
  }
  if (tg_parse_double(v, -INFINITY, INFINITY, what, &r->size) != TG_OK) return TG_ERR_INVALID;
  if (!(r->size > 0) || !isfinite(r->size))
    return tg_error(TG_ERR_INVALID, "bar recipe '%s': size %s must be a positive number", text, v);
  if ((r->kind == TG_BARS_TICK || is_adaptive(r->kind)) && r->size != floor(r->size))
    return tg_error(TG_ERR_INVALID, "bar recipe '%s': size %s must be a whole number of ticks", text, v);
  return TG_OK;
}

/* One "key=value" guard of an imbalance or run recipe. */
static tg_status parse_key(const char *text, char *kv, tg_bar_recipe *r) {
  char *eq = strchr(kv, '=');
  if (!is_adaptive(r->kind))
    return tg_error(TG_ERR_INVALID, "bar recipe '%s': '%s': only imbalance and run bars take settings", text, kv);
  if (!eq) return tg_error(TG_ERR_INVALID, "bar recipe '%s': '%s' is not key=value", text, kv);
  *eq = '\0';
  const char *k = kv, *v = eq + 1;
  char what[TEXT_MAX + 64];
  snprintf(what, sizeof what, "bar recipe '%s': %s", text, k);
  if (strcmp(k, "alpha") == 0) return tg_parse_double(v, 1e-9, 1, what, &r->alpha);
  if (strcmp(k, "floor") == 0) return tg_parse_double(v, 1e-9, 1, what, &r->floor);
  if (strcmp(k, "cap") == 0) return tg_parse_double(v, 1, 1e9, what, &r->cap);
  if (strcmp(k, "warmup") == 0) return tg_parse_int64(v, 1, INT64_C(1) << 40, what, &r->warmup);
  return tg_error(TG_ERR_INVALID, "bar recipe '%s': unknown setting '%s'; want alpha, floor, cap or warmup", text, k);
}

tg_status tg_bar_recipe_parse(const char *text, tg_bar_recipe *r) {
  if (!text || !r) return tg_error(TG_ERR_INVALID, "bar recipe: none given");
  char buf[TEXT_MAX];
  if (strlen(text) >= sizeof buf) return tg_error(TG_ERR_INVALID, "bar recipe '%.40s...': too long", text);
  strcpy(buf, text);
  tg_bar_recipe x = {.alpha = 0.2, .floor = 0.1, .cap = 10};
  char *colon = strchr(buf, ':');
  if (!colon)
    return tg_error(TG_ERR_INVALID, "bar recipe '%s': want KIND:SIZE, such as time:1m, tick:500, dollar:5e6", text);
  *colon = '\0';
  tg_status st = parse_kind(text, buf, &x.kind);
  char *rest = colon + 1, *comma = strchr(rest, ',');
  if (comma) *comma = '\0';
  if (st == TG_OK) st = parse_size(text, rest, &x);
  while (st == TG_OK && comma) {
    char *kv = comma + 1;
    comma = strchr(kv, ',');
    if (comma) *comma = '\0';
    st = parse_key(text, kv, &x);
  }
  if (st != TG_OK) return st;
  if (is_adaptive(x.kind) && x.warmup == 0) x.warmup = (int64_t)x.size;
  *r = x;
  return TG_OK;
}
