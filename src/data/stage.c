/* Staging a dataset on a device: zero-copy views on the host, resident or streaming copies elsewhere, with byte counters. */
#include <string.h>
#include "backend/backend.h"
#include "tickgrad/dataset.h"

struct tg_stage {
  tg_device dev;
  tg_stage_mode mode;
  const tg_backend *be;
  int host;          /* device memory is host memory (cpu:0): views, no copies */
  int streaming;     /* streaming and not host */
  int64_t max_batch, L, f, nh, cap_rows;
  const tg_dataset *ds;
  tg_tensor x, y;    /* the feature and target tables on the device */
  void *x_dev, *y_dev; /* owned device tables (NULL when views) */
  /* batch buffers on the device: idx [max_batch, L] i64, rows [max_batch] i64, labels [max_batch] i32,
   * inst [max_batch] i64 */
  void *d_idx, *d_rows, *d_labels, *d_inst;
  /* host scratch (the device buffers themselves on the host) */
  int64_t *h_idx, *h_rows, *h_inst;
  int32_t *h_labels;
  float *h_x, *h_y;  /* streaming: [cap_rows, f] and [max_batch, nh] rows to send */
  uint64_t *stamp;   /* streaming: [n] batch tick at which a row got a slot */
  int64_t *slot_of;  /* streaming: [n] that slot */
  uint64_t tick;
  tg_stage_stats stats;
};

static void dev_free(tg_stage *st, void **p) {
  if (*p) st->be->free(st->dev, *p);
  *p = NULL;
}

static void release_dataset(tg_stage *st) {
  dev_free(st, &st->x_dev);
  dev_free(st, &st->y_dev);
  dev_free(st, &st->d_idx);
  dev_free(st, &st->d_rows);
  dev_free(st, &st->d_labels);
  dev_free(st, &st->d_inst);
  if (!st->host) {
    tg_free(st->h_idx);
    tg_free(st->h_rows);
    tg_free(st->h_inst);
    tg_free(st->h_labels);
  }
  tg_free(st->h_x);
  tg_free(st->h_y);
  tg_free(st->stamp);
  tg_free(st->slot_of);
  st->h_idx = st->h_rows = st->h_inst = NULL;
  st->h_labels = NULL;
  st->h_x = st->h_y = NULL;
  st->stamp = NULL;
  st->slot_of = NULL;
  st->ds = NULL;
}

tg_status tg_stage_new(tg_device dev, tg_stage_mode mode, int64_t max_batch, tg_stage **out) {
  char d[16];
  *out = NULL;
  const tg_backend *be = tg_backend_for(dev.kind);
  if (!be || dev.index < 0)
    return tg_error(TG_ERR_DEVICE, "stage: device %s is not available: its backend is not compiled into this build "
                    "(compiled: cpu)", tg_device_str(dev, d, sizeof d));
  if (mode != TG_STAGE_RESIDENT && mode != TG_STAGE_STREAMING)
    return tg_error(TG_ERR_INVALID, "stage: unknown mode %d", (int)mode);
  if (max_batch < 1) return tg_error(TG_ERR_INVALID, "stage: max_batch %lld (must be >= 1)", (long long)max_batch);
  tg_stage *st = tg_calloc(1, sizeof *st);
  if (!st) return tg_error(TG_ERR_NOMEM, "stage: out of memory");
  st->dev = dev;
  st->mode = mode;
  st->be = be;
  st->host = dev.kind == TG_CPU && dev.index == 0;
  st->streaming = mode == TG_STAGE_STREAMING && !st->host;
  st->max_batch = max_batch;
  *out = st;
  return TG_OK;
}

void tg_stage_free(tg_stage *st) {
  if (!st) return;
  release_dataset(st);
  tg_free(st);
}

static tg_status send(tg_stage *st, void *dst, const void *src, size_t bytes) {
  if (!bytes) return TG_OK;
  tg_status s = st->be->from_host(st->dev, dst, src, bytes);
  if (s == TG_OK) st->stats.h2d_bytes += bytes, st->stats.h2d_copies++;
  return s;
}

static tg_status dev_alloc(tg_stage *st, size_t bytes, void **p) { return st->be->alloc(st->dev, bytes ? bytes : 1, p); }

