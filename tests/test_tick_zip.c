/* Zip members read whole (inflated at once) and streamed (through libzip) give the same lines; a stored member reads;
 * a member whose CRC-32 or size disagrees with the directory is refused naming the zip, the member and the mismatch.
 * The zips are written here through libzip, and their headers changed byte by byte. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include "data/readers/ticks/tick_inflate.h"
#include "data/readers/ticks/tick_zip.h"
#include "support/check.h"
#include "support/files.h"

#define MEMBER "20131007_spy_Trade_Tick.csv"

static char g_dir[256];
static char g_text[256 * 1024]; /* the member's text: Lean trade rows, one per line */
static size_t g_len;

/* Writes g_dir/name holding MEMBER with g_text, deflated or stored; returns the path (static). */
static const char *write_zip(const char *name, int store) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  int err = 0;
  zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
  CHECK(z != NULL);
  if (!z) return path;
  zip_source_t *src = zip_source_buffer(z, g_text, g_len, 0);
  zip_int64_t at = src ? zip_file_add(z, MEMBER, src, ZIP_FL_OVERWRITE) : -1;
  CHECK(at >= 0 && zip_set_file_compression(z, (zip_uint64_t)at, store ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 0) == 0);
  CHECK(zip_close(z) == 0);
  return path;
}

/* Reads member 0 of the zip at path opened with whole_max (members read whole in buffers, NULL for the zip's own), its
 * lines joined by '\n' into out[cap]; *whole gets tg_zip_member_whole. The status of the first failure (its message
 * in tg_last_error). */
static tg_status read_member_in(const char *path, tg_zip_buffers *buffers, size_t whole_max, char *out, size_t cap,
                                size_t *len, int *whole) {
  tg_zip *z = NULL;
  tg_line_reader r = {0};
  *len = 0, *whole = -1;
  tg_status st = tg_zip_open(path, buffers, &z);
  if (st == TG_OK) st = tg_zip_member_open_within(z, 0, whole_max);
  if (st == TG_OK) *whole = tg_zip_member_whole(z), st = tg_zip_member_lines(z, &r, path);
  for (int got = 1; st == TG_OK && got;) {
    const char *p, *e;
    if ((st = tg_line_next(&r, &p, &e, &got)) != TG_OK || !got) continue;
    size_t n = (size_t)(e - p);
    if (*len + n + 1 > cap) {
      st = tg_error(TG_ERR_INVALID, "test: member longer than %zu bytes", cap);
      continue;
    }
    memcpy(out + *len, p, n);
    out[*len + n] = '\n';
    *len += n + 1;
  }
  tg_line_reader_free(&r);
  tg_zip_close(z);
  return st;
}

static tg_status read_member(const char *path, size_t whole_max, char *out, size_t cap, size_t *len, int *whole) {
  return read_member_in(path, NULL, whole_max, out, cap, len, whole);
}

/* 1 when reading path with whole_max gives g_text, held whole or not as want_whole says. */
static int reads_back(const char *path, size_t whole_max, int want_whole) {
  static char got[sizeof g_text];
  size_t len;
  int whole;
  tg_status st = read_member(path, whole_max, got, sizeof got, &len, &whole);
  CHECK_MSG(st == TG_OK, "%s", tg_last_error());
  CHECK_MSG(whole == want_whole, "whole %d, want %d (max %zu)", whole, want_whole, whole_max);
  return st == TG_OK && len == g_len && memcmp(got, g_text, len) == 0;
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Adds delta to the 32-bit field at local_off of the first member's local header and at central_off of its central
 * directory entry (they must agree: the zip is opened with its consistency checked), in the zip at path. */
static void bump_field(const char *path, size_t local_off, size_t central_off, uint32_t delta) {
  size_t len;
  unsigned char *b = tg_test_read_file(path, &len);
  CHECK(b != NULL && len > 64 && memcmp(b, "PK\3\4", 4) == 0);
  if (!b) return;
  unsigned char *c = NULL;
  for (size_t i = len - 46; i > 0 && !c; i--)
    if (memcmp(b + i, "PK\1\2", 4) == 0) c = b + i;
  CHECK(c != NULL);
  if (c) {
    put_le32(b + local_off, le32(b + local_off) + delta);
    put_le32(c + central_off, le32(c + central_off) + delta);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, len, f) == len);
    if (f) fclose(f);
  }
  free(b);
}

