/* Arrays over library memory (the buffer protocol, no copy) and buffers of Python arrays checked by format and rank. */
#include <string.h>
#include "python/core.h"

#define MAX_DIMS 4

typedef struct tgpy_array_obj {
  PyObject_HEAD
  PyObject *owner;   /* keeps data alive */
  void *data;
  char format[4];
  Py_ssize_t itemsize;
  int ndim, readonly;
  Py_ssize_t shape[MAX_DIMS], strides[MAX_DIMS];
} tgpy_array_obj;

static int array_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  tgpy_array_obj *a = (tgpy_array_obj *)self;
  if ((flags & PyBUF_WRITABLE) && a->readonly) {
    PyErr_SetString(PyExc_BufferError, "this tickgrad array is read-only");
    return -1;
  }
  Py_ssize_t len = a->itemsize;
  for (int d = 0; d < a->ndim; d++) len *= a->shape[d];
  view->obj = Py_NewRef(self);
  view->buf = a->data;
  view->len = len;
  view->readonly = a->readonly;
  view->itemsize = a->itemsize;
  view->format = (flags & PyBUF_FORMAT) ? a->format : NULL;
  view->ndim = a->ndim;
  view->shape = (flags & PyBUF_ND) ? a->shape : NULL;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? a->strides : NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  return 0;
}

static void array_dealloc(PyObject *self) {
  tgpy_array_obj *a = (tgpy_array_obj *)self;
  Py_XDECREF(a->owner);
  Py_TYPE(self)->tp_free(self);
}

static PyBufferProcs array_buffer = {array_getbuffer, NULL};

PyTypeObject tgpy_ArrayType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tickgrad._core.Array",
    .tp_basicsize = sizeof(tgpy_array_obj),
    .tp_dealloc = array_dealloc,
    .tp_as_buffer = &array_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Library memory exported through the buffer protocol (numpy.asarray views it without a copy).",
};

PyObject *tgpy_array(PyObject *owner, void *data, const char *format, Py_ssize_t itemsize, int ndim,
                     const Py_ssize_t *shape, int readonly) {
  if (ndim < 0 || ndim > MAX_DIMS) return PyErr_Format(PyExc_SystemError, "tickgrad: array of %d dims", ndim);
  tgpy_array_obj *a = PyObject_New(tgpy_array_obj, &tgpy_ArrayType);
  if (!a) return NULL;
  a->owner = Py_XNewRef(owner);
  static char empty[8];
  a->data = data ? data : empty; /* a zero-length array still needs a pointer */
  snprintf(a->format, sizeof a->format, "%s", format);
  a->itemsize = itemsize;
  a->ndim = ndim;
  a->readonly = readonly;
  Py_ssize_t stride = itemsize;
  for (int d = ndim - 1; d >= 0; d--) {
    a->shape[d] = shape[d];
    a->strides[d] = stride;
    stride *= shape[d];
  }
  return (PyObject *)a;
}

/* "<d", "=d" and "d" are the same item here (native order). */
static const char *item_code(const char *f) {
  if (!f) return "B";
  if (*f == '<' || *f == '=' || *f == '@') f++;
  return f;
}

/* format codes that mean the same item on this platform */
static int same_item(const char *got, const char *want) {
  got = item_code(got);
  if (strcmp(got, want) == 0) return 1;
  if (strcmp(want, "q") == 0) return strcmp(got, "l") == 0 && sizeof(long) == 8;
  if (strcmp(want, "I") == 0) return strcmp(got, "L") == 0 && sizeof(long) == 4;
  if (strcmp(want, "i") == 0) return strcmp(got, "l") == 0 && sizeof(long) == 4;
  return 0;
}

int tgpy_buffer(PyObject *obj, const char *arg, const char *format, int ndim, int writable, Py_buffer *view) {
  int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj, view, flags) < 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: want a C-contiguous%s array of '%s' items, got %s", arg,
                 writable ? " writable" : "", format, Py_TYPE(obj)->tp_name);
    return -1;
  }
  if (!same_item(view->format, format)) {
    PyErr_Format(PyExc_TypeError, "%s: want items of type code '%s', got '%s'", arg, format, item_code(view->format));
    PyBuffer_Release(view);
    return -1;
  }
  if (ndim >= 0 && view->ndim != ndim) {
    PyErr_Format(PyExc_ValueError, "%s: want %d dimension%s, got %d", arg, ndim, ndim == 1 ? "" : "s", view->ndim);
    PyBuffer_Release(view);
    return -1;
  }
  return 0;
}
