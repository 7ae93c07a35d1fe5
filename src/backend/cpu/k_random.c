/* CPU kernel for sample_rows: uniform row draws from the counter RNG. */
#include "backend/cpu/cpu_kernels.h"
#include "ops/sample_rows.h"

tg_status tg_cpu_sample_rows_fwd(const tg_kernel_args *a) {
  int64_t *out = (int64_t *)a->out->data; /* [b] */
  int64_t b = tg_numel(a->out), rows = a->attr->i[0];
  for (int64_t e = 0; e < b; e++) out[e] = tg_sample_row(a->seed, a->rng_stream, a->rng_offset, e, rows);
  return TG_OK;
}
