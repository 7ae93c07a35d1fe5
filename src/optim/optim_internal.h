/* The optimizer step split for captured steps: queue the update, then read its outcome. */
#ifndef TG_OPTIM_INTERNAL_H
#define TG_OPTIM_INTERNAL_H

#include "tickgrad/optim.h"

/* Queues one update on the store's device (no synchronisation; capturable). */
tg_status tg_optim_enqueue(tg_optim *o);
/* Reads the update's outcome (synchronises): the host's step count, norm and lr, or TG_ERR_NUMERIC
 * when the update was skipped for a non-finite gradient norm. */
tg_status tg_optim_finish(tg_optim *o);

#endif
