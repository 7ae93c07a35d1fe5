/* The Vulkan kernels of the reductions over rows against the CPU's, forward and backward: sum and mean over
 * everything (3M elements: thousands a lane), sum_last and mean_last over short and long rows and over more rows than
 * one dispatch's workgroups, softmax and log_softmax (rows of 3 to 5000, values far apart), causal_softmax at offsets
 * that hide every key of some rows or none, mse, huber (past delta on both sides) and pinball (3 and 16 quantiles)
 * with one or both gradients wanted. */
#include <stdio.h>
#include <string.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"
#include "vulkan/vk_test.h"

static void check_sum(const char *label, int op, int ndim, const int64_t *shape, int out_ndim, const int64_t *out) {
  vk_pair x;
  vk_pair_new(&x, "x", ndim, shape);
  vk_pair_fill(&x, 31, -2.0f, 2.0f);
  vk_check_op(label, op, &x, 1, out_ndim, out, (int[]){1}, NULL);
  vk_pair_free(&x);
}

static void check_softmax(const char *label, int op, int64_t rows, int64_t d, float spread) {
  vk_pair x;
  vk_pair_new(&x, "x", 2, (int64_t[]){rows, d});
  vk_pair_fill(&x, 51, -spread, spread);
  vk_check_op(label, op, &x, 1, 2, x.shape, (int[]){1}, NULL);
  vk_pair_free(&x);
}

/* causal_softmax of x [2, 3, tq, tk] with the last visible key of query q at q + offset. */
static void check_causal(const char *label, int64_t tq, int64_t tk, int64_t offset) {
  vk_pair x;
  vk_pair_new(&x, "x", 4, (int64_t[]){2, 3, tq, tk});
  vk_pair_fill(&x, 55, -4.0f, 4.0f);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = offset;
  vk_check_op(label, TG_OP_CAUSAL_SOFTMAX, &x, 1, 4, x.shape, (int[]){1}, &attr);
  vk_pair_free(&x);
}

static void check_loss(const char *label, int op, int64_t n, float delta, int gp, int gt) {
  vk_pair in[2];
  vk_pair_new(&in[0], "pred", 1, (int64_t[]){n});
  vk_pair_new(&in[1], "target", 1, (int64_t[]){n});
  vk_pair_fill(&in[0], 41, -3.0f, 3.0f);
  vk_pair_fill(&in[1], 42, -3.0f, 3.0f);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.f[0] = delta;
  vk_check_op(label, op, in, 2, 0, NULL, (int[]){gp, gt}, &attr);
  vk_pair_free(&in[0]);
  vk_pair_free(&in[1]);
}

/* pinball of predictions [m, nq] against targets [m] at nq quantiles spread over (0, 1). */
static void check_pinball(const char *label, int64_t m, int nq, int gp, int gt) {
  vk_pair in[2];
  vk_pair_new(&in[0], "pred", 2, (int64_t[]){m, nq});
  vk_pair_new(&in[1], "target", 1, (int64_t[]){m});
  vk_pair_fill(&in[0], 43, -2.0f, 2.0f);
  vk_pair_fill(&in[1], 44, -2.0f, 2.0f);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = nq;
  for (int k = 0; k < nq; k++) attr.f[k] = (float)(k + 1) / (float)(nq + 1);
  vk_check_op(label, TG_OP_PINBALL_LOSS, in, 2, 0, NULL, (int[]){gp, gt}, &attr);
  vk_pair_free(&in[0]);
  vk_pair_free(&in[1]);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  check_sum("sum", TG_OP_SUM, 2, (int64_t[]){7, 300}, 0, NULL);
  check_sum("mean", TG_OP_MEAN, 1, (int64_t[]){3000000}, 0, NULL); /* 11,719 elements a lane */
  check_sum("sum_last", TG_OP_SUM_LAST, 3, (int64_t[]){4, 5, 3}, 2, (int64_t[]){4, 5});
  check_sum("mean_last", TG_OP_MEAN_LAST, 2, (int64_t[]){70000, 3}, 1, (int64_t[]){70000}); /* rows past 65535 groups */
  check_sum("mean_last long rows", TG_OP_MEAN_LAST, 2, (int64_t[]){3, 5000}, 1, (int64_t[]){3});
  check_softmax("softmax", TG_OP_SOFTMAX, 70000, 3, 4.0f);
  check_softmax("softmax long rows", TG_OP_SOFTMAX, 5, 5000, 30.0f);
  check_softmax("log_softmax", TG_OP_LOG_SOFTMAX, 300, 17, 4.0f);
  check_softmax("log_softmax long rows", TG_OP_LOG_SOFTMAX, 5, 5000, 30.0f);
  check_causal("causal_softmax", 5, 7, 0);
  check_causal("causal_softmax, offset 2", 5, 7, 2);
  check_causal("causal_softmax, offset -3 (rows that see nothing)", 5, 7, -3);
  check_causal("causal_softmax, offset past every key", 5, 7, 1000000000000LL);
  check_causal("causal_softmax, offset before every key", 5, 7, -1000000000000LL);
  check_causal("causal_softmax, long rows", 300, 600, 0);
  check_loss("mse", TG_OP_MSE_LOSS, 1000, 0, 1, 1);
  check_loss("mse, target gradient only", TG_OP_MSE_LOSS, 1000, 0, 0, 1);
  check_loss("huber", TG_OP_HUBER_LOSS, 5000, 1.0f, 1, 1);
  check_loss("huber, prediction gradient only", TG_OP_HUBER_LOSS, 5000, 0.5f, 1, 0);
  check_pinball("pinball", 700, 3, 1, 1);
  check_pinball("pinball, 16 quantiles, prediction gradient only", 70000, 16, 1, 0);
  check_pinball("pinball, target gradient only", 50, 5, 0, 1);
  vk_report("reductions over rows", "");
  return tg_test_finish();
}
