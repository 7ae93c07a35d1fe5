/* PPO's numbers: recent episodes, the log line and RUN/metrics.csv (same columns). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "io/json.h"
#include "rl/ppo_internal.h"

#define METRICS_HEADER                                                                                            \
  "iteration,env_steps,episodes,mean_return,mean_length,loss,pg_loss,v_loss,entropy,approx_kl,clipfrac,"          \
  "mean_value,grad_norm,lr,env_steps_per_s\n"

void pp_recent_push(pp_run *r, double ret, int32_t len) {
  r->recent_ret[r->recent_pos] = ret;
  r->recent_len[r->recent_pos] = len;
  r->recent_pos = (r->recent_pos + 1) % PP_RECENT;
  if (r->recent_n < PP_RECENT) r->recent_n++;
}

void pp_recent_means(const pp_run *r, double *ret, double *len) {
  double s = 0.0, l = 0.0;
  for (int i = 0; i < r->recent_n; i++) { /* oldest first: the sum's order does not depend on the ring's start */
    int k = (r->recent_pos - r->recent_n + i + PP_RECENT) % PP_RECENT;
    s += r->recent_ret[k];
    l += r->recent_len[k];
  }
  *ret = r->recent_n ? s / r->recent_n : NAN;
  *len = r->recent_n ? l / r->recent_n : NAN;
}

/* The first field of a CSV row as an iteration number; -1 when it is not one. */
static long long row_iter(const char *line) {
  char *end;
  long long v = strtoll(line, &end, 10);
  return end != line && *end == ',' ? v : -1;
}

/* metrics.csv with the header and the rows at or before iteration iter (the others were written
 * after the checkpoint a resumed run continues from). */
static tg_status metrics_trim(const char *path, int64_t iter) {
  char *text = NULL;
  size_t len = 0;
  tg_json_buf keep = {0};
  tg_status st = tr_file_exists(path) ? tr_read_file(path, &text, &len) : TG_OK;
  if (st != TG_OK) return st;
  tg_json_buf_puts(&keep, METRICS_HEADER);
  for (char *line = text; line && *line;) {
    char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);
    long long it = row_iter(line);
    if (it >= 0 && it <= iter) tg_json_buf_append(&keep, line, n);
    line += n;
  }
  tg_free(text);
  st = keep.oom ? tg_error(TG_ERR_NOMEM, "ppo: out of memory rewriting '%s'", path) : tr_write_atomic(path, keep.data, keep.len);
  tg_json_buf_free(&keep);
  return st;
}

tg_status pp_metrics_open(pp_run *r, int resumed) {
  char path[TG_TRAIN_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/metrics.csv", r->run);
  tg_status st = resumed ? metrics_trim(path, r->iter) : tr_write_atomic(path, METRICS_HEADER, strlen(METRICS_HEADER));
  if (st != TG_OK) return st;
  r->metrics = fopen(path, "a");
  if (!r->metrics) return tg_error(TG_ERR_IO, "ppo: cannot append to '%s'", path);
  return TG_OK;
}

/* A CSV field: empty when the number is not finite (nothing to report yet). */
static void csv_num(FILE *f, const char *fmt, double v) {
  fputc(',', f);
  if (isfinite(v)) fprintf(f, fmt, v);
}

void pp_log_interval(pp_run *r) {
  double now = tr_now(), ret, len;
  double dt = now - r->t_interval;
  int64_t steps = r->iter * r->B;
  double sps = dt > 0 ? (double)(steps - r->interval_steps0) / dt : NAN;
  const pp_report *p = &r->last;
  pp_recent_means(r, &ret, &len);
  if (r->c.log) {
    fprintf(r->c.log,
            "iter %lld/%lld  env steps %lld  episodes %lld  return %.2f  length %.1f  loss %.4g  pg %.4g  v %.4g  "
            "entropy %.4f  kl %.3g  clipfrac %.3f  value %.4g  grad %.4g  lr %.3g  %.0f env steps/s\n",
            (long long)r->iter, (long long)r->n_iter, (long long)steps, (long long)r->episodes, ret, len,
            (double)p->stats[TG_PPO_LOSS], (double)p->stats[TG_PPO_PG], (double)p->stats[TG_PPO_V],
            (double)p->stats[TG_PPO_ENTROPY], (double)p->stats[TG_PPO_KL], (double)p->stats[TG_PPO_CLIPFRAC],
            p->mean_value, (double)p->grad_norm, (double)p->lr, sps);
    fflush(r->c.log);
  }
  if (r->metrics) {
    fprintf(r->metrics, "%lld,%lld,%lld", (long long)r->iter, (long long)steps, (long long)r->episodes);
    csv_num(r->metrics, "%.17g", ret);
    csv_num(r->metrics, "%.17g", len);
    for (int k = 0; k < TG_PPO_NSTATS; k++) csv_num(r->metrics, "%.9g", p->stats[k]);
    csv_num(r->metrics, "%.9g", p->mean_value);
    csv_num(r->metrics, "%.9g", p->grad_norm);
    csv_num(r->metrics, "%.9g", p->lr);
    csv_num(r->metrics, "%.1f", sps);
    fputc('\n', r->metrics);
    fflush(r->metrics);
  }
  r->t_interval = now;
  r->interval_steps0 = steps;
}
