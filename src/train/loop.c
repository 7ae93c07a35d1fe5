/* tg_train_run: run folder, data and model (or resume), epochs, early stopping, checkpoints, telemetry, report. */
#include <math.h>
#include <string.h>
#include <time.h>
#include "base/hash.h"
#include "base/clock.h"
#include "base/files.h"
#include "base/alloc.h"
#include "base/json.h"
#include "base/run_lock.h"
#include "base/text.h"
#include "io/ckpt_set.h"
#include "tickgrad/device.h"
#include "tickgrad/dist.h"
#include "tickgrad/report.h"
#include "tickgrad/telemetry.h"
#include "train/train_internal.h"

typedef struct tr_run {
  tg_train_config c;
  tg_device dev;
  tr_data d;
  tr_model m;
  tr_progress p;
  FILE *log, *metrics;
  float *pred, *tgt;
  tg_mem_stats mem;
  tg_stage_stats stage;
  tg_telemetry *tel;      /* RUN/telemetry.csv while epochs run */
  int root;               /* rank 0 (or the only process): the one that logs and writes the run's files */
  int collectives;        /* the device's collectives are open (data-parallel on a device) */
  int lock;               /* the root's lock on the run folder (tg_run_lock), -1 when not held */
  int made_out;           /* this call made the run folder: a refused run removes it again while it is empty */
} tr_run;

/* Resume: RUN/config.json is the config; c may differ only in device, threads and out. */
static tg_status resolve_resume(tg_train_config *c) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/config.json", c->resume);
  tg_train_config saved = *c;
  tg_status st = tg_train_config_load(path, &saved);
  if (st != TG_OK) return tg_error(st, "resume: %s", tg_last_error());
  if (c->precision == TG_PRECISION_AUTO) c->precision = saved.precision; /* auto was settled when the run started */
  if (!c->tz[0]) snprintf(c->tz, sizeof c->tz, "%s", saved.tz);            /* so was the calendar zone */
  const tg_setting *s = tr_config_diff(&saved, c);
  if (s)
    return tg_error(TG_ERR_INVALID, "resume: %s differs from %s; a resumed run keeps its settings (only device and "
                    "threads may change)", s->key, path);
  snprintf(c->out, sizeof c->out, "%s", c->resume);
  return TG_OK;
}

static void default_out(tg_train_config *c) {
  if (c->out[0]) return;
  char stamp[32];
  time_t now = time(NULL);
  struct tm tmv;
  localtime_r(&now, &tmv);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tmv);
  snprintf(c->out, sizeof c->out, "runs/%s-%s", tg_train_model_name(c->model.kind), stamp);
}

/* config.json: every setting, a new run id, and a classifier's class names after them. A folder whose run stopped
 * before its first checkpoint is started over. */
static tg_status write_config(const tg_train_config *c, const tr_data *d, FILE *log) {
  char path[TG_PATH_MAX + 32], run_id[17];
  snprintf(path, sizeof path, "%s/config.json", c->out);
  if (tg_file_exists(path) && tg_ckpt_exists(c->out))
    return tg_error(TG_ERR_INVALID, "train: %s already holds a run (config.json); continue it with --resume %s or "
                    "choose another --out", c->out, c->out);
  if (tg_file_exists(path) && log)
    fprintf(log, "%s holds a run that stopped before its first checkpoint; starting over in it\n", c->out);
  tg_ckpt_run_id_new(run_id);
  char *text = tg_train_config_to_json(c);
  if (!text) return tg_error(TG_ERR_NOMEM, "train: out of memory writing %s", path);
  tg_text b = {0};
  char *close = strrchr(text, '}'); /* the object's end: the classes go before it */
  if (close) *close = '\0';
  tg_text_puts(&b, text);
  if (d->C) {
    while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == ' ')) b.data[--b.len] = '\0';
    tg_text_puts(&b, ",\n  \"classes\": [");
    for (int k = 0; k < d->C; k++) {
      tg_text_puts(&b, k ? ", " : "");
      tg_json_append_string(&b, d->ds.y.class_names[k]);
    }
    tg_text_puts(&b, "]\n");
  }
  while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == ' ')) b.data[--b.len] = '\0';
  tg_text_printf(&b, ",\n  \"run_id\": \"%s\"\n}\n", run_id);
  tg_free(text);
  tg_status st = b.oom ? tg_error(TG_ERR_NOMEM, "train: out of memory writing %s", path) : tg_write_atomic(path, b.data, b.len);
  tg_text_free(&b);
  return st;
}

