/* Choosing a device, and device information, memory statistics and synchronisation for any build. */
#include <stdio.h>
#include <string.h>
#include "graph/backend.h"
#include "tickgrad/device.h"
#if TG_HAVE_CUDA
#include "backend/cuda/cuda_api.h"
#endif

int tg_cuda_count(void) {
#if TG_HAVE_CUDA
  return tg_cuda_device_count();
#else
  return 0;
#endif
}

const char *tg_cuda_why_none(void) {
#if TG_HAVE_CUDA
  return tg_cuda_unavailable_reason();
#else
  return "the CUDA backend is not compiled into this build (nvcc was not found, or TG_CUDA=OFF)";
#endif
}

/* TG_OK when d is a CUDA device this machine has (started, on a CUDA build); otherwise the error
 * says why not. */
static tg_status cuda_present(tg_device d) {
#if TG_HAVE_CUDA
  return tg_cuda_use(d.index);
#else
  return tg_error(TG_ERR_DEVICE, "cuda:%d is not available: %s", d.index, tg_cuda_why_none());
#endif
}

tg_status tg_device_choose(const char *spec, tg_device *out, char *notice, size_t notice_size) {
  if (notice && notice_size) notice[0] = '\0';
  if (spec && strcmp(spec, "auto") == 0) {
    if (tg_cuda_count() > 0) {
      *out = tg_cuda(0);
#if TG_HAVE_CUDA
      if (tg_cuda_use(0) == TG_OK) return TG_OK; /* a GPU that starts, not just one that is listed */
#endif
      if (notice) snprintf(notice, notice_size, "device auto: cuda:0 did not start (%s); running on cpu:0", tg_last_error());
    } else if (notice) {
      snprintf(notice, notice_size, "device auto: no usable GPU (%s); running on cpu:0", tg_cuda_why_none());
    }
    *out = tg_cpu(0);
    return TG_OK;
  }
  tg_device d;
  tg_status st = tg_device_parse(spec, &d);
  if (st != TG_OK) return st;
  if (d.kind == TG_CUDA) {
    if ((st = cuda_present(d)) != TG_OK) return st;
  }
  *out = d;
  return TG_OK;
}

tg_status tg_device_info_get(tg_device d, tg_device_info *out) {
  memset(out, 0, sizeof *out);
  char buf[16];
  if (d.kind != TG_CUDA)
    return tg_error(TG_ERR_DEVICE, "device info: %s is not a CUDA device", tg_device_str(d, buf, sizeof buf));
  tg_status st = cuda_present(d);
  if (st != TG_OK) return st;
#if TG_HAVE_CUDA
  return tg_cuda_info(d.index, out);
#else
  return TG_ERR_DEVICE;
#endif
}

tg_status tg_device_mem_stats(tg_device d, tg_mem_stats *out) {
  memset(out, 0, sizeof *out);
  if (d.kind != TG_CUDA) return TG_OK;
#if TG_HAVE_CUDA
  return tg_cuda_mem_stats(d.index, out);
#else
  return cuda_present(d);
#endif
}

tg_status tg_device_sync(tg_device d) {
  if (d.kind != TG_CUDA) return TG_OK;
#if TG_HAVE_CUDA
  return tg_cuda_sync(d.index);
#else
  return cuda_present(d);
#endif
}

tg_status tg_device_upload(tg_device d, const void *host, size_t bytes, void **out) {
  *out = NULL;
  char buf[16];
  const tg_backend *be = tg_backend_for(d.kind);
  if (!be) return tg_error(TG_ERR_DEVICE, "upload: %s is not compiled into this build", tg_device_str(d, buf, sizeof buf));
  tg_status st = be->alloc(d, bytes, out);
  if (st == TG_OK && bytes) st = be->from_host(d, *out, host, bytes);
  if (st != TG_OK && *out) {
    be->free(d, *out);
    *out = NULL;
  }
  return st;
}

tg_status tg_device_download(tg_device d, void *host, const void *src, size_t bytes) {
  char buf[16];
  const tg_backend *be = tg_backend_for(d.kind);
  if (!be) return tg_error(TG_ERR_DEVICE, "download: %s is not compiled into this build", tg_device_str(d, buf, sizeof buf));
  return bytes ? be->to_host(d, host, src, bytes) : TG_OK;
}

void tg_device_free(tg_device d, void *p) {
  const tg_backend *be = tg_backend_for(d.kind);
  if (be && p) be->free(d, p);
}
