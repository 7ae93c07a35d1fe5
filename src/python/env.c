/* tickgrad._core: the environments (CartPole, the trading market), stepped into arrays shared with Python.
 *
 * _core.Env owns a tg_env and the step's output buffers, allocated once at construction and exported once as
 * buffer-protocol arrays (obs, final_obs, reward, terminated, truncated, ep_return, ep_length): step() writes
 * into them with the GIL released and returns how many instances finished an episode, so a Python vector env
 * steps n instances per call without any allocation. */
#include <stdlib.h>
#include <string.h>
#include "python/core.h"

typedef struct tgpy_env {
  PyObject_HEAD
  tg_env *e;
  tg_env_spec spec;
  int trading;
  int busy;            /* a step or reset is running with the GIL released */
  float *obs, *final_obs;
  float *reward;
  uint8_t *terminated, *truncated;
  double *ep_return;
  int32_t *ep_length;
  int64_t *done_idx;   /* [n] the instances whose episode ended in the last step, first the count step returned */
  PyObject *arrays;    /* dict name -> Array over the buffers above */
} tgpy_env;

static void env_dealloc(PyObject *self) {
  tgpy_env *v = (tgpy_env *)self;
  PyObject_GC_UnTrack(self);
  Py_CLEAR(v->arrays);
  if (v->e) tg_env_free(v->e);
  free(v->obs);
  free(v->final_obs);
  free(v->reward);
  free(v->terminated);
  free(v->truncated);
  free(v->ep_return);
  free(v->ep_length);
  free(v->done_idx);
  Py_TYPE(self)->tp_free(self);
}

static int env_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(((tgpy_env *)self)->arrays);
  return 0;
}

static int env_clear(PyObject *self) {
  Py_CLEAR(((tgpy_env *)self)->arrays);
  return 0;
}

static PyTypeObject tgpy_EnvType;

static int add_array(tgpy_env *v, const char *name, void *data, const char *format, Py_ssize_t itemsize, int ndim,
                     Py_ssize_t d0, Py_ssize_t d1) {
  Py_ssize_t shape[2] = {d0, d1};
  PyObject *a = tgpy_array((PyObject *)v, data, format, itemsize, ndim, shape, 0);
  if (!a) return -1;
  int rc = PyDict_SetItemString(v->arrays, name, a);
  Py_DECREF(a);
  return rc;
}

/* Wraps a new tg_env (taken over) with its buffers and arrays. */
static PyObject *env_wrap(tg_env *e, int trading) {
  tgpy_env *v = PyObject_GC_New(tgpy_env, &tgpy_EnvType);
  if (!v) {
    tg_env_free(e);
    return NULL;
  }
  v->e = e;
  v->spec = tg_env_spec_of(e);
  v->trading = trading;
  v->busy = 0;
  v->arrays = NULL;
  size_t n = (size_t)v->spec.n, d = (size_t)v->spec.obs_dim;
  v->obs = calloc(n * d, sizeof(float));
  v->final_obs = calloc(n * d, sizeof(float));
  v->reward = calloc(n, sizeof(float));
  v->terminated = calloc(n, 1);
  v->truncated = calloc(n, 1);
  v->ep_return = calloc(n, sizeof(double));
  v->ep_length = calloc(n, sizeof(int32_t));
  v->done_idx = calloc(n, sizeof(int64_t));
  PyObject_GC_Track((PyObject *)v);
  if (!v->obs || !v->final_obs || !v->reward || !v->terminated || !v->truncated || !v->ep_return || !v->ep_length ||
      !v->done_idx) {
    Py_DECREF(v);
    return PyErr_NoMemory();
  }
  v->arrays = PyDict_New();
  if (!v->arrays || add_array(v, "obs", v->obs, "f", 4, 2, (Py_ssize_t)n, (Py_ssize_t)d) ||
      add_array(v, "final_obs", v->final_obs, "f", 4, 2, (Py_ssize_t)n, (Py_ssize_t)d) ||
      add_array(v, "reward", v->reward, "f", 4, 1, (Py_ssize_t)n, 0) ||
      add_array(v, "terminated", v->terminated, "?", 1, 1, (Py_ssize_t)n, 0) ||
      add_array(v, "truncated", v->truncated, "?", 1, 1, (Py_ssize_t)n, 0) ||
      add_array(v, "ep_return", v->ep_return, "d", 8, 1, (Py_ssize_t)n, 0) ||
      add_array(v, "ep_length", v->ep_length, "i", 4, 1, (Py_ssize_t)n, 0) ||
      add_array(v, "done_idx", v->done_idx, "q", 8, 1, (Py_ssize_t)n, 0)) {
    Py_DECREF(v);
    return NULL;
  }
  return (PyObject *)v;
}

