/* Counted host allocations: the allocation counter proves run and backward allocate nothing; prefaulting. */
#define _DEFAULT_SOURCE /* madvise */
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
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

void tg_prefault(void *p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  long page = sysconf(_SC_PAGESIZE);
  if (!p || page <= 0 || bytes < (size_t)16 * (size_t)page) return; /* small blocks: the faults are few */
  uintptr_t mask = (uintptr_t)page - 1, a = ((uintptr_t)p + mask) & ~mask, e = ((uintptr_t)p + bytes) & ~mask;
  if (e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)bytes;
#endif
}
