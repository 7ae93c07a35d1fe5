/* The pass/fail tally behind check.h. */
#include "support/check.h"

int tg_test_passed = 0, tg_test_failed = 0;

int tg_test_finish(void) {
  printf("%d passed, %d failed\n", tg_test_passed, tg_test_failed);
  return tg_test_failed ? 1 : 0;
}

int tg_test_skip(const char *why) {
  printf("skipped: %s\n", why);
  return 77;
}

unsigned long long tg_test_seed(unsigned long long fallback) {
  const char *s = getenv("TG_TEST_SEED");
  unsigned long long seed = s ? strtoull(s, NULL, 0) : fallback;
  printf("seed %llu (set TG_TEST_SEED to replay)\n", seed);
  return seed;
}
