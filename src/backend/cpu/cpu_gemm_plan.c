/* Plan-time GEMM preparation: each matmul, linear and stacked_linear node's products as oneDNN primitives. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/cpu_gemm_plan.h"
#include "backend/cpu/cpu_kernels.h"
#include "base/alloc.h"
#include "ops/matmul_dims.h"

typedef enum { GEMM_AUTO, GEMM_OPENBLAS, GEMM_ONEDNN } gemm_mode;

/* TICKGRAD_GEMM: auto (default), openblas or onednn; -1 with the error set for anything else. */
static int gemm_mode_get(void) {
  const char *v = getenv("TICKGRAD_GEMM");
  if (!v || !*v || strcmp(v, "auto") == 0) return GEMM_AUTO;
  if (strcmp(v, "openblas") == 0) return GEMM_OPENBLAS;
  if (strcmp(v, "onednn") == 0) return GEMM_ONEDNN;
  tg_error(TG_ERR_INVALID, "TICKGRAD_GEMM=%s: expected auto, openblas or onednn", v);
  return -1;
}

/* A shape with strides given as (batch, row, column) triples. */
static tg_gemm_shape shape(int64_t batch, int64_t m, int64_t n, int64_t k, const int64_t *as, const int64_t *bs,
                           const int64_t *cs, int accumulate) {
  tg_gemm_shape s;
  memset(&s, 0, sizeof s);
  s.batch = batch, s.m = m, s.n = n, s.k = k;
  memcpy(s.a_st, as, sizeof s.a_st);
  memcpy(s.b_st, bs, sizeof s.b_st);
  memcpy(s.c_st, cs, sizeof s.c_st);
  s.accumulate = accumulate;
  return s;
}

/* The products of one node: forward, and the gradients its backward computes (want_* 0: not needed). */
typedef struct node_gemms {
  tg_gemm_shape fwd, d_a, d_b;
  int want_a, want_b, has_b; /* has_b 0: the second gradient cannot be one primitive (OpenBLAS does it) */
  int set_a, set_b;          /* 1: that gradient may start fresh (tg_cpu_bwd_fresh), so a writing twin is planned */
  int f32_only;              /* 1: no packed bf16 primitives for this node */
} node_gemms;

/* s adds one bias [nout] to every row of C (bias_st[0] = 0: shared by the batches). */
static void shared_bias(tg_gemm_shape *s, int64_t nout) {
  s->bias = 1;
  memcpy(s->bias_st, (int64_t[]){0, nout, 1}, sizeof s->bias_st);
}

static void linear_gemms(const tg_kernel_args *a, int64_t rows, int64_t nin, int64_t nout, node_gemms *g) {
  g->fwd = shape(1, rows, nout, nin, (int64_t[]){rows * nin, nin, 1}, (int64_t[]){nout * nin, 1, nin},
                 (int64_t[]){rows * nout, nout, 1}, 0);
  if (a->attr->i[0] && a->n_in > 2) shared_bias(&g->fwd, nout);
  /* dx [rows, in] += dy [rows, out] w [out, in]; dw [out, in] += dy^T x */
  g->d_a = shape(1, rows, nin, nout, (int64_t[]){rows * nout, nout, 1}, (int64_t[]){nout * nin, nin, 1},
                 (int64_t[]){rows * nin, nin, 1}, 1);
  g->d_b = shape(1, nout, nin, rows, (int64_t[]){rows * nout, 1, nout}, (int64_t[]){rows * nin, nin, 1},
                 (int64_t[]){nout * nin, nin, 1}, 1);
  g->has_b = 1;
}

