/* Op tests for concat, slice, reshape, transpose and gather_rows: float64 references, builder
 * errors, and the run-time out-of-range index error of gather_rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "graph/graph_internal.h"
#include "support/check.h"
#include "support/op_check.h"
#include "tickgrad/rng.h"

static int norm(int dim, int ndim) { return dim < 0 ? dim + ndim : dim; }

static int64_t prod(const int64_t *shape, int lo, int hi) {
  int64_t p = 1;
  for (int i = lo; i < hi; i++) p *= shape[i];
  return p;
}

/* ---- concat ---- */

typedef struct concat_ctx {
  int n, dim;
} concat_ctx;

static tg_tensor *build_concat(tg_graph *g, tg_tensor **in, const void *ctx) {
  const concat_ctx *c = ctx;
  return tg_concat(g, c->n, in, c->dim);
}

/* in[k] [A, S_k, C] -> out [A, sum S_k, C] */
static void ref_concat(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const concat_ctx *c = ctx;
  int d = norm(c->dim, spec[0].ndim);
  int64_t A = prod(spec[0].shape, 0, d), C = prod(spec[0].shape, d + 1, spec[0].ndim), S = 0;
  for (int k = 0; k < c->n; k++) S += spec[k].shape[d];
  int64_t off = 0;
  for (int k = 0; k < c->n; k++) {
    int64_t Sk = spec[k].shape[d];
    for (int64_t i = 0; i < A; i++)
      for (int64_t s = 0; s < Sk; s++)
        for (int64_t j = 0; j < C; j++) out[(i * S + off + s) * C + j] = in[k][(i * Sk + s) * C + j];
    off += Sk;
  }
}

static void test_concat(unsigned long long seed) {
  static const concat_ctx first = {3, 0}, middle = {3, 1}, last = {2, -1}, ints = {2, 0};
  oc_case c0 = {.name = "concat dim 0: [2,3] [3,3] [1,3]", .n_in = 3,
                .in = {{"a", TG_F32, 2, {2, 3}, 1, -1, 1},
                       {"b", TG_F32, 2, {3, 3}, 1, -1, 1},
                       {"c", TG_F32, 2, {1, 3}, 1, -1, 1}},
                .build = build_concat, .ref = ref_concat, .ctx = &first};
  oc_case c1 = {.name = "concat dim 1: [2,2,3] [2,1,3] [2,3,3]", .n_in = 3,
                .in = {{"a", TG_F32, 3, {2, 2, 3}, 1, -1, 1},
                       {"b", TG_F32, 3, {2, 1, 3}, 1, -1, 1},
                       {"c", TG_F32, 3, {2, 3, 3}, 1, -1, 1}},
                .build = build_concat, .ref = ref_concat, .ctx = &middle};
  oc_case c2 = {.name = "concat dim -1: [2,3,2] [2,3,4]", .n_in = 2,
                .in = {{"a", TG_F32, 3, {2, 3, 2}, 1, -1, 1}, {"b", TG_F32, 3, {2, 3, 4}, 1, -1, 1}},
                .build = build_concat, .ref = ref_concat, .ctx = &last};
  oc_case c3 = {.name = "concat i64 dim 0: [2,3] [1,3]", .n_in = 2,
                .in = {{"a", TG_I64, 2, {2, 3}, 0, -50, 50}, {"b", TG_I64, 2, {1, 3}, 0, -50, 50}},
                .build = build_concat, .ref = ref_concat, .ctx = &ints};
  oc_case c4 = {.name = "concat i32 dim 0: [2,3] [1,3]", .n_in = 2,
                .in = {{"a", TG_I32, 2, {2, 3}, 0, -50, 50}, {"b", TG_I32, 2, {1, 3}, 0, -50, 50}},
                .build = build_concat, .ref = ref_concat, .ctx = &ints};
  oc_run(&c0, seed);
  oc_run(&c1, seed);
  oc_run(&c2, seed);
  oc_run(&c3, seed);
  oc_run(&c4, seed);
}

