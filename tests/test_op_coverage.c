/* Every op has a forward kernel and (unless declared non-differentiable) a backward on every complete compiled backend;
 * the GEMM ops (only they) have bf16 compute kernels, forward and backward, on the CPU and CUDA, and on any other
 * backend either all of them or none (then a bf16 plan is refused there); a backend still being built refuses its
 * devices. */
#include <stdio.h>
#include <stdlib.h>
#include "ops/ops.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"

/* The registry index of kind k's backend, -1 when it is not compiled. */
static int backend_index(tg_device_kind k) {
  for (int b = 0; b < tg_backend_count(); b++)
    if (tg_backend_kind(b) == k) return b;
  return -1;
}

/* A backend still being built (not every op has kernels yet) is listed but must refuse every device: never half a graph. */
static void check_incomplete(tg_device_kind k, const char *why) {
  char spec[32];
  tg_device d;
  snprintf(spec, sizeof spec, "%s:0", tg_device_kind_name(k));
  CHECK_MSG(tg_device_choose(spec, &d, NULL, 0) != TG_OK, "%s is accepted although its backend is incomplete", spec);
  CHECK_OK(tg_device_choose("auto", &d, NULL, 0));
  CHECK(d.kind != k);
  printf("backend %s is incomplete and refuses its devices: %s\n", tg_device_kind_name(k), why);
}

int main(void) {
  int backends = 0;
  for (int k = 0; k < TG_DEVICE_KIND_COUNT; k++) {
    if (!tg_backend_compiled((tg_device_kind)k)) continue;
    const char *why = tg_backend_incomplete(backend_index((tg_device_kind)k));
    if (why) {
      check_incomplete((tg_device_kind)k, why);
      continue;
    }
    backends++;
    int has_bf16 = tg_op_has_kernel(TG_OP_MATMUL, (tg_device_kind)k, TG_BF16, 0);
    CHECK_MSG(has_bf16 || (k != TG_CPU && k != TG_CUDA), "backend %d has no bf16 GEMM kernels", k);
    for (int op = 0; op < tg_op_count(); op++) {
      CHECK_MSG(tg_op_has_forward(op, (tg_device_kind)k), "op '%s' has no forward kernel on backend %d",
                tg_op_name(op), k);
      CHECK_MSG(tg_op_has_backward(op, (tg_device_kind)k), "op '%s' has no backward kernel on backend %d",
                tg_op_name(op), k);
      int bf16 = has_bf16 && !tg_op_is_leaf(op) && tg_op_is_gemm((tg_op)op);
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
  const char *want_vulkan = getenv("TG_EXPECT_VULKAN");
  if (want_vulkan && want_vulkan[0] == '1')
    CHECK_MSG(tg_backend_compiled(TG_VULKAN), "CMake built the Vulkan backend but the library lacks it");
  printf("%d ops on %d complete compiled backend(s)\n", tg_op_count(), backends);
  return tg_test_finish();
}
