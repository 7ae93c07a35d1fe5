/* CartPole-v1 with gymnasium 0.29's dynamics (float64 state, explicit Euler), n instances stepped together. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
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
  /* The state [n] per component (structure of arrays, one allocation of 6n doubles): the arithmetic of a
   * step then runs over whole vectors; sn, cs are the step's sin and cos of theta. */
  double *x, *x_dot, *theta, *theta_dot, *sn, *cs;
  int32_t *len;       /* [n] steps taken in the current episode */
  uint64_t *episodes; /* [n] initial states drawn so far: the counter of instance i's next draw */
} cartpole;

static cartpole *cp_of(const tg_env *e) { return (cartpole *)e->impl; }

static void get_state(const cartpole *cp, int i, double s[4]) {
  s[0] = cp->x[i];
  s[1] = cp->x_dot[i];
  s[2] = cp->theta[i];
  s[3] = cp->theta_dot[i];
}

static void set_state(cartpole *cp, int i, const double s[4]) {
  cp->x[i] = s[0];
  cp->x_dot[i] = s[1];
  cp->theta[i] = s[2];
  cp->theta_dot[i] = s[3];
}

static void write_obs(const cartpole *cp, int i, float *o) {
  o[0] = (float)cp->x[i];
  o[1] = (float)cp->x_dot[i];
  o[2] = (float)cp->theta[i];
  o[3] = (float)cp->theta_dot[i];
}

/* Draws instance i's next initial state: each component U(-0.05, 0.05) from Philox (seed, stream i,
 * counter = its episode number), so instance i's episodes do not depend on n or on the others. */
static void draw_initial(cartpole *cp, int i) {
  uint32_t w[4];
  double s[4];
  tg_philox(cp->seed, (uint64_t)i, cp->episodes[i]++, w);
  for (int k = 0; k < 4; k++) s[k] = -0.05 + 0.1 * (double)tg_u32_to_unit(w[k]);
  set_state(cp, i, s);
  cp->len[i] = 0;
}

/* One explicit Euler step of the state (x, x_dot, theta, theta_dot) with si, c = sin(theta), cos(theta) under
 * action a (0: push left, 1: push right), written as gymnasium computes it, into s [4]. */
static inline void euler(double x, double x_dot, double theta, double theta_dot, double si, double c, int32_t a,
                         double s[4]) {
  double force = a == 1 ? CP_FORCE_MAG : -CP_FORCE_MAG;
  double temp = (force + CP_POLEMASS_LENGTH * (theta_dot * theta_dot) * si) / CP_TOTAL_MASS;
  double thetaacc =
      (CP_GRAVITY * si - c * temp) / (CP_LENGTH * (4.0 / 3.0 - CP_MASSPOLE * (c * c) / CP_TOTAL_MASS));
  double xacc = temp - CP_POLEMASS_LENGTH * thetaacc * c / CP_TOTAL_MASS;
  s[0] = x + CP_TAU * x_dot;
  s[1] = x_dot + CP_TAU * xacc;
  s[2] = theta + CP_TAU * theta_dot;
  s[3] = theta_dot + CP_TAU * thetaacc;
}

/* |x| > 2.4 or |theta| > 12 degrees (false for NaN, as gymnasium's comparisons). */
static inline int terminated(double x, double theta) {
  return (x < -CP_X_LIMIT) | (x > CP_X_LIMIT) | (theta < -CP_THETA_LIMIT) | (theta > CP_THETA_LIMIT);
}

/* The Euler step of every instance, writing each new observation to obs [n, 4]. The libm calls go first in a
 * loop of their own, so the arithmetic loop has no calls in it and the compiler vectorises it; vectorising
 * elementwise arithmetic keeps every operation and its order, so the results are those of a scalar step bit
 * for bit (no contraction into FMA: -std=c11 turns GCC's contraction off, and the baseline target has no FMA). */
static void advance_arrays(int n, const int32_t *restrict a, double *restrict x, double *restrict x_dot,
                           double *restrict theta, double *restrict theta_dot, double *restrict sn,
                           double *restrict cs, float *restrict obs) {
  for (int i = 0; i < n; i++) {
    double t = theta[i];
    cs[i] = cos(t);
    sn[i] = sin(t);
  }
  for (int i = 0; i < n; i++) {
    double s[4];
    euler(x[i], x_dot[i], theta[i], theta_dot[i], sn[i], cs[i], a[i], s);
    x[i] = s[0];
    x_dot[i] = s[1];
    theta[i] = s[2];
    theta_dot[i] = s[3];
    for (int k = 0; k < 4; k++) obs[4 * i + k] = (float)s[k];
  }
}

static void advance_all(cartpole *cp, int n, const int32_t *a, float *obs) {
  advance_arrays(n, a, cp->x, cp->x_dot, cp->theta, cp->theta_dot, cp->sn, cp->cs, obs);
}

static tg_status cp_reset(tg_env *e, float *obs) {
  cartpole *cp = cp_of(e);
  for (int i = 0; i < e->spec.n; i++) {
    draw_initial(cp, i);
    write_obs(cp, i, obs + 4 * i);
  }
  return TG_OK;
}

/* The step's flags, branch-free (the compiler vectorises the length and reward loops): term, the episode
 * lengths counted on, trunc (max_steps reached). */
