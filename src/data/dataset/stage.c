/* Staging a dataset on a device: zero-copy views on the host, resident or double-buffered streaming copies elsewhere, batches computed on the device, byte counters. */
#include <string.h>
#include "tickgrad/device.h"
#include "graph/backend.h"
#include "base/shuffle.h"
#include "data/dataset/sampler_take.h"
#include "tickgrad/dataset.h"

/* Host buffers a batch is assembled in: on cpu:0 the device buffers themselves; for CUDA streaming
 * two sides of pinned memory used in turn (batch k fills side k % 2); otherwise one side. */
typedef struct stage_side {
  int64_t *idx;    /* [max_batch, L] */
  int64_t *rows;   /* [max_batch] */
  int32_t *labels; /* [max_batch] */
  int64_t *inst;   /* [max_batch] */
  float *x;        /* streaming: [max_batch*L, f] the distinct feature rows to send */
  float *y;        /* streaming: [max_batch, nh] the target rows to send */
  void *block;     /* the one allocation the members above point into (NULL on cpu:0) */
  void *fence;      /* asynchronous streaming: passes once this side's copies have run */
} stage_side;

/* Splits whose offsets stay on the device at once: an epoch alternates the training and validation splits. */
#define SPLIT_SLOTS 2

/* One split's offsets on the device, and their host copy to recognise the split by. */
typedef struct split_slot {
  void *dev;       /* [2k+1] i64: prefix [k+1] then begin [k] (k: the split's runs) */
  int64_t *host;   /* [2k+1] the same on the host */
  int runs, cap;   /* k, and the runs dev and host have room for */
  int up;          /* 1: dev and host hold a split */
  unsigned used;   /* split_clock at its last use */
} split_slot;

struct tg_stage {
  tg_device dev;
  tg_stage_mode mode;
  const tg_backend *be;
  int host;          /* device memory is host memory (cpu:0): views, no copies */
  int streaming;     /* streaming and not host */
  int async;         /* streaming on CUDA: copies on the copy stream from pinned sides */
  int64_t max_batch, L, f, nh, cap_rows; /* cap_rows = max_batch * L, the rows of one half */
  const tg_dataset *ds;
  tg_tensor x, y;    /* the feature and target tables on the device */
  void *x_dev, *y_dev; /* owned device tables (NULL when views); streaming: two halves each */
  /* batch buffers on the device: idx [max_batch, L] i64, rows [max_batch] i64, labels [max_batch] i32,
   * inst [max_batch] i64 */
  void *d_idx, *d_rows, *d_labels, *d_inst;
  stage_side side[2]; /* side[1] only when async */
  int64_t *starts;   /* [max_batch] starts taken from a sampler on the host (not cpu:0) */
  uint64_t *stamp;   /* streaming: [n] batch tick at which a row got a slot */
  int64_t *slot_of;  /* streaming: [n] that slot */
  uint64_t tick;     /* streaming: batches so far; batch `tick` uses half tick % 2 */
  /* tg_stage_next on CUDA (resident): the index tables on the device */
  void *d_lrows;     /* [n] i64 layout position -> row */
  void *d_linst;     /* [n] i32 row -> instrument index */
  void *d_cls;       /* [n] i32 row -> direction class */
  split_slot split[SPLIT_SLOTS]; /* the splits' offsets last used (training and validation stay resident) */
  unsigned split_clock; /* uses so far, for the least recently used slot */
  int tables_up;     /* 1: d_lrows, d_linst, d_cls hold their values */
  tg_stage_stats stats;
};

static void dev_free(tg_stage *st, void **p) {
  if (*p) st->be->free(st->dev, *p);
  *p = NULL;
}

static void side_free(tg_stage *st, stage_side *sd) {
  if (st->async) {
    if (sd->fence) st->be->fence_wait(sd->fence); /* its copies read the pinned block */
    st->be->fence_free(sd->fence);
    if (sd->block) st->be->host_free(sd->block);
  }
  if (!st->async) tg_free(sd->block);
  memset(sd, 0, sizeof *sd);
}

