/* CPU kernels for gate_add_norm: z = skip + value * sigmoid(gate), layernorm(z) with a per-slot affine, and its backward. */
#include <string.h>
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_par.h"
#include "backend/cpu/cpu_rows.h"
#include "backend/cpu/cpu_simd.h"
#include "backend/cpu/cpu_vmath.h"
#include "ops/gate_norm_args.h"

/* Below this many output elements a kernel runs on the calling thread only. */
#define GAN_PAR_MIN 32768
/* Rows per task of the parallel row loops. */
#define GAN_TASK_ROWS 32
/* Columns per task of the gamma/beta sums at most (also their stack accumulators). */
#define GAN_COL_BLOCK 64
/* A narrower column task has a multiple of this many columns (one cache line of floats). */
#define GAN_COL_ALIGN 16

/* Each step rounds as the unfused chain does (sigmoid, mul, add, layernorm, mul, add), so the
 * forward gives the same bits as that chain on the CPU. */

/* z of row r into zr [D]: skip + value * sigmoid(gate). */
TG_CPU_INLINE void gan_z_row(const tg_gan_args *p, int64_t r, float *restrict zr) {
  int64_t D = p->D;
  const float *restrict val = p->a + r * 2 * D, *restrict gate = val + D, *restrict sk = p->skip + r * D;
  for (int64_t j = 0; j < D; j++) zr[j] = sk[j] + val[j] * tg_vsigmoid(gate[j]);
}

/* The same z row, keeping sigmoid(gate) in sr [D] for the backward. */
TG_CPU_INLINE void gan_zs_row(const tg_gan_args *p, int64_t r, float *restrict zr, float *restrict sr) {
  int64_t D = p->D;
  const float *restrict val = p->a + r * 2 * D, *restrict gate = val + D, *restrict sk = p->skip + r * D;
  for (int64_t j = 0; j < D; j++) {
    float s = tg_vsigmoid(gate[j]);
    sr[j] = s;
    zr[j] = sk[j] + val[j] * s;
  }
}

/* Forward of rows [r0, r1), TG_ROW_BLOCK rows at a time: z into y, then normalised in place. */
TG_CPU_CLONES static void gan_fwd_rows(const tg_gan_args *p, int64_t r0, int64_t r1) {
  int64_t D = p->D;
  for (int64_t rb = r0; rb < r1; rb += TG_ROW_BLOCK) {
    int n = r1 - rb < TG_ROW_BLOCK ? (int)(r1 - rb) : TG_ROW_BLOCK;
    const float *zb[TG_ROW_BLOCK];
    double mean[TG_ROW_BLOCK], rstd[TG_ROW_BLOCK];
    for (int i = 0; i < n; i++) gan_z_row(p, rb + i, p->y + (rb + i) * D);
    tg_row_ptrs(p->y, D, rb, n, zb);
    tg_rows_ln_stats(zb, D, p->eps, mean, rstd);
    for (int i = 0; i < n; i++) {
      int64_t r = rb + i;
      float *restrict yr = p->y + r * D; /* [D] */
      float fm = (float)mean[i], fr = (float)rstd[i];
      if (p->gamma) {
        const float *restrict g = p->gamma + r % p->S * D, *restrict b = p->beta + r % p->S * D; /* [D] */
        for (int64_t j = 0; j < D; j++) yr[j] = (yr[j] - fm) * fr * g[j] + b[j];
      } else {
        for (int64_t j = 0; j < D; j++) yr[j] = (yr[j] - fm) * fr;
      }
    }
  }
}

tg_status tg_cpu_gate_add_norm_fwd(const tg_kernel_args *a) {
  const tg_gan_args p = tg_gan_args_of(a);
  int64_t ntask = (p.rows + GAN_TASK_ROWS - 1) / GAN_TASK_ROWS;
  if (p.D == 0) return TG_OK;
  TG_PAR_FOR(p.rows * p.D > GAN_PAR_MIN, schedule(static),
  for (int64_t t = 0; t < ntask; t++) {
    int64_t r0 = t * GAN_TASK_ROWS, r1 = r0 + GAN_TASK_ROWS < p.rows ? r0 + GAN_TASK_ROWS : p.rows;
    gan_fwd_rows(&p, r0, r1);
  });
  return TG_OK;
}