static void stacked_gemms(const tg_kernel_args *a, int64_t rows, int64_t G, int64_t nin, int64_t nout, node_gemms *g) {
  /* group j: y[:, j] [rows, out] (row stride G out) = x[:, j] [rows, in] (row stride G in) w[j]^T, added to b[j]
   * where the kernel wrote it first (oneDNN has only a reference matmul for a bias that differs per batch); one
   * group's bias goes into the primitive, as linear's */
  int bias = a->attr->i[0] && a->n_in > 2;
  g->fwd = shape(G, rows, nout, nin, (int64_t[]){nin, G * nin, 1}, (int64_t[]){nout * nin, 1, nin},
                 (int64_t[]){nout, G * nout, 1}, bias && G > 1);
  if (bias && G == 1) shared_bias(&g->fwd, nout);
  g->d_a = shape(G, rows, nin, nout, (int64_t[]){nout, G * nout, 1}, (int64_t[]){nout * nin, nin, 1},
                 (int64_t[]){nin, G * nin, 1}, 1);
  g->d_b = shape(G, nout, nin, rows, (int64_t[]){nout, 1, G * nout}, (int64_t[]){nin, G * nin, 1},
                 (int64_t[]){nout * nin, nin, 1}, 1);
  g->has_b = 1;
}

static void matmul_gemms(const tg_mm_dims *d, node_gemms *g) {
  int flat = d->sb == 0 && !d->ta; /* shared b, untransposed a: the batches are just more rows */
  int64_t batch = flat ? 1 : d->batch, m = flat ? d->batch * d->m : d->m;
  int64_t opa[3], opb[3], c[3];
  tg_mm_op_strides(d, opa, opb, c);
  int64_t opa_t[3] = {opa[0], opa[2], opa[1]}, opb_t[3] = {opb[0], opb[2], opb[1]};
  g->fwd = shape(batch, m, d->n, d->k, opa, opb, c, 0);
  /* d op(A) [m, k] += dC op(B)^T, written where A is stored */
  g->d_a = shape(batch, m, d->k, d->n, c, opb_t, opa, 1);
  /* d op(B) [k, n] += op(A)^T dC; with a shared B that sums over the batches, one product only when flat */
  g->has_b = d->sb != 0 || flat;
  g->d_b = shape(batch, d->k, d->n, m, opa_t, c, opb, 1);
  /* oneDNN 2.6's bf16 brgemm gives a wrong d op(B) for a transposed A on AVX-512 and AMX (seen on a Xeon with
   * AMX-BF16: test_bf16_gemm's tn and tt cases); such a node multiplies bf16 values in the f32 primitives */
  g->f32_only = d->ta;
}

static tg_gemm_prim *prim_for(tg_gemm_shape s, int bf16, int brgemm_only) {
  s.bf16 = bf16;
  s.brgemm_only = brgemm_only;
  return tg_gemm_prim_new(&s);
}

static void free_prims(tg_cpu_gemm_plan *p) {
  tg_gemm_prim_free(p->fwd), tg_gemm_prim_free(p->d_a), tg_gemm_prim_free(p->d_b);
  tg_gemm_prim_free(p->d_a_set), tg_gemm_prim_free(p->d_b_set);
  p->fwd = p->d_a = p->d_b = p->d_a_set = p->d_b_set = NULL;
}

void tg_cpu_unprepare(void *state) {
  tg_cpu_gemm_plan *p = state;
  if (!p) return;
  free_prims(p);
  tg_free(p->kept[0]), tg_free(p->kept[1]);
  tg_free(p);
}

size_t tg_cpu_prepared_bytes(const void *state) {
  const tg_cpu_gemm_plan *p = state;
  size_t n = 0;
  for (int k = 0; k < 2; k++)
    if (p->kept[k]) n += sizeof(uint16_t) * (size_t)p->kept_numel[k];
  return n;
}

/* The packed plan p's kept bf16 copies (tg_cpu_gemm_plan.kept): input k is kept when it is not a parameter (no bf16
 * mirror) and the other input wants a gradient, whose product reads input k (linear's dW reads x, a matmul's dA reads
 * B and its dB reads A). 0 when out of memory (what was made is freed with p). */
