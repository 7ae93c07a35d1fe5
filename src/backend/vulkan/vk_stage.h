/* The Vulkan backend's staged-batch gather (contract in graph/backend.h: stage_batch). */
#ifndef TG_VK_STAGE_H
#define TG_VK_STAGE_H

#include "graph/backend.h"

tg_status tg_vk_stage_batch(int dev, const struct tg_window_tables *t, uint64_t epoch, uint64_t cursor, int64_t b,
                            const struct tg_batch_bufs *o);

#endif
