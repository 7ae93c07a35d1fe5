/* DQN checkpoints: online and target weights, Adam's state, and the agent (replay, observations, counters, env state). */
#include <string.h>
#include "agents/dqn_internal.h"

static const rl_agent_kind AGENT = {"dqn", "DQN", DQ_AGENT_FORMAT,
                                    {"weights.safetensors", "target.safetensors", "optim.safetensors"}, 3,
                                    "another env or buffer size?"};

static tg_status save_agent(void *run, const char *dir) {
  dq_run *r = run;
  rl_agent_out a;
  int64_t size = r->rb.size, O = r->base.sp.obs_dim;
  double acc[3] = {r->acc.loss, r->acc.q, r->acc.grad_norm};
  int64_t acc_bits[3]; /* doubles as their bit patterns: exact in an i64 tensor */
  memcpy(acc_bits, acc, sizeof acc);
  rl_agent_begin(&a, &AGENT);
  rl_agent_put(&a, "replay.obs", TG_F32, 2, size, O, r->rb.obs);
  rl_agent_put(&a, "replay.next_obs", TG_F32, 2, size, O, r->rb.next_obs);
  rl_agent_put(&a, "replay.action", TG_I32, 1, size, 0, r->rb.action);
  rl_agent_put(&a, "replay.reward", TG_F32, 1, size, 0, r->rb.reward);
  rl_agent_put(&a, "replay.terminated", TG_F32, 1, size, 0, r->rb.term);
  rl_agent_put(&a, "obs", TG_F32, 2, r->base.sp.n, O, r->obs);
  rl_agent_i64(&a, "step", r->step);
  rl_agent_i64(&a, "episodes", r->base.episodes);
  rl_agent_i64(&a, "replay_pos", r->rb.pos);
  rl_agent_i64(&a, "replay_size", r->rb.size);
  rl_agent_u64(&a, "replay_draws", r->rb.draws);
  rl_agent_recent(&a, &r->base.recent);
  rl_agent_put(&a, "accum", TG_I64, 1, 3, 0, acc_bits);
  rl_agent_i64(&a, "accum_n", r->acc.n);
  return rl_agent_save(&a, dir, r->base.env);
}

/* ---- loading ---- */

/* Counters of agent.safetensors into r (checked against the run's sizes). */
static tg_status load_counters(dq_run *r, const rl_agent_in *a) {
  int64_t v[6];
  const char *keys[6] = {"step", "episodes", "replay_pos", "replay_size", "replay_draws", "accum_n"};
  int64_t hi[6] = {r->c.total_timesteps, INT64_MAX, r->rb.cap - 1, r->rb.cap, INT64_MAX, INT64_MAX};
  tg_status st = TG_OK;
  for (int i = 0; i < 6 && st == TG_OK; i++) st = rl_agent_count(a, keys[i], 0, hi[i], &v[i]);
  if (st != TG_OK) return st;
  r->step = v[0], r->base.episodes = v[1], r->rb.pos = v[2], r->rb.size = v[3], r->rb.draws = (uint64_t)v[4], r->acc.n = v[5];
  return rl_agent_recent_load(a, &r->base.recent);
}

static tg_status load_arrays(dq_run *r, const rl_agent_in *a) {
  const tg_tensor *t[7] = {0};
  int64_t size = r->rb.size, O = r->base.sp.obs_dim;
  tg_status st = rl_agent_tensor(a, "replay.obs", TG_F32, 2, size, O, &t[0]);
  if (st == TG_OK) st = rl_agent_tensor(a, "replay.next_obs", TG_F32, 2, size, O, &t[1]);
  if (st == TG_OK) st = rl_agent_tensor(a, "replay.action", TG_I32, 1, size, 0, &t[2]);
  if (st == TG_OK) st = rl_agent_tensor(a, "replay.reward", TG_F32, 1, size, 0, &t[3]);
  if (st == TG_OK) st = rl_agent_tensor(a, "replay.terminated", TG_F32, 1, size, 0, &t[4]);
  if (st == TG_OK) st = rl_agent_tensor(a, "obs", TG_F32, 2, r->base.sp.n, O, &t[5]);
  if (st == TG_OK) st = rl_agent_tensor(a, "accum", TG_I64, 1, 3, 0, &t[6]);
  if (st != TG_OK) return st;
  void *dst[6] = {r->rb.obs, r->rb.next_obs, r->rb.action, r->rb.reward, r->rb.term, r->obs};
  for (int i = 0; i < 6; i++) memcpy(dst[i], t[i]->data, tg_nbytes(t[i]));
  double acc[3];
  memcpy(acc, t[6]->data, sizeof acc);
  r->acc.loss = acc[0], r->acc.q = acc[1], r->acc.grad_norm = acc[2];
  return TG_OK;
}

static tg_status load_agent(void *run, const char *dir) {
  dq_run *r = run;
  rl_agent_in a;
  int64_t env_bytes = 0;
  tg_status st = rl_agent_open(&a, &AGENT, dir, r->base.env);
  if (st == TG_OK) st = load_counters(r, &a);
  if (st == TG_OK) st = rl_agent_env_bytes(&a, r->base.env, 1, &env_bytes);
  if (st == TG_OK) st = rl_agent_env_load(&a, r->base.env, env_bytes);
  if (st == TG_OK) st = load_arrays(r, &a);
  rl_agent_close(&a);
  return st;
}

/* ---- the set ---- */

static rl_ckpt_parts parts(dq_run *r) {
  return (rl_ckpt_parts){.kind = &AGENT, .stores = {r->net.base.store, r->net.target}, .opt = r->net.base.opt, .seed = r->c.seed,
                         .position = &r->step, .saved = &r->saved_step, .draws = &r->rb.draws, .unit = "step", .run = r,
                         .save_agent = save_agent, .load_agent = load_agent};
}

tg_status dq_ckpt_save(dq_run *r) {
  rl_ckpt_parts p = parts(r);
  return rl_ckpt_save(&p, r->base.dir);
}

tg_status dq_ckpt_load(dq_run *r, int *found) {
  rl_ckpt_parts p = parts(r);
  return rl_ckpt_load(&p, r->base.dir, r->c.log, found);
}
