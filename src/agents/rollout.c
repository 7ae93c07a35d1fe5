/* PPO's rollout buffer: T steps of N environments, GAE(lambda) advantages and returns, shuffled minibatches. */
#include <string.h>
#include "base/alloc.h"
#include "agents/ppo_internal.h"
#include "tickgrad/rng.h"

tg_status rl_rollout_init(rl_rollout *r, int T, int N, int obs_dim, int act_dim) {
  memset(r, 0, sizeof *r);
  if (T < 1 || N < 1 || obs_dim < 1 || act_dim < 0)
    return tg_error(TG_ERR_INVALID, "ppo rollout: %d steps, %d environments and obs_dim %d must be >= 1 (act_dim %d >= 0)",
                    T, N, obs_dim, act_dim);
  size_t n = (size_t)T * (size_t)N;
  r->T = T;
  r->N = N;
  r->obs_dim = obs_dim;
  r->act_dim = act_dim;
  if (act_dim > 0 && !(r->action_f = tg_calloc(n * (size_t)act_dim, sizeof(float)))) {
    rl_rollout_free(r);
    return tg_error(TG_ERR_NOMEM, "ppo rollout: out of host memory for %d x %d actions of %d floats", T, N, act_dim);
  }
  r->obs = tg_calloc(n * (size_t)obs_dim, sizeof(float));
  r->action = tg_calloc(n, sizeof(int32_t));
  r->logp = tg_calloc(n, sizeof(float));
  r->value = tg_calloc(n, sizeof(float));
  r->reward = tg_calloc(n, sizeof(float));
  r->done = tg_calloc(n, sizeof(uint8_t));
  r->adv = tg_calloc(n, sizeof(float));
  r->ret = tg_calloc(n, sizeof(float));
  if (!r->obs || !r->action || !r->logp || !r->value || !r->reward || !r->done || !r->adv || !r->ret) {
    rl_rollout_free(r);
    return tg_error(TG_ERR_NOMEM, "ppo rollout: out of host memory for %d steps x %d environments x %d floats", T, N,
                    obs_dim);
  }
  return TG_OK;
}

void rl_rollout_free(rl_rollout *r) {
  tg_free(r->obs);
  tg_free(r->action);
  tg_free(r->action_f);
  tg_free(r->logp);
  tg_free(r->value);
  tg_free(r->reward);
  tg_free(r->done);
  tg_free(r->adv);
  tg_free(r->ret);
  memset(r, 0, sizeof *r);
}

/* CleanRL's loop, in float64 per step and stored as float32:
 *   next_nonterminal = 1 - done[t+1] (1 - next_done at t = T-1), next_v = value[t+1] (next_value)
 *   delta = r[t] + gamma next_v next_nonterminal - value[t]
 *   adv[t] = delta + gamma lambda next_nonterminal adv[t+1];  ret[t] = adv[t] + value[t] */
void rl_gae(const float *reward, const float *value, const uint8_t *done, const float *next_value,
            const uint8_t *next_done, int T, int N, float gamma, float lambda, float *adv, float *ret) {
  double g = gamma, gl = (double)gamma * (double)lambda;
  for (int i = 0; i < N; i++) {
    double last = 0.0;
    for (int t = T - 1; t >= 0; t--) {
      size_t k = (size_t)t * (size_t)N + (size_t)i;
      double nonterm, next_v;
      if (t == T - 1) {
        nonterm = next_done[i] ? 0.0 : 1.0;
        next_v = next_value[i];
      } else {
        nonterm = done[k + (size_t)N] ? 0.0 : 1.0;
        next_v = value[k + (size_t)N];
      }
      double delta = (double)reward[k] + g * next_v * nonterm - (double)value[k];
      last = delta + gl * nonterm * last;
      adv[k] = (float)last;
      ret[k] = (float)(last + (double)value[k]);
    }
  }
}

void rl_rollout_gae(rl_rollout *r, const float *next_value, const uint8_t *next_done, float gamma, float lambda) {
  rl_gae(r->reward, r->value, r->done, next_value, next_done, r->T, r->N, gamma, lambda, r->adv, r->ret);
}

void rl_permutation(uint64_t seed, uint64_t stream, int32_t n, int32_t *perm) {
  for (int32_t i = 0; i < n; i++) perm[i] = i;
  for (int32_t i = n - 1; i > 0; i--) { /* Fisher-Yates: swap i with a uniform j in [0, i] */
    uint32_t w[4];
    tg_philox(seed, stream, (uint64_t)i, w);
    int32_t j = (int32_t)rl_u32_below(w[0], (int64_t)i + 1);
    int32_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

void rl_rollout_gather(const rl_rollout *r, const int32_t *idx, int m, const rl_ppo_mb *mb) {
  size_t O = (size_t)r->obs_dim;
  for (int j = 0; j < m; j++) {
    size_t k = (size_t)idx[j];
    memcpy(mb->obs + (size_t)j * O, r->obs + k * O, O * sizeof(float));
    mb->action[j] = r->action[k];
    if (r->act_dim) memcpy(mb->action_f + (size_t)j * r->act_dim, r->action_f + k * r->act_dim, (size_t)r->act_dim * sizeof(float));
    mb->logp[j] = r->logp[k];
    mb->adv[j] = r->adv[k];
    mb->ret[j] = r->ret[k];
    mb->value[j] = r->value[k];
  }
}
