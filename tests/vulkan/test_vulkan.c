/* The Vulkan backend on whatever device the loader lists (lavapipe in CI): listing, memory, copies, fills, the first
 * kernel against the CPU, and the errors (a device that does not exist, a range outside an allocation, the refusal
 * to run graphs while the backend has no op kernels). Skips (77) without a device unless TG_EXPECT_VULKAN_DEVICE=1. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/vulkan/vk_api.h"
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_memory.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"

/* Push constants of shaders/add.comp: three device addresses and a count. */
typedef struct add_args {
  uint64_t a, b, c;
  uint32_t n;
} add_args;

static void test_listing(void) {
  char buf[8192];
  int found = 0;
  for (int b = 0; b < tg_backend_count(); b++) {
    if (tg_backend_kind(b) != TG_VULKAN) continue;
    found = 1;
    CHECK(tg_backend_incomplete(b) != NULL); /* no op kernels yet: listed, never chosen */
    CHECK(tg_backend_describe(b, buf, sizeof buf));
    CHECK_MSG(strstr(buf, "vulkan:0\n") && strstr(buf, "  name ") && strstr(buf, "  vendor ") &&
                  strstr(buf, "  driver ") && strstr(buf, "  api ") && strstr(buf, "  type ") &&
                  strstr(buf, "  heap 0 ") && strstr(buf, "  subgroup ") && strstr(buf, "  shared ") &&
                  strstr(buf, "  features "),
              "listing lacks a line:\n%s", buf);
  }
  CHECK(found);
}

static void test_choose(void) {
  tg_device d;
  char notice[256];
  CHECK(tg_device_choose("vulkan:0", &d, notice, sizeof notice) == TG_ERR_DEVICE);
  CHECK_MSG(strstr(tg_last_error(), "no op kernels yet") != NULL, "%s", tg_last_error());
  CHECK(tg_device_choose("vulkan:7", &d, notice, sizeof notice) == TG_ERR_DEVICE);
  CHECK_MSG(strstr(tg_last_error(), "vulkan:7 does not exist") != NULL, "%s", tg_last_error());
  CHECK_OK(tg_device_choose("auto", &d, notice, sizeof notice));
  CHECK_MSG(d.kind != TG_VULKAN, "auto chose %s", notice); /* never a backend that runs no graphs */
  CHECK_OK(tg_device_parse("vulkan:2", &d));
  char s[16];
  CHECK(d.kind == TG_VULKAN && d.index == 2 && strcmp(tg_device_str(d, s, sizeof s), "vulkan:2") == 0);
  CHECK(tg_device_parse("vulkan:x", &d) == TG_ERR_INVALID);
  CHECK(tg_device_parse("vulkanx", &d) == TG_ERR_INVALID);
}

/* Host -> device -> host of n floats, a device copy at an offset, fills. */
static void test_memory(size_t n) {
  float *h = malloc(sizeof(float) * n), *back = malloc(sizeof(float) * n);
  for (size_t i = 0; i < n; i++) h[i] = (float)i * 0.5f - 3.0f;
  float *d = NULL, *e = NULL;
  CHECK_OK(tg_vk_alloc(0, sizeof(float) * n, (void **)&d));
  CHECK_OK(tg_vk_alloc(0, sizeof(float) * n, (void **)&e));
  CHECK(tg_vk_allocated(0) >= 2 * sizeof(float) * n);
  CHECK_OK(tg_vk_from_host(0, d, h, sizeof(float) * n));
  memset(back, 0, sizeof(float) * n);
  CHECK_OK(tg_vk_to_host(0, back, d, sizeof(float) * n));
  CHECK_MSG(memcmp(h, back, sizeof(float) * n) == 0, "round trip of %zu floats differs", n);
  /* e[0..n/2) = d[n/2..n) within the device, then read from an offset */
  size_t half = n / 2;
  CHECK_OK(tg_vk_copy(0, e, d + half, sizeof(float) * (n - half)));
  CHECK_OK(tg_vk_to_host(0, back, e, sizeof(float) * (n - half)));
  CHECK(memcmp(back, h + half, sizeof(float) * (n - half)) == 0);
  CHECK_OK(tg_vk_fill_u32(0, e + 1, n - 2, 0x3fc00000u)); /* 1.5f */
  CHECK_OK(tg_vk_to_host(0, back, e, sizeof(float) * n));
  CHECK(back[0] == h[half] && back[1] == 1.5f && back[n - 2] == 1.5f);
  /* a range past the allocation is refused, naming it */
  CHECK(tg_vk_to_host(0, back, d + 1, sizeof(float) * n) == TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "not inside one device allocation") != NULL, "%s", tg_last_error());
  tg_vk_free(0, d);
  tg_vk_free(0, e);
  free(h);
  free(back);
}

/* The add kernel against the CPU on n floats (n past 65535 workgroups of 256 exercises its grid-stride loop). */
static void test_add(size_t n) {
  float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n), *c = malloc(sizeof(float) * n);
  for (size_t i = 0; i < n; i++) a[i] = sinf((float)i), b[i] = (float)(i % 97) - 40.0f;
  float *da, *db, *dc;
  CHECK_OK(tg_vk_alloc(0, sizeof(float) * n, (void **)&da));
  CHECK_OK(tg_vk_alloc(0, sizeof(float) * n, (void **)&db));
  CHECK_OK(tg_vk_alloc(0, sizeof(float) * n, (void **)&dc));
  CHECK_OK(tg_vk_from_host(0, da, a, sizeof(float) * n));
  CHECK_OK(tg_vk_from_host(0, db, b, sizeof(float) * n));
  add_args args = {(uint64_t)(uintptr_t)da, (uint64_t)(uintptr_t)db, (uint64_t)(uintptr_t)dc, (uint32_t)n};
  CHECK_OK(tg_vk_dispatch(0, TG_VK_K_add, &args, sizeof args, tg_vk_groups(n, 256)));
  CHECK_OK(tg_vk_to_host(0, c, dc, sizeof(float) * n));
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) bad += c[i] != a[i] + b[i];
  CHECK_MSG(bad == 0, "add: %zu of %zu elements differ from the CPU's", bad, n);
  printf("vulkan:0 add of %zu floats: %zu differ from the CPU (bitwise)\n", n, bad);
  tg_vk_free(0, da), tg_vk_free(0, db), tg_vk_free(0, dc);
  free(a), free(b), free(c);
}

int main(void) {
  test_listing();
  test_choose();
  if (tg_vk_phys_count() == 0) {
    const char *want = getenv("TG_EXPECT_VULKAN_DEVICE");
    printf("no Vulkan device: %s\n", tg_vk_why_none());
    if (want && want[0] == '1') {
      CHECK_MSG(0, "TG_EXPECT_VULKAN_DEVICE=1 but no Vulkan device: %s", tg_vk_why_none());
      return tg_test_finish();
    }
    return 77;
  }
  test_memory(1000);
  test_memory((size_t)17 << 20); /* 68 MiB: more than the staging buffer holds, so copies go in pieces */
  test_add(1000);
  test_add((size_t)17 << 20);
  return tg_test_finish();
}
