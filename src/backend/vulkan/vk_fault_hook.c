/* The device-failure hook (vk_fault_hook.h): TICKGRAD_VK_FAULT, read on first use. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/vulkan/vk_fault_hook.h"

enum { HOOK_UNREAD, HOOK_NONE, HOOK_LOST, HOOK_OOM };

static atomic_int g_mode = HOOK_UNREAD;
static atomic_long g_count;
static long g_at;

static int read_mode(void) {
  const char *v = getenv("TICKGRAD_VK_FAULT");
  char *end = NULL;
  int mode = HOOK_NONE;
  if (v && strncmp(v, "lost:", 5) == 0) mode = HOOK_LOST, g_at = strtol(v + 5, &end, 10);
  else if (v && strncmp(v, "oom:", 4) == 0) mode = HOOK_OOM, g_at = strtol(v + 4, &end, 10);
  else if (v && *v) fprintf(stderr, "warning: TICKGRAD_VK_FAULT=%s is not lost:N or oom:N; ignored\n", v);
  if (mode != HOOK_NONE && (!end || *end || g_at < 1)) {
    fprintf(stderr, "warning: TICKGRAD_VK_FAULT=%s: N must be a whole number >= 1; ignored\n", v);
    mode = HOOK_NONE;
  }
  return mode;
}

/* The injected result of the next event of kind `want` (HOOK_LOST: submits, HOOK_OOM: allocations). */
static VkResult hook(int want, VkResult failure, int sticky) {
  int mode = atomic_load(&g_mode);
  if (mode == HOOK_UNREAD) atomic_store(&g_mode, mode = read_mode());
  if (mode != want) return VK_SUCCESS;
  long n = atomic_fetch_add(&g_count, 1) + 1;
  if (n == g_at || (sticky && n > g_at)) {
    if (n == g_at)
      fprintf(stderr, "vulkan fault hook: event %ld: injected %s\n", n,
              want == HOOK_LOST ? "VK_ERROR_DEVICE_LOST" : "VK_ERROR_OUT_OF_DEVICE_MEMORY");
    return failure;
  }
  return VK_SUCCESS;
}

VkResult tg_vk_hook_submit(void) { return hook(HOOK_LOST, VK_ERROR_DEVICE_LOST, 1); }
VkResult tg_vk_hook_alloc(void) { return hook(HOOK_OOM, VK_ERROR_OUT_OF_DEVICE_MEMORY, 0); }

void tg_vk_hook_reset(void) {
  atomic_store(&g_count, 0);
  atomic_store(&g_mode, HOOK_UNREAD);
}