/* ---- slice ---- */

typedef struct slice_ctx {
  int dim;
  int64_t start, len;
} slice_ctx;

static tg_tensor *build_slice(tg_graph *g, tg_tensor **in, const void *ctx) {
  const slice_ctx *c = ctx;
  return tg_slice(g, in[0], c->dim, c->start, c->len);
}

/* x [A, S, C] -> out [A, len, C] */
static void ref_slice(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const slice_ctx *c = ctx;
  int d = norm(c->dim, spec[0].ndim);
  int64_t A = prod(spec[0].shape, 0, d), S = spec[0].shape[d], C = prod(spec[0].shape, d + 1, spec[0].ndim);
  for (int64_t i = 0; i < A; i++)
    for (int64_t s = 0; s < c->len; s++)
      for (int64_t j = 0; j < C; j++) out[(i * c->len + s) * C + j] = in[0][(i * S + c->start + s) * C + j];
}

static void test_slice(unsigned long long seed) {
  static const slice_ctx ctx[4] = {{0, 1, 2}, {-2, 0, 3}, {2, 2, 3}, {1, 3, 1}};
  static const char *names[4] = {"slice [3,4,5] dim 0 [1:3]", "slice [3,4,5] dim -2 [0:3]",
                                 "slice [3,4,5] dim 2 [2:5]", "slice i32 [3,4,5] dim 1 [3:4]"};
  for (int k = 0; k < 4; k++) {
    oc_case c = {.name = names[k], .n_in = 1,
                 .in = {{"x", k == 3 ? TG_I32 : TG_F32, 3, {3, 4, 5}, k != 3, -1, 1}},
                 .build = build_slice, .ref = ref_slice, .ctx = &ctx[k]};
    if (k == 3) c.in[0].lo = -100, c.in[0].hi = 100;
    oc_run(&c, seed);
  }
}

/* ---- reshape ---- */

typedef struct reshape_ctx {
  int ndim;
  int64_t shape[TG_MAX_DIMS];
} reshape_ctx;

static tg_tensor *build_reshape(tg_graph *g, tg_tensor **in, const void *ctx) {
  const reshape_ctx *c = ctx;
  return tg_reshape(g, in[0], c->ndim, c->shape);
}

/* reshape of a computed value (a full-length slice), then a view of that view */
static tg_tensor *build_reshape_chain(tg_graph *g, tg_tensor **in, const void *ctx) {
  const reshape_ctx *c = ctx;
  tg_tensor *s = tg_slice(g, in[0], 0, 0, in[0]->shape[0]);
  tg_tensor *r = tg_reshape(g, s, c->ndim, c->shape);
  return tg_reshape(g, r, 1, (const int64_t[]){-1});
}

static void test_reshape(unsigned long long seed) {
  static const reshape_ctx to2 = {2, {4, -1}}, to3 = {3, {-1, 2, 3}}, to1 = {1, {-1}};
  oc_case c0 = {.name = "reshape [2,3,4] -> [4,-1]", .n_in = 1,
                .in = {{"x", TG_F32, 3, {2, 3, 4}, 1, -1, 1}},
                .build = build_reshape, .ref = oc_ref_copy, .ctx = &to2};
  oc_case c1 = {.name = "reshape [12] -> [-1,2,3]", .n_in = 1,
                .in = {{"x", TG_F32, 1, {12}, 1, -1, 1}},
                .build = build_reshape, .ref = oc_ref_copy, .ctx = &to3};
  oc_case c2 = {.name = "reshape i64 [3,4] -> [-1]", .n_in = 1,
                .in = {{"x", TG_I64, 2, {3, 4}, 0, -100, 100}},
                .build = build_reshape, .ref = oc_ref_copy, .ctx = &to1};
  oc_case c3 = {.name = "slice -> reshape [4,-1] -> reshape [-1]", .n_in = 1,
                .in = {{"x", TG_F32, 3, {2, 3, 4}, 1, -1, 1}},
                .build = build_reshape_chain, .ref = oc_ref_copy, .ctx = &to2};
  oc_run(&c3, seed);
  oc_run(&c0, seed);
  oc_run(&c1, seed);
  oc_run(&c2, seed);
}

