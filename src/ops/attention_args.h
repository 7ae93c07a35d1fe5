/* The attention op's dimensions, visibility rule and workspace layouts, shared by its builder and its kernels. */
#ifndef TG_ATTENTION_ARGS_H
#define TG_ATTENTION_ARGS_H

#include <stdint.h>
#include "ops/ops.h"

#ifdef __CUDACC__
#define TG_ATTN_FN static __host__ __device__ inline
#else
#define TG_ATTN_FN static inline
#endif

/* One attention call: q [B, Tq, H*dh], k and v [B, Tk, H*dh], out [B, Tq, H*dh]; head h is columns [h dh, (h+1) dh)
 * of every row. Per batch and head, out_i = sum_j p_ij v_j with p_i = softmax_j(scale q_i . k_j) over the keys visible
 * to query row i (all Tk, or when causal the j <= i + offset); a row that sees no key is 0. */
typedef struct tg_attn_dims {
  int64_t B, Tq, Tk, H, dh, d; /* d = H dh, the row length of q, k, v and out */
  int causal;
  int64_t offset;
  float scale;
} tg_attn_dims;

static inline tg_attn_dims tg_attn_dims_of(const tg_kernel_args *a) {
  tg_attn_dims d;
  d.B = a->in[0]->shape[0];
  d.Tq = a->in[0]->shape[1];
  d.d = a->in[0]->shape[2];
  d.Tk = a->in[1]->shape[1];
  d.H = a->attr->i[0];
  d.dh = d.d / d.H;
  d.causal = a->attr->i[1] != 0;
  d.offset = a->attr->i[2];
  d.scale = a->attr->f[0];
  return d;
}

/* Keys visible to query row i: Tk, or when causal the j <= i + offset, clamped to [0, Tk] without overflow for any
 * offset. */
TG_ATTN_FN int64_t tg_attn_visible(int causal, int64_t offset, int64_t Tk, int64_t i) {
  if (!causal || offset >= Tk) return Tk; /* i >= 0, so i + offset + 1 > Tk */
  if (offset <= -(i + 1)) return 0;       /* i + offset + 1 <= 0 */
  int64_t n = i + offset + 1;             /* offset in (-(i+1), Tk): no overflow */
  return n < Tk ? n : Tk;
}

/* The CPU kernels' workspace: TG_ATTN_CPU_SLOTS slots at most (one per thread), each one head's keys and values
 * transposed, kT and vT [dh, round16(Tk)], then a tile of TG_ATTN_CPU_TILE query rows' scores or probabilities and one
 * of their gradients, each [TG_ATTN_CPU_TILE, round16(Tk)], then the backward's key and value gradients transposed,
 * dkT and dvT [dh, round16(Tk)]. */
#define TG_ATTN_CPU_SLOTS 64
#define TG_ATTN_CPU_TILE 16
static inline int64_t tg_attn_round16(int64_t n) { return (n + 15) / 16 * 16; }
static inline int64_t tg_attn_cpu_slot_floats(const tg_attn_dims *d) {
  return (4 * d->dh + 2 * TG_ATTN_CPU_TILE) * tg_attn_round16(d->Tk);
}
static inline int64_t tg_attn_cpu_slots(const tg_attn_dims *d) {
  return d->B * d->H < TG_ATTN_CPU_SLOTS ? d->B * d->H : TG_ATTN_CPU_SLOTS;
}

/* The other backends' workspace: three floats per query row and head, [3, B, H, Tq] (the kernels' row statistics). */
static inline int64_t tg_attn_dev_ws_floats(const tg_attn_dims *d) { return 3 * d->B * d->H * d->Tq; }

#endif
