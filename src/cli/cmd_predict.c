/* `tickgrad predict`: a forecaster run's quantile forecasts per bar, from bar files or streamed CSV lines on stdin. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/read_flags.h"
#include "data/readers/timeconv.h"
#include "tickgrad/predictor.h"
#include "tickgrad/tickgrad.h"

#define PR_MAX_DATA 64
#define PR_LINE_MAX 4096

typedef struct pr_args {
  const char *run, *weights, *out;
  int n_data, stream;
  const char *data[PR_MAX_DATA];
  cli_read_flags read; /* over the run's own (its config.json) */
  tg_read_settings rs; /* what reads: the run's with the flags on top */
} pr_args;

static void pr_usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad predict --run RUN (--data FILE... | --stream) [flags]\n"
          "Forecasts with a trained forecaster (any train --model): for every bar, the run's quantiles of the forward log\n"
          "return 1..H bars ahead, decided from that bar and earlier ones only. One CSV row per bar:\n"
          "  ts,instrument,close,h1_q0.1,h1_q0.5,...   (forecast columns empty while an instrument warms up)\n"
          "\n"
          "  --run RUN            the run folder (config.json, inference.json, best.safetensors)\n"
          "  --data FILE...       bar files, folders or globs (CSV, DBN, Parquet; sorted by time)\n"
          "  --stream             read bars as CSV lines on stdin: a header line naming the columns (as the CSV reader\n"
          "                       knows them: ts/time/date, open, high, low, close, volume, instrument), then one bar per\n"
          "                       line; each forecast is written and flushed as soon as its bar is read. Each bar costs\n"
          "                       O(1) for mamba2 (its recurrent state) and one window for the others. The rows are the\n"
          "                       same as --data gives for the same bars. Lines are numbered from the header (line 1);\n"
          "                       a line that is not a bar stops with exit 1 naming its line (a blank line is skipped)\n"
          "  --weights W          best (default: the best validation epoch) or last\n"
          "  --out FILE           write the CSV there (default: standard output)\n"
          "With --data, a warning on stderr says when the bars' median interval is not the one the run trained on.\n"
          "exit codes: 0 done, 1 failure (run, data; the message names the bar), 2 usage\n");
  cli_read_flags_help(f);
  fprintf(f, "  (the bars are read as the run read its own, RUN/config.json, unless these flags say otherwise)\n");
}

static int take_data(pr_args *a, int argc, char **argv, int *i) {
  int n0 = a->n_data;
  while (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) {
    if (a->n_data == PR_MAX_DATA) return tg_cli_usage_error("predict", "more than %d --data paths", PR_MAX_DATA);
    a->data[a->n_data++] = argv[++*i];
  }
  return a->n_data > n0 ? 0 : tg_cli_usage_error("predict", "--data needs at least one file");
}

static int flag_value(pr_args *a, const char *f, const char *v) {
  if (!v) return tg_cli_usage_error("predict", "%s needs a value", f);
  if (!strcmp(f, "--run")) a->run = v;
  else if (!strcmp(f, "--weights")) a->weights = v;
  else if (!strcmp(f, "--out")) a->out = v;
  else return tg_cli_usage_error("predict", "unknown flag '%s'", f);
  return 0;
}

static int parse(int argc, char **argv, pr_args *a) {
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i];
    int rc = 0;
    if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
      pr_usage(stdout);
      return -1;
    }
    if (!strcmp(f, "--data")) rc = take_data(a, argc, argv, &i);
    else if (!strcmp(f, "--stream")) a->stream = 1;
    else if (strncmp(f, "--", 2) != 0) rc = tg_cli_usage_error("predict", "unexpected argument '%s'", f);
    else if (cli_read_flag("predict", &a->read, f, i + 1 < argc ? argv[i + 1] : NULL, &rc) > 0) i++;
    else rc = flag_value(a, f, i + 1 < argc ? argv[++i] : NULL);
    if (rc) return rc;
  }
  if (!a->run) return tg_cli_usage_error("predict", "no run: give --run RUN");
  if (!a->n_data == !a->stream) return tg_cli_usage_error("predict", "give either --data FILE... or --stream");
  if (a->weights && strcmp(a->weights, "best") && strcmp(a->weights, "last"))
    return tg_cli_usage_error("predict", "--weights '%s': want best or last", a->weights);
  return 0;
}

