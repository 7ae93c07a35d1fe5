/* A FILE * whose writes go to Python: the library's log lines and progress bar, written from C with the GIL released,
 * reach sys.stdout or sys.stderr (Jupyter, redirect_stdout, pytest's capture) and, line by line, a callable. */
#define _GNU_SOURCE 1 /* fopencookie */
#include <stdlib.h>
#include <string.h>
#include "python/core.h"

typedef struct tgpy_log {
  const char *stream; /* "stdout", "stderr" or NULL */
  PyObject *on_line;  /* called with each complete line (no newline), or NULL */
  char *line;         /* the pending partial line for on_line */
  size_t len, cap;
} tgpy_log;

static void call_method(PyObject *obj, const char *name, PyObject *arg) {
  PyObject *r = arg ? PyObject_CallMethod(obj, name, "O", arg) : PyObject_CallMethod(obj, name, NULL);
  Py_XDECREF(r);
  PyErr_Clear(); /* a broken sys.stdout must not break the run */
}

static void send_line(tgpy_log *l, const char *s, size_t n) {
  PyObject *r = PyObject_CallFunction(l->on_line, "s#", s, (Py_ssize_t)n);
  if (r) Py_DECREF(r);
  else PyErr_WriteUnraisable(l->on_line);
}

static void add_lines(tgpy_log *l, const char *buf, size_t size) {
  for (size_t i = 0; i < size; i++) {
    if (buf[i] == '\n') {
      send_line(l, l->line ? l->line : "", l->len);
      l->len = 0;
      continue;
    }
    if (l->len + 1 > l->cap) {
      size_t cap = l->cap ? l->cap * 2 : 256;
      char *p = realloc(l->line, cap);
      if (!p) return;
      l->line = p, l->cap = cap;
    }
    l->line[l->len++] = buf[i];
  }
}

static ssize_t log_write(void *cookie, const char *buf, size_t size) {
  tgpy_log *l = cookie;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *exc_type, *exc_value, *exc_tb;
  PyErr_Fetch(&exc_type, &exc_value, &exc_tb); /* a pending exception of the caller stays as it was */
  PyObject *out = l->stream ? PySys_GetObject(l->stream) : NULL; /* borrowed */
  if (out && out != Py_None) {
    PyObject *text = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)size, "replace");
    if (text) call_method(out, "write", text);
    Py_XDECREF(text);
    PyErr_Clear();
    if (memchr(buf, '\n', size) || memchr(buf, '\r', size)) call_method(out, "flush", NULL);
  }
  if (l->on_line) add_lines(l, buf, size);
  PyErr_Restore(exc_type, exc_value, exc_tb);
  PyGILState_Release(g);
  return (ssize_t)size;
}

static int log_close(void *cookie) {
  tgpy_log *l = cookie;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *exc_type, *exc_value, *exc_tb;
  PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
  if (l->on_line && l->len) send_line(l, l->line, l->len);
  PyObject *out = l->stream ? PySys_GetObject(l->stream) : NULL;
  if (out && out != Py_None) call_method(out, "flush", NULL);
  Py_XDECREF(l->on_line);
  PyErr_Restore(exc_type, exc_value, exc_tb);
  PyGILState_Release(g);
  free(l->line);
  free(l);
  return 0;
}

FILE *tgpy_py_file(const char *stream, PyObject *on_line) {
  tgpy_log *l = calloc(1, sizeof *l);
  if (!l) return (FILE *)PyErr_NoMemory();
  l->stream = stream;
  l->on_line = on_line && on_line != Py_None ? Py_NewRef(on_line) : NULL;
  cookie_io_functions_t io = {NULL, log_write, NULL, log_close};
  FILE *f = fopencookie(l, "w", io);
  if (!f) {
    Py_XDECREF(l->on_line);
    free(l);
    PyErr_SetFromErrno(PyExc_OSError);
    return NULL;
  }
  setvbuf(f, NULL, _IOLBF, BUFSIZ);
  return f;
}
