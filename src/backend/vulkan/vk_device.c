/* Starting a Vulkan device (logical device, compute queue, command buffer, fence) and one synchronous submit at a time. */
#include <stdio.h>
#include <string.h>
#include "backend/vulkan/vk_device.h"
#include "backend/vulkan/vk_fault_hook.h"

#define TG_VK_MAX_DEVICES 16

static tg_vk_dev g_devs[TG_VK_MAX_DEVICES];
static int g_started[TG_VK_MAX_DEVICES];
static pthread_mutex_t g_start_lock = PTHREAD_MUTEX_INITIALIZER;

/* The first memory type with all of `want` (and, when prefer is set, those bits too if any type has them). */
static int memory_type(const VkPhysicalDeviceMemoryProperties *m, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) {
  for (int pass = prefer ? 0 : 1; pass < 2; pass++) {
    VkMemoryPropertyFlags need = pass == 0 ? want | prefer : want;
    for (uint32_t t = 0; t < m->memoryTypeCount; t++)
      if ((m->memoryTypes[t].propertyFlags & need) == need) return (int)t;
  }
  return -1;
}

static tg_status start(int i, tg_vk_dev *d) {
  const tg_vk_fns *f;
  tg_status st = tg_vk_instance(&f);
  if (st != TG_OK) return st;
  const tg_vk_phys *p = tg_vk_phys_at(i);
  if (!p)
    return tg_error(TG_ERR_DEVICE, "vulkan:%d does not exist (this machine lists %d Vulkan device%s; `tickgrad devices` "
                    "shows them)", i, tg_vk_phys_count(), tg_vk_phys_count() == 1 ? "" : "s");
  if (!p->caps.buffer_device_address)
    return tg_error(TG_ERR_DEVICE, "vulkan:%d (%s) lacks the bufferDeviceAddress feature, which the backend needs", i,
                    p->props.deviceName);
  if (p->compute_family < 0)
    return tg_error(TG_ERR_DEVICE, "vulkan:%d (%s) has no compute queue", i, p->props.deviceName);
  int td = memory_type(&p->mem, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  int th = memory_type(&p->mem, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                       VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (td < 0) td = memory_type(&p->mem, 0, 0);
  if (td < 0 || th < 0)
    return tg_error(TG_ERR_DEVICE, "vulkan:%d (%s) has no %s memory type", i, p->props.deviceName,
                    td < 0 ? "usable" : "host-visible coherent");
  float prio = 1.0f;
  VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                               .queueFamilyIndex = (uint32_t)p->compute_family, .queueCount = 1,
                               .pQueuePriorities = &prio};
  VkPhysicalDeviceVulkan12Features v12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                          .bufferDeviceAddress = VK_TRUE};
  const char *ext[1];
  uint32_t n_ext = 0;
  if (p->caps.memory_budget) ext[n_ext++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
  VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &v12, .queueCreateInfoCount = 1,
                           .pQueueCreateInfos = &q, .enabledExtensionCount = n_ext, .ppEnabledExtensionNames = ext};
  VkResult r = f->vkCreateDevice(p->handle, &ci, NULL, &d->dev);
  if (r != VK_SUCCESS)
    return tg_error(TG_ERR_DEVICE, "vulkan:%d (%s): vkCreateDevice failed (VkResult %d)", i, p->props.deviceName, (int)r);
#define TG_VK_FIND(fn) d->f.fn = (PFN_##fn)f->vkGetDeviceProcAddr(d->dev, #fn);
  TG_VK_DEVICE_FUNCS(TG_VK_FIND)
#undef TG_VK_FIND
#define TG_VK_CHECK(fn) \
  if (!d->f.fn) return tg_error(TG_ERR_DEVICE, "vulkan:%d: the driver has no %s", i, #fn);
  TG_VK_DEVICE_FUNCS(TG_VK_CHECK)
#undef TG_VK_CHECK
  d->f.vkGetDeviceQueue(d->dev, (uint32_t)p->compute_family, 0, &d->queue);
  VkCommandPoolCreateInfo pc = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                .queueFamilyIndex = (uint32_t)p->compute_family};
  VkCommandBufferAllocateInfo ca = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  VkFenceCreateInfo fc = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if ((r = d->f.vkCreateCommandPool(d->dev, &pc, NULL, &d->pool)) != VK_SUCCESS ||
      (ca.commandPool = d->pool, (r = d->f.vkAllocateCommandBuffers(d->dev, &ca, &d->cmd)) != VK_SUCCESS) ||
      (r = d->f.vkCreateFence(d->dev, &fc, NULL, &d->fence)) != VK_SUCCESS)
    return tg_error(TG_ERR_DEVICE, "vulkan:%d: command buffer set-up failed (VkResult %d)", i, (int)r);
  d->index = i;
  d->type_device = (uint32_t)td, d->type_host = (uint32_t)th;
  pthread_mutex_init(&d->lock, NULL);
  return TG_OK;
}

