/* Telemetry: CSV header and rows, blank GPU columns without NVML, process CPU and RSS, prompt stop, bad paths. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/telemetry.h"

#define HEADER "time_s,gpu,util_pct,mem_used_mib,mem_total_mib,temp_c,power_w,proc_cpu_pct,proc_rss_mib"
#define NCOLS 9

static char g_dir[256]; /* the test's temporary folder */

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_s(void) { /* this process's CPU time */
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The whole of s parses as a number (blank is not one). */
static int parse_num(const char *s, double *v) {
  char *end;
  *v = NAN;
  if (!*s) return 0;
  *v = strtod(s, &end);
  return *end == '\0';
}

/* Splits line (modified) at commas into at most max fields; returns the field count. */
static int split(char *line, char **fields, int max) {
  int n = 0;
  char *p = line;
  for (;;) {
    if (n < max) fields[n] = p;
    n++;
    char *c = strchr(p, ',');
    if (!c) break;
    *c = '\0';
    p = c + 1;
  }
  return n;
}

typedef struct csv_check {
  int rows;       /* data rows */
  int util_num;   /* rows with a numeric util_pct */
  double cpu_max; /* the largest proc_cpu_pct (-1: none) */
} csv_check;

/* The process columns: proc_cpu_pct blank in the first row (no period yet) and a number >= 0 in every
 * other; proc_rss_mib a positive number in every row (this process has /proc). */
static void check_host(char **f, int row, const char *copy, csv_check *r) {
  double v = NAN;
  if (row == 1) {
    CHECK_MSG(f[7][0] == '\0', "row 1 proc_cpu_pct not blank: '%s'", copy);
  } else {
    CHECK_MSG(parse_num(f[7], &v) && v >= 0 && v < 100000, "row %d proc_cpu_pct: '%s'", row, copy);
    if (v > r->cpu_max) r->cpu_max = v;
  }
  CHECK_MSG(parse_num(f[8], &v) && v > 0 && v < 1e7, "row %d proc_rss_mib: '%s'", row, copy);
}

/* Checks the file's header and every row; nvml_on: NVML is in use (see the status line), and
 * util_required: the util column may not be blank. */
static csv_check check_csv(const char *path, int gpu, int nvml_on, int util_required) {
  csv_check r = {0, 0, -1};
  size_t len;
  char *text = (char *)tg_test_read_file(path, &len);
  CHECK_MSG(text != NULL, "cannot read %s", path);
  if (!text) return r;
  CHECK_MSG(len > 0 && text[len - 1] == '\n', "%s does not end with a newline", path);
  char *save = NULL;
  char *line = strtok_r(text, "\n", &save);
  CHECK_MSG(line && strcmp(line, HEADER) == 0, "header is '%s'", line ? line : "(none)");
  double prev_time = -1;
  while ((line = strtok_r(NULL, "\n", &save))) {
    r.rows++;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", line);
    char *f[NCOLS];
    int n = split(line, f, NCOLS);
    CHECK_MSG(n == NCOLS, "row %d has %d fields: '%s'", r.rows, n, copy);
    if (n != NCOLS) continue;
    double v = NAN;
    CHECK_MSG(parse_num(f[0], &v) && v >= 0, "row %d time: '%s'", r.rows, copy);
    CHECK_MSG(v >= prev_time, "row %d time goes back: '%s' after %.3f", r.rows, copy, prev_time);
    const char *dot = strchr(f[0], '.');
    CHECK_MSG(dot && strlen(dot + 1) == 3, "row %d time not 3 decimals: '%s'", r.rows, copy);
    prev_time = v;
    CHECK_MSG(parse_num(f[1], &v) && v == gpu, "row %d gpu: '%s'", r.rows, copy);
    check_host(f, r.rows, copy, &r);
    if (!nvml_on) {
      for (int k = 2; k < 7; k++)
        CHECK_MSG(f[k][0] == '\0', "row %d column %d not blank without NVML: '%s'", r.rows, k,
                  copy);
      continue;
    }
    if (f[2][0] || util_required) {
      CHECK_MSG(parse_num(f[2], &v) && v >= 0 && v <= 100, "row %d util: '%s'", r.rows, copy);
      r.util_num++;
    }
    double used = NAN, total = NAN;
    if (f[3][0] || f[4][0])
      CHECK_MSG(parse_num(f[3], &used) && parse_num(f[4], &total) && used >= 0 && total > 0 &&
                    used <= total,
                "row %d memory: '%s'", r.rows, copy);
    if (f[5][0])
      CHECK_MSG(parse_num(f[5], &v) && v > 0 && v < 150, "row %d temp: '%s'", r.rows, copy);
    if (f[6][0])
      CHECK_MSG(parse_num(f[6], &v) && v >= 0 && v < 2000, "row %d power: '%s'", r.rows, copy);
  }
  free(text);
  return r;
}

/* 20 Hz for 0.3 s: header, rows, mark, status. */
static void test_sampling(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/telemetry.csv", g_dir);
  tg_telemetry *t = NULL;
  double t0 = now_s();
  CHECK_OK(tg_telemetry_start(path, 0, 20.0, &t));
  if (!t) return;
  const char *status = tg_telemetry_nvml_status(t);
  CHECK_MSG(status && status[0], "empty NVML status");
  int nvml_on = strncmp(status, "NVML ok", 7) == 0;
  /* the status names util when NVML cannot report it (e.g. a MIG-partitioned GPU) */
  int util_required = nvml_on && !strstr(status, "util:");
  printf("NVML status: %s\n", status);
  sleep_s(0.3);
  double mean = -1;
  int have = tg_telemetry_mark(t, &mean);
  if (!nvml_on) {
    CHECK_MSG(have == 0 && mean == -1, "mark without NVML: %d, %g", have, mean);
  } else {
    if (util_required) CHECK_MSG(have == 1, "mark with NVML found no utilisation");
    if (have) CHECK_MSG(mean >= 0 && mean <= 100, "mean utilisation %g", mean);
  }
  CHECK(strcmp(tg_telemetry_nvml_status(t), status) == 0);
  CHECK_OK(tg_telemetry_stop(t));
  double elapsed = now_s() - t0;

  csv_check r = check_csv(path, 0, nvml_on, util_required);
  /* start's sample, one per tick (6 in 0.3 s), stop's sample; at least 2 however slow the
   * machine, and never more than the ticks that fit in the time taken */
  CHECK_MSG(r.rows >= 2, "only %d rows", r.rows);
  CHECK_MSG(r.rows <= 3 + (int)(elapsed * 20), "%d rows at 20 Hz in %.3f s", r.rows, elapsed);
  if (have) CHECK(r.util_num > 0);
  unlink(path);
}

/* hz <= 0 is 1 Hz, and stop does not wait for the next tick. */
static void test_default_rate_prompt_stop(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/slow.csv", g_dir);
  tg_telemetry *t = NULL;
  double t0 = now_s();
  CHECK_OK(tg_telemetry_start(path, 0, 0.0, &t));
  if (!t) return;
  int nvml_on = strncmp(tg_telemetry_nvml_status(t), "NVML ok", 7) == 0;
  sleep_s(0.05);
  double s0 = now_s();
  CHECK_OK(tg_telemetry_stop(t));
  double stop_s = now_s() - s0, total_s = now_s() - t0;
  CHECK_MSG(stop_s < 0.5, "stop took %.3f s", stop_s);
  csv_check r = check_csv(path, 0, nvml_on, 0);
  if (total_s < 0.9)
    CHECK_MSG(r.rows == 2, "%d rows in %.3f s at 1 Hz (want start's and stop's)", r.rows, total_s);
  unlink(path);
}

/* A thread of this process spinning for 0.4 s shows in proc_cpu_pct (sampled at 20 Hz): some row reads at least
 * 70% of the CPU share the process really got over the spin (its CPU time over the wall time), so a machine busy
 * with other work, which gives the spinner less than a core, does not fail it; a row's figure is this process's CPU
 * time, not a share of the machine. */
static void test_process_cpu(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/busy.csv", g_dir);
  tg_telemetry *t = NULL;
  CHECK_OK(tg_telemetry_start(path, 0, 20.0, &t));
  if (!t) return;
  int nvml_on = strncmp(tg_telemetry_nvml_status(t), "NVML ok", 7) == 0;
  volatile double x = 0;
  double w0 = now_s(), c0 = cpu_s(), end = w0 + 0.4;
  while (now_s() < end)
    for (int i = 0; i < 10000; i++) x += 1e-9 * i;
  double got = 100.0 * (cpu_s() - c0) / (now_s() - w0); /* the share of a core the spin really had */
  CHECK_OK(tg_telemetry_stop(t));
  csv_check r = check_csv(path, 0, nvml_on, 0);
  printf("busy thread: highest proc_cpu_pct %.1f over %d rows; the spin had %.1f%% of a core\n", r.cpu_max, r.rows, got);
  if (got < 5) /* a machine so busy that the spin hardly ran says nothing either way */
    printf("not checked: the spin had under 5%% of a core\n");
  else
    CHECK_MSG(r.cpu_max >= 0.7 * got, "a spinning thread that had %.1f%% of a core shows at most %.1f%% CPU", got,
              r.cpu_max);
  unlink(path);
}

/* Another GPU index lands in the gpu column; a missing one is not an error. */
static void test_other_index(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/gpu7.csv", g_dir);
  tg_telemetry *t = NULL;
  CHECK_OK(tg_telemetry_start(path, 7, 50.0, &t));
  if (!t) return;
  const char *status = tg_telemetry_nvml_status(t);
  CHECK(status[0] != '\0');
  int nvml_on = strncmp(status, "NVML ok", 7) == 0;
  sleep_s(0.05);
  CHECK_OK(tg_telemetry_stop(t));
  csv_check r = check_csv(path, 7, nvml_on, 0);
  CHECK(r.rows >= 2);
  unlink(path);
}

static void test_errors(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/no-such-folder/telemetry.csv", g_dir);
  tg_telemetry *t = (tg_telemetry *)&t; /* overwritten with NULL on failure */
  CHECK_STATUS(tg_telemetry_start(path, 0, 10.0, &t), TG_ERR_IO);
  CHECK_MSG(strstr(tg_last_error(), path) != NULL, "message does not name the path: %s",
            tg_last_error());
  CHECK(t == NULL);
  CHECK_STATUS(tg_telemetry_start(NULL, 0, 10.0, &t), TG_ERR_INVALID);
  CHECK_STATUS(tg_telemetry_start(path, 0, 10.0, NULL), TG_ERR_INVALID);
  CHECK_STATUS(tg_telemetry_start(path, -1, 10.0, &t), TG_ERR_INVALID);
  CHECK(t == NULL);
  /* opens, but the header cannot be written (ENOSPC) */
  if (access("/dev/full", W_OK) == 0) {
    CHECK_STATUS(tg_telemetry_start("/dev/full", 0, 10.0, &t), TG_ERR_IO);
    CHECK_MSG(strstr(tg_last_error(), "/dev/full") != NULL, "message: %s", tg_last_error());
    CHECK(t == NULL);
  }
  CHECK_OK(tg_telemetry_stop(NULL));
  double mean = -1;
  CHECK(tg_telemetry_mark(NULL, &mean) == 0 && mean == -1);
  CHECK(strcmp(tg_telemetry_nvml_status(NULL), "") == 0);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/tg_telemetry_XXXXXX");
  if (!mkdtemp(g_dir)) return tg_test_skip("cannot create a temporary folder");
  test_sampling();
  test_default_rate_prompt_stop();
  test_process_cpu();
  test_other_index();
  test_errors();
  CHECK_MSG(rmdir(g_dir) == 0, "files left in %s", g_dir);
  return tg_test_finish();
}
