/* Checks Vulkan op kernels against the CPU's on the same inputs (tests/vulkan): tensors held on the host and on
 * vulkan:0 side by side, filled from a fixed sequence; forward compared, then backward into gradients that start
 * non-zero on both sides, as the graph's do. */
#ifndef TG_VK_OP_CHECK_H
#define TG_VK_OP_CHECK_H

#include <stdint.h>
#include "ops/ops.h"

#define VK_FWD_TOL 1e-5
#define VK_BWD_TOL 1e-4

/* One tensor on the host and its copy on vulkan:0: f32 (vk_pair_new), or of an index dtype (vk_pair_new_index: host
 * then holds that dtype's elements). */
typedef struct vk_pair {
  int64_t n, shape[4];
  int ndim;
  float *host, *dev;
  tg_tensor th, td;
} vk_pair;

void vk_pair_new(vk_pair *p, const char *name, int ndim, const int64_t *shape);
/* An index tensor of dtype (TG_I32 or TG_I64) holding values [n], n the product of shape. */
void vk_pair_new_index(vk_pair *p, const char *name, tg_dtype dtype, int ndim, const int64_t *shape,
                       const int64_t *values);
void vk_pair_free(vk_pair *p);
/* Copies the host values to the device (after changing them on the host). */
void vk_pair_upload(vk_pair *p);
/* Host values uniform in [lo, hi) from seed, copied to the device. */
void vk_pair_fill(vk_pair *p, uint64_t seed, float lo, float hi);

/* Runs op forward and backward on the CPU and on vulkan:0 with inputs in[0..n_in) and an output of out_shape, and
 * compares: the forward within VK_FWD_TOL (|got - want| <= tol (1 + |want|)), the backward's increments within
 * VK_BWD_TOL of the largest of the CPU's; want_grad[k] 0: input k's gradient not wanted (then it must stay bitwise as it
 * was). name labels the failures. */
void vk_check_op(const char *name, int op, vk_pair *in, int n_in, int out_ndim, const int64_t *out_shape,
                 const int *want_grad, const tg_attr *attr);

/* Runs op's forward on the CPU and on vulkan:0 with an output of dtype and out_shape, and requires the same bits (ops
 * that pick rather than compute: argmax_last, window_rows, sample_rows). */
void vk_check_fwd_exact(const char *name, int op, vk_pair *in, int n_in, tg_dtype dtype, int out_ndim,
                        const int64_t *out_shape, const tg_attr *attr);

/* Runs op's forward on vulkan:0 into an output of dtype and out_shape and returns its status (an error's message is
 * tg_last_error's), for the bad inputs. */
tg_status vk_run_fwd(int op, vk_pair *in, int n_in, tg_dtype dtype, int out_ndim, const int64_t *out_shape,
                     const tg_attr *attr);

/* The random-number arguments (seed, the node's stream, the run counter) every following check gives both sides. */
void vk_set_rng(uint64_t seed, uint64_t stream, uint64_t offset);

/* Sets the backward tolerance of the next checks (VK_BWD_TOL until then); returns the one before. */
double vk_set_bwd_tol(double tol);

/* Prints one line: the worst errors seen at the default tolerances, forward and backward, for `what` (note: more). */
void vk_report(const char *what, const char *note);

#endif
