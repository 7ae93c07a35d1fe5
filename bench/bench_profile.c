/* The training-step cases' timing and roofline pass: GEMM FLOPs per step, their rate, the share of the step outside them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

#define MAX_KINDS 64 /* op kinds (more than the op table has) */

tg_precision bench_precision = TG_PRECISION_FP32;
char bench_extra[16384];
int bench_ops;

void bench_extra_add(const char *fmt, ...) {
  size_t used = strlen(bench_extra);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(bench_extra + used, sizeof bench_extra - used, fmt, ap);
  va_end(ap);
  used = strlen(bench_extra);
  if (used + 1 < sizeof bench_extra) strcpy(bench_extra + used, "\n");
}

/* The profiles of every graph summed per op kind into sum[0..*n). */
static void merge(tg_graph *const *graphs, int n_graphs, tg_op_profile *sum, int *n) {
  tg_op_profile one[MAX_KINDS];
  *n = 0;
  for (int gi = 0; gi < n_graphs; gi++) {
    int k = tg_graph_profile_get(graphs[gi], one, MAX_KINDS);
    for (int i = 0; i < k && i < MAX_KINDS; i++) {
      int j = 0;
      while (j < *n && strcmp(sum[j].op, one[i].op) != 0) j++;
      if (j == *n) {
        sum[(*n)++] = one[i];
        continue;
      }
      sum[j].fwd_calls += one[i].fwd_calls, sum[j].bwd_calls += one[i].bwd_calls;
      sum[j].fwd_s += one[i].fwd_s, sum[j].bwd_s += one[i].bwd_s;
      sum[j].fwd_flops += one[i].fwd_flops, sum[j].bwd_flops += one[i].bwd_flops;
    }
  }
}

/* "op:share,..." for the three slowest non-GEMM op kinds, shares of step_s. */
static void top_others(const tg_op_profile *p, int n, double step_s, char *out, size_t len) {
  int used[MAX_KINDS] = {0};
  out[0] = '\0';
  for (int rank = 0; rank < 3; rank++) {
    int best = -1;
    for (int i = 0; i < n; i++)
      if (!p[i].gemm && !used[i] && (best < 0 || p[i].fwd_s + p[i].bwd_s > p[best].fwd_s + p[best].bwd_s)) best = i;
    if (best < 0) break;
    used[best] = 1;
    size_t at = strlen(out);
    snprintf(out + at, len - at, "%s%s:%.3f", rank ? "," : "", p[best].op, (p[best].fwd_s + p[best].bwd_s) / step_s);
  }
}

/* Profiled steps: the roofline line of this case into bench_extra. */
static int roofline(const char *name, bench_step_fn step, void *ctx, tg_graph *const *graphs, int n_graphs,
                    int steps) {
  for (int i = 0; i < n_graphs; i++)
    if (tg_graph_profile_enable(graphs[i], 1) != TG_OK) return 1;
  double total_s = 0;
  for (int r = 0; r < steps; r++) {
    double t0 = bench_now_us();
    if (step(ctx)) return 1;
    total_s += 1e-6 * (bench_now_us() - t0);
  }
  tg_op_profile p[MAX_KINDS];
  int n;
  merge(graphs, n_graphs, p, &n);
  for (int i = 0; i < n_graphs; i++) tg_graph_profile_enable(graphs[i], 0);
  double gemm_s = 0, gemm_flops = 0, lstm_s = 0, lstm_flops = 0, ssd_s = 0;
  for (int i = 0; i < n; i++) {
    double s = p[i].fwd_s + p[i].bwd_s, f = p[i].fwd_flops + p[i].bwd_flops;
    if (p[i].gemm) gemm_s += s, gemm_flops += f;
    else if (!strcmp(p[i].op, "lstm")) lstm_s += s, lstm_flops += f;
    else if (!strcmp(p[i].op, "ssd_scan")) ssd_s += s;
  }
  for (int i = 0; bench_ops && i < n; i++)
    bench_extra_add("op %s %s gemm=%d calls=%.1f us=%.1f share=%.3f gflop=%.5f fwd_us=%.1f bwd_us=%.1f", name,
                    p[i].op, p[i].gemm, (double)(p[i].fwd_calls + p[i].bwd_calls) / steps,
                    1e6 * (p[i].fwd_s + p[i].bwd_s) / steps, (p[i].fwd_s + p[i].bwd_s) / total_s,
                    1e-9 * (p[i].fwd_flops + p[i].bwd_flops) / steps, 1e6 * p[i].fwd_s / steps,
                    1e6 * p[i].bwd_s / steps);
  char top[256];
  top_others(p, n, total_s, top, sizeof top);
  bench_extra_add("roofline %s precision=%s steps=%d step_us=%.1f gemm_gflop=%.5f gemm_us=%.1f gemm_gflops=%.2f "
                  "outside=%.3f lstm_gflop=%.5f lstm_us=%.1f ssd_us=%.1f top_other=%s",
                  name, tg_precision_name(bench_precision), steps, 1e6 * total_s / steps, 1e-9 * gemm_flops / steps,
                  1e6 * gemm_s / steps, gemm_s > 0 ? 1e-9 * gemm_flops / gemm_s : 0.0, 1.0 - gemm_s / total_s,
                  1e-9 * lstm_flops / steps, 1e6 * lstm_s / steps, 1e6 * ssd_s / steps, top[0] ? top : "-");
  return 0;
}

int bench_time_step(const char *name, bench_step_fn step, void *ctx, tg_graph *const *graphs, int n_graphs,
                    int warmup, int reps, double *median_us) {
  double *times = malloc(sizeof(double) * (size_t)reps);
  if (!times) return 1;
  int rc = 0;
  for (int r = -warmup; r < reps && !rc; r++) {
    double t0 = bench_now_us();
    rc = step(ctx);
    if (r >= 0) times[r] = bench_now_us() - t0;
  }
  if (!rc) *median_us = bench_median(times, reps);
  free(times);
  /* after the timed steps, so that the median pays nothing for the profile */
  if (!rc) rc = roofline(name, step, ctx, graphs, n_graphs, reps / 4 > 3 ? reps / 4 : 3);
  return rc ? 1 : 0;
}
