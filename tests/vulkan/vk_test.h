/* What every Vulkan test does first: find a device, or skip (77) without one unless TG_EXPECT_VULKAN_DEVICE=1 (CI,
 * where lavapipe is installed), which makes a missing device a failure. */
#ifndef TG_VK_TEST_H
#define TG_VK_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include "backend/vulkan/vk_api.h"
#include "support/check.h"

/* -1 when vulkan:0 exists; else the exit code the test returns now. */
static inline int vk_test_no_device(void) {
  if (tg_vk_phys_count() > 0) return -1;
  const char *want = getenv("TG_EXPECT_VULKAN_DEVICE");
  printf("no Vulkan device: %s\n", tg_vk_why_none());
  if (!want || want[0] != '1') return 77;
  CHECK_MSG(0, "TG_EXPECT_VULKAN_DEVICE=1 but no Vulkan device: %s", tg_vk_why_none());
  return tg_test_finish();
}

#endif
