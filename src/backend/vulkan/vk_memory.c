/* Vulkan device memory as pointers: one buffer per allocation, addressed by its buffer device address; copies and fills. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/vulkan/vk_api.h"
#include "backend/vulkan/vk_device.h"
#include "backend/vulkan/vk_fault_hook.h"
#include "backend/vulkan/vk_memory.h"
#include "ops/ops.h"

/* The staging buffer's smallest size; host copies larger than its size go through it in pieces. */
#define TG_VK_STAGING_MIN (4u << 20)
#define TG_VK_STAGING_MAX (64u << 20)

tg_status tg_vk_block_new(tg_vk_dev *d, VkDeviceSize bytes, uint32_t type, tg_vk_block *out) {
  memset(out, 0, sizeof *out);
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = bytes,
                           .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                    VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                           .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = d->f.vkCreateBuffer(d->dev, &bi, NULL, &out->buf);
  if (r != VK_SUCCESS)
    return tg_error(r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? TG_ERR_NOMEM : TG_ERR_DEVICE,
                    "vulkan:%d: a buffer of %llu bytes could not be made (VkResult %d)", d->index,
                    (unsigned long long)bytes, (int)r);
  VkMemoryRequirements req;
  d->f.vkGetBufferMemoryRequirements(d->dev, out->buf, &req);
  VkMemoryAllocateFlagsInfo fl = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                  .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &fl,
                             .allocationSize = req.size, .memoryTypeIndex = type};
  if (!(req.memoryTypeBits & (1u << type))) {
    d->f.vkDestroyBuffer(d->dev, out->buf, NULL);
    return tg_error(TG_ERR_DEVICE, "vulkan:%d: buffers cannot live in memory type %u", d->index, type);
  }
  r = tg_vk_hook_alloc();
  if (r == VK_SUCCESS) r = d->f.vkAllocateMemory(d->dev, &ai, NULL, &out->mem);
  if (r != VK_SUCCESS) {
    d->f.vkDestroyBuffer(d->dev, out->buf, NULL);
    return tg_error(r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? TG_ERR_NOMEM : TG_ERR_DEVICE,
                    "vulkan:%d: out of device memory: %llu bytes asked, %llu held already (VkResult %d)", d->index,
                    (unsigned long long)bytes, (unsigned long long)d->allocated, (int)r);
  }
  if ((r = d->f.vkBindBufferMemory(d->dev, out->buf, out->mem, 0)) != VK_SUCCESS) {
    tg_vk_block_free(d, out);
    return tg_error(TG_ERR_DEVICE, "vulkan:%d: vkBindBufferMemory failed (VkResult %d)", d->index, (int)r);
  }
  VkBufferDeviceAddressInfo ad = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = out->buf};
  out->addr = d->f.vkGetBufferDeviceAddress(d->dev, &ad);
  out->size = bytes;
  return TG_OK;
}

void tg_vk_block_free(tg_vk_dev *d, tg_vk_block *b) {
  if (b->buf) d->f.vkDestroyBuffer(d->dev, b->buf, NULL);
  if (b->mem) d->f.vkFreeMemory(d->dev, b->mem, NULL);
  memset(b, 0, sizeof *b);
}

const tg_vk_block *tg_vk_block_of(const tg_vk_dev *d, const void *p, VkDeviceSize *offset) {
  uint64_t a = (uint64_t)(uintptr_t)p;
  int lo = 0, hi = d->n_blocks - 1;
  while (lo <= hi) { /* the last block starting at or below a */
    int mid = (lo + hi) / 2;
    if (d->blocks[mid].addr <= a) lo = mid + 1;
    else hi = mid - 1;
  }
  if (hi < 0 || a >= d->blocks[hi].addr + d->blocks[hi].size) return NULL;
  *offset = a - d->blocks[hi].addr;
  return &d->blocks[hi];
}

tg_status tg_vk_alloc(int dev, size_t bytes, void **out) {
  *out = NULL;
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  if (st != TG_OK) return st;
  tg_vk_block b;
  if ((st = tg_vk_block_new(d, bytes ? (bytes + 3) & ~(size_t)3 : 4, d->type_device, &b)) != TG_OK) return st;
  pthread_mutex_lock(&d->lock);
  if (d->n_blocks == d->cap_blocks) {
    int cap = d->cap_blocks ? 2 * d->cap_blocks : 64;
    tg_vk_block *nb = realloc(d->blocks, sizeof *nb * (size_t)cap);
    if (!nb) {
      pthread_mutex_unlock(&d->lock);
      tg_vk_block_free(d, &b);
      return tg_error(TG_ERR_NOMEM, "vulkan:%d: out of host memory for the buffer table", dev);
    }
    d->blocks = nb, d->cap_blocks = cap;
  }
  int at = d->n_blocks;
  while (at > 0 && d->blocks[at - 1].addr > b.addr) at--;
  memmove(d->blocks + at + 1, d->blocks + at, sizeof *d->blocks * (size_t)(d->n_blocks - at));
  d->blocks[at] = b;
  d->n_blocks++;
  d->allocated += b.size;
  d->mallocs++;
  if (d->allocated > d->peak) d->peak = d->allocated;
  pthread_mutex_unlock(&d->lock);
  *out = (void *)(uintptr_t)b.addr;
  return TG_OK;
}

