/* The Parquet reader's snappy decoder against libsnappy's compressor: every kind of input it makes (long and short
 * literals, copies of short and long periods, far offsets) decodes to the original with and without spare room after
 * the output, and damaged streams are refused without reading or writing out of bounds. */
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "data/readers/parquet/parquet.h"
#include "support/check.h"

/* splitmix64: the test's bytes from a printed seed. */
typedef struct test_rng {
  uint64_t s;
} test_rng;

static uint64_t rng_next(test_rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* Compresses src[n] with libsnappy; the caller frees *z. */
static size_t compress(const uint8_t *src, size_t n, char **z) {
  size_t zn = snappy_max_compressed_length(n);
  *z = malloc(zn + 1);
  if (!*z || snappy_compress((const char *)src, n, *z, &zn) != SNAPPY_OK) {
    CHECK_MSG(0, "libsnappy failed to compress %zu bytes", n);
    return 0;
  }
  return zn;
}

/* src[n] round trip: decoded exactly into a buffer of n bytes, and into one of n + 64 (the fast copies). */
static void round_trip(const char *what, const uint8_t *src, size_t n) {
  char *z = NULL;
  size_t zn = compress(src, n, &z);
  uint64_t len = 0;
  CHECK_MSG(tg_pq_snappy_length((const uint8_t *)z, zn, &len) && len == n, "%s: preamble length %llu, want %zu", what,
            (unsigned long long)len, n);
  for (int slack = 0; slack <= 64; slack += 64) {
    uint8_t *out = malloc(n + (size_t)slack + 1);
    int ok = tg_pq_snappy_decode((const uint8_t *)z, zn, out, n, n + (size_t)slack);
    CHECK_MSG(ok && memcmp(out, src, n) == 0, "%s (%zu bytes, %d spare): decoded %s", what, n, slack,
              ok ? "to other bytes" : "with a failure");
    free(out);
  }
  free(z);
}

static void test_kinds(test_rng *rng) {
  enum { N = 300000 };
  uint8_t *b = malloc(N);
  for (size_t i = 0; i < N; i++) b[i] = (uint8_t)rng_next(rng); /* incompressible: literals of every length */
  round_trip("random bytes", b, N);
  round_trip("one byte", b, 1);
  round_trip("empty", b, 0);
  for (size_t i = 0; i < N; i++) b[i] = (uint8_t)(i % 3); /* period 3: byte-by-byte copies */
  round_trip("period 3", b, N);
  for (size_t i = 0; i < N; i++) b[i] = (uint8_t)(i % 11); /* period 11: 8-byte pieces */
  round_trip("period 11", b, N);
  int64_t t = 1386028800000000;
  for (size_t i = 0; i + 8 <= N; i += 8, t += 60000000) memcpy(b + i, &t, 8); /* minute times in microseconds */
  round_trip("rising int64 times", b, N);
  for (size_t i = 0; i < N; i++) b[i] = (uint8_t)(i < N / 2 ? rng_next(rng) : b[i - N / 2]); /* offsets > 64 KiB */
  round_trip("far copies", b, N);
  for (size_t i = 0; i < N; i++) b[i] = (rng_next(rng) % 16 == 0) ? (uint8_t)rng_next(rng) : (uint8_t)(i % 23);
  round_trip("mixed", b, N);
  for (size_t n = 1; n < 200; n++) round_trip("short inputs", b + 1000, n);
  free(b);
}

/* Damaged streams: truncated anywhere, a wrong stated length, bytes flipped; each is refused or decodes, and never
 * touches memory outside the buffers (the sanitizer builds check). */
static void test_damage(test_rng *rng) {
  enum { N = 20000 };
  uint8_t *b = malloc(N), *out = malloc(N + 64);
  for (size_t i = 0; i < N; i++) b[i] = (uint8_t)(i % 29 + (i % 97 == 0 ? rng_next(rng) : 0));
  char *z = NULL;
  size_t zn = compress(b, N, &z);
  for (size_t cut = 0; cut < zn; cut += 1 + cut / 8)
    CHECK_MSG(!tg_pq_snappy_decode((const uint8_t *)z, cut, out, N, N + 64), "a stream cut to %zu of %zu bytes decoded",
              cut, zn);
  CHECK(!tg_pq_snappy_decode((const uint8_t *)z, zn, out, N - 1, N + 64)); /* stated length differs from dn */
  CHECK(!tg_pq_snappy_decode((const uint8_t *)z, zn, out, N, N - 1));      /* capacity below the output */
  const uint8_t zero_offset[] = {8, 0x01 | (4 << 2), 0}; /* copy of length 8 at offset 0 */
  CHECK(!tg_pq_snappy_decode(zero_offset, sizeof zero_offset, out, 8, 72));
  const uint8_t before_start[] = {9, 0x00, 'a', 0x01 | (4 << 2), 2}; /* a literal of 1, then a copy from offset 2 */
  CHECK(!tg_pq_snappy_decode(before_start, sizeof before_start, out, 9, 73));
  const uint8_t past_end[] = {4, 0x00, 'a', 0x01 | (4 << 2), 1}; /* a copy of 8 into 3 bytes left */
  CHECK(!tg_pq_snappy_decode(past_end, sizeof past_end, out, 4, 68));
  const uint8_t repeat[] = {9, 0x00, 'a', 0x01 | (4 << 2), 1}; /* "a" then 8 copies of it */
  CHECK(tg_pq_snappy_decode(repeat, sizeof repeat, out, 9, 73) && memcmp(out, "aaaaaaaaa", 9) == 0);
  const uint8_t long_preamble[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
  uint64_t len;
  CHECK(!tg_pq_snappy_length(long_preamble, sizeof long_preamble, &len));
  for (int trial = 0; trial < 2000; trial++) { /* flipped bytes: any answer but a crash */
    char *y = malloc(zn);
    memcpy(y, z, zn);
    for (int k = 0; k < 3; k++) y[rng_next(rng) % zn] ^= (char)(1u << (rng_next(rng) % 8));
    (void)tg_pq_snappy_decode((const uint8_t *)y, zn, out, N, N + 64);
    free(y);
  }
  free(z);
  free(b);
  free(out);
}

int main(void) {
  test_rng rng = {tg_test_seed(33)};
  test_kinds(&rng);
  test_damage(&rng);
  return tg_test_finish();
}
