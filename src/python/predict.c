/* tickgrad._core: a run's predictor, bar by bar or over a series. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "python/core.h"

typedef struct tgpy_predictor {
  PyObject_HEAD
  tg_predictor *p;
  double *in_num;      /* [n_num_inputs] push's numeric inputs */
  const char **in_cat; /* [n_inputs - n_num_inputs] push's category names */
} tgpy_predictor;

static void predictor_dealloc(PyObject *self) {
  tgpy_predictor *o = (tgpy_predictor *)self;
  tg_predictor_free(o->p);
  free(o->in_num);
  free(o->in_cat);
  Py_TYPE(self)->tp_free(self);
}

/* Predictor(run: str, weights: str): tg_predictor_open. */
static int predictor_init(PyObject *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"run", "weights", NULL};
  tgpy_predictor *o = (tgpy_predictor *)self;
  const char *run, *weights = "best";
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s|s", names, &run, &weights)) return -1;
  if (o->p) {
    PyErr_SetString(PyExc_RuntimeError, "Predictor: already open");
    return -1;
  }
  tg_predictor_opts po = {.weights = weights};
  tg_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tg_predictor_open(run, &po, &o->p);
  Py_END_ALLOW_THREADS
  if (st != TG_OK) {
    tgpy_raise(st, NULL);
    return -1;
  }
  const tg_predictor_info *in = tg_predictor_get_info(o->p);
  o->in_num = calloc((size_t)(in->n_num_inputs ? in->n_num_inputs : 1), sizeof(double));
  o->in_cat = calloc((size_t)(in->n_inputs - in->n_num_inputs ? in->n_inputs - in->n_num_inputs : 1), sizeof(char *));
  if (!o->in_num || !o->in_cat) {
    PyErr_NoMemory();
    return -1;
  }
  return 0;
}

static tg_predictor *open_of(PyObject *self) {
  tg_predictor *p = ((tgpy_predictor *)self)->p;
  if (!p) PyErr_SetString(PyExc_RuntimeError, "Predictor: not open");
  return p;
}

/* A float as the shortest decimal that reads back as the same float (0.1f -> 0.1, not 0.10000000149). */
static PyObject *float32_value(float v) {
  char buf[32];
  for (int digits = 6; digits <= 9; digits++) {
    snprintf(buf, sizeof buf, "%.*g", digits, (double)v);
    if ((float)strtod(buf, NULL) == v) break;
  }
  return PyFloat_FromDouble(strtod(buf, NULL));
}

static const char *kind_name(tg_model_kind k) {
  const char *n = tg_train_model_name(k);
  return n ? n : "?";
}

/* info() -> dict: the run's tg_predictor_info. */
static PyObject *predictor_info(PyObject *self, PyObject *unused) {
  (void)unused;
  tg_predictor *p = open_of(self);
  if (!p) return NULL;
  const tg_predictor_info *in = tg_predictor_get_info(p);
  PyObject *q = PyList_New(in->nq), *classes = PyList_New(in->n_classes), *ids = PyList_New(in->k),
           *inputs = PyList_New(in->n_inputs), *d = NULL;
  if (!q || !classes || !ids || !inputs) goto done;
  for (int i = 0; i < in->nq; i++) PyList_SET_ITEM(q, i, float32_value(in->q[i]));
  for (int i = 0; i < in->n_classes; i++) PyList_SET_ITEM(classes, i, PyUnicode_FromString(in->classes[i]));
  for (int i = 0; i < in->k; i++) PyList_SET_ITEM(ids, i, PyLong_FromUnsignedLong(in->ids[i]));
  for (int i = 0; i < in->n_inputs; i++) PyList_SET_ITEM(inputs, i, PyUnicode_FromString(in->input_names[i]));
  d = Py_BuildValue("{s:s,s:i,s:O,s:O,s:i,s:i,s:i,s:L,s:L,s:s,s:O,s:O,s:i,s:s}", "kind", kind_name(in->kind),
                    "horizons", in->horizons, "quantiles", q, "classes", classes, "n_features", in->n_features,
                    "warmup", in->warmup, "window", in->window, "first_bar", (long long)in->first_bar, "bar_ns",
                    (long long)in->bar_ns, "precision", tg_precision_name(in->precision), "instruments", ids, "inputs",
                    inputs, "n_num_inputs", in->n_num_inputs, "run", in->run);
done:
  Py_XDECREF(q);
  Py_XDECREF(classes);
  Py_XDECREF(ids);
  Py_XDECREF(inputs);
  return d;
}

/* push(ts, instrument, open, high, low, close, volume, numbers, names, out) -> bool: one bar (numbers: a sequence of
 * the run's numeric inputs, names: of its category inputs, str or None); out: a writable float32 array of
 * tg_predictor_out_len floats receives the forecast (NaN in warm-up). True when it is ready. */
