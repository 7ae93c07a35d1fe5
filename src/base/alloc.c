/* Counted host allocations: the allocation counter proves run and backward allocate nothing. */
#include <stdatomic.h>
#include <stdlib.h>
#include "base/alloc.h"

static atomic_uint_fast64_t g_allocs;

void tg_alloc_note(void) { atomic_fetch_add(&g_allocs, 1); }

void *tg_malloc(size_t bytes) {
  atomic_fetch_add(&g_allocs, 1);
  return malloc(bytes ? bytes : 1);
}

void *tg_calloc(size_t n, size_t size) {
  atomic_fetch_add(&g_allocs, 1);
  return calloc(n ? n : 1, size ? size : 1);
}

void tg_free(void *p) { free(p); }

uint64_t tg_alloc_count(void) { return (uint64_t)atomic_load(&g_allocs); }
