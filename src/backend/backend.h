/* The per-backend function table: memory, transfers and the fused optimizer kernels. */
#ifndef TG_BACKEND_H
#define TG_BACKEND_H

#include <stddef.h>
#include "tickgrad/tensor.h"

typedef struct tg_backend {
  const char *name;
  tg_status (*alloc)(tg_device d, size_t bytes, void **out);
  void (*free)(tg_device d, void *p);
  tg_status (*fill_f32)(tg_device d, float *p, size_t n, float value);
  tg_status (*fill_bytes)(tg_device d, void *p, size_t bytes, unsigned char value);
  tg_status (*to_host)(tg_device d, void *host_dst, const void *src, size_t bytes);
  tg_status (*from_host)(tg_device d, void *dst, const void *host_src, size_t bytes);
  tg_status (*copy)(tg_device d, void *dst, const void *src, size_t bytes); /* within the device */
  /* sum of squares of g[0..n) into *out (a double on the host) */
  tg_status (*sum_squares)(tg_device d, const float *g, size_t n, double *out);
  /* p[i] -= lr*(g[i]*gscale + wd*p[i]) with momentum buffer m (m may be NULL when momentum == 0) */
  tg_status (*sgd_step)(tg_device d, float *p, const float *g, float *m, size_t n, float lr,
                        float momentum, float wd, float gscale);
  /* Adam (decoupled == 0: wd added to the gradient) or AdamW (decoupled == 1) with bias
   * correction terms bc1 = 1-beta1^t, bc2 = 1-beta2^t. */
  tg_status (*adam_step)(tg_device d, float *p, const float *g, float *m, float *v, size_t n,
                         float lr, float beta1, float beta2, float eps, float wd, int decoupled,
                         float bc1, float bc2, float gscale);
} tg_backend;

/* NULL when the backend is not compiled into this build. */
const tg_backend *tg_backend_for(tg_device_kind k);

/* Counted allocations: every buffer the library allocates goes through these. */
void *tg_malloc(size_t bytes);
void *tg_calloc(size_t n, size_t size);
void tg_free(void *p);
/* Counts an allocation made another way (aligned, device). */
void tg_alloc_note(void);
/* Number of tg_malloc/tg_calloc calls so far (process-wide). */
uint64_t tg_alloc_count(void);

#endif
