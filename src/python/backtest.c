/* tickgrad._core: backtests (rule strategies, explicit targets, forecaster and policy runs), walk-forward and sweeps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/run_lock.h"
#include "python/core.h"

/* ---- a finished backtest: the engine's tg_backtest, its curves exported without a copy ---- */

typedef struct tgpy_bt {
  PyObject_HEAD
  tg_backtest bt;
  char name[128];
  char source[1024];
  PyObject *text; /* the command's printed lines (str) */
} tgpy_bt;

static void bt_dealloc(PyObject *self) {
  tgpy_bt *o = (tgpy_bt *)self;
  tg_backtest_free(&o->bt);
  Py_XDECREF(o->text);
  Py_TYPE(self)->tp_free(self);
}

static PyTypeObject BacktestResultType;

static tgpy_bt *bt_new(void) {
  tgpy_bt *o = PyObject_New(tgpy_bt, &BacktestResultType);
  if (!o) return NULL;
  memset(&o->bt, 0, sizeof o->bt);
  o->name[0] = o->source[0] = 0;
  o->text = NULL;
  return o;
}

static PyObject *stats_dict(const tg_bt_stats *s) {
  return Py_BuildValue("{s:L,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:L,s:L,s:L,s:L,s:L,s:O,s:d,s:L,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:L,s:d}",
                       "bars", (long long)s->bars, "bars_per_year", s->bars_per_year, "years", s->years,
                       "start_equity", s->start_equity, "final_equity", s->final_equity, "total_return",
                       s->total_return, "annual_return", s->annual_return, "annual_vol", s->annual_vol, "sharpe",
                       s->sharpe, "sortino", s->sortino, "max_drawdown", s->max_drawdown, "dd_peak",
                       (long long)s->dd_peak, "dd_trough", (long long)s->dd_trough, "dd_end", (long long)s->dd_end,
                       "dd_bars", (long long)s->dd_bars, "dd_ns", (long long)s->dd_ns, "dd_recovered",
                       s->dd_recovered ? Py_True : Py_False, "calmar", s->calmar, "trades", (long long)s->trades,
                       "win_rate", s->win_rate, "avg_trade_pnl", s->avg_trade_pnl, "avg_trade_return",
                       s->avg_trade_return, "exposure", s->exposure, "turnover", s->turnover,
                       "fees", s->fees, "spread_cost", s->spread_cost, "rolls", (long long)s->rolls, "roll_cost",
                       s->roll_cost);
}

static PyObject *bt_stats(PyObject *self, PyObject *u) {
  (void)u;
  return stats_dict(&((tgpy_bt *)self)->bt.stats);
}

static PyObject *bt_bh(PyObject *self, PyObject *u) {
  (void)u;
  return stats_dict(&((tgpy_bt *)self)->bt.bh);
}

/* curves() -> dict name -> Array (ts int64; close, target, units, position, equity, drawdown, bh_equity float64). */
static PyObject *bt_curves(PyObject *self, PyObject *u) {
  (void)u;
  tg_backtest *b = &((tgpy_bt *)self)->bt;
  Py_ssize_t shape[1] = {(Py_ssize_t)b->n};
  PyObject *d = PyDict_New();
  if (!d) return NULL;
  struct {
    const char *name;
    double *v;
  } cols[] = {{"close", b->close},   {"target", b->target},     {"units", b->units},       {"position", b->position},
              {"equity", b->equity}, {"drawdown", b->drawdown}, {"bh_equity", b->bh_equity}};
  PyObject *ts = tgpy_array(self, b->ts, "q", sizeof(int64_t), 1, shape, 1);
  if (!ts || PyDict_SetItemString(d, "ts", ts) < 0) goto fail;
  Py_DECREF(ts);
  for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
    PyObject *a = tgpy_array(self, cols[i].v, "d", sizeof(double), 1, shape, 1);
    if (!a || PyDict_SetItemString(d, cols[i].name, a) < 0) {
      Py_XDECREF(a);
      goto fail;
    }
    Py_DECREF(a);
  }
  return d;
fail:
  Py_DECREF(d);
  return NULL;
}

/* trades() -> list of tuples (entry_bar, exit_bar, entry_ts, exit_ts, side, open, size, entry_price, exit_price,
 * entry_value, exit_value, fees, pnl, ret). */