void tg_vk_free(int dev, void *p) {
  tg_vk_dev *d;
  if (!p || tg_vk_device(dev, &d) != TG_OK) return;
  pthread_mutex_lock(&d->lock);
  for (int i = 0; i < d->n_blocks; i++) {
    if (d->blocks[i].addr != (uint64_t)(uintptr_t)p) continue;
    d->allocated -= d->blocks[i].size;
    tg_vk_block_free(d, &d->blocks[i]);
    memmove(d->blocks + i, d->blocks + i + 1, sizeof *d->blocks * (size_t)(d->n_blocks - i - 1));
    d->n_blocks--;
    break;
  }
  pthread_mutex_unlock(&d->lock);
}

tg_status tg_vk_scratch(int dev, size_t bytes, void **out) {
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  if (st != TG_OK) return st;
  if (d->scratch_bytes < bytes && tg_vk_recording(d)) /* the recorded commands hold the old buffer's address */
    return tg_error(TG_ERR_UNSUPPORTED, "vulkan:%d: the scratch buffer would grow to %zu bytes inside a recorded step",
                    dev, bytes);
  if (d->scratch_bytes < bytes) {
    size_t want = bytes > 2 * d->scratch_bytes ? bytes : 2 * d->scratch_bytes;
    if (d->scratch && d->live_steps > 0) { /* a recorded step still points at it: kept until the last one is freed */
      void **r = realloc(d->retired, sizeof *r * (size_t)(d->n_retired + 1));
      if (!r) return tg_error(TG_ERR_NOMEM, "vulkan:%d: out of host memory growing the scratch buffer", dev);
      d->retired = r;
      d->retired[d->n_retired++] = d->scratch;
    } else {
      tg_vk_free(dev, d->scratch);
    }
    d->scratch = NULL, d->scratch_bytes = 0;
    if ((st = tg_vk_alloc(dev, want, &d->scratch)) != TG_OK) return st;
    d->scratch_bytes = want;
  }
  *out = d->scratch;
  return TG_OK;
}

tg_status tg_vk_workspace(const tg_kernel_args *a, size_t bytes, void **out) {
  if (a->ws && a->ws_bytes >= bytes) {
    *out = a->ws;
    return TG_OK;
  }
  return tg_vk_scratch(a->out->device.index, bytes, out);
}

uint64_t tg_vk_allocated(int dev) {
  tg_vk_dev *d;
  return tg_vk_device(dev, &d) == TG_OK ? d->allocated : 0;
}

/* The block and offset of [p, p + bytes) on d, or an error naming `what`; call with d->lock held. */
static tg_status range_of(const tg_vk_dev *d, const void *p, size_t bytes, const char *what, const tg_vk_block **b,
                          VkDeviceSize *off) {
  *b = tg_vk_block_of(d, p, off);
  if (!*b || *off + bytes > (*b)->size)
    return tg_error(TG_ERR_INVALID, "vulkan:%d: %s: %zu bytes at %p are not inside one device allocation", d->index,
                    what, bytes, p);
  return TG_OK;
}

/* A staging buffer of at least min(bytes, TG_VK_STAGING_MAX) bytes, mapped; call with d->lock held. */
static tg_status staging(tg_vk_dev *d, size_t bytes) {
  VkDeviceSize want = bytes < TG_VK_STAGING_MIN ? TG_VK_STAGING_MIN : bytes > TG_VK_STAGING_MAX ? TG_VK_STAGING_MAX : bytes;
  if (d->staging.buf && d->staging.size >= want) return TG_OK;
  if (d->staging.buf) {
    d->f.vkUnmapMemory(d->dev, d->staging.mem);
    tg_vk_block_free(d, &d->staging);
  }
  tg_status st = tg_vk_block_new(d, want, d->type_host, &d->staging);
  if (st != TG_OK) return st;
  VkResult r = d->f.vkMapMemory(d->dev, d->staging.mem, 0, want, 0, &d->staging_map);
  if (r != VK_SUCCESS) {
    tg_vk_block_free(d, &d->staging);
    return tg_error(TG_ERR_DEVICE, "vulkan:%d: cannot map the staging buffer (VkResult %d)", d->index, (int)r);
  }
  return TG_OK;
}

/* The first piece of a host copy of `bytes` through the staging buffer, at most its size (*piece: the bytes moved); the
 * caller holds d->lock from filling the staging buffer to reading it back, so no other thread's copy comes between. */
