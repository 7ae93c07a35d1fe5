/* CPU optimizer kernels behind the backend table (see backend.h for their contracts). */
#ifndef TG_CPU_OPTIM_H
#define TG_CPU_OPTIM_H

#include "graph/backend.h"

tg_status tg_cpu_sum_squares(tg_device d, const float *g, size_t n, double *out);
/* The steps over p [n]; pb [n] (NULL: none) gets the new p rounded to bf16. */
tg_status tg_cpu_sgd_step(tg_device d, float *p, uint16_t *pb, const float *g, float *m, size_t n, float lr,
                          float momentum, float wd, float gscale);
tg_status tg_cpu_adam_step(tg_device d, float *p, uint16_t *pb, const float *g, float *m, float *v, size_t n,
                           float lr, float beta1, float beta2, float eps, float wd, int decoupled,
                           float bc1, float bc2, float gscale);

/* One whole optimizer update on the host (see tg_optim_update in backend.h). */
tg_status tg_cpu_optim_update(tg_device d, const tg_optim_update *u);

#endif
