/* The device's kernel-fault record (vk_fault.h): 16 bytes of device memory, made on first use. */
#include "backend/vulkan/vk_fault.h"
#include "backend/vulkan/vk_device.h"
#include "backend/vulkan/vk_memory.h"

/* Sets the record clear: op -1, the rest 0. */
static tg_status fault_clear(int dev, void *rec) {
  const tg_vk_fault clear = {.op = -1};
  return tg_vk_from_host(dev, rec, &clear, sizeof clear);
}

tg_status tg_vk_fault_slot(int dev, void **out) {
  tg_vk_dev *d;
  tg_status st = tg_vk_device(dev, &d);
  if (st != TG_OK) return st;
  if (!d->fault) {
    void *rec = NULL;
    if ((st = tg_vk_alloc(dev, sizeof(tg_vk_fault), &rec)) != TG_OK) return st;
    if ((st = fault_clear(dev, rec)) != TG_OK) {
      tg_vk_free(dev, rec);
      return st;
    }
    d->fault = rec;
  }
  *out = d->fault;
  return TG_OK;
}

tg_status tg_vk_fault_take(int dev, tg_vk_fault *f, int *found) {
  void *rec;
  tg_status st = tg_vk_fault_slot(dev, &rec);
  *found = 0;
  if (st != TG_OK || (st = tg_vk_to_host(dev, f, rec, sizeof *f)) != TG_OK || f->op == -1) return st;
  *found = 1;
  return fault_clear(dev, rec);
}
