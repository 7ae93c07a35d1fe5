/* Shared inside the emulator (not seen by the backend's sources): launch failures, the memory registry, capture state. */
#ifndef TG_EMU_INTERNAL_H
#define TG_EMU_INTERNAL_H

#include <stddef.h>
#include <string>
#include "emu_api.h"

/* A kernel that could not run to the end (a deadlock, a bad pointer argument): printed at once and
 * returned as cudaErrorLaunchFailure by the next synchronising call, whose error string carries msg. */
void tg_emu_fail_launch(const std::string &msg);
/* Sets the calling thread's last error (cudaGetLastError) with a detail for cudaGetErrorString. */
cudaError_t tg_emu_error(cudaError_t e, const std::string &detail);

enum tg_emu_mem_kind { TG_EMU_NOT_OURS = 0, TG_EMU_DEVICE_MEM = 1, TG_EMU_PINNED_MEM = 2 };
/* What p points into ([begin, end], end included for one-past-the-end pointers). */
tg_emu_mem_kind tg_emu_mem_of(const void *p);

/* Whether this host thread is capturing a stream (calls that would synchronise are then refused,
 * and the capture invalidated, as in cudaStreamCaptureModeThreadLocal). */
bool tg_emu_capturing_here(const char *call);

#endif
