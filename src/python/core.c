/* tickgrad._core: the module, its exceptions (one per library status) and text captured from the library's logs. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "python/core.h"

PyObject *tgpy_Error, *tgpy_Interrupted;
static PyObject *err_of[TG_ERR_INTERRUPTED + 1]; /* by status */
static unsigned long main_thread;          /* threading.main_thread().ident */
static volatile sig_atomic_t sigint_seen;

PyObject *tgpy_raise(tg_status s, const char *what) {
  PyObject *cls = s > TG_OK && s <= TG_ERR_INTERRUPTED && err_of[s] ? err_of[s] : tgpy_Error;
  const char *msg = tg_last_error();
  if (!msg || !*msg) msg = tg_status_name(s);
  if (what) PyErr_Format(cls, "%s: %s", what, msg);
  else PyErr_SetString(cls, msg);
  return NULL;
}

int tgpy_capture_open(tgpy_capture *c) {
  memset(c, 0, sizeof *c);
  c->f = open_memstream(&c->text, &c->len);
  if (!c->f) {
    PyErr_NoMemory();
    return -1;
  }
  return 0;
}

PyObject *tgpy_capture_close(tgpy_capture *c) {
  if (c->f) fclose(c->f);
  PyObject *s = PyUnicode_DecodeUTF8(c->text ? c->text : "", (Py_ssize_t)c->len, "replace");
  free(c->text);
  memset(c, 0, sizeof *c);
  return s;
}

static void on_sigint(int sig) {
  (void)sig;
  tg_stop_request();
  if (!sigint_seen) {
    static const char msg[] = "tickgrad: stopping at the end of this step with a checkpoint\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
  }
  sigint_seen = 1;
}

void tgpy_sigint_begin(tgpy_sigint *s) {
  tg_stop_clear();
  sigint_seen = 0;
  s->installed = 0;
  if (PyThread_get_thread_ident() != main_thread) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  s->installed = sigaction(SIGINT, &sa, &s->old) == 0;
}

int tgpy_sigint_end(tgpy_sigint *s) {
  if (s->installed) sigaction(SIGINT, &s->old, NULL);
  s->installed = 0;
  tg_stop_clear();
  return sigint_seen != 0;
}

/* threading.main_thread().ident, for tgpy_sigint_begin */
static int find_main_thread(void) {
  PyObject *threading = PyImport_ImportModule("threading");
  PyObject *t = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
  PyObject *id = t ? PyObject_GetAttrString(t, "ident") : NULL;
  if (id) main_thread = PyLong_AsUnsignedLong(id);
  Py_XDECREF(threading);
  Py_XDECREF(t);
  Py_XDECREF(id);
  return id && !PyErr_Occurred() ? 0 : -1;
}

static PyObject *py_version(PyObject *self, PyObject *args) {
  (void)self, (void)args;
  return PyUnicode_FromString(tg_version());
}

