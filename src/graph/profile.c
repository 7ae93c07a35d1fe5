/* The graph's opt-in profile: host wall time and FLOPs per op kind, summed over runs and backwards. */
#include <string.h>
#include "base/clock.h"
#include "graph/graph_internal.h"
#include "ops/op_flops.h"

/* Totals of one op kind, [0] forward and [1] backward. */
typedef struct prof_op {
  int64_t calls[2];
  double s[2], flops[2];
} prof_op;

struct tg_graph_prof {
  prof_op op[TG_OP_COUNT];
};

tg_status tg_graph_profile_enable(tg_graph *g, int on) {
  if (!g) return tg_error(TG_ERR_INVALID, "profile_enable: NULL graph");
  if (!on) {
    tg_free(g->prof);
    g->prof = NULL;
    return TG_OK;
  }
  if (!g->planned)
    return tg_error(TG_ERR_INVALID, "graph '%s': profile_enable before plan; plan the graph first", g->name);
  if (!g->backend->host_memory) {
    char dev[16];
    return tg_error(TG_ERR_UNSUPPORTED, "graph '%s': profiling times kernel calls on the host, which on %s return "
                    "before their work is done; it needs a host-memory device (the CPU)", g->name,
                    tg_device_str(g->opts.device, dev, sizeof dev));
  }
  if (!g->prof && !(g->prof = tg_malloc(sizeof *g->prof)))
    return tg_error(TG_ERR_NOMEM, "graph '%s': out of host memory for the profile", g->name);
  tg_graph_profile_reset(g);
  return TG_OK;
}

void tg_graph_profile_reset(tg_graph *g) {
  if (g && g->prof) memset(g->prof, 0, sizeof *g->prof);
}

tg_status tg_graph_profile_call(tg_graph *g, tg_node *n, const tg_kernel_args *a, int backward) {
  double t0 = tg_clock_seconds();
  tg_status st = backward ? n->kern->bwd(a) : n->kern->fwd(a);
  double t1 = tg_clock_seconds();
  if (st != TG_OK) return st;
  prof_op *p = &g->prof->op[n->op];
  p->calls[backward]++;
  p->s[backward] += t1 - t0;
  p->flops[backward] += tg_op_flops(n->op, a, backward);
  return TG_OK;
}

int tg_graph_profile_get(const tg_graph *g, tg_op_profile *out, int max) {
  if (!g || !g->prof) return 0;
  int count = 0;
  for (int op = 0; op < TG_OP_COUNT; op++) {
    const prof_op *p = &g->prof->op[op];
    if (!p->calls[0] && !p->calls[1]) continue;
    if (out && count < max)
      out[count] = (tg_op_profile){tg_op_get((tg_op)op)->name, tg_op_is_gemm((tg_op)op), p->calls[0], p->calls[1],
                                   p->s[0], p->s[1], p->flops[0], p->flops[1]};
    count++;
  }
  return count;
}
