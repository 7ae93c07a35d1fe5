/* PPO checkpoints: weights, Adam's state, and the agent (current observations, recent episodes, counters, env state). */
#include <string.h>
#include "base/alloc.h"
#include "agents/ppo_internal.h"

static const rl_agent_kind AGENT = {"ppo", "PPO", PP_AGENT_FORMAT, {"weights.safetensors", "optim.safetensors"}, 2,
                                    "another env?"};

static tg_status save_agent(void *run, const char *dir) {
  pp_run *r = run;
  rl_agent_out a;
  int32_t *done = tg_calloc((size_t)r->N, sizeof(int32_t)); /* [N] next_done as i32 */
  if (!done) return tg_error(TG_ERR_NOMEM, "ppo: out of host memory for a checkpoint");
  for (int i = 0; i < r->N; i++) done[i] = r->next_done[i];
  rl_agent_begin(&a, &AGENT);
  rl_agent_put(&a, "next_obs", TG_F32, 2, r->N, r->O, r->next_obs);
  rl_agent_put(&a, "next_done", TG_I32, 1, r->N, 0, done);
  rl_agent_i64(&a, "iteration", r->iter);
  rl_agent_i64(&a, "episodes", r->base.episodes);
  rl_agent_recent(&a, &r->base.recent);
  tg_status st = rl_agent_save(&a, dir, r->base.env);
  tg_free(done);
  return st;
}

/* ---- loading ---- */

static tg_status load_counters(pp_run *r, const rl_agent_in *a) {
  int64_t iter = 0, episodes = 0;
  tg_status st = rl_agent_count(a, "iteration", 0, r->n_iter, &iter);
  if (st == TG_OK) st = rl_agent_count(a, "episodes", 0, INT64_MAX, &episodes);
  if (st != TG_OK) return st;
  r->iter = iter, r->base.episodes = episodes;
  return rl_agent_recent_load(a, &r->base.recent);
}

/* The env's saved state; an env that cannot save one (0 bytes) is reset instead, so its running
 * episodes restart (the resumed run then differs from an uninterrupted one). */
static tg_status load_env(pp_run *r, const rl_agent_in *a, int64_t env_bytes) {
  if (env_bytes) return rl_agent_env_load(a, r->base.env, env_bytes);
  if (r->c.log) fprintf(r->c.log, "ppo: env '%s' cannot save its state; its episodes restart on resume\n", tg_env_name(r->base.env));
  memset(r->next_done, 1, (size_t)r->N);
  return tg_env_reset(r->base.env, r->next_obs);
}

static tg_status load_arrays(pp_run *r, const rl_agent_in *a) {
  const tg_tensor *t[2] = {0};
  tg_status st = rl_agent_tensor(a, "next_obs", TG_F32, 2, r->N, r->O, &t[0]);
  if (st == TG_OK) st = rl_agent_tensor(a, "next_done", TG_I32, 1, r->N, 0, &t[1]);
  if (st != TG_OK) return st;
  memcpy(r->next_obs, t[0]->data, tg_nbytes(t[0]));
  for (int i = 0; i < r->N; i++) r->next_done[i] = ((const int32_t *)t[1]->data)[i] != 0;
  return TG_OK;
}

static tg_status load_agent(void *run, const char *dir) {
  pp_run *r = run;
  rl_agent_in a;
  int64_t env_bytes = 0;
  tg_status st = rl_agent_open(&a, &AGENT, dir, r->base.env);
  if (st == TG_OK) st = load_counters(r, &a);
  if (st == TG_OK) st = rl_agent_env_bytes(&a, r->base.env, 0, &env_bytes);
  if (st == TG_OK) st = load_arrays(r, &a);
  if (st == TG_OK) st = load_env(r, &a, env_bytes);
  rl_agent_close(&a);
  return st;
}

/* ---- the set ---- */

static rl_ckpt_parts parts(pp_run *r) {
  return (rl_ckpt_parts){.kind = &AGENT, .stores = {r->net.base.store}, .opt = r->net.base.opt, .seed = r->c.seed,
                         .position = &r->iter, .saved = &r->saved_iter, .unit = "iteration", .run = r, .save_agent = save_agent,
                         .load_agent = load_agent};
}

tg_status pp_ckpt_save(pp_run *r) {
  rl_ckpt_parts p = parts(r);
  return rl_ckpt_save(&p, r->base.dir);
}

tg_status pp_ckpt_load(pp_run *r, int *found) {
  rl_ckpt_parts p = parts(r);
  return rl_ckpt_load(&p, r->base.dir, r->c.log, found);
}
