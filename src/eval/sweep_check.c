/* A sweep checked before anything trains: its keys, every value, the number of runs and every combination. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tickgrad/eval.h"

/* Settings a grid cannot vary: the model kind (its defaults differ), where the data and the run go, and quantiles
 * (a list: its commas would split the grid). */
static const char *fixed_key(const char *key) {
  if (!strcmp(key, "model")) return "the model kind (sweep one --model at a time)";
  if (!strcmp(key, "data")) return "the data (give --data)";
  if (!strcmp(key, "out")) return "the run folder (each run goes to DIR/run-NNN)";
  if (!strcmp(key, "quantiles")) return "a list whose commas would split the grid (give --quantiles)";
  return NULL;
}

/* A key that is not a setting, cannot be swept or belongs to another model; a value the setting refuses. */
static tg_status check_grid(const tg_sweep_grid *g, const tg_train_config *base, tg_train_config *c) {
  const char *why = fixed_key(g->key), *dot = strchr(g->key, '.'), *model = tg_train_model_name(base->model.kind);
  if (why) return tg_error(TG_ERR_INVALID, "--grid %s: a sweep cannot vary %s", g->key, why);
  if (dot && (strncmp(g->key, model, (size_t)(dot - g->key)) || model[dot - g->key]))
    return tg_error(TG_ERR_INVALID, "--grid %s: a setting of %.*s, not of --model %s", g->key, (int)(dot - g->key),
                    g->key, model);
  for (int i = 0; i < g->n; i++) {
    *c = *base;
    if (tg_train_config_set(c, g->key, tg_sweep_value(g, i)) != TG_OK)
      return tg_error(TG_ERR_INVALID, "--grid %s=%s: %s", g->key, tg_sweep_value(g, i), tg_last_error());
  }
  return TG_OK;
}

static int has_median(const tg_train_config *c) {
  for (int k = 0; k < c->model.nq; k++)
    if (fabsf(c->model.q[k] - 0.5f) < 1e-6f) return 1; /* as the trainer finds its q-risk P50 */
  return 0;
}

/* Keys given twice, and no more runs than a sweep makes. */
static tg_status check_count(const tg_sweep_config *c) {
  double runs = 1;
  if (!c->n_grids) return tg_error(TG_ERR_INVALID, "give at least one --grid KEY=V1,V2");
  for (int g = 0; g < c->n_grids; g++) {
    for (int h = 0; h < g; h++)
      if (!strcmp(c->grid[g].key, c->grid[h].key))
        return tg_error(TG_ERR_INVALID, "--grid %s given twice", c->grid[g].key);
    runs *= c->grid[g].n;
  }
  if (runs > TG_SWEEP_MAX_RUNS)
    return tg_error(TG_ERR_INVALID, "the grids make %.0f runs; a sweep runs at most %d (drop values or split it)", runs,
                    TG_SWEEP_MAX_RUNS);
  return TG_OK;
}

static tg_status check_runs(const tg_sweep_config *s, tg_train_config *c) {
  char label[512];
  long runs = tg_sweep_runs(s);
  for (long r = 0; r < runs; r++) {
    tg_sweep_label(s, r, label, sizeof label);
    if (tg_sweep_run_config(s, r, c) != TG_OK || tg_train_config_check(c) != TG_OK)
      return tg_error(TG_ERR_INVALID, "run %ld (%s): %s", r + 1, label, tg_last_error());
    if (s->metric == TG_SWEEP_VAL_QRISK50 && !has_median(c))
      return tg_error(TG_ERR_INVALID, "--metric val_qrisk50 needs the quantile 0.5 (--quantiles)");
    if (s->backtest && s->bt.horizon > c->horizons)
      return tg_error(TG_ERR_INVALID, "run %ld (%s): --horizon %d: the run forecasts 1..%d bars ahead", r + 1, label,
                      s->bt.horizon, c->horizons);
  }
  return TG_OK;
}

tg_status tg_sweep_check(const tg_sweep_config *s) {
  tg_train_config *c = malloc(sizeof *c);
  if (!c) return tg_error(TG_ERR_NOMEM, "sweep: out of memory");
  tg_status st = check_count(s);
  for (int g = 0; st == TG_OK && g < s->n_grids; g++) st = check_grid(&s->grid[g], &s->base, c);
  if (st == TG_OK) st = check_runs(s, c);
  free(c);
  return st;
}
