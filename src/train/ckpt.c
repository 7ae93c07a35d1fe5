/* The run's checkpoints: weights, training state and trainer.json (early stopping, scales, metrics); resume. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/hash.h"
#include "base/alloc.h"
#include "base/json.h"
#include "io/ckpt_set.h"
#include "tickgrad/checkpoint.h"
#include "train/train_internal.h"

#define TRAINER_FORMAT "tickgrad-trainer-1"

tg_status tr_progress_push(tr_progress *p, const tg_train_metrics *m) {
  if (p->n_rows == p->cap_rows) {
    int cap = p->cap_rows ? 2 * p->cap_rows : 32;
    tg_train_metrics *rows = tg_malloc((size_t)cap * sizeof *rows);
    if (!rows) return tg_error(TG_ERR_NOMEM, "train: out of memory for %d metric rows", cap);
    if (p->n_rows) memcpy(rows, p->rows, (size_t)p->n_rows * sizeof *rows);
    tg_free(p->rows);
    p->rows = rows;
    p->cap_rows = cap;
  }
  p->rows[p->n_rows++] = *m;
  return TG_OK;
}

void tr_progress_free(tr_progress *p) {
  tg_free(p->rows);
  memset(p, 0, sizeof *p);
}

static void path_in(char *buf, size_t n, const char *run, const char *file) { snprintf(buf, n, "%s/%s", run, file); }

static tg_status write_trainer(const char *dir, const tr_data *d, const tr_progress *p, const char *wh, const char *sh) {
  tg_text b = {0};
  tg_text_printf(&b, "{\n  \"format\": \"%s\",\n  \"epoch\": %d,\n  \"step\": %lld,\n  \"best_val\": ", TRAINER_FORMAT,
                     p->epoch, (long long)p->step);
  tg_json_append_real(&b, p->best_val, 17);
  tg_text_printf(&b, ",\n  \"best_epoch\": %d,\n  \"bad_epochs\": %d,\n  \"finished\": %d,\n  \"stopped_early\": %d,\n"
                     "  \"weights_fnv1a\": \"%s\",\n  \"state_fnv1a\": \"%s\",\n  \"target_scales\": [",
                     p->best_epoch, p->bad_epochs, p->finished, p->stopped_early, wh, sh);
  for (int h = 0; h < d->H; h++) {
    if (h) tg_text_puts(&b, ", ");
    tg_json_append_real(&b, d->scale[h], 17);
  }
  tg_text_printf(&b, "],\n  \"epoch_steps\": %lld,\n  \"epoch_loss_sum\": ", (long long)p->epoch_steps);
  tg_json_append_real(&b, p->epoch_loss_sum, 17);
  tg_text_puts(&b, ",\n  \"epoch_grad_norm_sum\": ");
  tg_json_append_real(&b, p->epoch_norm_sum, 17);
  tg_text_puts(&b, ",\n  \"epoch_lr\": ");
  tg_json_append_real(&b, p->epoch_lr, 17);
  tg_text_puts(&b, ",\n  \"metrics\": [");
  for (int r = 0; r < p->n_rows; r++) {
    double v[TR_METRIC_COLS + TG_TRAIN_CM_MAX];
    tr_metrics_to_array(&p->rows[r], v);
    tg_text_puts(&b, r ? ",\n    [" : "\n    [");
    for (int i = 0; i < tr_metrics_numbers(p->rows[r].n_classes); i++) {
      if (i) tg_text_puts(&b, ", ");
      tg_json_append_real(&b, v[i], 17);
    }
    tg_text_puts(&b, "]");
  }
  tg_text_puts(&b, "\n  ]\n}\n");
  char path[TG_PATH_MAX + 96];
  path_in(path, sizeof path, dir, "trainer.json");
  tg_status st = b.oom ? tg_error(TG_ERR_NOMEM, "train: out of memory writing '%s'", path) : tg_write_atomic(path, b.data, b.len);
  tg_text_free(&b);
  return st;
}

tg_status tr_ckpt_save(const char *run, tr_model *m, const tr_data *d, const tr_progress *p, int batch) {
  char wpath[TG_PATH_MAX + 96], spath[TG_PATH_MAX + 96], wh[17], sh[17];
  tg_ckpt_set set;
  tg_status st = tg_ckpt_begin(run, &set);
  if (st != TG_OK) return st;
  tg_ckpt_path(&set, "weights.safetensors", wpath, sizeof wpath);
  tg_ckpt_path(&set, "state.safetensors", spath, sizeof spath);
  tg_train_state ts = {p->step, tg_graph_rng_seed(m->train.g), tg_graph_rng_offset(m->train.g), p->epoch,
                       p->epoch_steps * batch};
  st = tg_store_save(m->store, wpath);
  if (st == TG_OK) st = tg_train_state_save(spath, m->opt, &ts);
  if (st == TG_OK) st = tg_file_hash(wpath, wh);
  if (st == TG_OK) st = tg_file_hash(spath, sh);
  if (st == TG_OK) st = write_trainer(set.dir, d, p, wh, sh);
  return tg_ckpt_end(&set, st);
}

tg_status tr_ckpt_save_best(const char *run, tr_model *m) {
  char path[TG_PATH_MAX + 32];
  path_in(path, sizeof path, run, "best.safetensors");
  return tg_store_save(m->store, path);
}

/* ---- loading ---- */

