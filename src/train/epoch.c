/* One epoch: shuffled training steps, timed by phase, and a validation pass over every window exactly once. */
#include <math.h>
#include <string.h>
#include "base/clock.h"
#include "base/alloc.h"
#include "tickgrad/device.h"
#include "tickgrad/dist.h"
#include "train/train_internal.h"

static void progress_bar(FILE *f, int epoch, int64_t done, int64_t total) {
  if (!f) return;
  int64_t every = total / 50 > 0 ? total / 50 : 1;
  if (done % every != 0 && done != total) return;
  char bar[31];
  int fill = (int)(30 * done / (total > 0 ? total : 1));
  for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
  bar[30] = '\0';
  fprintf(f, "\r  epoch %d [%s] %lld/%lld steps", epoch, bar, (long long)done, (long long)total);
  if (done == total) fprintf(f, "\r\033[K");
  fflush(f);
}

/* A NaN or infinite loss (or a non-finite gradient the optimizer refused): the run stops here. */
static tg_status nan_stop(const tr_epoch_ctx *x, int64_t step, int64_t steps, float loss, tg_status why) {
  char ck[TG_PATH_MAX + 96];
  if (x->p->saved_epoch > 0)
    snprintf(ck, sizeof ck, "the last good checkpoint (epoch %d) in %s is kept", x->p->saved_epoch, x->run);
  else
    snprintf(ck, sizeof ck, "no checkpoint had been written yet");
  if (why != TG_OK)
    return tg_error(TG_ERR_NUMERIC, "train: non-finite gradients at epoch %d, step %lld of %lld (global step %lld): %s; "
                    "stopped, %s", x->epoch, (long long)step, (long long)steps, (long long)x->p->step + 1,
                    x->why, ck);
  return tg_error(TG_ERR_NUMERIC, "train: loss is %s at epoch %d, step %lld of %lld (global step %lld); stopped, %s",
                  isnan(loss) ? "NaN" : "Inf", x->epoch, (long long)step, (long long)steps,
                  (long long)x->p->step + 1, ck);
}

/* A stop is due on some rank: the ranks agree (one sum), so all stop after the same step. */
static tg_status stop_due(const tg_train_config *c, const tr_progress *p, int *stop) {
  *stop = tr_stop_due(c, p);
  if (tr_ranks(c) == 1) return TG_OK;
  double v = *stop;
  tg_status st = tg_dist_sum_f64(&v, 1);
  *stop = v > 0;
  return st;
}

tg_status tr_train_epoch(tr_epoch_ctx *x, tg_train_metrics *t) {
  tr_data *d = x->d;
  tr_model *m = x->m;
  int64_t B = x->c->batch, steps = d->n_train / B, ranks = tr_ranks(x->c), shard = B / ranks;
  tr_progress *p = x->p;
  double sum = p->epoch_loss_sum, norm_sum = p->epoch_norm_sum, lr = p->epoch_lr;
  int64_t *starts = ranks > 1 ? tg_malloc((size_t)B * sizeof *starts) : NULL; /* [B] the global batch's windows */
  if (ranks > 1 && !starts) return tg_error(TG_ERR_NOMEM, "train: out of memory for a batch of %lld", (long long)B);
  tg_status st = tg_sampler_seek(&d->train_s, (uint64_t)(x->epoch - 1), (uint64_t)(p->epoch_steps * B));
  int64_t s = p->epoch_steps;
  for (; s < steps && st == TG_OK; s++) {
    tg_batch batch;
    int64_t got = 0;
    float loss = 0;
    double t0 = tg_clock_seconds();
    if (ranks == 1) {
      st = tg_stage_next(d->stage, &d->train_s, B, &batch, &got);
    } else { /* every rank draws the same global batch and takes its shard */
      st = tg_sampler_next(&d->train_s, starts, B, &got);
      if (st == TG_OK && got == B) st = tg_stage_batch(d->stage, starts + tr_rank(x->c) * shard, shard, &batch);
    }
    if (st == TG_OK && got != B) st = tg_error(TG_ERR_INVALID, "train: batch %lld has %lld windows, want %lld", (long long)s, (long long)got, (long long)B);
    if (st == TG_OK) st = tr_net_bind_batch(&m->train, d, &batch);
    double t1 = tg_clock_seconds();
    t->data_s += t1 - t0;
    if (st != TG_OK) break;
    st = tg_step_run(m->step, &loss);
    const tg_step_times *ph = tg_step_last_times(m->step);
    t->forward_s += ph->forward, t->backward_s += ph->backward, t->optimizer_s += ph->update;
    t->step_s += tg_clock_seconds() - t1;
    if ((st == TG_OK || st == TG_ERR_NUMERIC) && !isfinite(loss)) { /* the loss first: it says why the gradients are */
      tg_free(starts);
      return nan_stop(x, s + 1, steps, loss, TG_OK);
    }
    if (st == TG_ERR_NUMERIC) {
      snprintf(x->why, sizeof x->why, "%s", tg_last_error());
      tg_free(starts);
      return nan_stop(x, s + 1, steps, loss, st);
    }
    if (st != TG_OK) break;
    sum += loss;
    norm_sum += tg_optim_last_grad_norm(m->opt); /* read by the step's optimizer finish: no extra sync on CUDA */
    lr = tg_optim_last_lr(m->opt);
    p->step++;
    progress_bar(x->progress, x->epoch, s + 1, steps);
    if ((st = stop_due(x->c, p, &x->stopped)) == TG_OK && x->stopped) {
      p->epoch_steps = s + 1, p->epoch_loss_sum = sum, p->epoch_norm_sum = norm_sum, p->epoch_lr = lr;
      tg_free(starts);
      return TG_OK;
    }
  }
  p->epoch_steps = 0, p->epoch_loss_sum = p->epoch_norm_sum = p->epoch_lr = 0;
  t->train_loss = sum / (double)steps;
  t->grad_norm = norm_sum / (double)steps;
  t->lr = lr;
  tg_free(starts);
  if (st != TG_OK) /* which step failed (a lost device, a bad batch) */
    return tg_error(st, "train: epoch %d, step %lld of %lld (optimizer step %lld in all): %s", x->epoch,
                    (long long)s + 1, (long long)steps, (long long)p->step + 1, tg_last_error());
  return st;
}

