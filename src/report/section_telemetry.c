/* The report's telemetry section: device memory and utilisation, process CPU and RSS over time (telemetry.csv). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "report/report_internal.h"

enum { T_TIME, T_GPU, T_UTIL, T_USED, T_TOTAL, T_CPU, T_RSS, T_N };
static const char *const COLS[T_N] = {"time_s", "gpu", "util_pct", "mem_used_mib", "mem_total_mib", "proc_cpu_pct",
                                      "proc_rss_mib"};

static rp_chart chart(const char *id, const char *title, const char *ylabel) {
  rp_chart c;
  memset(&c, 0, sizeof c);
  c.id = id, c.title = title, c.xlabel = "seconds since the start", c.ylabel = ylabel, c.y_zero = 1;
  return c;
}

/* the largest and the mean of the finite values */
static void stats(const double *v, int64_t n, double *max, double *mean) {
  double s = 0, m = NAN;
  int64_t k = 0;
  for (int64_t i = 0; v && i < n; i++)
    if (isfinite(v[i])) {
      s += v[i], k++;
      if (!(v[i] <= m)) m = v[i];
    }
  *max = m;
  *mean = k ? s / (double)k : NAN;
}

static void summary(rp_page *p, double *const *v, int64_t n) {
  double dur_max, dur_mean, rss_max, rss_mean, cpu_max, cpu_mean, used_max, used_mean;
  stats(v[T_TIME], n, &dur_max, &dur_mean);
  stats(v[T_RSS], n, &rss_max, &rss_mean);
  stats(v[T_CPU], n, &cpu_max, &cpu_mean);
  stats(v[T_USED], n, &used_max, &used_mean);
  const char *keys[6] = {"samples", "seconds", "mean process CPU %", "peak process RSS (MiB)", "peak device memory (MiB)",
                         "GPU (NVML index)"};
  double nums[6] = {(double)n, dur_max, cpu_mean, rss_max, used_max, v[T_GPU] ? v[T_GPU][0] : NAN};
  char b[64];
  rp_raw(p, "<dl class=\"kv\">");
  for (int k = 0; k < 6; k++) {
    rp_raw(p, "<div><dt>");
    rp_text(p, keys[k]);
    rp_raw(p, "</dt><dd>");
    rp_text(p, rp_num(nums[k], b, sizeof b));
    rp_raw(p, "</dd></div>");
  }
  rp_raw(p, "</dl>\n");
}

static void charts(rp_page *p, double *const *v, int64_t n) {
  const double *x = v[T_TIME];
  int gpu = rp_any_finite(v[T_USED], n) || rp_any_finite(v[T_UTIL], n);
  if (!gpu) rp_note(p, "The GPU columns are blank: NVML gave no data (a CPU run, or no NVIDIA driver).");
  rp_raw(p, "<div class=\"grid\">\n");
  rp_chart c = chart("gpu_memory", "Device memory used (NVML)", "MiB");
  if (rp_chart_add(&c, "used", x, v[T_USED], n, 0, 0)) rp_chart_add(&c, "total", x, v[T_TOTAL], n, 7, 1);
  if (gpu) rp_svg_lines_or(p, &c, "memory was not reported by NVML");
  c = chart("gpu_util", "GPU utilisation (NVML)", "percent");
  rp_chart_add(&c, "utilisation", x, v[T_UTIL], n, 2, 0);
  if (gpu) rp_svg_lines_or(p, &c, "utilisation was not reported by NVML");
  c = chart("proc_cpu", "Process CPU use (100% = one core)", "percent");
  rp_chart_add(&c, "CPU", x, v[T_CPU], n, 1, 0);
  rp_svg_lines_or(p, &c, v[T_CPU] ? "no CPU samples yet" : "telemetry.csv has no proc_cpu_pct column (an older file)");
  c = chart("proc_rss", "Process resident memory", "MiB");
  rp_chart_add(&c, "RSS", x, v[T_RSS], n, 3, 0);
  rp_svg_lines_or(p, &c, v[T_RSS] ? "no memory samples" : "telemetry.csv has no proc_rss_mib column (an older file)");
  rp_raw(p, "</div>\n");
}

void rp_section_telemetry(rp_page *p) {
  char path[RP_PATH_MAX];
  rp_raw(p, "<section id=\"telemetry\"><h2>Telemetry</h2>\n");
  rp_path(path, sizeof path, p->run, "telemetry.csv");
  rp_table t;
  if (!rp_is_file(path)) {
    rp_unavailable(p, "no telemetry.csv in %s (training writes it, sampled once a second)", p->run);
  } else if (rp_table_read(path, NULL, &t) != TG_OK) {
    rp_unavailable(p, "%s", tg_last_error());
  } else {
    rp_table_skipped_note(p, &t, "telemetry.csv");
    if (t.nrow == 0 || rp_table_col(&t, "time_s") < 0) {
      rp_unavailable(p, "telemetry.csv holds no samples");
    } else {
      double *v[T_N];
      for (int k = 0; k < T_N; k++) v[k] = rp_table_numbers(&t, COLS[k]);
      summary(p, v, t.nrow);
      charts(p, v, t.nrow);
      for (int k = 0; k < T_N; k++) tg_free(v[k]);
    }
    rp_table_free(&t);
  }
  rp_raw(p, "</section>\n");
}
