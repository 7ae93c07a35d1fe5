/* The crash-test hook of the file layer: TICKGRAD_FAULT kills, fails with ENOSPC or pauses at the Nth write. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "base/files.h"

enum { FAULT_UNREAD, FAULT_NONE, FAULT_LIST, FAULT_KILL, FAULT_ENOSPC, FAULT_PAUSE };

#define PAUSE_SECONDS 2

static atomic_int g_mode = FAULT_UNREAD;
static atomic_long g_count;
static long g_at;

static int read_mode(void) {
  const char *v = getenv("TICKGRAD_FAULT");
  char *end = NULL;
  int mode = FAULT_NONE;
  if (v && strcmp(v, "list") == 0) mode = FAULT_LIST;
  else if (v && strncmp(v, "kill:", 5) == 0) mode = FAULT_KILL, g_at = strtol(v + 5, &end, 10);
  else if (v && strncmp(v, "enospc:", 7) == 0) mode = FAULT_ENOSPC, g_at = strtol(v + 7, &end, 10);
  else if (v && strncmp(v, "pause:", 6) == 0) mode = FAULT_PAUSE, g_at = strtol(v + 6, &end, 10);
  else if (v && *v)
    fprintf(stderr, "warning: TICKGRAD_FAULT=%s is not list, kill:N, enospc:N or pause:N; ignored\n", v);
  if (mode != FAULT_NONE && mode != FAULT_LIST && (!end || *end || g_at < 1)) {
    fprintf(stderr, "warning: TICKGRAD_FAULT=%s: N must be a whole number >= 1; ignored\n", v);
    mode = FAULT_NONE;
  }
  return mode;
}

int tg_fault_point(const char *op, const char *path) {
  int mode = atomic_load(&g_mode);
  if (mode == FAULT_UNREAD) {
    mode = read_mode();
    atomic_store(&g_mode, mode);
  }
  if (mode == FAULT_NONE) return 0;
  long n = atomic_fetch_add(&g_count, 1) + 1;
  if (mode == FAULT_LIST) {
    fprintf(stderr, "fault point %ld: %s %s\n", n, op, path);
    return 0;
  }
  if (n != g_at) return 0;
  if (mode == FAULT_PAUSE) {
    fprintf(stderr, "fault point %ld: %s %s: paused %d s\n", n, op, path, PAUSE_SECONDS);
    struct timespec left = {PAUSE_SECONDS, 0};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) continue;
    return 0;
  }
  fprintf(stderr, "fault point %ld: %s %s: injected %s\n", n, op, path, mode == FAULT_KILL ? "SIGKILL" : "ENOSPC");
  fflush(stderr);
  if (mode == FAULT_KILL) raise(SIGKILL);
  errno = ENOSPC;
  return -1;
}
