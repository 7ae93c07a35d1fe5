/* The emulated CUDA runtime: one device ("tickgrad CUDA emulator", sm 9.0) whose memory is host memory, streams that run work at once or record it while capturing, graphs that replay it, events, errors. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include "emu_internal.h"
#include "emu_launch.h"

#define STREAM_MAGIC 0x5354524dU
#define ALIGN 256

struct tg_emu_stream {
  unsigned magic;
  bool capturing;
  bool invalidated;               /* a refused call during capture: EndCapture fails */
  pthread_t capture_thread;
  struct tg_emu_graph *graph;     /* the graph being recorded */
};

struct tg_emu_event {
  int recorded;
};

struct tg_emu_graph {
  std::shared_ptr<std::vector<std::unique_ptr<tg_emu_task>>> tasks;
};

struct tg_emu_graph_exec {
  std::shared_ptr<std::vector<std::unique_ptr<tg_emu_task>>> tasks;
};

namespace {

std::mutex g_lock;
/* begin -> bytes. Never destroyed: the library keeps device blocks cached until exit, and LeakSanitizer,
 * which checks after static destructors, must still find them through these maps. */
std::map<uintptr_t, size_t> &g_device = *new std::map<uintptr_t, size_t>;
std::map<uintptr_t, size_t> &g_pinned = *new std::map<uintptr_t, size_t>;
size_t g_device_bytes;
std::string g_fault; /* a pending launch failure, delivered by the next synchronising call */
std::string g_fault_delivered;
thread_local cudaError_t t_last = cudaSuccess;
thread_local std::string t_detail[2]; /* [0] the last error's code as text, [1] its detail */
thread_local int t_device = 0;
thread_local tg_emu_stream *t_capturing = nullptr;

int device_count() {
  static int n = [] {
    const char *e = getenv("TG_CUDA_EMU_DEVICES"); /* 0 shows the no-device paths */
    return e ? atoi(e) : 1;
  }();
  return n;
}

size_t total_memory() {
  static size_t b = [] {
    const char *e = getenv("TG_CUDA_EMU_MEM_MB");
    return (e && atoll(e) > 0 ? (size_t)atoll(e) : (size_t)16384) << 20;
  }();
  return b;
}

struct name_text {
  cudaError_t e;
  const char *name, *text;
};
const name_text k_errors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
     "operation not permitted when stream is capturing"},
    {cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
     "operation failed due to a previous error during capture"},
    {cudaErrorStreamCaptureUnmatched, "cudaErrorStreamCaptureUnmatched", "capture was not initiated in this stream"},
    {cudaErrorStreamCaptureImplicit, "cudaErrorStreamCaptureImplicit",
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const name_text *lookup(cudaError_t e) {
  for (const name_text &n : k_errors)
    if (n.e == e) return &n;
  return &k_errors[sizeof k_errors / sizeof k_errors[0] - 1];
}

/* A synchronising call delivers a pending launch failure. */
cudaError_t deliver_fault() {
  std::lock_guard<std::mutex> l(g_lock);
  if (g_fault.empty()) return cudaSuccess;
  g_fault_delivered = g_fault;
  g_fault.clear();
  t_last = cudaErrorLaunchFailure;
  return cudaErrorLaunchFailure;
}

bool stream_ok(cudaStream_t s) { return s == nullptr || s->magic == STREAM_MAGIC; }

bool mem_in(const std::map<uintptr_t, size_t> &m, uintptr_t p) {
  auto it = m.upper_bound(p);
  if (it == m.begin()) return false;
  --it;
  return p <= it->first + it->second;
}

const char *kind_name(cudaMemcpyKind k) {
  switch (k) {
    case cudaMemcpyHostToDevice: return "host to device";
    case cudaMemcpyDeviceToHost: return "device to host";
    case cudaMemcpyDeviceToDevice: return "device to device";
    case cudaMemcpyHostToHost: return "host to host";
    default: return "default";
  }
}

/* The device side of a copy must be memory the device can reach. */
cudaError_t check_copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return cudaSuccess;
  if (!dst || !src) return tg_emu_error(cudaErrorInvalidValue, "a NULL pointer in a copy");
  bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if ((int)kind < 0 || (int)kind > 4) return tg_emu_error(cudaErrorInvalidMemcpyDirection, "bad copy kind");
  char msg[200];
  if (dst_dev && tg_emu_mem_of(dst) == TG_EMU_NOT_OURS) {
    snprintf(msg, sizeof msg, "copy %s of %zu bytes: the destination %p is not device memory", kind_name(kind), bytes, dst);
    return tg_emu_error(cudaErrorInvalidValue, msg);
  }
  if (src_dev && tg_emu_mem_of(src) == TG_EMU_NOT_OURS) {
    snprintf(msg, sizeof msg, "copy %s of %zu bytes: the source %p is not device memory", kind_name(kind), bytes, src);
    return tg_emu_error(cudaErrorInvalidValue, msg);
  }
  if (tg_emu_mem_of((const char *)dst + bytes - 1) != tg_emu_mem_of(dst) && tg_emu_mem_of(dst) != TG_EMU_NOT_OURS) {
    snprintf(msg, sizeof msg, "copy of %zu bytes runs past the end of the allocation at %p", bytes, dst);
    return tg_emu_error(cudaErrorInvalidValue, msg);
  }
  return cudaSuccess;
}

