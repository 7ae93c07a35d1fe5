/* A started Vulkan device: its queue, one command buffer for synchronous submits, memory types, the buffer table. */
#ifndef TG_VK_DEVICE_H
#define TG_VK_DEVICE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/vulkan/vk_api.h"

/* One device allocation: a buffer with its own memory, addressed in shaders by `addr` (buffer device address). */
typedef struct tg_vk_block {
  uint64_t addr;
  VkDeviceSize size;
  VkBuffer buf;
  VkDeviceMemory mem;
} tg_vk_block;

typedef struct tg_vk_dev {
  int index;
  VkDevice dev;
  VkQueue queue;
  tg_vk_dev_fns f;
  VkCommandPool pool;
  VkCommandBuffer cmd; /* recorded and submitted by tg_vk_submit_begin/end, under lock */
  VkCommandBuffer rec; /* while a step is recorded (vk_capture.c): the commands go here, submitted at each replay */
  VkCommandBuffer cur; /* where commands go between tg_vk_submit_begin and _end: cmd, or rec while recording */
  uint64_t submits;    /* queue submits so far (a replayed step is one) */
  int live_steps;      /* recorded steps not yet freed: they hold the scratch buffer's address */
  void **retired;      /* [n_retired] scratch buffers outgrown while a recorded step held them, freed with the last */
  int n_retired;
  VkFence fence;
  uint32_t type_device; /* memory type of device buffers (device-local where the device has it) */
  uint32_t type_host;   /* memory type of the staging buffer: host-visible and coherent */
  pthread_mutex_t lock;
  tg_vk_block *blocks; /* [n_blocks], sorted by addr */
  int n_blocks, cap_blocks;
  tg_vk_block staging; /* host-visible, mapped at staging_map; grown on demand */
  void *staging_map;
  uint64_t allocated; /* bytes in blocks now */
  void *scratch;      /* tg_vk_scratch's buffer (a device address), scratch_bytes long; NULL: none yet */
  size_t scratch_bytes;
  tg_vk_block fault;  /* the kernel-fault record (vk_fault.h), host-visible, mapped at fault_map (NULL: none yet) */
  struct tg_vk_fault *fault_map;
  uint64_t peak, mallocs; /* the most bytes held at once, and how many allocations were made */
  uint64_t h2d, d2h;      /* bytes copied host -> device and device -> host so far */
} tg_vk_dev;

/* Device i, started on first use (a logical device, a compute queue, the command buffer); the error says why not. */
tg_status tg_vk_device(int i, tg_vk_dev **out);

/* Starts recording d->cmd into d->cur (takes d->lock); end submits it, waits for it and releases the lock. While a
 * step is recorded (d->rec), begin takes the lock and points d->cur at d->rec, and end only adds a barrier (every
 * command sees the memory the ones before it wrote) and releases the lock. */
tg_status tg_vk_submit_begin(tg_vk_dev *d);
tg_status tg_vk_submit_end(tg_vk_dev *d, const char *what);
/* The same for a caller that holds d->lock already and keeps it after end (a host copy, whose staging buffer must
 * stay its own from filling it to reading it back); a failed begin leaves nothing to end. */
tg_status tg_vk_submit_begin_held(tg_vk_dev *d);
tg_status tg_vk_submit_end_held(tg_vk_dev *d, const char *what);

/* Submits the ended command buffer cmd, waits for it and releases d->lock (which the caller holds); the error names
 * `what` ran. Every submit goes through it or tg_vk_submit_end, which share the failure hook (vk_fault_hook.h) and
 * the submit count. */
tg_status tg_vk_submit_wait(tg_vk_dev *d, VkCommandBuffer cmd, const char *what);

/* 1 while a step is being recorded on d: what cannot be recorded (a host copy, a buffer that grows) is refused. */
static inline int tg_vk_recording(const tg_vk_dev *d) { return d->rec != VK_NULL_HANDLE; }

/* The block holding device address p (NULL when none does) and p's offset in it; call with d->lock held. */
const tg_vk_block *tg_vk_block_of(const tg_vk_dev *d, const void *p, VkDeviceSize *offset);

/* A buffer of `bytes` in memory type `type` with a device address (usage: storage and transfers). */
tg_status tg_vk_block_new(tg_vk_dev *d, VkDeviceSize bytes, uint32_t type, tg_vk_block *out);
void tg_vk_block_free(tg_vk_dev *d, tg_vk_block *b);

#endif