/* ---- transpose ---- */

typedef struct transpose_ctx {
  int d0, d1;
} transpose_ctx;

static tg_tensor *build_transpose(tg_graph *g, tg_tensor **in, const void *ctx) {
  const transpose_ctx *c = ctx;
  return tg_transpose(g, in[0], c->d0, c->d1);
}

/* out[.., j, .., i, ..] = x[.., i, .., j, ..] by coordinates */
static void ref_transpose(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const transpose_ctx *c = ctx;
  int nd = spec[0].ndim, d0 = norm(c->d0, nd), d1 = norm(c->d1, nd);
  int64_t oshape[TG_MAX_DIMS];
  for (int i = 0; i < nd; i++) oshape[i] = spec[0].shape[i];
  oshape[d0] = spec[0].shape[d1];
  oshape[d1] = spec[0].shape[d0];
  int64_t n = oc_numel(&spec[0]);
  for (int64_t e = 0; e < n; e++) {
    int64_t coord[TG_MAX_DIMS], rem = e;
    for (int i = nd - 1; i >= 0; i--) {
      coord[i] = rem % oshape[i];
      rem /= oshape[i];
    }
    int64_t t = coord[d0];
    coord[d0] = coord[d1];
    coord[d1] = t;
    int64_t src = 0;
    for (int i = 0; i < nd; i++) src = src * spec[0].shape[i] + coord[i];
    out[e] = in[0][src];
  }
}

static void test_transpose(unsigned long long seed) {
  static const transpose_ctx ctx[5] = {{0, 1}, {0, 2}, {1, 2}, {-1, 0}, {1, 1}};
  static const char *names[5] = {"transpose [2,3,4] (0,1)", "transpose [2,3,4] (0,2)",
                                 "transpose [2,3,4] (1,2)", "transpose [2,3,4] (-1,0)",
                                 "transpose [2,3,4] (1,1)"};
  for (int k = 0; k < 5; k++) {
    oc_case c = {.name = names[k], .n_in = 1, .in = {{"x", TG_F32, 3, {2, 3, 4}, 1, -1, 1}},
                 .build = build_transpose, .ref = ref_transpose, .ctx = &ctx[k]};
    oc_run(&c, seed);
  }
  oc_case c4 = {.name = "transpose i32 [2,3,2,2] (1,3)", .n_in = 1,
                .in = {{"x", TG_I32, 4, {2, 3, 2, 2}, 0, -100, 100}},
                .build = build_transpose, .ref = ref_transpose, .ctx = &(transpose_ctx){1, 3}};
  oc_run(&c4, seed);
  oc_case c5 = {.name = "transpose [2,3,2,4] (1,2)", .n_in = 1,
                .in = {{"x", TG_F32, 4, {2, 3, 2, 4}, 1, -1, 1}},
                .build = build_transpose, .ref = ref_transpose, .ctx = &(transpose_ctx){1, 2}};
  oc_run(&c5, seed);
}

/* ---- gather_rows ---- */

static tg_tensor *build_gather(tg_graph *g, tg_tensor **in, const void *ctx) {
  (void)ctx;
  return tg_gather_rows(g, in[0], in[1]);
}

/* table [V, D], idx [N] -> out [N, D] */
static void ref_gather(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  (void)ctx;
  int64_t D = spec[0].shape[1], N = oc_numel(&spec[1]);
  for (int64_t i = 0; i < N; i++) {
    int64_t row = (int64_t)in[1][i];
    for (int64_t j = 0; j < D; j++) out[i * D + j] = in[0][row * D + j];
  }
}

