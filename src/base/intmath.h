/* Integer division and remainder that round toward minus infinity (timestamps before 1970 stay in the right bucket);
 * the int64 order for qsort. */
#ifndef TG_BASE_INTMATH_H
#define TG_BASE_INTMATH_H

#include <stdint.h>

/* floor(a / b) for b != 0. */
static inline int64_t tg_floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
/* a - b * floor(a / b): in [0, b) for b > 0. */
static inline int64_t tg_floor_mod(int64_t a, int64_t b) { return a - tg_floor_div(a, b) * b; }
/* qsort's comparison of two int64_t. */
static inline int tg_cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

#endif
