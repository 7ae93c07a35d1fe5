/* The Vulkan backend's table: devices listed, chosen and started, memory as buffer device addresses, every op's
 * kernels, the optimizer, staging and recorded steps. */
#include <stdio.h>
#include <string.h>
#include "backend/vulkan/vk_api.h"
#include "backend/vulkan/vk_capture.h"
#include "backend/vulkan/vk_device.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "backend/vulkan/vk_optim.h"
#include "backend/vulkan/vk_stage.h"
#include "graph/backend.h"
#include "ops/op_kernel_list.h"

static int vk_device_count(void) { return tg_vk_phys_count(); }
static const char *vk_unavailable_reason(void) { return tg_vk_why_none(); }

static tg_status vk_use(int dev) {
  tg_vk_dev *d;
  return tg_vk_device(dev, &d);
}

/* --device auto takes a Vulkan GPU, never a Vulkan implementation on the CPU (lavapipe), which is slower than the CPU
 * backend. */
static int vk_auto_ok(int dev) {
  const tg_vk_phys *p = tg_vk_phys_at(dev);
  return p && p->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
}

static tg_status vk_sync(int dev) {
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  if (st != TG_OK) return st;
  VkResult r = d->f.vkQueueWaitIdle(d->queue);
  if (r != VK_SUCCESS) return tg_error(TG_ERR_DEVICE, "vulkan:%d: waiting for the queue failed (VkResult %d)", dev, (int)r);
  return tg_vk_raise_fault(dev, "at a synchronisation");
}

static void vk_describe(char *buf, size_t n) {
  int count = tg_vk_phys_count();
  size_t used = 0;
  buf[0] = '\0';
  if (count == 0) {
    snprintf(buf, n, "vulkan: backend compiled; no device: %s\n", tg_vk_why_none());
    return;
  }
  for (int i = 0; i < count && used + 1 < n; i++) {
    tg_vk_describe_one(i, buf + used, n - used);
    used += strlen(buf + used);
  }
}

#define VK_FB(op, s) TG_OP_KERNEL_CASE_FB_(tg_vk, op, s)
#define VK_F(op, s) TG_OP_KERNEL_CASE_F_(tg_vk, op, s)
const tg_op_kernels *tg_vk_op_kernels(int op) {
  switch (op) {
    TG_OP_KERNEL_LIST(VK_FB, VK_F)
    default:
      return NULL;
  }
}
#undef VK_FB
#undef VK_F

static const tg_op_kernels *vk_kernels(int op, tg_dtype dt) { return dt == TG_F32 ? tg_vk_op_kernels(op) : NULL; }

static tg_status vk_alloc(tg_device d, size_t bytes, void **out) { return tg_vk_alloc(d.index, bytes, out); }
static void vk_free(tg_device d, void *p) { tg_vk_free(d.index, p); }

static tg_status vk_fill_f32(tg_device d, float *p, size_t n, float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return tg_vk_fill_u32(d.index, p, n, bits);
}

static tg_status vk_fill_bytes(tg_device d, void *p, size_t bytes, unsigned char value) {
  if (bytes % 4)
    return tg_error(TG_ERR_INVALID, "vulkan:%d: a byte fill of %zu bytes (the backend fills whole 32-bit words)",
                    d.index, bytes);
  return tg_vk_fill_u32(d.index, p, bytes / 4, 0x01010101u * value);
}

static tg_status vk_to_host(tg_device d, void *dst, const void *src, size_t bytes) {
  return tg_vk_to_host(d.index, dst, src, bytes);
}
static tg_status vk_from_host(tg_device d, void *dst, const void *src, size_t bytes) {
  return tg_vk_from_host(d.index, dst, src, bytes);
}
static tg_status vk_copy(tg_device d, void *dst, const void *src, size_t bytes) {
  return tg_vk_copy(d.index, dst, src, bytes);
}

const tg_backend tg_vulkan_backend = {
    .name = "vulkan",
    .kind = TG_VULKAN,
    .host_memory = 0,
    .device_count = vk_device_count,
    .unavailable_reason = vk_unavailable_reason,
    .use = vk_use,
    .auto_ok = vk_auto_ok,
    .info = tg_vk_info,
    .mem_stats = tg_vk_mem_stats,
    .sync = vk_sync,
    .describe = vk_describe,
    .kernels = vk_kernels,
    .alloc = vk_alloc,
    .free = vk_free,
    .fill_f32 = vk_fill_f32,
    .fill_bytes = vk_fill_bytes,
    .to_host = vk_to_host,
    .from_host = vk_from_host,
    .copy = vk_copy,
    .stage_batch = tg_vk_stage_batch,
    .capture_begin = tg_vk_capture_begin,
    .capture_end = tg_vk_capture_end,
    .graph_launch = tg_vk_graph_launch,
    .graph_free = tg_vk_graph_free,
    .sum_squares = tg_vk_sum_squares,
    .optim_update = tg_vk_optim_update,
    .advance_counter = tg_vk_advance_counter,
};
