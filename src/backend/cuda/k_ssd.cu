/* CUDA SSD scan kernels (stub: not implemented yet) */
#include "backend/cuda/cuda_kernels.h"
tg_status tg_cuda_ssd_scan_fwd(const tg_kernel_args *a) {
  (void)a;
  return tg_error(TG_ERR_INVALID, "ssd_scan: not implemented");
}
tg_status tg_cuda_ssd_scan_bwd(const tg_kernel_args *a) {
  (void)a;
  return tg_error(TG_ERR_INVALID, "ssd_scan: not implemented");
}