static void print_header(tr_run *r) {
  if (!r->log) return;
  const tg_train_config *c = &r->c;
  int64_t steps = r->d.n_train / c->batch, drop = r->d.n_train % c->batch, rest = r->d.n_val % c->batch;
  tg_optim_config oc = tr_optim_config(c, steps);
  char dev[16];
  fprintf(r->log, "training %s on %s (%d thread%s) into %s\n", tg_train_model_name(c->model.kind),
          tg_device_str(r->dev, dev, sizeof dev), tg_threads(), tg_threads() == 1 ? "" : "s", c->out);
  fprintf(r->log, "  %d epochs of %lld steps of %d windows (the last %lld training windows of each epoch's shuffle are "
          "dropped); Adam lr %g, warm-up %lld steps, then %s; clip %g; early stopping after %d epochs without a "
          "%g improvement\n", c->epochs, (long long)steps, c->batch, (long long)drop, c->lr,
          (long long)oc.schedule.warmup_steps, c->schedule == TG_TRAIN_COSINE ? "cosine decay" : "constant",
          c->clip_norm, c->patience, c->min_delta);
  if (c->precision == TG_PRECISION_BF16)
    fprintf(r->log, "  precision bf16: GEMM operands rounded to bf16 with f32 accumulation; f32 master weights, Adam "
            "state, norms, softmax, losses, LSTM and scan states\n");
  if (c->recompute != TG_RECOMPUTE_NONE)
    fprintf(r->log, "  recompute %s: activations inside the model's %s are freed after the forward and recomputed "
            "in backward (the same numbers, less memory, more time)\n", tg_recompute_name(c->recompute),
            c->recompute == TG_RECOMPUTE_BLOCKS ? "blocks" : "blocks and between them");
  if (tr_ranks(c) > 1)
    fprintf(r->log, "  data-parallel over %d ranks: each takes %d windows of every global batch of %d; gradients "
            "averaged by one all-reduce per step; rank 0 writes the run\n", tr_ranks(c), c->batch / tr_ranks(c),
            c->batch);
  fprintf(r->log, "  validation: %lld windows in %lld batches of %d", (long long)r->d.n_val,
          (long long)(r->d.n_val / c->batch), c->batch);
  if (rest) fprintf(r->log, " and one of %lld", (long long)rest);
  fprintf(r->log, ", every epoch\n");
}

/* Data-parallel over MPI ranks (tg_dist_size() > 1): every rank trains on its shard of each global batch and the
 * gradients are averaged; checks that the ranks agree (config, device, batch) before any data is read. */
static tg_status dist_check(tr_run *r) {
  int n = tr_ranks(&r->c);
  if (n == 1) return TG_OK;
  tg_status dst = tg_dist_device_for_rank(&r->dev); /* a GPU per rank, with collectives; the CPU as it is */
  if (dst != TG_OK) return tg_error(dst, "train: %s", tg_last_error());
  if (!r->c.out[0])
    return tg_error(TG_ERR_INVALID, "train: rank %d of %d: give --out: every rank must name the same run folder",
                    tg_dist_rank(), n);
  if (r->c.batch % n != 0)
    return tg_error(TG_ERR_INVALID, "train: rank %d of %d: --batch %d is the global batch and must be divisible by "
                    "the %d ranks", tg_dist_rank(), n, r->c.batch, n);
  char *json = tg_train_config_to_json(&r->c);
  if (!json) return tg_error(TG_ERR_NOMEM, "train: out of memory");
  uint64_t h = tg_fnv1a64(json, strlen(json)); /* the settings' fingerprint */
  tg_free(json);
  return tg_dist_check_same(h, "the training config (flags, data paths)");
}

