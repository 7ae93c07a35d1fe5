/* The backend interface: everything device-specific that the graph and the layers above ask of a device kind. */
#ifndef TG_BACKEND_H
#define TG_BACKEND_H

#include <stddef.h>
#include "tickgrad/optim.h"
#include "tickgrad/tensor.h"
#include "base/alloc.h"
#include "ops/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An optimizer's per-step scalars, kept in the backend's memory (device memory on CUDA). */
typedef struct tg_optim_scalars {
  int64_t step;   /* updates applied so far (the schedule and bias corrections read it) */
  double sumsq;   /* this step's sum of squared gradients */
  float norm;     /* its square root, before clipping */
  float lr;       /* the learning rate this step used */
  float gscale;   /* the clipping factor this step used */
  double bc1, bc2; /* Adam's bias corrections 1 - beta^step this step used */
  int skipped;    /* 1: the norm was not finite, so nothing changed (step not advanced) */
} tg_optim_scalars;

/* A run of parameters sharing one weight decay, [offset, offset + numel) of the flat buffers. */
typedef struct tg_optim_seg {
  size_t offset, numel;
  float wd;
} tg_optim_seg;

/* Everything one update reads. PyTorch's rules (see cpu_optim.c):
 *   norm = sqrt(sum g^2); not finite: skipped = 1 and nothing else changes
 *   gscale = clip_norm > 0 && norm > clip_norm ? clip_norm / norm : 1;  lr = schedule(step)
 *   SGD: d = g*gscale + wd*p; m = momentum*m + d; p -= lr*m (or lr*d without momentum)
 *   Adam/AdamW: t = step + 1, bias corrections 1 - beta^t, see tg_cpu_adam_step
 *   step += 1
 * values_bf16[i] = bf16(values[i]) (nearest even) for every element an applied update writes, in the same pass. */
typedef struct tg_optim_update {
  tg_optim_kind kind;
  float lr, momentum, beta1, beta2, eps, clip_norm;
  tg_lr_schedule schedule;
  float *values;         /* [numel] */
  uint16_t *values_bf16; /* [numel] the store's bf16 mirror of values (NULL: none) */
  const float *grads;    /* [numel] */
  float *m, *v;          /* [numel] state (m: SGD momentum or Adam exp_avg; NULL when unused) */
  size_t numel;
  int n_seg;
  const tg_optim_seg *segs;  /* [n_seg] host array */
  tg_optim_scalars *scalars; /* backend memory */
} tg_optim_update;

/* A kernel pair of one op for one dtype: forward (NULL: none) and backward (NULL: none). */
typedef struct tg_op_kernels {
  tg_kernel_fn fwd, bwd;
} tg_op_kernels;

/* The staging kernel's inputs (base/shuffle.h). */
struct tg_window_tables;
struct tg_batch_bufs;

/* Collectives among the ranks of a data-parallel run, one device per rank, enqueued on the device's compute stream
 * (so a captured step holds them). id_bytes of rank 0's id are sent to every rank over MPI before open. */
typedef struct tg_collectives {
  size_t id_bytes;
  tg_status (*unique_id)(unsigned char *id);
  tg_status (*open)(const unsigned char *id, int nranks, int rank, int dev);
  /* data[n] in dev's memory becomes its mean over the ranks */
  tg_status (*mean)(float *data, size_t n, int dev);
  void (*close)(void);
} tg_collectives;

/* Everything device-specific, one table per backend. The graph, staging, the optimizer and the trainer reach a device
 * only through it; an entry that is NULL is something the backend does not do (the comment says what callers do
 * instead). Devices are numbered 0..device_count()-1 within a backend. */
