/* The Vulkan kernels of ppo_loss against the CPU's, forward and backward: categorical (i32 and i64 actions) and
 * Gaussian policies, the value loss clipped or not, advantages normalised or not, ratios on both sides of the clip,
 * more samples than one workgroup; a categorical action outside the logits is the CPU's error. The Vulkan kernels
 * compute in float (GPUs without fp64 run them), the CPU's in double. */
#include <math.h>
#include <string.h>
#include "ops/ppo_row.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"
#include "vulkan/vk_test.h"

/* Uniform in [lo, hi) from a fixed sequence. */
static double draw(uint64_t *s, double lo, double hi) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * (double)(*s >> 11) * (1.0 / 9007199254740992.0);
}

/* ppo_loss over b samples of a actions (gauss: a Gaussian of a dims; else categorical, actions of dtype), old_logp
 * within +-0.3 of the policy's (ratios from 0.74 to 1.35, clip 0.2); want: dpol, dvalue, dlog_std. */
static void check_ppo(const char *label, int64_t b, int64_t a, int gauss, tg_dtype dtype, int clip_v, int norm,
                      const int *want) {
  vk_pair in[8];
  int n = gauss ? 8 : 7;
  uint64_t seed = 91;
  vk_pair_new(&in[0], "pol", 2, (int64_t[]){b, a});
  vk_pair_fill(&in[0], 92, -1.0f, 1.0f);
  vk_pair_new(&in[1], "value", 1, (int64_t[]){b});
  vk_pair_fill(&in[1], 93, -1.0f, 1.0f);
  if (gauss) {
    vk_pair_new(&in[2], "actions", 2, (int64_t[]){b, a});
    vk_pair_fill(&in[2], 94, -1.5f, 1.5f);
    vk_pair_new(&in[7], "log_std", 1, (int64_t[]){a});
    vk_pair_fill(&in[7], 95, -0.7f, 0.2f);
  } else {
    int64_t act[4096];
    for (int64_t i = 0; i < b; i++) act[i] = (int64_t)draw(&seed, 0, (double)a);
    vk_pair_new_index(&in[2], "actions", dtype, 1, (int64_t[]){b}, act);
  }
  const char *names[4] = {"old_logp", "adv", "returns", "old_value"};
  for (int k = 3; k < 7; k++) {
    vk_pair_new(&in[k], names[k - 3], 1, (int64_t[]){b});
    vk_pair_fill(&in[k], 96 + (uint64_t)k, -1.0f, 1.0f);
  }
  for (int64_t i = 0; i < b; i++) { /* old_logp near the policy's logp */
    tg_ppo_pol pol = gauss ? tg_ppo_gauss_pol(in[0].host + i * a, in[7].host, in[2].host + i * a, a)
                           : tg_ppo_cat_pol(in[0].host + i * a, a,
                                            dtype == TG_I32 ? ((int32_t *)(void *)in[2].host)[i]
                                                            : ((int64_t *)(void *)in[2].host)[i]);
    in[3].host[i] = (float)(pol.logp + draw(&seed, -0.3, 0.3));
  }
  vk_pair_upload(&in[3]);
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.f[0] = 0.2f, attr.f[1] = 0.5f, attr.f[2] = 0.01f;
  attr.i[0] = clip_v, attr.i[1] = norm, attr.i[2] = gauss;
  int w[8] = {want[0], want[1], 0, 0, 0, 0, 0, gauss ? want[2] : 0};
  vk_check_op(label, TG_OP_PPO_LOSS, in, n, 1, (int64_t[]){TG_PPO_NSTATS}, w, &attr);
  for (int k = 0; k < n; k++) vk_pair_free(&in[k]);
}

/* An action outside the logits: the CPU's words. */
static void check_bad_action(void) {
  vk_pair in[7];
  vk_pair_new(&in[0], "logits", 2, (int64_t[]){3, 4});
  vk_pair_fill(&in[0], 97, -1.0f, 1.0f);
  vk_pair_new(&in[1], "value", 1, (int64_t[]){3});
  vk_pair_new_index(&in[2], "actions", TG_I64, 1, (int64_t[]){3}, (int64_t[]){1, 4, 0});
  for (int k = 3; k < 7; k++) vk_pair_new(&in[k], "rollout", 1, (int64_t[]){3});
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.f[0] = 0.2f;
  CHECK(vk_run_fwd(TG_OP_PPO_LOSS, in, 7, TG_F32, 1, (int64_t[]){TG_PPO_NSTATS}, &attr) == TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "action 4 at row 1 of 'actions' is outside [0, 4) (logits 'logits' have 4"),
            "ppo_loss' fault: %s", tg_last_error());
  for (int k = 0; k < 7; k++) vk_pair_free(&in[k]);
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  check_ppo("ppo_loss, categorical", 64, 3, 0, TG_I64, 1, 1, (int[]){1, 1});
  check_ppo("ppo_loss, categorical, i32 actions, no clipping or normalising", 300, 5, 0, TG_I32, 0, 0, (int[]){1, 1});
  check_ppo("ppo_loss, categorical, dvalue only", 40, 2, 0, TG_I64, 1, 1, (int[]){0, 1});
  check_ppo("ppo_loss, Gaussian", 64, 2, 1, TG_F32, 1, 1, (int[]){1, 1, 1});
  check_ppo("ppo_loss, Gaussian, more samples than a workgroup", 1000, 3, 1, TG_F32, 0, 1, (int[]){1, 1, 1});
  check_ppo("ppo_loss, Gaussian, dlog_std only", 50, 4, 1, TG_F32, 1, 0, (int[]){0, 0, 1});
  check_bad_action();
  vk_report("ppo_loss", " (float on Vulkan, double on the CPU)");
  return tg_test_finish();
}