/* Data, model and the run folder; a resumed run's checkpoint and metrics. */
static tg_status open_run(tr_run *r, const tg_bars *bars) {
  tg_train_config *c = &r->c;
  char notice[512] = "";
  tg_status st = tg_train_config_check(c);
  if (st == TG_OK && c->resume[0]) st = resolve_resume(c);
  if (st != TG_OK) return st;
  if (!c->resume[0]) tr_settle_tz(c);
  if (c->threads > 0 && (st = tg_set_threads(c->threads)) != TG_OK) return st;
  if ((st = tg_device_choose(c->device, &r->dev, notice, sizeof notice)) != TG_OK) return st;
  if (notice[0] && r->log) fprintf(r->log, "%s\n", notice);
  /* auto: decided here, recorded in config.json */
  tg_precision_resolve(&c->precision, r->dev, tg_forecast_width(&c->model), notice, sizeof notice);
  if (notice[0] && r->log) fprintf(r->log, "%s\n", notice);
  if ((st = dist_check(r)) != TG_OK) return st;
  default_out(c);
  r->made_out = r->root && !tg_file_exists(c->out);
  if (r->root && (st = tg_make_dirs(c->out)) != TG_OK) return st; /* only the lock's holder touches the folder */
  if (r->root && (st = tg_run_lock(c->out, "train", &r->lock)) != TG_OK) return tg_error(st, "train: %s", tg_last_error());
  tg_forecast_cfg model = c->model;
  if ((st = tr_data_open(&r->d, c, bars, r->dev, &model, r->log)) != TG_OK) return st;
  if (r->log && tr_data_has_calendar(&r->d))
    fprintf(r->log, "calendar features (time of day, weekday) in zone %s%s\n", c->tz[0] ? c->tz : "UTC",
            !c->tz[0] ? " (a run from before the data's zone was the default)" : "");
  if (r->root && c->resume[0] && (st = tr_data_print_check(c, &r->d, r->log)) != TG_OK) return st; /* same data */
  if (tr_ranks(c) > 1 &&
      (st = tg_dist_check_same((uint64_t)r->d.ds.fx.n * 1000003u + (uint64_t)r->d.F, "the data (bars, features)")) != TG_OK)
    return st;
  if ((st = tr_model_open(&r->m, c, &model, &r->d)) != TG_OK) return st;
  if (tr_ranks(c) > 1) { /* gradients and loss averaged inside the step: on a device by its collectives */
    if (!tg_device_host_memory(r->dev) && (st = tg_dist_device_open(r->dev)) != TG_OK) return st;
    r->collectives = !tg_device_host_memory(r->dev);
    tg_step_set_reduce(r->m.step, tg_dist_step_mean, &r->dev);
  }
  size_t per = r->d.C ? (size_t)r->d.C : (size_t)r->d.H; /* a window's targets; a classifier's outputs too */
  size_t np = (size_t)c->batch * (r->d.C ? per : per * (size_t)r->d.nq), nt = (size_t)c->batch * per;
  r->pred = tg_malloc(np * sizeof(float));
  r->tgt = tg_malloc(nt * sizeof(float));
  if (!r->pred || !r->tgt) return tg_error(TG_ERR_NOMEM, "train: out of memory for validation outputs");
  r->p.best_val = INFINITY;
  int found = 0;
  if (c->resume[0] && (st = tr_ckpt_load(c, &r->m, &r->d, &r->p, r->log, &found)) != TG_OK) return st;
  if (c->resume[0] && !found) {
    if (r->log) fprintf(r->log, "%s holds no checkpoint (the run stopped before its first): starting it from the "
                        "beginning with its config.json\n", c->out);
  } else if (c->resume[0]) {
    r->p.saved_epoch = r->p.epoch;
    if (r->log && r->p.epoch_steps)
      fprintf(r->log, "resuming %s after step %lld of epoch %d (global step %lld)\n", c->out,
              (long long)r->p.epoch_steps, r->p.epoch + 1, (long long)r->p.step);
    else if (r->log)
      fprintf(r->log, "resuming %s after epoch %d (step %lld)\n", c->out, r->p.epoch, (long long)r->p.step);
  } else if (r->root && (st = write_config(c, &r->d, r->log)) != TG_OK) {
    return st;
  }
  if (r->root && !c->resume[0] && (st = tr_data_print_write(c, &r->d)) != TG_OK) return st;
  if (r->root && (st = tr_meta_write(c->out, &r->d, c->precision, c->recompute)) != TG_OK) return st;
  if (r->root && (st = tr_metrics_rewrite(c->out, &r->p, r->d.C, &r->metrics)) != TG_OK) return st;
  print_header(r);
  tr_memplan_print(r->log, &r->m, &r->d, c->batch, c->precision);
  if (r->log) fflush(r->log);
  return TG_OK;
}

