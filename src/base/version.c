/* The library's version, from the build. */
#include "tickgrad/version.h"

#ifndef TG_VERSION
#define TG_VERSION "0.0.0"
#endif

const char *tg_version(void) { return TG_VERSION; }