static void test_gather(unsigned long long seed) {
  /* 8 indices into 5 rows and 7 into 3: repeats are certain, so backward must accumulate. */
  oc_case c0 = {.name = "gather_rows [5,3] by i32 [2,4]", .n_in = 2,
                .in = {{"table", TG_F32, 2, {5, 3}, 1, -1, 1}, {"idx", TG_I32, 2, {2, 4}, 0, 0, 5}},
                .build = build_gather, .ref = ref_gather};
  oc_case c1 = {.name = "gather_rows [3,4] by i64 [7]", .n_in = 2,
                .in = {{"table", TG_F32, 2, {3, 4}, 1, -1, 1}, {"idx", TG_I64, 1, {7}, 0, 0, 3}},
                .build = build_gather, .ref = ref_gather};
  oc_case c2 = {.name = "gather_rows [4,2] by i64 [2,2,3]", .n_in = 2,
                .in = {{"table", TG_F32, 2, {4, 2}, 1, -1, 1}, {"idx", TG_I64, 3, {2, 2, 3}, 0, 0, 4}},
                .build = build_gather, .ref = ref_gather};
  oc_run(&c0, seed);
  oc_run(&c1, seed);
  oc_run(&c2, seed);
}

/* Run time: an index outside [0, V) fails the run with the node, position and value. */
static void test_gather_index_error(unsigned long long seed) {
  tg_store *s = tg_store_new(tg_cpu(0), seed);
  tg_graph *g = tg_graph_new(s, "gather_err");
  int64_t tshape[2] = {4, 3}, ishape[2] = {2, 3};
  tg_tensor *table = tg_param(g, "table", 2, tshape, (tg_init){TG_INIT_NORMAL, 0.0f, 1.0f});
  tg_tensor *idx = tg_input(g, "idx", TG_I64, 2, ishape);
  tg_tensor *out = tg_gather_rows(g, table, idx);
  CHECK(out != NULL);
  tg_plan_opts opts = tg_plan_defaults(tg_cpu(0));
  CHECK_OK(tg_graph_plan(g, &opts));
  if (!out || tg_graph_status(g) != TG_OK) goto done;

  int64_t bad[6] = {0, 1, 3, 2, 7, 0}; /* [2, 3]: 7 at [1, 1] */
  tg_tensor t;
  CHECK_OK(tg_tensor_view(&t, "idx", tg_cpu(0), TG_I64, 2, ishape, bad));
  CHECK_OK(tg_graph_bind(g, "idx", &t));
  tg_status st = tg_graph_run(g);
  const char *m = tg_last_error();
  CHECK_MSG(st != TG_OK, "run with index 7 into 4 rows succeeded");
  CHECK_MSG(strstr(m, out->name) && strstr(m, "[1, 1]") && strstr(m, "7"),
            "message should name '%s', position [1, 1] and value 7: %s", out->name, m);

  int64_t neg[6] = {0, 1, -1, 2, 3, 0}; /* -1 at [0, 2] */
  CHECK_OK(tg_tensor_view(&t, "idx", tg_cpu(0), TG_I64, 2, ishape, neg));
  CHECK_OK(tg_graph_bind(g, "idx", &t));
  st = tg_graph_run(g);
  m = tg_last_error();
  CHECK_MSG(st != TG_OK, "run with index -1 succeeded");
  CHECK_MSG(strstr(m, "[0, 2]") && strstr(m, "-1"), "message should name [0, 2] and -1: %s", m);

  int64_t good[6] = {3, 1, 3, 2, 0, 0};
  CHECK_OK(tg_tensor_view(&t, "idx", tg_cpu(0), TG_I64, 2, ishape, good));
  CHECK_OK(tg_graph_bind(g, "idx", &t));
  CHECK_OK(tg_graph_run(g));
  const float *w = tg_store_tensor(s, 0, 0).data, *y = out->data; /* [4, 3], [2, 3, 3] */
  int same = 1;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 3; j++) same &= y[i * 3 + j] == w[good[i] * 3 + j];
  CHECK_MSG(same, "gathered rows differ from the table after a failed run");