/* Device memory and the bytes moved since the last call. */
static void usage_delta(tr_run *r, tg_train_metrics *t) {
  tg_mem_stats m;
  tg_stage_stats s = tg_stage_stats_get(r->d.stage);
  tg_device_mem_stats(r->dev, &m);
  t->mem_allocated_mib = (double)m.allocated / 1048576.0;
  t->mem_peak_mib = (double)m.peak / 1048576.0;
  if (!tg_device_host_memory(r->dev)) {
    t->h2d_bytes = (double)(m.h2d_bytes - r->mem.h2d_bytes);
    t->d2h_bytes = (double)(m.d2h_bytes - r->mem.d2h_bytes);
  } else {
    t->h2d_bytes = (double)(s.h2d_bytes - r->stage.h2d_bytes);
    t->d2h_bytes = (double)(s.d2h_bytes - r->stage.d2h_bytes);
  }
  r->mem = m;
  r->stage = s;
}

/* One epoch: train, validate, the numbers; *stopped (and no validation) when a stop came due after a step. */
static tg_status run_epoch(tr_run *r, int epoch, tg_train_metrics *t, int *stopped) {
  tr_epoch_ctx x = {&r->c, &r->d, &r->m, &r->p, r->c.out, epoch, r->c.progress, r->pred, r->tgt, "", 0};
  tr_qacc val;
  memset(t, 0, sizeof *t);
  t->epoch = epoch;
  if (tg_device_captures(r->dev)) t->forward_s = t->backward_s = t->optimizer_s = NAN; /* one captured call */
  double t0 = tg_clock_seconds();
  tg_status st = tr_train_epoch(&x, t);
  double t1 = tg_clock_seconds();
  if ((*stopped = x.stopped)) return st;
  if (st == TG_OK) st = tr_eval_epoch(&x, &val);
  if (st != TG_OK) return st;
  t->val_s = tg_clock_seconds() - t1;
  t->seconds = tg_clock_seconds() - t0;
  t->samples_per_s = (double)(r->d.n_train / r->c.batch * r->c.batch) / (t1 - t0);
  if (r->d.C) {
    tr_class_metrics(&r->d, t);
  } else {
    t->val_loss = tr_qacc_loss(&val, r->d.H, r->d.nq);
    t->q50 = tr_qacc_qrisk(&val, &r->c.model, 0.5f);
    t->q90 = tr_qacc_qrisk(&val, &r->c.model, 0.9f);
    t->naive50 = tr_qacc_qrisk(&r->d.naive_acc, &r->c.model, 0.5f);
    t->naive90 = tr_qacc_qrisk(&r->d.naive_acc, &r->c.model, 0.9f);
    t->acc = t->bal_acc = t->base_acc = t->base_bal_acc = t->base_logloss = NAN;
  }
  usage_delta(r, t);
  if (!isfinite(t->val_loss))
    return tg_error(TG_ERR_NUMERIC, "train: validation loss is %s after epoch %d (step %lld); stopped, %s",
                    isnan(t->val_loss) ? "NaN" : "Inf", epoch, (long long)r->p.step,
                    r->p.saved_epoch ? "the last good checkpoint is kept" : "no checkpoint had been written yet");
  return TG_OK;
}

/* Early stopping on the validation loss; best.safetensors when it improves. */
static tg_status track_best(tr_run *r, const tg_train_metrics *t) {
  tr_progress *p = &r->p;
  if (t->val_loss < p->best_val - r->c.min_delta) {
    p->best_val = t->val_loss;
    p->best_epoch = t->epoch;
    p->bad_epochs = 0;
    return r->root ? tr_ckpt_save_best(r->c.out, &r->m) : TG_OK;
  }
  p->bad_epochs++;
  if (r->c.patience > 0 && p->bad_epochs >= r->c.patience) p->stopped_early = 1;
  return TG_OK;
}