struct copy_task final : tg_emu_task {
  void *dst;
  const void *src;
  size_t bytes;
  copy_task(void *d, const void *s, size_t n) : dst(d), src(s), bytes(n) {}
  void run() override { memmove(dst, src, bytes); }
};

struct set_task final : tg_emu_task {
  void *dst;
  int value;
  size_t bytes;
  set_task(void *d, int v, size_t n) : dst(d), value(v), bytes(n) {}
  void run() override { memset(dst, value, bytes); }
};

}  // namespace

/* ---- for the rest of the emulator ---- */

void tg_emu_fail_launch(const std::string &msg) {
  fprintf(stderr, "tickgrad CUDA emulator: %s\n", msg.c_str());
  std::lock_guard<std::mutex> l(g_lock);
  if (g_fault.empty()) g_fault = msg;
}

cudaError_t tg_emu_error(cudaError_t e, const std::string &detail) {
  t_last = e;
  t_detail[0] = lookup(e)->name;
  t_detail[1] = detail;
  return e;
}

tg_emu_mem_kind tg_emu_mem_of(const void *p) {
  std::lock_guard<std::mutex> l(g_lock);
  if (mem_in(g_device, (uintptr_t)p)) return TG_EMU_DEVICE_MEM;
  if (mem_in(g_pinned, (uintptr_t)p)) return TG_EMU_PINNED_MEM;
  return TG_EMU_NOT_OURS;
}

bool tg_emu_capturing_here(const char *call) {
  tg_emu_stream *s = t_capturing;
  if (!s) return false;
  s->invalidated = true;
  tg_emu_error(cudaErrorStreamCaptureUnsupported, std::string(call) + " while this thread captures a stream");
  fprintf(stderr, "tickgrad CUDA emulator: %s called during stream capture: refused, the capture is invalidated\n", call);
  return true;
}

bool tg_emu_launch_ok(const char *kernel, dim3 g, dim3 b, size_t smem, cudaStream_t s) {
  char msg[300];
  unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
  if (!stream_ok(s)) {
    snprintf(msg, sizeof msg, "kernel %s launched on a stream that does not exist", kernel);
    tg_emu_error(cudaErrorInvalidResourceHandle, msg);
    return false;
  }
  if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535 || threads == 0 ||
      threads > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64 || smem > 48 * 1024) {
    snprintf(msg, sizeof msg, "kernel %s: grid (%u,%u,%u), block (%u,%u,%u), %zu bytes of dynamic shared memory",
             kernel, g.x, g.y, g.z, b.x, b.y, b.z, smem);
    tg_emu_error(cudaErrorInvalidConfiguration, msg);
    return false;
  }
  return true;
}

bool tg_emu_pointer_ok(const char *kernel, int arg, const void *p) {
  if (!p || tg_emu_mem_of(p) != TG_EMU_NOT_OURS) return true;
  char msg[300];
  snprintf(msg, sizeof msg, "kernel %s: argument %d (%p) is neither device memory nor pinned host memory", kernel, arg, p);
  tg_emu_fail_launch(msg);
  return false;
}

void tg_emu_submit(cudaStream_t s, tg_emu_task *t) {
  std::unique_ptr<tg_emu_task> task(t);
  if (s && s->capturing) {
    s->graph->tasks->push_back(std::move(task));
    return;
  }
  task->run();
}

/* ---- devices ---- */