done:
  tg_graph_free(g);
  tg_store_free(s);
}

/* ---- large cases: the OpenMP paths ---- */

/* gather_rows [50, 40] by 1000 i32 indices: every row repeats; backward by column blocks */
static void test_gather_large(void) {
  enum { V = 50, D = 40, N = 1000 };
  tg_store *s = tg_store_new(tg_cpu(0), 3);
  tg_graph *g = tg_graph_new(s, "gather_large");
  int64_t ts[2] = {V, D}, is[1] = {N};
  tg_tensor *table = tg_param(g, "table", 2, ts, (tg_init){TG_INIT_UNIFORM, -1.0f, 1.0f});
  tg_tensor *idx = tg_input(g, "idx", TG_I32, 1, is);
  tg_tensor *y = tg_gather_rows(g, table, idx);
  tg_plan_opts opts = tg_plan_defaults(tg_cpu(0));
  opts.training = 1;
  CHECK_OK(tg_graph_plan(g, &opts));
  int32_t *iv = malloc(N * sizeof(int32_t));        /* [N] */
  float *w = malloc((size_t)N * D * sizeof(float)); /* [N, D] */
  double *want = calloc((size_t)V * D, sizeof(double));
  if (!iv || !w || !want || !y || tg_graph_status(g) != TG_OK) goto done;
  for (int i = 0; i < N; i++) iv[i] = (int32_t)((i * 7919) % V);
  tg_tensor t;
  CHECK_OK(tg_tensor_view(&t, "idx", tg_cpu(0), TG_I32, 1, is, iv));
  CHECK_OK(tg_graph_bind(g, "idx", &t));
  CHECK_OK(tg_graph_run(g));
  const float *tv = tg_store_tensor(s, 0, 0).data, *yv = y->data; /* [V, D], [N, D] */
  int fwd_bad = 0;
  for (int i = 0; i < N; i++)
    for (int c = 0; c < D; c++) fwd_bad += yv[i * D + c] != tv[iv[i] * D + c];
  CHECK_MSG(fwd_bad == 0, "gather_large: %d forward elements differ", fwd_bad);
  for (int e = 0; e < N * D; e++) w[e] = 2.0f * tg_rng_uniform(8, 9, (uint64_t)e) - 1.0f;
  for (int i = 0; i < N; i++)
    for (int c = 0; c < D; c++) want[iv[i] * D + c] += w[i * D + c];
  CHECK_OK(tg_store_zero_grads(s));
  CHECK_OK(tg_graph_backward_seeded(g, y, w));
  const float *gt = tg_graph_grad(g, table);
  int bwd_bad = 0;
  for (int e = 0; gt && e < V * D; e++) bwd_bad += fabs(gt[e] - want[e]) > 1e-4 * (1.0 + fabs(want[e]));
  CHECK_MSG(gt && bwd_bad == 0, "gather_large: %d gradient elements differ", bwd_bad);
done:
  free(iv);
  free(w);
  free(want);
  tg_graph_free(g);
  tg_store_free(s);
}

static void test_large(void) {
  static const concat_ctx cat = {3, 1};
  static const slice_ctx sl = {1, 100, 1000};
  static const transpose_ctx tr = {0, 2}, tr2 = {1, 2};
  oc_large_check("concat (x, x, x) dim 1 of [40,300,3]", 3, (const int64_t[]){40, 300, 3}, build_concat,
                 ref_concat, &cat);
  oc_large_check("slice [40,2000] dim 1 [100:1100]", 2, (const int64_t[]){40, 2000}, build_slice,
                 ref_slice, &sl);
  oc_large_check("transpose [8,70,80] (0,2)", 3, (const int64_t[]){8, 70, 80}, build_transpose,
                 ref_transpose, &tr);
  oc_large_check("transpose [4,50,60,3] (1,2)", 4, (const int64_t[]){4, 50, 60, 3}, build_transpose,
                 ref_transpose, &tr2);
  test_gather_large();
}

