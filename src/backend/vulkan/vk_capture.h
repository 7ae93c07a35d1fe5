/* Recorded steps on Vulkan (contracts in graph/backend.h: capture_begin, capture_end, graph_launch, graph_free), and
 * the fault a kernel recorded, raised where no kernel's own host side took it. */
#ifndef TG_VK_CAPTURE_H
#define TG_VK_CAPTURE_H

#include "tickgrad/status.h"

tg_status tg_vk_capture_begin(int dev);
tg_status tg_vk_capture_end(int dev, void **graph);
tg_status tg_vk_graph_launch(void *graph);
void tg_vk_graph_free(void *graph);

/* TG_ERR_INVALID naming the op, value and position of the fault the device's kernels recorded (when: where it was
 * found, as "in a replayed step"), clearing it; TG_OK when none is. */
tg_status tg_vk_raise_fault(int dev, const char *when);

#endif
