/* tickgrad._core.Bars: a bar series read by the library's readers or built from arrays; its columns as arrays; inspect. */
#include <string.h>
#include "python/core.h"

static void bars_dealloc(PyObject *self) {
  tg_bars_free(&((tgpy_bars *)self)->b);
  Py_TYPE(self)->tp_free(self);
}

PyObject *tgpy_bars_new(void) {
  tgpy_bars *o = PyObject_New(tgpy_bars, &tgpy_BarsType);
  if (o) tg_bars_init(&o->b);
  return (PyObject *)o;
}

const tg_bars *tgpy_bars_of(PyObject *obj, const char *arg) {
  if (!PyObject_TypeCheck(obj, &tgpy_BarsType)) {
    PyErr_Format(PyExc_TypeError, "%s: want tickgrad._core.Bars, got %s", arg, Py_TYPE(obj)->tp_name);
    return NULL;
  }
  return &((tgpy_bars *)obj)->b;
}

static PyObject *f64(PyObject *self, double *p, int64_t n) {
  Py_ssize_t shape[1] = {(Py_ssize_t)n};
  return tgpy_array(self, p, "d", sizeof(double), 1, shape, 0);
}

/* Bars.field(name): ts (int64 ns UTC), open..volume (float64), instrument (uint32 or None): arrays, no copy. */
static PyObject *bars_field(PyObject *self, PyObject *arg) {
  tg_bars *b = &((tgpy_bars *)self)->b;
  const char *name = PyUnicode_AsUTF8(arg);
  if (!name) return NULL;
  Py_ssize_t shape[1] = {(Py_ssize_t)b->n};
  if (!strcmp(name, "ts")) return tgpy_array(self, b->ts, "q", sizeof(int64_t), 1, shape, 0);
  if (!strcmp(name, "open")) return f64(self, b->open, b->n);
  if (!strcmp(name, "high")) return f64(self, b->high, b->n);
  if (!strcmp(name, "low")) return f64(self, b->low, b->n);
  if (!strcmp(name, "close")) return f64(self, b->close, b->n);
  if (!strcmp(name, "volume")) return f64(self, b->volume, b->n);
  if (!strcmp(name, "instrument")) {
    if (!b->instrument) Py_RETURN_NONE;
    return tgpy_array(self, b->instrument, "I", sizeof(uint32_t), 1, shape, 0);
  }
  return PyErr_Format(PyExc_ValueError, "field: no bar field '%s' (ts, open, high, low, close, volume, instrument)", name);
}

/* Bars.columns(): [(name, values)] with values a float64 array, or (codes uint32 array, [names]) for a category. */
static PyObject *bars_columns(PyObject *self, PyObject *unused) {
  (void)unused;
  tg_bars *b = &((tgpy_bars *)self)->b;
  Py_ssize_t shape[1] = {(Py_ssize_t)b->n};
  PyObject *out = PyList_New(b->n_cols);
  for (int k = 0; out && k < b->n_cols; k++) {
    tg_bar_column *c = &b->cols[k];
    PyObject *v;
    if (c->kind == TG_COLUMN_NUMERIC) {
      v = f64(self, c->values, b->n);
    } else {
      PyObject *codes = tgpy_array(self, c->codes, "I", sizeof(uint32_t), 1, shape, 0);
      PyObject *names = PyList_New(c->cats.n);
      for (uint32_t i = 0; names && i < c->cats.n; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(tg_categories_name(&c->cats, i),
                                           (Py_ssize_t)(c->cats.off[i + 1] - c->cats.off[i] - 1), "replace");
        if (!s) Py_CLEAR(names);
        else PyList_SET_ITEM(names, i, s);
      }
      v = codes && names ? PyTuple_Pack(2, codes, names) : NULL;
      Py_XDECREF(codes);
      Py_XDECREF(names);
    }
    PyObject *item = v ? Py_BuildValue("(sN)", c->name, v) : NULL;
    if (!item) Py_CLEAR(out);
    else PyList_SET_ITEM(out, k, item);
  }
  return out;
}

