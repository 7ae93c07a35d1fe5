/* Steps: a training step (forward, backward, optimizer) or an inference step as one call, which on
 * CUDA replays as a captured CUDA graph from its second call, so launch overhead is paid once. */
#ifndef TICKGRAD_STEP_H
#define TICKGRAD_STEP_H

#include "tickgrad/graph.h"
#include "tickgrad/optim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_step tg_step;

/* g must be planned (for training when o is given). Training: loss is g's scalar loss and o the
 * optimizer of g's store. Inference: o is NULL; loss may name an output to read back (or NULL).
 * Inputs stay bound to the same memory between calls (a stage's batch buffers are). */
tg_status tg_step_new(tg_graph *g, const tg_tensor *loss, tg_optim *o, tg_step **out);
void tg_step_free(tg_step *s);
/* Capture on CUDA (default 1). 0 keeps every call eager, e.g. to compare the two. */
void tg_step_set_capture(tg_step *s, int on);
/* One step. loss_out (may be NULL) receives the loss, read back after the step (4 bytes). Errors
 * from kernels (bad indices) and a non-finite gradient norm are raised here. */
tg_status tg_step_run(tg_step *s, float *loss_out);
/* The last call's phases in seconds: forward (with the loss copy), backward, and update (reduce, optimizer, reading
 * the loss back). Eager calls only (a replayed capture leaves them 0); on an asynchronous device the first two are
 * queueing times. */
typedef struct tg_step_times {
  double forward, backward, update;
} tg_step_times;
const tg_step_times *tg_step_last_times(const tg_step *s);
/* 1 once the step replays a captured graph. */
int tg_step_captured(const tg_step *s);
/* Why capture was given up ("" when it was not), e.g. an op that cannot be captured. */
const char *tg_step_capture_error(const tg_step *s);
/* Work queued between the backward pass and the optimizer (and captured with them): grads is the store's flat
 * gradient buffer [n], loss the step's loss slot [1], both on the graph's device; e.g. averaging both over
 * data-parallel ranks. NULL fn: none (the default). */
typedef tg_status (*tg_step_reduce_fn)(void *ctx, float *grads, size_t n, float *loss);
void tg_step_set_reduce(tg_step *s, tg_step_reduce_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
