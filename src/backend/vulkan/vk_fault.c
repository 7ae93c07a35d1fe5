/* The device's kernel-fault record (vk_fault.h): 16 bytes of host-visible memory that shaders write through its device
 * address and the host reads in place, so taking it after a dispatch or a replayed step costs no submit. */
#include <string.h>
#include "backend/vulkan/vk_device.h"
#include "backend/vulkan/vk_fault.h"

/* The record's block, made and mapped on first use; NULL with the error set when it cannot be. */
static tg_vk_fault *record(tg_vk_dev *d) {
  if (d->fault_map) return d->fault_map;
  tg_vk_block b;
  if (tg_vk_block_new(d, sizeof(tg_vk_fault), d->type_host, &b) != TG_OK) return NULL;
  void *map = NULL;
  VkResult r = d->f.vkMapMemory(d->dev, b.mem, 0, sizeof(tg_vk_fault), 0, &map);
  if (r != VK_SUCCESS) {
    tg_vk_block_free(d, &b);
    tg_error(TG_ERR_DEVICE, "vulkan:%d: the fault record cannot be mapped (VkResult %d)", d->index, (int)r);
    return NULL;
  }
  d->fault = b;
  d->fault_map = map;
  *d->fault_map = (tg_vk_fault){.op = -1};
  return d->fault_map;
}

tg_status tg_vk_fault_slot(int dev, void **out) {
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  if (st != TG_OK) return st;
  pthread_mutex_lock(&d->lock);
  tg_vk_fault *f = record(d);
  pthread_mutex_unlock(&d->lock);
  if (!f) return TG_ERR_DEVICE;
  *out = (void *)(uintptr_t)d->fault.addr;
  return TG_OK;
}

tg_status tg_vk_fault_take(int dev, tg_vk_fault *f, int *found) {
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  *found = 0;
  if (st != TG_OK) return st;
  pthread_mutex_lock(&d->lock);
  volatile tg_vk_fault *rec = d->fault_map;
  if (rec && !tg_vk_recording(d) && rec->op != -1) { /* while recording, nothing has run yet: the replay takes it */
    f->op = rec->op, f->pos = rec->pos, f->value = rec->value;
    rec->op = -1;
    *found = 1;
  }
  pthread_mutex_unlock(&d->lock);
  return TG_OK;
}

tg_status tg_vk_fault_raise_as(const tg_kernel_args *a, tg_vk_fault_say say) {
  tg_vk_fault f;
  int found;
  tg_status st = tg_vk_fault_take(a->out->device.index, &f, &found);
  return st != TG_OK || !found ? st : say(a, f.pos, f.value);
}
