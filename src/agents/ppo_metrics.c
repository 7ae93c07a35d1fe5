/* PPO's numbers: the log line and RUN/metrics.csv's rows (same columns). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/clock.h"
#include "base/alloc.h"
#include "agents/ppo_internal.h"

#define METRICS_HEADER                                                                                            \
  "iteration,env_steps,episodes,mean_return,mean_length,loss,pg_loss,v_loss,entropy,approx_kl,clipfrac,"          \
  "mean_value,grad_norm,lr,env_steps_per_s\n"

tg_status pp_metrics_open(pp_run *r, int resumed) {
  return rl_metrics_open(r->run, METRICS_HEADER, resumed, r->iter, "ppo", &r->metrics);
}

void pp_log_interval(pp_run *r) {
  double now = tg_clock_seconds(), ret, len;
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
    rl_csv_num(r->metrics, ret, 0);
    rl_csv_num(r->metrics, len, 0);
    for (int k = 0; k < TG_PPO_NSTATS; k++) rl_csv_num(r->metrics, p->stats[k], 1);
    rl_csv_num(r->metrics, p->mean_value, 0);
    rl_csv_num(r->metrics, p->grad_norm, 1);
    rl_csv_num(r->metrics, p->lr, 1);
    fputc(',', r->metrics);
    if (isfinite(sps)) fprintf(r->metrics, "%.1f", sps);
    fputc('\n', r->metrics);
    fflush(r->metrics);
  }
  r->t_interval = now;
  r->interval_steps0 = steps;
}
