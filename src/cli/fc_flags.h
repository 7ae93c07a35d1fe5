/* The backtest flags of a forecaster run (--rule, --horizon, --long-only, --sized, --class-map, --threshold, cash, costs, multiplier, tick size, --no-spread), parsed into tg_fc_bt_opts. */
#ifndef TG_CLI_FC_FLAGS_H
#define TG_CLI_FC_FLAGS_H

#include "tickgrad/tickgrad.h"

typedef struct cli_fc_flags {
  tg_fc_bt_opts b;  /* the rule, cash and costs (log: stdout) */
  int given;        /* some flag was given */
  int costs_given;  /* --commission, --cost-bps or --slippage was given */
} cli_fc_flags;

void cli_fc_flags_init(cli_fc_flags *f);
/* flag (value v, NULL when none follows) if it is one of the backtest flags: returns how many arguments after the flag it
 * took (0 or 1) and sets *rc to a usage error's exit code (printed, naming cmd) or 0; -1 when it is not one of them. */
int cli_fc_flag(const char *cmd, cli_fc_flags *f, const char *flag, const char *v, int *rc);

#endif
