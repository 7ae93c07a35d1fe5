/* The store's bf16 mirror of its values (bf16 plans read it): allocation, the optimizer's access, refresh when stale. */
#ifndef TG_STORE_MIRROR_H
#define TG_STORE_MIRROR_H

#include <stdint.h>
#include "tickgrad/graph.h"

/* Allocates the mirror, uint16_t [numel] on the store's device, once (after tg_store_finalize; graph names who asked,
 * in the error). It starts stale. */
tg_status tg_store_mirror_alloc(tg_store *s, const char *graph);
/* The mirror, NULL until a bf16 plan asks for one: element i is values[i] rounded to bf16 (nearest even) whenever it
 * is fresh. tg_store_values, a values view from tg_store_tensor and tg_store_finalize mark it stale. */
uint16_t *tg_store_mirror(const tg_store *s);
/* Rounds the values into a stale mirror (one backend call, on the device's stream), which is then fresh; nothing when
 * it is fresh or absent. Called before a bf16 graph runs or backpropagates, before a step is captured or launched and
 * before an optimizer update. */
tg_status tg_store_mirror_refresh(tg_store *s);
/* The values without marking the mirror stale: for the plan's parameter pointers (kernels never write parameters) and
 * the optimizer update, which writes the mirror in the same pass as the values. */
float *tg_store_values_unmarked(tg_store *s);

#endif
