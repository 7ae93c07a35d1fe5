/* `tickgrad synth` (placeholder until the synthetic market lands). */
#include <stdio.h>
#include "cli/cli.h"

int tg_cmd_synth(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "tickgrad synth: not built yet\n");
  return TG_EXIT_FAIL;
}
