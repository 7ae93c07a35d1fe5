/* The library-wide stop request: one lock-free atomic flag, safe to set from a signal handler or another thread. */
#include <stdatomic.h>
#include "tickgrad/status.h"

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the stop flag must be lock-free to be set from a signal handler");

static atomic_int g_stop;

void tg_stop_request(void) { atomic_store(&g_stop, 1); }
int tg_stop_requested(void) { return atomic_load(&g_stop); }
void tg_stop_clear(void) { atomic_store(&g_stop, 0); }
