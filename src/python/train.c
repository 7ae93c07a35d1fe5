/* tickgrad._core: training runs of forecasters with the GIL released (the settings as `tickgrad train` builds them),
 * the library's log and progress bar on Python's sys.stdout / sys.stderr, per-epoch callbacks, safetensors files. */
#include "python/core.h"
#include <stdlib.h>
#include <string.h>

/* ---- metrics rows as metrics.csv has them ---- */

/* (header, row) of m as text: the exact columns and numbers of RUN/metrics.csv. */
static PyObject *metrics_text(const tg_train_metrics *m) {
  tgpy_capture h, r;
  if (tgpy_capture_open(&h) < 0) return NULL;
  if (tgpy_capture_open(&r) < 0) {
    Py_XDECREF(tgpy_capture_close(&h));
    return NULL;
  }
  tg_train_metrics_header(h.f, m->n_classes);
  tg_train_metrics_row(r.f, m);
  PyObject *hs = tgpy_capture_close(&h), *rs = tgpy_capture_close(&r);
  if (!hs || !rs) {
    Py_XDECREF(hs);
    Py_XDECREF(rs);
    return NULL;
  }
  return Py_BuildValue("(NN)", hs, rs);
}

/* on_epoch: fn(header, row) under the GIL; a true result stops the run, an exception is kept and stops it. */
typedef struct epoch_ctx {
  PyObject *fn;
  PyObject *exc_type, *exc_value, *exc_tb;
} epoch_ctx;

static int on_epoch(void *ctx, const tg_train_metrics *m, tg_store *store) {
  (void)store;
  epoch_ctx *x = ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  int stop = 1;
  if (!x->exc_type) {
    PyObject *args = metrics_text(m);
    PyObject *r = args ? PyObject_CallObject(x->fn, args) : NULL;
    Py_XDECREF(args);
    int truth = r ? PyObject_IsTrue(r) : -1;
    Py_XDECREF(r);
    if (truth < 0) PyErr_Fetch(&x->exc_type, &x->exc_value, &x->exc_tb);
    else stop = truth;
  }
  PyGILState_Release(g);
  return stop;
}

/* ---- the run ---- */

/* THE one place the long library call runs: the GIL is released for the whole of tg_train_run (the log and the
 * callbacks take it back while they run Python), Ctrl-C a stop request; *ctrl_c: 1 when one came. */
static tg_status train_released(const tg_train_config *c, const tg_bars *bars, tg_train_result *res, int *ctrl_c) {
  tg_status st;
  tgpy_sigint sig;
  tgpy_sigint_begin(&sig);
  Py_BEGIN_ALLOW_THREADS
  st = tg_train_run(c, bars, res);
  Py_END_ALLOW_THREADS
  *ctrl_c = tgpy_sigint_end(&sig);
  return st;
}

/* The Python keyword of a flag ("--seq-len" -> "seq_len") as a prefix for messages. */
static void keyword_of(const char *flag, char *out, size_t n) {
  snprintf(out, n, "%s", strncmp(flag, "--", 2) == 0 ? flag + 2 : flag);
  for (char *p = out; *p; p++)
    if (*p == '-') *p = '_';
}

/* The flags (list of (flag, value) str pairs) over c, in order. */
static int apply_flags(tg_train_config *c, PyObject *pairs) {
  Py_ssize_t n = PyList_GET_SIZE(pairs);
  for (Py_ssize_t i = 0; i < n; i++) {
    const char *flag, *value;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(pairs, i), "ss", &flag, &value)) return -1;
    if (tg_train_config_set_flag(c, flag, value) != TG_OK) {
      char kw[96];
      keyword_of(flag, kw, sizeof kw);
      tgpy_raise(TG_ERR_INVALID, kw);
      return -1;
    }
  }
  return 0;
}

