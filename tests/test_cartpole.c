/* CartPole-v1: the golden trajectory of models.md 3.4, gymnasium 0.29.1's own trajectories (reference/data/cartpole_gym.csv),
 * termination, truncation and 0.29 autoreset, bad actions, per-instance streams, no heap calls per step. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "env/env_internal.h"
#include "support/check.h"
#include "support/heap_count.h"
#include "tickgrad/rl.h"


#define TOL 1e-12
#define MAXN 64

/* Output buffers for up to MAXN instances. */
typedef struct bufs {
  float obs[MAXN * 4], final_obs[MAXN * 4], reward[MAXN];
  uint8_t term[MAXN], trunc[MAXN];
  double ep_return[MAXN];
  int32_t ep_length[MAXN];
  tg_env_out out;
} bufs;

static void bufs_init(bufs *b) {
  memset(b, 0, sizeof *b);
  b->out = (tg_env_out){b->obs, b->final_obs, b->reward, b->term, b->trunc, b->ep_return, b->ep_length};
}

static tg_env *new_env(int n, uint64_t seed, int max_steps, bufs *b) {
  tg_env *e = NULL;
  CHECK_OK(tg_env_cartpole_new(n, seed, max_steps, &e));
  bufs_init(b);
  if (e) CHECK_OK(tg_env_reset(e, b->obs));
  return e;
}

static int step1(tg_env *e, int32_t a, bufs *b) { return tg_env_step(e, &a, &b->out) == TG_OK; }

static double max_diff(const double *a, const double *b) {
  double m = 0;
  for (int k = 0; k < 4; k++) m = fmax(m, fabs(a[k] - b[k]));
  return m;
}

/* (a) models.md 3.4's table: start (0.01, -0.02, 0.03, 0.04), a_t = 1 if t % 3 else 0. */
static void test_golden_table(void) {
  static const struct { int step; double s[4]; } rows[] = {
      {1, {0.009600000000, -0.215539017103, 0.030800000000, 0.341995223776}},
      {2, {0.005289219658, -0.020868498015, 0.037639904476, 0.059181706756}},
      {3, {0.004871849698, 0.173694120275, 0.038823538611, -0.221391989244}},
      {6, {0.011359555687, 0.367239917648, 0.032094195294, -0.479448089032}},
      {12, {0.059240427223, 0.756579283843, -0.029273508182, -1.044732656343}},
  };
  bufs b;
  tg_env *e = new_env(1, 7, 0, &b);
  const double start[4] = {0.01, -0.02, 0.03, 0.04};
  CHECK_OK(tg_env_cartpole_set_state(e, 0, start));
  size_t next = 0;
  for (int t = 0; t < 12; t++) {
    CHECK(step1(e, t % 3 ? 1 : 0, &b));
    CHECK(!b.term[0] && !b.trunc[0] && b.reward[0] == 1.0f);
    double s[4];
    CHECK_OK(tg_env_cartpole_get_state(e, 0, s));
    if (next < sizeof rows / sizeof rows[0] && rows[next].step == t + 1) {
      /* the table has 12 decimals: its own rounding is 5e-13 */
      CHECK_MSG(max_diff(s, rows[next].s) <= TOL, "step %d: |diff| %g", t + 1, max_diff(s, rows[next].s));
      next++;
    }
    for (int k = 0; k < 4; k++) CHECK(b.obs[k] == (float)s[k]);
  }
  CHECK(next == 5);
  tg_env_free(e);
}

/* One row of reference/data/cartpole_gym.csv. */
typedef struct gym_row {
  int episode, t, action, term, trunc;
  double s[4], reward;
  float obs[4];
} gym_row;

