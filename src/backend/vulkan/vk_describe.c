/* One Vulkan device as `tickgrad devices` lists it: name, vendor, driver, API, type, memory, subgroup, features. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "backend/vulkan/vk_api.h"

static const char *vendor_name(uint32_t id) {
  switch (id) {
    case 0x1002: return "AMD";
    case 0x10DE: return "NVIDIA";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x1010: return "Imagination";
    case 0x10005: return "Mesa";
    default: return "unknown vendor";
  }
}

static const char *type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU (a software implementation)";
    default: return "other";
  }
}

/* The driver's version as its vendor writes it (NVIDIA packs 10.8.8.6 bits; the others as Vulkan versions). */
static void driver_version(const VkPhysicalDeviceProperties *p, char *buf, size_t n) {
  uint32_t v = p->driverVersion;
  if (p->vendorID == 0x10DE)
    snprintf(buf, n, "%u.%u.%u", v >> 22, (v >> 14) & 0xFF, (v >> 6) & 0xFF);
  else
    snprintf(buf, n, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

typedef struct out_buf {
  char *p;
  size_t n, used;
} out_buf;

__attribute__((format(printf, 2, 3))) static void put(out_buf *o, const char *fmt, ...) {
  if (o->used + 1 >= o->n) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(o->p + o->used, o->n - o->used, fmt, ap);
  va_end(ap);
  if (k > 0) o->used = o->used + (size_t)k < o->n ? o->used + (size_t)k : o->n - 1;
}

void tg_vk_describe_one(int i, char *buf, size_t n) {
  out_buf o = {buf, n, 0};
  buf[0] = '\0';
  const tg_vk_phys *p = tg_vk_phys_at(i);
  if (!p) return;
  char dv[32];
  driver_version(&p->props, dv, sizeof dv);
  put(&o, "vulkan:%d\n", i);
  put(&o, "  name       %s\n", p->props.deviceName);
  put(&o, "  vendor     %s (0x%04x), device 0x%04x\n", vendor_name(p->props.vendorID), p->props.vendorID,
      p->props.deviceID);
  put(&o, "  driver     %s, %s (version %s)\n", p->driver.driverName[0] ? p->driver.driverName : "?",
      p->driver.driverInfo[0] ? p->driver.driverInfo : "no info", dv);
  put(&o, "  api        %u.%u.%u\n", VK_API_VERSION_MAJOR(p->props.apiVersion), VK_API_VERSION_MINOR(p->props.apiVersion),
      VK_API_VERSION_PATCH(p->props.apiVersion));
  put(&o, "  type       %s\n", type_name(p->props.deviceType));
  if (p->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)
    put(&o, "  auto       never taken by --device auto (slower than the cpu backend); --device vulkan:%d names it\n", i);
  VkDeviceSize budget[VK_MAX_MEMORY_HEAPS], usage[VK_MAX_MEMORY_HEAPS];
  int has_budget = tg_vk_heap_budget(i, budget, usage, VK_MAX_MEMORY_HEAPS);
  for (uint32_t h = 0; h < p->mem.memoryHeapCount; h++) {
    const VkMemoryHeap *hp = &p->mem.memoryHeaps[h];
    put(&o, "  heap %u     %.0f MiB%s", h, (double)hp->size / 1048576.0,
        hp->flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT ? ", device-local" : ", host");
    if (has_budget)
      put(&o, ", budget %.0f MiB, used %.0f MiB", (double)budget[h] / 1048576.0, (double)usage[h] / 1048576.0);
    put(&o, "\n");
  }
  if (!has_budget) put(&o, "  budget     not reported (no VK_EXT_memory_budget): the heap sizes are the limit\n");
  put(&o, "  subgroup   %u lanes\n", p->subgroup.subgroupSize);
  put(&o, "  shared     %u KiB per workgroup, at most %u invocations\n", p->props.limits.maxComputeSharedMemorySize / 1024,
      p->props.limits.maxComputeWorkGroupInvocations);
  put(&o, "  features   buffer device address %s (required); memory budget %s; cooperative matrix %s; float64 %s\n",
      p->caps.buffer_device_address ? "yes" : "NO", p->caps.memory_budget ? "yes" : "no",
      p->caps.cooperative_matrix ? "yes (not used yet)" : "no", p->caps.shader_float64 ? "yes (not needed)" : "no (not needed)");
  if (p->compute_family < 0) put(&o, "  queues     no compute queue: the backend cannot run on it\n");
}
