/* Weight checkpoints (every store parameter by name) and training-state checkpoints (moments, step, RNG, cursor). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "graph/backend.h"
#include "base/bf16.h"
#include "base/json.h"
#include "tickgrad/checkpoint.h"

#define CKPT_WEIGHTS_FORMAT "tickgrad-weights"
#define CKPT_STATE_FORMAT "tickgrad-train-state"
#define CKPT_VERSION "1"

/* A host copy of n floats from the store's device. */
static tg_status ckpt_fetch(tg_device dev, const float *src, size_t n, float **out) {
  const tg_backend *be = tg_backend_for(dev.kind);
  *out = NULL;
  if (!be) return tg_error(TG_ERR_DEVICE, "checkpoint: the store's backend is not in this build");
  float *host = tg_malloc(n ? n * sizeof(float) : 1);
  if (!host) return tg_error(TG_ERR_NOMEM, "checkpoint: out of host memory for %zu floats", n);
  if (n) {
    tg_status st = be->to_host(dev, host, src, n * sizeof(float));
    if (st != TG_OK) {
      tg_free(host);
      return st;
    }
  }
  *out = host;
  return TG_OK;
}

tg_status tg_store_save(tg_store *s, const char *path) {
  if (!s || !path) return tg_error(TG_ERR_INVALID, "tg_store_save: store and path are required");
  tg_status st = tg_store_finalize(s);
  if (st != TG_OK) return st;
  int n = tg_store_count(s);
  float *host = NULL;
  st = ckpt_fetch(tg_store_device(s), tg_store_values_read(s), tg_store_numel(s), &host);
  if (st != TG_OK) return st;
  tg_tensor *ts = tg_calloc(n ? (size_t)n : 1, sizeof *ts);
  if (!ts) {
    tg_free(host);
    return tg_error(TG_ERR_NOMEM, "%s: out of host memory", path);
  }
  for (int i = 0; i < n && st == TG_OK; i++) {
    tg_param_info p = tg_store_param(s, i);
    st = tg_tensor_view(&ts[i], p.name, tg_cpu(0), TG_F32, p.ndim, p.shape, host + p.offset);
  }
  const tg_kv meta[] = {{"format", CKPT_WEIGHTS_FORMAT}, {"version", CKPT_VERSION}};
  if (st == TG_OK) st = tg_safetensors_save(path, n, ts, 2, meta);
  tg_free(ts);
  tg_free(host);
  return st;
}

/* Whether a file tensor can fill an f32 buffer: F32 as it is, BF16 widened exactly. */
static int ckpt_is_f32_source(const tg_tensor *t) { return t->dtype == TG_F32 || t->dtype == TG_BF16; }

/* dst [n] = the file tensor t's n values as f32 (t is F32 or BF16). */
static void ckpt_to_f32(float *dst, const tg_tensor *t, size_t n) {
  if (t->dtype == TG_BF16) tg_bf16_unpack(dst, t->data, n);
  else if (n) memcpy(dst, t->data, n * sizeof(float));
}

/* Appends "; <item>" to a problem list, keeping the first eight. */
static void ckpt_note(tg_text *b, int *count, const char *item) {
  if (++*count > 8) return;
  if (*count > 1) tg_text_puts(b, "; ");
  tg_text_puts(b, item);
}

static void ckpt_shape_of(const tg_param_info *p, char *buf, size_t n) {
  tg_tensor t;
  memset(&t, 0, sizeof t);
  t.ndim = p->ndim;
  memcpy(t.shape, p->shape, (size_t)p->ndim * sizeof *p->shape);
  tg_shape_str(&t, buf, n);
}

