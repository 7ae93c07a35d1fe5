/* File helpers shared by the tests (see files.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "support/files.h"
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

unsigned char *tg_test_read_file(const char *path, size_t *len) {
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  unsigned char *b = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n + 1) : NULL;
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (!b) return NULL;
  b[n] = '\0';
  *len = (size_t)n;
  return b;
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb, (void)type, (void)ftw;
  return remove(path);
}

void tg_test_remove_tree(const char *path) {
  if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) printf("could not remove %s\n", path);
}
