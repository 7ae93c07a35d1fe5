/* Status codes and the thread-local error message every failing call leaves behind. */
#ifndef TICKGRAD_STATUS_H
#define TICKGRAD_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one file path the library keeps, with its NUL (longer paths are refused with an error naming them). */
#define TG_PATH_MAX 1024

typedef enum tg_status {
  TG_OK = 0,
  TG_ERR_INVALID,     /* bad argument or call order */
  TG_ERR_SHAPE,       /* shapes or dtypes do not fit the op */
  TG_ERR_DEVICE,      /* tensor on another device, or device not available */
  TG_ERR_NOMEM,       /* allocation failed */
  TG_ERR_IO,          /* file system error */
  TG_ERR_FORMAT,      /* malformed or truncated file */
  TG_ERR_UNSUPPORTED, /* kernel, dtype or feature not available in this build */
  TG_ERR_NUMERIC,     /* NaN or Inf where a finite value was required */
  TG_ERR_INTERRUPTED, /* a stop request (tg_stop_request) ended a call of many runs early; what it wrote is kept */
} tg_status;

/* Message describing the most recent failure on this thread ("" if none). */
const char *tg_last_error(void);
/* Short name of a status code, e.g. "shape". */
const char *tg_status_name(tg_status s);
/* Record a failure: formats the message, stores it for tg_last_error, returns s. */
tg_status tg_error(tg_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A stop request, one flag for the whole library (a lock-free C11 atomic): tg_stop_request is async-signal-safe and
 * thread-safe, so a SIGINT handler or another thread may call it while training runs. Long-running calls poll it
 * at safe points: the forecaster trainer (tg_train_run) after every optimizer step, DQN after every env step, PPO
 * after every iteration, walkforward and sweep through the runs they start. Each finishes the step it is in, writes
 * a checkpoint, returns TG_OK and says so in its result's `interrupted` (walkforward and sweep stop at that run and
 * return TG_ERR_INTERRUPTED naming it); a resume continues bitwise. The library
 * never clears the flag: the caller calls tg_stop_clear before it starts a run (a request left set stops the next
 * run after its first step). */
void tg_stop_request(void);
/* 1 when a stop has been requested and not cleared since. */
int tg_stop_requested(void);
void tg_stop_clear(void);

#ifdef __cplusplus
}
#endif
#endif