static void release_dataset(tg_stage *st) {
  for (int h = 0; h < 2; h++) side_free(st, &st->side[h]);
  dev_free(st, &st->x_dev);
  dev_free(st, &st->y_dev);
  dev_free(st, &st->d_idx);
  dev_free(st, &st->d_rows);
  dev_free(st, &st->d_labels);
  dev_free(st, &st->d_inst);
  dev_free(st, &st->d_lrows);
  dev_free(st, &st->d_linst);
  dev_free(st, &st->d_cls);
  for (int i = 0; i < SPLIT_SLOTS; i++) {
    dev_free(st, &st->split[i].dev);
    tg_free(st->split[i].host);
  }
  memset(st->split, 0, sizeof st->split);
  tg_free(st->starts);
  tg_free(st->stamp);
  tg_free(st->slot_of);
  st->starts = st->slot_of = NULL;
  st->stamp = NULL;
  st->tables_up = 0;
  st->tick = 0;
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
  st->host = tg_device_is_host(dev);
  st->streaming = mode == TG_STAGE_STREAMING && !st->host;
  st->async = st->streaming && be->copy_async != NULL;
  st->max_batch = max_batch;
  *out = st;
  return TG_OK;
}

void tg_stage_free(tg_stage *st) {
  if (!st) return;
  release_dataset(st);
  tg_free(st);
}

/* Counts one copy to the device of bytes (none when bytes is 0). */
static void count_h2d(tg_stage *st, size_t bytes) {
  if (bytes) st->stats.h2d_bytes += bytes, st->stats.h2d_copies++;
}

static tg_status send(tg_stage *st, void *dst, const void *src, size_t bytes) {
  if (!bytes) return TG_OK;
  tg_status s = st->be->from_host(st->dev, dst, src, bytes);
  if (s == TG_OK) count_h2d(st, bytes);
  return s;
}

static tg_status dev_alloc(tg_stage *st, size_t bytes, void **p) { return st->be->alloc(st->dev, bytes ? bytes : 1, p); }

/* The device tables: views on the host, copies once (resident) or two batch-sized halves (streaming). */
static tg_status stage_tables(tg_stage *st) {
  const tg_dataset *ds = st->ds;
  int64_t n = ds->fx.n, xrows = st->streaming ? 2 * st->cap_rows : n, yrows = st->streaming ? 2 * st->max_batch : n;
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

/* Carves a side's buffers out of one block of host memory (pinned when async). */
static tg_status side_alloc(tg_stage *st, stage_side *sd) {
  size_t B = (size_t)st->max_batch, BL = B * (size_t)st->L;
  size_t xn = st->streaming ? BL * (size_t)st->f : 0, yn = st->streaming ? B * (size_t)st->nh : 0;
  size_t bytes = BL * 8 + B * 8 + B * 8 + (xn + yn) * sizeof(float) + B * 4; /* 8-byte members first */
  if (st->async) {
    tg_status s = st->be->host_alloc(bytes, &sd->block);
    if (s == TG_OK) s = st->be->fence_new(st->dev.index, &sd->fence);
    if (s != TG_OK) return s;
  }
  if (!st->async && !(sd->block = tg_malloc(bytes)))
    return tg_error(TG_ERR_NOMEM, "stage: out of host memory for batches of %lld windows", (long long)st->max_batch);
  char *p = sd->block;
  sd->idx = (int64_t *)p, p += BL * 8;
  sd->rows = (int64_t *)p, p += B * 8;
  sd->inst = (int64_t *)p, p += B * 8;
  sd->x = st->streaming ? (float *)p : NULL, p += xn * sizeof(float);
  sd->y = st->streaming ? (float *)p : NULL, p += yn * sizeof(float);
  sd->labels = (int32_t *)p;
  return TG_OK;
}

/* Host memory a batch is assembled in: the device buffers on cpu:0, else one side (two when async),
 * and the streaming row maps. */
static tg_status host_buffers(tg_stage *st) {
  if (st->host) {
    stage_side *sd = &st->side[0];
    sd->idx = st->d_idx, sd->rows = st->d_rows, sd->labels = st->d_labels, sd->inst = st->d_inst;
    return TG_OK;
  }
  tg_status s = TG_OK;
  for (int h = 0; h < 1 + st->async && s == TG_OK; h++) s = side_alloc(st, &st->side[h]);
  if (s != TG_OK) return s;
  size_t n = (size_t)st->ds->fx.n;
  st->starts = tg_malloc((size_t)st->max_batch * sizeof *st->starts);
  if (st->streaming) {
    st->stamp = tg_calloc(n, sizeof *st->stamp);
    st->slot_of = tg_malloc(n * sizeof *st->slot_of);
  }
  if (!st->starts || (st->streaming && (!st->stamp || !st->slot_of)))
    return tg_error(TG_ERR_NOMEM, "stage: out of host memory for the row maps of %lld rows", (long long)n);
  return TG_OK;
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
      (s = dev_alloc(st, B * 4, &st->d_labels)) != TG_OK || (s = dev_alloc(st, B * 8, &st->d_inst)) != TG_OK ||
      (s = host_buffers(st)) != TG_OK || (s = stage_tables(st)) != TG_OK)
    goto fail;
  /* the first copies into the halves come after their zero fill on the compute stream */
  if (st->async && (s = st->be->copy_waits_compute(st->dev.index)) != TG_OK) goto fail;
  return TG_OK;
fail:
  release_dataset(st);
  return s;
}

