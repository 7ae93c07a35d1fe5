/* Vulkan kernels of attention, forward and backward (shaders/attention_stats.comp, attention_out.comp,
 * attention_grad.comp): an invocation per query row (per key for dk and dv), an online softmax whose statistics live
 * in the op's workspace [3, B, H, Tq], the probabilities recomputed in the backward, no atomics. Keys, rows and column
 * chunks are cut into dispatches so that no invocation loops more than LOOP_MAX times in one (lavapipe ends a
 * shader's loops at 65,535 iterations counted together), each dispatch carrying the statistics or adding into the
 * gradients where the one before left them. */
#include <stdint.h>
#include "backend/vulkan/vk_dispatch.h"
#include "backend/vulkan/vk_kernels.h"
#include "backend/vulkan/vk_memory.h"
#include "ops/attention_args.h"

#define LOOP_MAX 32768 /* the most loop iterations an invocation runs in one dispatch, as vk_k_gemm.c */
#define LANES 64       /* the shaders' local_size_x */
#define COLS 16        /* ATTN_W: the columns one unrolled iteration of a shader's column loops covers */

/* attention.glsl's flags and attention_grad.comp's modes. */
enum { CAUSAL = 1, FIRST = 2, LAST = 4, SWAP = 8, BWD = 16, WANT_DK = 32, WANT_DV = 64 };
enum { MODE_DQ, MODE_DKV };

/* Push constants of the attention shaders (attention.glsl). */
typedef struct attn_push {
  uint64_t q, k, v, o, dO, dq, dk, dv; /* q, o, dO, dq [B, Tq, d]; k, v, dk, dv [B, Tk, d] (a gradient 0: not wanted) */
  uint64_t ws;                         /* [3, B, H, Tq]: the rows' statistics (attention.glsl) */
  uint32_t B, Tq, Tk, H, dh;
  int32_t offset;
  uint32_t lo, hi, c0, c1, mode, flags;
  float scale;
} attn_push;

_Static_assert(sizeof(attn_push) <= TG_VK_PUSH_MAX, "attn_push exceeds the push constants");

/* The call's push constants (no range yet), after checking what the shaders' 32-bit indices reach; kend: the keys
 * any row sees, [0, kend) (the rest are never read). */
static tg_status attn_setup(const tg_kernel_args *a, const tg_attn_dims *d, attn_push *p, int64_t *kend) {
  tg_status st = tg_vk_fits(a->node_name, d->B * d->Tq * d->d);
  if (st == TG_OK) st = tg_vk_fits(a->node_name, d->B * d->Tk * d->d);
  if (st == TG_OK) st = tg_vk_fits(a->node_name, tg_attn_dev_ws_floats(d));
  if (st != TG_OK) return st;
  if (d->Tq > INT32_MAX || d->Tk > INT32_MAX) /* the clamped offset is an int */
    return tg_error(TG_ERR_UNSUPPORTED, "%s: attention of %lld queries over %lld keys, more than the Vulkan kernels "
                    "take (%d)", a->node_name, (long long)d->Tq, (long long)d->Tk, INT32_MAX);
  /* an offset past the last key sees every key (not causal); one before -Tq sees none, as -Tq does: both ends
   * clamped so that the shaders' uint arithmetic never overflows */
  int causal = d->causal && d->offset < d->Tk;
  int64_t off = !causal ? 0 : d->offset < -d->Tq ? -d->Tq : d->offset;
  *kend = tg_attn_visible(d->causal, d->offset, d->Tk, d->Tq - 1); /* the last row sees the most */
  *p = (attn_push){.q = tg_vk_addr(a->in[0]->data), .k = tg_vk_addr(a->in[1]->data),
                   .v = tg_vk_addr(a->in[2]->data), .o = tg_vk_addr(a->out->data),
                   .B = (uint32_t)d->B, .Tq = (uint32_t)d->Tq, .Tk = (uint32_t)d->Tk, .H = (uint32_t)d->H,
                   .dh = (uint32_t)d->dh, .offset = (int32_t)off, .flags = causal ? CAUSAL : 0, .scale = d->scale};
  void *ws = NULL;
  st = tg_vk_workspace(a, sizeof(float) * (size_t)tg_attn_dev_ws_floats(d), &ws);
  p->ws = tg_vk_addr(ws);
  return st;
}

/* How a pass over `items` invocations is cut: `span` keys (or rows) and `cols` column chunks of COLS a dispatch. An
 * invocation loops g (1 + cols (1 + span per) + extra) times, g its grid-stride iterations over the items, per the
 * iterations a key costs in each column chunk (its dot products' chunks and the key loop's own), extra those a row
 * costs beside; total: the keys (rows) to cover, nc the column chunks. A dispatch takes at least 64 keys where it
 * can, with fewer column chunks for it; a head too wide for a single key is an error. */
static tg_status attn_cut(const tg_kernel_args *a, const tg_attn_dims *d, int64_t items, int64_t total, int64_t nc,
                          int64_t per, int64_t extra, int64_t *span, int64_t *cols) {
  int64_t lanes = (int64_t)tg_vk_groups((uint64_t)items, LANES) * LANES;
  int64_t g = (items + lanes - 1) / lanes, budget = LOOP_MAX / (g > 0 ? g : 1) - 1 - extra;
  int64_t want = total < 64 ? total : 64;
  *cols = nc;
  if (budget > 0 && (budget / nc - 1) / per < want) { /* fewer column chunks a dispatch, for `want` keys */
    int64_t c = budget / (1 + want * per);
    *cols = c > 1 ? c : 1;
  }
  *span = budget > 0 ? (budget / *cols - 1) / per : 0;
  if (*span < 1)
    return tg_error(TG_ERR_UNSUPPORTED, "%s: attention heads of %lld columns over %lld rows, more than the Vulkan "
                    "kernels loop over", a->node_name, (long long)d->dh, (long long)(d->B * d->H * d->Tq));
  if (*span > total) *span = total;
  return TG_OK;
}

