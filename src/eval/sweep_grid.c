/* A sweep's grids: KEY=V1,V2 parsed, the runs they make (the last grid varies fastest), each run's label and config. */
#include <stdio.h>
#include <string.h>
#include "tickgrad/eval.h"

void tg_sweep_defaults(tg_sweep_config *c, tg_model_kind kind) {
  memset(c, 0, sizeof *c);
  c->base = tg_train_defaults(kind);
  c->bt = tg_fc_bt_defaults();
}

const char *tg_sweep_value(const tg_sweep_grid *g, int i) { return g->text + g->at[i]; }

/* "KEY=V1,V2" into g; the key and the values are checked against the config later (tg_sweep_check). */
static tg_status parse_grid(const char *text, tg_sweep_grid *g) {
  const char *eq = text ? strchr(text, '=') : NULL;
  if (!eq || eq == text) return tg_error(TG_ERR_INVALID, "--grid '%s': want KEY=V1,V2,..", text ? text : "");
  if ((size_t)(eq - text) >= sizeof g->key) return tg_error(TG_ERR_INVALID, "--grid '%.64s..': key too long", text);
  if (strlen(eq + 1) >= sizeof g->text) return tg_error(TG_ERR_INVALID, "--grid %.64s..: values too long", text);
  snprintf(g->key, sizeof g->key, "%.*s", (int)(eq - text), text);
  snprintf(g->text, sizeof g->text, "%s", eq + 1);
  g->n = 0;
  for (char *p = g->text;;) {
    char *comma = strchr(p, ',');
    if (comma) *comma = '\0';
    if (!*p) return tg_error(TG_ERR_INVALID, "--grid %s: an empty value", text);
    if (g->n == TG_SWEEP_MAX_VALUES)
      return tg_error(TG_ERR_INVALID, "--grid %s: more than %d values", g->key, TG_SWEEP_MAX_VALUES);
    for (int i = 0; i < g->n; i++)
      if (!strcmp(tg_sweep_value(g, i), p))
        return tg_error(TG_ERR_INVALID, "--grid %s: value '%s' given twice", g->key, p);
    g->at[g->n++] = (int)(p - g->text);
    if (!comma) return TG_OK;
    p = comma + 1;
  }
}

tg_status tg_sweep_add_grid(tg_sweep_config *c, const char *text) {
  if (c->n_grids == TG_SWEEP_MAX_GRIDS) return tg_error(TG_ERR_INVALID, "more than %d --grid flags", TG_SWEEP_MAX_GRIDS);
  tg_status st = parse_grid(text, &c->grid[c->n_grids]);
  if (st == TG_OK) c->n_grids++;
  return st;
}

long tg_sweep_runs(const tg_sweep_config *c) {
  double runs = c->n_grids ? 1 : 0; /* up to 64^8: exact in a double */
  for (int g = 0; g < c->n_grids; g++) runs *= c->grid[g].n;
  return runs > TG_SWEEP_MAX_RUNS ? TG_SWEEP_MAX_RUNS + 1 : (long)runs;
}

int tg_sweep_value_of(const tg_sweep_config *c, long r, int g) {
  for (int h = c->n_grids - 1; h > g; h--) r /= c->grid[h].n;
  return (int)(r % c->grid[g].n);
}

void tg_sweep_label(const tg_sweep_config *c, long r, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int g = 0; g < c->n_grids && len < cap; g++) {
    const char *v = tg_sweep_value(&c->grid[g], tg_sweep_value_of(c, r, g));
    len += (size_t)snprintf(buf + len, cap - len, "%s%s=%s", g ? " " : "", c->grid[g].key, v);
  }
}

tg_status tg_sweep_run_config(const tg_sweep_config *c, long r, tg_train_config *out) {
  *out = c->base;
  for (int g = 0; g < c->n_grids; g++) {
    const char *v = tg_sweep_value(&c->grid[g], tg_sweep_value_of(c, r, g));
    if (tg_train_config_set(out, c->grid[g].key, v) != TG_OK)
      return tg_error(TG_ERR_INVALID, "--grid %s=%s: %s", c->grid[g].key, v, tg_last_error());
  }
  int k = snprintf(out->out, sizeof out->out, "%s/run-%03ld", c->out, r + 1);
  return k > 0 && (size_t)k < sizeof out->out ? TG_OK : tg_error(TG_ERR_INVALID, "sweep: the path of %s is too long", c->out);
}
