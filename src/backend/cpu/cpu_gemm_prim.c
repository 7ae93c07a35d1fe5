/* oneDNN matmul primitives for planned GEMMs (this file is the only one that names oneDNN; without it, none). */
#include "backend/cpu/cpu_gemm_prim.h"
#include <stddef.h>

#if TG_HAVE_ONEDNN
#include <dnnl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"

struct tg_gemm_prim {
  dnnl_primitive_t prim;
  dnnl_memory_t src, wei, dst, bias, scratch; /* bias, scratch: NULL when unused */
  void *scratch_buf;
  int swap; /* 1: runs as the transposed product, C^T = B^T A^T (tg_gemm_prim_new), so A and B trade places */
};

static struct {
  pthread_once_t once;
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  int bf16, brgemm; /* -1: not probed */
  char library[32];
} g_dnnl = {PTHREAD_ONCE_INIT, NULL, NULL, -1, -1, ""};

static void dnnl_start(void) {
  if (dnnl_engine_create(&g_dnnl.engine, dnnl_cpu, 0) != dnnl_success) return;
  if (dnnl_stream_create(&g_dnnl.stream, g_dnnl.engine, dnnl_stream_default_flags) != dnnl_success) {
    dnnl_engine_destroy(g_dnnl.engine);
    g_dnnl.engine = NULL;
    return;
  }
  const dnnl_version_t *v = dnnl_version();
  snprintf(g_dnnl.library, sizeof g_dnnl.library, "oneDNN %d.%d.%d", v->major, v->minor, v->patch);
}

static int dnnl_ready(void) {
  pthread_once(&g_dnnl.once, dnnl_start);
  return g_dnnl.engine != NULL;
}

static dnnl_status_t md3(dnnl_memory_desc_t *md, int64_t d0, int64_t d1, int64_t d2, const int64_t *st,
                         dnnl_data_type_t dt) {
  dnnl_dims_t dims = {d0, d1, d2}, strides = {st[0], st[1], st[2]};
  if (d0 == 1) strides[0] = st[1] * (d1 - 1) + st[2] * (d2 - 1) + 1; /* one batch: any stride past the matrix */
  return dnnl_memory_desc_init_by_strides(md, 3, dims, dt, strides);
}

/* The primitive descriptor for s, NULL when oneDNN has no implementation or only a reference one. */
static dnnl_primitive_desc_t prim_desc(const tg_gemm_shape *s) {
  dnnl_data_type_t in = s->bf16 ? dnnl_bf16 : dnnl_f32;
  dnnl_memory_desc_t a, b, c, bias;
  int64_t a_batch = s->a_st[0] == 0 ? 1 : s->batch, b_batch = s->b_st[0] == 0 ? 1 : s->batch;
  int64_t bias_batch = s->bias_st[0] == 0 ? 1 : s->batch;
  if (md3(&a, a_batch, s->m, s->k, s->a_st, in) != dnnl_success ||
      md3(&b, b_batch, s->k, s->n, s->b_st, in) != dnnl_success ||
      md3(&c, s->batch, s->m, s->n, s->c_st, dnnl_f32) != dnnl_success ||
      (s->bias && md3(&bias, bias_batch, 1, s->n, s->bias_st, dnnl_f32) != dnnl_success))
    return NULL;
  dnnl_matmul_desc_t md;
  if (dnnl_matmul_desc_init(&md, &a, &b, s->bias ? &bias : NULL, &c) != dnnl_success) return NULL;
  dnnl_primitive_attr_t attr;
  if (dnnl_primitive_attr_create(&attr) != dnnl_success) return NULL;
  dnnl_post_ops_t po = NULL;
  int ok = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success;
  if (ok && s->accumulate)
    ok = dnnl_post_ops_create(&po) == dnnl_success && dnnl_post_ops_append_sum(po, 1.0f) == dnnl_success &&
         dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
  dnnl_primitive_desc_t pd = NULL;
  if (ok && dnnl_primitive_desc_create(&pd, &md, attr, g_dnnl.engine, NULL) != dnnl_success) pd = NULL;
  if (po) dnnl_post_ops_destroy(po);
  dnnl_primitive_attr_destroy(attr);
  const char *impl = NULL;
  if (pd && (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl ||
             strstr(impl, "ref") || (s->brgemm_only && !strstr(impl, "brg")))) {
    dnnl_primitive_desc_destroy(pd); /* a reference loop is far slower than OpenBLAS */
    pd = NULL;
  }
  return pd;
}

static int mem_new(dnnl_memory_t *m, const dnnl_memory_desc_t *md, void *handle) {
  return dnnl_memory_create(m, md, g_dnnl.engine, handle) == dnnl_success;
}

static int query_mem(dnnl_primitive_desc_t pd, dnnl_query_t q, int idx, dnnl_memory_t *m) {
  const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, q, idx);
  return md && mem_new(m, md, DNNL_MEMORY_NONE);
}

