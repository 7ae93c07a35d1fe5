/* The parameter store: named parameters laid out in one flat value buffer and one flat gradient buffer. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "graph/backend.h"
#include "graph/graph_internal.h"
#include "graph/store_mirror.h"
#include "tickgrad/rng.h"

typedef struct store_param {
  char name[TG_NAME_MAX];
  int ndim;
  int64_t shape[TG_MAX_DIMS];
  size_t offset, numel;
  tg_init init;
} store_param;

struct tg_store {
  tg_device device;
  uint64_t seed;
  int n, cap;
  store_param *params;
  size_t numel;
  int final;
  float *values; /* [numel] on device */
  float *grads;  /* [numel] on device */
  uint16_t *mirror; /* [numel] on device: values rounded to bf16 for bf16 plans (NULL until one asks) */
  int mirror_stale; /* 1: the values may have been written since the mirror was last made from them */
};

tg_store *tg_store_new(tg_device dev, uint64_t seed) {
  tg_store *s = tg_calloc(1, sizeof *s);
  if (!s) {
    tg_error(TG_ERR_NOMEM, "store: out of host memory");
    return NULL;
  }
  s->device = dev;
  s->seed = seed;
  return s;
}

void tg_store_free(tg_store *s) {
  if (!s) return;
  const tg_backend *b = tg_backend_for(s->device.kind);
  if (b) {
    if (s->values) b->free(s->device, s->values);
    if (s->grads) b->free(s->device, s->grads);
    if (s->mirror) b->free(s->device, s->mirror);
  }
  tg_free(s->params);
  tg_free(s);
}

tg_device tg_store_device(const tg_store *s) { return s->device; }
int tg_store_count(const tg_store *s) { return s->n; }
size_t tg_store_numel(const tg_store *s) { return s->numel; }
int tg_store_is_final(const tg_store *s) { return s->final; }
/* Whoever asks for writable values may write them: the bf16 mirror is made again before it is next read. */
float *tg_store_values(tg_store *s) {
  s->mirror_stale = 1;
  return s->values;
}
const float *tg_store_values_read(const tg_store *s) { return s->values; }
float *tg_store_grads(tg_store *s) { return s->grads; }

float *tg_store_values_unmarked(tg_store *s) { return s->values; }
uint16_t *tg_store_mirror(const tg_store *s) { return s->mirror; }

tg_status tg_store_mirror_alloc(tg_store *s, const char *graph) {
  if (s->mirror || !s->numel) return TG_OK;
  char dev[16];
  size_t bytes = s->numel * sizeof(uint16_t);
  tg_status st = tg_backend_for(s->device.kind)->alloc(s->device, bytes, (void **)&s->mirror);
  if (st != TG_OK) {
    s->mirror = NULL;
    return tg_error(st, "graph '%s': out of memory on %s for the bf16 mirror of its store's %zu parameter values "
                    "(%zu bytes) that a bf16 plan reads: %s", graph, tg_device_str(s->device, dev, sizeof dev),
                    s->numel, bytes, tg_last_error());
  }
  s->mirror_stale = 1;
  return TG_OK;
}

tg_status tg_store_mirror_refresh(tg_store *s) {
  if (!s->mirror || !s->mirror_stale) return TG_OK;
  tg_status st = tg_backend_for(s->device.kind)->round_bf16(s->device, s->mirror, s->values, s->numel);
  if (st == TG_OK) s->mirror_stale = 0;
  return st;
}

tg_param_info tg_store_param(const tg_store *s, int i) {
  const store_param *p = &s->params[i];
  return (tg_param_info){p->name, p->ndim, p->shape, p->offset, p->numel};
}

int tg_store_find(const tg_store *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->params[i].name, name) == 0) return i;
  return -1;
}

tg_tensor tg_store_tensor(tg_store *s, int i, int grads) {
  tg_tensor t;
  if (!grads) s->mirror_stale = 1; /* a writable view of the values */
  const store_param *p = &s->params[i];
  float *base = grads ? s->grads : s->values;
  tg_tensor_view(&t, p->name, s->device, TG_F32, p->ndim, p->shape, base ? base + p->offset : NULL);
  return t;
}