static int read_gym_rows(gym_row *rows, int cap) {
  const char *src = getenv("TG_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/reference/data/cartpole_gym.csv", src ? src : "..");
  FILE *f = fopen(path, "r");
  CHECK_MSG(f != NULL, "cannot open %s (set TG_SOURCE_DIR to the checkout)", path);
  if (!f) return 0;
  char line[1024];
  int n = 0;
  while (fgets(line, sizeof line, f) && n < cap) {
    gym_row *r = &rows[n];
    double o[4];
    if (sscanf(line, "%d,%d,%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%d,%d", &r->episode, &r->t, &r->action, &r->s[0],
               &r->s[1], &r->s[2], &r->s[3], &o[0], &o[1], &o[2], &o[3], &r->reward, &r->term, &r->trunc) != 14)
      continue; /* the comment and the header */
    for (int k = 0; k < 4; k++) r->obs[k] = (float)o[k];
    n++;
  }
  fclose(f);
  return n;
}

/* (b) gymnasium's own CartPoleEnv from the same starts on the same actions: every float64 state to
 * 1e-12 (the last one of an episode is only seen as final_obs: float32, compared exactly), every
 * float32 observation exactly, reward, termination and truncation. */
static void test_gym_file(void) {
  static gym_row rows[1024];
  int n = read_gym_rows(rows, 1024);
  CHECK_MSG(n == 529, "%d rows in cartpole_gym.csv, expected 20 + 9 + 500", n);
  bufs b;
  tg_env *e = new_env(1, 3, 500, &b);
  const double starts[3][4] = {{0.01, -0.02, 0.03, 0.04}, {0, 0, 0, 0}, {0.01, -0.02, 0.03, 0.04}};
  double worst = 0;
  int episode = -1, exact_obs = 0, ends = 0;
  for (int r = 0; r < n; r++) {
    const gym_row *g = &rows[r];
    if (g->episode != episode) {
      episode = g->episode;
      CHECK(g->t == 1 && episode >= 0 && episode < 3);
      CHECK_OK(tg_env_cartpole_set_state(e, 0, starts[episode < 3 ? episode : 0]));
    }
    CHECK(step1(e, g->action, &b));
    CHECK(b.reward[0] == (float)g->reward && b.term[0] == g->term && b.trunc[0] == g->trunc);
    exact_obs += memcmp(b.final_obs, g->obs, sizeof g->obs) == 0;
    if (g->term || g->trunc) {
      ends++;
      CHECK(b.ep_length[0] == g->t && b.ep_return[0] == (double)g->t);
      continue;
    }
    CHECK(memcmp(b.obs, g->obs, sizeof g->obs) == 0);
    double s[4];
    CHECK_OK(tg_env_cartpole_get_state(e, 0, s));
    worst = fmax(worst, max_diff(s, g->s));
  }
  CHECK_MSG(worst <= TOL, "max |state - gymnasium| = %g over %d steps", worst, n);
  CHECK_MSG(exact_obs == n, "%d of %d float32 observations equal gymnasium's", exact_obs, n);
  CHECK(ends == 3);
  printf("gymnasium trajectories: %d steps, max |state diff| %.3g, %d/%d observations bitwise equal\n", n, worst,
         exact_obs, n);
  tg_env_free(e);
}

