/* Kernel faults: a shader that finds a bad value (an index outside its table, a label outside the classes) cannot
 * return an error, so it records the first one in the device's fault record (common.glsl's tg_fault) and carries on
 * with a safe value; the kernel's host side takes the record after the dispatch and raises it, naming the node. */
#ifndef TG_VK_FAULT_H
#define TG_VK_FAULT_H

#include <stdint.h>
#include "ops/ops.h"
#include "tickgrad/status.h"

/* The record as shaders write it (common.glsl's tg_fault): op -1 (all bits set) when clear. */
typedef struct tg_vk_fault {
  int32_t op;   /* the tg_op whose kernel found it */
  uint32_t pos; /* the flat position of the bad value in its tensor */
  int64_t value;
} tg_vk_fault;

/* The device address of vulkan:dev's fault record (made clear on first use), for a shader's push constants. */
tg_status tg_vk_fault_slot(int dev, void **out);
/* Reads the record into *f and clears it when a fault is recorded; *found says whether one was (never while a step is
 * being recorded: its kernels have not run). */
tg_status tg_vk_fault_take(int dev, tg_vk_fault *f, int *found);

/* The first bad value a's kernel recorded on its output's device, raised as say words it (an op's message,
 * ops/index_errors.h: the kernel's args, the flat position, the value); TG_OK when none is recorded. */
typedef tg_status (*tg_vk_fault_say)(const tg_kernel_args *a, int64_t pos, int64_t value);
tg_status tg_vk_fault_raise_as(const tg_kernel_args *a, tg_vk_fault_say say);

#endif
