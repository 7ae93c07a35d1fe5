/* Op checking: forward against a float64 reference, backward against central finite differences of
 * that reference, with NaN-poisoned outputs and guard bytes around every arena buffer. */
#ifndef TG_TEST_OP_CHECK_H
#define TG_TEST_OP_CHECK_H

#include "tickgrad/graph.h"

#define OC_MAX_IN 8

typedef struct oc_input {
  const char *name;
  tg_dtype dtype;
  int ndim;
  int64_t shape[TG_MAX_DIMS];
  int diff;      /* 1: a parameter whose gradient is checked; 0: a bound input */
  double lo, hi; /* f32: uniform in [lo, hi); i32/i64: integers in [lo, hi) */
} oc_input;

typedef struct oc_case {
  const char *name;
  int n_in;
  oc_input in[OC_MAX_IN];
  /* Builds the op under test from the leaves in[0..n_in). */
  tg_tensor *(*build)(tg_graph *g, tg_tensor **in, const void *ctx);
  /* float64 reference of the same op: in[k] holds input k's values (ints as doubles), out has
   * numel(output) entries. */
  void (*ref)(const double *const *in, const oc_input *spec, double *out, const void *ctx);
  const void *ctx;
  double fwd_tol;  /* |got - want| <= tol * (1 + |want|); 0 -> 1e-5 */
  double grad_tol; /* same form for gradients;          0 -> 2e-3 */
  int inference;   /* 1: plan without training (dropout inactive, no gradient check) */
} oc_case;

/* Runs one case with the given seed: forward check, then (when any input has diff = 1) gradient
 * check with a random seed gradient, guard checks after run and backward. Returns 0 on success;
 * on failure prints the case, the seed and the worst element and returns 1. Adds to check.h's
 * tally. */
int oc_run(const oc_case *c, unsigned long long seed);

/* numel of a spec's shape */
int64_t oc_numel(const oc_input *in);

#endif