static tg_status copy_piece(tg_vk_dev *d, char *dev_ptr, char *host, size_t bytes, int to_device, size_t *piece) {
  const char *what = to_device ? "copy to the device" : "copy to the host";
  if (tg_vk_recording(d)) /* the staging buffer is the host's side of it: a replay could not refill it */
    return tg_error(TG_ERR_UNSUPPORTED, "vulkan:%d: a %s cannot be part of a recorded step", d->index, what);
  const tg_vk_block *b = NULL;
  VkDeviceSize off = 0;
  tg_status st = range_of(d, dev_ptr, bytes, what, &b, &off);
  if (st == TG_OK) st = staging(d, bytes);
  if (st != TG_OK || (st = tg_vk_submit_begin_held(d)) != TG_OK) return st;
  *piece = bytes < d->staging.size ? bytes : (size_t)d->staging.size;
  if (to_device) memcpy(d->staging_map, host, *piece);
  VkBufferCopy c = to_device ? (VkBufferCopy){0, off, *piece} : (VkBufferCopy){off, 0, *piece};
  d->f.vkCmdCopyBuffer(d->cur, to_device ? d->staging.buf : b->buf, to_device ? b->buf : d->staging.buf, 1, &c);
  if ((st = tg_vk_submit_end_held(d, what)) != TG_OK) return st;
  if (!to_device) memcpy(host, d->staging_map, *piece);
  *(to_device ? &d->h2d : &d->d2h) += *piece;
  return TG_OK;
}

/* One host copy through the staging buffer, in pieces of its size: to_device 1 host -> device, 0 device -> host. */
static tg_status host_copy(int dev, void *dev_ptr, void *host, size_t bytes, int to_device) {
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  for (size_t done = 0, piece = 0; st == TG_OK && done < bytes; done += piece) {
    pthread_mutex_lock(&d->lock);
    st = copy_piece(d, (char *)dev_ptr + done, (char *)host + done, bytes - done, to_device, &piece);
    pthread_mutex_unlock(&d->lock);
  }
  return st;
}

tg_status tg_vk_from_host(int dev, void *dst, const void *src, size_t bytes) {
  return host_copy(dev, dst, (void *)src, bytes, 1);
}

tg_status tg_vk_to_host(int dev, void *dst, const void *src, size_t bytes) {
  return host_copy(dev, (void *)src, dst, bytes, 0);
}

tg_status tg_vk_copy(int dev, void *dst, const void *src, size_t bytes) {
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  if (st != TG_OK || bytes == 0) return st;
  if ((st = tg_vk_submit_begin(d)) != TG_OK) return st;
  const tg_vk_block *bs, *bd;
  VkDeviceSize os, od;
  if ((st = range_of(d, src, bytes, "device copy source", &bs, &os)) == TG_OK &&
      (st = range_of(d, dst, bytes, "device copy destination", &bd, &od)) == TG_OK) {
    VkBufferCopy c = {os, od, bytes};
    d->f.vkCmdCopyBuffer(d->cur, bs->buf, bd->buf, 1, &c);
  }
  tg_status end = tg_vk_submit_end(d, "device copy");
  return st != TG_OK ? st : end;
}

tg_status tg_vk_fill_u32(int dev, void *p, size_t words, uint32_t value) {
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  if (st != TG_OK || words == 0) return st;
  if ((st = tg_vk_submit_begin(d)) != TG_OK) return st;
  const tg_vk_block *b;
  VkDeviceSize off;
  if ((st = range_of(d, p, words * 4, "fill", &b, &off)) == TG_OK) {
    if (off % 4)
      st = tg_error(TG_ERR_INVALID, "vulkan:%d: fill at %p: not at a multiple of 4 bytes", dev, p);
    else
      d->f.vkCmdFillBuffer(d->cur, b->buf, off, words * 4, value);
  }
  tg_status end = tg_vk_submit_end(d, "fill");
  return st != TG_OK ? st : end;
}

tg_status tg_vk_mem_stats(int dev, tg_mem_stats *out) {
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  if (st != TG_OK) return st;
  pthread_mutex_lock(&d->lock);
  *out = (tg_mem_stats){.allocated = d->allocated, .reserved = d->allocated, .peak = d->peak,
                        .device_mallocs = d->mallocs, .h2d_bytes = d->h2d, .d2h_bytes = d->d2h};
  pthread_mutex_unlock(&d->lock);
  return TG_OK;
}

tg_status tg_vk_info(int dev, tg_device_info *out) {
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  if (st != TG_OK) return st;
  const tg_vk_phys *p = tg_vk_phys_at(dev);
  uint32_t heap = p->mem.memoryTypes[d->type_device].heapIndex;
  VkDeviceSize budget[VK_MAX_MEMORY_HEAPS], usage[VK_MAX_MEMORY_HEAPS], size = p->mem.memoryHeaps[heap].size;
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%s", p->props.deviceName);
  out->total_bytes = size;
  if (tg_vk_heap_budget(dev, budget, usage, VK_MAX_MEMORY_HEAPS)) /* what the driver grants this process now */
    out->free_bytes = budget[heap] > usage[heap] ? budget[heap] - usage[heap] : 0;
  else /* no budget reported: the heap less what this process holds */
    out->free_bytes = size > tg_vk_allocated(dev) ? size - tg_vk_allocated(dev) : 0;
  return TG_OK;
}