const tg_tensor *tg_stage_features(const tg_stage *st) { return st && st->ds ? &st->x : NULL; }
const tg_tensor *tg_stage_targets(const tg_stage *st) { return st && st->ds ? &st->y : NULL; }
tg_stage_stats tg_stage_stats_get(const tg_stage *st) { return st->stats; }

/* Streaming: gives each distinct row of the batch a slot in half `half` of the device table, packs
 * those rows into the side, and rewrites idx (and rows) to slots of that half. */
static void pack_rows(tg_stage *st, stage_side *sd, int64_t b, int half, int64_t *nslots) {
  const tg_dataset *ds = st->ds;
  int64_t f = st->f, nh = st->nh, used = 0, xbase = half * st->cap_rows, ybase = half * st->max_batch;
  st->tick++;
  for (int64_t i = 0; i < b * st->L; i++) {
    int64_t r = sd->idx[i];
    if (st->stamp[r] != st->tick) {
      st->stamp[r] = st->tick;
      st->slot_of[r] = xbase + used;
      memcpy(sd->x + used * f, ds->fx.x + r * f, (size_t)f * sizeof(float));
      used++;
    }
    sd->idx[i] = st->slot_of[r];
  }
  for (int64_t i = 0; i < b; i++) {
    memcpy(sd->y + i * nh, ds->y.ret + sd->rows[i] * nh, (size_t)nh * sizeof(float));
    sd->rows[i] = ybase + i;
  }
  *nslots = used;
}

/* Synchronous copies through the backend: the streamed rows into half `half`, then the batch. */
static tg_status send_sync(tg_stage *st, const stage_side *sd, int64_t b, int64_t nslots, int half) {
  tg_status s = TG_OK;
  if (st->streaming) {
    float *xh = (float *)st->x_dev + half * st->cap_rows * st->f, *yh = (float *)st->y_dev + half * st->max_batch * st->nh;
    if ((s = send(st, xh, sd->x, (size_t)(nslots * st->f) * sizeof(float))) != TG_OK ||
        (s = send(st, yh, sd->y, (size_t)(b * st->nh) * sizeof(float))) != TG_OK)
      return s;
  }
  if ((s = send(st, st->d_idx, sd->idx, (size_t)(b * st->L) * 8)) != TG_OK ||
      (s = send(st, st->d_rows, sd->rows, (size_t)b * 8)) != TG_OK ||
      (s = send(st, st->d_labels, sd->labels, (size_t)b * 4)) != TG_OK ||
      (s = send(st, st->d_inst, sd->inst, (size_t)b * 8)) != TG_OK)
    return s;
  return TG_OK;
}

static tg_status copy_on_copy_stream(tg_stage *st, void *dst, const void *src, size_t bytes) {
  tg_status s = st->be->copy_async(st->dev.index, dst, src, bytes);
  if (s == TG_OK) count_h2d(st, bytes);
  return s;
}

static tg_status copy_on_compute(tg_stage *st, void *dst, const void *src, size_t bytes) {
  tg_status s = st->be->copy_on_compute(st->dev.index, dst, src, bytes);
  if (s == TG_OK) count_h2d(st, bytes);
  return s;
}