static tg_status checkpoint(tr_run *r) {
  tg_status st = r->root ? tr_ckpt_save(r->c.out, &r->m, &r->d, &r->p, r->c.batch) : TG_OK;
  if (st == TG_OK) r->p.saved_epoch = r->p.epoch;
  return st;
}

/* A stop came due inside epoch p->epoch + 1: a checkpoint of that position, and the line that says how to go on. */
static tg_status interrupt(tr_run *r) {
  tr_progress *p = &r->p;
  tg_status st = checkpoint(r);
  if (st != TG_OK) return st;
  p->interrupted = 1;
  if (r->log) {
    fprintf(r->log, "interrupted: stopped after step %lld of epoch %d (global step %lld); checkpoint in %s; continue "
            "with: tickgrad train --resume %s\n", (long long)p->epoch_steps, p->epoch + 1, (long long)p->step,
            r->c.out, r->c.out);
    fflush(r->log);
  }
  return TG_OK;
}

static tg_status epochs(tr_run *r) {
  tg_train_config *c = &r->c;
  tr_progress *p = &r->p;
  usage_delta(r, &(tg_train_metrics){0});
  while (!p->finished && p->epoch < c->epochs && !(c->stop_after > 0 && p->epoch >= c->stop_after) &&
         !(c->stop_after_step > 0 && p->step >= c->stop_after_step)) {
    tg_train_metrics t;
    int e = p->epoch + 1, stopped = 0;
    tg_status st = run_epoch(r, e, &t, &stopped);
    if (st == TG_OK && stopped) return interrupt(r);
    if (st == TG_OK) st = track_best(r, &t);
    if (st != TG_OK) return st;
    p->epoch = e;
    if ((st = tr_progress_push(p, &t)) != TG_OK) return st;
    if (r->log) {
      tr_metrics_print(r->log, &t, c->epochs, r->dev, c->precision);
      fflush(r->log); /* a line per epoch also when the log is a pipe or a file */
    }
    if (r->metrics) {
      tr_metrics_row(r->metrics, &t);
      fflush(r->metrics);
    }
    if (p->stopped_early && r->log)
      fprintf(r->log, "early stop: no validation improvement of %g for %d epochs (best %.5f at epoch %d)\n",
              c->min_delta, c->patience, p->best_val, p->best_epoch);
    p->finished = p->stopped_early || e == c->epochs;
    int stop = p->finished || (c->stop_after > 0 && e >= c->stop_after);
    if ((stop || e % c->ckpt_every == 0) && (st = checkpoint(r)) != TG_OK) return st;
    if (c->on_epoch && c->on_epoch(c->on_epoch_ctx, &t, r->m.store) && !stop) {
      if ((st = checkpoint(r)) != TG_OK) return st;
      break;
    }
  }
  return TG_OK;
}

/* RUN/telemetry.csv at 1 Hz while epochs run (a resumed run starts the file afresh); a failure is a warning. */
static void telemetry_start(tr_run *r) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/telemetry.csv", r->c.out);
  if (tg_telemetry_start(path, tg_telemetry_gpu_for(r->dev), 1.0, &r->tel) != TG_OK) {
    if (r->log) fprintf(r->log, "warning: no telemetry: %s\n", tg_last_error());
  } else if (r->log) {
    fprintf(r->log, "telemetry: %s once a second (%s)\n", path, tg_telemetry_nvml_status(r->tel));
  }
}

static void telemetry_stop(tr_run *r) {
  if (r->tel && tg_telemetry_stop(r->tel) != TG_OK && r->log) fprintf(r->log, "warning: %s\n", tg_last_error());
  r->tel = NULL;
}

/* RUN/report.html, also after a NaN stop; a failure is a warning, not the run's. */
static void write_report(tr_run *r) {
  if (tg_report_write(r->c.out, r->log) != TG_OK && r->log)
    fprintf(r->log, "warning: report not written: %s\n", tg_last_error());
}

