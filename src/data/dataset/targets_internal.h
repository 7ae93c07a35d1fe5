/* The target kinds' private interface: each fills ret, cls, reach and the class names of a tg_targets sized by targets.c. */
#ifndef TG_DATA_TARGETS_INTERNAL_H
#define TG_DATA_TARGETS_INTERNAL_H

#include "tickgrad/dataset.h"

/* col:NAME[:diff|:logdiff] at every horizon; reach hmax, or -1 where a horizon's value is missing. */
tg_status tg_targets_column(const tg_bars *bars, const tg_layout *lay, const tg_target_opts *o, tg_targets *out);
/* labels:FILE joined to the bars (labels.c). */
tg_status tg_targets_labels(const tg_bars *bars, const tg_layout *lay, const tg_target_opts *o, tg_targets *out);
/* triple-barrier:UP,DOWN,BARS (triple_barrier.c). */
tg_status tg_targets_barrier(const tg_bars *bars, const tg_layout *lay, const tg_target_opts *o, tg_targets *out);
/* Allocates out->class_names [n] and copies names [n] into it; TG_ERR_NOMEM. */
tg_status tg_targets_set_classes(tg_targets *out, const char (*names)[TG_NAME_MAX], int n);

#endif
