/* Op checking against float64 references and finite differences (see op_check.h). */
#include "support/op_check.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/check.h"
#include "tickgrad/rng.h"

int64_t oc_numel(const oc_input *in) {
  int64_t n = 1;
  for (int i = 0; i < in->ndim; i++) n *= in->shape[i];
  return n;
}

typedef struct oc_data {
  double *vals[OC_MAX_IN];  /* [numel] each, the values as doubles */
  void *raw[OC_MAX_IN];     /* [numel] each, in the input's dtype */
} oc_data;

static void fill_inputs(const oc_case *c, unsigned long long seed, oc_data *d) {
  for (int k = 0; k < c->n_in; k++) {
    const oc_input *in = &c->in[k];
    int64_t n = oc_numel(in);
    d->vals[k] = calloc((size_t)(n ? n : 1), sizeof(double));
    d->raw[k] = calloc((size_t)(n ? n : 1), 8);
    for (int64_t e = 0; e < n; e++) {
      double u = tg_rng_uniform(seed, 1000 + (uint64_t)k, (uint64_t)e);
      if (in->dtype == TG_F32) {
        float v = (float)(in->lo + (in->hi - in->lo) * u);
        ((float *)d->raw[k])[e] = v;
        d->vals[k][e] = v;
      } else {
        int64_t v = (int64_t)floor(in->lo + (in->hi - in->lo) * u);
        if (v >= (int64_t)in->hi) v = (int64_t)in->hi - 1;
        if (in->dtype == TG_I32) ((int32_t *)d->raw[k])[e] = (int32_t)v;
        else ((int64_t *)d->raw[k])[e] = v;
        d->vals[k][e] = (double)v;
      }
    }
  }
}

static double objective(const oc_case *c, const oc_data *d, double *out, const double *w, int64_t n_out) {
  c->ref((const double *const *)d->vals, c->in, out, c->ctx);
  double j = 0;
  for (int64_t i = 0; i < n_out; i++) j += w[i] * out[i];
  return j;
}

static int close_enough(double got, double want, double tol) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= tol * (1.0 + fabs(want));
}

