/* The agents' running numbers: the ring of recently finished episodes, RUN/metrics.csv's opening and shared fields, the clock. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/text.h"
#include "base/alloc.h"
#include "base/json.h"
#include "agents/rl_shared.h"
#include "base/files.h"
#include "base/clock.h"

void rl_recent_push(rl_recent *r, double ret, int32_t len) {
  r->ret[r->pos] = ret;
  r->len[r->pos] = len;
  r->pos = (r->pos + 1) % RL_RECENT;
  if (r->n < RL_RECENT) r->n++;
}

void rl_recent_means(const rl_recent *r, double *ret, double *len) {
  double s = 0.0, l = 0.0;
  for (int i = 0; i < r->n; i++) { /* oldest first, so the sum's order does not depend on the ring's start */
    int k = (r->pos - r->n + i + RL_RECENT) % RL_RECENT;
    s += r->ret[k];
    l += r->len[k];
  }
  *ret = r->n ? s / r->n : NAN;
  *len = r->n ? l / r->n : NAN;
}

/* The first field of a CSV row as a number (a step or an iteration); -1 when it is not one. */
static long long row_position(const char *line) {
  char *end;
  long long v = strtoll(line, &end, 10);
  return end != line && *end == ',' ? v : -1;
}

/* path with the header and the rows at or before position upto (the others were written after the
 * checkpoint a resumed run continues from). */
static tg_status metrics_trim(const char *path, const char *header, int64_t upto, const char *what) {
  char *text = NULL;
  size_t len = 0;
  tg_text keep = {0};
  tg_status st = tg_file_exists(path) ? tg_read_file(path, &text, &len) : TG_OK;
  if (st != TG_OK) return st;
  tg_text_puts(&keep, header);
  for (char *line = text; line && *line;) {
    char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);
    long long at = row_position(line);
    if (at >= 0 && at <= upto) tg_text_append(&keep, line, n);
    line += n;
  }
  tg_free(text);
  st = keep.oom ? tg_error(TG_ERR_NOMEM, "%s: out of memory rewriting '%s'", what, path)
                : tg_write_atomic(path, keep.data, keep.len);
  tg_text_free(&keep);
  return st;
}

tg_status rl_metrics_open(const char *run, const char *header, int resumed, int64_t upto, const char *what, FILE **out) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/metrics.csv", run);
  tg_status st = resumed ? metrics_trim(path, header, upto, what) : tg_write_atomic(path, header, strlen(header));
  if (st != TG_OK) return st;
  *out = fopen(path, "a");
  if (!*out) return tg_error(TG_ERR_IO, "%s: cannot append to '%s'", what, path);
  return TG_OK;
}

void rl_csv_num(FILE *f, double v, int is_float) {
  char buf[40];
  fputc(',', f);
  if (isfinite(v)) fputs(tg_format_real(buf, v, is_float), f);
}

void rl_metrics_row_begin(FILE *f, int64_t position, int64_t env_steps, int64_t episodes, double ret, double len) {
  fprintf(f, "%lld,%lld,%lld", (long long)position, (long long)env_steps, (long long)episodes);
  rl_csv_num(f, ret, 0);
  rl_csv_num(f, len, 0);
}

void rl_metrics_row_end(FILE *f, double sps) {
  fputc(',', f);
  if (isfinite(sps)) fprintf(f, "%.1f", sps);
  fputc('\n', f);
  fflush(f);
}

void rl_clock_start(rl_clock *k, int64_t env_steps) {
  k->t_start = k->t_interval = tg_clock_seconds();
  k->call_steps0 = k->interval_steps0 = env_steps;
}

double rl_clock_interval(rl_clock *k, int64_t env_steps) {
  double now = tg_clock_seconds(), dt = now - k->t_interval;
  double sps = dt > 0 ? (double)(env_steps - k->interval_steps0) / dt : NAN;
  k->t_interval = now;
  k->interval_steps0 = env_steps;
  return sps;
}

double rl_clock_call(const rl_clock *k, int64_t env_steps, double *sps) {
  double seconds = k->t_start > 0 ? tg_clock_seconds() - k->t_start : 0.0;
  *sps = seconds > 0 ? (double)(env_steps - k->call_steps0) / seconds : NAN;
  return seconds;
}