static tg_status get_num(const tg_json *root, const char *key, const char *path, int allow_null, double *out) {
  const tg_json *v = tg_json_get(root, key);
  if (v && v->type == TG_JSON_NULL && allow_null) {
    *out = NAN;
    return TG_OK;
  }
  if (!v || (v->type != TG_JSON_INT && v->type != TG_JSON_REAL))
    return tg_error(TG_ERR_FORMAT, "%s: \"%s\" is missing or not a number", path, key);
  *out = v->num;
  return TG_OK;
}

static tg_status get_hash(const tg_json *root, const char *key, const char *path, const char *file, const char *run) {
  const tg_json *v = tg_json_get(root, key);
  char fpath[TG_PATH_MAX + 96], hex[17];
  path_in(fpath, sizeof fpath, run, file);
  if (!v || v->type != TG_JSON_STRING) return tg_error(TG_ERR_FORMAT, "%s: \"%s\" is missing", path, key);
  tg_status st = tg_file_hash(fpath, hex);
  if (st != TG_OK) return st;
  if (strcmp(hex, v->str) != 0)
    return tg_error(TG_ERR_FORMAT, "%s is not the file %s was written with (a checkpoint was interrupted); "
                    "resume needs the three files of one checkpoint", fpath, path);
  return TG_OK;
}

/* 1 when a trainer.json row of count numbers fits a run with n_classes; *v1 when it is from before grad_norm. */
static int row_fits(int count, int n_classes, int *v1) {
  *v1 = n_classes == 0 && count == TR_METRIC_COLS_V1;
  return count == tr_metrics_numbers(n_classes) || *v1;
}

static tg_status read_rows(const tg_json *root, const char *path, int n_classes, tr_progress *p) {
  const tg_json *ms = tg_json_get(root, "metrics");
  if (!ms || ms->type != TG_JSON_ARRAY) return tg_error(TG_ERR_FORMAT, "%s: \"metrics\" is missing", path);
  for (const tg_json *row = ms->first; row; row = row->next) {
    double v[TR_METRIC_COLS + TG_TRAIN_CM_MAX];
    int i = 0, v1 = 0, want = tr_metrics_numbers(n_classes);
    if (row->type != TG_JSON_ARRAY || !row_fits(row->count, n_classes, &v1))
      return tg_error(TG_ERR_FORMAT, "%s: byte %zu: a metrics row of this run needs %d numbers%s", path, row->offset,
                      want, n_classes ? "" : " (20 in runs from before grad_norm)");
    for (int k = 0; k < want; k++) v[k] = NAN; /* what an older row lacks */
    for (const tg_json *e = row->first; e; e = e->next, i++) {
      if (v1 && i == TR_METRIC_GRAD_NORM) i++; /* no grad_norm: NaN in its place */
      v[i] = e->type == TG_JSON_INT || e->type == TG_JSON_REAL ? e->num : NAN;
    }
    tg_train_metrics m;
    memset(&m, 0, sizeof m);
    tr_metrics_from_array(&m, v, n_classes);
    tg_status st = tr_progress_push(p, &m);
    if (st != TG_OK) return st;
  }
  return TG_OK;
}