/* ---- builder errors ---- */

typedef tg_tensor *(*bad_build)(tg_graph *g, tg_tensor *a, tg_tensor *b);

/* Builds one bad node on a fresh graph from a [2, 3] f32 and a [2, 4] f32 input; expects status
 * want (TG_OK: any error), and a message naming every word in must (NULL-terminated). */
static void expect_build_error(const char *what, bad_build f, tg_status want, const char *const *must) {
  tg_graph *g = tg_graph_new(NULL, "errors");
  int64_t sa[2] = {2, 3}, sb[2] = {2, 4};
  tg_tensor *a = tg_input(g, "lhs", TG_F32, 2, sa), *b = tg_input(g, "rhs", TG_F32, 2, sb);
  tg_tensor *y = f(g, a, b);
  const char *m = tg_last_error();
  tg_status st = tg_graph_status(g);
  CHECK_MSG(y == NULL && st != TG_OK && (want == TG_OK || st == want), "%s: got %p, status %s (want %s)",
            what, (void *)y, tg_status_name(st), tg_status_name(want));
  for (int i = 0; must && must[i]; i++)
    CHECK_MSG(strstr(m, must[i]) != NULL, "%s: message lacks '%s': %s", what, must[i], m);
  /* the error is sticky: a good builder afterwards returns NULL and keeps the first status */
  CHECK(tg_transpose(g, a, 0, 1) == NULL && tg_graph_status(g) == st);
  tg_graph_free(g);
}

static tg_tensor *bad_concat_shape(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  tg_tensor *xs[2] = {a, b};
  return tg_concat(g, 2, xs, 0);
}
static tg_tensor *bad_concat_dim(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  tg_tensor *xs[2] = {a, b};
  return tg_concat(g, 2, xs, 2);
}
static tg_tensor *bad_concat_null(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  tg_tensor *xs[3] = {a, NULL, b};
  return tg_concat(g, 3, xs, 1);
}
static tg_tensor *bad_concat_count(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  tg_tensor *xs[2] = {a, b};
  return tg_concat(g, 0, xs, 0);
}
static tg_tensor *bad_slice_range(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  (void)b;
  return tg_slice(g, a, 1, 2, 2);
}
static tg_tensor *bad_slice_start(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  (void)b;
  return tg_slice(g, a, 0, -1, 1);
}
static tg_tensor *bad_slice_dim(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  (void)b;
  return tg_slice(g, a, -3, 0, 1);
}
static tg_tensor *bad_reshape_numel(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  (void)b;
  int64_t s[2] = {4, 2};
  return tg_reshape(g, a, 2, s);
}
static tg_tensor *bad_reshape_infer(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  (void)b;
  int64_t s[2] = {4, -1};
  return tg_reshape(g, a, 2, s);
}
static tg_tensor *bad_reshape_two(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  (void)b;
  int64_t s[3] = {-1, 3, -1};
  return tg_reshape(g, a, 3, s);
}
static tg_tensor *bad_transpose_dim(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  (void)b;
  return tg_transpose(g, a, 0, 2);
}
static tg_tensor *bad_gather_idx(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  return tg_gather_rows(g, a, b); /* f32 indices */
}
static tg_tensor *bad_gather_table(tg_graph *g, tg_tensor *a, tg_tensor *b) {
  (void)b;
  int64_t s[1] = {5};
  tg_tensor *idx = tg_input(g, "ids", TG_I32, 1, s);
  tg_tensor *t3 = tg_reshape(g, a, 3, (const int64_t[]){1, 2, 3});
  return tg_gather_rows(g, t3, idx);
}

