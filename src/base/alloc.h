/* Counted host allocation: every buffer the library allocates on the host goes through these. */
#ifndef TG_BASE_ALLOC_H
#define TG_BASE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void *tg_malloc(size_t bytes);
void *tg_calloc(size_t n, size_t size);
void tg_free(void *p);
/* Counts an allocation made another way (aligned, device). */
void tg_alloc_note(void);
/* Number of tg_malloc/tg_calloc calls so far (process-wide). */
uint64_t tg_alloc_count(void);
/* Maps in the whole pages of [p, p + bytes) in one call (Linux's MADV_POPULATE_WRITE) when the block is large, for a
 * buffer about to be written whole: one system call instead of a page fault per page. The contents do not change;
 * where the system cannot, nothing happens and the pages fault in as they are written. */
void tg_prefault(void *p, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
