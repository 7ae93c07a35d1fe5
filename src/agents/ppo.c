/* PPO's training loop: rollouts, GAE, epochs of minibatch updates, logging, checkpoints and resume. */
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "agents/ppo_internal.h"
#include "tickgrad/rng.h"

#define METRICS_HEADER                                                                                            \
  "iteration,env_steps,episodes,mean_return,mean_length,loss,pg_loss,v_loss,entropy,approx_kl,clipfrac,"          \
  "mean_value,grad_norm,lr,env_steps_per_s\n"

/* ---- the run's buffers ---- */

static tg_status run_alloc(pp_run *r) {
  size_t N = (size_t)r->N, O = (size_t)r->O;
  r->perm = tg_calloc((size_t)r->B, sizeof(int32_t));
  r->next_obs = tg_calloc(N * O, sizeof(float));
  r->next_done = tg_calloc(N, sizeof(uint8_t));
  r->reward = tg_calloc(N, sizeof(float));
  r->term = tg_calloc(N, sizeof(uint8_t));
  r->trunc = tg_calloc(N, sizeof(uint8_t));
  r->ep_ret = tg_calloc(N, sizeof(double));
  r->ep_len = tg_calloc(N, sizeof(int32_t));
  r->act_f = r->cont ? tg_calloc(N, sizeof(float)) : NULL;
  if (!r->perm || !r->next_obs || !r->next_done || !r->reward || !r->term || !r->trunc || !r->ep_ret || !r->ep_len ||
      (r->cont && !r->act_f))
    return tg_error(TG_ERR_NOMEM, "ppo: out of host memory for %d environments", r->N);
  return rl_rollout_init(&r->ro, r->T, r->N, r->O, r->cont ? r->A : 0);
}

static void run_free(pp_run *r) {
  rl_run_close(&r->base);
  rl_ppo_net_close(&r->net);
  rl_rollout_free(&r->ro);
  tg_free(r->perm);
  tg_free(r->next_obs);
  tg_free(r->next_done);
  tg_free(r->reward);
  tg_free(r->term);
  tg_free(r->trunc);
  tg_free(r->ep_ret);
  tg_free(r->ep_len);
  tg_free(r->act_f);
}

/* ---- one iteration ---- */

/* Actions of step t from the policy's outputs pol [N, A] (logits, or the Gaussian's means):
 * categorical by inverse CDF of a uniform, Gaussian from standard normals, both Philox (seed,
 * RL_STREAM_PPO_ACT) at counter (env steps before this one + i) * A + d. Returns the env's actions. */
static const void *sample_actions(pp_run *r, int t, const float *pol, const float *log_std) {
  rl_rollout *ro = &r->ro;
  size_t N = (size_t)r->N, A = (size_t)r->A, row = (size_t)t * N;
  uint64_t draw = ((uint64_t)r->iter * (uint64_t)r->T + (uint64_t)t) * N; /* env steps before this one */
  for (size_t i = 0; i < N; i++) {
    if (!r->cont) {
      float u = tg_rng_uniform(r->c.seed, RL_STREAM_PPO_ACT, draw + i);
      ro->action[row + i] = rl_categorical_sample(pol + i * A, r->A, u, &ro->logp[row + i]);
      continue;
    }
    float eps[PP_MAX_ACT_DIM], *x = ro->action_f + (row + i) * A;
    for (size_t d = 0; d < A; d++) eps[d] = tg_rng_normal(r->c.seed, RL_STREAM_PPO_ACT, (draw + i) * A + d);
    ro->logp[row + i] = rl_gaussian_sample(pol + i * A, log_std, eps, r->A, x);
    r->act_f[i] = x[0]; /* a tg_env's continuous action is one float */
  }
  return r->cont ? (const void *)r->act_f : (const void *)(ro->action + row);
}

/* num_steps vector steps: sample actions, step the env, record; then V of the last observation and GAE. */
static tg_status collect(pp_run *r) {
  rl_rollout *ro = &r->ro;
  size_t N = (size_t)r->N, O = (size_t)r->O;
  const float *pol, *value, *log_std = NULL;
  tg_env_out out = {r->next_obs, NULL, r->reward, r->term, r->trunc, r->ep_ret, r->ep_len};
  tg_status st = r->cont ? rl_ppo_net_log_std(&r->net, &log_std) : TG_OK; /* fixed during the rollout */
  for (int t = 0; t < r->T && st == TG_OK; t++) {
    size_t row = (size_t)t * N;
    memcpy(ro->obs + row * O, r->next_obs, N * O * sizeof(float));
    memcpy(ro->done + row, r->next_done, N);
    st = rl_ppo_net_eval(&r->net, r->next_obs, &pol, &value);
    if (st != TG_OK) return st;
    for (size_t i = 0; i < N; i++) ro->value[row + i] = value[i];
    const void *actions = sample_actions(r, t, pol, log_std);
    if ((st = tg_env_step(r->base.env, actions, &out)) != TG_OK) return st;
    for (size_t i = 0; i < N; i++) {
      ro->reward[row + i] = r->reward[i];
      r->next_done[i] = r->term[i] || r->trunc[i];
      if (r->next_done[i]) {
        r->base.episodes++;
        rl_recent_push(&r->base.recent, r->ep_ret[i], r->ep_len[i]);
      }
    }
  }
  if (st == TG_OK) st = rl_ppo_net_eval(&r->net, r->next_obs, NULL, &value);
  if (st != TG_OK) return st;
  rl_rollout_gae(ro, value, r->next_done, r->c.gamma, r->c.gae_lambda);
  double s = 0.0;
  for (int64_t k = 0; k < r->B; k++) s += ro->value[k];
  r->last.mean_value = s / (double)r->B;
  return TG_OK;
}

