/* The run report: charts per file, escaping, no network, malformed lines, NaN breaks, down-sampling, RL runs, errors. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/tickgrad.h"

static char g_tmp[256];

static void write_text(const char *dir, const char *file, const char *text) {
  char path[600];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "w");
  CHECK_MSG(f != NULL, "cannot write %s", path);
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static void make_dir(char *out, size_t n, const char *name) {
  snprintf(out, n, "%s/%s", g_tmp, name);
  CHECK_MSG(mkdir(out, 0755) == 0, "cannot create %s", out);
}

/* The report of dir, written and read back (NULL on failure). */
static char *report_of(const char *dir) {
  CHECK_OK(tg_report_write(dir, NULL));
  char path[600];
  size_t len = 0;
  snprintf(path, sizeof path, "%s/report.html", dir);
  return (char *)tg_test_read_file(path, &len);
}

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s ? strstr(s, what) : NULL; p; p = strstr(p + 1, what)) n++;
  return n;
}

static int has_chart(const char *html, const char *name) {
  char want[96];
  snprintf(want, sizeof want, "class=\"chart\" data-chart=\"%s\"", name);
  return html && strstr(html, want) != NULL;
}

/* The text of chart name's <svg> element (malloc'ed), or NULL. */
static char *chart_of(const char *html, const char *name) {
  char want[96];
  snprintf(want, sizeof want, "data-chart=\"%s\"", name);
  const char *a = html ? strstr(html, want) : NULL, *b = a ? strstr(a, "</svg>") : NULL;
  if (!b) return NULL;
  char *s = malloc((size_t)(b - a) + 1);
  memcpy(s, a, (size_t)(b - a));
  s[b - a] = '\0';
  return s;
}

/* The d attribute of the k-th line (path class="ln") in svg (malloc'ed), or NULL. */
static char *line_path(const char *svg, int k) {
  const char *p = svg;
  for (int i = 0; p && i <= k; i++) {
    p = strstr(p, "<path class=\"ln\"");
    if (p && i < k) p++;
  }
  const char *d = p ? strstr(p, " d=\"") : NULL, *e = d ? strchr(d + 4, '"') : NULL;
  if (!e) return NULL;
  char *s = malloc((size_t)(e - d - 4) + 1);
  memcpy(s, d + 4, (size_t)(e - d - 4));
  s[e - d - 4] = '\0';
  return s;
}

static void check_common(const char *html, const char *what) {
  CHECK_MSG(html && strstr(html, "<!DOCTYPE html>") && strstr(html, "</html>"), "%s: not a whole page", what);
  CHECK_MSG(!strstr(html, "http://") && !strstr(html, "https://"), "%s: refers to the network", what);
  CHECK_MSG(count(html, "<script") == 2 && !strstr(html, "<script src"), "%s: scripts other than the load check", what);
  CHECK_MSG(strstr(html, "id=\"report-errors\"") && strstr(html, "setAttribute('data-report','ok')"),
            "%s: no load check", what);
}

/* ---- a forecaster's run folder with a backtest ---- */

static const char *METRICS_HEADER =
    "epoch,train_loss,val_loss,val_qrisk50,val_qrisk90,naive_qrisk50,naive_qrisk90,lr,grad_norm,seconds,"
    "samples_per_s,data_s,forward_s,backward_s,optimizer_s,step_s,val_s,mem_allocated_mib,mem_peak_mib,h2d_bytes,"
    "d2h_bytes\n";

