/* The trainer's file helpers: a file's hash, a clock. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "base/alloc.h"
#include "train/train_internal.h"

tg_status tr_file_hash(const char *path, char *hex) {
  char *text = NULL;
  size_t len = 0;
  tg_status st = tg_read_file(path, &text, &len);
  if (st != TG_OK) return st;
  uint64_t h = 1469598103934665603ull; /* FNV-1a 64 */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
  tg_free(text);
  snprintf(hex, 17, "%016llx", (unsigned long long)h);
  return TG_OK;
}

double tr_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
