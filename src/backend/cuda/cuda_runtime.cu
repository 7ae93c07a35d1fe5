/* Per-device CUDA state: availability, the compute stream, cuBLAS handle, scratch, kernel faults, errors. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <atomic>
#include <vector>
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_internal.h"

#define BLAS_WORKSPACE_BYTES (32u << 20) /* cuBLAS's recommended workspace on Hopper */

namespace {

struct dev_state {
  std::atomic<int> ready; /* set once, under g_lock, when everything below exists */
  cudaStream_t stream;
  cublasHandle_t blas;
  void *blas_workspace;
  tg_cuda_fault *fault;
  void *scratch;
  size_t scratch_bytes;
  std::vector<void *> outgrown; /* earlier scratch buffers, kept for captured steps */
};

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
dev_state g_dev[TG_CUDA_MAX_DEVICES];
int g_count = -1; /* devices found; -1 until probed */
char g_why[256];
thread_local int t_current = -1;

void probe_locked() {
  if (g_count >= 0) return;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    int driver = access("/dev/nvidiactl", F_OK) == 0;
    snprintf(g_why, sizeof g_why, "%s%s: %s", driver ? "" : "no NVIDIA driver or GPU on this machine: ",
             cudaGetErrorName(e), cudaGetErrorString(e));
    (void)cudaGetLastError();
    n = 0;
  } else if (n == 0) {
    snprintf(g_why, sizeof g_why, "the CUDA driver reports no devices");
  }
  g_count = n > TG_CUDA_MAX_DEVICES ? TG_CUDA_MAX_DEVICES : n;
}

tg_status set_device(int dev) {
  if (t_current == dev) return TG_OK;
  cudaError_t e = cudaSetDevice(dev);
  if (e != cudaSuccess) return tg_cuda_fail(e, "cudaSetDevice", "device selection");
  t_current = dev;
  return TG_OK;
}

tg_status init_locked(int dev) {
  dev_state *s = &g_dev[dev];
  if (s->ready.load()) return TG_OK;
  tg_status st = tg_cublas_load(); /* the first device start loads cuBLAS */
  if (st == TG_OK) st = set_device(dev);
  if (st != TG_OK) return st;
  cudaError_t e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) return tg_cuda_fail(e, "cudaStreamCreate", "device start-up");
  if ((e = cudaMalloc(&s->fault, sizeof(tg_cuda_fault))) != cudaSuccess)
    return tg_cuda_fail(e, "cudaMalloc of the fault record", "device start-up");
  if ((e = cudaMemset(s->fault, 0xFF, sizeof(tg_cuda_fault))) != cudaSuccess)
    return tg_cuda_fail(e, "cudaMemset of the fault record", "device start-up");
  cublasStatus_t b = tg_cublas.create(&s->blas);
  if (b != CUBLAS_STATUS_SUCCESS) return tg_cuda_blas_fail(b, "cublasCreate", "device start-up");
  if ((e = cudaMalloc(&s->blas_workspace, BLAS_WORKSPACE_BYTES)) != cudaSuccess)
    return tg_cuda_fail(e, "cudaMalloc of the cuBLAS workspace", "device start-up");
  if ((b = tg_cublas.set_stream(s->blas, s->stream)) != CUBLAS_STATUS_SUCCESS ||
      (b = tg_cublas.set_workspace(s->blas, s->blas_workspace, BLAS_WORKSPACE_BYTES)) != CUBLAS_STATUS_SUCCESS ||
      (b = tg_cublas.set_math_mode(s->blas, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS)
    return tg_cuda_blas_fail(b, "cuBLAS set-up", "device start-up");
  s->ready.store(1);
  return TG_OK;
}

}  // namespace

extern "C" int tg_cuda_device_count(void) {
  pthread_mutex_lock(&g_lock);
  probe_locked();
  int n = g_count;
  pthread_mutex_unlock(&g_lock);
  return n;
}

extern "C" const char *tg_cuda_unavailable_reason(void) {
  return tg_cuda_device_count() > 0 ? "" : g_why;
}

extern "C" tg_status tg_cuda_use(int dev) {
  /* every launch comes through here: a started device that is already current costs no lock */
  if (dev >= 0 && dev < TG_CUDA_MAX_DEVICES && t_current == dev && g_dev[dev].ready.load()) return TG_OK;
  int n = tg_cuda_device_count();
  if (dev < 0 || dev >= n) {
    if (n == 0) return tg_error(TG_ERR_DEVICE, "cuda:%d is not available: %s", dev, g_why);
    return tg_error(TG_ERR_DEVICE, "cuda:%d is not available: this machine has %d CUDA device%s (cuda:0..cuda:%d)",
                    dev, n, n == 1 ? "" : "s", n - 1);
  }
  pthread_mutex_lock(&g_lock);
  tg_status st = init_locked(dev);
  pthread_mutex_unlock(&g_lock);
  return st == TG_OK ? set_device(dev) : st;
}

