/* The copy stream beside each compute stream, and capturing the compute stream into a CUDA graph. */
#include <pthread.h>
#include <stdlib.h>
#include "base/alloc.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_internal.h"

struct tg_cuda_graph {
  int dev;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
};

namespace {

struct copy_state {
  cudaStream_t stream;
  cudaEvent_t copied, computed;
};

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
copy_state g_copy[TG_CUDA_MAX_DEVICES];

tg_status copy_state_of(int dev, copy_state **out) {
  tg_status st = tg_cuda_use(dev);
  if (st != TG_OK) return st;
  pthread_mutex_lock(&g_lock);
  copy_state *c = &g_copy[dev];
  cudaError_t e = cudaSuccess;
  if (!c->stream) {
    e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&c->copied, cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&c->computed, cudaEventDisableTiming);
  }
  pthread_mutex_unlock(&g_lock);
  *out = c;
  return tg_cuda_fail(e, "creating the copy stream", "staging");
}

}  // namespace

extern "C" tg_status tg_cuda_copy_async(int dev, void *dst, const void *host_src, size_t bytes) {
  copy_state *c = NULL;
  tg_status st = copy_state_of(dev, &c);
  if (st != TG_OK || !bytes) return st;
  st = tg_cuda_fail(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, c->stream),
                    "cudaMemcpyAsync on the copy stream", "staging");
  if (st == TG_OK) tg_cuda_count_transfer(dev, 1, bytes);
  return st;
}

extern "C" tg_status tg_cuda_compute_waits_copy(int dev) {
  copy_state *c = NULL;
  tg_status st = copy_state_of(dev, &c);
  if (st != TG_OK) return st;
  cudaError_t e = cudaEventRecord(c->copied, c->stream);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(tg_cuda_stream(dev), c->copied, 0);
  return tg_cuda_fail(e, "ordering compute after the copy stream", "staging");
}

extern "C" tg_status tg_cuda_copy_waits_compute(int dev) {
  copy_state *c = NULL;
  tg_status st = copy_state_of(dev, &c);
  if (st != TG_OK) return st;
  cudaError_t e = cudaEventRecord(c->computed, tg_cuda_stream(dev));
  if (e == cudaSuccess) e = cudaStreamWaitEvent(c->stream, c->computed, 0);
  return tg_cuda_fail(e, "ordering the copy stream after compute", "staging");
}

extern "C" tg_status tg_cuda_capture_begin(int dev) {
  cudaStream_t s = tg_cuda_stream(dev);
  if (!s) return TG_ERR_DEVICE;
  return tg_cuda_fail(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture",
                      "step capture");
}

extern "C" tg_status tg_cuda_capture_end(int dev, tg_cuda_graph **out) {
  *out = NULL;
  cudaStream_t s = tg_cuda_stream(dev);
  if (!s) return TG_ERR_DEVICE;
  cudaGraph_t graph = NULL;
  cudaError_t e = cudaStreamEndCapture(s, &graph);
  if (e != cudaSuccess) return tg_cuda_fail(e, "cudaStreamEndCapture", "step capture");
  cudaGraphExec_t exec = NULL;
  e = cudaGraphInstantiate(&exec, graph, 0);
  if (e != cudaSuccess) {
    cudaGraphDestroy(graph);
    return tg_cuda_fail(e, "cudaGraphInstantiate", "step capture");
  }
  tg_cuda_graph *g = (tg_cuda_graph *)tg_malloc(sizeof *g);
  if (!g) {
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return tg_error(TG_ERR_NOMEM, "step capture: out of host memory");
  }
  g->dev = dev;
  g->graph = graph;
  g->exec = exec;
  *out = g;
  return TG_OK;
}

extern "C" tg_status tg_cuda_graph_launch(tg_cuda_graph *g) {
  cudaStream_t s = tg_cuda_stream(g->dev);
  if (!s) return TG_ERR_DEVICE;
  return tg_cuda_fail(cudaGraphLaunch(g->exec, s), "cudaGraphLaunch", "captured step");
}

extern "C" void tg_cuda_graph_free(tg_cuda_graph *g) {
  if (!g) return;
  cudaGraphExecDestroy(g->exec);
  cudaGraphDestroy(g->graph);
  tg_free(g);
}