static PyObject *bt_trades(PyObject *self, PyObject *u) {
  (void)u;
  tg_backtest *b = &((tgpy_bt *)self)->bt;
  PyObject *l = PyList_New((Py_ssize_t)b->n_trades);
  for (int64_t i = 0; l && i < b->n_trades; i++) {
    const tg_bt_trade *t = &b->trades[i];
    PyObject *row = Py_BuildValue("(LLLLiidddddddd)", (long long)t->entry_bar, (long long)t->exit_bar,
                                  (long long)t->entry_ts, (long long)t->exit_ts, t->side, t->open, t->size,
                                  t->entry_price, t->exit_price, t->entry_value, t->exit_value, t->fees, t->pnl, t->ret);
    if (!row) Py_CLEAR(l);
    else PyList_SET_ITEM(l, i, row);
  }
  return l;
}

static PyObject *bt_get_name(PyObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(((tgpy_bt *)self)->name);
}
static PyObject *bt_get_source(PyObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(((tgpy_bt *)self)->source);
}
static PyObject *bt_get_text(PyObject *self, void *c) {
  (void)c;
  PyObject *t = ((tgpy_bt *)self)->text;
  return t ? Py_NewRef(t) : PyUnicode_FromString("");
}
static PyObject *bt_get_opts(PyObject *self, void *c) {
  (void)c;
  const tg_bt_opts *o = &((tgpy_bt *)self)->bt.opts;
  return Py_BuildValue("{s:d,s:d,s:d,s:d}", "cash", o->cash, "commission", o->commission, "cost_bps", o->cost_bps,
                       "slippage", o->slippage);
}

/* write(dir, report) -> str: tg_backtest_write (trades.csv, equity.csv, backtest.json), then with report the run's
 * report.html (tg_report_write; failing that is a warning: the returned text), the run folder locked meanwhile. */
static PyObject *bt_write(PyObject *self, PyObject *args) {
  tgpy_bt *o = (tgpy_bt *)self;
  const char *dir;
  int report = 0;
  if (!PyArg_ParseTuple(args, "sp", &dir, &report)) return NULL;
  tg_status st = TG_OK;
  char warn[1200] = "";
  int lock = -1;
  Py_BEGIN_ALLOW_THREADS
  if (report) st = tg_run_lock(dir, "backtest", &lock); /* the run's folder: one writer at a time */
  if (st == TG_OK) st = tg_backtest_write(&o->bt, o->name, dir);
  if (st == TG_OK && report && tg_report_write(dir, NULL) != TG_OK)
    snprintf(warn, sizeof warn, "no report: %s", tg_last_error());
  tg_run_unlock(lock);
  Py_END_ALLOW_THREADS
  if (st != TG_OK) return tgpy_raise(st, "backtest");
  return PyUnicode_FromString(warn);
}

