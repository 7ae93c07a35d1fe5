/* Optimizers over the store's flat buffers: SGD with momentum, Adam, AdamW; clipping; LR schedules. */
#ifndef TICKGRAD_OPTIM_H
#define TICKGRAD_OPTIM_H

#include "tickgrad/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tg_optim_kind { TG_SGD = 0, TG_ADAM, TG_ADAMW } tg_optim_kind;
typedef enum tg_lr_kind { TG_LR_CONSTANT = 0, TG_LR_LINEAR, TG_LR_COSINE } tg_lr_kind;

/* lr(step) = base * warm-up ramp (linear from 1/warmup to 1 over warmup_steps), then constant, or
 * decaying linearly / by a half cosine to base*final_frac at total_steps. */
typedef struct tg_lr_schedule {
  tg_lr_kind kind;
  int64_t warmup_steps;
  int64_t total_steps;
  float final_frac;
} tg_lr_schedule;

typedef struct tg_optim_config {
  tg_optim_kind kind;
  float lr;
  float momentum;     /* SGD */
  float beta1, beta2; /* Adam, AdamW */
  float eps;
  float weight_decay; /* SGD and Adam: L2 added to the gradient; AdamW: decoupled */
  float clip_norm;    /* > 0: scale gradients so their global L2 norm is at most this */
  tg_lr_schedule schedule;
} tg_optim_config;

typedef struct tg_optim tg_optim;

/* PyTorch's defaults: Adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8), AdamW weight_decay=0.01,
 * SGD lr=1e-2 momentum 0; constant schedule, no clipping. */
tg_optim_config tg_optim_defaults(tg_optim_kind kind);
/* "sgd", "adam", "adamw" */
const char *tg_optim_kind_name(tg_optim_kind kind);
float tg_lr_at(const tg_lr_schedule *s, float base_lr, int64_t step);

/* Allocates the optimizer state on the store's device (finalizes the store). */
tg_status tg_optim_new(tg_store *s, const tg_optim_config *c, tg_optim **out);
void tg_optim_free(tg_optim *o);
/* One update from the store's gradients. A non-finite gradient norm returns TG_ERR_NUMERIC and
 * leaves parameters and state untouched. */
tg_status tg_optim_step(tg_optim *o);
int64_t tg_optim_steps(const tg_optim *o);
tg_status tg_optim_set_steps(tg_optim *o, int64_t steps);
float tg_optim_last_grad_norm(const tg_optim *o); /* before clipping */
float tg_optim_last_lr(const tg_optim *o);
const tg_optim_config *tg_optim_config_of(const tg_optim *o);
/* State buffers for checkpoints: 0 (plain SGD), 1 (SGD momentum "momentum"), 2 (Adam "exp_avg",
 * "exp_avg_sq"), each [tg_store_numel] floats on the store's device. */
int tg_optim_state_count(const tg_optim *o);
float *tg_optim_state(tg_optim *o, int k, const char **name);
tg_store *tg_optim_store(tg_optim *o);

#ifdef __cplusplus
}
#endif
#endif
