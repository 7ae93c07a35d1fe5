/* FLOP counts of the GEMM ops and of the LSTM's internal GEMMs per kernel call, for the graph's profile. */
#include "ops/lstm_args.h"
#include "ops/matmul_dims.h"
#include "ops/op_flops.h"

/* How many of the GEMM op's two operands (input 0 and 1) backward computes a gradient for. */
static int wanted_grads(const tg_kernel_args *a) { return (a->in_grad[0] != NULL) + (a->in_grad[1] != NULL); }

/* The lstm's GEMMs: forward x W_ih^T [B T, 4H] and one h W_hh^T [B, 4H] per step after the first (and at the first
 * when h0 is given); backward one dG_t W_hh [B, H] per step after the first (and at the first for dh0), dx = dG W_ih,
 * dW_ih = dG^T x, dW_hh = sum_t dG_t^T h_{t-1}, each when wanted (tg_cpu_lstm_bwd). */
static double lstm_flops(const tg_kernel_args *a, int backward) {
  tg_lstm_args l = tg_lstm_args_of(a);
  double B = (double)l.B, T = (double)l.T, In = (double)l.In, H = (double)l.H;
  double steps_hh = T - 1 + (l.h0 ? 1 : 0); /* steps with an h_{t-1} product */
  double ih = 2 * B * T * 4 * H * In, hh = 2 * B * 4 * H * H;
  if (!backward) return ih + steps_hh * hh;
  if (!l.dx && !l.dh0 && !l.dc0 && !l.dw_ih && !l.dw_hh && !l.dbias) return 0;
  double f = (T - 1 + (l.dh0 ? 1 : 0)) * hh;
  if (l.dx) f += ih;
  if (l.dw_ih) f += ih;
  if (l.dw_hh) f += steps_hh * hh;
  return f;
}

double tg_op_flops(int op, const tg_kernel_args *a, int backward) {
  /* the dims calls cannot fail here: the kernel that just ran checked the same sizes */
  double per = 0; /* flops of one product */
  if (op == TG_OP_MATMUL) {
    tg_mm_dims d;
    (void)tg_mm_dims_of(a, &d);
    per = 2.0 * (double)d.batch * (double)d.m * (double)d.n * (double)d.k;
  } else if (op == TG_OP_LINEAR) {
    int64_t rows, nin, nout;
    (void)tg_linear_dims(a, &rows, &nin, &nout);
    per = 2.0 * (double)rows * (double)nin * (double)nout;
  } else if (op == TG_OP_STACKED_LINEAR) {
    int64_t rows, groups, nin, nout;
    (void)tg_stacked_dims(a, &rows, &groups, &nin, &nout);
    per = 2.0 * (double)rows * (double)groups * (double)nin * (double)nout;
  } else if (op == TG_OP_LSTM) {
    return lstm_flops(a, backward);
  } else {
    return 0;
  }
  return backward ? per * wanted_grads(a) : per;
}
