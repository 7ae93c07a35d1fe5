/* The thread-local error message behind tg_error / tg_last_error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "tickgrad/status.h"

static _Thread_local char t_msg[1024];

const char *tg_last_error(void) { return t_msg; }

tg_status tg_error(tg_status s, const char *fmt, ...) {
  /* format into a copy first: callers often pass tg_last_error() itself as an argument
   * ("resume: %s"), and vsnprintf's output must not overlap its input */
  char msg[sizeof t_msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  memcpy(t_msg, msg, sizeof t_msg);
  return s;
}

const char *tg_status_name(tg_status s) {
  switch (s) {
    case TG_OK: return "ok";
    case TG_ERR_INVALID: return "invalid argument";
    case TG_ERR_SHAPE: return "shape error";
    case TG_ERR_DEVICE: return "device error";
    case TG_ERR_NOMEM: return "out of memory";
    case TG_ERR_IO: return "i/o error";
    case TG_ERR_FORMAT: return "format error";
    case TG_ERR_UNSUPPORTED: return "unsupported";
    case TG_ERR_NUMERIC: return "numeric error";
    case TG_ERR_INTERRUPTED: return "interrupted";
  }
  return "unknown status";
}