/* Asynchronous streaming (CUDA), batch k on side and half h = k % 2. The copy stream already waits for the compute
 * queued by the end of batch k - 1's call, which holds all the work of batch k - 2, the last reader
 * of half h, and none of batch k - 1's: so the rows go up while batch k - 1 computes. The compute
 * stream then waits for them, and the batch's indices follow on the compute stream (after the step
 * that reads the fixed batch buffers). The side's fence marks when its pinned memory is free again;
 * the copy stream is then ordered behind everything queued so far, for batch k + 1. */
static tg_status send_async(tg_stage *st, stage_side *sd, int64_t b, int64_t nslots, int half) {
  int dev = st->dev.index;
  float *xh = (float *)st->x_dev + half * st->cap_rows * st->f, *yh = (float *)st->y_dev + half * st->max_batch * st->nh;
  tg_status s = TG_OK;
  if ((s = copy_on_copy_stream(st, xh, sd->x, (size_t)(nslots * st->f) * sizeof(float))) != TG_OK ||
      (s = copy_on_copy_stream(st, yh, sd->y, (size_t)(b * st->nh) * sizeof(float))) != TG_OK ||
      (s = st->be->compute_waits_copy(dev)) != TG_OK ||
      (s = copy_on_compute(st, st->d_idx, sd->idx, (size_t)(b * st->L) * 8)) != TG_OK ||
      (s = copy_on_compute(st, st->d_rows, sd->rows, (size_t)b * 8)) != TG_OK ||
      (s = copy_on_compute(st, st->d_labels, sd->labels, (size_t)b * 4)) != TG_OK ||
      (s = copy_on_compute(st, st->d_inst, sd->inst, (size_t)b * 8)) != TG_OK ||
      (s = st->be->fence_record(sd->fence)) != TG_OK)
    return s;
  return st->be->copy_waits_compute(dev);
}

/* The batch views over the fixed device buffers. */
static void batch_out(tg_stage *st, int64_t b, tg_batch *out) {
  int64_t is[2] = {b, st->L};
  memset(out, 0, sizeof *out);
  out->b = b;
  tg_tensor_view(&out->idx, "batch_idx", st->dev, TG_I64, 2, is, st->d_idx);
  tg_tensor_view(&out->rows, "batch_rows", st->dev, TG_I64, 1, is, st->d_rows);
  tg_tensor_view(&out->labels, "batch_labels", st->dev, TG_I32, 1, is, st->d_labels);
  tg_tensor_view(&out->inst, "batch_inst", st->dev, TG_I64, 1, is, st->d_inst);
  st->stats.batches++;
}

tg_status tg_stage_batch(tg_stage *st, const int64_t *starts, int64_t b, tg_batch *out) {
  if (!st || !st->ds) return tg_error(TG_ERR_INVALID, "stage: no dataset staged (call tg_stage_dataset first)");
  if (b < 1 || b > st->max_batch || !starts || !out)
    return tg_error(TG_ERR_INVALID, "stage: batch of %lld windows (must be 1..%lld)", (long long)b, (long long)st->max_batch);
  const tg_dataset *ds = st->ds;
  int half = st->streaming ? (int)(st->tick & 1) : 0;
  stage_side *sd = &st->side[st->async ? half : 0];
  tg_status s = TG_OK;
  if (st->async && (s = st->be->fence_wait(sd->fence)) != TG_OK) return s; /* batch k - 2's copies */
  int64_t is[2] = {b, st->L};
  tg_tensor hi, hr;
  tg_tensor_view(&hi, "idx", tg_cpu(0), TG_I64, 2, is, sd->idx);
  tg_tensor_view(&hr, "rows", tg_cpu(0), TG_I64, 1, is, sd->rows);
  if ((s = tg_window_index(&ds->layout, (int)st->L, starts, b, &hi, &hr)) != TG_OK) return s;
  for (int64_t i = 0; i < b; i++) {
    sd->labels[i] = ds->y.cls[sd->rows[i]];
    sd->inst[i] = ds->layout.inst[sd->rows[i]];
  }
  if (!st->host) {
    int64_t nslots = 0;
    if (st->streaming) pack_rows(st, sd, b, half, &nslots);
    s = st->async ? send_async(st, sd, b, nslots, half) : send_sync(st, sd, b, nslots, half);
    if (s != TG_OK) return s;
  }
  batch_out(st, b, out);
  return TG_OK;
}