int tgpy_train_config_new(tg_train_config *c, const char *model, const char *config, PyObject *pairs, PyObject *data,
                      int have_bars) {
  tg_model_kind kind = tg_model_default_kind();
  if (model && tg_train_model_parse(model, &kind) != TG_OK) {
    tgpy_raise(TG_ERR_INVALID, "model");
    return -1;
  }
  char *text = NULL;
  size_t len = 0;
  if (config) {
    tg_train_config probe = tg_train_defaults(kind);
    tg_status st = tg_train_config_load(config, &probe);
    if (st != TG_OK) {
      tgpy_raise(st, "config");
      return -1;
    }
    if (!model) kind = probe.model.kind;
    FILE *f = fopen(config, "rb");
    if (f) {
      fseek(f, 0, SEEK_END);
      long nb = ftell(f);
      fseek(f, 0, SEEK_SET);
      text = nb >= 0 ? malloc((size_t)nb + 1) : NULL;
      len = text ? fread(text, 1, (size_t)nb, f) : 0;
      fclose(f);
    }
  } else if (!model) {
    char names[256];
    tg_model_list(names, sizeof names, ", ", " or ");
    PyErr_Format(PyExc_ValueError, "model: which model? give %s (or \"model\" in config)", names);
    return -1;
  }
  *c = tg_train_defaults(kind);
  tg_status st = text ? tg_train_config_apply_json(c, text, len, config) : TG_OK;
  free(text);
  if (st != TG_OK) {
    tgpy_raise(st, "config");
    return -1;
  }
  c->model.kind = kind;
  if (apply_flags(c, pairs) < 0) return -1;
  if (data != Py_None || have_bars) c->n_data = 0; /* a frame: config.json records no paths */
  if (data != Py_None) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(data); i++) {
      const char *p = PyUnicode_AsUTF8(PyList_GET_ITEM(data, i));
      if (!p) return -1;
      if (tg_train_config_set(c, "data", p) != TG_OK) {
        tgpy_raise(TG_ERR_INVALID, "data");
        return -1;
      }
    }
  }
  if (c->n_data == 0 && !have_bars) {
    PyErr_SetString(PyExc_ValueError, "data: no data: give data= (a DataFrame, a path or paths) or \"data\" in config");
    return -1;
  }
  if (tg_train_config_check(c) != TG_OK) {
    tgpy_raise(TG_ERR_INVALID, NULL);
    return -1;
  }
  return 0;
}

/* A resumed run, as `tickgrad train --resume RUN`: RUN/config.json with only device and threads on top. */
static int config_resume(tg_train_config *c, const char *run, PyObject *pairs) {
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(pairs); i++) {
    const char *flag = PyUnicode_AsUTF8(PyTuple_GetItem(PyList_GET_ITEM(pairs, i), 0));
    if (!flag) return -1;
    if (strcmp(flag, "--device") != 0 && strcmp(flag, "--threads") != 0) {
      char kw[96];
      keyword_of(flag, kw, sizeof kw);
      PyErr_Format(PyExc_ValueError, "%s: resume keeps the run's settings; only device, threads and stop_after may "
                   "change", kw);
      return -1;
    }
  }
  char path[TG_TRAIN_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/config.json", run);
  *c = tg_train_defaults(tg_model_default_kind());
  tg_status st = tg_train_config_load(path, c);
  if (st != TG_OK) {
    tgpy_raise(st, "resume");
    return -1;
  }
  if (apply_flags(c, pairs) < 0) return -1;
  snprintf(c->resume, sizeof c->resume, "%s", run);
  return 0;
}

static PyObject *result_dict(const tg_train_result *r, int ctrl_c) {
  PyObject *last = r->epochs_run > 0 ? metrics_text(&r->last) : (Py_INCREF(Py_None), Py_None);
  PyObject *best = r->best_epoch > 0 ? metrics_text(&r->best) : (Py_INCREF(Py_None), Py_None);
  if (!last || !best) {
    Py_XDECREF(last);
    Py_XDECREF(best);
    return NULL;
  }
  return Py_BuildValue("{s:s,s:i,s:i,s:O,s:L,s:L,s:L,s:N,s:N,s:O,s:O}", "out", r->out, "epochs_run", r->epochs_run,
                       "best_epoch", r->best_epoch, "stopped_early", r->stopped_early ? Py_True : Py_False, "steps",
                       (long long)r->steps, "train_windows", (long long)r->train_windows, "val_windows",
                       (long long)r->val_windows, "last", last, "best", best, "interrupted",
                       r->interrupted ? Py_True : Py_False, "ctrl_c", ctrl_c ? Py_True : Py_False);
}

