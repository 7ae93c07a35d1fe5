/* Integer division and remainder that round toward minus infinity (timestamps before 1970 stay in the right bucket). */
#ifndef TG_BASE_INTMATH_H
#define TG_BASE_INTMATH_H

#include <stdint.h>

/* floor(a / b) for b != 0. */
static inline int64_t tg_floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
/* a - b * floor(a / b): in [0, b) for b > 0. */
static inline int64_t tg_floor_mod(int64_t a, int64_t b) { return a - tg_floor_div(a, b) * b; }

#endif
