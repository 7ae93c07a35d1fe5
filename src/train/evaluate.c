/* tg_evaluate: a run's data rebuilt as the trainer built it, every split scored through its weights. */
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "base/files.h"
#include "base/run_lock.h"
#include "io/ckpt_set.h"
#include "io/finite.h"
#include "tickgrad/device.h"
#include "tickgrad/report.h"
#include "train/train_internal.h"

static const char *SPLIT_NAMES[TG_SPLIT_COUNT] = {"train", "val", "test"};

const char *tg_eval_split_name(int split) { return split >= 0 && split < TG_SPLIT_COUNT ? SPLIT_NAMES[split] : "?"; }

tg_status tg_eval_split_parse(const char *name, int *split) {
  for (int s = 0; s < TG_SPLIT_COUNT; s++)
    if (name && strcmp(name, SPLIT_NAMES[s]) == 0) return *split = s, TG_OK;
  return tg_error(TG_ERR_INVALID, "split '%s': want train, val or test", name ? name : "");
}

/* The graphs of one evaluation: full batches, and each split's remainder (g NULL where a split divides evenly). */
typedef struct ev_nets {
  tg_store *store;
  tr_net full, rest[TG_SPLIT_COUNT];
} ev_nets;

static void nets_close(ev_nets *n) {
  tg_graph_free(n->full.g);
  for (int s = 0; s < TG_SPLIT_COUNT; s++) tg_graph_free(n->rest[s].g);
  tg_store_free(n->store);
  memset(n, 0, sizeof *n);
}

/* The run's weights file: the last checkpoint's or the best validation epoch's. */
static const char *weights_file(int last) { return last ? "weights.safetensors" : "best.safetensors"; }

/* The graphs for the splits in the mask, all built before the weights load, so none of them initialises a parameter
 * after it. */
static tg_status nets_open(ev_nets *n, const tg_train_config *c, const tr_data *d, const char *path, unsigned splits) {
  tg_forecast_cfg model = c->model;
  memset(n, 0, sizeof *n);
  if (tr_data_model(d, &model) != TG_OK) return tg_error(TG_ERR_INVALID, "evaluate: %s", tg_last_error());
  n->store = tg_store_new(d->dev, (uint64_t)c->seed);
  if (!n->store) return tg_error(TG_ERR_NOMEM, "evaluate: out of memory for the parameter store");
  tg_status st = tr_net_build_eval(&n->full, n->store, "evaluate", c->batch, d, &model, c->precision);
  for (int s = 0; s < TG_SPLIT_COUNT && st == TG_OK; s++) {
    int64_t rest = d->ds.splits.s[s].count % c->batch;
    if (rest && (splits & (1u << s)))
      st = tr_net_build_eval(&n->rest[s], n->store, "evaluate.rest", rest, d, &model, c->precision);
  }
  if (st == TG_OK) st = tg_weights_check_finite(path);
  if (st == TG_OK) st = tg_store_load(n->store, path);
  return st;
}

/* The windows of one batch into the split's scores: quantiles into a, a classifier's rows into y and p at n. */
static void take_batch(const tg_train_config *c, const tr_data *d, const float *pred, const float *tgt, int64_t b,
                       tr_eval_acc *a, int32_t *y, float *p, int64_t n) {
  if (d->C) tr_class_rows(d, pred, tgt, b, y + n, p + n * d->C);
  else tr_eval_acc_add(a, d, c->model.q, pred, tgt, b);
}