static PyMethodDef bt_methods[] = {
    {"stats", bt_stats, METH_NOARGS, "stats() -> dict: the strategy's tg_bt_stats."},
    {"buy_and_hold", bt_bh, METH_NOARGS, "buy_and_hold() -> dict: buy and hold's tg_bt_stats."},
    {"curves", bt_curves, METH_NOARGS, "curves() -> dict of arrays viewing the engine's per-bar curves."},
    {"trades", bt_trades, METH_NOARGS, "trades() -> list of round-trip tuples."},
    {"write", bt_write, METH_VARARGS, "write(dir, report) -> str: the command's files in dir (a warning or '')."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef bt_getset[] = {
    {"name", bt_get_name, NULL, "the strategy's label", NULL},
    {"source", bt_get_source, NULL, "the bars' source", NULL},
    {"text", bt_get_text, NULL, "what the command prints about it", NULL},
    {"opts", bt_get_opts, NULL, "cash and costs", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject BacktestResultType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tickgrad._core.BacktestResult",
    .tp_basicsize = sizeof(tgpy_bt),
    .tp_dealloc = bt_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A finished backtest (tg_backtest): statistics, curves, trades.",
    .tp_methods = bt_methods,
    .tp_getset = bt_getset,
};

/* ---- running one ---- */

static int parse_costs(PyObject *costs, tg_bt_opts *o) {
  *o = tg_bt_defaults();
  return PyArg_ParseTuple(costs, "dddd", &o->cash, &o->commission, &o->cost_bps, &o->slippage);
}

/* Finishes o: the engine over view with target, the printed table captured. */
static PyObject *bt_finish(tgpy_bt *o, const tg_bars *view, const double *target, const tg_bt_opts *costs,
                           tgpy_capture *cap) {
  tg_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tg_backtest_run(view, target, costs, &o->bt);
  if (st == TG_OK) tg_backtest_print(cap->f, &o->bt, o->name);
  Py_END_ALLOW_THREADS
  PyObject *text = tgpy_capture_close(cap);
  if (st != TG_OK) {
    Py_XDECREF(text);
    Py_DECREF(o);
    return tgpy_raise(st, NULL);
  }
  if (!text) {
    Py_DECREF(o);
    return NULL;
  }
  o->text = text;
  return (PyObject *)o;
}

/* backtest_bars(bars, split, train_frac, val_frac, costs (cash, commission, cost_bps, slippage), strategy, targets,
 * run, fc) -> BacktestResult. Exactly one of strategy (str), targets (float64 array over the split's bars) and run
 * (a forecaster's folder, fc = (rule, horizon, long_only, sized, class_map, threshold, weights)) is given. The bars
 * are split as the trainer splits them (tg_backtest_split); a run's predictor sees every bar before the split first. */
static PyObject *py_backtest_bars(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *bars_obj, *costs_t, *strategy, *targets, *run, *fc;
  const char *split;
  double f0, f1;
  if (!PyArg_ParseTuple(args, "OsddOOOOO", &bars_obj, &split, &f0, &f1, &costs_t, &strategy, &targets, &run, &fc))
    return NULL;
  const tg_bars *all = tgpy_bars_of(bars_obj, "data");
  if (!all) return NULL;
  tg_bt_opts costs;
  if (!parse_costs(costs_t, &costs)) return NULL;
  tg_bars view;
  tg_bar_column *cols = all->n_cols ? malloc((size_t)all->n_cols * sizeof *cols) : NULL; /* quotes, contracts */
  if (all->n_cols && !cols) return PyErr_NoMemory();
  tg_status st = tg_backtest_split(all, split, f0, f1, cols, &view);
  if (st == TG_OK) st = tg_backtest_check_bars(&view, "backtest");
  if (st != TG_OK) {
    free(cols);
    return tgpy_raise(st, NULL);
  }
  tgpy_bt *o = bt_new();
  double *target = o ? malloc((size_t)view.n * sizeof(double)) : NULL;
  if (!target) {
    free(cols);
    Py_XDECREF(o);
    return o ? PyErr_NoMemory() : NULL;
  }
  snprintf(o->source, sizeof o->source, "%s", all->source);
  tgpy_capture cap;
  if (tgpy_capture_open(&cap) < 0) {
    free(target);
    free(cols);
    Py_DECREF(o);
    return NULL;
  }
  if (strategy != Py_None) {
    tg_strategy s;
    const char *text = PyUnicode_AsUTF8(strategy);
    if (!text) goto fail;
    if (tg_strategy_parse(text, &s) != TG_OK) {
      PyErr_Format(PyExc_ValueError, "strategy: %s", tg_last_error());
      goto fail;
    }
    snprintf(o->name, sizeof o->name, "%s", s.name);
    Py_BEGIN_ALLOW_THREADS
    st = tg_strategy_targets(&s, &view, target);
    Py_END_ALLOW_THREADS
  } else if (targets != Py_None) {
    Py_buffer tv;
    if (tgpy_buffer(targets, "targets", "d", 1, 0, &tv) < 0) goto fail;
    if (tv.len / (Py_ssize_t)sizeof(double) != (Py_ssize_t)view.n) {
      PyErr_Format(PyExc_ValueError, "targets: %zd positions for %lld bars of the %s split; want one per bar",
                   tv.len / (Py_ssize_t)sizeof(double), (long long)view.n, split);
      PyBuffer_Release(&tv);
      goto fail;
    }
    memcpy(target, tv.buf, (size_t)tv.len);
    PyBuffer_Release(&tv);
    snprintf(o->name, sizeof o->name, "targets");
  } else {
    const char *run_dir = PyUnicode_AsUTF8(run), *rule = NULL, *class_map = NULL, *weights = NULL;
    tg_fc_bt_opts fo = tg_fc_bt_defaults();
    if (!run_dir || !PyArg_ParseTuple(fc, "ziiizdz", &rule, &fo.horizon, &fo.long_only, &fo.sized, &class_map,
                                      &fo.threshold, &weights))
      goto fail;
    fo.rule = rule, fo.class_map = class_map, fo.weights = weights, fo.o = costs;
    tg_fc_rule r = tg_fc_bt_rule(&fo);
    tg_predictor_opts po = {.weights = weights};
    tg_predictor *p = NULL;
    int64_t got = 0;
    Py_BEGIN_ALLOW_THREADS
    st = tg_predictor_open(run_dir, &po, &p);
    if (st == TG_OK) st = tg_fc_targets(p, all, view.ts - all->ts, &r, target, &got);
    if (st == TG_OK) {
      const tg_predictor_info *in = tg_predictor_get_info(p);
      tg_fc_rule_name(&r, in, o->name, sizeof o->name);
      fprintf(cap.f, "decisions: %lld of %lld bars had a forecast (warm-up: the first %lld bars of the data); "
              "round-trip cost %.4g\n", (long long)got, (long long)view.n, (long long)in->first_bar, r.cost);
    }
    tg_predictor_free(p);
    Py_END_ALLOW_THREADS
  }
  if (st != TG_OK) {
    tgpy_raise(st, NULL);
    goto fail;
  }
  PyObject *res = bt_finish(o, &view, target, &costs, &cap);
  free(target);
  free(cols);
  return res;
fail:
  free(target);
  free(cols);
  Py_XDECREF(tgpy_capture_close(&cap));
  Py_DECREF(o);
  return NULL;
}

/* policy_backtest(run, split, data paths (list of str), costs, costs_given) -> BacktestResult: tg_policy_backtest. */
static PyObject *py_policy_backtest(PyObject *self, PyObject *args) {
  (void)self;
  const char *run, *split;
  PyObject *paths, *costs_t;
  int costs_given;
  if (!PyArg_ParseTuple(args, "ssOOp", &run, &split, &paths, &costs_t, &costs_given)) return NULL;
  tg_policy_bt_opts po;
  memset(&po, 0, sizeof po);
  if (!parse_costs(costs_t, &po.o)) return NULL;
  po.split = split;
  po.costs_given = costs_given;
  PyObject *seq = PySequence_Fast(paths, "data: want a list of paths");
  if (!seq) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  const char **data = calloc((size_t)(n ? n : 1), sizeof *data);
  tgpy_bt *o = data ? bt_new() : NULL;
  tgpy_capture cap = {0};
  PyObject *res = NULL;
  if (!o || tgpy_capture_open(&cap) < 0) goto done;
  for (Py_ssize_t i = 0; i < n; i++)
    if (!(data[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i)))) goto done;
  po.n_data = (int)n;
  po.data = data;
  po.log = cap.f;
  tg_policy_bt r;
  tg_status st;
  Py_BEGIN_ALLOW_THREADS
  st = tg_policy_backtest(run, &po, &r);
  if (st == TG_OK) tg_backtest_print(cap.f, &r.bt, r.name);
  Py_END_ALLOW_THREADS
  if (st != TG_OK) {
    tgpy_raise(st, NULL);
    goto done;
  }
  o->bt = r.bt; /* moved: r owns nothing else (tg_policy_bt_free frees only bt) */
  snprintf(o->name, sizeof o->name, "%s", r.name);
  snprintf(o->source, sizeof o->source, "%s", r.source);
  o->text = tgpy_capture_close(&cap);
  if (o->text) res = Py_NewRef((PyObject *)o);
done:
  if (cap.f) Py_XDECREF(tgpy_capture_close(&cap));
  if (!data) PyErr_NoMemory();
  Py_XDECREF(o);
  free(data);
  Py_DECREF(seq);
  return res;
}

/* run_data(run) -> (data paths, data_tz, train_frac, val_frac, bar_recipe, quotes): a training run's data as its
 * config.json records it (tg_train_config_load), which `backtest --run` reads when given no --data. */
static PyObject *py_run_data(PyObject *self, PyObject *arg) {
  (void)self;
  const char *run = PyUnicode_AsUTF8(arg);
  if (!run) return NULL;
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/config.json", run);
  static tg_train_config c; /* large; under the GIL */
  c = tg_train_defaults(tg_model_default_kind());
  tg_status st = tg_train_config_load(path, &c);
  if (st != TG_OK) return tgpy_raise(st, NULL);
  PyObject *l = PyList_New(c.n_data);
  for (int i = 0; l && i < c.n_data; i++) {
    PyObject *s = PyUnicode_FromString(c.data[i]);
    if (!s) Py_CLEAR(l);
    else PyList_SET_ITEM(l, i, s);
  }
  if (!l) return NULL;
  return Py_BuildValue("(Nsddss)", l, c.read.tz, c.train_frac, c.val_frac, c.read.by, c.read.quotes);
}

static int parse_fc(PyObject *fc, PyObject *costs, tg_fc_bt_opts *fo) {
  const char *rule = NULL, *class_map = NULL, *weights = NULL;
  *fo = tg_fc_bt_defaults();
  if (!PyArg_ParseTuple(fc, "ziiizdz", &rule, &fo->horizon, &fo->long_only, &fo->sized, &class_map, &fo->threshold,
                        &weights) ||
      !parse_costs(costs, &fo->o))
    return -1;
  fo->rule = rule, fo->class_map = class_map, fo->weights = weights;
  return 0;
}

static int model_kind(const char *model, tg_model_kind *k) {
  if (tg_train_model_parse(model, k) != TG_OK) {
    PyErr_Format(PyExc_ValueError, "model: %s", tg_last_error());
    return -1;
  }
  return 0;
}

/* The log of a walk-forward or sweep: each line appended to lines, and written to sys.stdout when verbose. */
static FILE *log_file(PyObject *lines, int verbose) {
  PyObject *append = PyObject_GetAttrString(lines, "append");
  if (!append) return NULL;
  FILE *f = tgpy_py_file(verbose ? "stdout" : NULL, append);
  Py_DECREF(append);
  return f;
}

/* walkforward(model, bars, data paths | None, settings, folds, train_blocks, rolling, out, fc, costs, verbose)
 * -> [log lines]: tg_wf_run with the GIL released, its log on sys.stdout as it runs when verbose. fc and costs keep
 * their strs alive in the caller's tuples. */
static PyObject *py_walkforward(PyObject *self, PyObject *args) {
  (void)self;
  const char *model, *out;
  PyObject *bars_obj, *data, *settings, *fc, *costs;
  int folds, train_blocks, rolling;
  int verbose;
  if (!PyArg_ParseTuple(args, "sOOOiipsOOp", &model, &bars_obj, &data, &settings, &folds, &train_blocks, &rolling, &out,
                        &fc, &costs, &verbose))
    return NULL;
  const tg_bars *bars = tgpy_bars_of(bars_obj, "data");
  tg_model_kind kind;
  if (!bars || model_kind(model, &kind) < 0) return NULL;
  tg_wf_config *c = calloc(1, sizeof *c);
  if (!c) return PyErr_NoMemory();
  tg_wf_defaults(c, kind);
  PyObject *lines = PyList_New(0);
  FILE *log = NULL;
  if (!lines) goto done;
  if (tgpy_train_config_new(&c->train, model, NULL, settings, data, 1) < 0 || parse_fc(fc, costs, &c->bt) < 0) goto done;
  c->folds = folds, c->train_blocks = train_blocks, c->rolling = rolling;
  snprintf(c->out, sizeof c->out, "%s", out);
  if (!(log = log_file(lines, verbose))) goto done;
  c->log = c->train.log = c->bt.log = log;
  tg_status st;
  tgpy_sigint sig;
  tgpy_sigint_begin(&sig);
  Py_BEGIN_ALLOW_THREADS
  st = tg_wf_run(c, bars, NULL);
  Py_END_ALLOW_THREADS
  tgpy_sigint_end(&sig);
  fclose(log);
  free(c);
  if (st == TG_OK) return lines;
  Py_DECREF(lines);
  return tgpy_raise(st, NULL);
done:
  Py_XDECREF(lines);
  free(c);
  return NULL;
}

/* sweep(model, bars, data paths | None, settings, grids (list of "KEY=V1,V2"), metric, backtest, out, fc, costs,
 * verbose) -> [log lines]: tg_sweep_check, then tg_sweep_run with the GIL released (its log as walkforward's). */
static PyObject *py_sweep(PyObject *self, PyObject *args) {
  (void)self;
  const char *model, *out, *metric;
  PyObject *bars_obj, *data, *settings, *grids, *fc, *costs;
  int backtest;
  int verbose;
  if (!PyArg_ParseTuple(args, "sOOOOspsOOp", &model, &bars_obj, &data, &settings, &grids, &metric, &backtest, &out, &fc,
                        &costs, &verbose))
    return NULL;
  const tg_bars *bars = tgpy_bars_of(bars_obj, "data");
  tg_model_kind kind;
  if (!bars || model_kind(model, &kind) < 0) return NULL;
  tg_sweep_config *c = calloc(1, sizeof *c);
  if (!c) return PyErr_NoMemory();
  tg_sweep_defaults(c, kind);
  PyObject *seq = NULL, *lines = PyList_New(0);
  FILE *log = NULL;
  if (!lines) goto done;
  if (tgpy_train_config_new(&c->base, model, NULL, settings, data, 1) < 0 || parse_fc(fc, costs, &c->bt) < 0) goto done;
  if (!strcmp(metric, "val_loss")) c->metric = TG_SWEEP_VAL_LOSS;
  else if (!strcmp(metric, "val_qrisk50")) c->metric = TG_SWEEP_VAL_QRISK50;
  else {
    PyErr_Format(PyExc_ValueError, "metric: want 'val_loss' or 'val_qrisk50', got '%s'", metric);
    goto done;
  }
  if (!(seq = PySequence_Fast(grids, "grid: want a list"))) goto done;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
    const char *g = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
    if (!g) goto done;
    if (tg_sweep_add_grid(c, g) != TG_OK) {
      PyErr_Format(PyExc_ValueError, "grid: %s", tg_last_error());
      goto done;
    }
  }
  c->backtest = backtest;
  snprintf(c->out, sizeof c->out, "%s", out);
  if (tg_sweep_check(c) != TG_OK) {
    PyErr_Format(PyExc_ValueError, "%s", tg_last_error());
    goto done;
  }
  if (!(log = log_file(lines, verbose))) goto done;
  c->log = c->base.log = c->bt.log = log;
  tg_status st;
  tgpy_sigint sig;
  tgpy_sigint_begin(&sig);
  Py_BEGIN_ALLOW_THREADS
  st = tg_sweep_run(c, bars, NULL);
  Py_END_ALLOW_THREADS
  tgpy_sigint_end(&sig);
  fclose(log);
  Py_DECREF(seq);
  free(c);
  if (st == TG_OK) return lines;
  Py_DECREF(lines);
  return tgpy_raise(st, NULL);
done:
  Py_XDECREF(lines);
  Py_XDECREF(seq);
  free(c);
  return NULL;
}

PyMethodDef tgpy_backtest_methods[] = {
    {"backtest_bars", py_backtest_bars, METH_VARARGS,
     "backtest_bars(bars, split, train_frac, val_frac, costs, strategy, targets, run, fc) -> BacktestResult"},
    {"policy_backtest", py_policy_backtest, METH_VARARGS,
     "policy_backtest(run, split, data, costs, costs_given) -> BacktestResult"},
    {"run_data", py_run_data, METH_O, "run_data(run) -> (data, data_tz, train_frac, val_frac, bar_recipe, quotes) of RUN/config.json"},
    {"walkforward", py_walkforward, METH_VARARGS,
     "walkforward(model, bars, data, settings, folds, train_blocks, rolling, out, fc, costs) -> log text"},
    {"sweep", py_sweep, METH_VARARGS,
     "sweep(model, bars, data, settings, grids, metric, backtest, out, fc, costs) -> log text"},
    {NULL, NULL, 0, NULL},
};

int tgpy_backtest_types(PyObject *m) {
  if (PyType_Ready(&BacktestResultType) < 0) return -1;
  return PyModule_AddObjectRef(m, "BacktestResult", (PyObject *)&BacktestResultType);
}
