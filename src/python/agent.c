/* tickgrad._core: DQN / PPO agent runs (tg_agent_run, as `tickgrad train --model dqn|ppo`), their environment's bars. */
#include <string.h>
#include "python/core.h"
#include "tickgrad/agent_run.h"
#include "tickgrad/rl_agents.h"

/* Copies a str member of d (if present and not None) into dst[cap]. */
static int dict_str(PyObject *d, const char *key, char *dst, size_t cap) {
  PyObject *v = PyDict_GetItemString(d, key); /* borrowed */
  if (!v || v == Py_None) return 0;
  Py_ssize_t n;
  const char *s = PyUnicode_Check(v) ? PyUnicode_AsUTF8AndSize(v, &n) : NULL;
  if (!s) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s: want a str, got %s", key, Py_TYPE(v)->tp_name);
    return -1;
  }
  if ((size_t)n >= cap) {
    PyErr_Format(PyExc_ValueError, "%s: longer than %zu characters", key, cap - 1);
    return -1;
  }
  memcpy(dst, s, (size_t)n + 1);
  return 0;
}

static int dict_long(PyObject *d, const char *key, long *dst) {
  PyObject *v = PyDict_GetItemString(d, key);
  if (!v || v == Py_None) return 0;
  if (!PyLong_Check(v) || PyBool_Check(v)) {
    PyErr_Format(PyExc_TypeError, "%s: want an int, got %s", key, Py_TYPE(v)->tp_name);
    return -1;
  }
  long x = PyLong_AsLong(v);
  if (x == -1 && PyErr_Occurred()) return -1;
  *dst = x;
  return 0;
}

static int dict_int(PyObject *d, const char *key, int *dst) {
  long x = *dst;
  if (dict_long(d, key, &x)) return -1;
  if (x < -2147483647L || x > 2147483647L) {
    PyErr_Format(PyExc_ValueError, "%s: %ld is out of range", key, x);
    return -1;
  }
  *dst = (int)x;
  return 0;
}

static int dict_double(PyObject *d, const char *key, double *dst) {
  PyObject *v = PyDict_GetItemString(d, key);
  if (!v || v == Py_None) return 0;
  double x = PyFloat_AsDouble(v);
  if (x == -1.0 && PyErr_Occurred()) {
    PyErr_Format(PyExc_TypeError, "%s: want a number, got %s", key, Py_TYPE(v)->tp_name);
    return -1;
  }
  *dst = x;
  return 0;
}

/* The environment settings of a dict (names of tg_agent_env; absent members keep their defaults). */
static int env_of(PyObject *d, tg_agent_env *e) {
  tg_agent_env_defaults(e);
  if (!PyDict_Check(d)) {
    PyErr_SetString(PyExc_TypeError, "env: want a dict of settings");
    return -1;
  }
  if (dict_str(d, "kind", e->kind, sizeof e->kind) || dict_int(d, "n", &e->n) ||
      dict_str(d, "data_tz", e->read.tz, sizeof e->read.tz) || dict_str(d, "tz", e->tz, sizeof e->tz) ||
      dict_int(d, "window", &e->window) || dict_int(d, "episode_len", &e->episode_len) ||
      dict_double(d, "cost_bps", &e->cost_bps) || dict_double(d, "slippage", &e->slippage) ||
      dict_double(d, "synth_signal", &e->synth_signal) || dict_long(d, "synth_bars", &e->synth_bars) ||
      dict_long(d, "synth_seed", &e->synth_seed) || dict_long(d, "seed", &e->seed) ||
      dict_int(d, "copy_windows", &e->copy_windows))
    return -1;
  PyObject *data = PyDict_GetItemString(d, "data");
  if (data && data != Py_None) {
    PyObject *seq = PySequence_Fast(data, "data: want a list of paths");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > TG_AGENT_MAX_DATA) {
      Py_DECREF(seq);
      PyErr_Format(PyExc_ValueError, "data: more than %d paths", TG_AGENT_MAX_DATA);
      return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
      const char *s = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
      if (!s || strlen(s) >= sizeof e->data[0]) {
        Py_DECREF(seq);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "data: a path is too long");
        return -1;
      }
      snprintf(e->data[i], sizeof e->data[0], "%s", s);
    }
    e->n_data = (int)n;
    Py_DECREF(seq);
  }
  return 0;
}