/* Every difference between the file's tensors and the store's parameters, in one message. */
static tg_status ckpt_match_weights(tg_store *s, const tg_safetensors *f, const char *path) {
  tg_text b = {0};
  int problems = 0;
  char want[64], have[64], item[256];
  int n = tg_store_count(s);
  for (int i = 0; i < n; i++) {
    tg_param_info p = tg_store_param(s, i);
    const tg_tensor *t = tg_safetensors_find(f, p.name);
    if (!t) {
      snprintf(item, sizeof item, "missing tensor '%s'", p.name);
      ckpt_note(&b, &problems, item);
      continue;
    }
    ckpt_shape_of(&p, want, sizeof want);
    tg_shape_str(t, have, sizeof have);
    if (!ckpt_is_f32_source(t)) {
      snprintf(item, sizeof item, "tensor '%s' is %s, parameters are f32 (read from f32, or from bf16 widened exactly)",
               p.name, tg_dtype_name(t->dtype));
      ckpt_note(&b, &problems, item);
    } else if (t->ndim != p.ndim ||
               memcmp(t->shape, p.shape, (size_t)p.ndim * sizeof *p.shape) != 0) {
      snprintf(item, sizeof item, "tensor '%s' has shape %s in the file, %s in the model", p.name,
               have, want);
      ckpt_note(&b, &problems, item);
    }
  }
  for (int i = 0; i < tg_safetensors_count(f); i++) {
    const tg_tensor *t = tg_safetensors_at(f, i);
    if (tg_store_find(s, t->name) < 0 || tg_safetensors_find(f, t->name) != t) {
      snprintf(item, sizeof item, "extra tensor '%s' (no such parameter)", t->name);
      ckpt_note(&b, &problems, item);
    }
  }
  if (!problems) {
    tg_text_free(&b);
    return TG_OK;
  }
  tg_status st = tg_error(TG_ERR_SHAPE, "%s: does not match the model (%d problem%s): %s%s; nothing was loaded",
                          path, problems, problems == 1 ? "" : "s", b.data ? b.data : "",
                          problems > 8 ? "; ..." : "");
  tg_text_free(&b);
  return st;
}

static tg_status ckpt_check_format(const tg_safetensors *f, const char *path, const char *want) {
  const char *fmt = tg_safetensors_meta(f, "format");
  if (fmt && strcmp(fmt, want) != 0)
    return tg_error(TG_ERR_FORMAT, "%s: metadata format is \"%s\", expected \"%s\"", path, fmt, want);
  const char *ver = tg_safetensors_meta(f, "version");
  if (fmt && (!ver || strcmp(ver, CKPT_VERSION) != 0))
    return tg_error(TG_ERR_UNSUPPORTED, "%s: %s version \"%s\" is not supported (this build reads %s)",
                    path, want, ver ? ver : "(none)", CKPT_VERSION);
  return TG_OK;
}

tg_status tg_store_load(tg_store *s, const char *path) {
  if (!s || !path) return tg_error(TG_ERR_INVALID, "tg_store_load: store and path are required");
  tg_status st = tg_store_finalize(s);
  if (st != TG_OK) return st;
  tg_safetensors *f = NULL;
  st = tg_safetensors_load(path, &f);
  if (st != TG_OK) return st;
  /* weights written by other tools carry no "format"; a tickgrad file must be a weights file */
  st = ckpt_check_format(f, path, CKPT_WEIGHTS_FORMAT);
  if (st == TG_OK) st = ckpt_match_weights(s, f, path);
  float *host = NULL;
  tg_device dev = tg_store_device(s);
  size_t numel = tg_store_numel(s);
  /* start from the current values so any padding between parameters is kept as it is */
  if (st == TG_OK) st = ckpt_fetch(dev, tg_store_values_read(s), numel, &host);
  if (st == TG_OK) {
    for (int i = 0; i < tg_store_count(s); i++) {
      tg_param_info p = tg_store_param(s, i);
      const tg_tensor *t = tg_safetensors_find(f, p.name);
      ckpt_to_f32(host + p.offset, t, p.numel);
    }
    if (numel) st = tg_backend_for(dev.kind)->from_host(dev, tg_store_values(s), host, numel * sizeof(float));
  }
  tg_free(host);
  tg_safetensors_free(f);
  return st;
}

/* ---- training state ---- */

static tg_status ckpt_parse_i64(const char *path, const tg_safetensors *f, const char *key,
                                int64_t min, int64_t *out) {
  const char *s = tg_safetensors_meta(f, key);
  if (!s) return tg_error(TG_ERR_FORMAT, "%s: metadata \"%s\" is missing", path, key);
  const char *p = s;
  int neg = *p == '-';
  if (neg) p++;
  if (!*p) return tg_error(TG_ERR_FORMAT, "%s: metadata %s=\"%s\" is not an integer", path, key, s);
  uint64_t v = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9')
      return tg_error(TG_ERR_FORMAT, "%s: metadata %s=\"%s\" is not an integer", path, key, s);
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10 || v * 10 + d > (uint64_t)INT64_MAX + (uint64_t)neg)
      return tg_error(TG_ERR_FORMAT, "%s: metadata %s=\"%s\" is out of range", path, key, s);
    v = v * 10 + d;
  }
  int64_t r = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
  if (r < min)
    return tg_error(TG_ERR_FORMAT, "%s: metadata %s=%lld must be >= %lld", path, key, (long long)r,
                    (long long)min);
  *out = r;
  return TG_OK;
}