static void write_metrics(const char *dir) {
  char text[4096];
  snprintf(text, sizeof text,
           "%s1,0.30,0.28,0.99,0.50,1.0,0.51,0.0008,0.42,1.5,9000,0.1,0.5,0.6,0.1,1.3,0.2,0,0,0,0\n"
           "2,0.26,0.27,0.97,0.49,1.0,0.51,0.0006,0.31,1.4,9500,0.1,0.5,0.6,0.1,1.2,0.2,0,0,0,0\n"
           "3,0.25,,0.96,0.48,1.0,0.51,0.0004,0.25,1.4,9600,0.1,0.5,0.6,0.1,1.2,0.2,0,0,0,0\n"
           "this line is not a row\n"
           "4,0.24,0.26,0.95,0.48,1.0,0.51,0.0002,0.22,1.4,9700,0.1,0.5,0.6,0.1,1.2,0.2,0,0,0,0\n"
           "5,0.23,0.25,0.95,0.47,1.0,0.51,0.0001,0.20,1.4,9800,0.1,0.5,0.6,0.1,1.2,0.2,0,0,0,0\n",
           METRICS_HEADER);
  write_text(dir, "metrics.csv", text);
}

/* 20000 samples: GPU columns, CPU and RSS; one RSS spike of 5000 MiB at row 12345 among values near 100. */
static void write_telemetry(const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/telemetry.csv", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fprintf(f, "time_s,gpu,util_pct,mem_used_mib,mem_total_mib,temp_c,power_w,proc_cpu_pct,proc_rss_mib\n");
  for (int i = 0; i < 20000; i++)
    fprintf(f, "%.3f,0,%d,%d,81559,50,120.5,%s,%.1f\n", i * 0.5, 40 + i % 50, 2000 + i % 700,
            i == 0 ? "" : "95.5", i == 12345 ? 5000.0 : 100.0 + (i % 7));
  fclose(f);
}

/* A backtest of sma-cross:5,20 on 400 synthetic bars written into dir; its Sharpe ratios out. */
static void write_backtest(const char *dir, double *sharpe, double *bh_sharpe) {
  tg_synth_config s = tg_synth_defaults();
  s.bars = 400;
  s.seed = 11;
  tg_bars bars;
  tg_strategy strat;
  tg_backtest bt;
  memset(&bt, 0, sizeof bt);
  CHECK_OK(tg_synth_generate(&s, &bars));
  double *target = malloc((size_t)bars.n * sizeof *target);
  tg_bt_opts o = tg_bt_defaults();
  o.cost_bps = 1;
  CHECK_OK(tg_strategy_parse("sma-cross:5,20", &strat));
  CHECK_OK(tg_strategy_targets(&strat, &bars, target));
  CHECK_OK(tg_backtest_run(&bars, target, &o, &bt));
  CHECK_OK(tg_backtest_write(&bt, strat.name, dir));
  CHECK(bt.n_trades > 10);
  *sharpe = bt.stats.sharpe;
  *bh_sharpe = bt.bh.sharpe;
  tg_backtest_free(&bt);
  free(target);
  tg_bars_free(&bars);
}

static const char *const FORECAST_CHARTS[] = {"loss", "qrisk", "lr", "grad_norm", "time_split", "samples_per_s",
                                              "calibration", "gpu_memory", "gpu_util", "proc_cpu", "proc_rss", "equity",
                                              "drawdown"};