int tg_store_declare(tg_store *s, const char *name, int ndim, const int64_t *shape, tg_init init,
                     int *index_out) {
  char want[64], have[64];
  tg_tensor probe;
  if (tg_tensor_view(&probe, name, s->device, TG_F32, ndim, shape, NULL) != TG_OK) return 0;
  if (strlen(name) >= TG_NAME_MAX) {
    tg_error(TG_ERR_INVALID, "param '%s': name longer than %d bytes", name, TG_NAME_MAX - 1);
    return 0;
  }
  int i = tg_store_find(s, name);
  if (i >= 0) {
    tg_tensor old = tg_store_tensor(s, i, 0);
    if (!tg_shape_eq(&old, &probe)) {
      tg_error(TG_ERR_SHAPE, "param '%s': declared again as %s but it is %s", name,
               tg_shape_str(&probe, want, sizeof want), tg_shape_str(&old, have, sizeof have));
      return 0;
    }
    *index_out = i;
    return 1;
  }
  if (init.kind == TG_INIT_ORTHOGONAL && ndim < 2) {
    tg_error(TG_ERR_SHAPE, "param '%s': orthogonal initialisation needs 2 or more dims, got %s", name,
             tg_shape_str(&probe, want, sizeof want));
    return 0;
  }
  if (s->final) {
    tg_error(TG_ERR_INVALID,
             "param '%s': the store is already allocated (a graph was planned); declare every "
             "parameter before the first plan",
             name);
    return 0;
  }
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 16;
    store_param *np = tg_malloc((size_t)cap * sizeof *np);
    if (!np) {
      tg_error(TG_ERR_NOMEM, "param '%s': out of host memory", name);
      return 0;
    }
    if (s->n) memcpy(np, s->params, (size_t)s->n * sizeof *np);
    tg_free(s->params);
    s->params = np;
    s->cap = cap;
  }
  store_param *p = &s->params[s->n];
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "%s", name);
  p->ndim = ndim;
  memcpy(p->shape, shape, (size_t)ndim * sizeof *shape);
  p->numel = (size_t)tg_numel(&probe);
  /* 16-float alignment per parameter keeps every segment 64-byte aligned */
  p->offset = (s->numel + 15) & ~(size_t)15;
  p->init = init;
  s->numel = p->offset + p->numel;
  *index_out = s->n++;
  return 1;
}

/* Initial value of element e of parameter p. */
static float init_value(const tg_store *s, int pi, size_t e) {
  const store_param *p = &s->params[pi];
  int64_t fan_in = p->ndim ? p->shape[p->ndim - 1] : 1;
  int64_t fan_out = p->ndim >= 2 ? p->shape[p->ndim - 2] : 1;
  float u = tg_rng_uniform(s->seed, (uint64_t)pi, e);
  switch (p->init.kind) {
    case TG_INIT_ZEROS: return 0.0f;
    case TG_INIT_ONES: return 1.0f;
    case TG_INIT_CONST: return p->init.a;
    case TG_INIT_UNIFORM: return p->init.a + (p->init.b - p->init.a) * u;
    case TG_INIT_NORMAL: return p->init.a + p->init.b * tg_rng_normal(s->seed, (uint64_t)pi, e);
    case TG_INIT_FAN_IN: {
      float bound = 1.0f / sqrtf((float)(fan_in > 0 ? fan_in : 1));
      return -bound + 2.0f * bound * u;
    }
    case TG_INIT_XAVIER: {
      float bound = sqrtf(6.0f / (float)(fan_in + fan_out > 0 ? fan_in + fan_out : 1));
      return -bound + 2.0f * bound * u;
    }
    case TG_INIT_LOG_UNIFORM: return (float)log((double)p->init.a + ((double)p->init.b - p->init.a) * u);
    case TG_INIT_ORTHOGONAL: return 0.0f; /* the whole matrix at once: init_orthogonal */
    case TG_INIT_DT_BIAS: { /* softplus^-1(y) = y + log(-expm1(-y)) */
      double la = log((double)p->init.a), lb = log((double)p->init.b);
      double dt = fmax(exp(la + (lb - la) * u), 1e-4);
      return (float)(dt + log(-expm1(-dt)));
    }
  }
  return 0.0f;
}

