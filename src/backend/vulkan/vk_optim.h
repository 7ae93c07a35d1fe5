/* The Vulkan backend's optimizer entries (contracts in graph/backend.h: sum_squares, optim_update,
 * advance_counter). */
#ifndef TG_VK_OPTIM_H
#define TG_VK_OPTIM_H

#include "graph/backend.h"

tg_status tg_vk_sum_squares(tg_device d, const float *g, size_t n, double *out);
tg_status tg_vk_optim_update(tg_device d, const tg_optim_update *u);
tg_status tg_vk_advance_counter(tg_device d, uint64_t *c);

#endif
