/* Small forecasting runs shared by the trainer tests: seeded synthetic bars, a small config of each model, and a
 * bitwise comparison of two runs' safetensors files. */
#ifndef TG_TEST_TRAIN_CFG_H
#define TG_TEST_TRAIN_CFG_H

#include "tickgrad/tickgrad.h"

/* Seeded synthetic minute bars (n of them) with the planted AR(1) signal of strength `signal`; 1 on success. */
int tg_test_synth_bars(tg_bars *b, int64_t n, double signal, uint64_t seed);
/* A small config of kind: 2 horizons, `epochs` epochs, one thread on the CPU, silent, into dir/name. */
tg_train_config tg_test_small_config(tg_model_kind kind, const char *dir, const char *name, int epochs);
/* 1 when both safetensors files load, hold the same tensors (at least one) and each is bitwise equal. */
int tg_test_same_tensors(const char *a, const char *b);

#endif
