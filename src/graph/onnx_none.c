/* ONNX export in a build without protobuf-c or the packaged onnx.proto: every export names what is missing. */
#include <stdio.h>
#include "graph/onnx.h"

#ifndef TG_ONNX_WHY
#define TG_ONNX_WHY "it was built without protobuf-c-compiler, libprotobuf-c-dev or libonnx-dev"
#endif

int tg_onnx_available(char *why, size_t cap) {
  if (why && cap) snprintf(why, cap, "this build has no ONNX export: %s", TG_ONNX_WHY);
  return 0;
}

tg_status tg_onnx_export(const tg_onnx_spec *spec, const char *path) {
  (void)spec;
  (void)path;
  char why[512];
  tg_onnx_available(why, sizeof why);
  return tg_error(TG_ERR_UNSUPPORTED, "%s", why);
}
