/* The Vulkan loader opened with dlopen on first use, one instance, and the physical devices it lists with their properties. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "backend/vulkan/vk_api.h"

#define TG_VK_LOADER "libvulkan.so.1"
#define TG_VK_MAX_PHYS 16
/* The oldest API the backend asks for: buffer device addresses, driver properties and Features2 are core there. */
#define TG_VK_MIN_API VK_API_VERSION_1_2

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static tg_status g_status = TG_OK;
static char g_why[512];
static tg_vk_fns g_fns;
static VkInstance g_instance;
static tg_vk_phys g_phys[TG_VK_MAX_PHYS];
static int g_nphys;

__attribute__((format(printf, 1, 2))) static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_status = TG_ERR_DEVICE;
  vsnprintf(g_why, sizeof g_why, fmt, ap);
  va_end(ap);
}

/* 1 when the device offers extension name (among its n extensions). */
static int has_ext(const VkExtensionProperties *ext, uint32_t n, const char *name) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(ext[i].extensionName, name) == 0) return 1;
  return 0;
}

static void describe_phys(tg_vk_phys *p) {
  const tg_vk_fns *f = &g_fns;
  memset(&p->driver, 0, sizeof p->driver);
  memset(&p->subgroup, 0, sizeof p->subgroup);
  p->driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  p->subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  p->subgroup.pNext = &p->driver;
  VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &p->subgroup};
  f->vkGetPhysicalDeviceProperties2(p->handle, &props);
  p->props = props.properties;
  p->driver.pNext = NULL, p->subgroup.pNext = NULL; /* the chain pointed at locals */

  VkPhysicalDeviceVulkan12Features v12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &v12};
  f->vkGetPhysicalDeviceFeatures2(p->handle, &feats);
  p->caps.buffer_device_address = v12.bufferDeviceAddress == VK_TRUE;
  p->caps.shader_float64 = feats.features.shaderFloat64 == VK_TRUE;

  VkExtensionProperties ext[512];
  uint32_t n = sizeof ext / sizeof *ext;
  if (f->vkEnumerateDeviceExtensionProperties(p->handle, NULL, &n, ext) < 0) n = 0; /* VK_INCOMPLETE keeps n */
  p->caps.memory_budget = has_ext(ext, n, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  p->caps.cooperative_matrix = has_ext(ext, n, "VK_KHR_cooperative_matrix");

  f->vkGetPhysicalDeviceMemoryProperties(p->handle, &p->mem);
  VkQueueFamilyProperties fam[32];
  uint32_t nf = sizeof fam / sizeof *fam;
  f->vkGetPhysicalDeviceQueueFamilyProperties(p->handle, &nf, fam);
  p->compute_family = -1;
  for (uint32_t i = 0; i < nf && p->compute_family < 0; i++)
    if (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) p->compute_family = (int)i;
}

static void load_once(void) {
  void *h = dlopen(TG_VK_LOADER, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fail("the Vulkan loader %s could not be opened (install Debian's libvulkan1)", TG_VK_LOADER);
    return;
  }
  tg_vk_fns *f = &g_fns;
  f->vkGetInstanceProcAddr = (PFN_vkGetInstanceProcAddr)dlsym(h, "vkGetInstanceProcAddr");
  if (!f->vkGetInstanceProcAddr) {
    fail("%s has no vkGetInstanceProcAddr: not a Vulkan loader", TG_VK_LOADER);
    return;
  }
  f->vkCreateInstance = (PFN_vkCreateInstance)f->vkGetInstanceProcAddr(NULL, "vkCreateInstance");
  f->vkEnumerateInstanceVersion =
      (PFN_vkEnumerateInstanceVersion)f->vkGetInstanceProcAddr(NULL, "vkEnumerateInstanceVersion");
  uint32_t api = VK_API_VERSION_1_0;
  if (f->vkEnumerateInstanceVersion) f->vkEnumerateInstanceVersion(&api);
  if (!f->vkCreateInstance || api < TG_VK_MIN_API) {
    fail("the Vulkan loader %s offers API 1.%u; the backend needs 1.2 (a newer libvulkan1)", TG_VK_LOADER,
         VK_API_VERSION_MINOR(api));
    return;
  }
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "tickgrad",
                           .pEngineName = "tickgrad", .apiVersion = TG_VK_MIN_API};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkResult r = f->vkCreateInstance(&ci, NULL, &g_instance);
  if (r != VK_SUCCESS) {
    fail("no Vulkan driver answered (vkCreateInstance: VkResult %d): install Debian's mesa-vulkan-drivers (AMD, "
         "Intel, lavapipe on the CPU) or the GPU vendor's driver", (int)r);
    return;
  }
#define TG_VK_FIND(fn) f->fn = (PFN_##fn)f->vkGetInstanceProcAddr(g_instance, #fn);
  TG_VK_INSTANCE_FUNCS(TG_VK_FIND)
#undef TG_VK_FIND
#define TG_VK_CHECK(fn)                                                                     \
  if (g_status == TG_OK && !f->fn) fail("the Vulkan loader has no %s", #fn);
  TG_VK_INSTANCE_FUNCS(TG_VK_CHECK)
#undef TG_VK_CHECK
  if (g_status != TG_OK) return;
  VkPhysicalDevice devs[TG_VK_MAX_PHYS];
  uint32_t n = TG_VK_MAX_PHYS;
  r = f->vkEnumeratePhysicalDevices(g_instance, &n, devs);
  if (r < 0) {
    fail("vkEnumeratePhysicalDevices failed (VkResult %d)", (int)r);
    return;
  }
  for (uint32_t i = 0; i < n; i++) {
    g_phys[g_nphys].handle = devs[i];
    describe_phys(&g_phys[g_nphys]);
    g_nphys++;
  }
  if (g_nphys == 0)
    fail("the Vulkan loader lists no device: install Debian's mesa-vulkan-drivers (AMD, Intel, lavapipe on the CPU) "
         "or the GPU vendor's driver");
}

tg_status tg_vk_instance(const tg_vk_fns **fns) {
  pthread_once(&g_once, load_once);
  *fns = &g_fns;
  return g_status == TG_OK ? TG_OK : tg_error(g_status, "vulkan: %s", g_why);
}

int tg_vk_phys_count(void) {
  pthread_once(&g_once, load_once);
  return g_status == TG_OK ? g_nphys : 0;
}

const tg_vk_phys *tg_vk_phys_at(int i) { return i >= 0 && i < tg_vk_phys_count() ? &g_phys[i] : NULL; }

const char *tg_vk_why_none(void) {
  pthread_once(&g_once, load_once);
  return g_status == TG_OK ? "" : g_why;
}

int tg_vk_heap_budget(int i, VkDeviceSize *budget, VkDeviceSize *usage, int max_heaps) {
  const tg_vk_phys *p = tg_vk_phys_at(i);
  if (!p || !p->caps.memory_budget) return 0;
  VkPhysicalDeviceMemoryBudgetPropertiesEXT b = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 m = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2, .pNext = &b};
  g_fns.vkGetPhysicalDeviceMemoryProperties2(p->handle, &m);
  int n = (int)m.memoryProperties.memoryHeapCount < max_heaps ? (int)m.memoryProperties.memoryHeapCount : max_heaps;
  for (int h = 0; h < n; h++) budget[h] = b.heapBudget[h], usage[h] = b.heapUsage[h];
  return 1;
}
