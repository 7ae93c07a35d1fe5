/* Compute pipelines, one per embedded shader and device, made on first use; a dispatch recorded, submitted and waited for. */
#include <stdio.h>
#include "backend/vulkan/vk_device.h"
#include "backend/vulkan/vk_dispatch.h"
#include "tg_vk_spirv.h" /* written by CMake: tg_vk_spv_<name>, each shader's SPIR-V */

#define TG_VK_MAX_DEVICES 16

#define TG_VK_SPV_ENTRY(name) {#name, tg_vk_spv_##name, sizeof tg_vk_spv_##name},
static const struct {
  const char *name;
  const uint32_t *code;
  size_t bytes;
} k_shaders[TG_VK_KERNEL_COUNT] = {TG_VK_SHADERS(TG_VK_SPV_ENTRY)};
#undef TG_VK_SPV_ENTRY

typedef struct pipe {
  VkPipelineLayout layout;
  VkPipeline pipeline;
} pipe;

static pipe g_pipes[TG_VK_MAX_DEVICES][TG_VK_KERNEL_COUNT];
static pthread_mutex_t g_pipe_lock = PTHREAD_MUTEX_INITIALIZER;

static tg_status make_pipe(tg_vk_dev *d, tg_vk_kernel k, pipe *out) {
  VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = k_shaders[k].bytes,
                                 .pCode = k_shaders[k].code};
  VkShaderModule mod;
  VkResult r = d->f.vkCreateShaderModule(d->dev, &mi, NULL, &mod);
  if (r != VK_SUCCESS)
    return tg_error(TG_ERR_DEVICE, "vulkan:%d: shader '%s' was refused (VkResult %d)", d->index, k_shaders[k].name, (int)r);
  VkPushConstantRange pr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, TG_VK_PUSH_MAX};
  VkPipelineLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .pushConstantRangeCount = 1,
                                   .pPushConstantRanges = &pr};
  r = d->f.vkCreatePipelineLayout(d->dev, &li, NULL, &out->layout);
  if (r == VK_SUCCESS) {
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = mod, .pName = "main"},
        .layout = out->layout};
    r = d->f.vkCreateComputePipelines(d->dev, VK_NULL_HANDLE, 1, &ci, NULL, &out->pipeline);
    if (r != VK_SUCCESS) d->f.vkDestroyPipelineLayout(d->dev, out->layout, NULL);
  }
  d->f.vkDestroyShaderModule(d->dev, mod, NULL);
  if (r != VK_SUCCESS)
    return tg_error(TG_ERR_DEVICE, "vulkan:%d: the pipeline of shader '%s' could not be made (VkResult %d)", d->index,
                    k_shaders[k].name, (int)r);
  return TG_OK;
}

tg_status tg_vk_fits(const char *node, int64_t n) {
  if (n <= (int64_t)UINT32_MAX) return TG_OK;
  return tg_error(TG_ERR_UNSUPPORTED, "%s: %lld elements, more than a Vulkan kernel's 32-bit indices reach (%u)", node,
                  (long long)n, UINT32_MAX);
}

uint32_t tg_vk_groups(uint64_t n, uint32_t per_group) {
  uint64_t g = (n + per_group - 1) / per_group;
  return g == 0 ? 1 : g > TG_VK_GROUPS_MAX ? TG_VK_GROUPS_MAX : (uint32_t)g;
}

tg_status tg_vk_dispatch(int dev, tg_vk_kernel k, const void *args, uint32_t bytes, uint32_t groups) {
  return tg_vk_dispatch_grid(dev, k, args, bytes, (uint32_t[3]){groups, 1, 1});
}

tg_status tg_vk_dispatch_grid(int dev, tg_vk_kernel k, const void *args, uint32_t bytes, const uint32_t groups[3]) {
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  if (st != TG_OK) return st;
  if ((int)k < 0 || k >= TG_VK_KERNEL_COUNT || bytes > TG_VK_PUSH_MAX)
    return tg_error(TG_ERR_INVALID, "vulkan: kernel %d with %u bytes of arguments", (int)k, bytes);
  pthread_mutex_lock(&g_pipe_lock);
  pipe *p = &g_pipes[dev][k];
  if (!p->pipeline) st = make_pipe(d, k, p);
  pthread_mutex_unlock(&g_pipe_lock);
  if (st != TG_OK || (st = tg_vk_submit_begin(d)) != TG_OK) return st;
  d->f.vkCmdBindPipeline(d->cur, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
  d->f.vkCmdPushConstants(d->cur, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, bytes, args);
  d->f.vkCmdDispatch(d->cur, groups[0], groups[1], groups[2]);
  char what[96];
  snprintf(what, sizeof what, "kernel '%s'", k_shaders[k].name);
  return tg_vk_submit_end(d, what);
}
