/* CPU LSTM kernels (stub: not implemented yet) */
#include "backend/cpu/cpu_kernels.h"
tg_status tg_cpu_lstm_fwd(const tg_kernel_args *a) {
  (void)a;
  return tg_error(TG_ERR_INVALID, "lstm: not implemented");
}
tg_status tg_cpu_lstm_bwd(const tg_kernel_args *a) {
  (void)a;
  return tg_error(TG_ERR_INVALID, "lstm: not implemented");
}
