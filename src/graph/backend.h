/* The backend interface: what the graph and the layers above ask of a device kind (memory, copies, the optimizer update). */
#ifndef TG_BACKEND_H
#define TG_BACKEND_H

#include <stddef.h>
#include "tickgrad/optim.h"
#include "tickgrad/tensor.h"
#include "base/alloc.h"

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
 *   step += 1 */
typedef struct tg_optim_update {
  tg_optim_kind kind;
  float lr, momentum, beta1, beta2, eps, clip_norm;
  tg_lr_schedule schedule;
  float *values;      /* [numel] */
  const float *grads; /* [numel] */
  float *m, *v;       /* [numel] state (m: SGD momentum or Adam exp_avg; NULL when unused) */
  size_t numel;
  int n_seg;
  const tg_optim_seg *segs;  /* [n_seg] host array */
  tg_optim_scalars *scalars; /* backend memory */
} tg_optim_update;

typedef struct tg_backend {
  const char *name;
  tg_status (*alloc)(tg_device d, size_t bytes, void **out);
  void (*free)(tg_device d, void *p);
  tg_status (*fill_f32)(tg_device d, float *p, size_t n, float value);
  tg_status (*fill_bytes)(tg_device d, void *p, size_t bytes, unsigned char value);
  tg_status (*to_host)(tg_device d, void *host_dst, const void *src, size_t bytes);
  tg_status (*from_host)(tg_device d, void *dst, const void *host_src, size_t bytes);
  tg_status (*copy)(tg_device d, void *dst, const void *src, size_t bytes); /* within the device */
  /* sum of squares of g[0..n) into *out (a double on the host; synchronises) */
  tg_status (*sum_squares)(tg_device d, const float *g, size_t n, double *out);
  /* One optimizer update (see tg_optim_update). Never synchronises: every scalar it needs is
   * computed where the update runs, so a captured step replays it unchanged. */
  tg_status (*optim_update)(tg_device d, const struct tg_optim_update *u);
  /* The run counter for dropout, in backend memory: c[1] = c[0]; c[0] += 1 (so a captured forward
   * advances it on every replay). */
  tg_status (*advance_counter)(tg_device d, uint64_t *c);
} tg_backend;

/* NULL when the backend is not compiled into this build. */
const tg_backend *tg_backend_for(tg_device_kind k);


#ifdef __cplusplus
}
#endif
#endif