/* agent_env_bars(env: dict) -> Bars: the trading env's bars as an agent run builds them (files or the synthetic
 * market). */
static PyObject *py_agent_env_bars(PyObject *self, PyObject *arg) {
  (void)self;
  tg_agent_env e;
  if (env_of(arg, &e)) return NULL;
  tgpy_bars *o = PyObject_New(tgpy_bars, &tgpy_BarsType);
  if (!o) return NULL;
  tg_bars_init(&o->b);
  tg_status s;
  Py_BEGIN_ALLOW_THREADS s = tg_agent_env_bars(&e, NULL, &o->b);
  Py_END_ALLOW_THREADS if (s != TG_OK) {
    Py_DECREF(o);
    return tgpy_raise(s, "bars");
  }
  return (PyObject *)o;
}

/* agent_run(model, resume, env, settings, out, stop_after, device, threads, echo, on_line) -> (out, evaluated, eval):
 * model "dqn"/"ppo" and env a dict for a new run (resume None), or resume a run folder (model, env None);
 * settings a list of (config.json name, str value) applied with tg_agent_run_set. The log goes to sys.stdout
 * (echo) and to on_line (a callable given each line, or None). */
static PyObject *py_agent_run(PyObject *self, PyObject *args) {
  (void)self;
  const char *model, *resume, *out, *device;
  PyObject *env, *settings, *on_line;
  long stop_after;
  int threads, echo;
  if (!PyArg_ParseTuple(args, "zzOOzlzipO", &model, &resume, &env, &settings, &out, &stop_after, &device, &threads,
                        &echo, &on_line))
    return NULL;
  static tg_agent_run_config c; /* large; runs are serialised by the GIL check below */
  static int running;
  if (running) return PyErr_Format(PyExc_RuntimeError, "an agent run is already in progress in this process");
  tg_status s;
  if (resume) {
    s = tg_agent_run_load(resume, &c);
    if (s != TG_OK) return tgpy_raise(s, "resume");
  } else {
    if (!model) return PyErr_Format(PyExc_ValueError, "model: want dqn or ppo");
    s = tg_agent_run_defaults(model, &c);
    if (s != TG_OK) return tgpy_raise(s, "model");
    if (env_of(env, &c.env)) return NULL;
    if (out) snprintf(c.out, sizeof c.out, "%s", out);
  }
  if (settings != Py_None) {
    PyObject *seq = PySequence_Fast(settings, "settings: want a list of (name, value) pairs");
    if (!seq) return NULL;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
      const char *k, *v;
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "ss", &k, &v)) {
        Py_DECREF(seq);
        return NULL;
      }
      s = tg_agent_run_set(&c, k, v);
      if (s != TG_OK) {
        PyErr_Format(PyExc_ValueError, "settings: %s", tg_last_error());
        Py_DECREF(seq);
        return NULL;
      }
    }
    Py_DECREF(seq);
  }
  s = tg_agent_run_check(&c);
  if (s != TG_OK) return PyErr_Format(PyExc_ValueError, "settings: %s", tg_last_error());
  s = tg_device_choose(device ? device : "cpu", &c.device, NULL, 0);
  if (s != TG_OK) return tgpy_raise(s, "device");
  if (threads > 0 && (s = tg_set_threads(threads)) != TG_OK) return tgpy_raise(s, "threads");
  c.stop_after = stop_after;
  c.log = tgpy_py_file(echo ? "stdout" : NULL, on_line);
  if (!c.log) return NULL;
  static tg_agent_run_result r;
  memset(&r, 0, sizeof r);
  running = 1;
  tgpy_sigint sig;
  tgpy_sigint_begin(&sig);
  Py_BEGIN_ALLOW_THREADS s = tg_agent_run(&c, &r);
  fflush(c.log);
  Py_END_ALLOW_THREADS running = 0;
  int ctrl_c = tgpy_sigint_end(&sig);
  fclose(c.log); /* takes the GIL itself to flush: called with it held is fine (PyGILState_Ensure nests) */
  c.log = NULL;
  if (PyErr_Occurred()) return NULL; /* a KeyboardInterrupt or an error raised while logging */
  if (s != TG_OK) return tgpy_raise(s, NULL);
  PyObject *ev;
  if (!r.evaluated) {
    ev = Py_NewRef(Py_None);
  } else if (!r.eval.trading) {
    ev = Py_BuildValue("{s:d}", "mean_return", r.eval.mean_return);
  } else {
    ev = PyDict_New();
    const char *names[2] = {"val", "test"};
    for (int i = 0; ev && i < 2; i++) {
      const tg_trading_stats *t = &r.eval.split[i];
      PyObject *d = Py_BuildValue("{s:L,s:d,s:d,s:d,s:d,s:L,s:d,s:d}", "steps", (long long)t->steps,
                                  "total_log_return", t->total_log_return, "sharpe", t->sharpe, "bh_log_return",
                                  t->bh_log_return, "bh_sharpe", t->bh_sharpe, "trades", (long long)t->trades,
                                  "turnover", t->turnover, "exposure", t->exposure);
      if (!d || PyDict_SetItemString(ev, names[i], d)) Py_CLEAR(ev);
      Py_XDECREF(d);
    }
  }
  if (!ev) return NULL;
  return Py_BuildValue("(siNO)", r.out, r.evaluated, ev, r.interrupted && ctrl_c ? Py_True : Py_False);
}

