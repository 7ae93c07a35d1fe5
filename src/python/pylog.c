/* A FILE * whose writes go to Python (sys.stdout, or a callable given each line): the library's log lines, written
 * from C with the GIL released, reach Python's own stdout (Jupyter, redirect_stdout, pytest's capture). */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <string.h>
#include "python/core.h"

typedef struct tgpy_log {
  int echo;           /* write to sys.stdout */
  PyObject *on_line;  /* called with each complete line (no newline), or NULL */
  char *line;         /* the pending partial line for on_line */
  size_t len, cap;
} tgpy_log;

static void send_line(tgpy_log *l, const char *s, size_t n) {
  PyObject *r = PyObject_CallFunction(l->on_line, "s#", s, (Py_ssize_t)n);
  if (r) Py_DECREF(r);
  else PyErr_WriteUnraisable(l->on_line);
}

static ssize_t log_write(void *cookie, const char *buf, size_t size) {
  tgpy_log *l = cookie;
  PyGILState_STATE g = PyGILState_Ensure();
  if (l->echo) {
    PyObject *out = PySys_GetObject("stdout"); /* borrowed */
    if (out && out != Py_None) {
      PyObject *r = PyObject_CallMethod(out, "write", "s#", buf, (Py_ssize_t)size);
      if (r) Py_DECREF(r);
      else PyErr_Clear();
    }
  }
  if (l->on_line) {
    for (size_t i = 0; i < size; i++) {
      if (buf[i] == '\n') {
        send_line(l, l->line ? l->line : "", l->len);
        l->len = 0;
      } else {
        if (l->len + 1 > l->cap) {
          size_t cap = l->cap ? l->cap * 2 : 256;
          char *p = realloc(l->line, cap);
          if (!p) break;
          l->line = p, l->cap = cap;
        }
        l->line[l->len++] = buf[i];
      }
    }
  }
  PyGILState_Release(g);
  return (ssize_t)size;
}

static int log_close(void *cookie) {
  tgpy_log *l = cookie;
  PyGILState_STATE g = PyGILState_Ensure();
  if (l->on_line && l->len) send_line(l, l->line, l->len);
  if (l->echo) {
    PyObject *out = PySys_GetObject("stdout");
    if (out && out != Py_None) {
      PyObject *r = PyObject_CallMethod(out, "flush", NULL);
      if (r) Py_DECREF(r);
      else PyErr_Clear();
    }
  }
  Py_XDECREF(l->on_line);
  PyGILState_Release(g);
  free(l->line);
  free(l);
  return 0;
}

FILE *tgpy_stdout_file(int echo, PyObject *on_line) {
  tgpy_log *l = calloc(1, sizeof *l);
  if (!l) return (FILE *)PyErr_NoMemory();
  l->echo = echo;
  l->on_line = on_line && on_line != Py_None ? Py_NewRef(on_line) : NULL;
  cookie_io_functions_t io = {NULL, log_write, NULL, log_close};
  FILE *f = fopencookie(l, "w", io);
  if (!f) {
    Py_XDECREF(l->on_line);
    free(l);
    PyErr_SetFromErrno(PyExc_OSError);
    return NULL;
  }
  setvbuf(f, NULL, _IOLBF, 0);
  return f;
}