/* evaluation.json as tg_evaluate writes it: two splits of one horizon and three quantiles. */
static void write_evaluation(const char *dir) {
  write_text(dir, "evaluation.json",
             "{\"format\": \"tickgrad-evaluation-1\", \"weights\": \"best\", \"horizons\": 1, \"quantiles\": [0.1, 0.5, 0.9],\n"
             " \"splits\": {\"val\": {\"from\": \"2020-01-16 19:30:00 UTC\", \"to\": \"2020-01-21 15:00:00 UTC\", "
             "\"windows\": 883, \"loss\": 0.3217, \"zero_loss\": 0.539, \"naive_loss\": 0.3677, \"pinball\": [[0.2, 0.5, 0.2]], "
             "\"qrisk\": [0.44, 0.9198, 0.4493], \"zero_qrisk\": [0.8, 1, 1.2], \"naive_qrisk\": [0.5, 0.9999, 0.5298], "
             "\"intervals\": [{\"lo\": 0.1, \"hi\": 0.9, \"nominal\": 0.8, \"coverage\": 0.755, \"naive_coverage\": 0.8}], "
             "\"below\": [0.09, 0.45, 0.85], \"below_by_horizon\": [[0.09, 0.45, 0.85]]},\n"
             " \"test\": {\"from\": \"2020-01-21 15:00:00 UTC\", \"to\": null, \"windows\": 883, \"loss\": 0.3574, "
             "\"zero_loss\": 0.5959, \"naive_loss\": 0.4082, \"pinball\": [[0.25, 0.55, 0.25]], \"qrisk\": [0.43, 0.9411, 0.4236], "
             "\"zero_qrisk\": [0.8, 1, 1.2], \"naive_qrisk\": [0.5, 0.9978, 0.5557], \"intervals\": [{\"lo\": 0.1, \"hi\": 0.9, "
             "\"nominal\": 0.8, \"coverage\": 0.7752, \"naive_coverage\": 0.5657}], \"below\": [0.0923, 0.4315, 0.8675], "
             "\"below_by_horizon\": [[0.0923, 0.4315, 0.8675]]}}}\n");
}

static void check_forecaster_page(const char *html, double sharpe, double bh_sharpe) {
  int n = (int)(sizeof FORECAST_CHARTS / sizeof FORECAST_CHARTS[0]);
  for (int i = 0; i < n; i++) CHECK_MSG(has_chart(html, FORECAST_CHARTS[i]), "no %s chart", FORECAST_CHARTS[i]);
  CHECK_MSG(count(html, "<svg class=\"chart\"") == n, "%d charts, want %d", count(html, "<svg class=\"chart\""), n);
  /* the statistics table: Sharpe as tg_backtest_print prints it (3 decimals), strategy then buy and hold */
  char row[160];
  snprintf(row, sizeof row, "<td>Sharpe</td><td>%.3f</td><td>%.3f</td>", sharpe, bh_sharpe);
  CHECK_MSG(strstr(html, row) != NULL, "no '%s' in the page", row);
  CHECK(strstr(html, "<td>max drawdown</td>") && strstr(html, "<td>turnover</td>") && strstr(html, "sma-cross:5,20"));
  CHECK(strstr(html, "round trips; the first and the last 5") != NULL);
  /* config.json's text is escaped */
  CHECK_MSG(strstr(html, "ret&lt;b&gt; &amp; &quot;q&quot;") != NULL, "config value not escaped");
  CHECK(strstr(html, "ret<b>") == NULL);
  CHECK(strstr(html, "mlp forecaster") != NULL);
  /* the malformed line is named, not fatal */
  CHECK_MSG(strstr(html, "metrics.csv: 1 malformed line skipped (the first: line 5: 1 fields, want 21)") != NULL,
            "no note on the malformed line");
  CHECK(strstr(html, "not available") == NULL);
  CHECK(strstr(html, "nan") == NULL && strstr(html, "NaN") == NULL);
}

/* A blank val_loss at epoch 3 breaks the validation line into two runs. */
static void check_nan_break(const char *html) {
  char *svg = chart_of(html, "loss"), *train = line_path(svg, 0), *val = line_path(svg, 1);
  CHECK_MSG(train && count(train, "M") == 1 && count(train, "L") == 4, "training line: %s", train ? train : "none");
  CHECK_MSG(val && count(val, "M") == 2 && count(val, "L") == 2, "validation line: %s", val ? val : "none");
  free(svg), free(train), free(val);
}

/* 20000 RSS samples: at most 4 points per pixel column are drawn, and the spike is one of them (at the top). */
static void check_downsampled(const char *html) {
  char *svg = chart_of(html, "proc_rss"), *d = line_path(svg, 0);
  int points = d ? count(d, "L") + count(d, "M") : 0;
  printf("proc_rss: %d points drawn for 20000 samples\n", points);
  CHECK_MSG(points > 100 && points <= 4 * 540, "%d points drawn for 20000 samples", points);
  CHECK_MSG(d && strstr(d, " 54.0") != NULL, "the 5000 MiB spike is not at the top of the plot");
  CHECK(svg && strstr(svg, ">5000<") != NULL); /* the top y tick */
  free(svg), free(d);
}

