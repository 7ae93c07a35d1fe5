/* The trainer's graphs: batches gathered in the graph from the staged tables by index; train and eval plans; Adam. */
#include <math.h>
#include <string.h>
#include "tickgrad/device.h"
#include "tickgrad/dist.h"
#include "train/train_internal.h"

/* The class-weighted softmax cross-entropy: -sum(w_y log p_y) / sum(w_y) over the batch, from logits [B, C] and
 * the weighted one-hot rows [B, C] (PyTorch's weighted mean; a row without a class weighs 0). */
static tg_tensor *weighted_cross_entropy(tg_graph *g, tg_tensor *logits, tg_tensor *onehot) {
  tg_tensor *num = tg_sum(g, tg_mul(g, onehot, tg_log_softmax(g, logits))); /* sum of w_y log p_y */
  return tg_scale(g, tg_div(g, num, tg_sum(g, onehot)), -1.0f);
}

/* One graph over the staged tables for batches of B windows:
 *   idx [B, Lw] i64 (the stage's batch rows) -> past rows idx[:, :Lp], target row idx[:, Lt],
 *   tft: decoder rows idx[:, enc:], instrument inst [B] i64.
 * recompute: the training plan's tg_recompute (evaluation plans never recompute). */
static tg_status net_build(tr_net *net, tg_store *store, const char *name, int64_t B, const tr_data *d,
                           const tg_forecast_cfg *model, int training, tg_precision precision,
                           tg_recompute recompute) {
  memset(net, 0, sizeof *net);
  net->B = B;
  tg_graph *g = net->g = tg_graph_new(store, name);
  if (!g) return tg_error(TG_ERR_NOMEM, "train: out of memory for graph '%s'", name);
  int64_t n = d->ds.fx.n;
  int64_t s_feat[2] = {n, d->F}, s_tgt[2] = {n, d->ds.y.nh}, s_idx[2] = {B, d->Lw}, s_fut[2] = {n, d->nfut};
  int64_t s_inst[1] = {B}, s_y[2] = {B, d->C ? d->C : d->H};
  tg_tensor *feat = tg_input(g, "features", TG_F32, 2, s_feat); /* [n, F] */
  tg_tensor *tgt_tab = tg_input(g, "targets", TG_F32, 2, s_tgt); /* [n, H] scaled */
  tg_tensor *idx = tg_input(g, "idx", TG_I64, 2, s_idx);         /* [B, Lw] */
  tg_tensor *past_idx = d->Lp == d->Lw ? idx : tg_slice(g, idx, 1, 0, d->Lp); /* [B, Lp] */
  tg_forecast_inputs in = {tg_gather_rows(g, feat, past_idx), NULL, NULL}; /* [B, Lp, F] (cat: ids last) */
  if (d->nfut) {
    tg_tensor *fut_tab = tg_input(g, "future", TG_F32, 2, s_fut);                     /* [n, nfut] */
    in.future = tg_gather_rows(g, fut_tab, tg_slice(g, idx, 1, d->enc, d->dec));       /* [B, dec, nfut] */
    in.inst = tg_input(g, "inst", TG_I64, 1, s_inst);                                  /* [B] */
  }
  tg_tensor *y = tg_gather_rows(g, tgt_tab, tg_slice(g, idx, 1, d->Lt, 1)); /* [B, 1, H] (a classifier: [B, 1, C]) */
  net->tgt = tg_reshape(g, y, 2, s_y);                                      /* [B, H] or [B, C] */
  net->pred = tg_forecast_build(g, model, &in);                             /* [B, Hm, nq] or logits [B, Hm, C] */
  if (d->C && net->pred) { /* a classifier reads the last horizon step */
    int64_t s_logits[2] = {B, d->C};
    tg_tensor *logits = tg_reshape(g, tg_slice(g, net->pred, 1, d->Hm - 1, 1), 2, s_logits); /* [B, C] */
    net->pred = training ? logits : tg_softmax(g, logits);                                   /* [B, C] */
    if (training) net->loss = weighted_cross_entropy(g, logits, net->tgt);
  } else if (training && net->pred) {
    net->loss = tg_pinball_loss(g, net->pred, net->tgt, model->nq, model->q);
  }
  if (!net->pred || !net->tgt || (training && !net->loss) || tg_graph_status(g) != TG_OK) {
    tg_status st = tg_graph_status(g);
    return st != TG_OK ? st : tg_error(TG_ERR_INVALID, "train: building graph '%s' failed", name);
  }
  tg_plan_opts po = tg_plan_defaults(d->dev);
  po.training = training;
  po.precision = tg_precision_dtype(precision);
  po.recompute = training ? recompute : TG_RECOMPUTE_NONE;
  tg_status st = tg_graph_plan(g, &po);
  if (st == TG_OK) st = tg_graph_bind(g, "features", tg_stage_features(d->stage));
  if (st == TG_OK) st = tg_graph_bind(g, "targets", tg_stage_targets(d->stage));
  if (st == TG_OK && d->nfut) st = tg_graph_bind(g, "future", &d->fut_tab);
  return st;
}

