/* How bars are read, as settings: the reader flags every command shares, and the options they give the readers. */
#include <string.h>
#include "data/readers/read_settings.h"
#include "tickgrad/ticks.h"

const char *const tg_read_nulls_names[] = {"error", "nan", NULL};
const char *const tg_read_dups_names[] = {"error", "first", "last", NULL};
const char *const tg_read_adjust_names[] = {"difference", "ratio", "none", NULL};

_Static_assert(sizeof(tg_null_policy) == sizeof(int) && sizeof(tg_dup_policy) == sizeof(int) &&
               sizeof(tg_adjust) == sizeof(int), "enums are int settings");

static const tg_setting ROWS[] = {TG_READ_SETTING_ROWS(0)};
static const tg_settings TABLE = {"read", ROWS, (int)(sizeof ROWS / sizeof ROWS[0]), 0, 0, NULL};

tg_read_opts tg_read_settings_opts(const tg_read_settings *s, FILE *warn) {
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  o.columns = s->columns[0] ? s->columns : NULL;
  o.tz = s->tz[0] ? s->tz : NULL;
  o.price_scale = s->price_scale;
  o.nulls = (tg_null_policy)s->nulls;
  o.duplicates = (tg_dup_policy)s->duplicates;
  o.allow_ohlc = s->allow_ohlc;
  o.skip_bad_files = s->skip_bad_files;
  o.roll = s->roll[0] ? s->roll : NULL;
  o.adjust = (tg_adjust)s->adjust;
  o.warn = warn;
  o.by = s->by[0] ? s->by : NULL;
  o.quotes = s->quotes[0] ? s->quotes : NULL;
  return o;
}

tg_status tg_read_settings_check(const tg_read_settings *s) {
  tg_bar_recipe r;
  if (s->by[0] && tg_bar_recipe_parse(s->by, &r) != TG_OK)
    return tg_error(TG_ERR_INVALID, "--by (bar_recipe): %s", tg_last_error());
  return TG_OK;
}

tg_status tg_read_settings_set_flag(tg_read_settings *s, const char *flag, const char *value) {
  tg_roll_spec spec;
  if (strcmp(flag, "--roll") == 0 && tg_roll_parse(value, &spec) != TG_OK) return TG_ERR_INVALID;
  tg_status st = tg_settings_set_flag(&TABLE, s, flag, value, 0, NULL);
  return st == TG_OK ? tg_read_settings_check(s) : st;
}

int tg_read_flag_known(const char *flag) { return tg_settings_flag_known(&TABLE, flag); }

void tg_read_flags_help(FILE *f) { tg_settings_help(&TABLE, f); }
