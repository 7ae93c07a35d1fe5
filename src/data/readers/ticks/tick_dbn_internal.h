/* DBN tick sources inside: the open file, its metadata's names, and the definitions and statistics beside it. */
#ifndef TG_DATA_TICKS_TICK_DBN_INTERNAL_H
#define TG_DATA_TICKS_TICK_DBN_INTERNAL_H

#include <stdio.h>
#include "data/readers/dbn/dbn_internal.h"
#include "data/readers/ticks/source_internal.h"

typedef struct tg_dbn_impl {
  FILE *f;
  uint64_t index;          /* the next record's number (from 0, as the bar reader counts) */
  int have_id;
  uint32_t id;             /* the instrument of the first record: one pass makes one instrument's bars */
  tg_dbn_named_id *names;  /* [n_names] the metadata's mappings: raw symbol -> instrument id */
  int n_names;
  int have_ref;            /* ref loaded (for a contract, or a listing) */
  tg_dbn_refdata ref;      /* the definitions and statistics of the DBN files beside this one */
  uint32_t *want;          /* [n_want] opts.contract's instrument ids: every other record is skipped */
  int n_want;
  unsigned char rec[4 * 255];
} tg_dbn_impl;

/* 1 when id is one of the selected contract's instrument ids (d->want). */
static inline int tg_tick_dbn_wants(const tg_dbn_impl *d, uint32_t id) {
  for (int k = 0; k < d->n_want; k++)
    if (d->want[k] == id) return 1;
  return 0;
}

/* The name of id: its latest definition's raw symbol (when ref is loaded), else its mapping's raw symbol, else NULL. */
const char *tg_tick_dbn_name(const tg_dbn_impl *d, uint32_t id);
/* Loads d->ref once: the definition and statistics records of the plain DBN files in the folder of path (itself
 * left out) whose metadata names those schemas, read in name order (a later definition of an id wins). */
tg_status tg_tick_dbn_load_beside(tg_dbn_impl *d, const char *path);

#endif
