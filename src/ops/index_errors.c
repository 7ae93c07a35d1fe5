/* The errors of an index, class label, action or window row outside its range (index_errors.h). */
#include <inttypes.h>
#include <stdio.h>
#include "ops/index_errors.h"

tg_status tg_gather_bad_index(const tg_kernel_args *a, int64_t flat, int64_t value) {
  const tg_tensor *idx = a->in[1];
  char pos[16 * TG_MAX_DIMS + 8]; /* e.g. "1, 2" */
  int64_t rem = flat, coord[TG_MAX_DIMS];
  for (int k = idx->ndim - 1; k >= 0; k--) {
    coord[k] = idx->shape[k] > 0 ? rem % idx->shape[k] : 0;
    rem = idx->shape[k] > 0 ? rem / idx->shape[k] : 0;
  }
  size_t used = 0;
  pos[0] = '\0';
  for (int k = 0; k < idx->ndim && used < sizeof pos; k++)
    used += (size_t)snprintf(pos + used, sizeof pos - used, "%s%lld", k ? ", " : "", (long long)coord[k]);
  return tg_error(TG_ERR_INVALID, "%s: index %lld at position [%s] (flat %lld) of '%s' is outside [0, %lld) of table '%s'",
                  a->node_name, (long long)value, pos, (long long)flat, idx->name, (long long)a->in[0]->shape[0],
                  a->in[0]->name);
}

tg_status tg_xent_bad_label(const tg_kernel_args *a, int64_t row, int64_t value) {
  int64_t C = a->in[0]->shape[1];
  return tg_error(TG_ERR_INVALID,
                  "%s: label %" PRId64 " at row %" PRId64 " of '%s' is outside [0, %" PRId64 ") (logits '%s' have %" PRId64
                  " classes); labels must be class indices",
                  a->node_name, value, row, a->in[1]->name, C, a->in[0]->name, C);
}

tg_status tg_ppo_bad_action(const tg_kernel_args *a, int64_t row, int64_t value) {
  int64_t A = a->in[0]->shape[1];
  return tg_error(TG_ERR_INVALID,
                  "%s: action %" PRId64 " at row %" PRId64 " of '%s' is outside [0, %" PRId64 ") (logits '%s' have %" PRId64
                  " actions)",
                  a->node_name, value, row, a->in[2]->name, A, a->in[0]->name, A);
}

tg_status tg_window_bad_row(const tg_kernel_args *a, int64_t flat, double value) {
  int64_t W = a->attr->i[0], rows = a->attr->i[1];
  return tg_error(TG_ERR_INVALID,
                  "%s: t %.9g at flat position %lld of '%s' is not a row in [%lld, %lld) (an integer: the last row of "
                  "a window of %lld rows in a table of %lld)",
                  a->node_name, value, (long long)flat, a->in[0]->name, (long long)(W - 1), (long long)rows,
                  (long long)W, (long long)rows);
}