int oc_run(const oc_case *c, unsigned long long seed) {
  double fwd_tol = c->fwd_tol > 0 ? c->fwd_tol : 1e-5;
  double grad_tol = c->grad_tol > 0 ? c->grad_tol : 2e-3;
  int failed = 0, any_diff = 0;
  oc_data d;
  memset(&d, 0, sizeof d);
  fill_inputs(c, seed, &d);
  tg_store *store = tg_store_new(tg_cpu(0), seed);
  tg_graph *g = tg_graph_new(store, c->name);
  tg_tensor *leaves[OC_MAX_IN];
  for (int k = 0; k < c->n_in; k++) {
    const oc_input *in = &c->in[k];
    any_diff |= in->diff;
    leaves[k] = in->diff ? tg_param(g, in->name, in->ndim, in->shape, (tg_init){TG_INIT_ZEROS, 0, 0})
                         : tg_input(g, in->name, in->dtype, in->ndim, in->shape);
  }
  if (c->inference) any_diff = 0;
  tg_tensor *out = c->build(g, leaves, c->ctx);
  tg_plan_opts opts = tg_plan_defaults(tg_cpu(0));
  opts.training = !c->inference;
  opts.poison = 1;
  opts.guard_bytes = 64;
  tg_status st = out ? tg_graph_plan(g, &opts) : tg_graph_status(g);
  if (st != TG_OK) {
    fprintf(stderr, "[%s seed %llu] build/plan failed: %s\n", c->name, seed, tg_last_error());
    failed = 1;
    goto done;
  }
  for (int k = 0; k < c->n_in; k++) {
    const oc_input *in = &c->in[k];
    if (in->diff) {
      tg_tensor pv = tg_store_tensor(store, tg_store_find(store, in->name), 0);
      memcpy(pv.data, d.raw[k], (size_t)oc_numel(in) * sizeof(float));
    } else {
      tg_tensor t;
      tg_tensor_view(&t, in->name, tg_cpu(0), in->dtype, in->ndim, in->shape, d.raw[k]);
      if ((st = tg_graph_bind(g, in->name, &t)) != TG_OK) break;
    }
  }
  if (st == TG_OK) st = tg_graph_run(g);
  if (st == TG_OK) st = tg_graph_check_guards(g);
  if (st != TG_OK) {
    fprintf(stderr, "[%s seed %llu] run failed: %s\n", c->name, seed, tg_last_error());
    failed = 1;
    goto done;
  }
  int64_t n_out = tg_numel(out);
  double *want = calloc((size_t)(n_out ? n_out : 1), sizeof(double));
  double *w = calloc((size_t)(n_out ? n_out : 1), sizeof(double));
  float *wf = calloc((size_t)(n_out ? n_out : 1), sizeof(float));
  for (int64_t i = 0; i < n_out; i++) {
    wf[i] = 2.0f * tg_rng_uniform(seed, 77, (uint64_t)i) - 1.0f;
    w[i] = wf[i];
  }
  c->ref((const double *const *)d.vals, c->in, want, c->ctx);
  double worst = 0;
  int64_t worst_i = -1;
  for (int64_t i = 0; i < n_out; i++) {
    double got = out->dtype == TG_F32 ? ((float *)out->data)[i]
               : out->dtype == TG_I32 ? ((int32_t *)out->data)[i] : (double)((int64_t *)out->data)[i];
    double tol = out->dtype == TG_F32 ? fwd_tol : 0;
    if (!close_enough(got, want[i], tol)) {
      double err = isnan(got) ? INFINITY : fabs(got - want[i]);
      if (worst_i < 0 || err > worst) {
        worst = err;
        worst_i = i;
      }
    }
  }
  if (worst_i >= 0) {
    double got = out->dtype == TG_F32 ? ((float *)out->data)[worst_i]
               : out->dtype == TG_I32 ? ((int32_t *)out->data)[worst_i] : (double)((int64_t *)out->data)[worst_i];
    fprintf(stderr, "[%s seed %llu] forward: element %lld got %.9g want %.9g (tol %.1e)\n", c->name,
            seed, (long long)worst_i, got, want[worst_i], fwd_tol);
    failed = 1;
  }
  if (!failed && any_diff) {
    tg_store_zero_grads(store);
    st = tg_graph_backward_seeded(g, out, wf);
    if (st == TG_OK) st = tg_graph_check_guards(g);
    if (st != TG_OK) {
      fprintf(stderr, "[%s seed %llu] backward failed: %s\n", c->name, seed, tg_last_error());
      failed = 1;
    }
    double *scratch = calloc((size_t)(n_out ? n_out : 1), sizeof(double));
    for (int k = 0; k < c->n_in && !failed; k++) {
      const oc_input *in = &c->in[k];
      if (!in->diff) continue;
      tg_tensor gv = tg_store_tensor(store, tg_store_find(store, in->name), 1);
      const float *got = gv.data;
      for (int64_t e = 0; e < oc_numel(in); e++) {
        double x = d.vals[k][e], h = 1e-6 * (1.0 + fabs(x));
        d.vals[k][e] = x + h;
        double jp = objective(c, &d, scratch, w, n_out);
        d.vals[k][e] = x - h;
        double jm = objective(c, &d, scratch, w, n_out);
        d.vals[k][e] = x;
        double num = (jp - jm) / (2 * h);
        if (!close_enough(got[e], num, grad_tol)) {
          fprintf(stderr, "[%s seed %llu] gradient of '%s' element %lld: got %.9g, finite difference %.9g (tol %.1e)\n",
                  c->name, seed, in->name, (long long)e, got[e], num, grad_tol);
          failed = 1;
          break;
        }
      }
    }
    free(scratch);
  }
  free(want);
  free(w);
  free(wf);
done:
  tg_graph_free(g);
  tg_store_free(store);
  for (int k = 0; k < c->n_in; k++) {
    free(d.vals[k]);
    free(d.raw[k]);
  }
  if (failed) tg_test_failed++;
  else tg_test_passed++;
  return failed;
}
