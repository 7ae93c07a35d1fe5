/* DQN's numbers: the epsilon schedule, the log line and RUN/metrics.csv's rows (same columns). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/clock.h"
#include "base/alloc.h"
#include "agents/dqn_internal.h"

#define METRICS_HEADER \
  "step,env_steps,episodes,mean_return,mean_length,loss,mean_q,epsilon,grad_norm,grad_steps,env_steps_per_s\n"

double dq_epsilon(const tg_dqn_config *c, int64_t step) {
  double duration = (double)c->exploration_fraction * (double)c->total_timesteps;
  double slope = ((double)c->end_e - (double)c->start_e) / duration;
  double e = slope * (double)step + (double)c->start_e;
  return e > c->end_e ? e : (double)c->end_e;
}

tg_status dq_metrics_open(dq_run *r, int resumed) {
  return rl_metrics_open(r->run, METRICS_HEADER, resumed, r->step, "dqn", &r->metrics);
}

void dq_log_interval(dq_run *r) {
  double now = tg_clock_seconds(), ret, len;
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
    rl_csv_num(r->metrics, ret, 0);
    rl_csv_num(r->metrics, len, 0);
    rl_csv_num(r->metrics, loss, 0);
    rl_csv_num(r->metrics, q, 0);
    rl_csv_num(r->metrics, eps, 0);
    rl_csv_num(r->metrics, gn, 0);
    fprintf(r->metrics, ",%lld,", gsteps);
    if (isfinite(sps)) fprintf(r->metrics, "%.1f", sps);
    fputc('\n', r->metrics);
    fflush(r->metrics);
  }
  memset(&r->acc, 0, sizeof r->acc);
  r->t_interval = now;
  r->interval_step0 = r->step;
}
