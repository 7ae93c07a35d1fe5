/* Ctrl-C (SIGINT) and SIGTERM while a command trains: the first asks the library to stop after this step, a second quits. */
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "tickgrad/status.h"

static void on_stop_signal(int sig) {
  if (tg_stop_requested()) { /* the second: the default action, at once */
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  tg_stop_request();
  static const char msg[] = "tickgrad: stopping at the end of this step with a checkpoint (Ctrl-C again to quit at once)\n";
  ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1); /* async-signal-safe, unlike stdio */
  (void)n;
}

void tg_cli_stop_signals(void) {
  tg_stop_clear();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART; /* writes and reads in progress go on */
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}
