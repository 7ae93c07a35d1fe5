/* The Vulkan kernels of lstm against the CPU's, forward and backward: with and without h0/c0 and a bias, one step and
 * forty, batch and hidden sizes off the 16-wide GEMM tiles, more cells than one workgroup, saturated gates, each
 * gradient alone. */
#include <stdio.h>
#include <string.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"
#include "vulkan/vk_test.h"

/* One lstm call's sizes and operands: x [b, t, in], h0 and c0 [b, h] where state, bias [4h] where bias; scale widens x
 * and the weights (scale 4: many gate pre-activations past tanh's and the logistic's bends). */
typedef struct lstm_case {
  int64_t b, t, in, h;
  int state, bias;
  float scale;
} lstm_case;

/* The inputs in node order (x, [h0, c0,] w_ih, w_hh, [bias]); returns their count. */
static int lstm_inputs(const lstm_case *c, vk_pair *in) {
  int n = 0;
  float s = c->scale;
  vk_pair_new(&in[n], "x", 3, (int64_t[]){c->b, c->t, c->in});
  vk_pair_fill(&in[n++], 61, -s, s);
  if (c->state) {
    vk_pair_new(&in[n], "h0", 2, (int64_t[]){c->b, c->h});
    vk_pair_fill(&in[n++], 62, -1.0f, 1.0f);
    vk_pair_new(&in[n], "c0", 2, (int64_t[]){c->b, c->h});
    vk_pair_fill(&in[n++], 63, -2.0f, 2.0f);
  }
  vk_pair_new(&in[n], "w_ih", 2, (int64_t[]){4 * c->h, c->in});
  vk_pair_fill(&in[n++], 64, -0.4f * s, 0.4f * s);
  vk_pair_new(&in[n], "w_hh", 2, (int64_t[]){4 * c->h, c->h});
  vk_pair_fill(&in[n++], 65, -0.4f * s, 0.4f * s);
  if (c->bias) {
    vk_pair_new(&in[n], "bias", 1, (int64_t[]){4 * c->h});
    vk_pair_fill(&in[n++], 66, -0.5f * s, 0.5f * s);
  }
  return n;
}

/* want: the gradients wanted, in input order; NULL: all of them. */
static void check_lstm(const char *label, const lstm_case *c, const int *want) {
  vk_pair in[6];
  int n = lstm_inputs(c, in);
  const int all[6] = {1, 1, 1, 1, 1, 1};
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = c->state;
  attr.i[1] = c->bias;
  vk_check_op(label, TG_OP_LSTM, in, n, 3, (int64_t[]){c->b, c->t, 6 * c->h}, want ? want : all, &attr);
  for (int k = 0; k < n; k++) vk_pair_free(&in[k]);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  check_lstm("lstm", &(lstm_case){3, 5, 7, 10, 1, 1, 1.0f}, NULL);
  check_lstm("lstm without h0/c0", &(lstm_case){3, 5, 7, 10, 0, 1, 1.0f}, NULL);
  check_lstm("lstm without a bias", &(lstm_case){3, 5, 7, 10, 1, 0, 1.0f}, NULL);
  check_lstm("lstm without h0/c0 or a bias", &(lstm_case){3, 5, 7, 10, 0, 0, 1.0f}, NULL);
  check_lstm("lstm, one step", &(lstm_case){2, 1, 4, 5, 1, 1, 1.0f}, NULL);
  check_lstm("lstm, one step without h0/c0", &(lstm_case){2, 1, 4, 5, 0, 1, 1.0f}, NULL);
  check_lstm("lstm, 40 steps", &(lstm_case){5, 40, 6, 19, 1, 1, 1.0f}, NULL);
  check_lstm("lstm, more cells than a workgroup", &(lstm_case){20, 12, 17, 33, 1, 1, 1.0f}, NULL);
  check_lstm("lstm, saturated gates", &(lstm_case){4, 9, 8, 7, 1, 1, 4.0f}, NULL);
  for (int k = 0; k < 6; k++) { /* x, h0, c0, w_ih, w_hh, bias */
    int want[6] = {0};
    char label[64];
    want[k] = 1;
    snprintf(label, sizeof label, "lstm, input %d's gradient alone", k);
    check_lstm(label, &(lstm_case){3, 6, 5, 9, 1, 1, 1.0f}, want);
  }
  vk_report("lstm", "");
  return tg_test_finish();
}