static void write_header(FILE *f, const tg_predictor_info *in) {
  fprintf(f, "ts,instrument,close");
  for (int k = 0; k < in->n_classes; k++) { /* a classifier: p_<class>, quoted when the name needs it */
    const char *name = in->classes[k];
    if (!strpbrk(name, ",\"\r\n")) {
      fprintf(f, ",p_%s", name);
      continue;
    }
    fputs(",\"p_", f);
    for (const char *c = name; *c; c++) fputs(*c == '"' ? "\"\"" : (char[2]){*c, 0}, f);
    fputc('"', f);
  }
  for (int h = 0; h < in->horizons; h++)
    for (int q = 0; q < in->nq; q++) fprintf(f, ",h%d_q%g", h + 1, in->q[q]);
  fprintf(f, "\n");
}

static void write_row(FILE *f, const tg_predictor_info *in, const tg_pbar *b, const float *pred, int ready) {
  char ts[48];
  fprintf(f, "%s,%u,%.12g", tg_format_time(b->ts, ts, sizeof ts), b->instrument, b->close);
  for (int i = 0; i < tg_predictor_out_len(in); i++) {
    if (ready) fprintf(f, ",%.9g", pred[i]);
    else fputc(',', f);
  }
  fputc('\n', f);
}

/* Pushes the bar at `where` (a file and its bar number, or a line of stdin) and writes its row. */
static tg_status predict_bar(tg_predictor *p, const tg_pbar *b, float *pred, FILE *f, const char *where, int64_t i) {
  int ready = 0;
  tg_status st = tg_predictor_push(p, b, pred, &ready);
  if (st != TG_OK) return tg_error(st, "%s %lld: %s", where, (long long)i, tg_last_error());
  write_row(f, tg_predictor_get_info(p), b, pred, ready);
  return TG_OK;
}

static tg_read_opts read_opts(const pr_args *a) { return tg_read_settings_opts(&a->rs, stderr); }

static tg_status predict_files(const pr_args *a, tg_predictor *p, float *pred, FILE *f) {
  tg_bars bars;
  tg_read_opts ro = read_opts(a);
  tg_status st = tg_bars_read_paths(a->n_data, a->data, &ro, &bars);
  if (st == TG_OK) tg_bars_interval_warn(&bars, tg_predictor_get_info(p)->bar_ns, a->run, stderr);
  char where[300];
  snprintf(where, sizeof where, "%s, bar", bars.source);
  for (int64_t i = 0; st == TG_OK && i < bars.n; i++) {
    tg_pbar b;
    st = tg_predictor_bar_at(p, &bars, i, 1, &b);
    if (st == TG_OK) st = predict_bar(p, &b, pred, f, where, i + 1);
  }
  tg_bars_free(&bars);
  return st;
}

/* One line of stdin as a bar: the CSV reader's rules under the header line (its layout, its field count, the bar
 * checks), so every format it knows works and a line the file reader refuses is refused the same way. *skip: a
 * repeated time that --duplicates first drops. */
static tg_status parse_line(const pr_args *a, tg_predictor *p, const char *header, const char *line, int64_t lineno,
                            tg_stream_times *seen, tg_bars *one, tg_pbar *b, int *skip) {
  tg_read_opts ro = read_opts(a);
  ro.warn = NULL;
  tg_bars_free(one);
  tg_status st = tg_csv_parse_row("stdin", header, line, lineno, &ro, one);
  if (st == TG_OK)
    st = tg_stream_times_check(seen, one->instrument ? one->instrument[0] : 0, one->ts[0], &ro, "stdin", lineno, skip);
  if (st == TG_OK && !*skip) st = tg_predictor_bar_at(p, one, 0, 0, b);
  return st;
}

/* Reads a line without its end of line into buf (NUL-terminated after *len bytes, which may hold NUL bytes of their
 * own); 0 at the end of input; -1 for a line over PR_LINE_MAX bytes. */
static int read_line(FILE *in, char *buf, size_t *len) {
  size_t n = 0;
  int ch;
  while ((ch = getc(in)) != EOF && ch != '\n') {
    if (n == PR_LINE_MAX) return -1;
    buf[n++] = (char)ch;
  }
  if (ch == EOF && n == 0) return 0;
  if (n && buf[n - 1] == '\r') n--;
  buf[n] = 0;
  *len = n;
  return 1;
}

/* TG_ERR_FORMAT for a line of stdin holding a NUL byte (the file reader's error): nothing after it would be read. */
static tg_status nul_check(const char *line, size_t len, int64_t lineno) {
  const char *z = memchr(line, '\0', len);
  if (!z) return TG_OK;
  return tg_error(TG_ERR_FORMAT, "stdin: line %lld: a NUL byte at byte %zu of the line; is this CSV text?",
                  (long long)lineno, (size_t)(z - line) + 1);
}