static int keep_inputs(const tg_kernel_args *a, tg_cpu_gemm_plan *p) {
  for (int k = 0; k < 2; k++) {
    if (a->in_bf16[k] || !a->in_grad[1 - k]) continue;
    p->kept_numel[k] = tg_numel(a->in[k]);
    p->kept[k] = tg_malloc(sizeof(uint16_t) * (size_t)p->kept_numel[k]);
    if (!p->kept[k]) return 0;
  }
  return 1;
}

tg_gemm_prim *tg_cpu_grad_prim(const tg_cpu_gemm_plan *p, int k, int fresh) {
  if (!p) return NULL;
  if (k == 0) return fresh ? p->d_a_set : p->d_a;
  return fresh ? p->d_b_set : p->d_b;
}

/* A gradient product's primitive that writes C instead of adding into it. */
static tg_gemm_prim *set_prim_for(tg_gemm_shape s, int bf16, int brgemm_only) {
  s.accumulate = 0;
  return prim_for(s, bf16, brgemm_only);
}

/* Every product g needs as primitives of one operand type; 0 when one is missing (the rest freed). */
static int make_prims(const node_gemms *g, int bf16, int brgemm_only, tg_cpu_gemm_plan *p) {
  if (bf16 && g->f32_only) return 0;
  int want_b = g->want_b && g->has_b, set_a = g->want_a && g->set_a, set_b = want_b && g->set_b;
  p->fwd = prim_for(g->fwd, bf16, brgemm_only);
  p->d_a = g->want_a ? prim_for(g->d_a, bf16, brgemm_only) : NULL;
  p->d_b = want_b ? prim_for(g->d_b, bf16, brgemm_only) : NULL;
  p->d_a_set = set_a ? set_prim_for(g->d_a, bf16, brgemm_only) : NULL;
  p->d_b_set = set_b ? set_prim_for(g->d_b, bf16, brgemm_only) : NULL;
  int ok = p->fwd && (!g->want_a || p->d_a) && (!want_b || p->d_b) && (!set_a || p->d_a_set) && (!set_b || p->d_b_set);
  if (!ok) free_prims(p);
  return ok;
}