static PyMethodDef core_methods[] = {
    {"version", py_version, METH_NOARGS, "The library's version."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {PyModuleDef_HEAD_INIT, "_core",
                                         "The compiled core of tickgrad: thin calls into libtickgrad.", -1, NULL,
                                         NULL, NULL, NULL, NULL};

/* tickgrad.NAME(tgpy_Error, base): the class of a status. */
static int add_error(PyObject *m, const char *name, PyObject *base, const char *doc, PyObject **out) {
  char full[64];
  snprintf(full, sizeof full, "tickgrad.%s", name);
  PyObject *bases = base ? PyTuple_Pack(2, tgpy_Error, base) : PyTuple_Pack(1, tgpy_Error);
  if (!bases) return -1;
  PyObject *cls = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
  Py_DECREF(bases);
  if (!cls || PyModule_AddObjectRef(m, name, cls) < 0) return -1;
  *out = cls;
  return 0;
}

static int add_methods(PyObject *m, PyMethodDef *defs) {
  for (PyMethodDef *d = defs; d->ml_name; d++) {
    PyObject *f = PyCFunction_NewEx(d, NULL, PyModule_GetNameObject(m));
    if (!f || PyModule_AddObject(m, d->ml_name, f) < 0) return -1;
  }
  return 0;
}

PyMODINIT_FUNC PyInit__core(void) {
  PyObject *m = PyModule_Create(&core_module);
  if (!m) return NULL;
  tgpy_Error = PyErr_NewExceptionWithDoc("tickgrad.Error", "A failure reported by libtickgrad; the message is the library's.",
                                         NULL, NULL);
  if (!tgpy_Error || PyModule_AddObjectRef(m, "Error", tgpy_Error) < 0) goto fail;
  if (add_error(m, "InvalidError", PyExc_ValueError, "A bad argument, setting or call order (TG_ERR_INVALID).",
                &err_of[TG_ERR_INVALID]) < 0 ||
      add_error(m, "ShapeError", PyExc_ValueError, "Shapes or dtypes that do not fit (TG_ERR_SHAPE).",
                &err_of[TG_ERR_SHAPE]) < 0 ||
      add_error(m, "DeviceError", PyExc_RuntimeError, "A device that is missing or does not match (TG_ERR_DEVICE).",
                &err_of[TG_ERR_DEVICE]) < 0 ||
      add_error(m, "OutOfMemoryError", PyExc_MemoryError, "An allocation failed (TG_ERR_NOMEM).",
                &err_of[TG_ERR_NOMEM]) < 0 ||
      add_error(m, "FileError", PyExc_OSError, "A file could not be read or written (TG_ERR_IO).", &err_of[TG_ERR_IO]) < 0 ||
      add_error(m, "FormatError", PyExc_ValueError, "A malformed or truncated file (TG_ERR_FORMAT).",
                &err_of[TG_ERR_FORMAT]) < 0 ||
      add_error(m, "UnsupportedError", PyExc_NotImplementedError, "Not available in this build (TG_ERR_UNSUPPORTED).",
                &err_of[TG_ERR_UNSUPPORTED]) < 0 ||
      add_error(m, "NumericError", PyExc_ArithmeticError, "NaN or Inf where a finite number was needed (TG_ERR_NUMERIC).",
                &err_of[TG_ERR_NUMERIC]) < 0)
    goto fail;
  tgpy_Interrupted = PyErr_NewExceptionWithDoc(
      "tickgrad.Interrupted",
      "A run stopped by Ctrl-C (or another stop request) at the end of a step, with a checkpoint: its `run` attribute "
      "(when known) is the run folder, and Run(path).resume() continues it bitwise.",
      PyExc_KeyboardInterrupt, NULL);
  if (!tgpy_Interrupted || PyModule_AddObjectRef(m, "Interrupted", tgpy_Interrupted) < 0) goto fail;
  err_of[TG_ERR_INTERRUPTED] = tgpy_Interrupted;
  if (find_main_thread() < 0) goto fail;
  if (PyType_Ready(&tgpy_BarsType) < 0 || PyModule_AddObjectRef(m, "Bars", (PyObject *)&tgpy_BarsType) < 0) goto fail;
  if (add_methods(m, core_methods) < 0 || add_methods(m, tgpy_data_methods) < 0 ||
      add_methods(m, tgpy_ticks_methods) < 0 || add_methods(m, tgpy_train_methods) < 0 ||
      add_methods(m, tgpy_predict_methods) < 0 || add_methods(m, tgpy_backtest_methods) < 0 ||
      add_methods(m, tgpy_env_methods) < 0)
    goto fail;
  if (PyType_Ready(&tgpy_ArrayType) < 0) goto fail;
  if (tgpy_predict_types(m) < 0 || tgpy_backtest_types(m) < 0 || tgpy_env_types(m) < 0) goto fail;
  /* OpenBLAS chose its kernels when this module loaded; a process cannot take that back, so say how (the CLI re-runs) */
  const char *blas_core = tg_blas_fallback_core();
  if (blas_core &&
      PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                       "tickgrad: OpenBLAS fell back to its Prescott kernels on this CPU (a model it does not know), "
                       "so small products run several times slower; start Python with OPENBLAS_CORETYPE=%s",
                       blas_core) < 0)
    goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