static tg_status class_scores(const tr_data *d, const int32_t *y, const float *p, int64_t n, tg_eval_split *s) {
  int64_t cm[TG_MAX_CLASSES * TG_MAX_CLASSES];
  tg_class_report r;
  memset(&r, 0, sizeof r);
  r.confusion = cm;
  memset(s, 0, sizeof *s);
  s->windows = n;
  tg_status st = n > 0 ? tg_class_metrics(y, p, n, d->C, d->prior, &r) : TG_OK;
  if (st != TG_OK || n == 0) {
    s->log_loss = s->accuracy = s->balanced_accuracy = NAN;
    s->base_log_loss = s->base_accuracy = s->base_balanced_accuracy = NAN;
    return n == 0 ? TG_OK : st;
  }
  s->log_loss = r.log_loss, s->accuracy = r.accuracy, s->balanced_accuracy = r.balanced_accuracy;
  s->base_log_loss = r.base_log_loss, s->base_accuracy = r.base_accuracy;
  s->base_balanced_accuracy = r.base_balanced_accuracy;
  if (d->C <= TG_TRAIN_CM_CLASSES) memcpy(s->confusion, cm, (size_t)(d->C * d->C) * sizeof *cm);
  s->loss = s->zero_loss = s->naive_loss = NAN;
  return TG_OK;
}

/* Every window of split sp once, in order (full batches, then the remainder), scored into s. */
static tg_status score_split(const tg_train_config *c, tr_data *d, ev_nets *n, int sp, tg_eval_split *s) {
  int64_t count = d->ds.splits.s[sp].count, B = c->batch, per = d->C ? d->C : (int64_t)d->H * d->nq;
  float *pred = tg_malloc((size_t)(B * per) * sizeof *pred), *tgt = tg_malloc((size_t)(B * (d->C ? d->C : d->H)) * sizeof *tgt);
  int32_t *y = d->C ? tg_malloc((size_t)(count + 1) * sizeof *y) : NULL;              /* [count] */
  float *p = d->C ? tg_malloc((size_t)((count + 1) * d->C) * sizeof *p) : NULL;     /* [count, C] */
  tr_eval_acc *a = tg_malloc(sizeof *a);
  tg_sampler smp;
  memset(&smp, 0, sizeof smp);
  tg_status st = !pred || !tgt || !a || (d->C && (!y || !p))
                     ? tg_error(TG_ERR_NOMEM, "evaluate: out of memory for the %s split's %lld windows",
                                tg_eval_split_name(sp), (long long)count)
                     : TG_OK;
  if (st == TG_OK) tr_eval_acc_init(a, d, c->model.q);
  if (st == TG_OK && count > 0) st = tg_sampler_init(&smp, &d->ds.splits, sp, (uint64_t)c->seed, 0);
  int64_t done = 0;
  for (; st == TG_OK && done + B <= count; done += B) {
    st = tr_net_eval_batch(&n->full, d, &smp, pred, tgt);
    if (st == TG_OK) take_batch(c, d, pred, tgt, B, a, y, p, done);
  }
  if (st == TG_OK && done < count) {
    st = tr_net_eval_batch(&n->rest[sp], d, &smp, pred, tgt);
    if (st == TG_OK) take_batch(c, d, pred, tgt, count - done, a, y, p, done);
  }
  if (st == TG_OK && d->C) st = class_scores(d, y, p, count, s);
  else if (st == TG_OK) tr_eval_acc_finish(a, d, s);
  if (count > 0) tg_sampler_free(&smp);
  tg_free(pred), tg_free(tgt), tg_free(y), tg_free(p), tg_free(a);
  return st;
}

tg_status tr_evaluate_weights(const tg_train_config *c, tr_data *d, int last, unsigned splits, tg_evaluation *e) {
  ev_nets n;
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/%s", c->out, weights_file(last));
  memset(e, 0, sizeof *e);
  e->H = d->H, e->nq = d->C ? 0 : d->nq, e->n_classes = d->C;
  memcpy(e->q, c->model.q, sizeof e->q);
  snprintf(e->weights, sizeof e->weights, "%s", last ? "last" : "best");
  tg_status st = nets_open(&n, c, d, path, splits);
  for (int s = 0; s < TG_SPLIT_COUNT && st == TG_OK; s++) {
    e->from_ns[s] = d->ds.splits.s[s].ts_begin, e->to_ns[s] = d->ds.splits.s[s].ts_end;
    if (!(splits & (1u << s))) continue;
    st = score_split(c, d, &n, s, &e->s[s]);
    e->scored[s] = st == TG_OK;
  }
  nets_close(&n);
  return st;
}