/* TG_ERR_NUMERIC naming where, keeping the last good checkpoint. */
static tg_status numeric_error(const pp_run *r, int epoch, int mb, const char *why) {
  char at[96];
  snprintf(at, sizeof at, "iteration %lld (env step %lld), epoch %d, minibatch %d", (long long)(r->iter + 1),
           (long long)(r->iter * r->B), epoch + 1, mb + 1);
  return rl_numeric_stop(&r->base, why, at, "iteration", r->saved_iter);
}

/* update_epochs passes over a fresh permutation of the batch, one Adam step per minibatch. */
static tg_status update(pp_run *r) {
  int n_mb = r->c.num_minibatches;
  for (int e = 0; e < r->c.update_epochs; e++) {
    uint64_t stream = RL_STREAM_PPO_PERM + (uint64_t)r->iter * (uint64_t)r->c.update_epochs + (uint64_t)e;
    rl_permutation(r->c.seed, stream, (int32_t)r->B, r->perm);
    for (int k = 0; k < n_mb; k++) {
      rl_rollout_gather(&r->ro, r->perm + (size_t)k * (size_t)r->M, r->M, &r->net.hb);
      const float *stats = NULL;
      tg_status st = rl_ppo_net_learn(&r->net, &stats);
      if (st == TG_ERR_NUMERIC) return numeric_error(r, e, k, tg_last_error());
      if (st != TG_OK) return st;
      if (!isfinite(stats[TG_PPO_LOSS])) return numeric_error(r, e, k, "the loss is not finite");
      memcpy(r->last.stats, stats, sizeof r->last.stats);
      r->last.grad_norm = tg_optim_last_grad_norm(r->net.base.opt);
      r->last.lr = tg_optim_last_lr(r->net.base.opt);
    }
    if (r->c.target_kl > 0.0f && r->last.stats[TG_PPO_KL] > r->c.target_kl) break;
  }
  return TG_OK;
}

/* ---- the run ---- */

static tg_status check_env(const tg_ppo_config *c, const tg_env *env) {
  if (!env) return tg_error(TG_ERR_INVALID, "ppo: env is NULL");
  tg_env_spec sp = tg_env_spec_of(env);
  if (sp.n != c->num_envs)
    return tg_error(TG_ERR_INVALID, "ppo: env '%s' has %d instances but num_envs is %d; create it with num_envs",
                    tg_env_name(env), sp.n, c->num_envs);
  return TG_OK;
}

static tg_status load(void *r, int *found) { return pp_ckpt_load(r, found); }

static tg_status run_open(pp_run *r, const tg_ppo_config *c, tg_env *env, const char *run_dir) {
  memset(r, 0, sizeof *r);
  r->c = *c;
  rl_precision_settle(&r->c.precision, r->c.device, r->c.hidden, r->c.n_hidden, c->log);
  r->saved_iter = -1;
  tg_status st = rl_run_open(&r->base, "ppo", env, run_dir);
  if (st != TG_OK) return st;
  r->T = c->num_steps;
  r->N = r->base.sp.n;
  r->O = r->base.sp.obs_dim;
  r->cont = r->base.sp.n_actions == 0;
  r->A = r->cont ? 1 : r->base.sp.n_actions;
  r->B = (int64_t)r->T * r->N;
  r->M = (int)(r->B / c->num_minibatches);
  r->n_iter = c->total_timesteps / r->B;
  tg_ppo_config saved = r->c;
  st = rl_config_start(&PP_CONFIG_FILE, r->base.dir, &r->c, &saved, r->c.device, c->resume, env);
  if (st == TG_OK) st = run_alloc(r);
  int64_t updates = r->n_iter * c->update_epochs * c->num_minibatches;
  rl_ppo_net_cfg nc = pp_net_cfg(&r->c, r->O, r->base.sp.n_actions, r->N, r->M, updates);
  nc.env = env;
  if (st == TG_OK) st = rl_ppo_net_open(&r->net, &nc);
  rl_run_resume rs = {c->resume, load, r, &r->iter};
  return st == TG_OK ? rl_run_start(&r->base, &rs, r->next_obs, METRICS_HEADER, c->log) : st;
}

