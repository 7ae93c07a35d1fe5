/* safetensors files, weight checkpoints and training-state checkpoints; every write is atomic. */
#ifndef TICKGRAD_CHECKPOINT_H
#define TICKGRAD_CHECKPOINT_H

#include "tickgrad/graph.h"
#include "tickgrad/optim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_kv {
  const char *key;
  const char *value;
} tg_kv;

/* Writes tensors (data on the host; f32, i32, i64, or bf16 as raw uint16 bits, stored as safetensors' "BF16")
 * and string metadata to path: a temporary file in the same
 * folder is written, flushed (fsync) and renamed over path, so path is either the old file or the
 * complete new one. Names must be unique. */
tg_status tg_safetensors_save(const char *path, int n, const tg_tensor *tensors, int n_meta,
                              const tg_kv *meta);

/* A parsed file: owns its bytes; tensors point into them (device cpu:0). F32, I32, I64 and BF16 (dtype TG_BF16,
 * raw uint16 bits) are read; any other dtype is TG_ERR_UNSUPPORTED naming the tensor. */
typedef struct tg_safetensors tg_safetensors;

tg_status tg_safetensors_load(const char *path, tg_safetensors **out);
/* Parses bytes[0..len) (copied). what names the source in errors (a path). */
tg_status tg_safetensors_parse(const void *bytes, size_t len, const char *what,
                               tg_safetensors **out);
int tg_safetensors_count(const tg_safetensors *f);
const tg_tensor *tg_safetensors_at(const tg_safetensors *f, int i);
const tg_tensor *tg_safetensors_find(const tg_safetensors *f, const char *name);
const char *tg_safetensors_meta(const tg_safetensors *f, const char *key); /* NULL if absent */
void tg_safetensors_free(tg_safetensors *f);

/* Weights: every parameter of the store by name, saved as f32. Load requires the same names and shapes, each
 * tensor F32 or BF16 (widened to f32 exactly; missing, extra, mis-shaped or other-typed tensors are errors
 * naming them) and changes nothing on error. */
tg_status tg_store_save(tg_store *s, const char *path);
tg_status tg_store_load(tg_store *s, const char *path);

/* What else a resumed run needs. */
typedef struct tg_train_state {
  int64_t step;
  uint64_t rng_seed, rng_offset;
  int64_t epoch, cursor; /* data position */
} tg_train_state;

/* Optimizer moments, step and cursor. Load checks the optimizer kind and buffer sizes (moments F32, or BF16
 * widened exactly) and changes nothing on error. */
tg_status tg_train_state_save(const char *path, tg_optim *o, const tg_train_state *st);
tg_status tg_train_state_load(const char *path, tg_optim *o, tg_train_state *st);

#ifdef __cplusplus
}
#endif
#endif