cudaStream_t tg_cuda_stream(int dev) {
  if (tg_cuda_use(dev) != TG_OK) return NULL;
  return g_dev[dev].stream;
}

cublasHandle_t tg_cuda_blas(int dev) {
  if (tg_cuda_use(dev) != TG_OK) return NULL;
  return g_dev[dev].blas;
}

tg_cuda_fault *tg_cuda_fault_slot(int dev) {
  if (tg_cuda_use(dev) != TG_OK) return NULL;
  return g_dev[dev].fault;
}

void *tg_cuda_scratch(int dev, size_t bytes) {
  if (tg_cuda_use(dev) != TG_OK) return NULL;
  dev_state *s = &g_dev[dev];
  if (bytes <= s->scratch_bytes) return s->scratch;
  size_t want = bytes < ((size_t)1 << 20) ? ((size_t)1 << 20) : bytes + bytes / 2;
  void *p = NULL;
  cudaError_t e = cudaMalloc(&p, want);
  if (e != cudaSuccess) {
    char where[64];
    snprintf(where, sizeof where, "scratch of %zu bytes on cuda:%d", bytes, dev);
    tg_cuda_fail(e, "cudaMalloc", where);
    return NULL;
  }
  if (s->scratch) s->outgrown.push_back(s->scratch);
  s->scratch = p;
  s->scratch_bytes = want;
  return p;
}

tg_status tg_cuda_fail(cudaError_t e, const char *what, const char *where) {
  if (e == cudaSuccess) return TG_OK;
  (void)cudaGetLastError(); /* clear a non-sticky error so the next call starts clean */
  tg_status s = e == cudaErrorMemoryAllocation ? TG_ERR_NOMEM : TG_ERR_DEVICE;
  return tg_error(s, "CUDA: %s failed (%s): %s: %s", what, where ? where : "-", cudaGetErrorName(e),
                  cudaGetErrorString(e));
}

tg_status tg_cuda_blas_fail(cublasStatus_t b, const char *what, const char *where) {
  if (b == CUBLAS_STATUS_SUCCESS) return TG_OK;
  tg_status s = b == CUBLAS_STATUS_ALLOC_FAILED ? TG_ERR_NOMEM : TG_ERR_DEVICE;
  return tg_error(s, "cuBLAS: %s failed (%s): %s: %s", what, where ? where : "-", tg_cublas.status_name(b),
                  tg_cublas.status_string(b));
}

tg_status tg_cuda_launched(const char *kernel, const char *node) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return TG_OK;
  char what[96];
  snprintf(what, sizeof what, "launch of kernel %s", kernel);
  return tg_cuda_fail(e, what, node);
}

extern "C" tg_status tg_cuda_sync(int dev) {
  tg_status st = tg_cuda_use(dev);
  if (st != TG_OK) return st;
  dev_state *s = &g_dev[dev];
  char where[32];
  snprintf(where, sizeof where, "cuda:%d", dev);
  cudaError_t e = cudaStreamSynchronize(s->stream);
  if (e != cudaSuccess) return tg_cuda_fail(e, "a kernel or copy on the compute stream", where);
  tg_cuda_fault f;
  if ((e = cudaMemcpy(&f, s->fault, sizeof f, cudaMemcpyDeviceToHost)) != cudaSuccess)
    return tg_cuda_fail(e, "reading the fault record", where);
  tg_cuda_count_transfer(dev, 0, sizeof f);
  if (f.op < 0) return TG_OK;
  if ((e = cudaMemset(s->fault, 0xFF, sizeof f)) != cudaSuccess) return tg_cuda_fail(e, "clearing the fault record", where);
  const tg_op_def *d = tg_op_get((tg_op)f.op);
  return tg_error(TG_ERR_INVALID,
                  "cuda:%d: op '%s': value %lld is out of range [0, %lld) (found by a kernel, raised at "
                  "the next synchronisation; the outputs of that step are not valid)",
                  dev, d ? d->name : "?", f.value, f.bound);
}

extern "C" tg_status tg_cuda_info(int dev, tg_device_info *out) {
  memset(out, 0, sizeof *out);
  tg_status st = tg_cuda_use(dev);
  if (st != TG_OK) return st;
  cudaDeviceProp p;
  cudaError_t e = cudaGetDeviceProperties(&p, dev);
  if (e != cudaSuccess) return tg_cuda_fail(e, "cudaGetDeviceProperties", "device info");
  snprintf(out->name, sizeof out->name, "%s", p.name);
  out->total_bytes = p.totalGlobalMem;
  size_t fr = 0, tot = 0;
  if (cudaMemGetInfo(&fr, &tot) == cudaSuccess) out->free_bytes = fr;
  out->cc_major = p.major;
  out->cc_minor = p.minor;
  out->sm_count = p.multiProcessorCount;
  snprintf(out->pci_bus_id, sizeof out->pci_bus_id, "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
  cudaDriverGetVersion(&out->driver_version);
  cudaRuntimeGetVersion(&out->runtime_version);
  return TG_OK;
}