/* train(model, config, pairs, data, bars, resume, stop_after, log, progress, on_epoch) -> result dict.
 * model/config/resume: str or None; pairs: [(flag, value)]; data: [path] or None; bars: Bars or None. */
static PyObject *py_train(PyObject *self, PyObject *args) {
  (void)self;
  const char *model, *config, *resume;
  PyObject *pairs, *data, *bars_obj, *fn;
  int stop_after, log, progress;
  if (!PyArg_ParseTuple(args, "zzO!OOzippO", &model, &config, &PyList_Type, &pairs, &data, &bars_obj, &resume,
                        &stop_after, &log, &progress, &fn))
    return NULL;
  if (data != Py_None && !PyList_Check(data)) return PyErr_Format(PyExc_TypeError, "data: want a list of paths");
  const tg_bars *bars = NULL;
  if (bars_obj != Py_None && !(bars = tgpy_bars_of(bars_obj, "data"))) return NULL;
  if (fn != Py_None && !PyCallable_Check(fn)) return PyErr_Format(PyExc_TypeError, "on_epoch: want a callable");
  if (stop_after < 0 || stop_after > 1000000)
    return PyErr_Format(PyExc_ValueError, "stop_after: want 1..1000000 epochs, got %d", stop_after);
  tg_train_config *c = PyMem_Calloc(1, sizeof *c);
  if (!c) return PyErr_NoMemory();
  PyObject *out = NULL;
  FILE *logf = NULL, *barf = NULL;
  if ((resume ? config_resume(c, resume, pairs) : tgpy_train_config_new(c, model, config, pairs, data, bars != NULL)) < 0) goto done;
  tg_device dev;
  tg_status dst = tg_device_choose(c->device, &dev, NULL, 0);
  if (dst != TG_OK) {
    char what[64];
    snprintf(what, sizeof what, "device %s", c->device);
    tgpy_raise(dst, what);
    goto done;
  }
  if ((log && !(logf = tgpy_py_file("stdout", NULL))) || (progress && !(barf = tgpy_py_file("stderr", NULL)))) goto done;
  epoch_ctx x = {fn, NULL, NULL, NULL};
  c->stop_after = stop_after;
  c->log = logf;
  c->progress = barf;
  if (fn != Py_None) {
    c->on_epoch = on_epoch;
    c->on_epoch_ctx = &x;
  }
  tg_train_result res;
  memset(&res, 0, sizeof res);
  int ctrl_c = 0;
  tg_status st = train_released(c, bars, &res, &ctrl_c);
  char err[2048];
  snprintf(err, sizeof err, "%s", tg_last_error());
  if (logf) fflush(logf);
  if (barf) fflush(barf);
  if (x.exc_type) {
    PyErr_Restore(x.exc_type, x.exc_value, x.exc_tb); /* the callback's exception, after the library returned */
  } else if (st != TG_OK) {
    const char *why = strncmp(err, "train: ", 7) == 0 ? err + 7 : err;
    tg_error(st, "%s", why);
    tgpy_raise(st, NULL);
  } else {
    out = result_dict(&res, ctrl_c);
  }
done:
  if (logf) fclose(logf);
  if (barf) fclose(barf);
  PyMem_Free(c);
  return out;
}

/* The tuple of names of a NULL-terminated list (an enum's), or of the models in a bit mask. */
static PyObject *names_tuple(const char *const *names) {
  Py_ssize_t n = 0;
  while (names[n]) n++;
  PyObject *t = PyTuple_New(n);
  for (Py_ssize_t k = 0; t && k < n; k++) {
    PyObject *v = PyUnicode_FromString(names[k]);
    if (!v) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, k, v);
  }
  return t;
}

