/* Emulated CUDA: stands in for the toolkit's cuda_runtime.h when the backend's .cu files are compiled as host C++. */
#ifndef TG_EMU_CUDA_RUNTIME_H
#define TG_EMU_CUDA_RUNTIME_H

#include "emu_api.h"
#include "emu_device.h"
#include "emu_launch.h"
#include "library_types.h" /* the toolkit's cuda_runtime.h includes it too */

#endif