static PyObject *predictor_push(PyObject *self, PyObject *args) {
  tgpy_predictor *o = (tgpy_predictor *)self;
  tg_predictor *p = open_of(self);
  if (!p) return NULL;
  const tg_predictor_info *in = tg_predictor_get_info(p);
  long long ts;
  unsigned long inst;
  tg_pbar b;
  PyObject *nums, *cats, *out;
  if (!PyArg_ParseTuple(args, "LkdddddOOO", &ts, &inst, &b.open, &b.high, &b.low, &b.close, &b.volume, &nums, &cats,
                        &out))
    return NULL;
  if (inst > 0xFFFFFFFFul) return PyErr_Format(PyExc_ValueError, "instrument: %lu is not a uint32 id", inst);
  b.ts = ts;
  b.instrument = (uint32_t)inst;
  int n_num = in->n_num_inputs, n_cat = in->n_inputs - in->n_num_inputs;
  PyObject *ns = PySequence_Fast(nums, "numbers: want a sequence");
  if (!ns) return NULL;
  PyObject *cs = PySequence_Fast(cats, "names: want a sequence");
  if (!cs) {
    Py_DECREF(ns);
    return NULL;
  }
  PyObject *res = NULL;
  Py_buffer view = {0};
  if (PySequence_Fast_GET_SIZE(ns) != n_num || PySequence_Fast_GET_SIZE(cs) != n_cat) {
    PyErr_Format(PyExc_ValueError, "push: the run reads %d numeric and %d category inputs, got %zd and %zd", n_num,
                 n_cat, PySequence_Fast_GET_SIZE(ns), PySequence_Fast_GET_SIZE(cs));
    goto done;
  }
  for (int i = 0; i < n_num; i++) {
    PyObject *v = PySequence_Fast_GET_ITEM(ns, i);
    o->in_num[i] = v == Py_None ? NAN : PyFloat_AsDouble(v);
    if (o->in_num[i] == -1.0 && PyErr_Occurred()) goto done;
  }
  for (int i = 0; i < n_cat; i++) { /* the strs stay alive in cs until the push is done */
    PyObject *v = PySequence_Fast_GET_ITEM(cs, i);
    o->in_cat[i] = v == Py_None ? NULL : PyUnicode_AsUTF8(v);
    if (v != Py_None && !o->in_cat[i]) goto done;
  }
  b.inputs = n_num ? o->in_num : NULL;
  b.cats = n_cat ? o->in_cat : NULL;
  if (tgpy_buffer(out, "out", "f", 1, 1, &view) < 0) goto done;
  if (view.len / (Py_ssize_t)sizeof(float) != tg_predictor_out_len(in)) {
    PyErr_Format(PyExc_ValueError, "out: want %d floats, got %zd", tg_predictor_out_len(in), view.len / 4);
    goto done;
  }
  int ready = 0;
  tg_status st = tg_predictor_push(p, &b, (float *)view.buf, &ready); /* one bar: no reason to drop the GIL */
  if (st != TG_OK) tgpy_raise(st, NULL);
  else res = PyBool_FromLong(ready);
done:
  if (view.obj) PyBuffer_Release(&view);
  Py_DECREF(ns);
  Py_DECREF(cs);
  return res;
}

static PyObject *predictor_reset(PyObject *self, PyObject *unused) {
  (void)unused;
  tg_predictor *p = open_of(self);
  if (!p) return NULL;
  tg_predictor_reset(p);
  Py_RETURN_NONE;
}

/* features() -> Array | None: a copy of the normalised feature row of the last push (tg_predictor_features). */
static PyObject *predictor_features(PyObject *self, PyObject *unused) {
  (void)unused;
  tg_predictor *p = open_of(self);
  if (!p) return NULL;
  const float *x = tg_predictor_features(p);
  if (!x) Py_RETURN_NONE;
  Py_ssize_t F = tg_predictor_get_info(p)->n_features;
  return PyBytes_FromStringAndSize((const char *)x, F * (Py_ssize_t)sizeof(float));
}

/* raw_features() -> bytes | None: the same row before normalisation (tg_predictor_raw_features). */
static PyObject *predictor_raw_features(PyObject *self, PyObject *unused) {
  (void)unused;
  tg_predictor *p = open_of(self);
  if (!p) return NULL;
  const float *x = tg_predictor_raw_features(p);
  if (!x) Py_RETURN_NONE;
  Py_ssize_t F = tg_predictor_get_info(p)->n_features;
  return PyBytes_FromStringAndSize((const char *)x, F * (Py_ssize_t)sizeof(float));
}

/* future() -> bytes | None: the decoder rows of the last window (tg_predictor_future). */
static PyObject *predictor_future(PyObject *self, PyObject *unused) {
  (void)unused;
  tg_predictor *p = open_of(self);
  if (!p) return NULL;
  int nf = 0;
  const float *f = tg_predictor_future(p, &nf);
  if (!f) Py_RETURN_NONE;
  Py_ssize_t H = tg_predictor_get_info(p)->horizons;
  return PyBytes_FromStringAndSize((const char *)f, H * nf * (Py_ssize_t)sizeof(float));
}