/* The end of a finished run: the best weights scored on the validation and test splits (RUN/evaluation.json; the
 * training split, the largest, only in `tickgrad evaluate`) and the test split's line. A failure here is a warning:
 * the run itself is done. */
static void evaluate_best(tr_run *r) {
  tg_evaluation *e = tg_malloc(sizeof *e);
  tg_status st = e ? tr_evaluate_weights(&r->c, &r->d, 0, 1u << TG_VAL | 1u << TG_TEST, e)
                   : tg_error(TG_ERR_NOMEM, "out of memory");
  if (st == TG_OK) st = tr_evaluation_write(r->c.out, e);
  if (st == TG_OK && r->log) {
    fprintf(r->log, "best weights (epoch %d) on ", r->p.best_epoch);
    tg_evaluation_line(r->log, e, TG_TEST);
    fprintf(r->log, "  (val and test in %s/evaluation.json; every split's tables: tickgrad evaluate --run %s)\n", r->c.out,
            r->c.out);
  } else if (st != TG_OK && r->log) {
    fprintf(r->log, "warning: the best weights were not evaluated: %s\n", tg_last_error());
  }
  if (r->log) fflush(r->log);
  tg_free(e);
}

static void fill_result(const tr_run *r, tg_train_result *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->out, sizeof out->out, "%s", r->c.out);
  out->epochs_run = r->p.epoch;
  out->best_epoch = r->p.best_epoch;
  out->stopped_early = r->p.stopped_early;
  out->interrupted = r->p.interrupted;
  out->steps = r->p.step;
  out->train_windows = r->d.n_train;
  out->val_windows = r->d.n_val;
  if (r->p.n_rows > 0) out->last = r->p.rows[r->p.n_rows - 1];
  if (r->p.best_epoch >= 1 && r->p.best_epoch <= r->p.n_rows) out->best = r->p.rows[r->p.best_epoch - 1];
}

tg_status tg_train_run(const tg_train_config *cin, const tg_bars *bars, tg_train_result *out) {
  if (!cin) return tg_error(TG_ERR_INVALID, "train: no config");
  tr_run *r = tg_calloc(1, sizeof *r);
  if (!r) return tg_error(TG_ERR_NOMEM, "train: out of memory");
  r->c = *cin;
  r->root = tr_rank(&r->c) == 0;
  r->lock = -1;
  r->log = r->root ? cin->log : NULL;
  if (!r->root) r->c.progress = NULL;
  tg_status st = open_run(r, bars);
  if (st == TG_OK && r->p.finished && r->log)
    fprintf(r->log, "%s finished after epoch %d; nothing to do\n", r->c.out, r->p.epoch);
  if (st == TG_OK && !r->p.finished && r->root) telemetry_start(r);
  int was_finished = r->p.finished; /* before this call: nothing to do, nothing new to evaluate */
  if (st == TG_OK) st = epochs(r);
  telemetry_stop(r);
  if (st == TG_OK && r->log && !r->p.interrupted) {
    fprintf(r->log, "done: %d epochs, best validation loss %.5f at epoch %d; weights in %s/weights.safetensors, best "
            "in %s/best.safetensors\n", r->p.epoch, r->p.best_val, r->p.best_epoch, r->c.out, r->c.out);
    fflush(r->log);
  }
  if (st == TG_OK && r->root && !was_finished && r->p.finished && r->p.best_epoch >= 1) evaluate_best(r);
  if (out) fill_result(r, out);
  char err[2048];
  snprintf(err, sizeof err, "%s", tg_last_error());
  if (r->metrics) {
    fclose(r->metrics);
    write_report(r); /* the run folder holds metrics.csv: open_run got that far */
  }
  tg_free(r->pred);
  tg_free(r->tgt);
  tr_model_close(&r->m);
  if (r->collectives) tg_dist_device_close(r->dev);
  tr_data_close(&r->d);
  tr_progress_free(&r->p);
  if (st != TG_OK && r->made_out) tg_run_unlock_discard(r->lock, r->c.out); /* refused before writing: no folder */
  else tg_run_unlock(r->lock); /* after the last file of the run: report.html */
  tg_free(r);
  if (st != TG_OK) tg_error(st, "%s", err); /* cleanup must not hide the reason */
  return st;
}