/* dy * gamma, or dy without an affine (has_g is a constant at every call site). */
TG_CPU_INLINE float gan_gy(const float *restrict gr, const float *restrict g, int has_g, int64_t j) {
  return has_g ? gr[j] * g[j] : gr[j];
}

/* The input gradients of one row from its z row zr [D], sigmoid(gate) row sr [D], stats and the means m1, m2 of
 * tg_rows_ln_bwd_means: dz = layernorm's input gradient, added to dsk, and passed through the gate (value row val) to
 * dval and dgate. gr [D] is the output gradient, g [D] the row's gamma; fsk, fa: dsk, dval/dgate are unzeroed
 * (tg_grad_base). has_g, want_dskip and want_da are constants at every call site, so each instance is a branch-free loop; the operands are restrict
 * parameters (kept through inlining) so that no alias checks are needed. */
TG_CPU_INLINE void gan_bwd_row(const float *restrict gr, const float *restrict g, const float *restrict zr,
                               const float *restrict val, const float *restrict sr, float *restrict dsk,
                               float *restrict dval, float *restrict dgate, int64_t D, float fm, float fr,
                               float m1, float m2, int has_g, int want_dskip, int want_da, int fsk, int fa) {
  for (int64_t j = 0; j < D; j++) {
    float gy = gan_gy(gr, g, has_g, j);
    float xhat = (zr[j] - fm) * fr;
    float dz = fr * (gy - m1 - xhat * m2);
    if (want_dskip) dsk[j] = tg_grad_base(fsk, dsk[j]) + dz;
    if (want_da) {
      float sg = sr[j];
      dval[j] = tg_grad_base(fa, dval[j]) + dz * sg;
      dgate[j] = tg_grad_base(fa, dgate[j]) + dz * val[j] * sg * (1.0f - sg);
    }
  }
}

/* Backward of rows [r0, r1) of the chunk starting at row c0, TG_ROW_BLOCK rows at a time: z and sigmoid(gate), the
 * stats, then the input gradients when any is wanted. sg [TG_ROW_BLOCK, D] holds one block's sigmoid(gate) rows (only
 * that block's gradients read them). Two modes:
 * - acc NULL (the parallel path): z into z [.., D] and the stats into mean/rstd, indexed from c0, for gan_bwd_cols
 *   afterwards;
 * - acc [2, S, D] (the serial path): z holds one block only, and each row's gamma/beta terms are added to its
 *   slot's double sums (gamma's then beta's) right away, in row order: the order gan_bwd_cols adds them in. */
