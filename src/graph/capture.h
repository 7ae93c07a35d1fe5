/* Capture and replay of a planned graph's device work, and the few graph facts a step (src/optim/step.c) asks for. */
#ifndef TG_CAPTURE_H
#define TG_CAPTURE_H

#include "tickgrad/graph.h"

/* What a step reads of its graph: its name, whether it is planned (and for training), its store and device. */
const char *tg_graph_name(const tg_graph *g);
int tg_graph_planned(const tg_graph *g, int *training);
tg_store *tg_graph_store(const tg_graph *g);
tg_device tg_graph_device(const tg_graph *g);
/* Queues a copy of bytes of t's data into dst, both on g's device (no synchronisation; capturable). */
tg_status tg_graph_copy_out(tg_graph *g, void *dst, const tg_tensor *t, size_t bytes);
/* 1 when every input of g is bound to memory. */
int tg_graph_inputs_bound(const tg_graph *g);
/* 1 when g's backend can capture device work into a replayable graph. */
int tg_graph_can_capture(const tg_graph *g);

/* A capture: the device work one call of work(ctx) queued, recorded once and replayed. */
typedef struct tg_capture tg_capture;
typedef tg_status (*tg_capture_work)(void *ctx);
/* Records work(ctx) on g's device. Recording only records, so g's host run counter is put back. On failure *out is
 * NULL and the error (a kernel that cannot be captured, the work's own error) is set. */
tg_status tg_capture_record(tg_graph *g, tg_capture_work work, void *ctx, tg_capture **out);
/* 1 when what the capture baked in still holds: every input bound to the same memory, the same seed, the same bf16
 * mirror of the store (a mirror made since must be written by the captured update). */
int tg_capture_current(const tg_capture *c);
/* Replays it; g's run counter advances as one run's would (the captured counter kernel did the same on the device). */
tg_status tg_capture_launch(tg_capture *c);
void tg_capture_free(tg_capture *c);

#endif