/* (c) from the zero state, always pushing right: terminated after 9 steps, reward 1 on that step. */
static void test_push_right(void) {
  bufs b;
  tg_env *e = new_env(1, 11, 0, &b);
  const double zero[4] = {0, 0, 0, 0};
  CHECK_OK(tg_env_cartpole_set_state(e, 0, zero));
  int steps = 0;
  while (steps < 20) {
    CHECK(step1(e, 1, &b));
    steps++;
    CHECK(b.reward[0] == 1.0f && !b.trunc[0]);
    if (b.term[0]) break;
  }
  CHECK_MSG(steps == 9, "terminated after %d steps, expected 9", steps);
  CHECK_MSG(fabs(b.final_obs[2] - -0.21519) < 5e-5, "theta %.6f, expected -0.21519", b.final_obs[2]);
  CHECK_MSG(fabs(b.final_obs[3] - -2.7779) < 5e-4, "theta_dot %.6f, expected -2.7779", b.final_obs[3]);
  CHECK(b.ep_length[0] == 9 && b.ep_return[0] == 9.0);
  /* autoreset: obs is the new episode's start, the state behind it, within +-0.05 */
  double s[4];
  CHECK_OK(tg_env_cartpole_get_state(e, 0, s));
  for (int k = 0; k < 4; k++) CHECK(fabs(s[k]) <= 0.05 && b.obs[k] == (float)s[k] && b.obs[k] != b.final_obs[k]);
  /* the new episode counts from 1: replay it in a second env from the same start */
  bufs b2;
  tg_env *e2 = new_env(1, 99, 0, &b2);
  CHECK_OK(tg_env_cartpole_set_state(e2, 0, s));
  int len1 = 0, len2 = 0;
  for (int t = 1; t <= 40 && !(len1 && len2); t++) {
    CHECK(step1(e, 0, &b) && step1(e2, 0, &b2));
    if (b.term[0] && !len1) len1 = b.ep_length[0];
    if (b2.term[0] && !len2) len2 = t;
  }
  CHECK_MSG(len1 > 0 && len1 == len2, "second episode length %d, replayed %d", len1, len2);
  tg_env_free(e);
  tg_env_free(e2);
}

/* (d) truncation at max_steps: holding the pole upright by setting the state before every step. */
static void test_truncation(void) {
  for (int max_steps = 0; max_steps <= 37; max_steps += 37) {
    int want = max_steps > 0 ? max_steps : 500;
    bufs b;
    tg_env *e = new_env(2, 5, max_steps, &b);
    const double zero[4] = {0, 0, 0, 0};
    int done_at = 0;
    for (int t = 1; t <= want + 5 && !done_at; t++) {
      CHECK_OK(tg_env_cartpole_set_state(e, 0, zero));
      CHECK_OK(tg_env_cartpole_set_state(e, 1, zero));
      int32_t a[2] = {t % 2, 1 - t % 2};
      CHECK_OK(tg_env_step(e, a, &b.out));
      CHECK(!b.term[0] && !b.term[1]);
      CHECK(b.reward[0] == 1.0f && b.reward[1] == 1.0f);
      if (b.trunc[0]) done_at = t;
      CHECK(b.trunc[0] == b.trunc[1]);
      if (!b.trunc[0]) CHECK(b.ep_length[0] == 0 && memcmp(b.obs, b.final_obs, sizeof(float) * 8) == 0);
    }
    CHECK_MSG(done_at == want, "truncated at step %d, expected %d", done_at, want);
    CHECK(b.ep_length[0] == want && b.ep_return[0] == want && b.ep_length[1] == want);
    /* final_obs: one step from zero under action want % 2 (force +-10: x_dot = +-0.02 * 10/1.1 * ...) */
    CHECK(b.final_obs[0] == 0.0f && b.final_obs[2] == 0.0f);
    CHECK((b.final_obs[1] > 0) == (want % 2 == 1) && b.final_obs[5] == -b.final_obs[1]);
    for (int k = 0; k < 8; k++) CHECK(fabsf(b.obs[k]) <= 0.05f);
    tg_env_free(e);
  }
}

/* (e) a bad action is an error naming the instance and the value, and no instance moves; so are
 * missing buffers and a step before the first reset. */