/* The device tables: views on the host, copies once (resident) or batch-sized tables (streaming). */
static tg_status stage_tables(tg_stage *st) {
  const tg_dataset *ds = st->ds;
  int64_t n = ds->fx.n, xrows = st->streaming ? st->cap_rows : n, yrows = st->streaming ? st->max_batch : n;
  int64_t xs[2] = {xrows, st->f}, ys[2] = {yrows, st->nh};
  size_t xb = (size_t)xrows * (size_t)st->f * sizeof(float), yb = (size_t)yrows * (size_t)st->nh * sizeof(float);
  void *xp = ds->fx.x, *yp = ds->y.ret;
  tg_status s = TG_OK;
  if (!st->host) {
    if ((s = dev_alloc(st, xb, &st->x_dev)) != TG_OK || (s = dev_alloc(st, yb, &st->y_dev)) != TG_OK) return s;
    xp = st->x_dev;
    yp = st->y_dev;
    if (st->streaming) {
      if ((s = st->be->fill_bytes(st->dev, xp, xb, 0)) != TG_OK || (s = st->be->fill_bytes(st->dev, yp, yb, 0)) != TG_OK)
        return s;
    } else if ((s = send(st, xp, ds->fx.x, xb)) != TG_OK || (s = send(st, yp, ds->y.ret, yb)) != TG_OK) {
      return s;
    }
  }
  if ((s = tg_tensor_view(&st->x, "features", st->dev, TG_F32, 2, xs, xp)) != TG_OK) return s;
  return tg_tensor_view(&st->y, "targets", st->dev, TG_F32, 2, ys, yp);
}

tg_status tg_stage_dataset(tg_stage *st, const tg_dataset *ds) {
  if (!st || !ds || !ds->fx.x || !ds->y.ret)
    return tg_error(TG_ERR_INVALID, "stage: no stage or no dataset (build it with tg_dataset_build)");
  release_dataset(st);
  st->ds = ds;
  st->L = ds->window;
  st->f = ds->fx.f;
  st->nh = ds->y.nh;
  st->cap_rows = st->max_batch * st->L;
  size_t B = (size_t)st->max_batch, BL = B * (size_t)st->L;
  tg_status s = TG_OK;
  if ((s = dev_alloc(st, BL * 8, &st->d_idx)) != TG_OK || (s = dev_alloc(st, B * 8, &st->d_rows)) != TG_OK ||
      (s = dev_alloc(st, B * 4, &st->d_labels)) != TG_OK || (s = dev_alloc(st, B * 8, &st->d_inst)) != TG_OK)
    goto fail;
  if (st->host) {
    st->h_idx = st->d_idx, st->h_rows = st->d_rows, st->h_labels = st->d_labels, st->h_inst = st->d_inst;
  } else {
    st->h_idx = tg_malloc(BL * 8);
    st->h_rows = tg_malloc(B * 8);
    st->h_labels = tg_malloc(B * 4);
    st->h_inst = tg_malloc(B * 8);
    if (!st->h_idx || !st->h_rows || !st->h_labels || !st->h_inst) goto nomem;
  }
  if (st->streaming) {
    size_t n = (size_t)ds->fx.n;
    st->h_x = tg_malloc(BL * (size_t)st->f * sizeof(float));
    st->h_y = tg_malloc(B * (size_t)st->nh * sizeof(float));
    st->stamp = tg_calloc(n, sizeof *st->stamp);
    st->slot_of = tg_malloc(n * sizeof *st->slot_of);
    st->tick = 0;
    if (!st->h_x || !st->h_y || !st->stamp || !st->slot_of) goto nomem;
  }
  if ((s = stage_tables(st)) != TG_OK) goto fail;
  return TG_OK;
nomem:
  s = tg_error(TG_ERR_NOMEM, "stage: out of host memory for batches of %lld windows", (long long)st->max_batch);
fail:
  release_dataset(st);
  return s;
}

const tg_tensor *tg_stage_features(const tg_stage *st) { return st && st->ds ? &st->x : NULL; }
const tg_tensor *tg_stage_targets(const tg_stage *st) { return st && st->ds ? &st->y : NULL; }
tg_stage_stats tg_stage_stats_get(const tg_stage *st) { return st->stats; }

/* Streaming: gives each distinct row of the batch a slot in the device table, packs those rows on the
 * host, and rewrites idx (and rows) to slots. */
