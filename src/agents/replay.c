/* The replay buffer: a ring of (s, a, r, s', terminated) sampled uniformly with replacement from Philox. */
#include <string.h>
#include "base/alloc.h"
#include "agents/dqn_internal.h"
#include "tickgrad/rng.h"

tg_status rl_replay_init(rl_replay *r, int64_t cap, int obs_dim, uint64_t seed) {
  memset(r, 0, sizeof *r);
  if (cap < 1 || obs_dim < 1)
    return tg_error(TG_ERR_INVALID, "replay: capacity %lld and obs_dim %d must both be >= 1", (long long)cap, obs_dim);
  size_t rows = (size_t)cap, od = (size_t)obs_dim;
  r->cap = cap;
  r->obs_dim = obs_dim;
  r->seed = seed;
  r->obs = tg_malloc(rows * od * sizeof(float));
  r->next_obs = tg_malloc(rows * od * sizeof(float));
  r->action = tg_malloc(rows * sizeof(int32_t));
  r->reward = tg_malloc(rows * sizeof(float));
  r->term = tg_malloc(rows * sizeof(float));
  if (!r->obs || !r->next_obs || !r->action || !r->reward || !r->term) {
    rl_replay_free(r);
    return tg_error(TG_ERR_NOMEM, "replay: out of memory for %lld transitions of %d floats", (long long)cap, obs_dim);
  }
  return TG_OK;
}

void rl_replay_free(rl_replay *r) {
  tg_free(r->obs);
  tg_free(r->next_obs);
  tg_free(r->action);
  tg_free(r->reward);
  tg_free(r->term);
  memset(r, 0, sizeof *r);
}

void rl_replay_add(rl_replay *r, int n, const float *obs, const float *next_obs, const int32_t *action,
                   const float *reward, const uint8_t *terminated) {
  size_t od = (size_t)r->obs_dim;
  for (int i = 0; i < n; i++) {
    int64_t p = r->pos;
    memcpy(r->obs + (size_t)p * od, obs + (size_t)i * od, od * sizeof(float));
    memcpy(r->next_obs + (size_t)p * od, next_obs + (size_t)i * od, od * sizeof(float));
    r->action[p] = action[i];
    r->reward[p] = reward[i];
    r->term[p] = terminated[i] ? 1.0f : 0.0f;
    r->pos = p + 1 == r->cap ? 0 : p + 1;
    if (r->size < r->cap) r->size++;
  }
}

void rl_replay_sample(rl_replay *r, rl_batch *b) {
  size_t od = (size_t)r->obs_dim;
  uint32_t w[4];
  memset(b->onehot, 0, (size_t)b->b * (size_t)b->n_actions * sizeof(float));
  for (int64_t j = 0; j < b->b; j++) {
    uint64_t k = r->draws + (uint64_t)j;
    if (j == 0 || k % 4 == 0) tg_philox(r->seed, RL_STREAM_REPLAY, k / 4, w);
    int64_t row = rl_u32_below(w[k % 4], r->size);
    memcpy(b->s + (size_t)j * od, r->obs + (size_t)row * od, od * sizeof(float));
    memcpy(b->s2 + (size_t)j * od, r->next_obs + (size_t)row * od, od * sizeof(float));
    int32_t a = r->action[row];
    b->action[j] = a;
    if (a >= 0 && a < b->n_actions) b->onehot[j * b->n_actions + a] = 1.0f;
    b->reward[j] = r->reward[row];
    b->term[j] = r->term[row];
  }
  r->draws += (uint64_t)b->b;
}

tg_status rl_batch_init(rl_batch *b, int64_t rows, int obs_dim, int n_actions) {
  memset(b, 0, sizeof *b);
  if (rows < 1 || obs_dim < 1 || n_actions < 1)
    return tg_error(TG_ERR_INVALID, "replay batch: rows %lld, obs_dim %d and n_actions %d must be >= 1",
                    (long long)rows, obs_dim, n_actions);
  size_t n = (size_t)rows;
  b->b = rows;
  b->obs_dim = obs_dim;
  b->n_actions = n_actions;
  b->s = tg_malloc(n * (size_t)obs_dim * sizeof(float));
  b->s2 = tg_malloc(n * (size_t)obs_dim * sizeof(float));
  b->onehot = tg_calloc(n * (size_t)n_actions, sizeof(float));
  b->action = tg_calloc(n, sizeof(int32_t));
  b->reward = tg_calloc(n, sizeof(float));
  b->term = tg_calloc(n, sizeof(float));
  if (!b->s || !b->s2 || !b->onehot || !b->action || !b->reward || !b->term) {
    rl_batch_free(b);
    return tg_error(TG_ERR_NOMEM, "replay batch: out of memory for %lld rows", (long long)rows);
  }
  return TG_OK;
}

void rl_batch_free(rl_batch *b) {
  tg_free(b->s);
  tg_free(b->s2);
  tg_free(b->onehot);
  tg_free(b->action);
  tg_free(b->reward);
  tg_free(b->term);
  memset(b, 0, sizeof *b);
}