/* policy_values(model, run, obs bytes, n, obs_dim, n_actions) -> (values bytes, value bytes | None): a trained run's
 * network on n observations: dqn Q [n, A]; ppo logits [n, A] (continuous: means [n, 1]) and values [n]. */
static PyObject *py_policy_values(PyObject *self, PyObject *args) {
  (void)self;
  const char *model, *run;
  Py_buffer obs;
  int n, obs_dim, n_actions;
  if (!PyArg_ParseTuple(args, "ssy*iii", &model, &run, &obs, &n, &obs_dim, &n_actions)) return NULL;
  int A = n_actions ? n_actions : 1, dqn = strcmp(model, "dqn") == 0;
  int fits = n > 0 && obs_dim > 0 && obs.len == (Py_ssize_t)n * obs_dim * (Py_ssize_t)sizeof(float);
  float *out = fits ? PyMem_Calloc((size_t)n * (size_t)(A + 1), sizeof(float)) : NULL;
  if (!out) {
    PyBuffer_Release(&obs);
    return fits ? PyErr_NoMemory()
                : PyErr_Format(PyExc_ValueError, "policy_values: obs must hold n * obs_dim float32 values (n >= 1)");
  }
  tg_env_spec spec = {.n = n, .obs_dim = obs_dim, .n_actions = n_actions};
  tg_status st;
  Py_BEGIN_ALLOW_THREADS
  if (dqn) {
    tg_dqn_policy *p = NULL;
    st = tg_dqn_policy_load(run, spec, tg_cpu(0), &p);
    if (st == TG_OK) st = tg_dqn_policy_values(p, obs.buf, out);
    tg_dqn_policy_free(p);
  } else {
    tg_ppo_policy *p = NULL;
    st = tg_ppo_policy_load(run, spec, tg_cpu(0), &p);
    if (st == TG_OK) st = tg_ppo_policy_values(p, obs.buf, out, out + (size_t)n * (size_t)A);
    tg_ppo_policy_free(p);
  }
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&obs);
  PyObject *res;
  Py_ssize_t nv = (Py_ssize_t)((size_t)n * (size_t)A * sizeof(float)), n1 = (Py_ssize_t)((size_t)n * sizeof(float));
  if (st != TG_OK) res = tgpy_raise(st, "policy_values");
  else if (dqn) res = Py_BuildValue("(y#O)", (const char *)out, nv, Py_None);
  else res = Py_BuildValue("(y#y#)", (const char *)out, nv, (const char *)(out + (size_t)n * (size_t)A), n1);
  PyMem_Free(out);
  return res;
}

PyMethodDef tgpy_agent_methods[] = {
    {"policy_values", py_policy_values, METH_VARARGS,
     "policy_values(model, run, obs, n, obs_dim, n_actions) -> (values, value): a trained DQN/PPO network's outputs."},
    {"agent_run", py_agent_run, METH_VARARGS,
     "agent_run(model, resume, env, settings, out, stop_after, device, threads, echo, on_line) -> (run folder, "
     "evaluated, evaluation dict or None, stopped by Ctrl-C): tg_agent_run, as `tickgrad train --model dqn|ppo` runs it."},
    {"agent_env_bars", py_agent_env_bars, METH_O,
     "agent_env_bars(env: dict) -> Bars: the trading env's bars as an agent run builds them."},
    {NULL, NULL, 0, NULL},
};