static int env_enter(tgpy_env *v) {
  if (v->busy) {
    PyErr_SetString(PyExc_RuntimeError, "this environment is being stepped by another thread");
    return -1;
  }
  v->busy = 1;
  return 0;
}

static PyObject *env_reset(PyObject *self, PyObject *noargs) {
  (void)noargs;
  tgpy_env *v = (tgpy_env *)self;
  if (env_enter(v)) return NULL;
  tg_status s;
  Py_BEGIN_ALLOW_THREADS s = tg_env_reset(v->e, v->obs);
  Py_END_ALLOW_THREADS v->busy = 0;
  if (s != TG_OK) return tgpy_raise(s, "reset");
  memset(v->terminated, 0, (size_t)v->spec.n);
  memset(v->truncated, 0, (size_t)v->spec.n);
  Py_RETURN_NONE;
}

/* Steps with the actions of view (already checked: n items of the env's type); returns the number of instances
 * whose episode ended, their indices in done_idx, or NULL with the library's error raised. */
static PyObject *step_view(tgpy_env *v, Py_buffer *view) {
  if (env_enter(v)) {
    PyBuffer_Release(view);
    return NULL;
  }
  tg_env_out out = {v->obs, v->final_obs, v->reward, v->terminated, v->truncated, v->ep_return, v->ep_length};
  tg_status s;
  Py_BEGIN_ALLOW_THREADS s = tg_env_step(v->e, view->buf, &out);
  Py_END_ALLOW_THREADS v->busy = 0;
  PyBuffer_Release(view);
  if (s != TG_OK) return tgpy_raise(s, "step");
  long done = 0;
  for (int i = 0; i < v->spec.n; i++) {
    v->done_idx[done] = i;
    done += v->terminated[i] | v->truncated[i];
  }
  return PyLong_FromLong(done);
}

/* step(actions): actions a C-contiguous int32 [n] buffer (float32 for a continuous env). Returns the number of
 * instances whose episode ended in this step. */
static PyObject *env_step(PyObject *self, PyObject *arg) {
  tgpy_env *v = (tgpy_env *)self;
  Py_buffer view;
  const char *fmt = v->spec.n_actions > 0 ? "i" : "f";
  if (tgpy_buffer(arg, "actions", fmt, 1, 0, &view)) return NULL;
  if (view.shape[0] != v->spec.n) {
    PyErr_Format(PyExc_ValueError, "actions: want %d actions (one per instance), got %zd", v->spec.n, view.shape[0]);
    PyBuffer_Release(&view);
    return NULL;
  }
  return step_view(v, &view);
}

/* try_step(actions): step when actions already are what step takes (a C-contiguous int32 [n] buffer, float32
 * when continuous); None, nothing stepped, when they are not, for the caller to convert them. The fast path of a
 * vector env's step: one call that checks and steps. */
static PyObject *env_try_step(PyObject *self, PyObject *arg) {
  tgpy_env *v = (tgpy_env *)self;
  Py_buffer view;
  const char *fmt = v->spec.n_actions > 0 ? "i" : "f";
  if (tgpy_buffer(arg, "actions", fmt, 1, 0, &view)) {
    PyErr_Clear();
    Py_RETURN_NONE;
  }
  if (view.shape[0] != v->spec.n) {
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
  }
  return step_view(v, &view);
}

