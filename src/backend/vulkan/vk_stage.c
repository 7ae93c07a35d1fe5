/* The Vulkan backend's staged-batch gather (shaders/stage.comp): a batch computed from the sampler's order and the
 * dataset's index tables in device memory, in one dispatch, copying nothing from the host. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_stage.h"
#include "base/shuffle.h"

typedef struct stage_args {
  uint64_t rows, inst, cls, prefix, begin, idx, orows, labels, oinst;
  uint32_t k, shuffle, count[2], seed[2], epoch[2], cursor[2], L, b;
} stage_args;

_Static_assert(sizeof(stage_args) <= TG_VK_PUSH_MAX, "stage_args exceeds the push constants");

static void words(uint64_t v, uint32_t w[2]) { w[0] = (uint32_t)v, w[1] = (uint32_t)(v >> 32); }

tg_status tg_vk_stage_batch(int dev, const tg_window_tables *t, uint64_t epoch, uint64_t cursor, int64_t b,
                            const tg_batch_bufs *o) {
  if (b < 1) return TG_OK;
  tg_status st = tg_vk_fits("staging a batch", 2 * b * t->L);
  if (st != TG_OK) return st;
  stage_args p = {.rows = tg_vk_addr(t->rows), .inst = tg_vk_addr(t->inst), .cls = tg_vk_addr(t->cls),
                  .prefix = tg_vk_addr(t->prefix), .begin = tg_vk_addr(t->begin), .idx = tg_vk_addr(o->idx),
                  .orows = tg_vk_addr(o->rows), .labels = tg_vk_addr(o->labels), .oinst = tg_vk_addr(o->inst),
                  .k = (uint32_t)t->k, .shuffle = (uint32_t)t->shuffle, .L = (uint32_t)t->L, .b = (uint32_t)b};
  words((uint64_t)t->count, p.count), words(t->seed, p.seed), words(epoch, p.epoch), words(cursor, p.cursor);
  return tg_vk_dispatch(dev, TG_VK_K_stage, &p, sizeof p, tg_vk_groups((uint64_t)b, 256));
}
