/* The learning-rate schedule as one inline function, compiled for the host and (under nvcc) the device. */
#ifndef TG_LR_SCHEDULE_H
#define TG_LR_SCHEDULE_H

#include <math.h>
#include "base/philox.h" /* TG_HD */
#include "tickgrad/optim.h"

/* lr at step (0-based): linear warm-up, then constant, linear or half-cosine decay (see optim.h). */
static inline TG_HD float tg_lr_eval(const tg_lr_schedule *s, float base_lr, int64_t step) {
  double base = (double)base_lr;
  if (step < 0) step = 0;
  if (s->warmup_steps > 0 && step < s->warmup_steps)
    return (float)(base * (double)(step + 1) / (double)s->warmup_steps);
  if (s->kind != TG_LR_LINEAR && s->kind != TG_LR_COSINE) return base_lr;
  int64_t warm = s->warmup_steps > 0 ? s->warmup_steps : 0;
  int64_t span = s->total_steps - warm;
  double progress = span > 0 ? (double)(step - warm) / (double)span : 1.0;
  if (progress < 0.0) progress = 0.0;
  if (progress > 1.0) progress = 1.0;
  double ff = (double)s->final_frac;
  if (s->kind == TG_LR_LINEAR) return (float)(base * (1.0 - (1.0 - ff) * progress));
  const double pi = 3.14159265358979323846;
  return (float)(base * (ff + (1.0 - ff) * 0.5 * (1.0 + cos(pi * progress))));
}

#endif
