/* A small MLP training step (linear, SiLU, dropout, linear, MSE; AdamW with clipping and a cosine schedule) run for a
 * few steps on any device through tg_step, for the tests that compare devices, capture and recompute. */
#ifndef TG_TEST_MLP_STEP_H
#define TG_TEST_MLP_STEP_H

#include "tickgrad/tickgrad.h"

#define TG_TEST_MLP_B 64 /* batch */
#define TG_TEST_MLP_F 16 /* features */

/* Called around each tg_step_run (before: 1, then 0 after it) with the step's index. */
typedef void (*tg_test_mlp_hook)(void *ctx, int step, int before);

/* Losses [steps] of that many steps on dev (precision f32 or bf16, capture on or off, recompute a tg_recompute: the
 * hidden layer and the output linear are a block, so the dropout is recomputed in backward); *captured: the step was
 * captured; hook (may be NULL) around each step. 0 on failure (the error printed). */
int tg_test_mlp_losses(tg_device dev, tg_dtype precision, int capture, int recompute, int steps, float *loss,
                       int *captured, tg_test_mlp_hook hook, void *ctx);

#endif
