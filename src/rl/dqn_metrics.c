/* DQN's numbers: the epsilon schedule, recent episodes, the log line and RUN/metrics.csv (same columns). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "io/json.h"
#include "rl/dqn_internal.h"

#define METRICS_HEADER \
  "step,env_steps,episodes,mean_return,mean_length,loss,mean_q,epsilon,grad_norm,grad_steps,env_steps_per_s\n"

double dq_epsilon(const tg_dqn_config *c, int64_t step) {
  double duration = (double)c->exploration_fraction * (double)c->total_timesteps;
  double slope = ((double)c->end_e - (double)c->start_e) / duration;
  double e = slope * (double)step + (double)c->start_e;
  return e > c->end_e ? e : (double)c->end_e;
}

void dq_recent_push(dq_run *r, double ret, int32_t len) {
  r->recent_ret[r->recent_pos] = ret;
  r->recent_len[r->recent_pos] = len;
  r->recent_pos = (r->recent_pos + 1) % DQ_RECENT;
  if (r->recent_n < DQ_RECENT) r->recent_n++;
}

void dq_recent_means(const dq_run *r, double *ret, double *len) {
  double s = 0.0, l = 0.0;
  for (int i = 0; i < r->recent_n; i++) { /* oldest first, so the sum's order does not depend on the ring's start */
    int k = (r->recent_pos - r->recent_n + i + DQ_RECENT) % DQ_RECENT;
    s += r->recent_ret[k];
    l += r->recent_len[k];
  }
  *ret = r->recent_n ? s / r->recent_n : NAN;
  *len = r->recent_n ? l / r->recent_n : NAN;
}

/* The first field of a CSV row as a step number; -1 when it is not one. */
static long long row_step(const char *line) {
  char *end;
  long long v = strtoll(line, &end, 10);
  return end != line && *end == ',' ? v : -1;
}

/* metrics.csv with the header and the rows at or before step (the others were written after the
 * checkpoint a resumed run continues from). */
static tg_status metrics_trim(const char *path, int64_t step) {
  char *text = NULL;
  size_t len = 0;
  tg_json_buf keep = {0};
  tg_status st = tr_file_exists(path) ? tr_read_file(path, &text, &len) : TG_OK;
  if (st != TG_OK) return st;
  tg_json_buf_puts(&keep, METRICS_HEADER);
  for (char *line = text; line && *line;) {
    char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);
    long long s = row_step(line);
    if (s >= 0 && s <= step) tg_json_buf_append(&keep, line, n);
    line += n;
  }
  tg_free(text);
  st = keep.oom ? tg_error(TG_ERR_NOMEM, "dqn: out of memory rewriting '%s'", path) : tr_write_atomic(path, keep.data, keep.len);
  tg_json_buf_free(&keep);
  return st;
}

tg_status dq_metrics_open(dq_run *r, int resumed) {
  char path[TG_TRAIN_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/metrics.csv", r->run);
  tg_status st = resumed ? metrics_trim(path, r->step) : tr_write_atomic(path, METRICS_HEADER, strlen(METRICS_HEADER));
  if (st != TG_OK) return st;
  r->metrics = fopen(path, "a");
  if (!r->metrics) return tg_error(TG_ERR_IO, "dqn: cannot append to '%s'", path);
  return TG_OK;
}

/* A CSV field: the shortest decimal that reads back as v (15 to 17 digits); empty when v is not
 * finite (no training step or finished episode in the interval). */
static void csv_num(FILE *f, double v) {
  char buf[40];
  fputc(',', f);
  if (!isfinite(v)) return;
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) break;
  }
  fputs(buf, f);
}

void dq_log_interval(dq_run *r) {
  double now = tr_now(), ret, len;
  double dt = now - r->t_interval, n = (double)r->sp.n;
  double sps = dt > 0 ? (double)(r->step - r->interval_step0) * n / dt : NAN;
  double an = (double)r->acc.n;
  double loss = r->acc.n ? r->acc.loss / an : NAN, q = r->acc.n ? r->acc.q / an : NAN;
  double gn = r->acc.n ? r->acc.grad_norm / an : NAN, eps = dq_epsilon(&r->c, r->step);
  long long gsteps = (long long)tg_optim_steps(r->net.opt);
  dq_recent_means(r, &ret, &len);
  if (r->c.log) {
    fprintf(r->c.log, "step %lld/%lld  env steps %lld  episodes %lld  return %.2f  length %.1f  loss %.4g  q %.4g  "
            "eps %.3f  grad %.4g  updates %lld  %.0f env steps/s\n", (long long)r->step, (long long)r->c.total_timesteps,
            (long long)(r->step * r->sp.n), (long long)r->episodes, ret, len, loss, q, eps, gn, gsteps, sps);
    fflush(r->c.log);
  }
  if (r->metrics) {
    fprintf(r->metrics, "%lld,%lld,%lld", (long long)r->step, (long long)(r->step * r->sp.n), (long long)r->episodes);
    csv_num(r->metrics, ret);
    csv_num(r->metrics, len);
    csv_num(r->metrics, loss);
    csv_num(r->metrics, q);
    csv_num(r->metrics, eps);
    csv_num(r->metrics, gn);
    fprintf(r->metrics, ",%lld,", gsteps);
    if (isfinite(sps)) fprintf(r->metrics, "%.1f", sps);
    fputc('\n', r->metrics);
    fflush(r->metrics);
  }
  memset(&r->acc, 0, sizeof r->acc);
  r->t_interval = now;
  r->interval_step0 = r->step;
}
