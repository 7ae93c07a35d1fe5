/* Compute pipelines made from the SPIR-V the build embeds (the shaders folder), and one synchronous dispatch. */
#ifndef TG_VK_DISPATCH_H
#define TG_VK_DISPATCH_H

#include <stdint.h>
#include "tg_vk_shader_list.h" /* written by CMake: TG_VK_SHADERS(X) names each shader in shaders/ */
#include "tickgrad/status.h"

#define TG_VK_KERNEL_ID(name) TG_VK_K_##name,
typedef enum tg_vk_kernel { TG_VK_SHADERS(TG_VK_KERNEL_ID) TG_VK_KERNEL_COUNT } tg_vk_kernel;
#undef TG_VK_KERNEL_ID

/* The largest push-constant block a kernel takes (Vulkan guarantees 128 bytes). */
#define TG_VK_PUSH_MAX 128

/* Runs kernel k on vulkan:dev over `groups` workgroups with the push constants args [bytes], and waits for it. */
tg_status tg_vk_dispatch(int dev, tg_vk_kernel k, const void *args, uint32_t bytes, uint32_t groups);
/* The same over a grid of groups[0] x groups[1] x groups[2] workgroups (each at most TG_VK_GROUPS_MAX). */
tg_status tg_vk_dispatch_grid(int dev, tg_vk_kernel k, const void *args, uint32_t bytes, const uint32_t groups[3]);

/* Vulkan guarantees at least this many workgroups in each dimension. */
#define TG_VK_GROUPS_MAX 65535u

/* TG_OK when a kernel of node `node` indexes at most `n` elements (32-bit words), as every shader's 32-bit indices
 * can; else an error naming the node and the count. */
tg_status tg_vk_fits(const char *node, int64_t n);

/* A device pointer as a shader's buffer address (push constants); 0 for NULL (the shader reads only what it needs). */
static inline uint64_t tg_vk_addr(const void *p) { return (uint64_t)(uintptr_t)p; }

/* Workgroups for n elements at `per_group` each, capped at the count every device takes (kernels loop over the rest). */
uint32_t tg_vk_groups(uint64_t n, uint32_t per_group);

#endif
