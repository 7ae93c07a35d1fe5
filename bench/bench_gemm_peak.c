/* Benchmark case gemm_peak: a 1024-cube product through the engine's own GEMM path (one planned matmul), in GFLOP/s. */
#include <stdlib.h>
#include "bench.h"
#include "graph/graph_internal.h"
#include "tickgrad/tickgrad.h"

#define N 1024

/* c [N, N] = a [N, N] b [N, N], an inference plan in --precision (bf16: both operands rounded, f32 accumulation),
 * run reps times after warmup: whatever library the plan chose for this node (TICKGRAD_GEMM) runs it. Leaves
 * "peak precision=P path=onednn|openblas gflops=G" and the ISA lines in bench_extra. */
int bench_gemm_peak(int warmup, int reps, double *median_us) {
  int64_t sh[2] = {N, N};
  tg_graph *g = tg_graph_new(NULL, "gemm_peak");
  tg_tensor *c = tg_matmul(g, tg_input(g, "a", TG_F32, 2, sh), tg_input(g, "b", TG_F32, 2, sh), 0, 0);
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  po.training = 0;
  po.precision = tg_precision_dtype(bench_precision);
  float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N);
  double *times = malloc(sizeof(double) * (size_t)reps);
  int rc = !c || !a || !b || !times || tg_graph_plan(g, &po) != TG_OK;
  if (!rc) {
    for (int i = 0; i < N * N; i++) a[i] = tg_rng_normal(3, 0, (uint64_t)i), b[i] = tg_rng_normal(3, 1, (uint64_t)i);
    tg_tensor at, bt;
    tg_tensor_view(&at, "a", tg_cpu(0), TG_F32, 2, sh, a);
    tg_tensor_view(&bt, "b", tg_cpu(0), TG_F32, 2, sh, b);
    rc = tg_graph_bind(g, "a", &at) || tg_graph_bind(g, "b", &bt);
  }
  for (int r = -warmup; r < reps && !rc; r++) {
    double t0 = bench_now_us();
    rc = tg_graph_run(g) != TG_OK;
    if (r >= 0) times[r] = bench_now_us() - t0;
  }
  if (!rc) {
    *median_us = bench_median(times, reps);
    /* the plan's own record of the node: a prepared oneDNN primitive, or none (OpenBLAS) */
    bench_extra_add("peak precision=%s path=%s gflops=%.2f", tg_precision_name(bench_precision),
                    tg_node_of(c)->args.prepared ? "onednn" : "openblas", 2.0 * N * N * N / (*median_us * 1e3));
    bench_isa_line();
  }
  tg_graph_free(g);
  free(a);
  free(b);
  free(times);
  return rc ? 1 : 0;
}
