/* The futures contracts of a DBN tick file: names from the definition files beside it or the symbol mappings,
 * spreads and options left out, and each contract's open interest and definition for its bars. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/alloc.h"
#include "data/readers/roll/roll_internal.h"
#include "data/readers/ticks/tick_dbn_internal.h"

const char *tg_tick_dbn_name(const tg_dbn_impl *d, uint32_t id) {
  const tg_instrument_def *def = d->have_ref ? tg_dbn_refdata_find(&d->ref, id) : NULL;
  if (def && def->symbol[0]) return def->symbol;
  for (int i = 0; i < d->n_names; i++)
    if (d->names[i].id == id) return d->names[i].name;
  return NULL;
}

static int by_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Appends what's records to into (arrays grown to the sum). */
static tg_status merge(tg_dbn_refdata *into, const tg_dbn_refdata *what, const char *path) {
  tg_instrument_def *d = tg_malloc((size_t)(into->n_defs + what->n_defs + 1) * sizeof *d);
  tg_dbn_stat *s = tg_malloc((size_t)(into->n_stats + what->n_stats + 1) * sizeof *s);
  if (!d || !s) {
    tg_free(d), tg_free(s);
    return tg_error(TG_ERR_NOMEM, "%s: out of memory for definitions and statistics", path);
  }
  if (into->n_defs) memcpy(d, into->defs, (size_t)into->n_defs * sizeof *d);
  if (what->n_defs) memcpy(d + into->n_defs, what->defs, (size_t)what->n_defs * sizeof *d);
  if (into->n_stats) memcpy(s, into->stats, (size_t)into->n_stats * sizeof *s);
  if (what->n_stats) memcpy(s + into->n_stats, what->stats, (size_t)what->n_stats * sizeof *s);
  tg_free(into->defs), tg_free(into->stats);
  into->defs = d, into->stats = s;
  into->n_defs += what->n_defs, into->n_stats += what->n_stats;
  return tg_dbn_refdata_index(into);
}

tg_status tg_tick_dbn_load_beside(tg_dbn_impl *d, const char *path) {
  if (d->have_ref) return TG_OK;
  d->have_ref = 1;
  char dir[4096];
  const char *slash = strrchr(path, '/');
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
  if (slash == path) snprintf(dir, sizeof dir, "/");
  DIR *dp = opendir(dir);
  if (!dp) return TG_OK; /* a folder that cannot be listed has nothing beside the file */
  char **names = NULL;
  size_t n = 0, cap = 0;
  tg_status st = TG_OK;
  for (struct dirent *e; st == TG_OK && (e = readdir(dp)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcasecmp(e->d_name + len - 4, ".dbn") != 0) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      char **w = tg_malloc(cap * sizeof *w);
      if (!w) st = tg_error(TG_ERR_NOMEM, "%s: out of memory listing %s", path, dir);
      else if (n) memcpy(w, names, n * sizeof *w);
      tg_free(names);
      names = w;
      if (!w) break;
    }
    size_t full = strlen(dir) + len + 2;
    names[n] = tg_malloc(full);
    if (!names[n]) st = tg_error(TG_ERR_NOMEM, "%s: out of memory listing %s", path, dir);
    else snprintf(names[n++], full, "%s/%s", dir, e->d_name);
  }
  closedir(dp);
  if (n) qsort(names, n, sizeof *names, by_text);
  for (size_t i = 0; st == TG_OK && i < n; i++) {
    if (!tg_dbn_refdata_sniff(names[i])) continue;
    tg_dbn_refdata one;
    st = tg_dbn_refdata_read(names[i], &one);
    if (st == TG_OK) st = merge(&d->ref, &one, names[i]);
    tg_dbn_refdata_free(&one);
  }
  for (size_t i = 0; i < n; i++) tg_free(names[i]);
  tg_free(names);
  return st;
}

/* What the definition (or else the name) says an instrument is. */
typedef enum what_kind { OUTRIGHT, SPREAD, OPTION, OTHER } what_kind;

static what_kind kind_of(const tg_instrument_def *def, const char *name) {
  if (def) {
    char c = def->instrument_class;
    return tg_instrument_class_is_outright(c) ? OUTRIGHT
           : c == 'S' || c == 'T' || c == 'M' ? SPREAD
           : c == 'C' || c == 'P'             ? OPTION
                                              : OTHER;
  }
  tg_contract_kind k = tg_contract_kind_of(name);
  return k == TG_CONTRACT_SPREAD ? SPREAD : k == TG_CONTRACT_OPTION ? OPTION : OUTRIGHT;
}

