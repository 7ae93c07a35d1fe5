/* FNV-1a hashes of bytes and of files. */
#include <stdio.h>
#include "base/alloc.h"
#include "base/files.h"
#include "base/hash.h"

uint32_t tg_fnv1a32(const void *p, size_t n) {
  const unsigned char *b = p;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 16777619u;
  return h;
}

uint64_t tg_fnv1a64_more(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

uint64_t tg_fnv1a64(const void *p, size_t n) { return tg_fnv1a64_more(TG_FNV64_BASIS, p, n); }

tg_status tg_file_hash(const char *path, char hex[17]) {
  char *text = NULL;
  size_t len = 0;
  tg_status st = tg_read_file(path, &text, &len);
  if (st != TG_OK) return st;
  uint64_t h = tg_fnv1a64(text, len);
  tg_free(text);
  snprintf(hex, 17, "%016llx", (unsigned long long)h);
  return TG_OK;
}