static PyObject *bars_get_n(PyObject *self, void *c) { (void)c; return PyLong_FromLongLong(((tgpy_bars *)self)->b.n); }
static PyObject *bars_get_source(PyObject *self, void *c) { (void)c; return PyUnicode_FromString(((tgpy_bars *)self)->b.source); }
static PyObject *bars_get_format(PyObject *self, void *c) { (void)c; return PyUnicode_FromString(((tgpy_bars *)self)->b.format); }
static PyObject *bars_get_reordered(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLongLong(((tgpy_bars *)self)->b.reordered);
}

/* Bars.inspect(): the report of `tickgrad inspect` as a dict. */
static PyObject *bars_inspect(PyObject *self, PyObject *unused) {
  (void)unused;
  tg_bars *b = &((tgpy_bars *)self)->b;
  tg_bars_report r;
  tg_column_report *cols = PyMem_Malloc(((size_t)b->n_cols + 1) * sizeof *cols);
  if (!cols) return PyErr_NoMemory();
  tg_status st = tg_bars_inspect(b, &r);
  if (st == TG_OK) st = tg_bars_inspect_columns(b, cols);
  if (st != TG_OK) {
    PyMem_Free(cols);
    return tgpy_raise(st, "inspect");
  }
  PyObject *gaps = PyList_New(0), *extra = PyList_New(0);
  for (int k = 0; gaps && k < TG_INSPECT_MAX_GAPS && k < r.gaps; k++) {
    PyObject *g = Py_BuildValue("(LL)", (long long)r.gap_at[k], (long long)r.gap_ns[k]);
    if (!g || PyList_Append(gaps, g) < 0) Py_CLEAR(gaps);
    Py_XDECREF(g);
  }
  for (int k = 0; extra && k < b->n_cols; k++) {
    PyObject *c = Py_BuildValue("{s:s,s:s,s:L,s:L}", "name", cols[k].name, "kind",
                                cols[k].kind == TG_COLUMN_NUMERIC ? "numeric" : "category", "missing",
                                (long long)cols[k].missing, "distinct", (long long)cols[k].distinct);
    if (!c || PyList_Append(extra, c) < 0) Py_CLEAR(extra);
    Py_XDECREF(c);
  }
  PyMem_Free(cols);
  if (!gaps || !extra) {
    Py_XDECREF(gaps);
    Py_XDECREF(extra);
    return NULL;
  }
  return Py_BuildValue(
      "{s:s,s:s,s:L,s:L,s:L,s:L,s:L,s:L,s:N,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:O,s:O,s:N}", "source", b->source,
      "format", b->format, "rows", (long long)r.rows, "instruments", (long long)r.instruments, "first_ts",
      (long long)r.first_ts, "last_ts", (long long)r.last_ts, "median_interval_ns", (long long)r.median_interval_ns,
      "gaps", (long long)r.gaps, "longest_gaps", gaps, "duplicates", (long long)r.duplicates, "reordered",
      (long long)r.reordered, "ohlc_violations", (long long)r.ohlc_violations, "nan_prices", (long long)r.nan_prices,
      "zero_prices", (long long)r.zero_prices, "negative_prices", (long long)r.negative_prices, "nan_volume",
      (long long)r.nan_volume, "negative_volume", (long long)r.negative_volume, "has_volume",
      r.has_volume ? Py_True : Py_False, "has_instrument", b->instrument ? Py_True : Py_False, "columns", extra);
}