static void flag_arrays(int n, int32_t max_steps, const double *restrict x, const double *restrict theta,
                        int32_t *restrict len, float *restrict reward, uint8_t *restrict term,
                        uint8_t *restrict trunc) {
  for (int i = 0; i < n; i++) term[i] = (uint8_t)terminated(x[i], theta[i]);
  for (int i = 0; i < n; i++) {
    int32_t l = len[i] + 1;
    len[i] = l;
    trunc[i] = (uint8_t)(l >= max_steps);
  }
  for (int i = 0; i < n; i++) reward[i] = 1.0f; /* every step, the terminating one included */
}

/* Instance i's step, the finished episode's statistics and its reset, one instance at a time: the step of a few
 * instances, where the passes over arrays cost more than they save. The same euler() and terminated(), so the
 * same bits as the passes. */
static void step_one(cartpole *cp, int i, int32_t a, const tg_env_out *out) {
  double s[4];
  double t = cp->theta[i];
  euler(cp->x[i], cp->x_dot[i], t, cp->theta_dot[i], sin(t), cos(t), a, s);
  set_state(cp, i, s);
  int term = terminated(s[0], s[2]);
  int32_t l = ++cp->len[i];
  int trunc = l >= cp->max_steps, done = term | trunc;
  out->reward[i] = 1.0f;
  out->terminated[i] = (uint8_t)term;
  out->truncated[i] = (uint8_t)trunc;
  if (out->final_obs) write_obs(cp, i, out->final_obs + 4 * i);
  if (out->ep_return) out->ep_return[i] = done ? (double)l : 0.0;
  if (out->ep_length) out->ep_length[i] = done ? l : 0;
  if (done) draw_initial(cp, i);
  write_obs(cp, i, out->obs + 4 * i);
}

/* Below this many instances cp_step steps them one at a time. */
#define CP_PASSES_MIN 8

static tg_status cp_step(tg_env *e, const void *actions, const tg_env_out *out) {
  cartpole *cp = cp_of(e);
  int n = e->spec.n;
  if (n < CP_PASSES_MIN) {
    for (int i = 0; i < n; i++) step_one(cp, i, ((const int32_t *)actions)[i], out);
    return TG_OK;
  }
  advance_all(cp, n, actions, out->obs);
  /* final_obs is every instance's s' (obs before the finished ones are reset below) */
  if (out->final_obs) memcpy(out->final_obs, out->obs, (size_t)n * 4 * sizeof(float));
  flag_arrays(n, cp->max_steps, cp->x, cp->theta, cp->len, out->reward, out->terminated, out->truncated);
  /* the episode statistics are 0 where the episode goes on */
  if (out->ep_return) memset(out->ep_return, 0, (size_t)n * sizeof(double));
  if (out->ep_length) memset(out->ep_length, 0, (size_t)n * sizeof(int32_t));
  for (int i = 0; i < n; i++) {
    if (!(out->terminated[i] | out->truncated[i])) continue;
    if (out->ep_return) out->ep_return[i] = (double)cp->len[i];
    if (out->ep_length) out->ep_length[i] = cp->len[i];
    draw_initial(cp, i);
    write_obs(cp, i, out->obs + 4 * i);
  }
  return TG_OK;
}

static void cp_destroy(tg_env *e) {
  cartpole *cp = cp_of(e);
  if (!cp) return;
  free(cp->x);
  free(cp->len);
  free(cp->episodes);
  free(cp);
}

/* State: the seed, then s [n, 4] (instance by instance), len [n], episodes [n]. */
static size_t cp_state_size(const tg_env *e) {
  return sizeof(uint64_t) + (size_t)e->spec.n * (4 * sizeof(double) + sizeof(int32_t) + sizeof(uint64_t));
}

static void cp_save(const tg_env *e, unsigned char *p) {
  const cartpole *cp = cp_of(e);
  size_t n = (size_t)e->spec.n;
  p = tg_env_put(p, &cp->seed, sizeof cp->seed);
  for (size_t i = 0; i < n; i++) {
    double s[4];
    get_state(cp, (int)i, s);
    p = tg_env_put(p, s, sizeof s);
  }
  p = tg_env_put(p, cp->len, n * sizeof(int32_t));
  tg_env_put(p, cp->episodes, n * sizeof(uint64_t));
}

static void cp_load(tg_env *e, const unsigned char *p) {
  cartpole *cp = cp_of(e);
  size_t n = (size_t)e->spec.n;
  p = tg_env_get(p, &cp->seed, sizeof cp->seed);
  for (size_t i = 0; i < n; i++) {
    double s[4];
    p = tg_env_get(p, s, sizeof s);
    set_state(cp, (int)i, s);
  }
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
    cp->x = calloc((size_t)n * 6, sizeof(double));
    if (cp->x) {
      cp->x_dot = cp->x + n;
      cp->theta = cp->x + 2 * (size_t)n;
      cp->theta_dot = cp->x + 3 * (size_t)n;
      cp->sn = cp->x + 4 * (size_t)n;
      cp->cs = cp->x + 5 * (size_t)n;
    }
    cp->len = calloc((size_t)n, sizeof(int32_t));
    cp->episodes = calloc((size_t)n, sizeof(uint64_t));
  }
  if (!cp || !cp->x || !cp->len || !cp->episodes) {
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
  set_state(cp_of(e), i, state);
  return TG_OK;
}

tg_status tg_env_cartpole_get_state(const tg_env *e, int i, double state[4]) {
  tg_status st = check_instance(e, i, state, "tg_env_cartpole_get_state");
  if (st != TG_OK) return st;
  get_state(cp_of(e), i, state);
  return TG_OK;
}
