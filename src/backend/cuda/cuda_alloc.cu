/* The caching device allocator (one pool per device, with live statistics) and pinned host memory. */
#include <pthread.h>
#include <stdio.h>
#include <map>
#include <unordered_map>
#include "graph/backend.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_internal.h"

#define ROUND_BYTES 512 /* every block is a multiple of this (and so 256-byte aligned) */

namespace {

struct pool {
  std::multimap<size_t, void *> idle;        /* cached blocks by size */
  std::unordered_map<void *, size_t> in_use; /* block -> its size */
  uint64_t allocated, reserved, peak, mallocs;
  uint64_t h2d, d2h;
};

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
pool g_pool[TG_CUDA_MAX_DEVICES];

/* Returns every idle block of p to the driver (before retrying a failed cudaMalloc). */
void release_idle(pool *p) {
  for (auto &kv : p->idle) {
    cudaFree(kv.second);
    p->reserved -= kv.first;
  }
  p->idle.clear();
}

void take(pool *p, void *ptr, size_t size) {
  p->in_use[ptr] = size;
  p->allocated += size;
  if (p->allocated > p->peak) p->peak = p->allocated;
}

}  // namespace

extern "C" tg_status tg_cuda_alloc(int dev, size_t bytes, void **out) {
  *out = NULL;
  tg_status st = tg_cuda_use(dev);
  if (st != TG_OK) return st;
  size_t size = (bytes + ROUND_BYTES - 1) / ROUND_BYTES * ROUND_BYTES;
  if (size == 0) size = ROUND_BYTES;
  pthread_mutex_lock(&g_lock);
  pool *p = &g_pool[dev];
  /* best fit among cached blocks no more than twice the request, so big blocks are not wasted */
  auto it = p->idle.lower_bound(size);
  if (it != p->idle.end() && it->first <= 2 * size) {
    void *ptr = it->second;
    size_t have = it->first;
    p->idle.erase(it);
    take(p, ptr, have);
    pthread_mutex_unlock(&g_lock);
    *out = ptr;
    return TG_OK;
  }
  void *ptr = NULL;
  cudaError_t e = cudaMalloc(&ptr, size);
  if (e == cudaErrorMemoryAllocation && !p->idle.empty()) {
    (void)cudaGetLastError();
    release_idle(p);
    e = cudaMalloc(&ptr, size);
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    uint64_t alloc = p->allocated, res = p->reserved;
    pthread_mutex_unlock(&g_lock);
    return tg_error(e == cudaErrorMemoryAllocation ? TG_ERR_NOMEM : TG_ERR_DEVICE,
                    "cuda:%d: cannot allocate %.1f MiB (%s): the allocator holds %.1f MiB (%.1f MiB in use), "
                    "the device has %.1f MiB free of %.1f MiB",
                    dev, (double)size / 1048576.0, cudaGetErrorName(e), (double)res / 1048576.0,
                    (double)alloc / 1048576.0, (double)fr / 1048576.0, (double)tot / 1048576.0);
  }
  tg_alloc_note();
  p->mallocs++;
  p->reserved += size;
  take(p, ptr, size);
  pthread_mutex_unlock(&g_lock);
  *out = ptr;
  return TG_OK;
}

/* Blocks go back to the pool, not the driver: work queued on the one compute stream that still
 * reads a block is ordered before any later use of it. */
extern "C" void tg_cuda_free(int dev, void *ptr) {
  if (!ptr || dev < 0 || dev >= TG_CUDA_MAX_DEVICES) return;
  pthread_mutex_lock(&g_lock);
  pool *p = &g_pool[dev];
  auto it = p->in_use.find(ptr);
  if (it != p->in_use.end()) {
    p->allocated -= it->second;
    p->idle.emplace(it->second, ptr);
    p->in_use.erase(it);
  }
  pthread_mutex_unlock(&g_lock);
}

extern "C" tg_status tg_cuda_mem_stats(int dev, tg_mem_stats *out) {
  if (dev < 0 || dev >= TG_CUDA_MAX_DEVICES)
    return tg_error(TG_ERR_DEVICE, "memory statistics: no device cuda:%d", dev);
  pthread_mutex_lock(&g_lock);
  const pool *p = &g_pool[dev];
  out->allocated = p->allocated;
  out->reserved = p->reserved;
  out->peak = p->peak;
  out->device_mallocs = p->mallocs;
  out->h2d_bytes = p->h2d;
  out->d2h_bytes = p->d2h;
  pthread_mutex_unlock(&g_lock);
  return TG_OK;
}

extern "C" void tg_cuda_count_transfer(int dev, int to_device, size_t bytes) {
  if (dev < 0 || dev >= TG_CUDA_MAX_DEVICES) return;
  pthread_mutex_lock(&g_lock);
  if (to_device) g_pool[dev].h2d += bytes;
  else g_pool[dev].d2h += bytes;
  pthread_mutex_unlock(&g_lock);
}

extern "C" tg_status tg_cuda_host_alloc(size_t bytes, void **out) {
  *out = NULL;
  cudaError_t e = cudaMallocHost(out, bytes ? bytes : 1);
  if (e != cudaSuccess) {
    char where[48];
    snprintf(where, sizeof where, "%zu bytes of pinned host memory", bytes);
    return tg_cuda_fail(e, "cudaMallocHost", where);
  }
  tg_alloc_note();
  return TG_OK;
}

extern "C" void tg_cuda_host_free(void *p) {
  if (p) cudaFreeHost(p);
}
