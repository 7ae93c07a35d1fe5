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

/* One check of c. via: each differentiated input reaches the op through tg_scale(x, 1) (the same values), so the op
 * writes an activation's gradient, which a CPU kernel may start unzeroed (tg_kernel_args.grad_fresh), on top of
 * NaN poison: whatever the kernel fails to write shows in the gradient check. Returns 1 on failure. */
static int oc_run_once(const oc_case *c, unsigned long long seed, int via) {
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
    if (via && in->diff) leaves[k] = tg_scale(g, leaves[k], 1.0f);
  }
  if (c->inference) any_diff = 0;
  tg_tensor *out = c->build(g, leaves, c->ctx);
  tg_plan_opts opts = tg_plan_defaults(tg_cpu(0));
  opts.training = !c->inference;
  opts.poison = 1;
  opts.guard_bytes = 64;
  tg_status st = out ? tg_graph_plan(g, &opts) : tg_graph_status(g);
  if (st != TG_OK) {
    fprintf(stderr, "[%s seed %llu%s] build/plan failed: %s\n", c->name, seed, via ? " via scale" : "", tg_last_error());
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
    fprintf(stderr, "[%s seed %llu%s] run failed: %s\n", c->name, seed, via ? " via scale" : "", tg_last_error());
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
    fprintf(stderr, "[%s seed %llu%s] forward: element %lld got %.9g want %.9g (tol %.1e)\n", c->name,
            seed, via ? " via scale" : "", (long long)worst_i, got, want[worst_i], fwd_tol);
    failed = 1;
  }
  if (!failed && any_diff) {
    tg_store_zero_grads(store);
    st = tg_graph_backward_seeded(g, out, wf);
    if (st == TG_OK) st = tg_graph_check_guards(g);
    if (st != TG_OK) {
      fprintf(stderr, "[%s seed %llu%s] backward failed: %s\n", c->name, seed, via ? " via scale" : "",
              tg_last_error());
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
          fprintf(stderr, "[%s seed %llu%s] gradient of '%s' element %lld: got %.9g, finite difference %.9g (tol %.1e)\n",
                  c->name, seed, via ? " via scale" : "", in->name, (long long)e, got[e], num, grad_tol);
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
  return failed;
}

int oc_run(const oc_case *c, unsigned long long seed) {
  int failed = oc_run_once(c, seed, 0), any_diff = 0;
  for (int k = 0; k < c->n_in; k++) any_diff |= c->in[k].diff;
  if (!failed && any_diff && !c->inference) failed = oc_run_once(c, seed, 1);
  if (failed) tg_test_failed++;
  else tg_test_passed++;
  return failed;
}

oc_input oc_f32_input(const char *name, int ndim, const int64_t *shape, int diff, double lo, double hi) {
  oc_input in = {.name = name, .dtype = TG_F32, .ndim = ndim, .diff = diff, .lo = lo, .hi = hi};
  for (int i = 0; i < ndim; i++) in.shape[i] = shape[i];
  return in;
}

void oc_ref_copy(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  memcpy(out, in[0], (size_t)oc_numel(&spec[0]) * sizeof(double));
}

/* One input x (every in[k] of build and ref is x): forward against ref, then backward by the
 * adjoint identity <w, f(x)> = <J^T w, x>, exact for (piecewise) linear ops. */
void oc_large_check(const char *name, int ndim, const int64_t *shape, oc_build_fn build, oc_ref_fn ref,
                    const void *ctx) {
  tg_store *s = tg_store_new(tg_cpu(0), 99);
  tg_graph *g = tg_graph_new(s, name);
  tg_tensor *x = tg_param(g, "x", ndim, shape, (tg_init){TG_INIT_UNIFORM, -1.0f, 1.0f});
  tg_tensor *xs[OC_MAX_IN];
  oc_input spec[OC_MAX_IN];
  memset(spec, 0, sizeof spec);
  for (int k = 0; k < OC_MAX_IN; k++) {
    xs[k] = x;
    spec[k].name = "x";
    spec[k].ndim = ndim;
    for (int i = 0; i < ndim; i++) spec[k].shape[i] = shape[i];
  }
  tg_tensor *y = build(g, xs, ctx);
  tg_plan_opts opts = tg_plan_defaults(tg_cpu(0));
  opts.training = 1;
  tg_status st = y ? tg_graph_plan(g, &opts) : tg_graph_status(g);
  CHECK_MSG(st == TG_OK, "%s: %s", name, tg_last_error());
  if (st != TG_OK) goto done;
  CHECK_MSG((st = tg_graph_run(g)) == TG_OK, "%s: %s", name, tg_last_error());
  if (st != TG_OK) goto done;
  int64_t nx = oc_numel(&spec[0]), ny = tg_numel(y);
  const float *xv = tg_store_tensor(s, 0, 0).data; /* [nx] */
  double *xd = malloc((size_t)nx * sizeof(double)), *want = malloc((size_t)ny * sizeof(double));
  float *w = malloc((size_t)ny * sizeof(float));
  const double *ins[OC_MAX_IN];
  for (int64_t i = 0; i < nx; i++) xd[i] = xv[i];
  for (int k = 0; k < OC_MAX_IN; k++) ins[k] = xd;
  ref(ins, spec, want, ctx);
  int64_t bad = -1;
  for (int64_t i = 0; i < ny && bad < 0; i++) {
    double got = y->dtype == TG_I64 ? (double)((const int64_t *)y->data)[i] : ((const float *)y->data)[i];
    if (!(fabs(got - want[i]) <= (y->dtype == TG_I64 ? 0.0 : 1e-5 * (1.0 + fabs(want[i]))))) bad = i;
  }
  CHECK_MSG(bad < 0, "%s: forward element %lld differs from the reference", name, (long long)bad);
  if (y->dtype == TG_F32) {
    double lhs = 0.0, rhs = 0.0, mag = 0.0;
    for (int64_t i = 0; i < ny; i++) {
      w[i] = 2.0f * tg_rng_uniform(5, 6, (uint64_t)i) - 1.0f;
      lhs += (double)w[i] * ((const float *)y->data)[i];
      mag += fabs((double)w[i] * ((const float *)y->data)[i]);
    }
    CHECK_OK(tg_store_zero_grads(s));
    CHECK_OK(tg_graph_backward_seeded(g, y, w));
    const float *gx = tg_graph_grad(g, x);
    for (int64_t i = 0; gx && i < nx; i++) rhs += (double)gx[i] * xv[i];
    CHECK_MSG(gx && fabs(lhs - rhs) <= 1e-5 * (1.0 + mag), "%s: <w, y> = %.9g but <grad, x> = %.9g",
              name, lhs, rhs);
  }
  free(xd);
  free(want);
  free(w);
done:
  tg_graph_free(g);
  tg_store_free(s);
}

int oc_msg_has(const char *const *want) {
  const char *m = tg_last_error();
  for (int i = 0; want[i]; i++)
    if (!strstr(m, want[i])) {
      fprintf(stderr, "error message \"%s\" lacks \"%s\"\n", m, want[i]);
      return 0;
    }
  return 1;
}

void oc_expect_build_error(tg_graph *g, const tg_tensor *got, tg_status want, const char *what,
                           const char *const *need) {
  CHECK_MSG(got == NULL, "%s: builder returned a tensor", what);
  CHECK_MSG(tg_graph_status(g) == want, "%s: status %s, want %s (%s)", what,
            tg_status_name(tg_graph_status(g)), tg_status_name(want), tg_last_error());
  for (int i = 0; need && need[i]; i++)
    CHECK_MSG(strstr(tg_last_error(), need[i]) != NULL, "%s: message '%s' lacks '%s'", what,
              tg_last_error(), need[i]);
  tg_graph_free(g);
}
