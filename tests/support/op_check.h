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

/* Builds the op under test from the leaves in[0..n_in). */
typedef tg_tensor *(*oc_build_fn)(tg_graph *g, tg_tensor **in, const void *ctx);
/* float64 reference of the same op: in[k] holds input k's values (ints as doubles), out has
 * numel(output) entries. */
typedef void (*oc_ref_fn)(const double *const *in, const oc_input *spec, double *out, const void *ctx);

typedef struct oc_case {
  const char *name;
  int n_in;
  oc_input in[OC_MAX_IN];
  oc_build_fn build; /* see oc_build_fn */
  oc_ref_fn ref;     /* see oc_ref_fn */
  const void *ctx;
  double fwd_tol;  /* |got - want| <= tol * (1 + |want|); 0 -> 1e-5 */
  double grad_tol; /* same form for gradients;          0 -> 2e-3 */
  int inference;   /* 1: plan without training (dropout inactive, no gradient check) */
} oc_case;

/* Runs one case with the given seed: forward check, then (when any input has diff = 1) gradient
 * check with a random seed gradient, guard checks after run and backward; then, for a case with
 * gradients, all of it again with each differentiated input passed through tg_scale(x, 1), so that
 * the op's input gradients are activations' (which backward kernels may start unzeroed). Returns 0
 * on success; on failure prints the case, the seed and the worst element and returns 1. Adds one
 * to check.h's tally. */
int oc_run(const oc_case *c, unsigned long long seed);

/* numel of a spec's shape */
int64_t oc_numel(const oc_input *in);

/* An f32 input spec: shape[0..ndim) (shape may be NULL when ndim is 0), values uniform in [lo, hi). */
oc_input oc_f32_input(const char *name, int ndim, const int64_t *shape, int diff, double lo, double hi);

/* oc_ref_fn of an op that copies its input: out = in[0] (reshape, inactive dropout). */
void oc_ref_copy(const double *const *in, const oc_input *spec, double *out, const void *ctx);

/* The large-input check, for sizes past the kernels' parallel thresholds where finite differences
 * would be too slow. One f32 parameter x of the given shape (uniform in [-1, 1), store seed 99) is
 * every input: build and ref get in[k] = x for all k < OC_MAX_IN. Plans for training and runs,
 * then checks the forward against ref (i64 outputs exactly, others read as f32 within
 * 1e-5 * (1 + |want|)) and, for an f32 output, the backward by the adjoint identity
 * <w, f(x)> = <J^T w, x> with a random w, which is exact only for (piecewise) linear ops. Adds to
 * check.h's tally: one check for plan and one for run (stopping at the first failure), one for the
 * forward, and for f32 outputs three more (zero_grads, backward, identity). */
void oc_large_check(const char *name, int ndim, const int64_t *shape, oc_build_fn build, oc_ref_fn ref,
                    const void *ctx);

/* 1 when tg_last_error() contains every string of want (NULL-terminated); otherwise prints the
 * message and the first missing string to stderr and returns 0. Counts nothing. */
int oc_msg_has(const char *const *want);

/* Expects a builder to have failed: got == NULL, tg_graph_status(g) == want and tg_last_error()
 * containing every string of need (NULL-terminated; NULL for none). Adds one check for got, one
 * for the status and one per string of need, each labelled with what on failure. Frees g. */
void oc_expect_build_error(tg_graph *g, const tg_tensor *got, tg_status want, const char *what,
                           const char *const *need);

#endif