static void test_forecaster(void) {
  char dir[512];
  double sharpe = 0, bh_sharpe = 0;
  make_dir(dir, sizeof dir, "fc");
  write_text(dir, "config.json",
             "{\"model\": \"mlp\", \"features\": \"ret<b> & \\\"q\\\"\", \"lr\": 0.001, \"device\": \"cpu\", "
             "\"quantiles\": [0.1, 0.5, 0.9], \"mlp\": {\"window\": 16, \"hidden\": 64}, \"tft\": {\"hidden\": 99}}\n");
  write_text(dir, "trainer.json", "{\"format\": \"tickgrad-trainer-1\", \"finished\": 1, \"stopped_early\": 0}\n");
  write_metrics(dir);
  write_telemetry(dir);
  write_backtest(dir, &sharpe, &bh_sharpe);
  write_evaluation(dir);
  char *html = report_of(dir);
  check_common(html, "forecaster");
  /* the evaluation table: each split's row, the open end named */
  CHECK_MSG(html && strstr(html, "<td>0.3574 (0.4082)</td><td>0.5959</td><td>0.9411 (0.9978)</td><td>0.4236 (0.5557)"
                                 "</td><td>0.7752 (0.8)</td>"), "no test row in the evaluation table");
  CHECK(html && strstr(html, "<td>2020-01-21 .. end</td>") != NULL);
  check_forecaster_page(html, sharpe, bh_sharpe);
  check_nan_break(html);
  check_downsampled(html);
  CHECK_MSG(html && strstr(html, "mlp.hidden") && !strstr(html, "tft.hidden"), "the other kinds' blocks are shown");
  free(html);
  /* written atomically: nothing else left in the folder */
  DIR *dd = opendir(dir);
  int stray = 0;
  for (struct dirent *e; dd && (e = readdir(dd)) != NULL;) stray += strstr(e->d_name, ".tmp") != NULL;
  if (dd) closedir(dd);
  CHECK(stray == 0);
}

/* ---- sections whose files are missing ---- */

static void test_missing_files(void) {
  char dir[512];
  make_dir(dir, sizeof dir, "bare");
  write_text(dir, "config.json", "{\"model\": \"tft\", \"device\": \"auto\"}\n");
  char *html = report_of(dir);
  check_common(html, "bare");
  CHECK_MSG(count(html, "<svg class=\"chart\"") == 0, "charts without data");
  CHECK(strstr(html, "not available: no metrics.csv in") != NULL);
  CHECK(strstr(html, "not available: no telemetry.csv in") != NULL);
  CHECK(strstr(html, "not available: no backtest in") != NULL);
  CHECK(strstr(html, "not available: no evaluation.json in") != NULL);
  CHECK(strstr(html, "tft forecaster") != NULL);
  free(html);
  /* no config either; an empty metrics.csv; a metrics.csv from before grad_norm; a telemetry file without NVML */
  make_dir(dir, sizeof dir, "old");
  write_text(dir, "metrics.csv",
             "epoch,train_loss,val_loss,val_qrisk50,val_qrisk90,naive_qrisk50,naive_qrisk90,lr,seconds\n"
             "1,0.3,0.29,0.99,0.5,1,0.51,0.001,2\n2,0.28,0.27,0.98,0.5,1,0.51,0.0005,2\n");
  write_text(dir, "telemetry.csv", "time_s,gpu,util_pct,mem_used_mib,mem_total_mib,temp_c,power_w,proc_cpu_pct,proc_rss_mib\n"
                                   "0.000,0,,,,,,,50.0\n1.000,0,,,,,,99.0,51.0\n2.000,0,,,,,,98.0,52.5\n");
  write_text(dir, "equity.csv", "");
  html = report_of(dir);
  check_common(html, "old");
  CHECK(strstr(html, "not available: no config.json in") != NULL);
  CHECK(strstr(html, "no grad_norm column") != NULL && !has_chart(html, "grad_norm"));
  CHECK(has_chart(html, "loss") && has_chart(html, "proc_cpu") && has_chart(html, "proc_rss"));
  CHECK(!has_chart(html, "gpu_memory") && strstr(html, "The GPU columns are blank") != NULL);
  CHECK(strstr(html, "not available: equity.csv is empty") != NULL);
  CHECK(strstr(html, "not available: no trades.csv in") != NULL);
  free(html);
  write_text(dir, "metrics.csv", "");
  html = report_of(dir);
  CHECK(html && strstr(html, "not available: metrics.csv is empty") != NULL);
  free(html);
}

