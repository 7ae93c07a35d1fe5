/* libFuzzer target: the safetensors parser must reject or accept any bytes without a crash or leak. */
#include <stddef.h>
#include <stdint.h>
#include "tickgrad/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tg_safetensors *f = NULL;
  if (tg_safetensors_parse(data, size, "fuzz.safetensors", &f) == TG_OK) {
    for (int i = 0; i < tg_safetensors_count(f); i++) (void)tg_safetensors_find(f, tg_safetensors_at(f, i)->name);
    (void)tg_safetensors_meta(f, "format");
    tg_safetensors_free(f);
  }
  return 0;
}
