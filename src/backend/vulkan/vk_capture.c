/* A planned step recorded once into a command buffer and replayed with one submit (the backend table's capture_begin,
 * capture_end, graph_launch, graph_free: the analogue of a captured CUDA graph). While recording, every dispatch, fill
 * and device copy goes into the step's command buffer with a barrier after it (tg_vk_submit_begin/_end); what cannot be
 * replayed (a host copy, a buffer that grows) is refused, and the step stays eager. */
#include <stdlib.h>
#include "backend/vulkan/vk_capture.h"
#include "backend/vulkan/vk_device.h"
#include "backend/vulkan/vk_fault.h"
#include "backend/vulkan/vk_memory.h"
#include "ops/ops.h"

/* A recorded step: its command buffer on its device. */
typedef struct vk_graph {
  tg_vk_dev *d;
  VkCommandBuffer cmd;
} vk_graph;

tg_status tg_vk_capture_begin(int dev) {
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  if (st != TG_OK) return st;
  if (tg_vk_recording(d)) return tg_error(TG_ERR_INVALID, "vulkan:%d: a step is being recorded already", dev);
  VkCommandBufferAllocateInfo ca = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = d->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  pthread_mutex_lock(&d->lock);
  VkResult r = d->f.vkAllocateCommandBuffers(d->dev, &ca, &cmd);
  if (r == VK_SUCCESS && (r = d->f.vkBeginCommandBuffer(cmd, &bi)) != VK_SUCCESS)
    d->f.vkFreeCommandBuffers(d->dev, d->pool, 1, &cmd);
  if (r == VK_SUCCESS) d->rec = cmd;
  pthread_mutex_unlock(&d->lock);
  return r == VK_SUCCESS ? TG_OK
                         : tg_error(TG_ERR_DEVICE, "vulkan:%d: cannot record a step (VkResult %d)", dev, (int)r);
}

tg_status tg_vk_capture_end(int dev, void **graph) {
  tg_vk_dev *d;
  *graph = NULL;
  tg_status st = tg_vk_device(dev, &d);
  if (st != TG_OK) return st;
  pthread_mutex_lock(&d->lock);
  VkCommandBuffer cmd = d->rec;
  d->rec = VK_NULL_HANDLE;
  VkResult r = cmd ? d->f.vkEndCommandBuffer(cmd) : VK_ERROR_INITIALIZATION_FAILED;
  vk_graph *g = r == VK_SUCCESS ? malloc(sizeof *g) : NULL;
  if (cmd && !g) d->f.vkFreeCommandBuffers(d->dev, d->pool, 1, &cmd);
  pthread_mutex_unlock(&d->lock);
  if (!cmd) return tg_error(TG_ERR_INVALID, "vulkan:%d: no step is being recorded", dev);
  if (r != VK_SUCCESS) return tg_error(TG_ERR_DEVICE, "vulkan:%d: recording a step failed (VkResult %d)", dev, (int)r);
  if (!g) return tg_error(TG_ERR_NOMEM, "vulkan:%d: out of host memory for a recorded step", dev);
  *g = (vk_graph){d, cmd};
  *graph = g;
  d->live_steps++;
  return TG_OK;
}

tg_status tg_vk_raise_fault(int dev, const char *when) {
  tg_vk_fault f;
  int found;
  tg_status st = tg_vk_fault_take(dev, &f, &found);
  if (st != TG_OK || !found) return st;
  const tg_op_def *op = f.op >= 0 && f.op < TG_OP_COUNT ? tg_op_get((tg_op)f.op) : NULL;
  return tg_error(TG_ERR_INVALID, "vulkan:%d: %s, a %s kernel found %lld at flat position %u of an index input, outside "
                  "its range", dev, when, op ? op->name : "?", (long long)f.value, f.pos);
}

tg_status tg_vk_graph_launch(void *graph) {
  vk_graph *g = graph;
  tg_vk_dev *d = g->d;
  pthread_mutex_lock(&d->lock);
  tg_status st = tg_vk_submit_wait(d, g->cmd, "a recorded step");
  return st != TG_OK ? st : tg_vk_raise_fault(d->index, "in a replayed step");
}

void tg_vk_graph_free(void *graph) {
  vk_graph *g = graph;
  if (!g) return;
  tg_vk_dev *d = g->d;
  pthread_mutex_lock(&d->lock);
  d->f.vkFreeCommandBuffers(d->dev, d->pool, 1, &g->cmd);
  int last = --d->live_steps == 0;
  pthread_mutex_unlock(&d->lock);
  free(g);
  for (int i = 0; last && i < d->n_retired; i++) tg_vk_free(d->index, d->retired[i]); /* scratch no step points at */
  if (last) d->n_retired = 0;
}