static void test_builder_errors(void) {
  expect_build_error("concat shapes", bad_concat_shape, TG_ERR_SHAPE,
                     (const char *const[]){"concat", "lhs", "rhs", "[2, 3]", "[2, 4]", NULL});
  expect_build_error("concat dim", bad_concat_dim, TG_ERR_SHAPE,
                     (const char *const[]){"concat", "lhs", NULL});
  expect_build_error("concat NULL input", bad_concat_null, TG_OK, NULL);
  expect_build_error("concat count", bad_concat_count, TG_ERR_INVALID, (const char *const[]){"concat", NULL});
  expect_build_error("slice range", bad_slice_range, TG_ERR_SHAPE,
                     (const char *const[]){"slice", "lhs", "[2, 3]", NULL});
  expect_build_error("slice start", bad_slice_start, TG_ERR_SHAPE, (const char *const[]){"slice", NULL});
  expect_build_error("slice dim", bad_slice_dim, TG_ERR_SHAPE, (const char *const[]){"slice", "lhs", NULL});
  expect_build_error("reshape numel", bad_reshape_numel, TG_ERR_SHAPE,
                     (const char *const[]){"reshape", "lhs", "[2, 3]", NULL});
  expect_build_error("reshape infer", bad_reshape_infer, TG_ERR_SHAPE, (const char *const[]){"reshape", NULL});
  expect_build_error("reshape two -1", bad_reshape_two, TG_ERR_SHAPE, (const char *const[]){"reshape", NULL});
  expect_build_error("transpose dim", bad_transpose_dim, TG_ERR_SHAPE,
                     (const char *const[]){"transpose", "lhs", NULL});
  expect_build_error("gather f32 idx", bad_gather_idx, TG_ERR_SHAPE,
                     (const char *const[]){"gather_rows", "rhs", "f32", NULL});
  expect_build_error("gather 3-D table", bad_gather_table, TG_ERR_SHAPE,
                     (const char *const[]){"gather_rows", NULL});
}

/* Negative dims are normalised into attr; reshape infers its -1 entry. */
static void test_builder_attrs(void) {
  tg_graph *g = tg_graph_new(NULL, "attrs");
  int64_t s[3] = {2, 3, 4};
  tg_tensor *x = tg_input(g, "x", TG_F32, 3, s);
  tg_tensor *xs[2] = {x, x};
  tg_tensor *c = tg_concat(g, 2, xs, -1);
  tg_tensor *sl = tg_slice(g, x, -2, 1, 2);
  tg_tensor *t = tg_transpose(g, x, -1, 0);
  tg_tensor *r = tg_reshape(g, x, 2, (const int64_t[]){-1, 6});
  CHECK_OK(tg_graph_status(g));
  if (c && sl && t && r) {
    CHECK(tg_node_of(c)->attr.i[0] == 2 && c->shape[2] == 8 && c->shape[0] == 2);
    CHECK(tg_node_of(sl)->attr.i[0] == 1 && tg_node_of(sl)->attr.i[1] == 1 &&
          tg_node_of(sl)->attr.i[2] == 2 && sl->shape[1] == 2);
    CHECK(tg_node_of(t)->attr.i[0] == 2 && tg_node_of(t)->attr.i[1] == 0);
    CHECK(t->shape[0] == 4 && t->shape[1] == 3 && t->shape[2] == 2);
    CHECK(r->ndim == 2 && r->shape[0] == 4 && r->shape[1] == 6);
  }
  tg_graph_free(g);
}

int main(void) {
  unsigned long long seed = tg_test_seed(20240611ull);
  test_concat(seed);
  test_slice(seed);
  test_transpose(seed);
  test_gather(seed);
  test_gather_index_error(seed);
  test_large();
  test_builder_errors();
  test_builder_attrs();
  test_reshape(seed); /* last: views of leaves depend most on the planner */
  return tg_test_finish();
}