static int instance_of(tgpy_env *v, PyObject *args, const char *fmt, int *i) {
  if (!PyArg_ParseTuple(args, fmt, i)) return -1;
  if (*i < 0 || *i >= v->spec.n) {
    PyErr_Format(PyExc_IndexError, "instance %d: the env has %d (0 .. %d)", *i, v->spec.n, v->spec.n - 1);
    return -1;
  }
  return 0;
}

static PyObject *env_cartpole_set_state(PyObject *self, PyObject *args) {
  tgpy_env *v = (tgpy_env *)self;
  int i;
  double st[4];
  if (!PyArg_ParseTuple(args, "i(dddd)", &i, &st[0], &st[1], &st[2], &st[3])) return NULL;
  tg_status s = tg_env_cartpole_set_state(v->e, i, st);
  if (s != TG_OK) return tgpy_raise(s, "cartpole_set_state");
  Py_RETURN_NONE;
}

static PyObject *env_cartpole_get_state(PyObject *self, PyObject *args) {
  tgpy_env *v = (tgpy_env *)self;
  int i;
  double st[4];
  if (!PyArg_ParseTuple(args, "i", &i)) return NULL;
  tg_status s = tg_env_cartpole_get_state(v->e, i, st);
  if (s != TG_OK) return tgpy_raise(s, "cartpole_get_state");
  return Py_BuildValue("(dddd)", st[0], st[1], st[2], st[3]);
}

static int need_trading(tgpy_env *v) {
  if (v->trading) return 0;
  PyErr_SetString(PyExc_TypeError, "not a trading environment");
  return -1;
}

static PyObject *env_trading_info(PyObject *self, PyObject *noargs) {
  (void)noargs;
  tgpy_env *v = (tgpy_env *)self;
  if (need_trading(v)) return NULL;
  tg_trading_info in;
  tg_status s = tg_env_trading_info(v->e, &in);
  if (s != TG_OK) return tgpy_raise(s, "trading_info");
  return Py_BuildValue("{s:i,s:i,s:L,s:L,s:L,s:L,s:L,s:d,s:d,s:i}", "window", in.window, "features", in.f, "rows",
                       (long long)in.rows, "first_bar", (long long)in.first_bar, "last_bar", (long long)in.last_bar,
                       "steps", (long long)in.steps, "episode_len", (long long)in.episode_len, "bars_per_year",
                       in.bars_per_year, "cost", in.cost, "omit_window", in.omit_window);
}

static PyObject *env_trading_bar(PyObject *self, PyObject *args) {
  tgpy_env *v = (tgpy_env *)self;
  int i;
  if (need_trading(v) || instance_of(v, args, "i", &i)) return NULL;
  int64_t row, ts;
  tg_status s = tg_env_trading_bar(v->e, i, &row, &ts);
  if (s != TG_OK) return tgpy_raise(s, "trading_bar");
  return Py_BuildValue("(LL)", (long long)row, (long long)ts);
}

static PyObject *env_trading_rows(PyObject *self, PyObject *arg) {
  tgpy_env *v = (tgpy_env *)self;
  if (need_trading(v)) return NULL;
  Py_buffer view;
  if (tgpy_buffer(arg, "rows", "q", 1, 1, &view)) return NULL;
  if (view.shape[0] != v->spec.n) {
    PyBuffer_Release(&view);
    return PyErr_Format(PyExc_ValueError, "rows: want %d items, got %zd", v->spec.n, view.shape[0]);
  }
  tg_status s = tg_env_trading_rows(v->e, (int64_t *)view.buf);
  PyBuffer_Release(&view);
  if (s != TG_OK) return tgpy_raise(s, "trading_rows");
  Py_RETURN_NONE;
}