#define CRC_FIELDS 14, 16  /* the CRC-32: local header, central entry */
#define SIZE_FIELDS 22, 24 /* the uncompressed size */

/* The message of reading path with whole_max, or "" when it reads. */
static const char *error_of(const char *path, size_t whole_max) {
  static char got[sizeof g_text];
  size_t len;
  int whole;
  return read_member(path, whole_max, got, sizeof got, &len, &whole) == TG_OK ? "" : tg_last_error();
}

#define HAS(text, want) CHECK_MSG(strstr(text, want) != NULL, "'%s' lacks '%s'", text, want)

static void test_reads(void) {
  int built = tg_inflate_whole_built();
  const char *p = write_zip("20131007_trade.zip", 0);
  CHECK(reads_back(p, TG_ZIP_WHOLE_MAX, built));
  CHECK(reads_back(p, 0, 0));
  CHECK(reads_back(p, g_len - 1, 0)); /* one byte over the limit streams */
  CHECK(reads_back(p, g_len, built));
  p = write_zip("20131007_trade.zip", 1);
  CHECK(reads_back(p, TG_ZIP_WHOLE_MAX, 0)); /* stored: streamed as it is */
}

/* Buffers kept across zips: a smaller member after a larger one reads into the same memory. */
static void test_buffers_reused(void) {
  static char got[sizeof g_text];
  size_t len, full = g_len;
  int whole;
  tg_zip_buffers b = {0};
  CHECK_OK(read_member_in(write_zip("20131007_trade.zip", 0), &b, TG_ZIP_WHOLE_MAX, got, sizeof got, &len, &whole));
  CHECK(len == full && memcmp(got, g_text, len) == 0);
  char *first = b.whole;
  for (g_len = full / 2; g_text[g_len - 1] != '\n'; g_len--) { /* half the rows */
  }
  CHECK_OK(read_member_in(write_zip("20131008_trade.zip", 0), &b, TG_ZIP_WHOLE_MAX, got, sizeof got, &len, &whole));
  CHECK(len == g_len && memcmp(got, g_text, len) == 0);
  if (tg_inflate_whole_built()) CHECK(b.whole == first && b.whole_cap == full);
  g_len = full;
  tg_zip_buffers_free(&b);
}

static void test_mismatches(void) {
  char want[128];
  const char *p = write_zip("20131007_trade.zip", 0);
  bump_field(p, CRC_FIELDS, 1);
  HAS(error_of(p, 0), "20131007_trade.zip: member " MEMBER ": CRC error"); /* libzip's own check */
  if (tg_inflate_whole_built()) {
    HAS(error_of(p, TG_ZIP_WHOLE_MAX), "20131007_trade.zip: member " MEMBER ": CRC error: the data's CRC-32 is ");
    p = write_zip("20131007_trade.zip", 0);
    bump_field(p, SIZE_FIELDS, 1);
    snprintf(want, sizeof want, MEMBER ": inflates to %zu bytes where the zip's directory says %zu", g_len, g_len + 1);
    HAS(error_of(p, TG_ZIP_WHOLE_MAX), want);
    p = write_zip("20131007_trade.zip", 0);
    bump_field(p, SIZE_FIELDS, (uint32_t)-1);
    snprintf(want, sizeof want, MEMBER ": inflates to more than the %zu bytes the zip's directory says", g_len - 1);
    HAS(error_of(p, TG_ZIP_WHOLE_MAX), want);
  }
  p = write_zip("20131007_trade.zip", 1);
  bump_field(p, CRC_FIELDS, 1);
  HAS(error_of(p, TG_ZIP_WHOLE_MAX), "20131007_trade.zip: member " MEMBER ": CRC error");
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/tg_tick_zip_%ld", (long)getpid());
  mkdir(g_dir, 0700);
  for (int i = 0; g_len + 64 < sizeof g_text; i++)
    g_len += (size_t)snprintf(g_text + g_len, 64, "%d,%d,%d,P,1,0\n", 14400000 + i * 7, 1674100 + i % 300, 1 + i % 900);
  test_reads();
  test_buffers_reused();
  test_mismatches();
  tg_test_remove_tree(g_dir);
  return tg_test_finish();
}