/* ---- DQN and PPO runs ---- */

static void test_rl(void) {
  char dir[512];
  make_dir(dir, sizeof dir, "dqn");
  write_text(dir, "config.json", "{\"format\": \"tickgrad-dqn-config-1\", \"learning_rate\": 0.00025, \"device\": "
                                 "\"cpu:0\", \"env\": {\"name\": \"cartpole\", \"n\": 1}}\n");
  write_text(dir, "env.json", "{\"model\": \"dqn\", \"env\": \"cartpole\", \"window\": 32}\n");
  write_text(dir, "metrics.csv",
             "step,env_steps,episodes,mean_return,mean_length,loss,mean_q,epsilon,grad_norm,grad_steps,env_steps_per_s\n"
             "1000,1000,40,,,,,0.8,,0,50000.5\n2000,2000,80,24.5,24.5,0.5,1.2,0.6,2.5,100,51000\n"
             "3000,3000,110,31,31,0.4,1.5,0.4,2.1,200,52000\n");
  char *html = report_of(dir);
  const char *dqn[] = {"return", "length", "rl_loss", "rl_grad_norm", "epsilon", "env_steps_per_s"};
  check_common(html, "dqn");
  for (int i = 0; i < 6; i++) CHECK_MSG(has_chart(html, dqn[i]), "dqn: no %s chart", dqn[i]);
  CHECK(count(html, "<svg class=\"chart\"") == 6 && !has_chart(html, "loss"));
  CHECK(strstr(html, "dqn policy on cartpole") != NULL && strstr(html, "DQN agent") != NULL);
  free(html);
  make_dir(dir, sizeof dir, "ppo");
  write_text(dir, "metrics.csv",
             "iteration,env_steps,episodes,mean_return,mean_length,loss,pg_loss,v_loss,entropy,approx_kl,clipfrac,"
             "mean_value,grad_norm,lr,env_steps_per_s\n"
             "1,512,20,20,20,0.9,0.1,0.8,0.69,0.01,0.1,1,0.5,0.00025,8000\n"
             "2,1024,35,30,30,0.8,0.1,0.7,0.68,0.01,0.1,2,0.4,0.0002,8100\n");
  html = report_of(dir);
  check_common(html, "ppo");
  CHECK(has_chart(html, "rl_lr") && !has_chart(html, "epsilon") && has_chart(html, "return"));
  CHECK(strstr(html, "PPO agent") != NULL);
  free(html);
}

static void test_errors(void) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/no-such-run", g_tmp);
  CHECK_STATUS(tg_report_write(dir, NULL), TG_ERR_IO);
  CHECK_MSG(strstr(tg_last_error(), dir) != NULL, "message does not name the folder: %s", tg_last_error());
  snprintf(dir, sizeof dir, "%s/fc/config.json", g_tmp); /* a file, not a folder */
  CHECK_STATUS(tg_report_write(dir, NULL), TG_ERR_IO);
  CHECK_STATUS(tg_report_write(NULL, NULL), TG_ERR_INVALID);
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_report_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot create a temporary folder");
  test_forecaster();
  test_missing_files();
  test_rl();
  test_errors();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (tg_test_failed == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