tg_status tg_cpu_prepare(int op, tg_kernel_args *a, void **state) {
  *state = NULL;
  if (op != TG_OP_MATMUL && op != TG_OP_LINEAR && op != TG_OP_STACKED_LINEAR) return TG_OK;
  int mode = gemm_mode_get();
  if (mode < 0) return TG_ERR_INVALID;
  if (mode == GEMM_OPENBLAS) return TG_OK;
  /* auto, native bf16: a bf16 node without packed bf16 primitives is settled to f32 (set where that is decided) */
  int settle = mode == GEMM_AUTO && a->compute == TG_BF16 && tg_gemm_prim_has_bf16();
  node_gemms g;
  memset(&g, 0, sizeof g);
  tg_status st;
  int64_t rows, nin, nout, groups, macs;
  if (op == TG_OP_LINEAR) {
    if ((st = tg_linear_dims(a, &rows, &nin, &nout)) != TG_OK) return st;
    linear_gemms(a, rows, nin, nout, &g);
    macs = rows * nin * nout;
  } else if (op == TG_OP_STACKED_LINEAR) {
    if ((st = tg_stacked_dims(a, &rows, &groups, &nin, &nout)) != TG_OK) return st;
    if (nin == 1) { /* an outer product: direct loops (k_stacked_in1.c) */
      if (settle) a->compute = TG_F32;
      return TG_OK;
    }
    stacked_gemms(a, rows, groups, nin, nout, &g);
    macs = rows * groups * nin * nout;
  } else {
    tg_mm_dims d;
    if ((st = tg_mm_dims_of(a, &d)) != TG_OK) return st;
    matmul_gemms(&d, &g);
    macs = d.batch * d.m * d.n * d.k;
  }
  /* auto: small products, and those of a few rows (batch-1 inference: OpenBLAS's matrix-vector path), stay off oneDNN,
   * whose per-call cost is larger than the work there */
  if (mode == GEMM_AUTO && (macs < TG_GEMM_PRIM_MIN_MACS || g.fwd.m <= TG_GEMM_FEW_ROWS)) {
    if (settle) a->compute = TG_F32;
    return TG_OK;
  }
  g.want_a = a->in_grad[0] != NULL;
  g.want_b = a->in_grad[1] != NULL;
  g.set_a = (tg_cpu_bwd_fresh(op) & 1u) != 0;
  g.set_b = (tg_cpu_bwd_fresh(op) & 2u) != 0;
  tg_cpu_gemm_plan *p = tg_calloc(1, sizeof *p);
  if (!p) return tg_error(TG_ERR_NOMEM, "%s: out of host memory planning its GEMMs", a->node_name);
  /* bf16 operands where oneDNN has a native bf16 matmul (in every mode: its emulated one is slower than f32); else f32
   * primitives over the operands rounded to bf16 */
  int brgemm_only = mode == GEMM_AUTO; /* auto: only the kernels that beat OpenBLAS without allocating */
  p->packed_bf16 = a->compute == TG_BF16 && tg_gemm_prim_has_bf16() && make_prims(&g, 1, brgemm_only, p);
  if (!p->packed_bf16 && settle) a->compute = TG_F32;
  if (!p->packed_bf16 && !make_prims(&g, 0, brgemm_only, p)) {
    tg_free(p); /* oneDNN absent or without a fast kernel for these shapes: OpenBLAS */
    return TG_OK;
  }
  p->fwd_bias = g.fwd.bias;
  if (p->packed_bf16 && !keep_inputs(a, p)) {
    tg_cpu_unprepare(p);
    return tg_error(TG_ERR_NOMEM, "%s: out of host memory for its inputs' bf16 copies", a->node_name);
  }
  *state = p;
  return TG_OK;
}

void tg_cpu_gemm_policy(char *buf, size_t n) {
  int mode = gemm_mode_get();
  const char *lib = tg_gemm_prim_library();
  const char *bf16 = tg_gemm_prim_has_bf16() ? "bf16 GEMMs take bf16 operands on oneDNN (under auto, a GEMM op "
                                               "without a packed bf16 primitive runs in f32)"
                                             : "bf16 GEMMs round their operands to bf16 and run in f32";
  if (mode < 0) {
    snprintf(buf, n, "OpenBLAS for every GEMM (%s)", tg_last_error());
  } else if (!*lib) {
    snprintf(buf, n, "OpenBLAS for every GEMM (no oneDNN in this build); %s", bf16);
  } else if (mode == GEMM_OPENBLAS) {
    snprintf(buf, n, "OpenBLAS for every GEMM (TICKGRAD_GEMM=openblas; %s present); %s", lib, bf16);
  } else if (mode == GEMM_ONEDNN) {
    snprintf(buf, n, "%s primitives planned per node for every GEMM op (TICKGRAD_GEMM=onednn), OpenBLAS for the "
             "sequence ops' own GEMMs; %s", lib, bf16);
  } else if (tg_gemm_prim_has_brgemm()) {
    snprintf(buf, n, "%s brgemm primitives planned per node for GEMM ops of at least %d multiply-adds and more than %d "
             "rows, OpenBLAS for the rest and for the sequence ops' own GEMMs; %s", lib, TG_GEMM_PRIM_MIN_MACS,
             TG_GEMM_FEW_ROWS, bf16);
  } else {
    snprintf(buf, n, "OpenBLAS for every GEMM: %s has no brgemm kernels on this CPU (AVX-512 and up), and its "
             "AVX2 GEMM was slower here (TICKGRAD_GEMM=onednn forces it); %s", lib, bf16);
  }
}
