/* Op test for ppo_loss (categorical and Gaussian): float64 references, finite-difference gradients, a hand-worked case, errors. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "support/check.h"
#include "support/op_check.h"
#include "tickgrad/graph.h"

/* Loss gradients are about 1/B; a tolerance tighter than the default catches wrong scales. */
#define PPO_GRAD_TOL 2e-4

typedef struct ppo_ctx {
  tg_ppo_coefs c;
  int value_2d; /* value [B, 1] instead of [B] */
} ppo_ctx;

static tg_tensor *build_ppo(tg_graph *g, tg_tensor **in, const void *ctx) {
  const ppo_ctx *p = ctx;
  return tg_ppo_loss(g, in[0], in[1], in[2], in[3], in[4], in[5], in[6], &p->c);
}

static double dmax(double a, double b) { return a > b ? a : b; }
static double dclamp(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* CleanRL's ppo.py minibatch loss, written out in float64. Inputs: logits [B, A], value [B],
 * actions [B], old_logp, adv, returns, old_value [B]. out [6]. */
static void ref_ppo(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const ppo_ctx *p = ctx;
  int64_t B = spec[0].shape[0], A = spec[0].shape[1];
  double eps = p->c.clip, mean = 0.0, sd = 1.0;
  if (p->c.norm_adv) {
    double s = 0.0, q = 0.0;
    for (int64_t i = 0; i < B; i++) s += in[4][i];
    mean = s / (double)B;
    for (int64_t i = 0; i < B; i++) q += (in[4][i] - mean) * (in[4][i] - mean);
    sd = sqrt(q / (double)(B - 1)) + 1e-8;
  }
  double pg = 0, vl = 0, ent = 0, kl = 0, cf = 0;
  for (int64_t i = 0; i < B; i++) {
    const double *l = in[0] + i * A;
    double z = 0.0;
    for (int64_t j = 0; j < A; j++) z += exp(l[j]);
    double lse = log(z), h = 0.0;
    for (int64_t j = 0; j < A; j++) h -= exp(l[j] - lse) * (l[j] - lse);
    double logr = l[(int64_t)in[2][i]] - lse - in[3][i], r = exp(logr);
    double adv = (in[4][i] - mean) / sd;
    pg += dmax(-adv * r, -adv * dclamp(r, 1 - eps, 1 + eps));
    double v = in[1][i], R = in[5][i], vo = in[6][i];
    double vu = (v - R) * (v - R), vc = vo + dclamp(v - vo, -eps, eps) - R;
    vl += p->c.clip_vloss ? dmax(vu, vc * vc) : vu;
    ent += h;
    kl += (r - 1) - logr;
    cf += fabs(r - 1) > eps;
  }
  pg /= (double)B;
  vl = 0.5 * vl / (double)B;
  ent /= (double)B;
  out[0] = pg - p->c.ent_coef * ent + p->c.vf_coef * vl;
  out[1] = pg;
  out[2] = vl;
  out[3] = ent;
  out[4] = kl / (double)B;
  out[5] = cf / (double)B;
}

/* One random case: logits and value are parameters; old_logp near log(1/A) so ratios straddle the
 * clip range, old_value near the value so the value clip is sometimes active. */
static void run_case(const char *name, int64_t B, int64_t A, tg_dtype adt, const ppo_ctx *ctx,
                     unsigned long long seed) {
  int64_t sl[2] = {B, A}, sv1[1] = {B}, sv2[2] = {B, 1};
  double lp = -log((double)A);
  oc_case c = {.name = name, .n_in = 7, .build = build_ppo, .ref = ref_ppo, .ctx = ctx, .grad_tol = PPO_GRAD_TOL};
  c.in[0] = oc_f32_input("logits", 2, sl, 1, -1.0, 1.0);
  c.in[1] = ctx->value_2d ? oc_f32_input("value", 2, sv2, 1, -1.0, 1.0) : oc_f32_input("value", 1, sv1, 1, -1.0, 1.0);
  c.in[2] = (oc_input){.name = "actions", .dtype = adt, .ndim = 1, .shape = {B}, .lo = 0, .hi = (double)A};
  c.in[3] = oc_f32_input("old_logp", 1, sv1, 0, lp - 0.4, lp + 0.4);
  c.in[4] = oc_f32_input("adv", 1, sv1, 0, -2.0, 3.0);
  c.in[5] = oc_f32_input("returns", 1, sv1, 0, -1.5, 1.5);
  c.in[6] = oc_f32_input("old_value", 1, sv1, 0, -1.0, 1.0);
  oc_run(&c, seed);
}

static void run_random_cases(unsigned long long seed) {
  static const ppo_ctx clean = {{0.2f, 0.5f, 0.01f, 1, 1}, 0};  /* CleanRL's defaults */
  static const ppo_ctx plain = {{0.1f, 1.0f, 0.2f, 0, 0}, 1};   /* no value clip, raw advantages, [B, 1] value */
  static const ppo_ctx wide = {{0.3f, 0.25f, 0.05f, 1, 1}, 1};
  run_case("ppo_loss [8,3] i64 cleanrl", 8, 3, TG_I64, &clean, seed);
  run_case("ppo_loss [6,2] i32 plain", 6, 2, TG_I32, &plain, seed);
  run_case("ppo_loss [5,7] i32 wide", 5, 7, TG_I32, &wide, seed);
  run_case("ppo_loss [2,1] i64 one action", 2, 1, TG_I64, &clean, seed);
  run_case("ppo_loss [300,3] i64 (more rows than a CUDA block)", 300, 3, TG_I64, &clean, seed);
}

/* A case worked by hand: B = 2, A = 2, logits 0 (log pi = log 0.5), ratios 1.5 and 0.9, raw
 * advantages +1 and -1, values 0.5 and 0 against returns 1 with old values 0 (clip 0.2):
 *   pg: max(-1.5, -1.2) = -1.2 (clipped: no gradient), max(0.9, 0.9) = 0.9 (inside: gradient);
 *   v: max(0.25, (0.2 - 1)^2 = 0.64) = 0.64 (clipped side: no gradient), max(1, 1) = 1 (tie, inside). */
static void test_hand_case(void) {
  const int64_t sl[2] = {2, 2}, sv[1] = {2};
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(s, "ppo_hand");
  tg_tensor *logits = tg_param(g, "logits", 2, sl, (tg_init){TG_INIT_ZEROS, 0, 0});
  tg_tensor *value = tg_param(g, "value", 1, sv, (tg_init){TG_INIT_ZEROS, 0, 0});
  tg_tensor *in[5];
  const char *names[5] = {"actions", "old_logp", "adv", "returns", "old_value"};
  in[0] = tg_input(g, names[0], TG_I32, 1, sv);
  for (int k = 1; k < 5; k++) in[k] = tg_input(g, names[k], TG_F32, 1, sv);
  tg_ppo_coefs c = {0.2f, 0.5f, 0.01f, 1, 0};
  tg_tensor *out = tg_ppo_loss(g, logits, value, in[0], in[1], in[2], in[3], in[4], &c);
  tg_tensor *loss = tg_slice(g, out, 0, TG_PPO_LOSS, 1);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  CHECK_OK(tg_graph_plan(g, &o));
  if (tg_graph_status(g) != TG_OK) goto done;
  int32_t act[2] = {0, 1};
  float old_logp[2] = {(float)(log(0.5) - log(1.5)), (float)(log(0.5) - log(0.9))};
  float adv[2] = {1.0f, -1.0f}, ret[2] = {1.0f, 1.0f}, old_v[2] = {0.0f, 0.0f};
  void *data[5] = {act, old_logp, adv, ret, old_v};
  for (int k = 0; k < 5; k++) {
    tg_tensor t;
    tg_tensor_view(&t, names[k], tg_cpu(0), k ? TG_F32 : TG_I32, 1, sv, data[k]);
    CHECK_OK(tg_graph_bind(g, names[k], &t));
  }
  float *v = tg_store_tensor(s, tg_store_find(s, "value"), 0).data;
  v[0] = 0.5f;
  CHECK_OK(tg_graph_run(g));
  const float *st = out->data;
  double r0 = 1.5, r1 = 0.9;
  double want[6] = {0, -0.15, 0.5 * (0.64 + 1.0) / 2, log(2.0), ((r0 - 1) - log(r0) + (r1 - 1) - log(r1)) / 2, 0.5};
  want[0] = want[1] - 0.01 * want[3] + 0.5 * want[2];
  for (int k = 0; k < 6; k++)
    CHECK_MSG(fabs(st[k] - want[k]) < 2e-6, "stat %d: got %.8g want %.8g", k, (double)st[k], want[k]);
  CHECK_OK(tg_graph_backward(g, loss));
  const float *gv = tg_store_tensor(s, tg_store_find(s, "value"), 1).data;
  const float *gl = tg_store_tensor(s, tg_store_find(s, "logits"), 1).data;
  /* value 0: the clipped side wins, gradient 0; value 1: 0.5 (vf) * 0.5 / 2 * 2 (v - R) = -0.25 */
  CHECK_MSG(gv[0] == 0.0f && fabs(gv[1] + 0.25) < 1e-6, "value grads %g %g", (double)gv[0], (double)gv[1]);
  /* row 0: only the entropy term, which is flat at uniform logits: 0. row 1 (action 1): the
   * surrogate -adv r gives d/dlogp = -adv r / B = 0.9 / 2 = 0.45; d logp / d l = [-0.5, 0.5]. */
  CHECK_MSG(fabs(gl[0]) < 1e-7 && fabs(gl[1]) < 1e-7, "row 0 logit grads %g %g", (double)gl[0], (double)gl[1]);
  CHECK_MSG(fabs(gl[2] + 0.225) < 1e-6 && fabs(gl[3] - 0.225) < 1e-6, "row 1 logit grads %g %g", (double)gl[2],
            (double)gl[3]);
done:
  tg_graph_free(g);
  tg_store_free(s);
}

/* An action outside [0, A) at run: an error naming the node, the row and the value. */
static void test_action_error(void) {
  const int64_t sl[2] = {3, 2}, sv[1] = {3};
  tg_graph *g = tg_graph_new(NULL, "ppo_bad_action");
  tg_tensor *x[7];
  x[0] = tg_input(g, "logits", TG_F32, 2, sl);
  x[1] = tg_input(g, "value", TG_F32, 1, sv);
  x[2] = tg_input(g, "actions", TG_I64, 1, sv);
  const char *names[4] = {"old_logp", "adv", "returns", "old_value"};
  for (int k = 0; k < 4; k++) x[3 + k] = tg_input(g, names[k], TG_F32, 1, sv);
  tg_ppo_coefs c = {0.2f, 0.5f, 0.01f, 1, 1};
  tg_tensor *out = tg_ppo_loss(g, x[0], x[1], x[2], x[3], x[4], x[5], x[6], &c);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  o.training = 0;
  CHECK(out != NULL);
  CHECK_OK(tg_graph_plan(g, &o));
  float f[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
  int64_t act[3] = {1, 2, 0};
  tg_tensor t;
  tg_tensor_view(&t, "logits", tg_cpu(0), TG_F32, 2, sl, f);
  CHECK_OK(tg_graph_bind(g, "logits", &t));
  tg_tensor_view(&t, "value", tg_cpu(0), TG_F32, 1, sv, f);
  CHECK_OK(tg_graph_bind(g, "value", &t));
  tg_tensor_view(&t, "actions", tg_cpu(0), TG_I64, 1, sv, act);
  CHECK_OK(tg_graph_bind(g, "actions", &t));
  for (int k = 0; k < 4; k++) {
    tg_tensor_view(&t, names[k], tg_cpu(0), TG_F32, 1, sv, f + k);
    CHECK_OK(tg_graph_bind(g, names[k], &t));
  }
  tg_status st = tg_graph_run(g);
  CHECK_MSG(st == TG_ERR_INVALID && out && strstr(tg_last_error(), out->name) && strstr(tg_last_error(), "row 1") &&
                strstr(tg_last_error(), "action 2"),
            "status %s: %s", tg_status_name(st), tg_last_error());
  act[1] = 1;
  CHECK_OK(tg_graph_run(g));
  CHECK(out && isfinite(((float *)out->data)[0]));
  tg_graph_free(g);
}

/* Builder errors name the op, the operand, its shape and what was expected. */
static void test_build_errors(void) {
  const int64_t sl[2] = {4, 3}, sv[1] = {4}, s5[1] = {5}, sl1[2] = {1, 3}, sv1[1] = {1};
  tg_ppo_coefs c = {0.2f, 0.5f, 0.01f, 1, 1};
  struct {
    const char *what;
    int bad; /* which operand is wrong: 0 logits 1-D, 1 value [5], 2 f32 actions, 3 old_logp param, 4 clip 0, 5 B = 1 */
    tg_status want;
    const char *need;
  } cases[] = {
      {"logits 1-D", 0, TG_ERR_SHAPE, "logits"},         {"value [5]", 1, TG_ERR_SHAPE, "[5]"},
      {"f32 actions", 2, TG_ERR_SHAPE, "actions"},       {"param old_logp", 3, TG_ERR_INVALID, "depends on parameters"},
      {"clip 0", 4, TG_ERR_INVALID, "clip"},             {"B = 1", 5, TG_ERR_SHAPE, "at least 2"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tg_store *s = tg_store_new(tg_cpu(0), 1);
    tg_graph *g = tg_graph_new(s, "ppo_errors");
    int b = cases[i].bad;
    const int64_t *L = b == 5 ? sl1 : sl, *V = b == 5 ? sv1 : sv;
    tg_tensor *logits = b == 0 ? tg_input(g, "logits", TG_F32, 1, sv) : tg_input(g, "logits", TG_F32, 2, L);
    tg_tensor *value = tg_input(g, "value", TG_F32, 1, b == 1 ? s5 : V);
    tg_tensor *act = tg_input(g, "actions", b == 2 ? TG_F32 : TG_I32, 1, V);
    tg_tensor *olp = b == 3 ? tg_param(g, "old_logp", 1, V, (tg_init){TG_INIT_ZEROS, 0, 0})
                            : tg_input(g, "old_logp", TG_F32, 1, V);
    tg_tensor *adv = tg_input(g, "adv", TG_F32, 1, V), *ret = tg_input(g, "returns", TG_F32, 1, V);
    tg_tensor *ov = tg_input(g, "old_value", TG_F32, 1, V);
    tg_ppo_coefs cc = c;
    if (b == 4) cc.clip = 0.0f;
    tg_tensor *out = tg_ppo_loss(g, logits, value, act, olp, adv, ret, ov, &cc);
    oc_expect_build_error(g, out, cases[i].want, cases[i].what, (const char *const[]){"ppo_loss", cases[i].need, NULL});
    tg_store_free(s);
  }
}

/* ---- the Gaussian policy ---- */

static tg_tensor *build_ppo_gauss(tg_graph *g, tg_tensor **in, const void *ctx) {
  const ppo_ctx *p = ctx;
  return tg_ppo_loss_gaussian(g, in[0], in[7], in[1], in[2], in[3], in[4], in[5], in[6], &p->c);
}

/* CleanRL's ppo_continuous_action.py minibatch loss in float64. Inputs: mean [B, D], value [B],
 * actions [B, D], old_logp, adv, returns, old_value [B], log_std [D]. out [6]. */
static void ref_ppo_gauss(const double *const *in, const oc_input *spec, double *out, const void *ctx) {
  const ppo_ctx *p = ctx;
  int64_t B = spec[0].shape[0], D = spec[0].shape[1];
  double eps = p->c.clip, mean = 0.0, sd = 1.0, two_pi = 2.0 * 3.14159265358979323846;
  if (p->c.norm_adv) {
    double s = 0.0, q = 0.0;
    for (int64_t i = 0; i < B; i++) s += in[4][i];
    mean = s / (double)B;
    for (int64_t i = 0; i < B; i++) q += (in[4][i] - mean) * (in[4][i] - mean);
    sd = sqrt(q / (double)(B - 1)) + 1e-8;
  }
  double pg = 0, vl = 0, ent = 0, kl = 0, cf = 0;
  for (int64_t i = 0; i < B; i++) {
    double logp = 0.0, h = 0.0;
    for (int64_t d = 0; d < D; d++) { /* torch.distributions.Normal's log_prob and entropy */
      double sg = exp(in[7][d]), x = in[2][i * D + d], mu = in[0][i * D + d];
      logp += -((x - mu) * (x - mu)) / (2 * sg * sg) - log(sg) - log(sqrt(two_pi));
      h += 0.5 + 0.5 * log(two_pi) + log(sg);
    }
    double logr = logp - in[3][i], r = exp(logr), adv = (in[4][i] - mean) / sd;
    pg += dmax(-adv * r, -adv * dclamp(r, 1 - eps, 1 + eps));
    double v = in[1][i], R = in[5][i], vo = in[6][i];
    double vu = (v - R) * (v - R), vc = vo + dclamp(v - vo, -eps, eps) - R;
    vl += p->c.clip_vloss ? dmax(vu, vc * vc) : vu;
    ent += h;
    kl += (r - 1) - logr;
    cf += fabs(r - 1) > eps;
  }
  out[1] = pg / (double)B;
  out[2] = 0.5 * vl / (double)B;
  out[3] = ent / (double)B;
  out[0] = out[1] - p->c.ent_coef * out[3] + p->c.vf_coef * out[2];
  out[4] = kl / (double)B;
  out[5] = cf / (double)B;
}

/* Means, log_std and value are parameters; actions sit near the means (about one sigma away) and
 * old log-probabilities near the new ones, so ratios straddle the clip range. */
static void run_gauss_case(const char *name, int64_t B, int64_t D, const ppo_ctx *ctx, unsigned long long seed) {
  int64_t sm[2] = {B, D}, sv[1] = {B}, sd[1] = {D};
  double lp = -(double)D * (0.5 + 0.9189385332 - 0.3); /* log pi at one sigma with log_std about -0.3 */
  oc_case c = {.name = name, .n_in = 8, .build = build_ppo_gauss, .ref = ref_ppo_gauss, .ctx = ctx,
               .grad_tol = PPO_GRAD_TOL};
  c.in[0] = oc_f32_input("mean", 2, sm, 1, -0.5, 0.5);
  c.in[1] = oc_f32_input("value", 1, sv, 1, -1.0, 1.0);
  c.in[2] = oc_f32_input("actions", 2, sm, 0, -1.2, 1.2);
  c.in[3] = oc_f32_input("old_logp", 1, sv, 0, lp - 0.5, lp + 0.5);
  c.in[4] = oc_f32_input("adv", 1, sv, 0, -2.0, 3.0);
  c.in[5] = oc_f32_input("returns", 1, sv, 0, -1.5, 1.5);
  c.in[6] = oc_f32_input("old_value", 1, sv, 0, -1.0, 1.0);
  c.in[7] = oc_f32_input("log_std", 1, sd, 1, -0.6, 0.0);
  oc_run(&c, seed);
}

static void run_gauss_cases(unsigned long long seed) {
  static const ppo_ctx clean = {{0.2f, 0.5f, 0.01f, 1, 1}, 0};
  static const ppo_ctx plain = {{0.1f, 1.0f, 0.2f, 0, 0}, 0};
  run_gauss_case("ppo_loss gaussian [8,1] cleanrl", 8, 1, &clean, seed);
  run_gauss_case("ppo_loss gaussian [6,3] plain", 6, 3, &plain, seed);
  run_gauss_case("ppo_loss gaussian [300,2] (more rows than a CUDA block)", 300, 2, &clean, seed);
}

/* Gaussian builder errors: log_std of the wrong length, integer actions. */
static void test_gauss_build_errors(void) {
  const int64_t sm[2] = {4, 2}, sv[1] = {4}, s3[1] = {3};
  tg_ppo_coefs c = {0.2f, 0.5f, 0.01f, 1, 1};
  for (int bad = 0; bad < 2; bad++) {
    tg_graph *g = tg_graph_new(NULL, "ppo_gauss_errors");
    tg_tensor *mu = tg_input(g, "mean", TG_F32, 2, sm), *ls = tg_input(g, "log_std", TG_F32, 1, bad == 0 ? s3 : sm + 1);
    tg_tensor *v = tg_input(g, "value", TG_F32, 1, sv);
    tg_tensor *a = bad == 1 ? tg_input(g, "actions", TG_I32, 1, sv) : tg_input(g, "actions", TG_F32, 2, sm);
    tg_tensor *r[4];
    const char *names[4] = {"old_logp", "adv", "returns", "old_value"};
    for (int k = 0; k < 4; k++) r[k] = tg_input(g, names[k], TG_F32, 1, sv);
    tg_tensor *out = tg_ppo_loss_gaussian(g, mu, ls, v, a, r[0], r[1], r[2], r[3], &c);
    oc_expect_build_error(g, out, TG_ERR_SHAPE, bad == 0 ? "log_std [3]" : "i32 actions",
                          (const char *const[]){"ppo_loss", bad == 0 ? "log_std" : "actions", bad == 0 ? "[3]" : "[4, 2]", NULL});
  }
}

int main(void) {
  unsigned long long seed = tg_test_seed(20250301ull);
  run_random_cases(seed);
  run_gauss_cases(seed);
  test_gauss_build_errors();
  test_hand_case();
  test_action_error();
  test_build_errors();
  return tg_test_finish();
}