static PyMethodDef bars_methods[] = {
    {"field", bars_field, METH_O, "field(name) -> array: ts, open, high, low, close, volume or instrument (None when absent)."},
    {"columns", bars_columns, METH_NOARGS, "columns() -> [(name, float64 array | (uint32 codes, [names]))]."},
    {"inspect", bars_inspect, METH_NOARGS, "inspect() -> dict: the report of `tickgrad inspect`."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef bars_getset[] = {
    {"n", bars_get_n, NULL, "bars", NULL},
    {"source", bars_get_source, NULL, "the file, or \"first and N more\"", NULL},
    {"format", bars_get_format, NULL, "csv, dbn, parquet or synthetic", NULL},
    {"reordered", bars_get_reordered, NULL, "bars found out of time order and sorted", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject tgpy_BarsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tickgrad._core.Bars",
    .tp_basicsize = sizeof(tgpy_bars),
    .tp_dealloc = bars_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A bar series in library memory (tickgrad.read_bars turns it into a DataFrame without copying).",
    .tp_methods = bars_methods,
    .tp_getset = bars_getset,
};

/* read_bars(paths, columns, tz, price_scale, nan_nulls, duplicates, allow_ohlc, skip_bad_files, no_checks, roll, adjust,
 * by, quotes) -> (Bars, warnings text); duplicates is the tg_dup_policy code, roll the rule's text or None, adjust the
 * tg_adjust code, by a bar recipe (None: bar files) */
static PyObject *py_read_bars(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *paths;
  const char *columns = NULL, *tz = NULL, *roll = NULL, *by = NULL, *quotes = NULL;
  double scale = 0;
  int nan_nulls = 0, dups = 0, allow_ohlc = 0, skip_bad = 0, no_checks = 0, adjust = 0;
  if (!PyArg_ParseTuple(args, "O!zzdpippp|zizz", &PyList_Type, &paths, &columns, &tz, &scale, &nan_nulls, &dups,
                        &allow_ohlc, &skip_bad, &no_checks, &roll, &adjust, &by, &quotes))
    return NULL;
  if (dups < TG_DUPS_ERROR || dups > TG_DUPS_LAST) return PyErr_Format(PyExc_ValueError, "duplicates: code %d", dups);
  if (adjust < TG_ADJUST_DIFFERENCE || adjust > TG_ADJUST_NONE)
    return PyErr_Format(PyExc_ValueError, "adjust: code %d", adjust);
  Py_ssize_t n = PyList_GET_SIZE(paths);
  if (n < 1) return PyErr_Format(PyExc_ValueError, "path: no path given");
  const char **p = PyMem_Malloc((size_t)n * sizeof *p);
  if (!p) return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < n; i++)
    if (!(p[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(paths, i)))) {
      PyMem_Free(p);
      return NULL;
    }
  tgpy_capture warn;
  PyObject *o = tgpy_bars_new();
  if (!o || tgpy_capture_open(&warn) < 0) {
    PyMem_Free(p);
    Py_XDECREF(o);
    return NULL;
  }
  tg_read_opts ro = {.columns = columns, .tz = tz, .price_scale = scale, .nulls = nan_nulls ? TG_NULLS_NAN : TG_NULLS_ERROR,
                     .warn = warn.f, .duplicates = (tg_dup_policy)dups, .allow_ohlc = allow_ohlc,
                     .skip_bad_files = skip_bad, .no_checks = no_checks, .roll = roll, .adjust = (tg_adjust)adjust,
                     .by = by, .quotes = quotes};
  tg_status st;
  Py_BEGIN_ALLOW_THREADS
  if (n == 1) st = tg_bars_read(p[0], &ro, &((tgpy_bars *)o)->b); /* its message as `tickgrad inspect` gives it */
  else st = tg_bars_read_paths((int)n, p, &ro, &((tgpy_bars *)o)->b);
  Py_END_ALLOW_THREADS
  PyMem_Free(p);
  PyObject *w = tgpy_capture_close(&warn);
  if (st != TG_OK) {
    Py_DECREF(o);
    Py_XDECREF(w);
    return tgpy_raise(st, NULL);
  }
  return w ? Py_BuildValue("(NN)", o, w) : NULL;
}

/* One float64 array of n into dst. */
static int copy_f64(PyObject *obj, const char *arg, int64_t n, double *dst) {
  Py_buffer v;
  if (tgpy_buffer(obj, arg, "d", 1, 0, &v) < 0) return -1;
  int ok = v.len == (Py_ssize_t)(n * (int64_t)sizeof(double));
  if (ok) memcpy(dst, v.buf, (size_t)v.len);
  else PyErr_Format(PyExc_ValueError, "%s: %zd values, want %lld (one per bar)", arg, v.len / (Py_ssize_t)sizeof(double), (long long)n);
  PyBuffer_Release(&v);
  return ok ? 0 : -1;
}

/* An extra column (name, values float64) or (name, codes uint32, [names]) appended to b. */
static int add_extra(tg_bars *b, PyObject *item) {
  const char *name;
  PyObject *values, *names = NULL;
  if (!PyArg_ParseTuple(item, "sO|O!", &name, &values, &PyList_Type, &names)) return -1;
  char arg[300];
  snprintf(arg, sizeof arg, "column '%s'", name);
  tg_status st = tg_bars_add_column(b, name, names ? TG_COLUMN_CATEGORY : TG_COLUMN_NUMERIC);
  if (st != TG_OK) return tgpy_raise(st, arg), -1;
  tg_bar_column *c = &b->cols[b->n_cols - 1];
  if (!names) return copy_f64(values, arg, b->n, c->values);
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(names); i++) {
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(names, i), &len);
    uint32_t code;
    if (!s) return -1;
    if ((st = tg_categories_intern(&c->cats, s, (size_t)len, &code)) != TG_OK) return tgpy_raise(st, arg), -1;
    if (code != (uint32_t)i) return PyErr_Format(PyExc_ValueError, "%s: the name '%s' is repeated", arg, s), -1;
  }
  Py_buffer v;
  if (tgpy_buffer(values, arg, "I", 1, 0, &v) < 0) return -1;
  int ok = v.len == (Py_ssize_t)(b->n * (int64_t)sizeof(uint32_t));
  const uint32_t *codes = v.buf;
  for (int64_t i = 0; ok && i < b->n; i++)
    if (codes[i] != TG_CATEGORY_MISSING && codes[i] >= c->cats.n) ok = 0;
  if (ok) memcpy(c->codes, codes, (size_t)v.len);
  else PyErr_Format(PyExc_ValueError, "%s: want one code per bar below %u (or missing)", arg, c->cats.n);
  PyBuffer_Release(&v);
  return ok ? 0 : -1;
}

