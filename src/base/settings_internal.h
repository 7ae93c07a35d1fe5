/* What the settings engine's two files share: typed setters with range checks, list access. */
#ifndef TG_BASE_SETTINGS_INTERNAL_H
#define TG_BASE_SETTINGS_INTERNAL_H

#include "base/settings.h"

#define TS_MAX_LIST 64 /* the most elements of a NUMS list */

int ts_whole(tg_setting_type type);               /* the integer types */
int ts_in_range(const tg_setting *s, double v);   /* within [lo, hi] (its open ends excluded) */
int *ts_count(void *cfg, const tg_setting *s);    /* a list's count member */
/* Each checks v against s and stores it; where names the source in errors. */
tg_status ts_set_number(const tg_settings *t, void *cfg, const tg_setting *s, double v, const char *where);
tg_status ts_set_list(const tg_settings *t, void *cfg, const tg_setting *s, const double *v, int n, const char *where);
tg_status ts_set_string(const tg_settings *t, void *cfg, const tg_setting *s, const char *v, const char *where); /* STRS: appends */
tg_status ts_set_bool(const tg_settings *t, void *cfg, const tg_setting *s, int v, const char *where);

#endif