static PyObject *env_trading_features(PyObject *self, PyObject *noargs) {
  (void)noargs;
  tgpy_env *v = (tgpy_env *)self;
  if (need_trading(v)) return NULL;
  const tg_tensor *t = tg_env_trading_features(v->e);
  if (!t) return tgpy_raise(TG_ERR_INVALID, "trading_features");
  Py_ssize_t shape[2] = {(Py_ssize_t)t->shape[0], (Py_ssize_t)(t->ndim > 1 ? t->shape[1] : 1)};
  return tgpy_array(self, t->data, "f", 4, 2, shape, 1);
}

static PyObject *env_episode_stats(PyObject *self, PyObject *args) {
  tgpy_env *v = (tgpy_env *)self;
  int i;
  if (need_trading(v) || instance_of(v, args, "i", &i)) return NULL;
  tg_trading_stats st;
  tg_status s = tg_env_trading_episode_stats(v->e, i, &st);
  if (s != TG_OK) return tgpy_raise(s, "episode_stats");
  return Py_BuildValue("{s:L,s:d,s:d,s:d,s:d,s:L,s:d,s:d,s:d}", "steps", (long long)st.steps, "total_log_return",
                       st.total_log_return, "sharpe", st.sharpe, "bh_log_return", st.bh_log_return, "bh_sharpe",
                       st.bh_sharpe, "trades", (long long)st.trades, "turnover", st.turnover, "exposure", st.exposure,
                       "bars_per_year", st.bars_per_year);
}

static PyObject *env_get_arrays(PyObject *self, void *closure) {
  (void)closure;
  return Py_NewRef(((tgpy_env *)self)->arrays);
}
static PyObject *env_get_n(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(((tgpy_env *)self)->spec.n);
}
static PyObject *env_get_obs_dim(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(((tgpy_env *)self)->spec.obs_dim);
}
static PyObject *env_get_n_actions(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(((tgpy_env *)self)->spec.n_actions);
}
static PyObject *env_get_action_range(PyObject *self, void *c) {
  (void)c;
  tgpy_env *v = (tgpy_env *)self;
  return Py_BuildValue("(dd)", (double)v->spec.action_lo, (double)v->spec.action_hi);
}
static PyObject *env_get_name(PyObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(tg_env_name(((tgpy_env *)self)->e));
}

static PyGetSetDef env_getset[] = {
    {"arrays", env_get_arrays, NULL, "dict of the step's buffers (obs, final_obs, reward, terminated, truncated, "
                                     "ep_return, ep_length, done_idx) as arrays; overwritten by every step", NULL},
    {"n", env_get_n, NULL, "instances stepped per call", NULL},
    {"obs_dim", env_get_obs_dim, NULL, "floats per observation", NULL},
    {"n_actions", env_get_n_actions, NULL, "discrete actions (0: continuous)", NULL},
    {"action_range", env_get_action_range, NULL, "(lo, hi) of a continuous action", NULL},
    {"name", env_get_name, NULL, "the environment's name", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef env_methods[] = {
    {"reset", env_reset, METH_NOARGS, "reset(): resets every instance into arrays['obs']."},
    {"step", env_step, METH_O,
     "step(actions) -> int: steps every instance (int32 [n], float32 [n] when continuous) into the arrays; returns "
     "how many episodes ended (those instances are already reset; final_obs holds their last observation; "
     "arrays['done_idx'] starts with their indices)."},
    {"try_step", env_try_step, METH_O,
     "try_step(actions) -> int | None: step(actions) when actions are a C-contiguous [n] array of the type step "
     "takes; None (nothing stepped) when they are not."},
    {"cartpole_set_state", env_cartpole_set_state, METH_VARARGS,
     "cartpole_set_state(i, (x, x_dot, theta, theta_dot)): test hook, sets instance i's float64 state."},
    {"cartpole_get_state", env_cartpole_get_state, METH_VARARGS,
     "cartpole_get_state(i) -> (x, x_dot, theta, theta_dot): test hook, instance i's float64 state."},
    {"trading_info", env_trading_info, METH_NOARGS, "trading_info() -> dict: sizes, the split's decision bars, cost."},
    {"trading_bar", env_trading_bar, METH_VARARGS, "trading_bar(i) -> (row, ts): instance i's current decision bar."},
    {"trading_rows", env_trading_rows, METH_O, "trading_rows(out): every instance's decision bar row into int64 [n]."},
    {"trading_features", env_trading_features, METH_NOARGS, "trading_features() -> Array: the normalised feature table."},
    {"episode_stats", env_episode_stats, METH_VARARGS, "episode_stats(i) -> dict: instance i's last episode's statistics."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject tgpy_EnvType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tickgrad._core.Env",
    .tp_basicsize = sizeof(tgpy_env),
    .tp_dealloc = env_dealloc,
    .tp_traverse = env_traverse,
    .tp_clear = env_clear,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A vectorised library environment (tg_env) with its step buffers; made by cartpole_env / trading_env.",
    .tp_methods = env_methods,
    .tp_getset = env_getset,
};

static PyObject *cartpole_env(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"n", "seed", "max_steps", NULL};
  int n, max_steps = 500;
  unsigned long long seed = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "iK|i", kwlist, &n, &seed, &max_steps)) return NULL;
  tg_env *e = NULL;
  tg_status s = tg_env_cartpole_new(n, (uint64_t)seed, max_steps, &e);
  if (s != TG_OK) return tgpy_raise(s, "CartPole");
  return env_wrap(e, 0);
}