tg_status tr_net_build_eval(tr_net *net, tg_store *store, const char *name, int64_t B, const tr_data *d,
                            const tg_forecast_cfg *model, tg_precision precision) {
  return net_build(net, store, name, B, d, model, 0, precision, TG_RECOMPUTE_NONE);
}

tg_status tr_net_bind_batch(tr_net *net, const tr_data *d, const tg_batch *b) {
  int64_t s_idx[2] = {net->B, d->Lw}, s_inst[1] = {net->B};
  tg_tensor t;
  tg_status st = tg_tensor_view(&t, "idx", d->dev, TG_I64, 2, s_idx, b->idx.data);
  if (st == TG_OK) st = tg_graph_bind(net->g, "idx", &t);
  if (st == TG_OK && d->nfut) {
    st = tg_tensor_view(&t, "inst", d->dev, TG_I64, 1, s_inst, b->inst.data);
    if (st == TG_OK) st = tg_graph_bind(net->g, "inst", &t);
  }
  return st;
}

tg_optim_config tr_optim_config(const tg_train_config *c, int64_t steps_per_epoch) {
  tg_optim_config oc = tg_optim_defaults(TG_ADAM);
  oc.lr = (float)c->lr;
  oc.weight_decay = (float)c->weight_decay;
  oc.clip_norm = (float)c->clip_norm;
  int64_t warm = c->warmup_steps >= 0 ? c->warmup_steps : (int64_t)llround(0.05 * (double)steps_per_epoch);
  if (c->warmup_steps < 0 && warm < 1) warm = 1;
  oc.schedule.warmup_steps = warm;
  oc.schedule.kind = c->schedule == TG_TRAIN_COSINE ? TG_LR_COSINE : TG_LR_CONSTANT;
  oc.schedule.total_steps = (int64_t)c->epochs * steps_per_epoch;
  oc.schedule.final_frac = (float)c->final_lr_frac;
  return oc;
}

tg_status tr_model_open(tr_model *m, const tg_train_config *c, const tg_forecast_cfg *model, tr_data *d) {
  memset(m, 0, sizeof *m);
  m->store = tg_store_new(d->dev, (uint64_t)c->seed);
  if (!m->store) return tg_error(TG_ERR_NOMEM, "train: out of memory for the parameter store");
  int64_t rest = d->n_val % c->batch;
  /* data-parallel: each rank's training graph takes its shard of the global batch (the eval graphs see every window) */
  tg_status st = net_build(&m->train, m->store, "train", c->batch / tr_ranks(c), d, model, 1, c->precision,
                           c->recompute);
  if (st == TG_OK) st = tr_net_build_eval(&m->eval, m->store, "eval", c->batch, d, model, c->precision);
  if (st == TG_OK && rest) st = tr_net_build_eval(&m->rest, m->store, "eval.rest", rest, d, model, c->precision);
  if (st == TG_OK) st = tg_graph_set_seed(m->train.g, (uint64_t)c->seed, 0);
  tg_optim_config oc = tr_optim_config(c, d->n_train / c->batch);
  if (st == TG_OK) st = tg_optim_new(m->store, &oc, &m->opt);
  if (st == TG_OK) st = tg_step_new(m->train.g, m->train.loss, m->opt, &m->step);
  if (st != TG_OK) tr_model_close(m);
  return st;
}

void tr_model_close(tr_model *m) {
  tg_step_free(m->step);
  tg_optim_free(m->opt);
  tg_graph_free(m->train.g);
  tg_graph_free(m->eval.g);
  tg_graph_free(m->rest.g);
  tg_store_free(m->store);
  memset(m, 0, sizeof *m);
}
