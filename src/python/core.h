/* The extension module tickgrad._core: what its files share (errors, arrays over C memory, bars, settings). */
#ifndef TG_PYTHON_CORE_H
#define TG_PYTHON_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <signal.h>
#include <stdio.h>
#include "tickgrad/tickgrad.h"

/* Raises the Python exception of status s carrying tg_last_error() (prefixed by what, when not NULL); returns NULL. */
PyObject *tgpy_raise(tg_status s, const char *what);
/* The exception classes, created at import (tickgrad.Error and its subclasses). */
extern PyObject *tgpy_Error;

/* Ctrl-C while the library runs with the GIL released (Python's own handler cannot run then): called with the GIL
 * held in the main thread, tgpy_sigint_begin clears the library's stop request and installs a SIGINT handler that
 * raises it (tg_stop_request: the run stops at the end of its current step with a checkpoint) and says so on stderr;
 * tgpy_sigint_end puts Python's handler back and returns 1 when a Ctrl-C came. In another thread both do nothing
 * but clear (Ctrl-C belongs to the main thread there). */
typedef struct tgpy_sigint {
  int installed;
  struct sigaction old;
} tgpy_sigint;
void tgpy_sigint_begin(tgpy_sigint *s);
int tgpy_sigint_end(tgpy_sigint *s);
/* tickgrad.Interrupted (a KeyboardInterrupt): raised after a run that a Ctrl-C stopped with a checkpoint. */
extern PyObject *tgpy_Interrupted;

/* An array over memory that owner keeps alive: a buffer-protocol object (numpy.asarray views it, no copy).
 * format: a struct code ("d", "f", "q", "i", "I", "B"); shape [ndim] C-contiguous. */
PyObject *tgpy_array(PyObject *owner, void *data, const char *format, Py_ssize_t itemsize, int ndim,
                     const Py_ssize_t *shape, int readonly);

extern PyTypeObject tgpy_ArrayType;

/* A buffer of obj as C-contiguous items of format (one struct code) and ndim dims (-1: any). TypeError or ValueError
 * naming arg on a mismatch; release with PyBuffer_Release. */
int tgpy_buffer(PyObject *obj, const char *arg, const char *format, int ndim, int writable, Py_buffer *view);

/* tickgrad._core.Bars: a tg_bars owned by a Python object. */
typedef struct tgpy_bars {
  PyObject_HEAD
  tg_bars b;
} tgpy_bars;
extern PyTypeObject tgpy_BarsType;
/* A new Bars object holding no bars (NULL with an exception when out of memory). */
PyObject *tgpy_bars_new(void);
/* The bars of obj (a Bars object); TypeError naming arg otherwise. */
const tg_bars *tgpy_bars_of(PyObject *obj, const char *arg);

/* Captures what the library writes to a FILE * (warnings, logs) as text. */
typedef struct tgpy_capture {
  FILE *f;
  char *text;
  size_t len;
} tgpy_capture;
int tgpy_capture_open(tgpy_capture *c);
/* Closes c and returns its text as a str (NULL with an exception on failure). */
PyObject *tgpy_capture_close(tgpy_capture *c);

/* A line-buffered FILE * (fopencookie) whose writes go to Python with the GIL taken: to sys.<stream> ("stdout",
 * "stderr"; NULL: none), flushed at each newline or carriage return, and each complete line (without its newline) to
 * the callable on_line when not NULL/None. The library may write to it from a call that released the GIL; a pending
 * Python exception is left as it was. fclose flushes it. NULL with an exception on failure. */
FILE *tgpy_py_file(const char *stream, PyObject *on_line);

/* A forecaster's settings as `tickgrad train` builds them (train.c): the model's defaults (model NULL: config's
 * "model"), the JSON config file (NULL: none), the (flag, value) str pairs of the list pairs by
 * tg_train_config_set_flag, the data paths (a list of str, or None: none recorded, bars given) and the check.
 * have_bars: the caller gives the bars (no paths needed). -1 with a ValueError naming the setting. */
int tgpy_train_config_new(tg_train_config *c, const char *model, const char *config, PyObject *pairs, PyObject *paths,
                          int have_bars);

/* The methods of each file, joined at import. */
extern PyMethodDef tgpy_data_methods[];
extern PyMethodDef tgpy_ticks_methods[];
extern PyMethodDef tgpy_train_methods[];
extern PyMethodDef tgpy_predict_methods[];
extern PyMethodDef tgpy_backtest_methods[];
extern PyMethodDef tgpy_env_methods[];
extern PyMethodDef tgpy_agent_methods[]; /* agent.c: added by tgpy_env_types */
/* Types a file adds to the module (0 on success). */
int tgpy_predict_types(PyObject *m);
int tgpy_env_types(PyObject *m);
int tgpy_backtest_types(PyObject *m);

#endif
