/* CPU kernels of the SSD scan: the chunked forward and the exact backward of ssd_ref.h in float. */
#include "backend/cpu/cpu_kernels.h"
#include "ops/ssd_ref.h"

/* Below this much work (pairs x L x N x P) a kernel runs on the calling thread only. */
#define SSD_PAR_MIN 32768

/* The node's operands: x, dt, A, Bm, Cm [B, L, H, P], [B, L, H], [H], [B, L, G, N] x2; D [H] or NULL. */
typedef struct ssd_ops {
  const float *x, *dt, *A, *Bm, *Cm, *D;
} ssd_ops;

static ssd_ops ssd_ops_of(const tg_kernel_args *a) {
  ssd_ops o;
  o.x = (const float *)a->in[0]->data;
  o.dt = (const float *)a->in[1]->data;
  o.A = (const float *)a->in[2]->data;
  o.Bm = (const float *)a->in[3]->data;
  o.Cm = (const float *)a->in[4]->data;
  o.D = a->attr->i[1] ? (const float *)a->in[5]->data : NULL;
  return o;
}

/* TG_OK when the plan gave at least `floats` floats of workspace. */
static tg_status ssd_check_ws(const tg_kernel_args *a, size_t floats, const char *pass) {
  if (a->ws && a->ws_bytes >= floats * sizeof(float)) return TG_OK;
  return tg_error(TG_ERR_INVALID, "ssd_scan '%s' %s: workspace of %zu bytes, needs %zu (plan sizes it "
                  "with tg_ssd_workspace)", a->node_name, pass, a->ws ? a->ws_bytes : 0,
                  floats * sizeof(float));
}

static int64_t ssd_work(const tg_ssd_dims *d) { return d->B * d->H * d->L * d->N * d->P; }

tg_status tg_cpu_ssd_scan_fwd(const tg_kernel_args *a) {
  const tg_ssd_dims d = tg_ssd_dims_of(a);
  const ssd_ops o = ssd_ops_of(a);
  float *y = (float *)a->out->data; /* [B, L, H, P] */
  tg_status st = ssd_check_ws(a, tg_ssd_fwd_layout_of(&d).total, "forward");
  if (st != TG_OK) return st;
  float *ws = (float *)a->ws;
  const int64_t pairs = d.B * d.H;
#pragma omp parallel for schedule(dynamic, 1) if (ssd_work(&d) > SSD_PAR_MIN && pairs > 1)
  for (int64_t pair = 0; pair < pairs; pair++)
    tg_ssd_fwd_pair_f(&d, pair, o.x, o.dt, o.A, o.Bm, o.Cm, o.D, y, ws);
  return TG_OK;
}

tg_status tg_cpu_ssd_scan_bwd(const tg_kernel_args *a) {
  const tg_ssd_dims d = tg_ssd_dims_of(a);
  const ssd_ops o = ssd_ops_of(a);
  const float *dy = a->out_grad; /* [B, L, H, P] */
  float *dx = a->in_grad[0], *ddt = a->in_grad[1], *dA = a->in_grad[2]; /* like x, dt, A */
  float *dB = a->in_grad[3], *dC = a->in_grad[4];                        /* [B, L, G, N] each */
  float *dD = a->attr->i[1] ? a->in_grad[5] : NULL;                      /* [H] */
  if (!dx && !ddt && !dA && !dB && !dC && !dD) return TG_OK;
  const tg_ssd_bwd_layout w = tg_ssd_bwd_layout_of(&d);
  tg_status st = ssd_check_ws(a, w.total, "backward");
  if (st != TG_OK) return st;
  float *ws = (float *)a->ws;
  const int64_t pairs = d.B * d.H, rows = d.B * d.L;
  const int par = ssd_work(&d) > SSD_PAR_MIN;
#pragma omp parallel for schedule(dynamic, 1) if (par && pairs > 1)
  for (int64_t pair = 0; pair < pairs; pair++)
    tg_ssd_bwd_pair_f(&d, pair, o.x, o.dt, o.A, o.Bm, o.Cm, o.D, dy, dx, ddt, dB != NULL, dC != NULL, ws);
  if (dB || dC) {
#pragma omp parallel for if (par)
    for (int64_t bt = 0; bt < rows; bt++) tg_ssd_reduce_row_f(&d, bt, ws, dB, dC);
  }
  for (int64_t h = 0; h < d.H; h++) tg_ssd_reduce_head_f(&d, h, ws, dA, dD);
  return TG_OK;
}