/* A line --duplicates first drops is named on stderr, never dropped in silence. */
static void warn_skipped(const tg_bars *one, int64_t lineno) {
  char t[TG_TIME_TEXT];
  fprintf(stderr, "tickgrad predict: stdin: line %lld (%s, instrument %u) repeats an earlier line's time; skipped "
          "(--duplicates first)\n", (long long)lineno, tg_format_time(one->ts[0], t, sizeof t),
          one->instrument ? one->instrument[0] : 0);
}

/* Lines are numbered as read, the header line 1 (as `sed -n Np` counts them); a blank line is skipped as the file
 * reader skips it, every other line is a bar or an error naming its line. */
static tg_status predict_stream(const pr_args *a, tg_predictor *p, float *pred, FILE *f) {
  char header[PR_LINE_MAX + 1], line[PR_LINE_MAX + 1];
  int64_t lineno = 1, skipped = 0;
  size_t len;
  tg_bars one; /* the line's bar and its extra columns */
  tg_bars_init(&one);
  tg_stream_times seen;
  memset(&seen, 0, sizeof seen);
  int r = read_line(stdin, header, &len);
  if (r <= 0) return tg_error(TG_ERR_FORMAT, "stdin: %s", r ? "line 1: the header line is too long" : "no header line");
  tg_status st = nul_check(header, len, lineno);
  while (st == TG_OK && (r = read_line(stdin, line, &len)) != 0) {
    lineno++;
    if (r < 0) st = tg_error(TG_ERR_FORMAT, "stdin: line %lld: longer than %d bytes", (long long)lineno, PR_LINE_MAX);
    if (st == TG_OK) st = nul_check(line, len, lineno);
    if (st != TG_OK || len == 0) continue;
    tg_pbar b;
    int skip = 0;
    st = parse_line(a, p, header, line, lineno, &seen, &one, &b, &skip); /* b points into one */
    if (st == TG_OK && skip) warn_skipped(&one, lineno), skipped++;
    else if (st == TG_OK) st = predict_bar(p, &b, pred, f, "stdin: line", lineno);
    fflush(f);
  }
  if (skipped)
    fprintf(stderr, "tickgrad predict: stdin: %lld line%s skipped, repeating an earlier line's time (--duplicates "
            "first)\n", (long long)skipped, skipped == 1 ? "" : "s");
  tg_bars_free(&one);
  tg_stream_times_free(&seen);
  return st;
}

/* How the run read its bars (RUN/config.json), with the reader flags given on top. */
static tg_status run_read_settings(pr_args *a) {
  char path[4200];
  snprintf(path, sizeof path, "%s/config.json", a->run);
  static tg_train_config c;
  c = tg_train_defaults(tg_model_default_kind());
  tg_status st = tg_train_config_load(path, &c);
  if (st != TG_OK) return st;
  a->rs = c.read;
  cli_read_flags_over(&a->read, &a->rs);
  return TG_OK;
}

int tg_cmd_predict(int argc, char **argv) {
  pr_args a;
  memset(&a, 0, sizeof a);
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  tg_predictor *p = NULL;
  tg_predictor_opts po = {a.weights, stderr};
  FILE *f = stdout;
  float *pred = NULL;
  tg_status st = tg_predictor_open(a.run, &po, &p);
  if (st == TG_OK) st = run_read_settings(&a);
  if (st == TG_OK) {
    const tg_predictor_info *in = tg_predictor_get_info(p);
    pred = malloc((size_t)tg_predictor_out_len(in) * sizeof *pred);
    if (!pred) st = tg_error(TG_ERR_NOMEM, "predict: out of memory");
  }
  if (st == TG_OK && a.out && !(f = fopen(a.out, "w"))) {
    f = stdout;
    st = tg_error(TG_ERR_IO, "predict: cannot write %s", a.out);
  }
  if (st == TG_OK) {
    write_header(f, tg_predictor_get_info(p));
    fflush(f); /* a client waiting for the header before it sends bars gets it now */
    st = a.stream ? predict_stream(&a, p, pred, f) : predict_files(&a, p, pred, f);
  }
  if (f != stdout && fclose(f) != 0 && st == TG_OK) st = tg_error(TG_ERR_IO, "predict: writing %s failed", a.out);
  fflush(stdout);
  free(pred);
  tg_predictor_free(p);
  if (st != TG_OK) {
    fprintf(stderr, "tickgrad predict: %s\n", tg_last_error());
    return TG_EXIT_FAIL;
  }
  return TG_EXIT_OK;
}
