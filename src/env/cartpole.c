/* CartPole-v1 with gymnasium 0.29's dynamics (float64 state, explicit Euler), n instances stepped in one loop. */
#include <math.h>
#include <stdlib.h>
#include "env/env_internal.h"
#include "tickgrad/rng.h"

/* gymnasium/envs/classic_control/cartpole.py, written the way it computes them. */
#define CP_GRAVITY 9.8
#define CP_MASSCART 1.0
#define CP_MASSPOLE 0.1
#define CP_TOTAL_MASS (CP_MASSPOLE + CP_MASSCART)
#define CP_LENGTH 0.5 /* half the pole's length */
#define CP_POLEMASS_LENGTH (CP_MASSPOLE * CP_LENGTH)
#define CP_FORCE_MAG 10.0
#define CP_TAU 0.02
#define CP_THETA_LIMIT (12 * 2 * M_PI / 360)
#define CP_X_LIMIT 2.4
#define CP_DEFAULT_MAX_STEPS 500

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct cartpole {
  uint64_t seed;
  int max_steps;
  double *s;          /* [n, 4] x, x_dot, theta, theta_dot */
  int32_t *len;       /* [n] steps taken in the current episode */
  uint64_t *episodes; /* [n] initial states drawn so far: the counter of instance i's next draw */
} cartpole;

static cartpole *cp_of(const tg_env *e) { return (cartpole *)e->impl; }

/* Draws instance i's next initial state: each component U(-0.05, 0.05) from Philox (seed, stream i,
 * counter = its episode number), so instance i's episodes do not depend on n or on the others. */
static void draw_initial(cartpole *cp, int i) {
  uint32_t w[4];
  tg_philox(cp->seed, (uint64_t)i, cp->episodes[i]++, w);
  for (int k = 0; k < 4; k++) cp->s[4 * i + k] = -0.05 + 0.1 * (double)tg_u32_to_unit(w[k]);
  cp->len[i] = 0;
}

static void write_obs(const double *s, float *o) {
  for (int k = 0; k < 4; k++) o[k] = (float)s[k];
}

/* One explicit Euler step of s [4] under action a (0: push left, 1: push right); returns terminated. */
static int advance(double *s, int32_t a) {
  double x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3];
  double force = a == 1 ? CP_FORCE_MAG : -CP_FORCE_MAG;
  double c = cos(theta), si = sin(theta);
  double temp = (force + CP_POLEMASS_LENGTH * (theta_dot * theta_dot) * si) / CP_TOTAL_MASS;
  double thetaacc =
      (CP_GRAVITY * si - c * temp) / (CP_LENGTH * (4.0 / 3.0 - CP_MASSPOLE * (c * c) / CP_TOTAL_MASS));
  double xacc = temp - CP_POLEMASS_LENGTH * thetaacc * c / CP_TOTAL_MASS;
  s[0] = x + CP_TAU * x_dot;
  s[1] = x_dot + CP_TAU * xacc;
  s[2] = theta + CP_TAU * theta_dot;
  s[3] = theta_dot + CP_TAU * thetaacc;
  return s[0] < -CP_X_LIMIT || s[0] > CP_X_LIMIT || s[2] < -CP_THETA_LIMIT || s[2] > CP_THETA_LIMIT;
}

static tg_status cp_reset(tg_env *e, float *obs) {
  cartpole *cp = cp_of(e);
  for (int i = 0; i < e->spec.n; i++) {
    draw_initial(cp, i);
    write_obs(cp->s + 4 * i, obs + 4 * i);
  }
  return TG_OK;
}

static tg_status cp_step(tg_env *e, const void *actions, const tg_env_out *out) {
  cartpole *cp = cp_of(e);
  const int32_t *a = actions;
  for (int i = 0; i < e->spec.n; i++) {
    double *s = cp->s + 4 * i;
    int term = advance(s, a[i]);
    int trunc = ++cp->len[i] >= cp->max_steps;
    out->reward[i] = 1.0f; /* every step, the terminating one included */
    out->terminated[i] = (uint8_t)term;
    out->truncated[i] = (uint8_t)trunc;
    if (out->final_obs) write_obs(s, out->final_obs + 4 * i);
    if (out->ep_return) out->ep_return[i] = (term || trunc) ? (double)cp->len[i] : 0.0;
    if (out->ep_length) out->ep_length[i] = (term || trunc) ? cp->len[i] : 0;
    if (term || trunc) draw_initial(cp, i);
    write_obs(s, out->obs + 4 * i);
  }
  return TG_OK;
}

