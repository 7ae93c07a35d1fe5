/* The CPU thread count of the OpenMP loops (OpenBLAS itself runs single-threaded). */
#include <cblas.h>
#include <omp.h>
#include "tickgrad/device.h"

tg_status tg_set_threads(int n) {
  if (n < 1 || n > 4096) return tg_error(TG_ERR_INVALID, "threads: %d is not in [1, 4096]", n);
  omp_set_num_threads(n);
  /* One thread pool: OpenBLAS stays single-threaded and the CPU backend splits large GEMMs across
   * the OpenMP threads (tg_cpu_gemm). Two pools that both spin while waiting fight over the cores. */
  openblas_set_num_threads(1);
  return TG_OK;
}

int tg_threads(void) { return omp_get_max_threads(); }