/* bars_from_arrays(ts int64, open, high, low, close, volume float64, instrument uint32 | None, extras, source)
 * -> Bars (copies; sorted by time as the readers leave bars; reordered counts the bars moved). */
static PyObject *py_bars_from_arrays(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *ts, *o, *h, *l, *c, *v, *inst, *extras;
  const char *source;
  if (!PyArg_ParseTuple(args, "OOOOOOOO!s", &ts, &o, &h, &l, &c, &v, &inst, &PyList_Type, &extras, &source)) return NULL;
  Py_buffer tv;
  if (tgpy_buffer(ts, "index", "q", 1, 0, &tv) < 0) return NULL;
  int64_t n = tv.len / (Py_ssize_t)sizeof(int64_t);
  PyObject *out = tgpy_bars_new();
  tg_bars *b = out ? &((tgpy_bars *)out)->b : NULL;
  tg_status st = b ? tg_bars_reserve(b, n > 0 ? n : 1, inst != Py_None) : TG_ERR_NOMEM;
  if (st != TG_OK) {
    PyBuffer_Release(&tv);
    Py_XDECREF(out);
    return out ? tgpy_raise(st, "bars") : NULL;
  }
  memcpy(b->ts, tv.buf, (size_t)tv.len);
  PyBuffer_Release(&tv);
  b->n = n;
  snprintf(b->source, sizeof b->source, "%s", source);
  snprintf(b->format, sizeof b->format, "dataframe");
  if (copy_f64(o, "open", n, b->open) < 0 || copy_f64(h, "high", n, b->high) < 0 || copy_f64(l, "low", n, b->low) < 0 ||
      copy_f64(c, "close", n, b->close) < 0 || copy_f64(v, "volume", n, b->volume) < 0)
    goto fail;
  if (inst != Py_None) {
    Py_buffer iv;
    if (tgpy_buffer(inst, "instrument", "I", 1, 0, &iv) < 0) goto fail;
    int ok = iv.len == (Py_ssize_t)(n * (int64_t)sizeof(uint32_t));
    if (ok) memcpy(b->instrument, iv.buf, (size_t)iv.len);
    PyBuffer_Release(&iv);
    if (!ok) {
      PyErr_Format(PyExc_ValueError, "instrument: want one id per bar (%lld)", (long long)n);
      goto fail;
    }
  }
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(extras); k++)
    if (add_extra(b, PyList_GET_ITEM(extras, k)) < 0) goto fail;
  if ((st = tg_bars_sort(b, &b->reordered)) != TG_OK || (st = tg_bars_check(b, NULL, source)) != TG_OK) {
    tgpy_raise(st, "bars"); /* a frame's bars are checked as every file's are */
    goto fail;
  }
  return out;
