/* The errors of an index, class label, action or window row outside its range, worded once for every backend's kernels. */
#ifndef TG_INDEX_ERRORS_H
#define TG_INDEX_ERRORS_H

#include "ops/ops.h"

/* gather_rows: index `value` at flat position `flat` of the index tensor (a->in[1]) is outside the table's rows. */
tg_status tg_gather_bad_index(const tg_kernel_args *a, int64_t flat, int64_t value);
/* softmax_cross_entropy: label `value` at row `row` of the labels (a->in[1]) is outside the logits' classes. */
tg_status tg_xent_bad_label(const tg_kernel_args *a, int64_t row, int64_t value);

/* ppo_loss: categorical action `value` at row `row` of the actions (a->in[2]) is outside the logits' actions. */
tg_status tg_ppo_bad_action(const tg_kernel_args *a, int64_t row, int64_t value);
/* window_rows: t `value` at flat position `flat` of a->in[0] is not a row that ends a window (attr: window, rows). */
tg_status tg_window_bad_row(const tg_kernel_args *a, int64_t flat, double value);

#endif