TG_CPU_CLONES static void gan_bwd_rows(const tg_gan_args *p, int64_t c0, int64_t r0, int64_t r1, float *z,
                                       float *sg, double *mean, double *rstd, double *acc) {
  int64_t D = p->D, S = p->S;
  int has_g = p->gamma != NULL, ds = p->dskip != NULL, da = p->da != NULL, fsk = p->fresh_skip, fa = p->fresh_a;
  for (int64_t rb = r0; rb < r1; rb += TG_ROW_BLOCK) {
    int n = r1 - rb < TG_ROW_BLOCK ? (int)(r1 - rb) : TG_ROW_BLOCK;
    int64_t zrow = acc ? 0 : rb - c0; /* the block's first row in z */
    const float *zb[TG_ROW_BLOCK], *gb[TG_ROW_BLOCK], *gam[TG_ROW_BLOCK];
    double mb[TG_ROW_BLOCK], rs[TG_ROW_BLOCK];
    float fm[TG_ROW_BLOCK], fr[TG_ROW_BLOCK], m1[TG_ROW_BLOCK], m2[TG_ROW_BLOCK];
    for (int i = 0; i < n; i++) gan_zs_row(p, rb + i, z + (zrow + i) * D, sg + i * D);
    tg_row_ptrs(z, D, zrow, n, zb);
    tg_rows_ln_stats(zb, D, p->eps, mb, rs);
    if (!acc)
      for (int i = 0; i < n; i++) mean[rb - c0 + i] = mb[i], rstd[rb - c0 + i] = rs[i];
    tg_row_ptrs(p->dy, D, rb, n, gb);
    for (int i = 0; i < TG_ROW_BLOCK; i++) fm[i] = (float)mb[i], fr[i] = (float)rs[i];
    if (ds || da) {
      for (int i = 0; i < TG_ROW_BLOCK; i++) gam[i] = has_g ? p->gamma + (rb + (i < n ? i : n - 1)) % S * D : NULL;
      tg_rows_ln_bwd_means(gb, gam, zb, D, fm, fr, m1, m2);
      for (int i = 0; i < n; i++) {
        int64_t r = rb + i;
        const float *zr = zb[i], *sr = sg + i * D, *gr = gb[i], *g = gam[i]; /* [D] each; g NULL: none */
        const float *val = p->a + r * 2 * D;                                         /* [D] */
        float *dsk = ds ? p->dskip + r * D : NULL, *dval = da ? p->da + r * 2 * D : NULL;
        float *dgate = da ? dval + D : NULL;
        float a = fm[i], f = fr[i], u = m1[i], v = m2[i];
        if (has_g) {
          if (ds && da) gan_bwd_row(gr, g, zr, val, sr, dsk, dval, dgate, D, a, f, u, v, 1, 1, 1, fsk, fa);
          else if (ds) gan_bwd_row(gr, g, zr, val, sr, dsk, dval, dgate, D, a, f, u, v, 1, 1, 0, fsk, fa);
          else gan_bwd_row(gr, g, zr, val, sr, dsk, dval, dgate, D, a, f, u, v, 1, 0, 1, fsk, fa);
        } else {
          if (ds && da) gan_bwd_row(gr, g, zr, val, sr, dsk, dval, dgate, D, a, f, u, v, 0, 1, 1, fsk, fa);
          else if (ds) gan_bwd_row(gr, g, zr, val, sr, dsk, dval, dgate, D, a, f, u, v, 0, 1, 0, fsk, fa);
          else gan_bwd_row(gr, g, zr, val, sr, dsk, dval, dgate, D, a, f, u, v, 0, 0, 1, fsk, fa);
        }
      }
    }
    if (!acc) continue;
    for (int i = 0; i < n; i++) {
      double *restrict sgm = acc + (rb + i) % S * D, *restrict sbt = sgm + S * D; /* [D] each */
      const float *restrict zr = zb[i], *restrict gr = gb[i];                     /* [D] each */
      float a = fm[i], f = fr[i];
      for (int64_t j = 0; j < D; j++) {
        sgm[j] += (double)gr[j] * ((zr[j] - a) * f);
        sbt[j] += gr[j];
      }
    }
  }
}

/* dgamma/dbeta of slot `slot`, columns [j0, j0 + nj), summed in double over the chunk's rows of
 * that slot (rows c0 + k S + slot), then added to the float gradients. */
TG_CPU_CLONES static void gan_bwd_cols(const tg_gan_args *p, int64_t c0, int64_t nr, int64_t slot, int64_t j0,
                                       int64_t nj, const float *z, const double *mean, const double *rstd) {
  int64_t D = p->D, S = p->S;
  double sg[GAN_COL_BLOCK] = {0}, sb[GAN_COL_BLOCK] = {0}; /* [nj] */
  for (int64_t i = slot; i < nr; i += S) {
    const float *zr = z + i * D + j0, *gr = p->dy + (c0 + i) * D + j0; /* [nj] each */
    float fm = (float)mean[i], fr = (float)rstd[i];
    for (int64_t j = 0; j < nj; j++) {
      sg[j] += (double)gr[j] * ((zr[j] - fm) * fr);
      sb[j] += gr[j];
    }
  }
  for (int64_t j = 0; j < nj; j++) {
    if (p->dgamma) p->dgamma[slot * D + j0 + j] += (float)sg[j];
    if (p->dbeta) p->dbeta[slot * D + j0 + j] += (float)sb[j];
  }
}

