/* Every op has a forward kernel and (unless declared non-differentiable) a backward on every compiled backend, and
 * the GEMM ops (only they) have bf16 compute kernels, forward and backward, on each. */
#include <stdio.h>
#include <stdlib.h>
#include "ops/ops.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"

int main(void) {
  int backends = 0;
  for (int k = 0; k < TG_DEVICE_KIND_COUNT; k++) {
    if (!tg_backend_compiled((tg_device_kind)k)) continue;
    backends++;
    for (int op = 0; op < tg_op_count(); op++) {
      CHECK_MSG(tg_op_has_forward(op, (tg_device_kind)k), "op '%s' has no forward kernel on backend %d",
                tg_op_name(op), k);
      CHECK_MSG(tg_op_has_backward(op, (tg_device_kind)k), "op '%s' has no backward kernel on backend %d",
                tg_op_name(op), k);
      int bf16 = !tg_op_is_leaf(op) && tg_op_is_gemm((tg_op)op);
      CHECK_MSG(tg_op_has_kernel(op, (tg_device_kind)k, TG_BF16, 0) == bf16 &&
                    tg_op_has_kernel(op, (tg_device_kind)k, TG_BF16, 1) == bf16,
                "op '%s': bf16 kernels on backend %d %s expected", tg_op_name(op), k, bf16 ? "are" : "are not");
    }
  }
  CHECK(backends >= 1);
  CHECK(tg_backend_compiled(TG_CPU));
  /* CMake says whether it compiled the CUDA backend; the library must then have it. */
  const char *want_cuda = getenv("TG_EXPECT_CUDA");
  if (want_cuda && want_cuda[0] == '1') CHECK_MSG(tg_backend_compiled(TG_CUDA), "CMake built the CUDA backend but the library lacks it");
  printf("%d ops on %d compiled backend(s)\n", tg_op_count(), backends);
  return tg_test_finish();
}