static void free_capsule(PyObject *cap) { free(PyCapsule_GetPointer(cap, "tickgrad.buffer")); }

/* A malloc'ed block owned by a capsule that frees it (the owner of the arrays made over it). */
static PyObject *owned_block(size_t bytes, void **out) {
  void *mem = malloc(bytes ? bytes : 1);
  if (!mem) return PyErr_NoMemory();
  PyObject *cap = PyCapsule_New(mem, "tickgrad.buffer", free_capsule);
  if (!cap) free(mem);
  else *out = mem;
  return cap;
}

/* predict(bars) -> (Array float32 [n, out_len], Array uint8 [n] ready): every bar of bars in order through
 * tg_predictor_bar_at (leads from later rows, as `tickgrad predict --data`) and push, the GIL released; the predictor
 * is reset first. One block the library fills; the arrays view it. */
static PyObject *predictor_predict(PyObject *self, PyObject *arg) {
  tg_predictor *p = open_of(self);
  if (!p) return NULL;
  const tg_bars *bars = tgpy_bars_of(arg, "data");
  if (!bars) return NULL;
  const tg_predictor_info *in = tg_predictor_get_info(p);
  int64_t n = bars->n, w = tg_predictor_out_len(in);
  void *mem = NULL;
  size_t fbytes = (size_t)n * (size_t)w * sizeof(float);
  PyObject *owner = owned_block(fbytes + (size_t)n, &mem);
  if (!owner) return NULL;
  float *pred = mem;
  uint8_t *ready = (uint8_t *)mem + fbytes;
  tg_status st = TG_OK;
  int64_t i = 0;
  Py_INCREF(arg); /* the bars outlive the loop */
  Py_BEGIN_ALLOW_THREADS
  tg_predictor_reset(p);
  for (; i < n && st == TG_OK; i++) {
    tg_pbar b;
    int r = 0;
    st = tg_predictor_bar_at(p, bars, i, 1, &b);
    if (st == TG_OK) st = tg_predictor_push(p, &b, pred + i * w, &r);
    ready[i] = (uint8_t)r;
  }
  Py_END_ALLOW_THREADS
  Py_DECREF(arg);
  if (st != TG_OK) {
    Py_DECREF(owner);
    char where[320];
    snprintf(where, sizeof where, "%s, bar %lld", bars->source, (long long)i);
    return tgpy_raise(st, where);
  }
  Py_ssize_t s2[2] = {(Py_ssize_t)n, (Py_ssize_t)w}, s1[1] = {(Py_ssize_t)n};
  PyObject *a = tgpy_array(owner, pred, "f", sizeof(float), 2, s2, 0);
  PyObject *r = tgpy_array(owner, ready, "B", 1, 1, s1, 1);
  Py_DECREF(owner);
  if (!a || !r) {
    Py_XDECREF(a);
    Py_XDECREF(r);
    return NULL;
  }
  return Py_BuildValue("(NN)", a, r);
}

static PyObject *predictor_close(PyObject *self, PyObject *unused) {
  (void)unused;
  tgpy_predictor *o = (tgpy_predictor *)self;
  tg_predictor_free(o->p);
  o->p = NULL;
  Py_RETURN_NONE;
}

static PyMethodDef predictor_methods[] = {
    {"info", predictor_info, METH_NOARGS, "info() -> dict: the run's kind, horizons, quantiles, classes, ..."},
    {"push", predictor_push, METH_VARARGS,
     "push(ts, instrument, open, high, low, close, volume, numbers, names, out) -> bool: one bar; out (float32) "
     "receives the forecast; True once it is ready."},
    {"reset", predictor_reset, METH_NOARGS, "reset(): forget every bar."},
    {"future", predictor_future, METH_NOARGS,
     "future() -> bytes | None: the float32 decoder rows [horizons, n_future] of the last window (a tft)."},
    {"raw_features", predictor_raw_features, METH_NOARGS,
     "raw_features() -> bytes | None: the float32 feature row of the last push before normalisation."},
    {"features", predictor_features, METH_NOARGS,
     "features() -> bytes | None: the float32 normalised feature row of the last push (None when it made none)."},
    {"predict", predictor_predict, METH_O,
     "predict(bars) -> (forecasts float32 [n, out_len], ready uint8 [n]): every bar in order, from a reset."},
    {"close", predictor_close, METH_NOARGS, "close(): free the predictor now."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PredictorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tickgrad._core.Predictor",
    .tp_basicsize = sizeof(tgpy_predictor),
    .tp_dealloc = predictor_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Predictor(run, weights='best'): a forecaster run opened by tg_predictor_open.",
    .tp_methods = predictor_methods,
    .tp_init = predictor_init,
    .tp_new = PyType_GenericNew,
};

PyMethodDef tgpy_predict_methods[] = {
    {NULL, NULL, 0, NULL},
};

int tgpy_predict_types(PyObject *m) {
  if (PyType_Ready(&PredictorType) < 0) return -1;
  return PyModule_AddObjectRef(m, "Predictor", (PyObject *)&PredictorType);
}
