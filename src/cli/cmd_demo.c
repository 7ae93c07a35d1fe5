/* `tickgrad demo`: trains a small MLP on a built-in synthetic regression and saves a checkpoint. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "base/clock.h"
#include "base/files.h"
#include "cli/cli.h"
#include "cli/demo_net.h"
#include "tickgrad/tickgrad.h"

typedef struct demo_opts {
  long steps, batch, train_rows, seed;
  double lr;
  const char *out;
  const char *device;
} demo_opts;

static void demo_usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad demo [--steps N] [--batch N] [--rows N] [--lr X] [--seed N] [--out DIR] [--device D]\n"
          "Trains an MLP %d-%d-%d-1 (SiLU) with AdamW, warm-up + cosine LR and clipping on a seeded\n"
          "synthetic regression, prints progress and the held-out loss, and writes DIR/final.safetensors\n"
          "(weights), DIR/final.state.safetensors (optimizer state) and DIR/metrics.csv.\n"
          "With a GPU the data stays on it, batches are drawn there and the step replays as a CUDA graph;\n"
          "DIR/telemetry.csv then samples the GPU once a second.\n"
          "defaults: --steps 3000 --batch 64 --rows 8192 --lr 0.003 --seed 1 --out runs/demo --device auto\n",
          FEATURES, HIDDEN, HIDDEN);
}

static int parse(int argc, char **argv, demo_opts *o) {
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    long n;
    if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
      demo_usage(stdout);
      return -1;
    } else if (strcmp(f, "--steps") == 0) {
      if (!tg_cli_parse_long(f, v, 1, 100000000, &o->steps)) return TG_EXIT_USAGE;
    } else if (strcmp(f, "--batch") == 0) {
      if (!tg_cli_parse_long(f, v, 1, 1 << 20, &o->batch)) return TG_EXIT_USAGE;
    } else if (strcmp(f, "--rows") == 0) {
      if (!tg_cli_parse_long(f, v, 16, 1 << 26, &o->train_rows)) return TG_EXIT_USAGE;
    } else if (strcmp(f, "--seed") == 0) {
      if (!tg_cli_parse_long(f, v, 0, 2147483647L, &n)) return TG_EXIT_USAGE;
      o->seed = n;
    } else if (strcmp(f, "--lr") == 0) {
      if (!tg_cli_number("demo", f, v, 1e-9, 10, &o->lr)) return TG_EXIT_USAGE;
    } else if (strcmp(f, "--out") == 0) {
      if (!v) return tg_cli_usage_error("demo", "--out needs a folder");
      o->out = v;
    } else if (strcmp(f, "--device") == 0) {
      if (!v) return tg_cli_usage_error("demo", "--device needs a value (auto, cpu, cpu:N, cuda, cuda:N)");
      o->device = v;
    } else {
      return tg_cli_usage_error("demo", "unknown flag '%s'", f);
    }
    i++;
  }
  if (o->batch > o->train_rows) return tg_cli_usage_error("demo", "--batch %ld exceeds --rows %ld", o->batch, o->train_rows);
  return 0;
}

static int fail(const char *what) {
  fprintf(stderr, "tickgrad demo: %s: %s\n", what, tg_last_error());
  return TG_EXIT_FAIL;
}

/* Device memory, utilisation and transfers since the previous report, for the progress line. */
static void print_device_usage(tg_device dev, tg_telemetry *tel, tg_mem_stats *prev) {
  tg_mem_stats m;
  if (dev.kind != TG_CUDA || tg_device_mem_stats(dev, &m) != TG_OK) return;
  double util = 0;
  const double mib = 1048576.0;
  printf("  mem %.1f/%.1f/%.1f MiB", (double)m.allocated / mib, (double)m.reserved / mib, (double)m.peak / mib);
  if (tel && tg_telemetry_mark(tel, &util)) printf("  util %.0f%%", util);
  else printf("  util -");
  printf("  h2d %llu B  d2h %llu B", (unsigned long long)(m.h2d_bytes - prev->h2d_bytes),
         (unsigned long long)(m.d2h_bytes - prev->d2h_bytes));
  *prev = m;
}