/* model_names() -> ("tft", "mamba2", ...): the model table's kinds in their order (tg_model_count, tg_model_name). */
static PyObject *py_model_names(PyObject *self, PyObject *args) {
  (void)self, (void)args;
  PyObject *t = PyTuple_New(tg_model_count());
  for (int k = 0; t && k < tg_model_count(); k++) {
    const char *name = tg_model_name((tg_model_kind)k);
    PyObject *v = PyUnicode_FromString(name ? name : "");
    if (!v) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, k, v);
  }
  return t;
}

/* train_settings() -> [dict per row of the training settings table (tg_train_setting_get), in --help's order]: key,
 * flag, type, arg, lo, hi (None without a range), lo_open, hi_open, increasing, min_n, max_n, choices (an enum's names,
 * else None), models (the names of the models it applies to; () for every model), resumable, help, default. */
static PyObject *py_train_settings(PyObject *self, PyObject *args) {
  (void)self, (void)args;
  PyObject *list = PyList_New(0);
  for (int i = 0; list && i < tg_train_setting_count(); i++) {
    tg_train_setting_info r;
    if (tg_train_setting_get(i, &r) != TG_OK) {
      Py_DECREF(list);
      return tgpy_raise(TG_ERR_INVALID, NULL);
    }
    const char *models[33];
    int nm = 0;
    for (int k = 0; k < tg_model_count() && k < 32; k++)
      if (r.models & (1u << k)) models[nm++] = tg_model_name((tg_model_kind)k);
    models[nm] = NULL;
    PyObject *mt = names_tuple(models);
    PyObject *choices = r.names ? names_tuple(r.names) : Py_NewRef(Py_None);
    PyObject *lo = r.has_range ? PyFloat_FromDouble(r.lo) : Py_NewRef(Py_None);
    PyObject *hi = r.has_range ? PyFloat_FromDouble(r.hi) : Py_NewRef(Py_None);
    PyObject *d = mt && choices && lo && hi
                      ? Py_BuildValue("{s:s,s:s,s:s,s:s,s:O,s:O,s:O,s:O,s:O,s:i,s:i,s:O,s:O,s:O,s:s,s:s}", "key", r.key,
                                      "flag", r.flag, "type", r.type, "arg", r.arg, "lo", lo, "hi", hi, "lo_open",
                                      r.lo_open ? Py_True : Py_False, "hi_open", r.hi_open ? Py_True : Py_False,
                                      "increasing", r.increasing ? Py_True : Py_False, "min_n", r.min_n, "max_n",
                                      r.max_n, "choices", choices, "models", mt, "resumable",
                                      r.resumable ? Py_True : Py_False, "help", r.help, "default", r.def)
                      : NULL;
    Py_XDECREF(mt);
    Py_XDECREF(choices);
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    if (!d || PyList_Append(list, d) < 0) Py_CLEAR(list);
    Py_XDECREF(d);
  }
  return list;
}

/* train_flag_known(flag) -> bool */
static PyObject *py_train_flag_known(PyObject *self, PyObject *arg) {
  (void)self;
  const char *flag = PyUnicode_AsUTF8(arg);
  if (!flag) return NULL;
  return PyBool_FromLong(tg_train_flag_known(flag));
}

/* ---- safetensors files through the library's reader ---- */

static void safetensors_free(PyObject *capsule) {
  tg_safetensors_free(PyCapsule_GetPointer(capsule, "tickgrad.safetensors"));
}

/* export_run(run, format, out, weights) -> None: tg_run_export with the GIL released. */
static PyObject *py_export_run(PyObject *self, PyObject *args) {
  (void)self;
  const char *run, *format, *out, *weights;
  if (!PyArg_ParseTuple(args, "ssss", &run, &format, &out, &weights)) return NULL;
  tg_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tg_run_export(run, format, out, weights);
  Py_END_ALLOW_THREADS
  if (st != TG_OK) return tgpy_raise(st, NULL);
  Py_RETURN_NONE;
}