/* The statistics pass over the keys [0, kend) in chunks of span (one dispatch, over no key, when kend is 0); the
 * forward (bwd 0) follows each with the output pass over the chunk, cols column chunks a dispatch. */
static tg_status attn_stats_out(const tg_kernel_args *a, attn_push p, int64_t R, int64_t kend, int64_t span,
                                int64_t nc, int64_t cols, int bwd) {
  int dev = a->out->device.index;
  uint32_t groups = tg_vk_groups((uint64_t)R, LANES), base = p.flags | (bwd ? BWD : 0);
  tg_status st = TG_OK;
  for (int64_t j0 = 0, chunk = 0; st == TG_OK && (j0 == 0 || j0 < kend); j0 += span, chunk++) {
    int64_t hi = kend - j0 < span ? kend : j0 + span;
    p.lo = (uint32_t)j0, p.hi = (uint32_t)hi;
    p.flags = base | (j0 == 0 ? FIRST : 0) | (hi == kend ? LAST : 0) | (chunk % 2 ? SWAP : 0);
    st = tg_vk_dispatch(dev, TG_VK_K_attention_stats, &p, sizeof p, groups);
    for (int64_t c = 0; !bwd && st == TG_OK && c < nc; c += cols) {
      p.c0 = (uint32_t)c, p.c1 = (uint32_t)(nc - c < cols ? nc : c + cols);
      st = tg_vk_dispatch(dev, TG_VK_K_attention_out, &p, sizeof p, groups);
    }
  }
  return st;
}

tg_status tg_vk_attention_fwd(const tg_kernel_args *a) {
  const tg_attn_dims d = tg_attn_dims_of(a);
  attn_push p;
  int64_t kend = 0, span, cols, R = d.B * d.H * d.Tq, nc = (d.dh + COLS - 1) / COLS;
  tg_status st = attn_setup(a, &d, &p, &kend);
  /* the output pass costs more a key than the statistics' (its key loop, nc dot chunks), so its cut serves both */
  if (st == TG_OK) st = attn_cut(a, &d, R, kend > 0 ? kend : 1, nc, nc + 1, 0, &span, &cols);
  return st != TG_OK ? st : attn_stats_out(a, p, R, kend, span, nc, cols, 0);
}

tg_status tg_vk_attention_bwd(const tg_kernel_args *a) {
  float *dq = a->in_grad[0], *dk = a->in_grad[1], *dv = a->in_grad[2]; /* each [B, T, d] like its input, or NULL */
  if (!dq && !dk && !dv) return TG_OK;
  const tg_attn_dims d = tg_attn_dims_of(a);
  attn_push p;
  int64_t kend = 0, span, cols, R = d.B * d.H * d.Tq, nc = (d.dh + COLS - 1) / COLS;
  tg_status st = attn_setup(a, &d, &p, &kend);
  if (st != TG_OK || kend == 0) return st; /* kend 0: no row sees a key, and every gradient stays as it is */
  p.dO = tg_vk_addr(a->out_grad), p.dq = tg_vk_addr(dq), p.dk = tg_vk_addr(dk), p.dv = tg_vk_addr(dv);
  /* pass 1: m, 1 / l and D per row (D's dot product the extra), one column chunk a dispatch */
  if ((st = attn_cut(a, &d, R, kend, 1, nc + 1, nc, &span, &cols)) != TG_OK ||
      (st = attn_stats_out(a, p, R, kend, span, 1, 1, 1)) != TG_OK)
    return st;
  int dev = a->out->device.index;
  if (dq) { /* pass 2: a row's keys, two dot products each */
    p.mode = MODE_DQ;
    st = attn_cut(a, &d, R, kend, nc, 2 * nc + 1, 0, &span, &cols);
    for (int64_t j0 = 0; st == TG_OK && j0 < kend; j0 += span)
      for (int64_t c = 0; st == TG_OK && c < nc; c += cols) {
        p.lo = (uint32_t)j0, p.hi = (uint32_t)(kend - j0 < span ? kend : j0 + span);
        p.c0 = (uint32_t)c, p.c1 = (uint32_t)(nc - c < cols ? nc : c + cols);
        st = tg_vk_dispatch(dev, TG_VK_K_attention_grad, &p, sizeof p, tg_vk_groups((uint64_t)R, LANES));
      }
  }
  if (st == TG_OK && (dk || dv)) { /* pass 3: a key's rows, dk's dot product only where it is wanted */
    int64_t keys = d.B * d.H * d.Tk;
    p.mode = MODE_DKV, p.flags |= (dk ? WANT_DK : 0) | (dv ? WANT_DV : 0);
    st = attn_cut(a, &d, keys, d.Tq, nc, (dk ? 2 * nc : nc) + 1, 0, &span, &cols);
    for (int64_t i0 = 0; st == TG_OK && i0 < d.Tq; i0 += span)
      for (int64_t c = 0; st == TG_OK && c < nc; c += cols) {
        p.lo = (uint32_t)i0, p.hi = (uint32_t)(d.Tq - i0 < span ? d.Tq : i0 + span);
        p.c0 = (uint32_t)c, p.c1 = (uint32_t)(nc - c < cols ? nc : c + cols);
        st = tg_vk_dispatch(dev, TG_VK_K_attention_grad, &p, sizeof p, tg_vk_groups((uint64_t)keys, LANES));
      }
  }
  return st;
}