static PyObject *trading_env(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"n",          "bars",     "window",     "cost_bps",      "slippage",    "split",
                           "episode_len", "continuous", "seed",     "features",      "tz",          "frac_train",
                           "frac_val",   "bars_per_year", "omit_window", NULL};
  tg_trading_cfg c = tg_trading_defaults();
  int n;
  PyObject *bars_obj;
  unsigned long long seed = c.seed;
  const char *features = NULL, *tz = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "iO|iddiipKzzdddp", kwlist, &n, &bars_obj, &c.window, &c.cost_bps,
                                   &c.slippage, &c.split, &c.episode_len, &c.continuous, &seed, &features, &tz,
                                   &c.frac_train, &c.frac_val, &c.bars_per_year, &c.omit_window))
    return NULL;
  const tg_bars *b = tgpy_bars_of(bars_obj, "bars");
  if (!b) return NULL;
  c.seed = (uint64_t)seed;
  c.features = features;
  c.tz = tz;
  tg_env *e = NULL;
  tg_status s;
  Py_BEGIN_ALLOW_THREADS s = tg_env_trading_new(n, b, &c, &e);
  Py_END_ALLOW_THREADS if (s != TG_OK) return tgpy_raise(s, "Trading");
  return env_wrap(e, 1);
}

PyMethodDef tgpy_env_methods[] = {
    {"cartpole_env", (PyCFunction)(void (*)(void))cartpole_env, METH_VARARGS | METH_KEYWORDS,
     "cartpole_env(n, seed, max_steps=500) -> Env: n CartPole-v1 instances (tg_env_cartpole_new)."},
    {"trading_env", (PyCFunction)(void (*)(void))trading_env, METH_VARARGS | METH_KEYWORDS,
     "trading_env(n, bars, window=32, cost_bps=1, slippage=0, split=0, episode_len=256, continuous=False, seed=1, "
     "features=None, tz=None, frac_train=0, frac_val=0, bars_per_year=0, omit_window=False) -> Env: n instances of "
     "the trading market over bars (tg_env_trading_new)."},
    {NULL, NULL, 0, NULL},
};

int tgpy_env_types(PyObject *m) {
  if (PyType_Ready(&tgpy_EnvType) < 0 || PyModule_AddFunctions(m, tgpy_agent_methods) < 0) return -1;
  return PyModule_AddObjectRef(m, "Env", (PyObject *)&tgpy_EnvType);
}
