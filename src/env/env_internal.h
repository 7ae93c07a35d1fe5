/* The tg_env object behind include/tickgrad/rl.h: a per-kind table of functions and the shared header every environment starts with. */
#ifndef TG_RL_ENV_INTERNAL_H
#define TG_RL_ENV_INTERNAL_H

#include <string.h>
#include "tickgrad/rl.h"

/* One environment kind. env.c checks every argument (buffers, action ranges, reset before step)
 * before it calls these, so they only compute; none may allocate. */
typedef struct tg_env_kind {
  const char *name;
  /* Resets every instance and writes obs [n, obs_dim]. */
  tg_status (*reset)(tg_env *e, float *obs);
  /* Steps every instance with valid actions (discrete: int32 [n] in [0, n_actions); continuous:
   * float [n], finite, already clipped to [action_lo, action_hi] into e->act_clip). */
  tg_status (*step)(tg_env *e, const void *actions, const tg_env_out *out);
  /* Frees what the kind owns (not e itself). */
  void (*destroy)(tg_env *e);
  /* The kind's whole state as bytes, for checkpoints that resume bitwise (NULL: it cannot save). */
  size_t (*state_size)(const tg_env *e);
  void (*save)(const tg_env *e, unsigned char *buf);      /* buf [state_size] */
  void (*load)(tg_env *e, const unsigned char *buf);      /* from save of an env of the same kind and size */
} tg_env_kind;

struct tg_env {
  const tg_env_kind *kind;
  tg_env_spec spec;
  int was_reset;    /* tg_env_step needs a tg_env_reset first */
  float *act_clip;  /* [n] continuous actions clipped to [lo, hi] (NULL for discrete envs) */
  void *impl;       /* the kind's state */
};

/* Allocates e with its shared header filled (act_clip when spec.n_actions == 0); impl is NULL. */
tg_status tg_env_alloc(const tg_env_kind *kind, tg_env_spec spec, tg_env **out);

/* e's state as bytes: a header (kind, n, obs_dim, whether it was reset), then the kind's state.
 * tg_env_bytes is 0 when the kind cannot save; tg_env_write_bytes / tg_env_read_bytes need size ==
 * tg_env_bytes(e), and reading checks the header (same kind and spec) before changing anything. */
size_t tg_env_bytes(const tg_env *e);
tg_status tg_env_write_bytes(const tg_env *e, void *buf, size_t size);
tg_status tg_env_read_bytes(tg_env *e, const void *buf, size_t size);

/* Cursor helpers for the kinds' save / load: copy bytes and advance. */
static inline unsigned char *tg_env_put(unsigned char *p, const void *src, size_t bytes) {
  memcpy(p, src, bytes);
  return p + bytes;
}
static inline const unsigned char *tg_env_get(const unsigned char *p, void *dst, size_t bytes) {
  memcpy(dst, p, bytes);
  return p + bytes;
}

#endif