static void test_bad_actions(void) {
  bufs b;
  tg_env *e = NULL;
  CHECK_OK(tg_env_cartpole_new(3, 1, 0, &e));
  bufs_init(&b);
  int32_t ok[3] = {1, 0, 1};
  CHECK_STATUS(tg_env_step(e, ok, &b.out), TG_ERR_INVALID); /* before reset */
  CHECK_OK(tg_env_reset(e, b.obs));
  double before[3][4], after[3][4];
  for (int i = 0; i < 3; i++) CHECK_OK(tg_env_cartpole_get_state(e, i, before[i]));
  int32_t bad[3] = {1, 2, 0};
  CHECK_STATUS(tg_env_step(e, bad, &b.out), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "instance 1") && strstr(tg_last_error(), "action 2"), "%s", tg_last_error());
  int32_t neg[3] = {0, 1, -1};
  CHECK_STATUS(tg_env_step(e, neg, &b.out), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "instance 2") && strstr(tg_last_error(), "-1"), "%s", tg_last_error());
  tg_env_out missing = b.out;
  missing.reward = NULL;
  CHECK_STATUS(tg_env_step(e, ok, &missing), TG_ERR_INVALID);
  CHECK_STATUS(tg_env_step(e, NULL, &b.out), TG_ERR_INVALID);
  for (int i = 0; i < 3; i++) {
    CHECK_OK(tg_env_cartpole_get_state(e, i, after[i]));
    CHECK(memcmp(before[i], after[i], sizeof before[i]) == 0);
  }
  CHECK_STATUS(tg_env_cartpole_get_state(e, 3, after[0]), TG_ERR_INVALID);
  tg_env_free(e);
  CHECK_STATUS(tg_env_cartpole_new(0, 1, 0, &e), TG_ERR_INVALID);
  tg_env_spec sp = tg_env_spec_of(e);
  CHECK(e == NULL && sp.n == 0); /* a failed constructor leaves NULL */
  tg_env_free(e);
}

/* Instance i's action at step t: a fixed pattern that ends episodes often. */
static int32_t pattern(int i, int t) { return (int32_t)(((unsigned)(t * 7 + i * 3) / 3 + (unsigned)i) % 2); }

/* (f) instance i's trajectory depends only on the seed and i, not on n. */
static void test_streams(void) {
  static bufs b[3];
  static const int ns[3] = {1, 5, 64};
  tg_env *e[3];
  for (int k = 0; k < 3; k++) e[k] = new_env(ns[k], 42, 0, &b[k]);
  for (int k = 1; k < 3; k++) CHECK(memcmp(b[0].obs, b[k].obs, 4 * sizeof(float)) == 0);
  CHECK(memcmp(b[1].obs, b[2].obs, 5 * 4 * sizeof(float)) == 0);
  CHECK(memcmp(b[2].obs, b[2].obs + 4, 4 * sizeof(float)) != 0); /* instances differ */
  int mismatches = 0, episodes = 0;
  long heap0 = tg_test_heap_calls();
  for (int t = 0; t < 2000; t++) {
    for (int k = 0; k < 3; k++) {
      int32_t a[MAXN];
      for (int i = 0; i < ns[k]; i++) a[i] = pattern(i, t);
      if (tg_env_step(e[k], a, &b[k].out) != TG_OK) mismatches++;
    }
    for (int k = 1; k < 3; k++) {
      int m = ns[k - 1];
      mismatches += memcmp(b[k - 1].obs, b[k].obs, (size_t)m * 4 * sizeof(float)) != 0;
      mismatches += memcmp(b[k - 1].final_obs, b[k].final_obs, (size_t)m * 4 * sizeof(float)) != 0;
      mismatches += memcmp(b[k - 1].term, b[k].term, (size_t)m) != 0;
      mismatches += memcmp(b[k - 1].ep_length, b[k].ep_length, (size_t)m * sizeof(int32_t)) != 0;
    }
    episodes += b[2].term[0];
  }
  long heap = tg_test_heap_calls() - heap0;
  CHECK_MSG(mismatches == 0, "%d steps where instances differ between n = 1, 5, 64", mismatches);
  CHECK_MSG(episodes > 20, "only %d episodes of instance 0", episodes);
  CHECK_MSG(heap == 0, "%ld heap calls in 6000 steps", heap);
  /* another seed starts elsewhere */
  bufs o;
  tg_env *other = new_env(1, 43, 0, &o);
  double s0[4], s1[4];
  tg_env *fresh = new_env(1, 42, 0, &b[0]);
  CHECK_OK(tg_env_cartpole_get_state(fresh, 0, s0));
  CHECK_OK(tg_env_cartpole_get_state(other, 0, s1));
  CHECK(max_diff(s0, s1) > 0);
  for (int k = 0; k < 3; k++) tg_env_free(e[k]);
  tg_env_free(other);
  tg_env_free(fresh);
}

