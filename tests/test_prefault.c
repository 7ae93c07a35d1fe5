/* tg_prefault: the pages of a block mapped ahead of its writes leave its contents as they were (written, zeroed or
 * not page-aligned), and small blocks, NULL and empty ranges are accepted. */
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "support/check.h"

int main(void) {
  enum { BYTES = 3 << 20 };
  unsigned char *a = tg_malloc(BYTES + 7);
  CHECK(a != NULL);
  for (size_t i = 0; i < BYTES + 7; i++) a[i] = (unsigned char)(i * 131 + 7);
  tg_prefault(a + 3, BYTES); /* neither end on a page boundary */
  int same = 1;
  for (size_t i = 0; i < BYTES + 7; i++) same &= a[i] == (unsigned char)(i * 131 + 7);
  CHECK_MSG(same, "a written block changed under tg_prefault");
  tg_free(a);
  unsigned char *z = tg_calloc(BYTES, 1);
  CHECK(z != NULL);
  tg_prefault(z, BYTES);
  int zero = 1;
  for (size_t i = 0; i < BYTES; i++) zero &= z[i] == 0;
  CHECK_MSG(zero, "a zeroed block changed under tg_prefault");
  memset(z, 0xAB, BYTES); /* and it takes writes as any block */
  CHECK(z[0] == 0xAB && z[BYTES - 1] == 0xAB);
  tg_free(z);
  unsigned char small[100] = {1};
  tg_prefault(small, sizeof small);
  CHECK(small[0] == 1);
  tg_prefault(NULL, 1 << 20);
  tg_prefault(small, 0);
  return tg_test_finish();
}
