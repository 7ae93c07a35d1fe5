/* Counts every heap allocation of a test process (malloc, calloc, realloc, posix_memalign), so tests can check that a hot path allocates nothing. */
#ifndef TG_TEST_HEAP_COUNT_H
#define TG_TEST_HEAP_COUNT_H

/* Under AddressSanitizer the allocator is ASan's and nothing is interposed: TG_TEST_HEAP_COUNTED is 0
 * and tg_test_heap_calls() stays 0. Otherwise every allocation of the process (library, OpenMP and
 * OpenBLAS included) is counted. The static support library's member that defines malloc is linked into
 * every test that calls malloc, so all tests run through these forwarders (to glibc's allocator). */
#if defined(__SANITIZE_ADDRESS__)
#define TG_TEST_HEAP_COUNTED 0
#else
#define TG_TEST_HEAP_COUNTED 1
#endif

long tg_test_heap_calls(void);

#endif