static int by_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

tg_status tg_tick_dbn_contracts(tg_tick_source *s, tg_tick_contracts *out) {
  tg_dbn_impl *d = s->impl;
  int64_t ids = s->counts.instruments < TG_TICK_MAX_INSTRUMENTS ? s->counts.instruments : TG_TICK_MAX_INSTRUMENTS;
  if (ids < 2) return TG_OK;
  tg_status st = tg_tick_dbn_load_beside(d, s->name);
  if (st != TG_OK) return st;
  out->names = tg_malloc((size_t)ids * sizeof *out->names);
  if (!out->names) return tg_error(TG_ERR_NOMEM, "%s: out of memory for %lld contracts", s->name, (long long)ids);
  const char *root = NULL;
  size_t root_len = 0;
  int named_by_defs = 1;
  for (int64_t i = 0; i < ids; i++) {
    const char *name = tg_tick_dbn_name(d, s->ids[i]);
    const tg_instrument_def *def = tg_dbn_refdata_find(&d->ref, s->ids[i]);
    what_kind k = name ? kind_of(def, name) : OTHER;
    size_t r = k == OUTRIGHT ? tg_contract_root_len(name, NULL, NULL) : 0;
    /* an unnamed instrument, another class, or outrights of two roots: not one future's contracts */
    if (k == OTHER || (k == OUTRIGHT && (!r || strlen(name) >= TG_CONTRACT_NAME_MAX ||
                                         (root && (r != root_len || strncmp(name, root, r) != 0))))) {
      tg_tick_contracts_free(out);
      return TG_OK;
    }
    named_by_defs &= def != NULL;
    if (k == SPREAD) out->spreads++;
    if (k == OPTION) out->options++;
    if (k != OUTRIGHT) continue;
    if (!root) root = name, root_len = r;
    int seen = 0;
    for (int c = 0; c < out->n && !seen; c++) seen = strcmp(out->names[c], name) == 0;
    if (!seen) snprintf(out->names[out->n++], TG_CONTRACT_NAME_MAX, "%s", name);
  }
  out->definitions = named_by_defs;
  qsort(out->names, (size_t)out->n, sizeof *out->names, by_name);
  return TG_OK;
}

/* Open interest records in time order (stable: the file order within one time). */
static int by_time(const void *a, const void *b) {
  const tg_dbn_stat *x = a, *y = b;
  return x->ts < y->ts ? -1 : x->ts > y->ts ? 1 : (x->record > y->record) - (x->record < y->record);
}

tg_status tg_tick_dbn_open_interest(tg_tick_source *s, tg_oi_series *out) {
  tg_dbn_impl *d = s->impl;
  int64_t n = 0;
  tg_dbn_stat *v = tg_malloc((size_t)(d->ref.n_stats + 1) * sizeof *v);
  if (!v) return tg_error(TG_ERR_NOMEM, "%s: out of memory for open interest", s->name);
  for (int64_t i = 0; i < d->ref.n_stats; i++) {
    const tg_dbn_stat *x = &d->ref.stats[i];
    if (tg_tick_dbn_wants(d, x->id) && x->type == TG_DBN_STAT_OPEN_INTEREST && x->update_action != 2 && isfinite(x->quantity) &&
        x->ts != INT64_MIN)
      v[n++] = *x;
  }
  qsort(v, (size_t)n, sizeof *v, by_time);
  tg_status st = TG_OK;
  for (int64_t i = 0; st == TG_OK && i < n; i++) st = tg_oi_series_push(out, v[i].ts, v[i].quantity, s->name);
  tg_free(v);
  return st;
}

const tg_instrument_def *tg_tick_dbn_definition(const tg_tick_source *s) {
  const tg_dbn_impl *d = s->impl;
  const tg_instrument_def *best = NULL;
  for (int k = 0; k < d->n_want; k++) {
    const tg_instrument_def *def = tg_dbn_refdata_find(&d->ref, d->want[k]);
    if (def && (!best || def->ts >= best->ts)) best = def;
  }
  return best;
}