tg_status tr_net_eval_batch(tr_net *net, tr_data *d, tg_sampler *s, float *pred, float *tgt) {
  tg_batch batch;
  int64_t got = 0;
  tg_status st = tg_stage_next(d->stage, s, net->B, &batch, &got);
  if (st == TG_OK && got != net->B)
    st = tg_error(TG_ERR_INVALID, "evaluation batch has %lld windows, want %lld", (long long)got, (long long)net->B);
  if (st == TG_OK) st = tr_net_bind_batch(net, d, &batch);
  if (st == TG_OK) st = tg_graph_run(net->g);
  if (st == TG_OK) st = tg_device_download(d->dev, pred, net->pred->data, tg_nbytes(net->pred));
  if (st == TG_OK) st = tg_device_download(d->dev, tgt, net->tgt->data, tg_nbytes(net->tgt));
  return st;
}

void tr_class_rows(const tr_data *d, const float *pred, const float *tgt, int64_t b, int32_t *y, float *p) {
  for (int64_t i = 0; i < b; i++) { /* the class is the one-hot row's nonzero entry */
    y[i] = -1;
    for (int k = 0; k < d->C; k++)
      if (tgt[i * d->C + k] != 0.0f) y[i] = k;
  }
  memcpy(p, pred, (size_t)(b * d->C) * sizeof(float));
}

/* One evaluation batch of net->B windows from the validation sampler, added to a. */
static tg_status eval_batch(tr_epoch_ctx *x, tr_net *net, tr_qacc *a) {
  tr_data *d = x->d;
  tg_status st = tr_net_eval_batch(net, d, &d->val_s, x->pred, x->tgt);
  if (st != TG_OK) return st;
  if (!d->C) {
    tr_qacc_add(a, d, x->c->model.q, x->pred, x->tgt, net->B);
    return TG_OK;
  }
  tr_class_rows(d, x->pred, x->tgt, net->B, d->val_y + a->n, d->val_p + a->n * d->C);
  a->n += net->B;
  return TG_OK;
}

tg_status tr_eval_epoch(tr_epoch_ctx *x, tr_qacc *a) {
  tr_data *d = x->d;
  int64_t B = x->c->batch, full = d->n_val / B;
  memset(a, 0, sizeof *a);
  tg_status st = tg_sampler_seek(&d->val_s, 0, 0);
  for (int64_t i = 0; i < full && st == TG_OK; i++) st = eval_batch(x, &x->m->eval, a);
  if (st == TG_OK && x->m->rest.g) st = eval_batch(x, &x->m->rest, a);
  if (st == TG_OK && a->n != d->n_val)
    st = tg_error(TG_ERR_INVALID, "train: validation covered %lld windows of %lld", (long long)a->n, (long long)d->n_val);
  return st;
}