/* Reset draws: U(-0.05, 0.05) per component, spread over the range, mean near 0. */
static void test_reset_distribution(void) {
  enum { N = 4096 };
  tg_env *e = NULL;
  CHECK_OK(tg_env_cartpole_new(N, 9, 0, &e));
  static float obs[N * 4];
  CHECK_OK(tg_env_reset(e, obs));
  double lo = 1, hi = -1, sum = 0;
  for (int k = 0; k < N * 4; k++) {
    lo = fmin(lo, obs[k]);
    hi = fmax(hi, obs[k]);
    sum += obs[k];
  }
  /* the mean of 16384 U(-0.05, 0.05) has std 0.0002 */
  CHECK_MSG(lo >= -0.05 && hi <= 0.05 && lo < -0.0495 && hi > 0.0495 && fabs(sum / (N * 4)) < 0.001,
            "range [%g, %g], mean %g", lo, hi, sum / (N * 4));
  CHECK(strcmp(tg_env_name(e), "cartpole") == 0);
  tg_env_spec sp = tg_env_spec_of(e);
  CHECK(sp.n == N && sp.obs_dim == 4 && sp.n_actions == 2);
  tg_env_free(e);
}

/* The state as bytes: an env loaded from a save steps exactly as the saved one goes on to step. */
static void test_state_bytes(void) {
  enum { N = 5 };
  bufs a, b;
  tg_env *ea = new_env(N, 77, 0, &a), *eb = NULL;
  for (int t = 0; t < 137; t++) {
    int32_t act[N];
    for (int i = 0; i < N; i++) act[i] = pattern(i, t);
    CHECK_OK(tg_env_step(ea, act, &a.out));
  }
  size_t size = tg_env_bytes(ea);
  CHECK(size > 0);
  unsigned char *saved = malloc(size);
  CHECK_OK(tg_env_write_bytes(ea, saved, size));
  CHECK_OK(tg_env_cartpole_new(N, 12345, 0, &eb)); /* another seed, never reset: the load sets both */
  bufs_init(&b);
  CHECK_OK(tg_env_read_bytes(eb, saved, size));
  int diff = 0;
  for (int t = 137; t < 737; t++) {
    int32_t act[N];
    for (int i = 0; i < N; i++) act[i] = pattern(i, t);
    CHECK_OK(tg_env_step(ea, act, &a.out));
    CHECK_OK(tg_env_step(eb, act, &b.out));
    diff += memcmp(a.obs, b.obs, sizeof(float) * N * 4) != 0 || memcmp(a.final_obs, b.final_obs, sizeof(float) * N * 4) != 0 ||
            memcmp(a.ep_length, b.ep_length, sizeof(int32_t) * N) != 0 || memcmp(a.term, b.term, N) != 0;
  }
  CHECK_MSG(diff == 0, "%d of 600 steps differ after a load", diff);
  tg_env *other = NULL;
  CHECK_OK(tg_env_cartpole_new(N + 1, 77, 0, &other));
  CHECK_STATUS(tg_env_read_bytes(other, saved, size), TG_ERR_INVALID);
  CHECK_STATUS(tg_env_read_bytes(eb, saved, size - 1), TG_ERR_INVALID);
  saved[0] ^= 1;
  CHECK_STATUS(tg_env_read_bytes(eb, saved, size), TG_ERR_INVALID);
  free(saved);
  tg_env_free(ea);
  tg_env_free(eb);
  tg_env_free(other);
}

int main(void) {
  test_golden_table();
  test_gym_file();
  test_push_right();
  test_truncation();
  test_bad_actions();
  test_streams();
  test_reset_distribution();
  test_state_bytes();
  return tg_test_finish();
}
