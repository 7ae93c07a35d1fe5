/* The public tg_env functions: argument checks, then the environment kind's reset and step. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "env/env_internal.h"

tg_status tg_env_alloc(const tg_env_kind *kind, tg_env_spec spec, tg_env **out) {
  tg_env *e = calloc(1, sizeof *e);
  if (!e) return tg_error(TG_ERR_NOMEM, "%s env: cannot allocate the environment", kind->name);
  e->kind = kind;
  e->spec = spec;
  if (spec.n_actions == 0) {
    e->act_clip = malloc(sizeof(float) * (size_t)spec.n); /* [n] */
    if (!e->act_clip) {
      free(e);
      return tg_error(TG_ERR_NOMEM, "%s env: cannot allocate %d actions", kind->name, spec.n);
    }
  }
  *out = e;
  return TG_OK;
}

tg_env_spec tg_env_spec_of(const tg_env *e) {
  tg_env_spec none = {0};
  return e ? e->spec : none;
}

const char *tg_env_name(const tg_env *e) { return e ? e->kind->name : "(null)"; }

void tg_env_free(tg_env *e) {
  if (!e) return;
  if (e->kind->destroy) e->kind->destroy(e);
  free(e->act_clip);
  free(e);
}

tg_status tg_env_reset(tg_env *e, float *obs) {
  if (!e) return tg_error(TG_ERR_INVALID, "tg_env_reset: env is NULL");
  if (!obs) return tg_error(TG_ERR_INVALID, "%s env reset: obs buffer [%d, %d] is NULL", e->kind->name, e->spec.n,
                            e->spec.obs_dim);
  tg_status st = e->kind->reset(e, obs);
  if (st == TG_OK) e->was_reset = 1;
  return st;
}

/* Discrete actions: every one in [0, n_actions), or an error naming the first bad instance. */
static tg_status check_discrete(const tg_env *e, const int32_t *a) {
  for (int i = 0; i < e->spec.n; i++) {
    if (a[i] < 0 || a[i] >= e->spec.n_actions)
      return tg_error(TG_ERR_INVALID, "%s env step: instance %d: action %d is out of range [0, %d); nothing stepped",
                      e->kind->name, i, (int)a[i], e->spec.n_actions);
  }
  return TG_OK;
}

/* Continuous actions: finite (else an error naming the instance), clipped to [lo, hi] into act_clip. */
static tg_status clip_continuous(tg_env *e, const float *a) {
  float lo = e->spec.action_lo, hi = e->spec.action_hi;
  for (int i = 0; i < e->spec.n; i++) {
    if (!isfinite(a[i]))
      return tg_error(TG_ERR_INVALID, "%s env step: instance %d: action %g is not finite; nothing stepped",
                      e->kind->name, i, (double)a[i]);
    e->act_clip[i] = a[i] < lo ? lo : a[i] > hi ? hi : a[i];
  }
  return TG_OK;
}

tg_status tg_env_step(tg_env *e, const void *actions, const tg_env_out *out) {
  if (!e) return tg_error(TG_ERR_INVALID, "tg_env_step: env is NULL");
  const char *name = e->kind->name;
  if (!actions) return tg_error(TG_ERR_INVALID, "%s env step: actions [%d] is NULL", name, e->spec.n);
  if (!out || !out->obs || !out->reward || !out->terminated || !out->truncated)
    return tg_error(TG_ERR_INVALID, "%s env step: out, out->obs [%d, %d], out->reward, out->terminated and "
                    "out->truncated [%d] must all be given", name, e->spec.n, e->spec.obs_dim, e->spec.n);
  if (!e->was_reset) return tg_error(TG_ERR_INVALID, "%s env step: call tg_env_reset before the first step", name);
  tg_status st = e->spec.n_actions > 0 ? check_discrete(e, actions) : clip_continuous(e, actions);
  if (st != TG_OK) return st;
  return e->kind->step(e, e->spec.n_actions > 0 ? actions : (const void *)e->act_clip, out);
}

/* ---- state as bytes ---- */

#define ENV_MAGIC "TGENV1"
typedef struct env_header {
  char magic[8];
  char kind[16];
  int32_t n, obs_dim, was_reset, pad;
} env_header;

size_t tg_env_bytes(const tg_env *e) {
  if (!e || !e->kind->state_size) return 0;
  return sizeof(env_header) + e->kind->state_size(e);
}

static env_header header_of(const tg_env *e) {
  env_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, ENV_MAGIC, sizeof ENV_MAGIC);
  snprintf(h.kind, sizeof h.kind, "%s", e->kind->name);
  h.n = e->spec.n;
  h.obs_dim = e->spec.obs_dim;
  h.was_reset = e->was_reset;
  return h;
}

tg_status tg_env_write_bytes(const tg_env *e, void *buf, size_t size) {
  size_t want = tg_env_bytes(e);
  if (!e || !want) return tg_error(TG_ERR_UNSUPPORTED, "env '%s' cannot save its state", tg_env_name(e));
  if (!buf || size != want)
    return tg_error(TG_ERR_INVALID, "%s env save: buffer of %zu bytes, the state is %zu", e->kind->name, size, want);
  env_header h = header_of(e);
  memcpy(buf, &h, sizeof h);
  e->kind->save(e, (unsigned char *)buf + sizeof h);
  return TG_OK;
}

tg_status tg_env_read_bytes(tg_env *e, const void *buf, size_t size) {
  size_t want = tg_env_bytes(e);
  if (!e || !want) return tg_error(TG_ERR_UNSUPPORTED, "env '%s' cannot restore a saved state", tg_env_name(e));
  if (!buf || size != want)
    return tg_error(TG_ERR_INVALID, "%s env load: %zu bytes given, this env's state is %zu (another env or config?)",
                    e->kind->name, size, want);
  env_header h, mine = header_of(e);
  memcpy(&h, buf, sizeof h);
  if (memcmp(h.magic, mine.magic, sizeof h.magic) != 0 || memcmp(h.kind, mine.kind, sizeof h.kind) != 0 ||
      h.n != mine.n || h.obs_dim != mine.obs_dim || (h.was_reset != 0 && h.was_reset != 1))
    return tg_error(TG_ERR_INVALID, "%s env load: the state is of env '%.15s' with n %d, obs_dim %d; this one has n %d, "
                    "obs_dim %d", e->kind->name, h.kind, (int)h.n, (int)h.obs_dim, (int)mine.n, (int)mine.obs_dim);
  e->kind->load(e, (const unsigned char *)buf + sizeof h);
  e->was_reset = h.was_reset;
  return TG_OK;
}