/* TG_ERR_INVALID unless every run of s's split lies inside one instrument of the staged dataset and its starts add
 * up to the sampler's count, so evaluating the sampler's order on a device never reads past the tables. */
static tg_status check_sampler(const tg_stage *st, const tg_sampler *s) {
  const tg_layout *lay = &st->ds->layout;
  if (!s->prefix || !s->begin) return tg_error(TG_ERR_INVALID, "stage next: the sampler is not initialised (tg_sampler_init)");
  if (s->runs < 1 || s->prefix[s->runs] != s->count)
    return tg_error(TG_ERR_INVALID, "stage next: the sampler's %d runs of starts hold %lld windows, not its count %lld "
                    "(make the sampler from this dataset's splits)", s->runs,
                    (long long)(s->runs > 0 ? s->prefix[s->runs] : 0), (long long)s->count);
  for (int r = 0; r < s->runs; r++) {
    int64_t m = s->prefix[r + 1] - s->prefix[r], first = s->begin[r], last = first + m - 1;
    if (m < 0 || (m > 0 && (first < 0 || first >= lay->n)))
      return tg_error(TG_ERR_INVALID, "stage next: the sampler's run %d (%lld windows from position %lld) is outside "
                      "the staged dataset, whose last instrument %d ends at position %lld (make the sampler from this "
                      "dataset's splits)", r, (long long)m, (long long)first, lay->k - 1, (long long)lay->n - 1);
    if (m == 0) continue;
    int j = lay->inst[lay->rows[first]];
    if (last + st->L > lay->seg[j + 1])
      return tg_error(TG_ERR_INVALID, "stage next: the sampler's %lld windows of %lld bars starting at positions "
                      "%lld..%lld leave instrument %d's positions %lld..%lld in the staged dataset (make the "
                      "sampler from this dataset's splits)", (long long)m, (long long)st->L, (long long)first,
                      (long long)last, j, (long long)lay->seg[j], (long long)lay->seg[j + 1] - 1);
  }
  return TG_OK;
}

/* cpu:0: the batch entries computed in place, in the host's batch buffers. */
static tg_status next_on_host(tg_stage *st, tg_sampler *s, int64_t b, tg_batch *out, int64_t *got) {
  const tg_dataset *ds = st->ds;
  uint64_t epoch = 0, first = 0;
  tg_status e = tg_sampler_take(s, b, &epoch, &first, got);
  if (e != TG_OK) return e;
  tg_window_tables t = {ds->layout.rows, ds->layout.inst, ds->y.cls, s->prefix, s->begin,
                        s->runs, s->shuffle, s->count, s->seed, st->L};
  tg_batch_bufs o = {st->d_idx, st->d_rows, st->d_labels, st->d_inst};
  for (int64_t i = 0; i < *got; i++) tg_batch_entry(&t, epoch, first, i, &o);
  batch_out(st, *got, out);
  return TG_OK;
}

/* A device with a staging kernel, resident: the dataset's index tables, once per staging (counted copies). */
static tg_status upload_tables(tg_stage *st) {
  const tg_dataset *ds = st->ds;
  size_t n = (size_t)ds->layout.n;
  tg_status e = TG_OK;
  if (!st->tables_up) {
    if ((!st->d_lrows && (e = dev_alloc(st, n * 8, &st->d_lrows)) != TG_OK) ||
        (!st->d_linst && (e = dev_alloc(st, n * 4, &st->d_linst)) != TG_OK) ||
        (!st->d_cls && (e = dev_alloc(st, n * 4, &st->d_cls)) != TG_OK) ||
        (e = send(st, st->d_lrows, ds->layout.rows, n * 8)) != TG_OK ||
        (e = send(st, st->d_linst, ds->layout.inst, n * 4)) != TG_OK ||
        (e = send(st, st->d_cls, ds->y.cls, n * 4)) != TG_OK)
      return e;
    st->tables_up = 1;
  }
  return TG_OK;
}

