/* Refusing weights that hold NaN or infinity when a run is opened for use. */
#ifndef TG_IO_FINITE_H
#define TG_IO_FINITE_H

#include "tickgrad/checkpoint.h"

/* TG_ERR_NUMERIC naming what (a path), the first F32 or BF16 tensor holding a NaN or an infinity, its value and flat
 * index when f has one; TG_OK otherwise (integer tensors are not looked at). */
tg_status tg_safetensors_check_finite(const tg_safetensors *f, const char *what);
/* The weights file at path, loaded and checked as above: for every opener of a trained run (predictor, policies), so
 * a diverged run's weights are refused by name instead of forecasting or acting on NaN. Training state (optimizer
 * moments, resume) is not checked here. */
tg_status tg_weights_check_finite(const char *path);

#endif
