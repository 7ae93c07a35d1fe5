/* Tensors (shape, dtype, device, name, borrowed data pointer) and device descriptors. */
#ifndef TICKGRAD_TENSOR_H
#define TICKGRAD_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include "tickgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_MAX_DIMS 6
#define TG_NAME_MAX 64

/* Values are stable (appended only): TG_BF16 is storage only (bfloat16, raw uint16); no op computes in it yet. */
typedef enum tg_dtype { TG_F32 = 0, TG_I32, TG_I64, TG_BF16, TG_DTYPE_COUNT } tg_dtype;

/* Device kinds are stable numbers (appended only) with a name each ("cpu", "cuda", "vulkan"); what a kind can do (its
 * devices, kernels, memory) comes from the backend that registers it (tg_backend_compiled says whether this build
 * has it). */
typedef enum tg_device_kind { TG_CPU = 0, TG_CUDA, TG_VULKAN, TG_DEVICE_KIND_COUNT } tg_device_kind;

/* A device is a kind plus an index: cpu:0, cpu:1 (a second logical CPU device), cuda:0, vulkan:0. */
typedef struct tg_device {
  tg_device_kind kind;
  int index;
} tg_device;

/* A tensor never owns its data. All tensors are contiguous, row-major.
 * ndim == 0 is a scalar with one element. */
typedef struct tg_tensor {
  char name[TG_NAME_MAX];
  tg_dtype dtype;
  tg_device device;
  int ndim;
  int64_t shape[TG_MAX_DIMS];
  void *data;
} tg_tensor;

tg_device tg_cpu(int index);
tg_device tg_cuda(int index);
int tg_device_eq(tg_device a, tg_device b);
/* Writes e.g. "cpu:1" into buf (at least 16 bytes); returns buf. */
const char *tg_device_str(tg_device d, char *buf, size_t n);
/* Parses "KIND" or "KIND:N" for each kind name ("cpu", "cuda:0", "vulkan:1"). */
tg_status tg_device_parse(const char *s, tg_device *out);
/* A kind's name ("cpu", "cuda", "vulkan"), "?" for a number no kind has. */
const char *tg_device_kind_name(tg_device_kind k);

size_t tg_dtype_size(tg_dtype t);
const char *tg_dtype_name(tg_dtype t); /* "f32", "i32", "i64", "bf16" */

int64_t tg_numel(const tg_tensor *t);
size_t tg_nbytes(const tg_tensor *t);
/* A view of caller-owned memory. Returns TG_ERR_INVALID for bad ndim or negative dims. */
tg_status tg_tensor_view(tg_tensor *t, const char *name, tg_device dev, tg_dtype dtype, int ndim,
                         const int64_t *shape, void *data);
int tg_shape_eq(const tg_tensor *a, const tg_tensor *b);
/* Writes e.g. "[64, 256]" into buf; returns buf. */
const char *tg_shape_str(const tg_tensor *t, char *buf, size_t n);

/* What a device is (filled by its backend) and its memory as the caching allocator sees it. */
typedef struct tg_device_info {
  char name[256];
  char pci_bus_id[32];
  uint64_t total_bytes, free_bytes;
  int cc_major, cc_minor; /* compute capability */
  int sm_count;
  int driver_version, runtime_version; /* CUDA versions as 1000*major + 10*minor */
} tg_device_info;

/* Device memory as the caching allocator sees it: bytes handed out now, bytes held from the driver,
 * the peak of the first, how many times the driver was asked for memory; and the transfer counters. */
typedef struct tg_mem_stats {
  uint64_t allocated, reserved, peak;
  uint64_t device_mallocs;
  uint64_t h2d_bytes, d2h_bytes; /* every byte copied between the host and this device so far */
} tg_mem_stats;

#ifdef __cplusplus
}
#endif
#endif
