/* Builder for ssd_scan (the Mamba-2 SSD scan) and the size of its kernel workspace. */
#include <string.h>
#include "graph/graph_internal.h"
#include "ops/ssd_ref.h"

#define SHAPE_BUF 96
#define OP "ssd_scan"

/* t must be f32 with exactly the dims want[0..nd); what says which operand and the expected form. */
static int ssd_check(tg_graph *g, const char *role, const tg_tensor *t, int nd, const int64_t *want,
                     const char *form, const tg_tensor *x) {
  char st[SHAPE_BUF], sx[SHAPE_BUF], sw[SHAPE_BUF] = "[";
  int ok = t->dtype == TG_F32 && t->ndim == nd;
  for (int i = 0; ok && i < nd; i++) ok = t->shape[i] == want[i];
  if (ok) return 1;
  for (int i = 0; i < nd; i++) {
    size_t len = strlen(sw);
    snprintf(sw + len, sizeof sw - len, "%s%lld", i ? ", " : "", (long long)want[i]);
  }
  size_t len = strlen(sw);
  snprintf(sw + len, sizeof sw - len, "]");
  tg_graph_fail(g, TG_ERR_SHAPE, "%s: %s '%s' is %s %s but x '%s' is %s; %s must be f32 %s (%s)", OP, role,
                t->name, tg_dtype_name(t->dtype), tg_shape_str(t, st, sizeof st), x->name,
                tg_shape_str(x, sx, sizeof sx), role, sw, form);
  return 0;
}

/* x must be f32 [B, L, H, P] with every dim >= 1. */
static int ssd_check_x(tg_graph *g, const tg_tensor *x) {
  char sx[SHAPE_BUF];
  int ok = x->dtype == TG_F32 && x->ndim == 4;
  for (int i = 0; ok && i < 4; i++) ok = x->shape[i] >= 1;
  if (!ok)
    tg_graph_fail(g, TG_ERR_SHAPE, "%s: x '%s' is %s %s; x must be f32 [B, L, H, P] with every dim >= 1",
                  OP, x->name, tg_dtype_name(x->dtype), tg_shape_str(x, sx, sizeof sx));
  return ok;
}

/* Bm must be f32 [B, L, G, N] with G dividing H and N >= 1. */
static int ssd_check_bm(tg_graph *g, const tg_tensor *bm, const tg_tensor *x) {
  char sb[SHAPE_BUF], sx[SHAPE_BUF];
  int ok = bm->dtype == TG_F32 && bm->ndim == 4 && bm->shape[0] == x->shape[0] && bm->shape[1] == x->shape[1] &&
           bm->shape[2] >= 1 && bm->shape[3] >= 1;
  if (!ok) {
    tg_graph_fail(g, TG_ERR_SHAPE, "%s: Bm '%s' is %s %s but x '%s' is %s; Bm must be f32 [%lld, %lld, G, N] "
                  "([B, L] of x, G groups, N >= 1 state size)", OP, bm->name, tg_dtype_name(bm->dtype),
                  tg_shape_str(bm, sb, sizeof sb), x->name, tg_shape_str(x, sx, sizeof sx),
                  (long long)x->shape[0], (long long)x->shape[1]);
    return 0;
  }
  if (x->shape[2] % bm->shape[2] != 0) {
    tg_graph_fail(g, TG_ERR_SHAPE, "%s: x '%s' %s has H = %lld heads but Bm '%s' %s has G = %lld groups; "
                  "H must be a multiple of G (head h uses group h / (H/G))", OP, x->name,
                  tg_shape_str(x, sx, sizeof sx), (long long)x->shape[2], bm->name,
                  tg_shape_str(bm, sb, sizeof sb), (long long)bm->shape[2]);
    return 0;
  }
  return 1;
}

tg_tensor *tg_ssd_scan(tg_graph *g, tg_tensor *x, tg_tensor *dt, tg_tensor *A, tg_tensor *Bm, tg_tensor *Cm,
                       tg_tensor *D, int chunk) {
  tg_tensor *ins[6] = {x, dt, A, Bm, Cm, D};
  int n = D ? 6 : 5;
  if (!tg_graph_check_inputs(g, OP, n, ins)) return NULL;
  if (!ssd_check_x(g, x)) return NULL;
  const int64_t *xs = x->shape, hdim[1] = {xs[2]};
  if (!ssd_check(g, "dt", dt, 3, xs, "[B, L, H] of x", x)) return NULL;
  if (!ssd_check(g, "A", A, 1, hdim, "[H] of x", x)) return NULL;
  if (!ssd_check_bm(g, Bm, x)) return NULL;
  if (!ssd_check(g, "Cm", Cm, 4, Bm->shape, "the shape of Bm", x)) return NULL;
  if (D && !ssd_check(g, "D", D, 1, hdim, "[H] of x", x)) return NULL;
  if (chunk < 1) {
    tg_graph_fail(g, TG_ERR_INVALID, "%s: chunk length %d must be >= 1 (x '%s' has L = %lld steps; any "
                  "chunk works, the last one may be shorter)", OP, chunk, x->name, (long long)xs[1]);
    return NULL;
  }
  tg_attr attr = {0};
  attr.i[0] = chunk;
  attr.i[1] = D != NULL;
  return tg_graph_add(g, TG_OP_SSD_SCAN, n, ins, TG_F32, 4, xs, &attr);
}

/* The forward's layout, and the backward's too when the plan keeps a gradient for the output: the
 * CPU kernels' own layout on the CPU, ssd_ref.h's (which the CUDA kernels use) elsewhere. */
size_t tg_ssd_workspace(const tg_kernel_args *a) {
  const tg_ssd_dims d = tg_ssd_dims_of(a);
  if (a->out->device.kind == TG_CPU) return tg_ssd_cpu_layout_of(&d, a->out_grad != NULL).total * sizeof(float);
  size_t f = tg_ssd_fwd_layout_of(&d).total, b = a->out_grad ? tg_ssd_bwd_layout_of(&d).total : 0;
  return (f > b ? f : b) * sizeof(float);
}