static tg_status read_scales(const tg_json *root, const char *path, const tr_data *d) {
  const tg_json *sc = tg_json_get(root, "target_scales");
  if (!sc || sc->type != TG_JSON_ARRAY || sc->count != d->H)
    return tg_error(TG_ERR_FORMAT, "%s: \"target_scales\" must hold %d numbers (one per horizon)", path, d->H);
  int h = 0;
  for (const tg_json *e = sc->first; e; e = e->next, h++)
    if ((e->type != TG_JSON_INT && e->type != TG_JSON_REAL) || e->num != d->scale[h])
      return tg_error(TG_ERR_INVALID, "%s: target scale of horizon %d was %.17g, the data gives %.17g: the data "
                      "changed since the run started", path, h + 1, e->num, d->scale[h]);
  return TG_OK;
}

/* The position inside an unfinished epoch (keys absent in checkpoints from before mid-epoch stops: 0). */
static tg_status read_position(const tg_json *root, const char *path, tr_progress *p) {
  const char *keys[4] = {"epoch_steps", "epoch_loss_sum", "epoch_grad_norm_sum", "epoch_lr"};
  double v[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; i++) {
    tg_status st = tg_json_get(root, keys[i]) ? get_num(root, keys[i], path, 0, &v[i]) : TG_OK;
    if (st != TG_OK) return st;
  }
  if (v[0] < 0 || v[0] != (double)(int64_t)v[0])
    return tg_error(TG_ERR_FORMAT, "%s: \"epoch_steps\" must be a whole number >= 0", path);
  p->epoch_steps = (int64_t)v[0], p->epoch_loss_sum = v[1], p->epoch_norm_sum = v[2], p->epoch_lr = v[3];
  return TG_OK;
}

static tg_status read_trainer(const char *run, const tr_data *d, tr_progress *p) {
  char path[TG_PATH_MAX + 96];
  path_in(path, sizeof path, run, "trainer.json");
  tg_json_doc *doc = NULL;
  tg_status st = tg_json_parse_file(path, &doc);
  if (st != TG_OK) return st;
  const tg_json *root = tg_json_root(doc), *fmt = tg_json_get(root, "format");
  double v[7];
  if (!fmt || fmt->type != TG_JSON_STRING || strcmp(fmt->str, TRAINER_FORMAT) != 0)
    st = tg_error(TG_ERR_FORMAT, "%s: not a tickgrad trainer file (format %s)", path, TRAINER_FORMAT);
  const char *keys[7] = {"epoch", "step", "best_val", "best_epoch", "bad_epochs", "finished", "stopped_early"};
  for (int i = 0; i < 7 && st == TG_OK; i++) st = get_num(root, keys[i], path, i == 2, &v[i]);
  if (st == TG_OK) {
    p->epoch = (int)v[0], p->step = (int64_t)v[1], p->best_val = v[2], p->best_epoch = (int)v[3];
    p->bad_epochs = (int)v[4], p->finished = (int)v[5], p->stopped_early = (int)v[6];
    if (isnan(p->best_val)) p->best_val = INFINITY;
  }
  if (st == TG_OK) st = read_position(root, path, p);
  if (st == TG_OK) st = read_scales(root, path, d);
  if (st == TG_OK) st = get_hash(root, "weights_fnv1a", path, "weights.safetensors", run);
  if (st == TG_OK) st = get_hash(root, "state_fnv1a", path, "state.safetensors", run);
  if (st == TG_OK) st = read_rows(root, path, d->C, p);
  if (st == TG_OK && p->n_rows != p->epoch)
    st = tg_error(TG_ERR_FORMAT, "%s: %d metric rows for %d epochs", path, p->n_rows, p->epoch);
  tg_json_free(doc);
  return st;
}

