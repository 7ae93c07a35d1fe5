/* Which backends this build has: the CPU always, CUDA when nvcc was found at build time. */
#include "graph/backend.h"
#include "tickgrad/graph.h"

extern const tg_backend tg_cpu_backend;
#if TG_HAVE_CUDA
extern const tg_backend tg_cuda_backend;
#endif

const tg_backend *tg_backend_for(tg_device_kind k) {
  if (k == TG_CPU) return &tg_cpu_backend;
#if TG_HAVE_CUDA
  if (k == TG_CUDA) return &tg_cuda_backend;
#endif
  return NULL;
}

int tg_backend_compiled(tg_device_kind k) { return tg_backend_for(k) != NULL; }
