/* The Vulkan backend on whatever device the loader lists (lavapipe in CI): listing, choosing (--device auto never takes
 * a Vulkan implementation on the CPU), memory, copies, fills, and the errors (a device that does not exist, a range
 * outside an allocation), and two threads copying through the one staging buffer at once. Skips (77) without a device
 * unless TG_EXPECT_VULKAN_DEVICE=1. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/vulkan/vk_api.h"
#include "backend/vulkan/vk_memory.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_test.h"

static void test_listing(void) {
  char buf[8192];
  int found = 0;
  for (int b = 0; b < tg_backend_count(); b++) {
    if (tg_backend_kind(b) != TG_VULKAN) continue;
    found = 1;
    CHECK(tg_backend_incomplete(b) == NULL); /* every op has kernels */
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
  CHECK_OK(tg_device_choose("vulkan:0", &d, notice, sizeof notice));
  CHECK(d.kind == TG_VULKAN && d.index == 0);
  CHECK(tg_device_choose("vulkan:7", &d, notice, sizeof notice) == TG_ERR_DEVICE);
  CHECK_MSG(strstr(tg_last_error(), "vulkan:7 does not exist") != NULL, "%s", tg_last_error());
  CHECK_OK(tg_device_choose("auto", &d, notice, sizeof notice));
  int gpu = 0; /* a Vulkan device auto may take: not a CPU implementation */
  for (int i = 0; i < tg_vk_phys_count(); i++) gpu |= tg_vk_phys_at(i)->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
  if (d.kind == TG_VULKAN)
    CHECK_MSG(tg_vk_phys_at(d.index)->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU, "auto chose %s", notice);
  else
    CHECK_MSG(!gpu || d.kind == TG_CUDA, "auto chose %s over a Vulkan GPU", notice);
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

#define RACE_WORDS (256u << 10) /* 1 MiB a copy: well inside one staging piece, long enough to overlap */
#define RACE_TRIPS 100

/* One thread's round trips: each a pattern of its own (thread, trip, word) to its buffer and back. */
typedef struct race_job {
  uint32_t id;
  tg_status st;  /* the first failure, TG_OK if none */
  char why[256]; /* its message (tg_last_error is the thread's own) */
  long bad;      /* round trips whose words came back otherwise */
} race_job;

static void *race_run(void *arg) {
  race_job *j = arg;
  uint32_t *h = malloc(sizeof(uint32_t) * RACE_WORDS), *back = malloc(sizeof(uint32_t) * RACE_WORDS), *d = NULL;
  j->st = tg_vk_alloc(0, sizeof(uint32_t) * RACE_WORDS, (void **)&d);
  for (uint32_t t = 0; t < RACE_TRIPS && j->st == TG_OK; t++) {
    for (uint32_t i = 0; i < RACE_WORDS; i++) h[i] = (j->id << 28) ^ (t << 20) ^ i;
    memset(back, 0, sizeof(uint32_t) * RACE_WORDS);
    if ((j->st = tg_vk_from_host(0, d, h, sizeof(uint32_t) * RACE_WORDS)) == TG_OK &&
        (j->st = tg_vk_to_host(0, back, d, sizeof(uint32_t) * RACE_WORDS)) == TG_OK)
      j->bad += memcmp(h, back, sizeof(uint32_t) * RACE_WORDS) != 0;
  }
  if (j->st != TG_OK) snprintf(j->why, sizeof j->why, "%s", tg_last_error());
  tg_vk_free(0, d);
  free(h);
  free(back);
  return NULL;
}

/* Two threads copying to and from vulkan:0 at once: every word comes back as its own thread wrote it. */
static void test_copy_threads(void) {
  race_job jobs[2] = {{.id = 1}, {.id = 2}};
  pthread_t th[2];
  for (int k = 0; k < 2; k++) CHECK(pthread_create(&th[k], NULL, race_run, &jobs[k]) == 0);
  for (int k = 0; k < 2; k++) CHECK(pthread_join(th[k], NULL) == 0);
  for (int k = 0; k < 2; k++) {
    CHECK_MSG(jobs[k].st == TG_OK, "thread %d: %s", k, jobs[k].why);
    CHECK_MSG(jobs[k].bad == 0, "thread %d: %ld of %d round trips came back with another's words", k, jobs[k].bad,
              RACE_TRIPS);
  }
}

int main(void) {
  test_listing();
  test_choose();
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  test_memory(1000);
  test_memory((size_t)17 << 20); /* 68 MiB: more than the staging buffer holds, so copies go in pieces */
  test_copy_threads();
  return tg_test_finish();
}