static int log_due(const pp_run *r) {
  int64_t now = r->iter * r->B, before = (r->iter - 1) * r->B;
  return r->iter == r->n_iter || now / r->c.log_every > before / r->c.log_every;
}

static void fill_result(const pp_run *r, tg_ppo_result *out) {
  memset(out, 0, sizeof *out);
  out->iterations = r->iter;
  out->env_steps = r->iter * r->B;
  out->episodes = r->base.episodes;
  out->updates = r->net.base.opt ? tg_optim_steps(r->net.base.opt) : 0;
  rl_recent_means(&r->base.recent, &out->mean_return, &out->mean_length);
  out->loss = r->last.stats[TG_PPO_LOSS];
  out->pg_loss = r->last.stats[TG_PPO_PG];
  out->v_loss = r->last.stats[TG_PPO_V];
  out->entropy = r->last.stats[TG_PPO_ENTROPY];
  out->approx_kl = r->last.stats[TG_PPO_KL];
  out->clipfrac = r->last.stats[TG_PPO_CLIPFRAC];
  out->grad_norm = r->last.grad_norm;
  out->interrupted = r->base.interrupted;
  out->seconds = rl_clock_call(&r->base.clock, out->env_steps, &out->env_steps_per_s);
}

/* One log line and metrics.csv row for the interval that ends at iteration r->iter. */
static void log_interval(pp_run *r) {
  double ret, len;
  int64_t steps = r->iter * r->B;
  double sps = rl_clock_interval(&r->base.clock, steps);
  const pp_report *p = &r->last;
  rl_recent_means(&r->base.recent, &ret, &len);
  if (r->c.log) {
    fprintf(r->c.log,
            "iter %lld/%lld  env steps %lld  episodes %lld  return %.2f  length %.1f  loss %.4g  pg %.4g  v %.4g  "
            "entropy %.4f  kl %.3g  clipfrac %.3f  value %.4g  grad %.4g  lr %.3g  %.0f env steps/s\n",
            (long long)r->iter, (long long)r->n_iter, (long long)steps, (long long)r->base.episodes, ret, len,
            (double)p->stats[TG_PPO_LOSS], (double)p->stats[TG_PPO_PG], (double)p->stats[TG_PPO_V],
            (double)p->stats[TG_PPO_ENTROPY], (double)p->stats[TG_PPO_KL], (double)p->stats[TG_PPO_CLIPFRAC],
            p->mean_value, (double)p->grad_norm, (double)p->lr, sps);
    fflush(r->c.log);
  }
  if (r->base.metrics) {
    rl_metrics_row_begin(r->base.metrics, r->iter, steps, r->base.episodes, ret, len);
    for (int k = 0; k < TG_PPO_NSTATS; k++) rl_csv_num(r->base.metrics, p->stats[k], 1);
    rl_csv_num(r->base.metrics, p->mean_value, 0);
    rl_csv_num(r->base.metrics, p->grad_norm, 1);
    rl_csv_num(r->base.metrics, p->lr, 1);
    rl_metrics_row_end(r->base.metrics, sps);
  }
}

static tg_status run_loop(pp_run *r) {
  rl_clock_start(&r->base.clock, r->iter * r->B);
  int logged = 0;
  while (r->iter < r->n_iter && !(r->c.stop_after > 0 && r->iter >= r->c.stop_after)) {
    tg_status st = collect(r);
    if (st == TG_OK) st = update(r);
    if (st != TG_OK) return st;
    r->iter++;
    logged = log_due(r);
    if (logged) log_interval(r);
    if (r->c.ckpt_every > 0 && r->iter % r->c.ckpt_every == 0 && (st = pp_ckpt_save(r)) != TG_OK) return st;
    if (r->iter < r->n_iter && tg_stop_requested()) {
      r->base.interrupted = 1; /* the checkpoint below */
      break;
    }
  }
  if (!logged && r->iter > r->base.clock.interval_steps0 / r->B) log_interval(r);
  return r->saved_iter == r->iter ? TG_OK : pp_ckpt_save(r);
}

tg_status tg_ppo_train(const tg_ppo_config *c, tg_env *env, const char *run_dir, tg_ppo_result *out) {
  tg_status st = tg_ppo_config_check(c);
  if (st == TG_OK) st = check_env(c, env);
  if (st != TG_OK) return st;
  pp_run *r = tg_calloc(1, sizeof *r);
  if (!r) return tg_error(TG_ERR_NOMEM, "ppo: out of host memory");
  st = run_open(r, c, env, run_dir);
  if (st == TG_OK) st = run_loop(r);
  if (out) fill_result(r, out);
  rl_error e = rl_error_keep(st); /* cleanup must not hide the reason */
  run_free(r);
  tg_free(r);
  return st == TG_OK ? TG_OK : rl_error_raise(&e);
}
