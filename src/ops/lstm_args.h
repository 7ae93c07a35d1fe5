/* The lstm op's operands, workspace layout and per-element cell math, shared by the CPU and CUDA kernels. */
#ifndef TG_LSTM_ARGS_H
#define TG_LSTM_ARGS_H

#include <math.h>
#include <stddef.h>
#include "ops/ops.h"

/* The cell math below is compiled for the host (C) and for the device (nvcc). On the device a
 * product that feeds an addition goes through __fmul_rn, which nvcc never fuses into an FMA, so it
 * rounds as ISO C does on the CPU (no contraction there). */
#ifdef __CUDACC__
#define TG_LSTM_FN static __device__ inline
#define TG_LSTM_MUL(a, b) __fmul_rn((a), (b))
#else
#define TG_LSTM_FN static inline
#define TG_LSTM_MUL(a, b) ((a) * (b))
#endif

/* One lstm call. Inputs in node order: x, [h0, c0,] w_ih, w_hh, [bias]; attr i[0] = has h0/c0,
 * i[1] = has bias. Gates in PyTorch's order i, f, g, o. */
typedef struct tg_lstm_args {
  /* batch, steps, input size I (named In: cblas.h may include <complex.h>, which defines I), hidden size */
  int64_t B, T, In, H;
  const float *x;       /* [B, T, I] */
  const float *h0, *c0; /* [B, H] each, or both NULL (zero initial state) */
  const float *w_ih;    /* [4H, I] */
  const float *w_hh;    /* [4H, H] */
  const float *bias;    /* [4H] or NULL */
  float *out;           /* [B, T, 6H]: per step h | c | i | f | g | o (gates activated) */
  const float *dout;    /* [B, T, 6H]: the backward's output gradient */
  float *dx, *dh0, *dc0, *dw_ih, *dw_hh, *dbias; /* like their inputs; NULL: not wanted */
} tg_lstm_args;

static inline tg_lstm_args tg_lstm_args_of(const tg_kernel_args *a) {
  tg_lstm_args l;
  int has_state = a->attr->i[0] != 0, has_bias = a->attr->i[1] != 0;
  int k_ih = has_state ? 3 : 1, k_hh = k_ih + 1, k_b = k_hh + 1;
  const tg_tensor *x = a->in[0], *w_hh = a->in[k_hh];
  l.B = x->shape[0];
  l.T = x->shape[1];
  l.In = x->shape[2];
  l.H = w_hh->shape[1];
  l.x = (const float *)x->data;
  l.h0 = has_state ? (const float *)a->in[1]->data : NULL;
  l.c0 = has_state ? (const float *)a->in[2]->data : NULL;
  l.w_ih = (const float *)a->in[k_ih]->data;
  l.w_hh = (const float *)w_hh->data;
  l.bias = has_bias ? (const float *)a->in[k_b]->data : NULL;
  l.out = (float *)a->out->data;
  l.dout = a->out_grad;
  l.dx = a->in_grad[0];
  l.dh0 = has_state ? a->in_grad[1] : NULL;
  l.dc0 = has_state ? a->in_grad[2] : NULL;
  l.dw_ih = a->in_grad[k_ih];
  l.dw_hh = a->in_grad[k_hh];
  l.dbias = has_bias ? a->in_grad[k_b] : NULL;
  return l;
}

/* Backward workspace, in floats: dG [B, T, 4H] (gradients of the gate pre-activations), then the
 * carried dh [B, H] (dG_{t+1} W_hh) and dc [B, H]. The forward needs none. */
static inline int64_t tg_lstm_ws_floats(int64_t B, int64_t T, int64_t H) {
  return B * T * 4 * H + 2 * B * H;
}

/* Numerically safe logistic function (the elementwise sigmoid's formula). */
TG_LSTM_FN float tg_lstm_sigmoid(float x) {
  float e = expf(-fabsf(x));
  float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

/* Forward of element j of one step's row [6H] (h | c | i | f | g | o): on entry the gate slots hold
 * the pre-activations without bias; activates them, then c = f*cprev + i*g and h = o*tanh(c). */
TG_LSTM_FN void tg_lstm_cell_fwd(float *row, const float *bias, float cprev, int64_t H, int64_t j) {
  float *gi = row + 2 * H + j, *gf = gi + H, *gg = gf + H, *go = gg + H;
  float pi = *gi, pf = *gf, pg = *gg, po = *go;
  if (bias) {
    pi += bias[j];
    pf += bias[H + j];
    pg += bias[2 * H + j];
    po += bias[3 * H + j];
  }
  float i = tg_lstm_sigmoid(pi), f = tg_lstm_sigmoid(pf), g = tanhf(pg), o = tg_lstm_sigmoid(po);
  float c = TG_LSTM_MUL(f, cprev) + TG_LSTM_MUL(i, g);
  *gi = i;
  *gf = f;
  *gg = g;
  *go = o;
  row[H + j] = c;
  row[j] = o * tanhf(c);
}

/* Backward of element j of one step. row [6H] is the step's output, grow [6H] its gradient,
 * cprev the previous cell state, dh_rec the gradient reaching h_t through step t+1 and dc_in the
 * one reaching c_t (both 0 at the last step). Writes the pre-activation gradients into dg [4H]
 * (i | f | g | o) and returns the gradient reaching c_{t-1}. */
TG_LSTM_FN float tg_lstm_cell_bwd(const float *row, const float *grow, float cprev, float dh_rec,
                                  float dc_in, float *dg, int64_t H, int64_t j) {
  float c = row[H + j];
  float i = row[2 * H + j], f = row[3 * H + j], g = row[4 * H + j], o = row[5 * H + j];
  float tc = tanhf(c);
  float dh = grow[j] + dh_rec;
  float d_o = grow[5 * H + j] + TG_LSTM_MUL(dh, tc);
  float dc = (dc_in + grow[H + j]) + TG_LSTM_MUL(dh * o, 1.0f - TG_LSTM_MUL(tc, tc));
  float d_i = grow[2 * H + j] + TG_LSTM_MUL(dc, g);
  float d_f = grow[3 * H + j] + TG_LSTM_MUL(dc, cprev);
  float d_g = grow[4 * H + j] + TG_LSTM_MUL(dc, i);
  dg[j] = d_i * i * (1.0f - i);
  dg[H + j] = d_f * f * (1.0f - f);
  dg[2 * H + j] = d_g * (1.0f - TG_LSTM_MUL(g, g));
  dg[3 * H + j] = d_o * o * (1.0f - o);
  return dc * f;
}

#endif
