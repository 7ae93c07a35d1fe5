/* The forecaster backtest flags that backtest --run, walkforward and sweep share. */
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/fc_flags.h"

void cli_fc_flags_init(cli_fc_flags *f) {
  memset(f, 0, sizeof *f);
  f->b = tg_fc_bt_defaults();
  f->b.log = stdout;
}

/* 0, or the usage exit code after tg_cli_number printed why. */
static int num(const char *cmd, const char *flag, const char *v, double lo, double hi, double *out) {
  return tg_cli_number(cmd, flag, v, lo, hi, out) ? 0 : TG_EXIT_USAGE;
}

int cli_fc_flag(const char *cmd, cli_fc_flags *f, const char *flag, const char *v, int *rc) {
  tg_fc_bt_opts *b = &f->b;
  *rc = 0;
  if (!strcmp(flag, "--long-only")) return b->long_only = 1, f->given = 1, 0;
  if (!strcmp(flag, "--sized")) return b->sized = 1, f->given = 1, 0;
  if (!strcmp(flag, "--no-spread")) return b->o.ignore_quotes = 1, f->given = 1, 0;
  if (!strcmp(flag, "--rule")) {
    tg_fc_rule_kind k;
    if (!v || tg_fc_rule_parse(v, &k) != TG_OK) *rc = tg_cli_usage_error(cmd, "--rule '%s': want band or median", v ? v : "");
    b->rule = v, f->given = 1;
  } else if (!strcmp(flag, "--horizon")) {
    long h = 0;
    *rc = tg_cli_parse_long(flag, v, 1, TG_MAX_HORIZONS, &h) ? 0 : TG_EXIT_USAGE;
    b->horizon = (int)h, f->given = 1;
  } else if (!strcmp(flag, "--class-map")) {
    if (!v) *rc = tg_cli_usage_error(cmd, "--class-map needs class=position pairs, e.g. buy=1,sell=-1,hold=0");
    b->class_map = v, f->given = 1;
  } else if (!strcmp(flag, "--threshold")) *rc = num(cmd, flag, v, 0, 1, &b->threshold), f->given = 1;
  else if (!strcmp(flag, "--cash")) *rc = num(cmd, flag, v, 1e-9, 1e15, &b->o.cash), f->given = 1;
  else if (!strcmp(flag, "--commission")) *rc = num(cmd, flag, v, 0, 1, &b->o.commission), f->given = f->costs_given = 1;
  else if (!strcmp(flag, "--cost-bps")) *rc = num(cmd, flag, v, 0, 10000, &b->o.cost_bps), f->given = f->costs_given = 1;
  else if (!strcmp(flag, "--slippage")) *rc = num(cmd, flag, v, 0, 1, &b->o.slippage), f->given = f->costs_given = 1;
  else if (!strcmp(flag, "--multiplier")) *rc = num(cmd, flag, v, 1e-12, 1e12, &b->o.multiplier), f->given = 1, b->o.multiplier_from_bars = 0;
  else if (!strcmp(flag, "--tick-size")) *rc = num(cmd, flag, v, 0, 1e12, &b->o.tick_size), f->given = 1, b->o.tick_size_from_bars = 0;
  else if (!strcmp(flag, "--commission-per-contract"))
    *rc = num(cmd, flag, v, 0, 1e12, &b->o.commission_per_contract), f->given = 1;
  else return -1;
  return 1;
}
