/* FNV-1a hashes (32 and 64 bit) of bytes, and the 64-bit hash of a whole file as 16 hex digits. */
#ifndef TG_BASE_HASH_H
#define TG_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include "tickgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 32-bit FNV-1a (offset basis 2166136261, prime 16777619). */
uint32_t tg_fnv1a32(const void *p, size_t n);
/* 64-bit FNV-1a with prime 1099511628211 and offset basis 1469598103934665603 (not the standard basis, one digit
 * short: run folders hold data fingerprints made with it, so it stays). */
uint64_t tg_fnv1a64(const void *p, size_t n);
#define TG_FNV64_BASIS 1469598103934665603ull
/* tg_fnv1a64 continued from h over n more bytes: a hash of several pieces, from h = TG_FNV64_BASIS. */
uint64_t tg_fnv1a64_more(uint64_t h, const void *p, size_t n);
/* tg_fnv1a64 of the file's bytes as 16 lowercase hex digits and a NUL into hex[17]. */
tg_status tg_file_hash(const char *path, char hex[17]);

#ifdef __cplusplus
}
#endif
#endif
