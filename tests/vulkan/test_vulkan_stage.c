/* The Vulkan backend's staged-batch gather against the host's tg_batch_entry, bit for bit: in order and shuffled (the
 * keyed Feistel permutation with cycle walking), runs of starts with an empty one among them, an epoch past 2^32, a
 * split of a few windows. */
#include <stdlib.h>
#include <string.h>
#include "backend/vulkan/vk_memory.h"
#include "base/shuffle.h"
#include "graph/backend.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_test.h"

#define POS 5000 /* layout positions (rows of the tables) */
#define WIN 12   /* window */

/* A device copy of bytes at host. */
static void *dev_copy(const void *host, size_t bytes) {
  void *d = NULL;
  CHECK_OK(tg_vk_alloc(0, bytes, &d));
  CHECK_OK(tg_vk_from_host(0, d, host, bytes));
  return d;
}

/* Batch of b windows from cursor in epoch's order over runs (begin [k], prefix [k + 1]), on both sides. */
static void check_stage(const char *label, int k, const int64_t *begin, const int64_t *prefix, int shuffle,
                        uint64_t epoch, uint64_t cursor, int64_t b) {
  static int64_t rows[POS];
  static int32_t inst[POS], cls[POS];
  for (int i = 0; i < POS; i++) {
    rows[i] = (int64_t)(((uint64_t)i * 7919u) % POS);
    inst[i] = (i % 5) - 1; /* -1: a row of no instrument */
    cls[i] = i % 3;
  }
  tg_window_tables th = {.rows = rows, .inst = inst, .cls = cls, .prefix = prefix, .begin = begin, .k = k,
                         .shuffle = shuffle, .count = prefix[k], .seed = 0xFEEDFACE12345ull, .L = WIN};
  tg_window_tables td = th;
  td.rows = dev_copy(rows, sizeof rows), td.inst = dev_copy(inst, sizeof inst), td.cls = dev_copy(cls, sizeof cls);
  td.prefix = dev_copy(prefix, sizeof(int64_t) * (size_t)(k + 1));
  td.begin = dev_copy(begin, sizeof(int64_t) * (size_t)k);
  size_t bi = sizeof(int64_t) * (size_t)(b * WIN), bb = sizeof(int64_t) * (size_t)b, bl = sizeof(int32_t) * (size_t)b;
  tg_batch_bufs oh = {malloc(bi), malloc(bb), malloc(bl), malloc(bb)}, od, got = {malloc(bi), malloc(bb), malloc(bl),
                                                                                  malloc(bb)};
  CHECK_OK(tg_vk_alloc(0, bi, (void **)&od.idx));
  CHECK_OK(tg_vk_alloc(0, bb, (void **)&od.rows));
  CHECK_OK(tg_vk_alloc(0, bl, (void **)&od.labels));
  CHECK_OK(tg_vk_alloc(0, bb, (void **)&od.inst));
  for (int64_t i = 0; i < b; i++) tg_batch_entry(&th, epoch, cursor, i, &oh);
  CHECK_OK(tg_backend_for(TG_VULKAN)->stage_batch(0, &td, epoch, cursor, b, &od));
  CHECK_OK(tg_vk_to_host(0, got.idx, od.idx, bi));
  CHECK_OK(tg_vk_to_host(0, got.rows, od.rows, bb));
  CHECK_OK(tg_vk_to_host(0, got.labels, od.labels, bl));
  CHECK_OK(tg_vk_to_host(0, got.inst, od.inst, bb));
  CHECK_MSG(memcmp(got.idx, oh.idx, bi) == 0 && memcmp(got.rows, oh.rows, bb) == 0, "%s: windows differ", label);
  CHECK_MSG(memcmp(got.labels, oh.labels, bl) == 0 && memcmp(got.inst, oh.inst, bb) == 0,
            "%s: labels or instruments differ", label);
  void *dev[9] = {(void *)td.rows, (void *)td.inst, (void *)td.cls, (void *)td.prefix, (void *)td.begin,
                  od.idx, od.rows, od.labels, od.inst};
  for (int i = 0; i < 9; i++) tg_vk_free(0, dev[i]);
  free(oh.idx), free(oh.rows), free(oh.labels), free(oh.inst);
  free(got.idx), free(got.rows), free(got.labels), free(got.inst);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  const int64_t begin[4] = {0, 1200, 2000, 3800}, prefix[5] = {0, 900, 900, 2400, 2800}; /* run 1 is empty */
  check_stage("in order", 4, begin, prefix, 0, 0, 0, 300);
  check_stage("in order, from 2000", 4, begin, prefix, 0, 1, 2000, 800);
  check_stage("shuffled", 4, begin, prefix, 1, 3, 17, 300);
  check_stage("shuffled, an epoch past 2^32, the whole split", 4, begin, prefix, 1, (1ull << 33) + 1, 0, 2800);
  const int64_t b1[1] = {100}, p1[2] = {0, 5};
  check_stage("shuffled, a split of 5 windows", 1, b1, p1, 1, 7, 0, 5);
  printf("vulkan:0: staged batches bitwise as the host's tg_batch_entry\n");
  return tg_test_finish();
}