static void pack_rows(tg_stage *st, int64_t b, int64_t *nslots) {
  const tg_dataset *ds = st->ds;
  int64_t f = st->f, nh = st->nh, used = 0;
  st->tick++;
  for (int64_t i = 0; i < b * st->L; i++) {
    int64_t r = st->h_idx[i];
    if (st->stamp[r] != st->tick) {
      st->stamp[r] = st->tick;
      st->slot_of[r] = used;
      memcpy(st->h_x + used * f, ds->fx.x + r * f, (size_t)f * sizeof(float));
      used++;
    }
    st->h_idx[i] = st->slot_of[r];
  }
  for (int64_t i = 0; i < b; i++) {
    memcpy(st->h_y + i * nh, ds->y.ret + st->h_rows[i] * nh, (size_t)nh * sizeof(float));
    st->h_rows[i] = i;
  }
  *nslots = used;
}

tg_status tg_stage_batch(tg_stage *st, const int64_t *starts, int64_t b, tg_batch *out) {
  if (!st || !st->ds) return tg_error(TG_ERR_INVALID, "stage: no dataset staged (call tg_stage_dataset first)");
  if (b < 1 || b > st->max_batch || !starts || !out)
    return tg_error(TG_ERR_INVALID, "stage: batch of %lld windows (must be 1..%lld)", (long long)b, (long long)st->max_batch);
  const tg_dataset *ds = st->ds;
  int64_t is[2] = {b, st->L};
  tg_tensor hi, hr;
  tg_tensor_view(&hi, "idx", tg_cpu(0), TG_I64, 2, is, st->h_idx);
  tg_tensor_view(&hr, "rows", tg_cpu(0), TG_I64, 1, is, st->h_rows);
  tg_status s = tg_window_index(&ds->layout, (int)st->L, starts, b, &hi, &hr);
  if (s != TG_OK) return s;
  for (int64_t i = 0; i < b; i++) {
    st->h_labels[i] = ds->y.cls[st->h_rows[i]];
    st->h_inst[i] = ds->layout.inst[st->h_rows[i]];
  }
  if (!st->host) {
    int64_t nslots = 0;
    if (st->streaming) {
      pack_rows(st, b, &nslots);
      if ((s = send(st, st->x_dev, st->h_x, (size_t)(nslots * st->f) * sizeof(float))) != TG_OK ||
          (s = send(st, st->y_dev, st->h_y, (size_t)(b * st->nh) * sizeof(float))) != TG_OK)
        return s;
    }
    if ((s = send(st, st->d_idx, st->h_idx, (size_t)(b * st->L) * 8)) != TG_OK ||
        (s = send(st, st->d_rows, st->h_rows, (size_t)b * 8)) != TG_OK ||
        (s = send(st, st->d_labels, st->h_labels, (size_t)b * 4)) != TG_OK ||
        (s = send(st, st->d_inst, st->h_inst, (size_t)b * 8)) != TG_OK)
      return s;
  }
  memset(out, 0, sizeof *out);
  out->b = b;
  tg_tensor_view(&out->idx, "batch_idx", st->dev, TG_I64, 2, is, st->d_idx);
  tg_tensor_view(&out->rows, "batch_rows", st->dev, TG_I64, 1, is, st->d_rows);
  tg_tensor_view(&out->labels, "batch_labels", st->dev, TG_I32, 1, is, st->d_labels);
  tg_tensor_view(&out->inst, "batch_inst", st->dev, TG_I64, 1, is, st->d_inst);
  st->stats.batches++;
  return TG_OK;
}

tg_status tg_stage_to_host(tg_stage *st, const tg_tensor *t, void *dst) {
  char a[16], b[16];
  if (!st || !t || !dst) return tg_error(TG_ERR_INVALID, "stage: to_host needs a stage, a tensor and a destination");
  if (!tg_device_eq(t->device, st->dev))
    return tg_error(TG_ERR_DEVICE, "stage: tensor '%s' is on %s, the stage on %s", t->name,
                    tg_device_str(t->device, a, sizeof a), tg_device_str(st->dev, b, sizeof b));
  size_t bytes = tg_nbytes(t);
  if (st->host) {
    if (bytes) memcpy(dst, t->data, bytes);
    return TG_OK;
  }
  tg_status s = bytes ? st->be->to_host(st->dev, dst, t->data, bytes) : TG_OK;
  if (s == TG_OK && bytes) st->stats.d2h_bytes += bytes, st->stats.d2h_copies++;
  return s;
}
