/* The reader flags every command that reads bars shares, parsed into tg_read_settings by the library's table. */
#include <stdio.h>
#include "cli/cli.h"
#include "cli/read_flags.h"

int cli_read_flag(const char *cmd, cli_read_flags *r, const char *flag, const char *v, int *rc) {
  *rc = 0;
  if (!tg_read_flag_known(flag)) return -1;
  if (!v) *rc = tg_cli_usage_error(cmd, "%s needs a value", flag);
  else if (r->n == CLI_READ_MAX_FLAGS) *rc = tg_cli_usage_error(cmd, "too many reader flags");
  else if (tg_read_settings_set_flag(&r->s, flag, v) != TG_OK) *rc = tg_cli_usage_error(cmd, "%s", tg_last_error());
  else r->flag[r->n] = flag, r->value[r->n++] = v;
  return 1;
}

void cli_read_flags_over(const cli_read_flags *r, tg_read_settings *base) {
  for (int i = 0; i < r->n; i++) tg_read_settings_set_flag(base, r->flag[i], r->value[i]); /* checked when given */
}

void cli_read_flags_help(FILE *f) {
  fprintf(f, "reading bars (the same flags on train, predict, backtest, walkforward, sweep and inspect):\n");
  tg_read_flags_help(f);
}
