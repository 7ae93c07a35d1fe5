/* The CUDA backend's functions behind its table (cuda_backend.cu): devices, synchronisation, memory, capture, copies,
 * fences and the staging kernel. Only the CUDA backend's own sources include this; the rest of the library goes
 * through the backend table. */
#ifndef TG_CUDA_API_H
#define TG_CUDA_API_H

#include <stddef.h>
#include <stdint.h>
#include "tickgrad/device.h"
#include "tickgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Devices the driver reports (0 when there is no driver or device; never fails). */
int tg_cuda_device_count(void);
/* Why the count is 0 ("" otherwise), e.g. "cudaErrorNoDevice: no CUDA-capable device is detected". */
const char *tg_cuda_unavailable_reason(void);
/* Makes dev current on this thread, starting its stream and cuBLAS on first use. */
tg_status tg_cuda_use(int dev);
/* Waits for dev's compute stream and raises any kernel fault recorded since the last sync. */
tg_status tg_cuda_sync(int dev);
tg_status tg_cuda_info(int dev, tg_device_info *out);

/* The caching allocator (cuda_alloc.cu). */
tg_status tg_cuda_alloc(int dev, size_t bytes, void **out);
void tg_cuda_free(int dev, void *p);
tg_status tg_cuda_mem_stats(int dev, tg_mem_stats *out);
/* Adds to dev's transfer counters (every host<->device copy the library makes calls this). */
void tg_cuda_count_transfer(int dev, int to_device, size_t bytes);
/* Pinned (page-locked) host memory, for asynchronous copies. */
tg_status tg_cuda_host_alloc(size_t bytes, void **out);
void tg_cuda_host_free(void *p);

/* Stream capture of dev's compute stream into a replayable graph (cuda_streams.cu). */
typedef struct tg_cuda_graph tg_cuda_graph;
tg_status tg_cuda_capture_begin(int dev);
/* Ends the capture begun on dev and instantiates it (*out NULL on failure, with the error set). */
tg_status tg_cuda_capture_end(int dev, tg_cuda_graph **out);
tg_status tg_cuda_graph_launch(tg_cuda_graph *g);
void tg_cuda_graph_free(tg_cuda_graph *g);

/* The copy stream and events, for staging that overlaps compute (cuda_streams.cu). */
/* Copies host (pinned) to device on dev's copy stream; the compute stream waits for it before its
 * next work. */
tg_status tg_cuda_copy_async(int dev, void *dst, const void *host_src, size_t bytes);
/* Makes the compute stream wait for everything queued so far on the copy stream. */
tg_status tg_cuda_compute_waits_copy(int dev);
/* Makes the copy stream wait for everything queued so far on the compute stream. */
tg_status tg_cuda_copy_waits_compute(int dev);

/* ---- staging: batches computed on the device, and fences for double-buffered copies (cuda_stage.cu) ---- */
struct tg_window_tables; /* base/shuffle.h */
struct tg_batch_bufs;
/* Fills o (buffers in dev's memory) with batch elements 0..b-1, the windows of elements cursor..
 * cursor+b-1 of epoch `epoch`'s order (tg_batch_entry per window over t, whose tables are in dev's
 * memory), in one kernel on dev's compute stream. Copies nothing and does not synchronise. */
tg_status tg_cuda_stage_batch(int dev, const struct tg_window_tables *t, uint64_t epoch, uint64_t cursor, int64_t b,
                              const struct tg_batch_bufs *o);
/* Copies host (pinned) to device on dev's compute stream, after the work queued there; returns at once. */
tg_status tg_cuda_copy_on_compute(int dev, void *dst, const void *host_src, size_t bytes);
/* A point on dev's compute stream the host can wait for (a CUDA event). */
typedef struct tg_cuda_fence tg_cuda_fence;
tg_status tg_cuda_fence_new(int dev, tg_cuda_fence **out);
void tg_cuda_fence_free(tg_cuda_fence *f); /* NULL: nothing */
/* Marks the end of the work queued so far on the compute stream (replacing the previous mark). */
tg_status tg_cuda_fence_record(tg_cuda_fence *f);
/* Blocks the host until the work before the last mark has run (at once when never marked, or f NULL). */
tg_status tg_cuda_fence_wait(tg_cuda_fence *f);

#ifdef __cplusplus
}
#endif
#endif