tg_gemm_prim *tg_gemm_prim_new(const tg_gemm_shape *s) {
  if (!dnnl_ready() || s->batch <= 0 || s->m <= 0 || s->n <= 0 || s->k <= 0) return NULL;
  /* oneDNN has only a reference matmul for a destination whose columns are strided (the gradient of a transposed
   * matmul operand), but reads strided sources at full speed: such a product runs as its transpose, C^T = B^T A^T */
  int swap = s->c_st[2] != 1 && !s->bias;
  tg_gemm_shape t = *s;
  if (swap) {
    t.m = s->n, t.n = s->m;
    t.a_st[0] = s->b_st[0], t.a_st[1] = s->b_st[2], t.a_st[2] = s->b_st[1];
    t.b_st[0] = s->a_st[0], t.b_st[1] = s->a_st[2], t.b_st[2] = s->a_st[1];
    t.c_st[1] = s->c_st[2], t.c_st[2] = s->c_st[1];
  }
  dnnl_primitive_desc_t pd = prim_desc(&t);
  if (!pd) return NULL;
  tg_gemm_prim *p = tg_calloc(1, sizeof *p);
  if (p) p->swap = swap;
  int ok = p && dnnl_primitive_create(&p->prim, pd) == dnnl_success && query_mem(pd, dnnl_query_src_md, 0, &p->src) &&
           query_mem(pd, dnnl_query_weights_md, 0, &p->wei) && query_mem(pd, dnnl_query_dst_md, 0, &p->dst) &&
           (!s->bias || query_mem(pd, dnnl_query_weights_md, 1, &p->bias));
  const dnnl_memory_desc_t *sp = ok ? dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0) : NULL;
  size_t sp_bytes = sp ? dnnl_memory_desc_get_size(sp) : 0;
  if (ok && sp_bytes) {
    p->scratch_buf = tg_malloc(sp_bytes);
    ok = p->scratch_buf && mem_new(&p->scratch, sp, p->scratch_buf);
  }
  dnnl_primitive_desc_destroy(pd);
  if (!ok) {
    tg_gemm_prim_free(p);
    return NULL;
  }
  return p;
}

void tg_gemm_prim_free(tg_gemm_prim *p) {
  if (!p) return;
  if (p->prim) dnnl_primitive_destroy(p->prim);
  dnnl_memory_t ms[] = {p->src, p->wei, p->dst, p->bias, p->scratch};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
    if (ms[i]) dnnl_memory_destroy(ms[i]);
  tg_free(p->scratch_buf);
  tg_free(p);
}

tg_status tg_gemm_prim_run(tg_gemm_prim *p, const void *A, const void *B, const float *bias, float *C,
                           const char *where) {
  dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, p->src}, {DNNL_ARG_WEIGHTS, p->wei}, {DNNL_ARG_DST, p->dst}};
  int n = 3;
  if (p->swap) {
    const void *t = A;
    A = B, B = t;
  }
  dnnl_status_t st = dnnl_memory_set_data_handle(p->src, (void *)A);
  if (st == dnnl_success) st = dnnl_memory_set_data_handle(p->wei, (void *)B);
  if (st == dnnl_success) st = dnnl_memory_set_data_handle(p->dst, C);
  if (st == dnnl_success && p->bias) {
    st = dnnl_memory_set_data_handle(p->bias, (void *)bias);
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, p->bias};
  }
  if (p->scratch) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, p->scratch};
  if (st == dnnl_success) st = dnnl_primitive_execute(p->prim, g_dnnl.stream, n, args);
  if (st == dnnl_success) st = dnnl_stream_wait(g_dnnl.stream);
  if (st != dnnl_success)
    return tg_error(TG_ERR_DEVICE, "%s: oneDNN matmul failed (status %d)", where ? where : "gemm", (int)st);
  return TG_OK;
}

const char *tg_gemm_prim_library(void) { return dnnl_ready() ? g_dnnl.library : ""; }

/* 1 when a 64-cube product of the given kind has a primitive. */
static int probe(int bf16, int brgemm_only) {
  tg_gemm_shape s = {1, 64, 64, 64, {4096, 64, 1}, {4096, 64, 1}, {4096, 64, 1}, 0, {0, 0, 0}, 0, bf16, brgemm_only};
  tg_gemm_prim *p = tg_gemm_prim_new(&s);
  tg_gemm_prim_free(p);
  return p != NULL;
}

int tg_gemm_prim_has_bf16(void) {
  /* brgemm only: on AVX-512 without BF16 oneDNN 2.6 still offers a bf16 gemm:jit that emulates the instructions,
   * slower than f32; that is no bf16 matmul for the plan */
  if (g_dnnl.bf16 < 0) g_dnnl.bf16 = probe(1, 1);
  return g_dnnl.bf16;
}

int tg_gemm_prim_has_brgemm(void) {
  if (g_dnnl.brgemm < 0) g_dnnl.brgemm = probe(0, 1);
  return g_dnnl.brgemm;
}

int tg_gemm_prim_has_amx(void) {
  if (!dnnl_ready()) return 0;
  unsigned isa = (unsigned)dnnl_get_effective_cpu_isa(), amx = (unsigned)dnnl_cpu_isa_avx512_core_amx;
  return (isa & amx) == amx; /* the ISA values are nested bit masks */
}

#else /* no oneDNN in this build: every GEMM runs on OpenBLAS */

tg_gemm_prim *tg_gemm_prim_new(const tg_gemm_shape *s) {
  (void)s;
  return NULL;
}
void tg_gemm_prim_free(tg_gemm_prim *p) { (void)p; }
tg_status tg_gemm_prim_run(tg_gemm_prim *p, const void *A, const void *B, const float *bias, float *C,
                           const char *where) {
  (void)p, (void)A, (void)B, (void)bias, (void)C;
  return tg_error(TG_ERR_UNSUPPORTED, "%s: no oneDNN in this build", where ? where : "gemm");
}
const char *tg_gemm_prim_library(void) { return ""; }
int tg_gemm_prim_has_bf16(void) { return 0; }
int tg_gemm_prim_has_brgemm(void) { return 0; }
int tg_gemm_prim_has_amx(void) { return 0; }
#endif
