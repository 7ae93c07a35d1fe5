/* A trained run written in a format other runtimes read (tickgrad export; docs/EXPORT.md). */
#ifndef TICKGRAD_EXPORT_H
#define TICKGRAD_EXPORT_H

#include "tickgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes run_dir's model to out_path in format ("onnx": ONNX opset 17 with a dynamic batch axis), atomically: on any
 * error nothing is written and a file already at out_path is kept. A forecaster maps raw feature windows to quantiles
 * in return units (normalisation and target scales inside the graph); a DQN or PPO run maps observations to action
 * values, or logits and value. weights: "best" or "last" for a forecaster (NULL: best). Errors: TG_ERR_INVALID for an
 * unknown format or a run another process is writing (its lock), TG_ERR_UNSUPPORTED naming the op and model with no
 * ONNX form (or the packages a build without ONNX export lacks), TG_ERR_NUMERIC for weights that are not finite,
 * TG_ERR_IO for a run that cannot be read or a path that cannot be written. */
tg_status tg_run_export(const char *run_dir, const char *format, const char *out_path, const char *weights);

#ifdef __cplusplus
}
#endif
#endif
