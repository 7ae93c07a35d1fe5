/* Every op has a forward kernel and (unless declared non-differentiable) a backward on every compiled backend. */
#include <stdio.h>
#include <stdlib.h>
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