/* The set's files in dir into the model and progress, checked to be one checkpoint of this data. */
static tg_status load_set(const char *dir, tr_model *m, const tr_data *d, tr_progress *p, int batch) {
  char wpath[TG_PATH_MAX + 96], spath[TG_PATH_MAX + 96];
  path_in(wpath, sizeof wpath, dir, "weights.safetensors");
  path_in(spath, sizeof spath, dir, "state.safetensors");
  tg_train_state ts;
  tg_status st = read_trainer(dir, d, p);
  if (st == TG_OK) st = tg_store_load(m->store, wpath);
  if (st == TG_OK) st = tg_train_state_load(spath, m->opt, &ts);
  if (st == TG_OK && (ts.epoch != p->epoch || ts.step != p->step || ts.cursor != p->epoch_steps * batch))
    st = tg_error(TG_ERR_FORMAT, "%s holds epoch %lld step %lld cursor %lld, trainer.json epoch %d step %lld (cursor "
                  "%lld): not one checkpoint", spath, (long long)ts.epoch, (long long)ts.step, (long long)ts.cursor,
                  p->epoch, (long long)p->step, (long long)(p->epoch_steps * batch));
  if (st == TG_OK && p->epoch_steps > d->n_train / batch)
    st = tg_error(TG_ERR_FORMAT, "%s: %lld steps into an epoch of %lld", spath, (long long)p->epoch_steps,
                  (long long)(d->n_train / batch));
  if (st == TG_OK) st = tg_graph_set_seed(m->train.g, ts.rng_seed, ts.rng_offset);
  return st;
}

/* Rank 0's tg_ckpt_find told to every rank by one sum (the others add zeros): its status, whether it found a set and
 * which; the other ranks take that set without looking at the folder. */
static tg_status share_found(const tg_train_config *c, tg_status st, tg_ckpt_set *set, int *found) {
  int rank = tr_rank(c);
  double v[3] = {0, 0, 0};
  if (rank == 0) v[0] = (double)st, v[1] = *found, v[2] = (double)set->gen;
  tg_status dst = tg_dist_sum_f64(v, 3);
  if (rank == 0) return st != TG_OK ? st : dst;
  if (dst != TG_OK) return dst;
  if (v[0] != 0)
    return tg_error((tg_status)v[0], "train: rank %d of %d: rank 0 could not find the checkpoint of %s to resume "
                    "from (its message says why)", rank, tr_ranks(c), c->out);
  *found = v[1] != 0;
  if (*found) tg_ckpt_at(c->out, (long)v[2], set);
  return TG_OK;
}

/* Every rank's load status summed: no rank goes on (rank 0 to write into the folder) before all have read the set,
 * and every rank fails when one did. */
static tg_status all_loaded(const tg_train_config *c, tg_status st) {
  double failed = st != TG_OK;
  tg_status dst = tg_dist_sum_f64(&failed, 1);
  if (st != TG_OK || dst != TG_OK) return st != TG_OK ? st : dst;
  if (failed > 0)
    return tg_error(TG_ERR_IO, "train: rank %d of %d: another rank could not load the checkpoint of %s (its message "
                    "says why)", tr_rank(c), tr_ranks(c), c->out);
  return TG_OK;
}

tg_status tr_ckpt_load(const tg_train_config *c, tr_model *m, const tr_data *d, tr_progress *p, FILE *log, int *found) {
  tg_ckpt_set set;
  int ranks = tr_ranks(c);
  tg_status st = TG_OK;
  *found = 0;
  if (tr_rank(c) == 0) st = tg_ckpt_find(c->out, log, &set, found); /* the lock's holder: it tidies the folder */
  if (ranks > 1) st = share_found(c, st, &set, found);
  if (st != TG_OK) return st;
  if (*found) st = load_set(set.dir, m, d, p, c->batch);
  return ranks > 1 ? all_loaded(c, st) : st;
}

tg_status tr_metrics_rewrite(const char *run, const tr_progress *p, int n_classes, FILE **out) {
  char path[TG_PATH_MAX + 32];
  path_in(path, sizeof path, run, "metrics.csv");
  FILE *f = fopen(path, "w");
  if (!f) return tg_error(TG_ERR_IO, "train: cannot write '%s'", path);
  tr_metrics_header(f, n_classes);
  for (int r = 0; r < p->n_rows; r++) tr_metrics_row(f, &p->rows[r]);
  fflush(f);
  *out = f;
  return TG_OK;
}
