/* The Vulkan backend's op kernels, one pair for every op of ops/op_kernel_list.h (tg_vk_<stem>_fwd/_bwd), each
 * dispatching on the device of the tensors it is given. */
#ifndef TG_VK_KERNELS_H
#define TG_VK_KERNELS_H

#include "graph/backend.h"
#include "ops/op_kernel_list.h"

#define TG_VK_KERNEL_DECL(op, s)                                                                                       \
  tg_status tg_vk_##s##_fwd(const tg_kernel_args *a);                                                                  \
  tg_status tg_vk_##s##_bwd(const tg_kernel_args *a);
#define TG_VK_KERNEL_DECL_F(op, s) tg_status tg_vk_##s##_fwd(const tg_kernel_args *a);
TG_OP_KERNEL_LIST(TG_VK_KERNEL_DECL, TG_VK_KERNEL_DECL_F)
#undef TG_VK_KERNEL_DECL
#undef TG_VK_KERNEL_DECL_F

/* out [1] = the mean of x [n] on vulkan:dev (NaN when n is 0), summed as the mean op sums; node names errors. */
tg_status tg_vk_mean_of(int dev, const char *node, const float *x, int64_t n, float *out);

/* The op's kernel pair on Vulkan, NULL for an op without kernels (param, input). */
const tg_op_kernels *tg_vk_op_kernels(int op);

#endif
