/* Runs of ASCII digits read eight bytes at a time: the bar CSV reader's numbers and Lean's tick rows. */
#ifndef TG_DATA_CSV_DIGITS_H
#define TG_DATA_CSV_DIGITS_H

#include <stdint.h>
#include <string.h>

/* The value of eight ASCII digits, the first in the lowest byte: pairs, then fours, then all. */
static inline uint64_t tg_csv_eight_digits(uint64_t x) {
  x &= 0x0F0F0F0F0F0F0F0FULL;
  x = (x * 10 + (x >> 8)) & 0x00FF00FF00FF00FFULL;
  x = (x * 100 + (x >> 16)) & 0x0000FFFF0000FFFFULL;
  return (x & 0xFFFFFFFFULL) * 10000 + (x >> 32);
}

/* How many of the eight bytes at p are digits before the first that is not (0-8), and their value. Reads all eight
 * bytes (little-endian: the first is the lowest). */
static inline int tg_csv_digit_run(const char *p, uint64_t *val) {
  uint64_t x;
  memcpy(&x, p, 8);
  uint64_t hi = (x & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL;                     /* 0: '0'-'?' */
  uint64_t lo = ((x + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL; /* 0: <= '9' */
  uint64_t nd = hi | lo; /* nonzero bytes are not digits (a carry only disturbs bytes after one) */
  uint64_t m = (nd | ((nd & 0x7F7F7F7F7F7F7F7FULL) + 0x7F7F7F7F7F7F7F7FULL)) & 0x8080808080808080ULL;
  int n = m ? __builtin_ctzll(m) >> 3 : 8;
  *val = n ? tg_csv_eight_digits(x << (8 * (8 - n))) : 0;
  return n;
}

#endif