int tg_cmd_demo(int argc, char **argv) {
  demo_opts o = {3000, 64, 8192, 1, 3e-3, "runs/demo", "auto"};
  int rc = parse(argc, argv, &o);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  tg_device dev;
  char notice[512];
  if (tg_device_choose(o.device, &dev, notice, sizeof notice) != TG_OK)
    return tg_cli_usage_error("demo", "--device %s: %s", o.device, tg_last_error());
  if (notice[0]) printf("%s\n", notice);
  if (tg_make_dirs(o.out) != TG_OK) {
    fprintf(stderr, "tickgrad demo: cannot create folder '%s': %s\n", o.out, tg_last_error());
    return TG_EXIT_FAIL;
  }
  long val_rows = 2048;
  float *x = malloc(sizeof(float) * (size_t)(o.train_rows + val_rows) * FEATURES);
  float *y = malloc(sizeof(float) * (size_t)(o.train_rows + val_rows));
  if (!x || !y) {
    fprintf(stderr, "tickgrad demo: out of host memory for %ld rows\n", o.train_rows);
    return TG_EXIT_FAIL;
  }
  make_rows((uint64_t)o.seed, 1, o.train_rows + val_rows, x, y);
  demo_table train_t = {0}, val_t = {0};
  if (table_make(&train_t, dev, "train", x, y, o.train_rows) != TG_OK ||
      table_make(&val_t, dev, "val", x + o.train_rows * FEATURES, y + o.train_rows, val_rows) != TG_OK)
    return fail("data on the device");

  tg_store *store = tg_store_new(dev, (uint64_t)o.seed);
  tg_graph *train = tg_graph_new(store, "demo.train"), *eval = tg_graph_new(store, "demo.eval");
  tg_graph_set_seed(train, (uint64_t)o.seed, 0);
  tg_tensor *loss = build_train(train, o.train_rows, o.batch), *val_loss = build_eval(eval, val_rows);
  if (!loss || !val_loss) return fail("build");
  tg_plan_opts po = tg_plan_defaults(dev);
  po.log = stdout;
  po.training = 1;
  if (tg_graph_plan(train, &po) != TG_OK) return fail("plan");
  po.training = 0;
  if (tg_graph_plan(eval, &po) != TG_OK) return fail("plan");

  tg_optim_config oc = tg_optim_defaults(TG_ADAMW);
  oc.lr = (float)o.lr;
  oc.clip_norm = 1.0f;
  oc.schedule = (tg_lr_schedule){TG_LR_COSINE, o.steps / 20, o.steps, 0.05f};
  tg_optim *opt;
  if (tg_optim_new(store, &oc, &opt) != TG_OK) return fail("optimizer");
  if (tg_graph_bind(train, "x", &train_t.tx) || tg_graph_bind(train, "y", &train_t.ty) ||
      tg_graph_bind(eval, "x", &val_t.tx) || tg_graph_bind(eval, "y", &val_t.ty))
    return fail("bind");
  tg_step *step_train, *step_eval;
  if (tg_step_new(train, loss, opt, &step_train) != TG_OK || tg_step_new(eval, val_loss, NULL, &step_eval) != TG_OK)
    return fail("step");

  char path[4096];
  tg_telemetry *tel = NULL;
  if (dev.kind == TG_CUDA) {
    snprintf(path, sizeof path, "%s/telemetry.csv", o.out);
    if (tg_telemetry_start(path, dev.index, 1.0, &tel) != TG_OK) return fail("telemetry");
    printf("telemetry: %s (%s)\n", path, tg_telemetry_nvml_status(tel));
  }
  snprintf(path, sizeof path, "%s/metrics.csv", o.out);
  FILE *metrics = fopen(path, "w");
  if (!metrics) {
    fprintf(stderr, "tickgrad demo: cannot write '%s': %s\n", path, strerror(errno));
    return TG_EXIT_FAIL;
  }
  fprintf(metrics, "step,train_loss,val_loss,lr,grad_norm,seconds\n");
  char dname[16];
  printf("training %ld steps, batch %ld, %ld rows on %s, %d threads\n", o.steps, o.batch, o.train_rows,
         tg_device_str(dev, dname, sizeof dname), tg_threads());
  tg_mem_stats usage = {0};
  tg_device_mem_stats(dev, &usage);
  double t0 = tg_clock_seconds(), window = 0;
  long report = o.steps / 10 > 0 ? o.steps / 10 : 1;
  for (long step = 1; step <= o.steps; step++) {
    float l = 0, vl = 0;
    if (tg_step_run(step_train, &l) != TG_OK) return fail("step");
    if (!isfinite(l)) {
      fprintf(stderr, "tickgrad demo: loss is %f at step %ld; stopping (last good checkpoint kept)\n", l, step);
      return TG_EXIT_FAIL;
    }
    if (step == 2 && dev.kind == TG_CUDA) {
      if (tg_step_captured(step_train)) printf("training step captured as a CUDA graph; replaying it from now on\n");
      else printf("training step not captured (%s); running it eagerly\n", tg_step_capture_error(step_train));
    }
    window += l;
    if (step % report == 0 || step == o.steps) {
      if (tg_step_run(step_eval, &vl) != TG_OK) return fail("eval");
      double el = tg_clock_seconds() - t0;
      long n = step % report == 0 ? report : step % report;
      printf("step %6ld/%ld  train %.5f  val %.5f  lr %.2e  |g| %.3f  %.0f samples/s", step, o.steps,
             window / (double)n, vl, tg_optim_last_lr(opt), tg_optim_last_grad_norm(opt),
             (double)step * (double)o.batch / el);
      print_device_usage(dev, tel, &usage);
      printf("\n");
      fprintf(metrics, "%ld,%.6f,%.6f,%.6e,%.5f,%.3f\n", step, window / (double)n, vl, tg_optim_last_lr(opt),
              tg_optim_last_grad_norm(opt), el);
      fflush(metrics);
      window = 0;
    }
  }
  fclose(metrics);
  tg_telemetry_stop(tel);
  snprintf(path, sizeof path, "%s/final.safetensors", o.out);
  if (tg_store_save(store, path) != TG_OK) return fail("save weights");
  printf("wrote %s\n", path);
  snprintf(path, sizeof path, "%s/final.state.safetensors", o.out);
  tg_train_state st = {tg_optim_steps(opt), tg_graph_rng_seed(train), tg_graph_rng_offset(train), 0, o.steps * o.batch};
  if (tg_train_state_save(path, opt, &st) != TG_OK) return fail("save training state");
  printf("wrote %s\n", path);
  tg_step_free(step_train);
  tg_step_free(step_eval);
  tg_optim_free(opt);
  tg_graph_free(train);
  tg_graph_free(eval);
  tg_store_free(store);
  table_free(&train_t);
  table_free(&val_t);
  free(x);
  free(y);
  return TG_EXIT_OK;
}
