/* The reader flags every command that reads bars shares (--columns, --data-tz, --price-scale, --nulls, --duplicates, --allow-ohlc, --skip-bad-files, --roll, --adjust, --by, --quotes). */
#ifndef TG_CLI_READ_FLAGS_H
#define TG_CLI_READ_FLAGS_H

#include "tickgrad/data.h"

#define CLI_READ_MAX_FLAGS 32

typedef struct cli_read_flags {
  tg_read_settings s;  /* the flags given over the defaults */
  int n;               /* how many were given */
  const char *flag[CLI_READ_MAX_FLAGS], *value[CLI_READ_MAX_FLAGS];
} cli_read_flags;

/* flag (value v, NULL when none follows) if it is a reader flag: sets it in r and returns 1 (the value taken), with
 * *rc 0 or the exit code of a usage error (printed, naming cmd); -1 when flag is not a reader flag. r starts zeroed. */
int cli_read_flag(const char *cmd, cli_read_flags *r, const char *flag, const char *v, int *rc);
/* The flags given, over base (a run's settings, for commands that read a run's data the way it was read). */
void cli_read_flags_over(const cli_read_flags *r, tg_read_settings *base);
/* Their --help lines. */
void cli_read_flags_help(FILE *f);

#endif