/* 1 when slot sl holds sampler s's split. */
static int split_is(const split_slot *sl, const tg_sampler *s) {
  size_t k = (size_t)s->runs;
  return sl->up && sl->runs == s->runs && memcmp(sl->host, s->prefix, (k + 1) * 8) == 0 &&
         memcmp(sl->host + k + 1, s->begin, k * 8) == 0;
}

/* s's split offsets on the device in *out ([2k+1]: prefix, then begin): a resident slot's, or uploaded into the least
 * recently used slot (counted copies). */
static tg_status split_on_device(tg_stage *st, const tg_sampler *s, const int64_t **out) {
  size_t k = (size_t)s->runs, ns = 2 * k + 1;
  split_slot *sl = &st->split[0];
  for (int i = 0; i < SPLIT_SLOTS; i++) {
    if (split_is(&st->split[i], s)) {
      sl = &st->split[i];
      sl->used = ++st->split_clock;
      *out = sl->dev;
      return TG_OK;
    }
    if (st->split[i].used < sl->used) sl = &st->split[i];
  }
  tg_status e = TG_OK;
  if (s->runs > sl->cap) { /* room for this split's runs */
    dev_free(st, &sl->dev);
    tg_free(sl->host);
    memset(sl, 0, sizeof *sl);
  }
  if (!sl->dev && (e = dev_alloc(st, ns * 8, &sl->dev)) != TG_OK) return e;
  if (!sl->host && !(sl->host = tg_malloc(ns * 8)))
    return tg_error(TG_ERR_NOMEM, "stage next: out of host memory for the offsets of %zu runs of window starts", k);
  if (sl->cap < s->runs) sl->cap = s->runs;
  memcpy(sl->host, s->prefix, (k + 1) * 8);
  memcpy(sl->host + k + 1, s->begin, k * 8);
  sl->runs = s->runs;
  sl->up = (e = send(st, sl->dev, sl->host, ns * 8)) == TG_OK;
  sl->used = ++st->split_clock;
  *out = sl->dev;
  return e;
}

/* A device with a staging kernel, resident: one kernel on the compute stream computes the batch from its tables. */
static tg_status next_on_device(tg_stage *st, tg_sampler *s, int64_t b, tg_batch *out, int64_t *got) {
  const int64_t *split = NULL; /* [2k+1] */
  tg_status e = upload_tables(st);
  if (e == TG_OK) e = split_on_device(st, s, &split);
  if (e != TG_OK) return e;
  uint64_t epoch0 = s->epoch, cursor0 = s->cursor, epoch = 0, first = 0;
  if ((e = tg_sampler_take(s, b, &epoch, &first, got)) != TG_OK) return e;
  int k = s->runs;
  tg_window_tables t = {st->d_lrows, st->d_linst, st->d_cls, split, split + k + 1, k, s->shuffle, s->count, s->seed, st->L};
  tg_batch_bufs o = {st->d_idx, st->d_rows, st->d_labels, st->d_inst};
  if ((e = st->be->stage_batch(st->dev.index, &t, epoch, first, *got, &o)) != TG_OK) {
    s->epoch = epoch0, s->cursor = cursor0; /* nothing was taken */
    return e;
  }
  batch_out(st, *got, out);
  return TG_OK;
}

tg_status tg_stage_next(tg_stage *st, tg_sampler *s, int64_t b, tg_batch *out, int64_t *got) {
  if (!st || !st->ds) return tg_error(TG_ERR_INVALID, "stage next: no dataset staged (call tg_stage_dataset first)");
  if (!s || !out || !got || b < 1 || b > st->max_batch)
    return tg_error(TG_ERR_INVALID, "stage next: batch of %lld windows (must be 1..%lld, with a sampler, a batch and "
                    "a count to fill)", (long long)b, (long long)st->max_batch);
  tg_status e = check_sampler(st, s);
  if (e != TG_OK) return e;
  if (st->host) return next_on_host(st, s, b, out, got);
  if (st->be->stage_batch && !st->streaming) return next_on_device(st, s, b, out, got);
  if ((e = tg_sampler_next(s, st->starts, b, got)) != TG_OK) return e;
  return tg_stage_batch(st, st->starts, *got, out);
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
