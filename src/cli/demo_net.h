/* The demo's network and data: a seeded synthetic regression, an MLP with its loss, and the tables it reads on the device. */
#ifndef TG_CLI_DEMO_NET_H
#define TG_CLI_DEMO_NET_H

#include "tickgrad/tickgrad.h"

#define FEATURES 8
#define HIDDEN 64

/* n rows: x [n, F] uniform in [-1, 1), y = sin(2 x0) + x1 x2 - 0.5 x3^2 + 0.25 x4 (x5..x7 are distractors). */
void make_rows(uint64_t seed, uint64_t stream, long n, float *x, float *y);
/* Training: a batch drawn and gathered on the device from the resident tables x, y; its MSE loss. */
tg_tensor *build_train(tg_graph *g, long rows, long batch);
/* Evaluation: the MSE over the whole held-out table. */
tg_tensor *build_eval(tg_graph *g, long rows);

/* x, y [rows, F] and [rows, 1] copied to a device once (views of the host arrays on cpu:0). */
typedef struct demo_table {
  tg_device dev;
  void *x, *y;
  tg_tensor tx, ty;
} demo_table;

tg_status table_make(demo_table *t, tg_device dev, const char *name, const float *x, const float *y, long rows);
void table_free(demo_table *t);

#endif