/* RUN/config.json with the evaluation's own device, threads and (moved files) data paths. */
static tg_status load_config(const tg_eval_opts *o, tg_train_config *c) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/config.json", o->run);
  *c = tg_train_defaults(tg_model_default_kind());
  tg_status st = tg_train_config_load(path, c);
  if (st != TG_OK) return tg_error(st, "evaluate: %s", tg_last_error());
  snprintf(c->out, sizeof c->out, "%s", o->run);
  snprintf(c->device, sizeof c->device, "%s", o->device ? o->device : "auto");
  c->threads = o->threads;
  c->log = o->log;
  c->progress = NULL;
  if (o->n_data > TG_TRAIN_MAX_DATA)
    return tg_error(TG_ERR_INVALID, "evaluate: %d data paths; at most %d", o->n_data, TG_TRAIN_MAX_DATA);
  if (o->n_data > 0) c->n_data = o->n_data;
  for (int i = 0; i < o->n_data; i++) {
    if (strlen(o->data[i]) >= sizeof c->data[i]) return tg_error(TG_ERR_INVALID, "evaluate: data path too long: %.64s..", o->data[i]);
    snprintf(c->data[i], sizeof c->data[i], "%s", o->data[i]);
  }
  return TG_OK;
}

static tg_status weights_exist(const tg_eval_opts *o) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/%s", o->run, weights_file(o->last));
  if (tg_file_exists(path)) return TG_OK;
  return tg_error(TG_ERR_INVALID, "evaluate: %s has no %s: %s", o->run, weights_file(o->last),
                  o->last ? "the run has no checkpoint yet" : "no epoch of the run has finished yet");
}

tg_status tg_evaluate(const tg_eval_opts *o, tg_evaluation *out) {
  if (!o || !o->run || !out) return tg_error(TG_ERR_INVALID, "evaluate: no run");
  tg_train_config c;
  tr_data d;
  tg_device dev;
  char notice[512] = "";
  int lock = -1, known = 0;
  memset(&d, 0, sizeof d);
  tg_status st = tg_ckpt_check_run_files(o->run);
  if (st == TG_OK) st = load_config(o, &c);
  if (st == TG_OK) st = weights_exist(o);
  if (st == TG_OK && c.threads > 0) st = tg_set_threads(c.threads);
  if (st == TG_OK) st = tg_device_choose(c.device, &dev, notice, sizeof notice);
  if (st == TG_OK && notice[0] && o->log) fprintf(o->log, "%s\n", notice);
  if (st == TG_OK && (st = tg_run_lock(o->run, "evaluate", &lock)) != TG_OK) st = tg_error(st, "evaluate: %s", tg_last_error());
  tg_forecast_cfg model = c.model;
  if (st == TG_OK) st = tr_data_open(&d, &c, o->bars, dev, &model, o->log);
  if (st == TG_OK) st = tr_data_print_same(o->run, &c, &d, "evaluate", &known);
  if (st == TG_OK && !known && o->log)
    fprintf(o->log, "warning: evaluate: %s has no data.json (a run from an older tickgrad): the bars cannot be checked "
            "against those it trained on\n", o->run);
  if (st == TG_OK) st = tr_evaluate_weights(&c, &d, o->last, (1u << TG_SPLIT_COUNT) - 1, out);
  if (st == TG_OK) st = tr_evaluation_write(o->run, out);
  if (st == TG_OK && tg_report_write(o->run, o->log) != TG_OK && o->log)
    fprintf(o->log, "warning: report not written: %s\n", tg_last_error());
  char err[2048];
  snprintf(err, sizeof err, "%s", tg_last_error());
  tr_data_close(&d);
  tg_run_unlock(lock);
  if (st != TG_OK && strncmp(err, "evaluate", 8) == 0) tg_error(st, "%s", err); /* cleanup must not hide the reason */
  else if (st != TG_OK) tg_error(st, "evaluate: %s", err);
  return st;
}