/* Chunk by chunk (tg_gan_chunk_rows rows, a whole number of affine periods). On more than one thread: z and the stats
 * in the workspace, the input gradients row by row, then the gamma/beta sums column block by column block, so no two
 * threads write one element. On one thread (and when the workspace holds the [2, S, D] double sums and a block's z
 * and sigmoid rows): the sums are added row by row while the row is hot, in the same order, so the bits are the
 * same either way and the chunk's z and sigmoid rows never go to memory. */
tg_status tg_cpu_gate_add_norm_bwd(const tg_kernel_args *a) {
  const tg_gan_args p = tg_gan_args_of(a);
  if (p.D == 0 || p.rows == 0 || (!p.da && !p.dskip && !p.dgamma && !p.dbeta)) return TG_OK;
  int64_t C = tg_gan_chunk_rows(p.rows, p.S), D = p.D, S = p.S;
  size_t need = (size_t)C * (2 * sizeof(float) * (size_t)D + 2 * sizeof(double));
  if (!a->ws || a->ws_bytes < need)
    return tg_error(TG_ERR_INVALID, "gate_add_norm '%s': backward workspace is %zu bytes, needs %zu", a->node_name,
                    a->ws ? a->ws_bytes : 0, need);
  int want_affine = p.dgamma || p.dbeta;
  size_t serial_need = sizeof(double) * (size_t)(2 * S * D) + 2 * sizeof(float) * (size_t)(TG_ROW_BLOCK * D);
  /* column tasks of at most GAN_COL_BLOCK columns; with fewer slots than threads (one slot: a row's affine shared by
   * every row) a slot's columns are split further, so that every thread has a task. Each column still sums its rows
   * in order: the width changes no bits */
  int64_t nthr = tg_par_ok() ? omp_get_max_threads() : 1, split = S >= nthr ? 1 : (nthr + S - 1) / S;
  int64_t cw = ((D + split - 1) / split + GAN_COL_ALIGN - 1) / GAN_COL_ALIGN * GAN_COL_ALIGN;
  cw = cw < GAN_COL_BLOCK ? cw : GAN_COL_BLOCK;
  int64_t njb = (D + cw - 1) / cw, ncol_tasks = S * njb;
  for (int64_t c0 = 0; c0 < p.rows; c0 += C) {
    int64_t nr = p.rows - c0 < C ? p.rows - c0 : C, ntask = (nr + GAN_TASK_ROWS - 1) / GAN_TASK_ROWS;
    int par = nr * D > GAN_PAR_MIN;
    if ((!par || !tg_par_ok()) && want_affine && a->ws_bytes >= serial_need) {
      double *acc = (double *)a->ws;                                 /* [2, S, D] */
      float *z = (float *)(acc + 2 * S * D), *sg = z + TG_ROW_BLOCK * D; /* [TG_ROW_BLOCK, D] each */
      memset(acc, 0, sizeof(double) * (size_t)(2 * S * D));
      gan_bwd_rows(&p, c0, c0, c0 + nr, z, sg, NULL, NULL, acc);
      for (int64_t k = 0; k < S * D; k++) {
        if (p.dgamma) p.dgamma[k] += (float)acc[k];
        if (p.dbeta) p.dbeta[k] += (float)acc[S * D + k];
      }
      continue;
    }
    double *mean = (double *)a->ws, *rstd = mean + C; /* [C] each */
    float *z = (float *)(rstd + C), *sg = z + C * D;  /* [C, D] each; a task uses sg's rows from its first on */
    TG_PAR_FOR(par, schedule(static),
    for (int64_t t = 0; t < ntask; t++) {
      int64_t r0 = c0 + t * GAN_TASK_ROWS, r1 = r0 + GAN_TASK_ROWS < c0 + nr ? r0 + GAN_TASK_ROWS : c0 + nr;
      gan_bwd_rows(&p, c0, r0, r1, z, sg + (r0 - c0) * D, mean, rstd, NULL); /* the task's sg rows: its own */
    });
    if (!want_affine) continue;
    TG_PAR_FOR(par, schedule(static),
    for (int64_t t = 0; t < ncol_tasks; t++) {
      int64_t slot = t / njb, j0 = t % njb * cw;
      gan_bwd_cols(&p, c0, nr, slot, j0, D - j0 < cw ? D - j0 : cw, z, mean, rstd);
    });
  }
  return TG_OK;
}