fail:
  Py_DECREF(out);
  return NULL;
}

/* instrument_id(text) -> the id the CSV reader gives that instrument field (tg_instrument_id). */
static PyObject *py_instrument_id(PyObject *self, PyObject *arg) {
  (void)self;
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(arg, &n);
  if (!s) return NULL;
  return PyLong_FromUnsignedLong(tg_instrument_id(s, (size_t)n));
}

/* synth(bars, interval_ns, instruments, seed, signal, correlation, weekends, price, volatility, regime_bars,
 *       regime_drift, start_ns | None) -> Bars: the built-in synthetic market (tg_synth_generate). */
static PyObject *py_synth(PyObject *self, PyObject *args) {
  (void)self;
  tg_synth_config c = tg_synth_defaults();
  long long bars, interval, seed;
  PyObject *start;
  if (!PyArg_ParseTuple(args, "LLiLddpddddO", &bars, &interval, &c.instruments, &seed, &c.signal, &c.correlation,
                        &c.weekends, &c.price, &c.volatility, &c.regime_bars, &c.regime_drift, &start))
    return NULL;
  c.bars = bars, c.interval_ns = interval, c.seed = (uint64_t)seed;
  if (start != Py_None && (c.start_ns = PyLong_AsLongLong(start)) == -1 && PyErr_Occurred()) return NULL;
  PyObject *o = tgpy_bars_new();
  if (!o) return NULL;
  tg_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tg_synth_generate(&c, &((tgpy_bars *)o)->b);
  Py_END_ALLOW_THREADS
  if (st != TG_OK) {
    Py_DECREF(o);
    return tgpy_raise(st, "synth");
  }
  return o;
}

PyMethodDef tgpy_data_methods[] = {
    {"synth", py_synth, METH_VARARGS, "synth(...) -> Bars: the built-in synthetic market"},
    {"read_bars", py_read_bars, METH_VARARGS,
     "read_bars(paths, columns, tz, price_scale, nan_nulls, duplicates, allow_ohlc, skip_bad_files, no_checks[, roll, "
     "adjust, by, quotes]) -> (Bars, warnings)"},
    {"bars_from_arrays", py_bars_from_arrays, METH_VARARGS,
     "bars_from_arrays(ts, open, high, low, close, volume, instrument, extras, source) -> Bars"},
    {"instrument_id", py_instrument_id, METH_O, "instrument_id(text) -> the id the CSV reader gives it"},
    {NULL, NULL, 0, NULL},
};
