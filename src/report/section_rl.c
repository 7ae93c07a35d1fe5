/* The report's training section for DQN and PPO runs: their metrics.csv by environment step. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "report/report_internal.h"

enum { R_ENV, R_EPISODES, R_RET, R_LEN, R_LOSS, R_GRAD, R_EPS, R_LR, R_SPS, R_N };
static const char *const COLS[R_N] = {"env_steps", "episodes", "mean_return", "mean_length", "loss",
                                      "grad_norm", "epsilon", "lr", "env_steps_per_s"};

static rp_chart chart(const char *id, const char *title, const char *ylabel) {
  rp_chart c;
  memset(&c, 0, sizeof c);
  c.id = id, c.title = title, c.xlabel = "environment steps", c.ylabel = ylabel;
  return c;
}

static double last_finite(const double *v, int64_t n) {
  for (int64_t i = n - 1; v && i >= 0; i--)
    if (isfinite(v[i])) return v[i];
  return NAN;
}

static void summary(rp_page *p, double *const *v, int64_t n, int dqn) {
  char b[64];
  const char *keys[4] = {"agent", "environment steps", "episodes", "mean return (last 100 episodes)"};
  double nums[3] = {last_finite(v[R_ENV], n), last_finite(v[R_EPISODES], n), last_finite(v[R_RET], n)};
  rp_raw(p, "<dl class=\"kv\"><div><dt>");
  rp_text(p, keys[0]);
  rp_raw(p, dqn ? "</dt><dd>DQN</dd></div>" : "</dt><dd>PPO</dd></div>");
  for (int k = 0; k < 3; k++) {
    rp_raw(p, "<div><dt>");
    rp_text(p, keys[k + 1]);
    rp_raw(p, "</dt><dd>");
    rp_text(p, rp_num(nums[k], b, sizeof b));
    rp_raw(p, "</dd></div>");
  }
  rp_raw(p, "</dl>\n");
}

void rp_section_rl(rp_page *p, rp_table *t) {
  int64_t n = t->nrow;
  int dqn = rp_table_col(t, "epsilon") >= 0;
  if (n == 0) {
    rp_unavailable(p, "metrics.csv has no reporting intervals yet");
    return;
  }
  double *v[R_N];
  for (int k = 0; k < R_N; k++) v[k] = rp_table_numbers(t, COLS[k]);
  const double *x = v[R_ENV];
  rp_raw(p, dqn ? "<h3>DQN agent</h3>\n" : "<h3>PPO agent</h3>\n");
  summary(p, v, n, dqn);
  rp_raw(p, "<div class=\"grid\">\n");
  rp_chart c = chart("return", "Mean episode return (last 100 episodes)", "return");
  rp_chart_add(&c, "return", x, v[R_RET], n, 0, 0);
  rp_svg_lines_or(p, &c, "no episode has finished yet");
  c = chart("length", "Mean episode length (last 100 episodes)", "steps");
  rp_chart_add(&c, "length", x, v[R_LEN], n, 1, 0);
  rp_svg_lines_or(p, &c, "no episode has finished yet");
  c = chart("rl_loss", dqn ? "TD loss (mean over the interval)" : "PPO loss (last minibatch)", "loss");
  rp_chart_add(&c, "loss", x, v[R_LOSS], n, 4, 0);
  rp_svg_lines_or(p, &c, "no training step yet");
  c = chart("rl_grad_norm", "Gradient norm before clipping", "global norm");
  rp_chart_add(&c, "grad norm", x, v[R_GRAD], n, 3, 0);
  rp_svg_lines_or(p, &c, "no training step yet");
  if (dqn) {
    c = chart("epsilon", "Exploration epsilon", "epsilon");
    rp_chart_add(&c, "epsilon", x, v[R_EPS], n, 2, 0);
  } else {
    c = chart("rl_lr", "Learning rate", "learning rate");
    rp_chart_add(&c, "learning rate", x, v[R_LR], n, 2, 0);
  }
  c.y_zero = 1;
  rp_svg_lines_or(p, &c, "no values");
  c = chart("env_steps_per_s", "Environment steps per second", "steps/s");
  rp_chart_add(&c, "env steps/s", x, v[R_SPS], n, 5, 0);
  c.y_zero = 1;
  rp_svg_lines_or(p, &c, "no values");
  rp_raw(p, "</div>\n");
  for (int k = 0; k < R_N; k++) tg_free(v[k]);
}
