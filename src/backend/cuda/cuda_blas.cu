/* Loads cuBLAS with dlopen on the first device start and fills the table of its entry points (cuda_blas.h). */
#include <pthread.h>
#include <stdio.h>
#include "backend/cuda/cuda_blas.h"

#if !defined(TG_CUBLAS_LINKED)
#include <dlfcn.h>
#endif

tg_cublas_api tg_cublas;

namespace {

pthread_once_t g_once = PTHREAD_ONCE_INIT;
tg_status g_status = TG_OK;
char g_why[1024];

#if defined(TG_CUBLAS_LINKED)
/* A build that links a cuBLAS (the emulator's, src/backend/cuda_emu) takes its functions as they are. */
void load_once() {
#define TG_CUBLAS_TAKE(member, function) tg_cublas.member = &function;
  TG_CUBLAS_FUNCS(TG_CUBLAS_TAKE)
#undef TG_CUBLAS_TAKE
}
#else
#define TG_STR2(x) #x
#define TG_STR(x) TG_STR2(x) /* the exported name: cublas_v2.h maps some names to their _v2 symbols */

/* The library by its soname first (LD_LIBRARY_PATH, the loader's cache), then the file the build found
 * (TG_CUBLAS_LIBRARY, TG_CUBLAS_PATH: CMakeLists.txt). */
void *open_library(char *tried, size_t size) {
  const char *names[] = {TG_CUBLAS_LIBRARY, TG_CUBLAS_PATH};
  size_t used = 0;
  tried[0] = '\0';
  for (const char *name : names) {
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    const char *e = dlerror();
    int n = snprintf(tried + used, size - used, "%s%s", used ? "; " : "", e ? e : name);
    if (n > 0) used = used + (size_t)n < size ? used + (size_t)n : size - 1;
  }
  return NULL;
}

void load_once() {
  char tried[768];
  void *h = open_library(tried, sizeof tried);
  if (!h) {
    g_status = TG_ERR_DEVICE;
    snprintf(g_why, sizeof g_why,
             "cuBLAS could not be loaded (%s): install the CUDA toolkit's cuBLAS (%s) or put its folder in "
             "LD_LIBRARY_PATH",
             tried, TG_CUBLAS_LIBRARY);
    return;
  }
#define TG_CUBLAS_FIND(member, function)                                                                      \
  if (g_status == TG_OK && !(tg_cublas.member = (decltype(tg_cublas.member))dlsym(h, TG_STR(function)))) {  \
    g_status = TG_ERR_DEVICE;                                                                                 \
    snprintf(g_why, sizeof g_why, "cuBLAS: %s has no function %s (older than the cuBLAS built against, %s?)", \
             TG_CUBLAS_LIBRARY, TG_STR(function), TG_CUBLAS_PATH);                                            \
  }
  TG_CUBLAS_FUNCS(TG_CUBLAS_FIND)
#undef TG_CUBLAS_FIND
}
#endif

}  // namespace

tg_status tg_cublas_load(void) {
  pthread_once(&g_once, load_once);
  return g_status == TG_OK ? TG_OK : tg_error(g_status, "%s", g_why);
}