/* torch.nn.init.orthogonal_: G [rows, cols] Gaussian (element e from stream pi, counter e); the
 * tall one of G and G^T, M [m, n] with m >= n, is factored M = QR with R's diagonal positive (what
 * torch's sign correction gives), here by Gram-Schmidt with a second orthogonalisation pass in
 * float64; W = gain * Q (or Q^T when rows < cols). dst: [rows * cols]. */
static tg_status init_orthogonal(const tg_store *s, int pi, float *dst) {
  const store_param *p = &s->params[pi];
  int64_t rows = p->shape[0], cols = rows > 0 ? (int64_t)p->numel / rows : 0;
  int tall = rows >= cols;
  int64_t m = tall ? rows : cols, n = tall ? cols : rows;
  if (m * n == 0) return TG_OK;
  double *q = tg_malloc((size_t)(m * n) * sizeof *q); /* [n, m]: column j of M at q + j*m */
  if (!q) return tg_error(TG_ERR_NOMEM, "param '%s': no host memory for its orthogonal initialisation", p->name);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      double v = tg_rng_normal(s->seed, (uint64_t)pi, (uint64_t)(r * cols + c));
      if (tall) q[c * m + r] = v; /* M = G: column c */
      else q[r * m + c] = v;      /* M = G^T: column r */
    }
  for (int64_t j = 0; j < n; j++) {
    double *v = q + j * m; /* [m] */
    for (int pass = 0; pass < 2; pass++)
      for (int64_t k = 0; k < j; k++) {
        const double *qk = q + k * m;
        double d = 0.0;
        for (int64_t i = 0; i < m; i++) d += qk[i] * v[i];
        for (int64_t i = 0; i < m; i++) v[i] -= d * qk[i];
      }
    double nn = 0.0;
    for (int64_t i = 0; i < m; i++) nn += v[i] * v[i];
    double inv = nn > 0.0 ? 1.0 / sqrt(nn) : 0.0;
    for (int64_t i = 0; i < m; i++) v[i] *= inv;
  }
  double gain = p->init.a;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++)
      dst[r * cols + c] = (float)(gain * (tall ? q[c * m + r] : q[r * m + c]));
  tg_free(q);
  return TG_OK;
}

tg_status tg_store_finalize(tg_store *s) {
  if (s->final) return TG_OK;
  char dev[16];
  const tg_backend *b = tg_backend_for(s->device.kind);
  if (!b)
    return tg_error(TG_ERR_DEVICE, "store: backend for %s is not compiled into this build",
                    tg_device_str(s->device, dev, sizeof dev));
  size_t bytes = s->numel * sizeof(float);
  tg_status st = b->alloc(s->device, bytes, (void **)&s->values);
  if (st != TG_OK) return st;
  st = b->alloc(s->device, bytes, (void **)&s->grads);
  if (st != TG_OK) {
    b->free(s->device, s->values);
    s->values = NULL;
    return st;
  }
  float *host = tg_calloc(s->numel ? s->numel : 1, sizeof(float));
  if (!host) st = tg_error(TG_ERR_NOMEM, "store: no host memory to initialise %zu floats", s->numel);
  if (st == TG_OK) {
    for (int i = 0; i < s->n && st == TG_OK; i++) {
      if (s->params[i].init.kind == TG_INIT_ORTHOGONAL) {
        st = init_orthogonal(s, i, host + s->params[i].offset);
        continue;
      }
      for (size_t e = 0; e < s->params[i].numel; e++)
        host[s->params[i].offset + e] = init_value(s, i, e);
    }
    if (st == TG_OK) st = b->from_host(s->device, s->values, host, bytes);
  }
  tg_free(host);
  if (st == TG_OK) st = b->fill_f32(s->device, s->grads, s->numel, 0.0f);
  if (st != TG_OK) { /* leave the store as it was: nothing allocated */
    b->free(s->device, s->values);
    b->free(s->device, s->grads);
    s->values = s->grads = NULL;
    return st;
  }
  s->final = 1;
  s->mirror_stale = 1;
  return TG_OK;
}

tg_status tg_store_zero_grads(tg_store *s) {
  if (!s->final) return tg_error(TG_ERR_INVALID, "store: zero_grads before the store is allocated");
  return tg_backend_for(s->device.kind)->fill_f32(s->device, s->grads, s->numel, 0.0f);
}