static tg_status ckpt_parse_u64(const char *path, const tg_safetensors *f, const char *key,
                                uint64_t *out) {
  const char *s = tg_safetensors_meta(f, key);
  if (!s) return tg_error(TG_ERR_FORMAT, "%s: metadata \"%s\" is missing", path, key);
  if (!*s) return tg_error(TG_ERR_FORMAT, "%s: metadata %s is empty", path, key);
  uint64_t v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9')
      return tg_error(TG_ERR_FORMAT, "%s: metadata %s=\"%s\" is not an unsigned integer", path, key, s);
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10)
      return tg_error(TG_ERR_FORMAT, "%s: metadata %s=\"%s\" is out of range", path, key, s);
    v = v * 10 + d;
  }
  *out = v;
  return TG_OK;
}

tg_status tg_train_state_save(const char *path, tg_optim *o, const tg_train_state *st_in) {
  if (!path || !o || !st_in)
    return tg_error(TG_ERR_INVALID, "tg_train_state_save: path, optimizer and state are required");
  tg_store *s = tg_optim_store(o);
  tg_device dev = tg_store_device(s);
  size_t numel = tg_store_numel(s);
  int k = tg_optim_state_count(o);
  tg_status st = TG_OK;
  float *host[2] = {NULL, NULL};
  tg_tensor ts[2];
  int64_t shape[1] = {(int64_t)numel};
  for (int i = 0; i < k && st == TG_OK; i++) {
    const char *name = NULL;
    float *buf = tg_optim_state(o, i, &name);
    st = ckpt_fetch(dev, buf, numel, &host[i]);
    if (st == TG_OK) st = tg_tensor_view(&ts[i], name, tg_cpu(0), TG_F32, 1, shape, host[i]);
  }
  char step[24], optim_step[24], seed[24], offset[24], epoch[24], cursor[24];
  snprintf(step, sizeof step, "%lld", (long long)st_in->step);
  snprintf(optim_step, sizeof optim_step, "%lld", (long long)tg_optim_steps(o));
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)st_in->rng_seed);
  snprintf(offset, sizeof offset, "%llu", (unsigned long long)st_in->rng_offset);
  snprintf(epoch, sizeof epoch, "%lld", (long long)st_in->epoch);
  snprintf(cursor, sizeof cursor, "%lld", (long long)st_in->cursor);
  const tg_kv meta[] = {
      {"format", CKPT_STATE_FORMAT},
      {"version", CKPT_VERSION},
      {"optimizer", tg_optim_kind_name(tg_optim_config_of(o)->kind)},
      {"optim_step", optim_step},
      {"step", step},
      {"rng_seed", seed},
      {"rng_offset", offset},
      {"epoch", epoch},
      {"cursor", cursor},
  };
  if (st == TG_OK) st = tg_safetensors_save(path, k, ts, (int)(sizeof meta / sizeof meta[0]), meta);
  for (int i = 0; i < k; i++) tg_free(host[i]);
  return st;
}

/* Checks that the file holds exactly the optimizer's state buffers, each [numel] f32. */
static tg_status ckpt_match_state(tg_optim *o, const tg_safetensors *f, const char *path) {
  size_t numel = tg_store_numel(tg_optim_store(o));
  int k = tg_optim_state_count(o);
  for (int i = 0; i < k; i++) {
    const char *name = NULL;
    tg_optim_state(o, i, &name);
    const tg_tensor *t = tg_safetensors_find(f, name);
    char have[64];
    if (!t) return tg_error(TG_ERR_FORMAT, "%s: optimizer state tensor '%s' is missing", path, name);
    if (!ckpt_is_f32_source(t) || t->ndim != 1 || (uint64_t)t->shape[0] != (uint64_t)numel)
      return tg_error(TG_ERR_SHAPE,
                      "%s: optimizer state '%s' is %s %s, the optimizer needs f32 [%zu] (or bf16, widened "
                      "exactly; a different model?)",
                      path, name, tg_dtype_name(t->dtype), tg_shape_str(t, have, sizeof have), numel);
  }
  for (int i = 0; i < tg_safetensors_count(f); i++) {
    const tg_tensor *t = tg_safetensors_at(f, i);
    int known = 0;
    for (int j = 0; j < k; j++) {
      const char *name = NULL;
      tg_optim_state(o, j, &name);
      if (strcmp(name, t->name) == 0) known = 1;
    }
    if (!known)
      return tg_error(TG_ERR_FORMAT, "%s: extra tensor '%s' that this optimizer (%s) does not have",
                      path, t->name, tg_optim_kind_name(tg_optim_config_of(o)->kind));
  }
  return TG_OK;
}

