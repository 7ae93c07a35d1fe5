/* The device-failure hook of the Vulkan backend, for the tests of what a run keeps when its device fails:
 * TICKGRAD_VK_FAULT="lost:N" makes the Nth queue submit and every one after it report VK_ERROR_DEVICE_LOST (a lost
 * device stays lost), "oom:N" makes the Nth device allocation report VK_ERROR_OUT_OF_DEVICE_MEMORY. */
#ifndef TG_VK_FAULT_HOOK_H
#define TG_VK_FAULT_HOOK_H

#include "backend/vulkan/vk_api.h"

/* Before a queue submit: VK_SUCCESS, or the injected VK_ERROR_DEVICE_LOST. */
VkResult tg_vk_hook_submit(void);
/* Before a device allocation: VK_SUCCESS, or the injected VK_ERROR_OUT_OF_DEVICE_MEMORY. */
VkResult tg_vk_hook_alloc(void);
/* Reads TICKGRAD_VK_FAULT again and restarts the counts (a test that resumes after an injected failure). */
void tg_vk_hook_reset(void);

#endif
