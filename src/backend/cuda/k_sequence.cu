/* CUDA kernels for causal_softmax and conv1d_causal (stub: not implemented yet) */
#include "backend/cuda/cuda_kernels.h"
tg_status tg_cuda_causal_softmax_fwd(const tg_kernel_args *a) {
  (void)a;
  return tg_error(TG_ERR_INVALID, "causal_softmax: not implemented");
}
tg_status tg_cuda_causal_softmax_bwd(const tg_kernel_args *a) {
  (void)a;
  return tg_error(TG_ERR_INVALID, "causal_softmax: not implemented");
}
tg_status tg_cuda_conv1d_causal_fwd(const tg_kernel_args *a) {
  (void)a;
  return tg_error(TG_ERR_INVALID, "conv1d_causal: not implemented");
}
tg_status tg_cuda_conv1d_causal_bwd(const tg_kernel_args *a) {
  (void)a;
  return tg_error(TG_ERR_INVALID, "conv1d_causal: not implemented");
}
