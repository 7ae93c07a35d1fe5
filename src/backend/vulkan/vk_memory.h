/* Vulkan device memory as pointers (buffer device addresses), host copies through a staging buffer, fills. */
#ifndef TG_VK_MEMORY_H
#define TG_VK_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include "tickgrad/status.h"
#include "tickgrad/tensor.h"

/* A device allocation of `bytes` on vulkan:dev; *out is its device address (not readable on the host). */
tg_status tg_vk_alloc(int dev, size_t bytes, void **out);
void tg_vk_free(int dev, void *p);
/* Bytes held in device allocations now. */
uint64_t tg_vk_allocated(int dev);
/* Synchronous copies: host -> device, device -> host, within the device (each range inside one allocation). */
tg_status tg_vk_from_host(int dev, void *dst, const void *src, size_t bytes);
tg_status tg_vk_to_host(int dev, void *dst, const void *src, size_t bytes);
tg_status tg_vk_copy(int dev, void *dst, const void *src, size_t bytes);
/* A device buffer of at least `bytes` for one kernel call's intermediate values (per-row statistics), grown on demand
 * and kept: every dispatch is waited for, so kernels never use it at the same time. */
tg_status tg_vk_scratch(int dev, size_t bytes, void **out);
struct tg_kernel_args;
/* A kernel call's workspace of `bytes` on the device of a's output: the plan's (a->ws, sized by the op table's
 * workspace) when it holds that many, else the device's scratch (a kernel called without a plan, as the op tests do).
 * A recorded step holds either address: the plan's lives as long as the plan, the scratch as vk_capture.c keeps it. */
tg_status tg_vk_workspace(const struct tg_kernel_args *a, size_t bytes, void **out);
/* Bytes held now and at most, allocations made, bytes copied each way (the backend table's mem_stats). */
tg_status tg_vk_mem_stats(int dev, tg_mem_stats *out);
/* The device's name, its device-local heap's size and what is free in it: the driver's budget less its usage where
 * VK_EXT_memory_budget reports them, else the heap less what this process holds (the backend table's info). */
tg_status tg_vk_info(int dev, tg_device_info *out);
/* words 32-bit words at p (4-byte aligned) set to value. */
tg_status tg_vk_fill_u32(int dev, void *p, size_t words, uint32_t value);

#endif