tg_status tg_vk_device(int i, tg_vk_dev **out) {
  *out = NULL;
  if (i < 0 || i >= TG_VK_MAX_DEVICES)
    return tg_error(TG_ERR_DEVICE, "vulkan:%d does not exist (this machine lists %d Vulkan device%s)", i,
                    tg_vk_phys_count(), tg_vk_phys_count() == 1 ? "" : "s");
  pthread_mutex_lock(&g_start_lock);
  tg_status st = TG_OK;
  if (!g_started[i]) {
    memset(&g_devs[i], 0, sizeof g_devs[i]);
    st = start(i, &g_devs[i]);
    g_started[i] = st == TG_OK; /* a failed start is tried again (and says why again) on the next use */
  }
  pthread_mutex_unlock(&g_start_lock);
  if (st == TG_OK) *out = &g_devs[i];
  return st;
}

tg_status tg_vk_submit_begin_held(tg_vk_dev *d) {
  if (tg_vk_recording(d)) {
    d->cur = d->rec;
    return TG_OK;
  }
  d->cur = d->cmd;
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkResult r = d->f.vkResetCommandBuffer(d->cmd, 0);
  if (r == VK_SUCCESS) r = d->f.vkBeginCommandBuffer(d->cmd, &bi);
  if (r != VK_SUCCESS)
    return tg_error(TG_ERR_DEVICE, "vulkan:%d: cannot record a command buffer (VkResult %d)", d->index, (int)r);
  return TG_OK;
}

tg_status tg_vk_submit_begin(tg_vk_dev *d) {
  pthread_mutex_lock(&d->lock);
  tg_status st = tg_vk_submit_begin_held(d);
  if (st != TG_OK) pthread_mutex_unlock(&d->lock);
  return st;
}

/* The error of a failed submit of `what` on d: a lost device said as such. */
static tg_status submit_failed(const tg_vk_dev *d, VkResult r, const char *what) {
  if (r == VK_ERROR_DEVICE_LOST)
    return tg_error(TG_ERR_DEVICE, "vulkan:%d: the device was lost during %s (VK_ERROR_DEVICE_LOST)", d->index, what);
  return tg_error(TG_ERR_DEVICE, "vulkan:%d: %s failed (VkResult %d)", d->index, what, (int)r);
}

/* Submits cmd and waits for it, d->lock held throughout: the failure hook (vk_fault_hook.h) and the submit count. */
static tg_status submit_wait_held(tg_vk_dev *d, VkCommandBuffer cmd, const char *what) {
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
  VkResult r = tg_vk_hook_submit();
  if (r == VK_SUCCESS) r = d->f.vkQueueSubmit(d->queue, 1, &si, d->fence);
  if (r == VK_SUCCESS) d->submits++;
  if (r == VK_SUCCESS) r = d->f.vkWaitForFences(d->dev, 1, &d->fence, VK_TRUE, UINT64_MAX);
  if (r == VK_SUCCESS) r = d->f.vkResetFences(d->dev, 1, &d->fence);
  return r == VK_SUCCESS ? TG_OK : submit_failed(d, r, what);
}

tg_status tg_vk_submit_end_held(tg_vk_dev *d, const char *what) {
  if (tg_vk_recording(d)) { /* the next command waits for this one's writes */
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    d->f.vkCmdPipelineBarrier(d->rec, stages, stages, 0, 1, &mb, 0, NULL, 0, NULL);
    return TG_OK;
  }
  VkResult r = d->f.vkEndCommandBuffer(d->cmd);
  return r != VK_SUCCESS ? submit_failed(d, r, what) : submit_wait_held(d, d->cmd, what);
}

tg_status tg_vk_submit_end(tg_vk_dev *d, const char *what) {
  tg_status st = tg_vk_submit_end_held(d, what);
  pthread_mutex_unlock(&d->lock);
  return st;
}

tg_status tg_vk_submit_wait(tg_vk_dev *d, VkCommandBuffer cmd, const char *what) {
  tg_status st = submit_wait_held(d, cmd, what);
  pthread_mutex_unlock(&d->lock);
  return st;
}
