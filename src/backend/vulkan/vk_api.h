/* The Vulkan backend's private interface: the loader's entry points, the instance and its devices, memory, dispatch. */
#ifndef TG_VK_API_H
#define TG_VK_API_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include "tickgrad/status.h"

/* Entry points resolved from the instance (vkGetInstanceProcAddr) after it is made. */
#define TG_VK_INSTANCE_FUNCS(X)                                                                                      \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties2)                               \
  X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceMemoryProperties) X(vkGetPhysicalDeviceMemoryProperties2)     \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice)              \
  X(vkGetDeviceProcAddr)

/* Entry points resolved from a device (vkGetDeviceProcAddr). */
#define TG_VK_DEVICE_FUNCS(X)                                                                                        \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkDeviceWaitIdle) X(vkQueueSubmit) X(vkQueueWaitIdle)                     \
  X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory)          \
  X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory) X(vkGetBufferDeviceAddress)                                 \
  X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers) X(vkBeginCommandBuffer)                 \
  X(vkEndCommandBuffer) X(vkResetCommandBuffer) X(vkCmdCopyBuffer) X(vkCmdFillBuffer) X(vkCmdPipelineBarrier)        \
  X(vkCmdBindPipeline) X(vkCmdPushConstants) X(vkCmdDispatch) X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences)  \
  X(vkResetFences) X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreatePipelineLayout)                        \
  X(vkDestroyPipelineLayout) X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkFreeCommandBuffers)

#define TG_VK_MEMBER(f) PFN_##f f;
typedef struct tg_vk_fns {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
  PFN_vkCreateInstance vkCreateInstance;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion;
  TG_VK_INSTANCE_FUNCS(TG_VK_MEMBER)
} tg_vk_fns;

typedef struct tg_vk_dev_fns {
  TG_VK_DEVICE_FUNCS(TG_VK_MEMBER)
} tg_vk_dev_fns;
#undef TG_VK_MEMBER

/* What the backend needs of a device, and what it would use where present. */
typedef struct tg_vk_caps {
  int buffer_device_address; /* required: device memory is addressed by pointers, as on the other backends */
  int memory_budget;         /* VK_EXT_memory_budget: the heaps' budget and use */
  int cooperative_matrix;    /* VK_KHR_cooperative_matrix (not used yet) */
  int shader_float64;        /* double lane sums in the row kernels (not used yet) */
} tg_vk_caps;

/* One physical device as listed: its properties and the queue family compute runs on. */
typedef struct tg_vk_phys {
  VkPhysicalDevice handle;
  VkPhysicalDeviceProperties props;
  VkPhysicalDeviceDriverProperties driver;
  VkPhysicalDeviceSubgroupProperties subgroup;
  VkPhysicalDeviceMemoryProperties mem;
  tg_vk_caps caps;
  int compute_family; /* -1: none */
} tg_vk_phys;

/* The loader and instance, made on first use: TG_OK, or the error (set again on every call) saying why not. */
tg_status tg_vk_instance(const tg_vk_fns **fns);
/* Devices found (0 when the loader, the instance or the driver is missing: tg_vk_why_none says why). */
int tg_vk_phys_count(void);
const tg_vk_phys *tg_vk_phys_at(int i);
const char *tg_vk_why_none(void);
/* The heaps' budget and use (VK_EXT_memory_budget); 0 when the device lacks it. */
int tg_vk_heap_budget(int i, VkDeviceSize *budget, VkDeviceSize *usage, int max_heaps);

/* "vulkan:i" as `tickgrad devices` lists it, into buf. */
void tg_vk_describe_one(int i, char *buf, size_t n);

#endif