static void cp_destroy(tg_env *e) {
  cartpole *cp = cp_of(e);
  if (!cp) return;
  free(cp->s);
  free(cp->len);
  free(cp->episodes);
  free(cp);
}

/* State: the seed, then s [n, 4], len [n], episodes [n]. */
static size_t cp_state_size(const tg_env *e) {
  return sizeof(uint64_t) + (size_t)e->spec.n * (4 * sizeof(double) + sizeof(int32_t) + sizeof(uint64_t));
}

static void cp_save(const tg_env *e, unsigned char *p) {
  const cartpole *cp = cp_of(e);
  size_t n = (size_t)e->spec.n;
  p = tg_env_put(p, &cp->seed, sizeof cp->seed);
  p = tg_env_put(p, cp->s, n * 4 * sizeof(double));
  p = tg_env_put(p, cp->len, n * sizeof(int32_t));
  tg_env_put(p, cp->episodes, n * sizeof(uint64_t));
}

static void cp_load(tg_env *e, const unsigned char *p) {
  cartpole *cp = cp_of(e);
  size_t n = (size_t)e->spec.n;
  p = tg_env_get(p, &cp->seed, sizeof cp->seed);
  p = tg_env_get(p, cp->s, n * 4 * sizeof(double));
  p = tg_env_get(p, cp->len, n * sizeof(int32_t));
  tg_env_get(p, cp->episodes, n * sizeof(uint64_t));
}

static const tg_env_kind CARTPOLE = {"cartpole", cp_reset, cp_step, cp_destroy, cp_state_size, cp_save, cp_load};

tg_status tg_env_cartpole_new(int n, uint64_t seed, int max_steps, tg_env **out) {
  if (!out) return tg_error(TG_ERR_INVALID, "tg_env_cartpole_new: out is NULL");
  *out = NULL;
  if (n < 1) return tg_error(TG_ERR_INVALID, "tg_env_cartpole_new: n = %d instances, expected >= 1", n);
  tg_env_spec spec = {.n = n, .obs_dim = 4, .n_actions = 2, .action_lo = 0, .action_hi = 1};
  tg_env *e;
  tg_status st = tg_env_alloc(&CARTPOLE, spec, &e);
  if (st != TG_OK) return st;
  cartpole *cp = calloc(1, sizeof *cp);
  e->impl = cp;
  if (cp) {
    cp->seed = seed;
    cp->max_steps = max_steps > 0 ? max_steps : CP_DEFAULT_MAX_STEPS;
    cp->s = calloc((size_t)n * 4, sizeof(double));
    cp->len = calloc((size_t)n, sizeof(int32_t));
    cp->episodes = calloc((size_t)n, sizeof(uint64_t));
  }
  if (!cp || !cp->s || !cp->len || !cp->episodes) {
    tg_env_free(e);
    return tg_error(TG_ERR_NOMEM, "tg_env_cartpole_new: cannot allocate the state of %d instances", n);
  }
  *out = e;
  return TG_OK;
}

/* The test hooks check that e is a CartPole and i one of its instances. */
static tg_status check_instance(const tg_env *e, int i, const void *state, const char *fn) {
  if (!e || e->kind != &CARTPOLE) return tg_error(TG_ERR_INVALID, "%s: env is %s, expected a cartpole env", fn,
                                                  e ? e->kind->name : "NULL");
  if (i < 0 || i >= e->spec.n)
    return tg_error(TG_ERR_INVALID, "%s: instance %d is out of range [0, %d)", fn, i, e->spec.n);
  if (!state) return tg_error(TG_ERR_INVALID, "%s: state [4] is NULL", fn);
  return TG_OK;
}

tg_status tg_env_cartpole_set_state(tg_env *e, int i, const double state[4]) {
  tg_status st = check_instance(e, i, state, "tg_env_cartpole_set_state");
  if (st != TG_OK) return st;
  for (int k = 0; k < 4; k++) cp_of(e)->s[4 * i + k] = state[k];
  return TG_OK;
}

tg_status tg_env_cartpole_get_state(const tg_env *e, int i, double state[4]) {
  tg_status st = check_instance(e, i, state, "tg_env_cartpole_get_state");
  if (st != TG_OK) return st;
  for (int k = 0; k < 4; k++) state[k] = cp_of(e)->s[4 * i + k];
  return TG_OK;
}