tg_status tg_train_state_load(const char *path, tg_optim *o, tg_train_state *st_out) {
  if (!path || !o) return tg_error(TG_ERR_INVALID, "tg_train_state_load: path and optimizer are required");
  tg_safetensors *f = NULL;
  tg_status st = tg_safetensors_load(path, &f);
  if (st != TG_OK) return st;
  const char *fmt = tg_safetensors_meta(f, "format");
  const char *kind = tg_safetensors_meta(f, "optimizer");
  const char *want_kind = tg_optim_kind_name(tg_optim_config_of(o)->kind);
  tg_train_state ts;
  int64_t optim_step = 0;
  memset(&ts, 0, sizeof ts);
  if (!fmt || strcmp(fmt, CKPT_STATE_FORMAT) != 0)
    st = tg_error(TG_ERR_FORMAT, "%s: not a tickgrad training-state file (metadata format is \"%s\")",
                  path, fmt ? fmt : "(none)");
  if (st == TG_OK) st = ckpt_check_format(f, path, CKPT_STATE_FORMAT);
  if (st == TG_OK && (!kind || strcmp(kind, want_kind) != 0))
    st = tg_error(TG_ERR_INVALID, "%s: saved by optimizer \"%s\", but this optimizer is %s", path,
                  kind ? kind : "(none)", want_kind);
  if (st == TG_OK) st = ckpt_parse_i64(path, f, "optim_step", 0, &optim_step);
  if (st == TG_OK) st = ckpt_parse_i64(path, f, "step", 0, &ts.step);
  if (st == TG_OK) st = ckpt_parse_u64(path, f, "rng_seed", &ts.rng_seed);
  if (st == TG_OK) st = ckpt_parse_u64(path, f, "rng_offset", &ts.rng_offset);
  if (st == TG_OK) st = ckpt_parse_i64(path, f, "epoch", 0, &ts.epoch);
  if (st == TG_OK) st = ckpt_parse_i64(path, f, "cursor", 0, &ts.cursor);
  if (st == TG_OK) st = ckpt_match_state(o, f, path);
  if (st == TG_OK) {
    tg_device dev = tg_store_device(tg_optim_store(o));
    const tg_backend *be = tg_backend_for(dev.kind);
    size_t numel = tg_store_numel(tg_optim_store(o));
    int k = tg_optim_state_count(o), any_bf16 = 0;
    for (int i = 0; i < k; i++) {
      const char *name = NULL;
      tg_optim_state(o, i, &name);
      any_bf16 |= tg_safetensors_find(f, name)->dtype == TG_BF16;
    }
    float *wide = NULL; /* [numel] a bf16 moment widened to f32, allocated before any buffer changes */
    if (any_bf16 && numel && !(wide = tg_malloc(numel * sizeof(float))))
      st = tg_error(TG_ERR_NOMEM, "%s: out of host memory for %zu floats to widen bf16 moments", path, numel);
    for (int i = 0; i < k && st == TG_OK && numel; i++) {
      const char *name = NULL;
      float *buf = tg_optim_state(o, i, &name);
      const tg_tensor *t = tg_safetensors_find(f, name);
      const void *src = t->data;
      if (t->dtype == TG_BF16) {
        ckpt_to_f32(wide, t, numel);
        src = wide;
      }
      st = be->from_host(dev, buf, src, numel * sizeof(float));
    }
    tg_free(wide);
  }
  if (st == TG_OK) st = tg_optim_set_steps(o, optim_step);
  if (st == TG_OK && st_out) *st_out = ts;
  tg_safetensors_free(f);
  return st;
}