cudaError_t cudaGetDeviceCount(int *count) {
  *count = device_count();
  if (*count == 0) return tg_emu_error(cudaErrorNoDevice, "TG_CUDA_EMU_DEVICES=0");
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int dev) {
  if (dev < 0 || dev >= device_count()) return tg_emu_error(cudaErrorInvalidDevice, "");
  t_device = dev;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int *dev) {
  *dev = t_device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int dev) {
  if (dev < 0 || dev >= device_count()) return tg_emu_error(cudaErrorInvalidDevice, "");
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "tickgrad CUDA emulator");
  p->totalGlobalMem = total_memory();
  p->sharedMemPerBlock = 48 * 1024;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 0x7fffffff, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 1;
  p->pciBusID = dev;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  if (tg_emu_capturing_here("cudaDeviceSynchronize")) return cudaErrorStreamCaptureUnsupported;
  return deliver_fault();
}

/* ---- errors ---- */

cudaError_t cudaGetLastError(void) {
  cudaError_t e = t_last;
  t_last = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError(void) { return t_last; }

const char *cudaGetErrorName(cudaError_t e) { return lookup(e)->name; }

const char *cudaGetErrorString(cudaError_t e) {
  static thread_local std::string text;
  text = lookup(e)->text;
  if (e == cudaErrorLaunchFailure && !g_fault_delivered.empty()) text += " (tickgrad CUDA emulator: " + g_fault_delivered + ")";
  else if (t_detail[0] == lookup(e)->name && !t_detail[1].empty()) text += " (tickgrad CUDA emulator: " + t_detail[1] + ")";
  return text.c_str();
}

/* ---- memory ---- */

cudaError_t cudaMalloc(void **p, size_t bytes) {
  *p = nullptr;
  if (tg_emu_capturing_here("cudaMalloc")) return cudaErrorStreamCaptureUnsupported;
  size_t size = (bytes + ALIGN - 1) / ALIGN * ALIGN;
  if (size == 0) size = ALIGN;
  {
    std::lock_guard<std::mutex> l(g_lock);
    if (size > total_memory() - g_device_bytes) {
      char msg[120];
      snprintf(msg, sizeof msg, "%zu bytes asked, %zu of %zu free", bytes, total_memory() - g_device_bytes, total_memory());
      t_last = cudaErrorMemoryAllocation;
      t_detail[0] = "cudaErrorMemoryAllocation";
      t_detail[1] = msg;
      return cudaErrorMemoryAllocation;
    }
  }
  void *m = aligned_alloc(ALIGN, size);
  if (!m) return tg_emu_error(cudaErrorMemoryAllocation, "the host is out of memory");
  memset(m, 0xFF, size); /* fresh device memory is garbage: NaN in every float, -1 in every integer */
  std::lock_guard<std::mutex> l(g_lock);
  g_device[(uintptr_t)m] = size;
  g_device_bytes += size;
  *p = m;
  return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
  if (!p) return cudaSuccess;
  if (tg_emu_capturing_here("cudaFree")) return cudaErrorStreamCaptureUnsupported;
  std::lock_guard<std::mutex> l(g_lock);
  auto it = g_device.find((uintptr_t)p);
  if (it == g_device.end()) return tg_emu_error(cudaErrorInvalidValue, "cudaFree of a pointer cudaMalloc did not return");
  g_device_bytes -= it->second;
  g_device.erase(it);
  free(p);
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void **p, size_t bytes) {
  *p = nullptr;
  if (tg_emu_capturing_here("cudaMallocHost")) return cudaErrorStreamCaptureUnsupported;
  size_t size = (bytes + ALIGN - 1) / ALIGN * ALIGN;
  void *m = aligned_alloc(ALIGN, size ? size : ALIGN);
  if (!m) return tg_emu_error(cudaErrorMemoryAllocation, "pinned host memory");
  std::lock_guard<std::mutex> l(g_lock);
  g_pinned[(uintptr_t)m] = size;
  *p = m;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p) {
  if (!p) return cudaSuccess;
  if (tg_emu_capturing_here("cudaFreeHost")) return cudaErrorStreamCaptureUnsupported;
  std::lock_guard<std::mutex> l(g_lock);
  auto it = g_pinned.find((uintptr_t)p);
  if (it == g_pinned.end()) return tg_emu_error(cudaErrorInvalidValue, "cudaFreeHost of a pointer cudaMallocHost did not return");
  g_pinned.erase(it);
  free(p);
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes) {
  std::lock_guard<std::mutex> l(g_lock);
  *total_bytes = total_memory();
  *free_bytes = total_memory() - g_device_bytes;
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
  if (tg_emu_capturing_here("cudaMemcpy")) return cudaErrorStreamCaptureUnsupported;
  cudaError_t e = check_copy(dst, src, bytes, kind);
  if (e != cudaSuccess) return e;
  if (bytes) memmove(dst, src, bytes);
  return deliver_fault();
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  if (!stream_ok(s)) return tg_emu_error(cudaErrorInvalidResourceHandle, "cudaMemcpyAsync on a stream that does not exist");
  cudaError_t e = check_copy(dst, src, bytes, kind);
  if (e != cudaSuccess || bytes == 0) return e;
  tg_emu_submit(s, new copy_task(dst, src, bytes));
  return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int value, size_t bytes) {
  if (tg_emu_capturing_here("cudaMemset")) return cudaErrorStreamCaptureUnsupported;
  return cudaMemsetAsync(p, value, bytes, nullptr);
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s) {
  if (!stream_ok(s)) return tg_emu_error(cudaErrorInvalidResourceHandle, "cudaMemsetAsync on a stream that does not exist");
  if (bytes == 0) return cudaSuccess;
  if (tg_emu_mem_of(p) == TG_EMU_NOT_OURS || tg_emu_mem_of((char *)p + bytes - 1) == TG_EMU_NOT_OURS)
    return tg_emu_error(cudaErrorInvalidValue, "cudaMemset of memory that is not device memory");
  tg_emu_submit(s, new set_task(p, value, bytes));
  return cudaSuccess;
}

/* ---- streams and events: work runs when it is issued, so a stream is always idle ---- */

cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
  (void)flags;
  *s = new tg_emu_stream{STREAM_MAGIC, false, false, pthread_t(), nullptr};
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
  if (!s || !stream_ok(s)) return tg_emu_error(cudaErrorInvalidResourceHandle, "cudaStreamDestroy");
  s->magic = 0;
  delete s;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  if (!stream_ok(s)) return tg_emu_error(cudaErrorInvalidResourceHandle, "cudaStreamSynchronize");
  if (tg_emu_capturing_here("cudaStreamSynchronize")) return cudaErrorStreamCaptureUnsupported;
  return deliver_fault();
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags) {
  (void)flags;
  if (!stream_ok(s) || !e) return tg_emu_error(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent");
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags) {
  (void)flags;
  *e = new tg_emu_event{0};
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  if (!e || !stream_ok(s)) return tg_emu_error(cudaErrorInvalidResourceHandle, "cudaEventRecord");
  e->recorded = 1;
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (!e) return tg_emu_error(cudaErrorInvalidResourceHandle, "cudaEventSynchronize");
  if (tg_emu_capturing_here("cudaEventSynchronize")) return cudaErrorStreamCaptureUnsupported;
  return deliver_fault();
}

/* ---- capture and graphs ---- */

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode) {
  (void)mode; /* every mode is treated as thread-local: this thread's synchronising calls are refused */
  if (!s || !stream_ok(s)) return tg_emu_error(cudaErrorStreamCaptureImplicit, "capture of the legacy stream");
  if (s->capturing || t_capturing) return tg_emu_error(cudaErrorStreamCaptureUnsupported, "a capture is already under way on this thread");
  s->capturing = true;
  s->invalidated = false;
  s->capture_thread = pthread_self();
  s->graph = new tg_emu_graph{std::make_shared<std::vector<std::unique_ptr<tg_emu_task>>>()};
  t_capturing = s;
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
  *g = nullptr;
  if (!s || !stream_ok(s) || !s->capturing) return tg_emu_error(cudaErrorStreamCaptureUnmatched, "");
  s->capturing = false;
  if (t_capturing == s) t_capturing = nullptr;
  tg_emu_graph *graph = s->graph;
  s->graph = nullptr;
  if (s->invalidated) {
    delete graph;
    return tg_emu_error(cudaErrorStreamCaptureInvalidated, "a call during capture was refused");
  }
  *g = graph;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags) {
  (void)flags;
  if (!g) return tg_emu_error(cudaErrorInvalidValue, "cudaGraphInstantiate of no graph");
  *exec = new tg_emu_graph_exec{g->tasks};
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  if (!exec || !stream_ok(s)) return tg_emu_error(cudaErrorInvalidResourceHandle, "cudaGraphLaunch");
  if (s && s->capturing) return tg_emu_error(cudaErrorStreamCaptureUnsupported, "graph launch into a capture");
  for (auto &t : *exec->tasks) t->run(); /* the recorded work, in the order it was issued */
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  delete g;
  return cudaSuccess;
}