typedef struct tg_backend {
  const char *name;     /* "cpu", "cuda", "vulkan": the device string's prefix */
  tg_device_kind kind;
  int host_memory;      /* 1: device pointers are host pointers (the CPU) */
  /* non-NULL: the backend is still being built and runs no graphs; the text says what it lacks. Its devices are
   * listed, `use` refuses them with this text, and --device auto passes them by. */
  const char *incomplete;

  /* ---- devices ---- */
  int (*device_count)(void);               /* usable now (0 when there is no driver or device; never fails) */
  const char *(*unavailable_reason)(void); /* why device_count() is 0 ("" otherwise) */
  tg_status (*use)(int dev);               /* starts dev (first use) and makes it current; the error says why not */
  /* 1 when --device auto may take device dev (NULL: any): a device slower than the CPU backend (a Vulkan
   * implementation on the CPU, such as lavapipe) is named explicitly or not at all. */
  int (*auto_ok)(int dev);
  tg_status (*sync)(int dev);              /* waits for dev's queued work and raises any recorded kernel fault */
  tg_status (*info)(int dev, tg_device_info *out);   /* NULL: nothing to tell (TG_ERR_DEVICE) */
  tg_status (*mem_stats)(int dev, tg_mem_stats *out); /* NULL: all zero */
  /* Its devices as `tickgrad devices` lists them, "KIND:N" then "  key  value" lines, into buf (one line saying why
   * when it has none). NULL: the command lists this kind itself (the CPU, CUDA). */
  void (*describe)(char *buf, size_t n);

  /* 1: bf16 GEMMs run natively here and faster than f32; 0: they do not, and why (one clause) says why. NULL: not
   * claimed (precision auto takes fp32 on this backend). */
  int (*bf16_native)(int dev, char *why, size_t why_size);
  /* The narrowest model width whose training precision auto runs in bf16 where bf16_native says 1. NULL:
   * TG_BF16_AUTO_MIN_WIDTH. */
  int (*bf16_auto_min_width)(int dev);

  /* ---- kernels: the op's kernel pair for dtype dt (the dtype its floats are computed in), NULL when none ---- */
  const tg_op_kernels *(*kernels)(int op, tg_dtype dt);
  /* The inputs (bit k: input k) whose gradient the op's backward kernel (any dtype) can start from garbage, adding
   * into +0 instead when told by args.grad_fresh, so that the graph skips zeroing a buffer that kernel writes first
   * (NULL: none; the graph zeroes every gradient buffer before its first writer). */
  unsigned (*bwd_fresh)(int op);

  /* ---- planned kernels (NULL: kernels need nothing prepared) ---- */
  /* Once at plan time, for a node whose args are built (shapes, attributes, compute dtype; data pointers may still be
   * unbound): *state is what its kernels find in args.prepared (NULL: nothing to prepare for this op). It may settle a
   * bf16 GEMM node to f32 (a->compute = TG_F32) where bf16 operands would be slower than f32 on the device; the plan
   * then runs and reports that node in f32. */
  tg_status (*prepare)(int op, tg_kernel_args *a, void **state);
  void (*unprepare)(void *state); /* NULL state: nothing */
  /* The memory a prepared state holds that grows with the node's shapes (bf16 copies of inputs kept for the backward);
   * NULL: none. Counted in the plan's stats and printed plan. */
  size_t (*prepared_bytes)(const void *state);

  /* ---- memory and copies ---- */
  tg_status (*alloc)(tg_device d, size_t bytes, void **out);
  void (*free)(tg_device d, void *p);
  tg_status (*fill_f32)(tg_device d, float *p, size_t n, float value);
  tg_status (*fill_bytes)(tg_device d, void *p, size_t bytes, unsigned char value);
  tg_status (*to_host)(tg_device d, void *host_dst, const void *src, size_t bytes);
  tg_status (*from_host)(tg_device d, void *dst, const void *host_src, size_t bytes);
  tg_status (*copy)(tg_device d, void *dst, const void *src, size_t bytes); /* within the device */
  /* dst [n] = src [n] rounded to bf16, nearest even, as the bf16 GEMM kernels round (within the device) */
  tg_status (*round_bf16)(tg_device d, uint16_t *dst, const float *src, size_t n);
  /* Page-locked host memory for asynchronous copies (NULL: the backend copies synchronously; use tg_malloc). */
  tg_status (*host_alloc)(size_t bytes, void **out);
  void (*host_free)(void *p);

  /* ---- streams and fences (NULL: one in-order stream, copies done when they return) ---- */
  /* host (pinned) -> device on dev's copy stream; the compute stream waits for it before its next work */
  tg_status (*copy_async)(int dev, void *dst, const void *host_src, size_t bytes);
  /* host (pinned) -> device on the compute stream, after the work queued there; returns at once */
  tg_status (*copy_on_compute)(int dev, void *dst, const void *host_src, size_t bytes);
  tg_status (*compute_waits_copy)(int dev); /* compute waits for what is queued on the copy stream */
  tg_status (*copy_waits_compute)(int dev); /* the copy stream waits for what is queued on the compute stream */
  /* A point on the compute stream the host can wait for: new, free (NULL: nothing), mark now, wait for the mark. */
  tg_status (*fence_new)(int dev, void **out);
  void (*fence_free)(void *f);
  tg_status (*fence_record)(void *f);
  tg_status (*fence_wait)(void *f);

  /* ---- capture and replay of a step (NULL: steps run eagerly) ---- */
  tg_status (*capture_begin)(int dev);
  tg_status (*capture_end)(int dev, void **graph); /* *graph NULL on failure, with the error set */
  tg_status (*graph_launch)(void *graph);
  void (*graph_free)(void *graph); /* NULL graph: nothing */

  /* ---- staging: batch elements 0..b-1 of the windows cursor.. of epoch `epoch`'s order, from index tables in the
   * device's memory, in one kernel; copies nothing, never synchronises (NULL: the host builds batches) ---- */
  tg_status (*stage_batch)(int dev, const struct tg_window_tables *t, uint64_t epoch, uint64_t cursor, int64_t b,
                           const struct tg_batch_bufs *o);

  /* ---- the optimizer ---- */
  /* sum of squares of g[0..n) into *out (a double on the host; synchronises) */
  tg_status (*sum_squares)(tg_device d, const float *g, size_t n, double *out);
  /* One optimizer update (see tg_optim_update). Never synchronises: every scalar it needs is
   * computed where the update runs, so a captured step replays it unchanged. */
  tg_status (*optim_update)(tg_device d, const struct tg_optim_update *u);
  /* The run counter for dropout, in backend memory: c[1] = c[0]; c[0] += 1 (so a captured forward
   * advances it on every replay). */
  tg_status (*advance_counter)(tg_device d, uint64_t *c);

  /* ---- collectives among ranks (NULL: none; host-memory backends sum over MPI instead) ---- */
  const tg_collectives *collectives;
} tg_backend;

/* The backend of kind k, NULL when it is not compiled into this build (src/backend/registry.c, whose list the build
 * writes). */
const tg_backend *tg_backend_for(tg_device_kind k);
/* The compiled backends in registry order (the CPU first), NULL past the last. */
const tg_backend *tg_backend_at(int i);

#ifdef __cplusplus
}
#endif
#endif
