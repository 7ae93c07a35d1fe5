/* `tickgrad inspect` (placeholder until the readers land). */
#include <stdio.h>
#include "cli/cli.h"

int tg_cmd_inspect(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "tickgrad inspect: not built yet\n");
  return TG_EXIT_FAIL;
}