/* read_safetensors(path) -> {name: Array} viewing the file's bytes (f32 "f", i32 "i", i64 "q", bf16 raw "H"). */
static PyObject *py_read_safetensors(PyObject *self, PyObject *arg) {
  (void)self;
  const char *path = PyUnicode_AsUTF8(arg);
  if (!path) return NULL;
  tg_safetensors *f = NULL;
  tg_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tg_safetensors_load(path, &f);
  Py_END_ALLOW_THREADS
  if (st != TG_OK) return tgpy_raise(st, NULL);
  PyObject *owner = PyCapsule_New(f, "tickgrad.safetensors", safetensors_free);
  if (!owner) {
    tg_safetensors_free(f);
    return NULL;
  }
  PyObject *d = PyDict_New();
  for (int i = 0; d && i < tg_safetensors_count(f); i++) {
    const tg_tensor *t = tg_safetensors_at(f, i);
    static const char *const FORMAT[] = {"f", "i", "q", "H"}; /* tg_dtype's order */
    Py_ssize_t shape[TG_MAX_DIMS];
    for (int k = 0; k < t->ndim; k++) shape[k] = (Py_ssize_t)t->shape[k];
    PyObject *a = (int)t->dtype >= 0 && t->dtype < TG_DTYPE_COUNT
                      ? tgpy_array(owner, t->data, FORMAT[t->dtype], (Py_ssize_t)tg_dtype_size(t->dtype), t->ndim,
                                   shape, 1)
                      : PyErr_Format(PyExc_ValueError, "%s: tensor %s has an unknown dtype", path, t->name);
    if (!a || PyDict_SetItemString(d, t->name, a) < 0) Py_CLEAR(d);
    Py_XDECREF(a);
  }
  Py_DECREF(owner);
  return d;
}

/* evaluate(run, bars or None, last, device or None) -> the library's log text: tg_evaluate, RUN/evaluation.json written. */
static PyObject *py_evaluate(PyObject *self, PyObject *args) {
  (void)self;
  const char *run, *device = NULL;
  PyObject *bars_obj;
  int last = 0;
  if (!PyArg_ParseTuple(args, "sOpz", &run, &bars_obj, &last, &device)) return NULL;
  const tg_bars *bars = bars_obj == Py_None ? NULL : tgpy_bars_of(bars_obj, "data");
  if (bars_obj != Py_None && !bars) return NULL;
  tg_evaluation *e = PyMem_RawMalloc(sizeof *e); /* large, and the GIL is released while it is filled */
  if (!e) return PyErr_NoMemory();
  tgpy_capture cap;
  if (tgpy_capture_open(&cap) < 0) {
    PyMem_RawFree(e);
    return NULL;
  }
  tg_eval_opts o = {.run = run, .last = last, .bars = bars, .device = device, .log = cap.f};
  tg_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tg_evaluate(&o, e);
  Py_END_ALLOW_THREADS
  PyMem_RawFree(e);
  PyObject *text = tgpy_capture_close(&cap);
  if (st != TG_OK) {
    Py_XDECREF(text);
    return tgpy_raise(st, NULL);
  }
  return text;
}

PyMethodDef tgpy_train_methods[] = {
    {"evaluate", py_evaluate, METH_VARARGS,
     "evaluate(run, bars, last, device) -> log text: every split scored, RUN/evaluation.json written"},
    {"train", py_train, METH_VARARGS,
     "train(model, config, pairs, data, bars, resume, stop_after, log, progress, on_epoch) -> result dict"},
    {"train_settings", py_train_settings, METH_NOARGS,
     "The training settings table: a dict per row (key, flag, type, range, models, help, default), in --help's order."},
    {"model_names", py_model_names, METH_NOARGS, "The model table's kinds in their order."},
    {"train_flag_known", py_train_flag_known, METH_O, "Whether a flag (\"--lr\") names a training setting."},
    {"export_run", py_export_run, METH_VARARGS, "export_run(run, format, out, weights): tg_run_export."},
    {"read_safetensors", py_read_safetensors, METH_O, "A safetensors file as {name: Array} (the library's reader)."},
    {NULL, NULL, 0, NULL},
};
