/* A stream that requests a stop on the nth write holding a needle (fopencookie): the tests' deterministic Ctrl-C. */
#define _GNU_SOURCE
#include <string.h>
#include "support/stop_hook.h"
#include "tickgrad/status.h"

static struct {
  char needle[64];
  int left;
} g_hook;

static ssize_t hook_write(void *cookie, const char *buf, size_t n) {
  (void)cookie;
  char text[512];
  size_t k = n < sizeof text - 1 ? n : sizeof text - 1;
  memcpy(text, buf, k);
  text[k] = '\0';
  if (g_hook.left > 0 && strstr(text, g_hook.needle) && --g_hook.left == 0) tg_stop_request();
  return (ssize_t)n;
}

FILE *tg_test_stop_stream(const char *needle, int nth) {
  snprintf(g_hook.needle, sizeof g_hook.needle, "%s", needle);
  g_hook.left = nth;
  FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){NULL, hook_write, NULL, NULL});
  if (f) setvbuf(f, NULL, _IONBF, 0);
  return f;
}
