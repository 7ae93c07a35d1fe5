/* Learning-rate schedules: linear warm-up, then constant, linear or half-cosine decay. */
#include "ops/lr_schedule.h"

float tg_lr_at(const tg_lr_schedule *s, float base_lr, int64_t step) {
  return s ? tg_lr_eval(s, base_lr, step) : base_lr;
}
