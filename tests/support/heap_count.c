/* The allocation counter behind heap_count.h: malloc, calloc, realloc and the aligned allocators interposed over glibc's. */
#include "support/heap_count.h"
#include <stdatomic.h>
#include <stddef.h>

#if TG_TEST_HEAP_COUNTED
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static atomic_long g_heap_calls;
void *malloc(size_t n) {
  atomic_fetch_add(&g_heap_calls, 1);
  return __libc_malloc(n);
}
void *calloc(size_t n, size_t s) {
  atomic_fetch_add(&g_heap_calls, 1);
  return __libc_calloc(n, s);
}
void *realloc(void *p, size_t n) {
  atomic_fetch_add(&g_heap_calls, 1);
  return __libc_realloc(p, n);
}
int posix_memalign(void **out, size_t align, size_t n) {
  atomic_fetch_add(&g_heap_calls, 1);
  *out = __libc_memalign(align, n);
  return *out ? 0 : 12;
}
/* libgomp takes its team of a one-thread parallel region from memalign */
void *memalign(size_t align, size_t n) {
  atomic_fetch_add(&g_heap_calls, 1);
  return __libc_memalign(align, n);
}
void *aligned_alloc(size_t align, size_t n) {
  atomic_fetch_add(&g_heap_calls, 1);
  return __libc_memalign(align, n);
}
long tg_test_heap_calls(void) { return atomic_load(&g_heap_calls); }
#else
long tg_test_heap_calls(void) { return 0; }
#endif
