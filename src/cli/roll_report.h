/* The rolls of a continuous futures series as `tickgrad bars` and `inspect` print them. */
#ifndef TG_CLI_ROLL_REPORT_H
#define TG_CLI_ROLL_REPORT_H

#include <stdio.h>
#include "tickgrad/data.h"

/* "  rolls       N (RULE, adjust ADJUST)" and one line per roll (date, from, to, adjustment, basis); also the spreads
 * and options dropped. rule NULL: the series was read stitched (its contract changes are listed). */
void tg_cli_print_rolls(FILE *f, const tg_roll_list *l, const char *rule, tg_adjust adjust);

#endif
