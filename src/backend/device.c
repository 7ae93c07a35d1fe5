/* Choosing a device, and device information, memory statistics and synchronisation, through the backend table. */
#include <stdio.h>
#include <string.h>
#include "graph/backend.h"
#include "tickgrad/device.h"

/* The first device --device auto may take from backend i on (registry order: CUDA, then Vulkan), starting at device
 * *dev of backend *i; 0 when none is left. Host-memory backends (the CPU) and incomplete ones are passed by. */
static int next_candidate(int *i, int *dev) {
  for (; tg_backend_at(*i); (*i)++, *dev = 0) {
    const tg_backend *be = tg_backend_at(*i);
    if (be->host_memory || be->incomplete) continue;
    for (int n = be->device_count(); *dev < n; (*dev)++)
      if (!be->auto_ok || be->auto_ok(*dev)) return 1;
  }
  return 0;
}

static const char *NOT_BUILT = "the CUDA backend is not compiled into this build (nvcc was not found, or TG_CUDA=OFF)";

int tg_cuda_count(void) {
  const tg_backend *be = tg_backend_for(TG_CUDA);
  return be ? be->device_count() : 0;
}

const char *tg_cuda_why_none(void) {
  const tg_backend *be = tg_backend_for(TG_CUDA);
  return be ? be->unavailable_reason() : NOT_BUILT;
}

/* TG_OK when d is a device this machine has and it starts; otherwise the error says why not. */
static tg_status present(tg_device d) {
  const tg_backend *be = tg_backend_for(d.kind);
  char buf[16];
  if (!be)
    return tg_error(TG_ERR_DEVICE, "%s is not available: %s", tg_device_str(d, buf, sizeof buf),
                    d.kind == TG_CUDA ? NOT_BUILT : "its backend is not compiled into this build");
  return be->use(d.index);
}

tg_status tg_device_choose(const char *spec, tg_device *out, char *notice, size_t notice_size) {
  if (notice && notice_size) notice[0] = '\0';
  if (spec && strcmp(spec, "auto") == 0) {
    char buf[16], failed[256] = "";
    for (int i = 0, dev = 0; next_candidate(&i, &dev); dev++) {
      const tg_backend *be = tg_backend_at(i);
      *out = (tg_device){be->kind, dev};
      if (be->use(dev) == TG_OK) { /* a GPU that starts, not just one that is listed */
        if (notice) snprintf(notice, notice_size, "device auto: %s", tg_device_str(*out, buf, sizeof buf));
        return TG_OK;
      }
      if (!failed[0]) snprintf(failed, sizeof failed, "%s did not start: %s", tg_device_str(*out, buf, sizeof buf),
                               tg_last_error());
    }
    if (notice && failed[0]) snprintf(notice, notice_size, "device auto: cpu:0 (%s)", failed);
    else if (notice) /* the usual case on a machine without a GPU: the why (a driver, a build) is `devices`' */
      snprintf(notice, notice_size, "device auto: cpu:0 (no GPU; `tickgrad devices` says why)");
    *out = tg_cpu(0);
    return TG_OK;
  }
  tg_device d;
  tg_status st = tg_device_parse(spec, &d);
  if (st != TG_OK) return st;
  if ((st = present(d)) != TG_OK) return st;
  *out = d;
  return TG_OK;
}

tg_status tg_device_info_get(tg_device d, tg_device_info *out) {
  memset(out, 0, sizeof *out);
  char buf[16];
  const tg_backend *be = tg_backend_for(d.kind);
  if (be && !be->info)
    return tg_error(TG_ERR_DEVICE, "device info: %s is not a CUDA device", tg_device_str(d, buf, sizeof buf));
  tg_status st = present(d);
  return st != TG_OK ? st : be->info(d.index, out);
}

tg_status tg_device_mem_stats(tg_device d, tg_mem_stats *out) {
  memset(out, 0, sizeof *out);
  const tg_backend *be = tg_backend_for(d.kind);
  if (be && !be->mem_stats) return TG_OK;
  tg_status st = present(d);
  return st != TG_OK ? st : be->mem_stats(d.index, out);
}

tg_status tg_device_sync(tg_device d) {
  const tg_backend *be = tg_backend_for(d.kind);
  if (be && be->host_memory) return TG_OK;
  return be ? be->sync(d.index) : present(d);
}

int tg_device_host_memory(tg_device d) {
  const tg_backend *be = tg_backend_for(d.kind);
  return be && be->host_memory;
}

int tg_device_is_host(tg_device d) { return tg_device_host_memory(d) && d.index == 0; }

int tg_device_captures(tg_device d) {
  const tg_backend *be = tg_backend_for(d.kind);
  return be && be->capture_begin != NULL;
}

int tg_device_bf16_native(tg_device d, char *why, size_t why_size) {
  const tg_backend *be = tg_backend_for(d.kind);
  char none[1];
  if (!why || !why_size) why = none, why_size = sizeof none; /* the reason is not wanted */
  why[0] = 0;
  if (be && be->bf16_native) return be->bf16_native(d.index, why, why_size);
  snprintf(why, why_size, "the %s backend does not claim native bf16 GEMMs", be ? be->name : "device's");
  return 0;
}

int tg_device_bf16_auto_min_width(tg_device d) {
  const tg_backend *be = tg_backend_for(d.kind);
  return be && be->bf16_auto_min_width ? be->bf16_auto_min_width(d.index) : TG_BF16_AUTO_MIN_WIDTH;
}

void tg_precision_resolve(tg_precision *precision, tg_device d, int width, char *notice, size_t notice_size) {
  char why[256], dev[16];
  int native = tg_device_bf16_native(d, why, sizeof why);
  if (notice && notice_size) notice[0] = 0;
  if (*precision == TG_PRECISION_AUTO) {
    int from = tg_device_bf16_auto_min_width(d);
    *precision = native && width >= from ? TG_PRECISION_BF16 : TG_PRECISION_FP32;
    tg_device_str(d, dev, sizeof dev);
    if (notice && native)
      snprintf(notice, notice_size, "precision auto: %s for a model %d wide on %s, whose bf16 GEMMs are native and "
               "were measured faster than fp32 from width %d (--precision fp32 or bf16 chooses)",
               tg_precision_name(*precision), width, dev, from);
    else if (notice)
      snprintf(notice, notice_size, "precision auto: fp32 on %s: %s", dev, why);
  } else if (*precision == TG_PRECISION_BF16 && !native && notice) {
    snprintf(notice, notice_size, "precision bf16 on %s will be slower than fp32: %s (--precision auto or fp32 "
             "avoids it)", tg_device_str(d, dev, sizeof dev), why);
  }
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
