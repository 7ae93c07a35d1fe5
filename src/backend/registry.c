/* Which backends this build has: the list the build writes (the CPU always, then CUDA when nvcc was found). */
#include "graph/backend.h"
#include "tickgrad/graph.h"
#include "backend_list.h" /* written by CMake: TG_BACKEND_LIST(X) names each compiled backend */

#define DECLARE(name) extern const tg_backend tg_##name##_backend;
TG_BACKEND_LIST(DECLARE)
#undef DECLARE

#define ENTRY(name) &tg_##name##_backend,
static const tg_backend *const k_backends[] = {TG_BACKEND_LIST(ENTRY) NULL};
#undef ENTRY

const tg_backend *tg_backend_at(int i) {
  return i >= 0 && i < (int)(sizeof k_backends / sizeof *k_backends) ? k_backends[i] : NULL;
}

const tg_backend *tg_backend_for(tg_device_kind k) {
  for (int i = 0; k_backends[i]; i++)
    if (k_backends[i]->kind == k) return k_backends[i];
  return NULL;
}

int tg_backend_compiled(tg_device_kind k) { return tg_backend_for(k) != NULL; }

int tg_backend_count(void) { return (int)(sizeof k_backends / sizeof *k_backends) - 1; }
const char *tg_backend_name(int i) { return tg_backend_at(i) ? tg_backend_at(i)->name : "?"; }
tg_device_kind tg_backend_kind(int i) { return tg_backend_at(i) ? tg_backend_at(i)->kind : TG_DEVICE_KIND_COUNT; }
const char *tg_backend_incomplete(int i) { return tg_backend_at(i) ? tg_backend_at(i)->incomplete : NULL; }

int tg_backend_describe(int i, char *buf, size_t n) {
  const tg_backend *be = tg_backend_at(i);
  if (!be || !be->describe || !n) return 0;
  be->describe(buf, n);
  return 1;
}
