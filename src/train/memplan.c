/* The memory plan before the first step: parameters, gradients, optimizer, activations, data, the batch that fits. */
#include <stdio.h>
#include <string.h>
#include "tickgrad/device.h"
#include "train/train_internal.h"

static const char *mem_str(char *buf, size_t n, double b) {
  if (b < 1024) snprintf(buf, n, "%.0f B", b);
  else if (b < 1048576.0) snprintf(buf, n, "%.1f KiB", b / 1024);
  else if (b < 1073741824.0) snprintf(buf, n, "%.1f MiB", b / 1048576.0);
  else snprintf(buf, n, "%.2f GiB", b / 1073741824.0);
  return buf;
}

/* Free memory where the model lives: the GPU's free bytes, or the host's MemAvailable. 0: unknown. */
static double free_bytes(tg_device dev, const char **what) {
  if (!tg_device_host_memory(dev)) {
    tg_device_info info;
    *what = "free on the GPU";
    return tg_device_info_get(dev, &info) == TG_OK ? (double)info.free_bytes : 0;
  }
  *what = "MemAvailable";
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  double kib = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1) break;
  fclose(f);
  return kib * 1024;
}

/* What a plan holds for its activations: the arena (plain: the arena the same plan would have without
 * recomputation), the kernels' workspace and the copies its kernels keep for the backward. */
static double plan_bytes(const tg_plan_stats *s, int plain) {
  return (double)(plain ? s->arena_bytes_no_recompute : s->arena_bytes) + (double)s->workspace_bytes +
         (double)s->prepared_bytes;
}

static double graph_bytes(tg_graph *g) {
  if (!g) return 0;
  tg_plan_stats s = tg_graph_stats(g);
  return plan_bytes(&s, 0);
}

/* The training activations line: with recomputation, also what the same plan would hold without it. */
static void activations_line(FILE *f, const tg_plan_stats *tr, double eval, int64_t batch) {
  char a[32], b[32], c[32], e[32];
  double act = plan_bytes(tr, 0);
  fprintf(f, "  activations       %s per training batch of %lld (arena %s + workspace %s", mem_str(a, sizeof a, act),
          (long long)batch, mem_str(b, sizeof b, (double)tr->arena_bytes),
          mem_str(c, sizeof c, (double)tr->workspace_bytes));
  if (tr->prepared_bytes) fprintf(f, " + kept bf16 copies %s", mem_str(c, sizeof c, (double)tr->prepared_bytes));
  if (tr->recompute != TG_RECOMPUTE_NONE)
    fprintf(f, "; recompute %s, %s without", tg_recompute_name(tr->recompute),
            mem_str(e, sizeof e, plan_bytes(tr, 1)));
  fprintf(f, "); evaluation %s\n", mem_str(a, sizeof a, eval));
}

/* The largest batch that fits, from the free memory and the activations per window (with and without recompute). */
static void fit_line(FILE *f, const tr_model *m, const tr_data *d, const tg_plan_stats *tr, int64_t batch) {
  char a[32];
  const char *what = "";
  double avail = free_bytes(d->dev, &what), ev = graph_bytes(m->eval.g);
  double per_window = (plan_bytes(tr, 0) + ev) / (double)batch, per_plain = (plan_bytes(tr, 1) + ev) / (double)batch;
  if (!(avail > 0 && per_window > 0)) {
    fprintf(f, "  free memory unknown: no estimate of the largest batch\n");
    return;
  }
  fprintf(f, "  %s %s: a batch of about %.0f windows would fit (", what, mem_str(a, sizeof a, avail),
          (double)batch + avail / per_window);
  if (tr->recompute != TG_RECOMPUTE_NONE) fprintf(f, "%.0f without recompute; ", (double)batch + avail / per_plain);
  fprintf(f, "activations grow with the batch)\n");
}

void tr_memplan_print(FILE *f, const tr_model *m, const tr_data *d, int64_t batch, tg_precision precision) {
  if (!f) return;
  char a[32], b[32], dev[16];
  double numel = (double)tg_store_numel(m->store), p = 4 * numel;
  double mirror = precision == TG_PRECISION_BF16 ? 2 * numel : 0.0;
  double opt = (double)tg_optim_state_count(m->opt) * p;
  tg_plan_stats tr = tg_graph_stats(m->train.g);
  double act = plan_bytes(&tr, 0);
  double eval = graph_bytes(m->eval.g) + graph_bytes(m->rest.g), staged = (double)d->staged_bytes;
  fprintf(f, "memory plan on %s (%.0f parameters):\n", tg_device_str(d->dev, dev, sizeof dev), numel);
  fprintf(f, "  parameters        %s\n  gradients         %s\n", mem_str(a, sizeof a, p), mem_str(b, sizeof b, p));
  fprintf(f, "  optimizer state   %s (Adam: 2 moments)\n", mem_str(a, sizeof a, opt));
  if (mirror > 0)
    fprintf(f, "  bf16 weights      %s (the copy the optimizer update writes and the GEMMs read)\n",
            mem_str(a, sizeof a, mirror));
  activations_line(f, &tr, eval, batch);
  fprintf(f, "  staged data       %s (features, targets%s, on the device once)\n", mem_str(a, sizeof a, staged),
          d->nfut ? ", known-future columns" : "");
  fprintf(f, "  total             %s\n", mem_str(a, sizeof a, 2 * p + mirror + opt + act + eval + staged));
  fit_line(f, m, d, &tr, batch);
}
