/* tg_dqn_train: CleanRL's DQN loop (epsilon-greedy acting, replay, training and target updates), logs, checkpoints, resume. */
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "agents/dqn_internal.h"
#include "tickgrad/rng.h"

#define METRICS_HEADER \
  "step,env_steps,episodes,mean_return,mean_length,loss,mean_q,epsilon,grad_norm,grad_steps,env_steps_per_s\n"

static double epsilon(const tg_dqn_config *c, int64_t step) {
  double duration = (double)c->exploration_fraction * (double)c->total_timesteps;
  double slope = ((double)c->end_e - (double)c->start_e) / duration;
  double e = slope * (double)step + (double)c->start_e;
  return e > c->end_e ? e : (double)c->end_e;
}

static tg_status run_buffers(dq_run *r) {
  size_t n = (size_t)r->base.sp.n, od = (size_t)r->base.sp.obs_dim;
  r->obs = tg_malloc(n * od * sizeof(float));
  r->next_obs = tg_malloc(n * od * sizeof(float));
  r->final_obs = tg_malloc(n * od * sizeof(float));
  r->real_next = tg_malloc(n * od * sizeof(float));
  r->reward = tg_malloc(n * sizeof(float));
  r->term = tg_malloc(n);
  r->trunc = tg_malloc(n);
  r->ep_ret = tg_malloc(n * sizeof(double));
  r->ep_len = tg_malloc(n * sizeof(int32_t));
  r->actions = tg_malloc(n * sizeof(int32_t));
  if (!r->obs || !r->next_obs || !r->final_obs || !r->real_next || !r->reward || !r->term || !r->trunc || !r->ep_ret ||
      !r->ep_len || !r->actions)
    return tg_error(TG_ERR_NOMEM, "dqn: out of memory for the buffers of %zu env instances", n);
  return TG_OK;
}

static void run_free(dq_run *r) {
  rl_run_close(&r->base);
  rl_dqn_net_close(&r->net);
  rl_replay_free(&r->rb);
  void *bufs[] = {r->obs, r->next_obs, r->final_obs, r->real_next, r->reward, r->term, r->trunc, r->ep_ret, r->ep_len,
                  r->actions};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tg_free(bufs[i]);
}

static rl_dqn_net_cfg net_config(const dq_run *r) {
  const tg_dqn_config *c = &r->c;
  rl_dqn_net_cfg nc;
  memset(&nc, 0, sizeof nc);
  nc.dev = c->device;
  nc.obs_dim = r->base.sp.obs_dim;
  nc.n_actions = r->base.sp.n_actions;
  nc.n_hidden = c->n_hidden;
  for (int k = 0; k < c->n_hidden; k++) nc.hidden[k] = c->hidden[k];
  nc.batch = c->batch_size;
  nc.n_act = r->base.sp.n;
  nc.double_q = c->double_q;
  nc.huber = c->huber;
  nc.gamma = c->gamma;
  nc.optim = tg_optim_defaults(TG_ADAM);
  nc.optim.lr = c->learning_rate;
  nc.optim.eps = c->adam_eps;
  nc.optim.clip_norm = c->max_grad_norm;
  nc.seed = c->seed;
  nc.precision = c->precision;
  nc.env = r->base.env;
  return nc;
}

static void print_header(const dq_run *r) {
  const tg_dqn_config *c = &r->c;
  char dev[16];
  if (!c->log) return;
  fprintf(c->log, "dqn on %s (%d instance%s, obs %d, %d actions) on %s into %s\n", tg_env_name(r->base.env), r->base.sp.n,
          r->base.sp.n == 1 ? "" : "s", r->base.sp.obs_dim, r->base.sp.n_actions, tg_device_str(c->device, dev, sizeof dev), r->base.dir);
  fprintf(c->log, "  %lld steps; %s, %s loss, Adam lr %g; batch %d from %lld transitions; epsilon %g -> %g over %lld "
          "steps; learning from step %lld every %lld; target %s every %lld\n", (long long)c->total_timesteps,
          c->double_q ? "Double DQN" : "DQN", c->huber ? "Huber" : "MSE", (double)c->learning_rate, c->batch_size,
          (long long)c->buffer_size, (double)c->start_e, (double)c->end_e,
          (long long)((double)c->exploration_fraction * (double)c->total_timesteps), (long long)c->learning_starts,
          (long long)c->train_frequency, c->tau == 1.0f ? "copy" : "Polyak", (long long)c->target_network_frequency);
  if (r->step > 0) fprintf(c->log, "resuming %s at step %lld\n", r->base.dir, (long long)r->step);
}

static tg_status load(void *r, int *found) { return dq_ckpt_load(r, found); }

static tg_status run_open(dq_run *r, const tg_dqn_config *c, tg_env *env, const char *dir) {
  r->c = *c;
  rl_precision_settle(&r->c.precision, r->c.device, r->c.hidden, r->c.n_hidden, c->log);
  r->saved_step = -1;
  tg_status st = tg_dqn_config_check(c);
  if (st != TG_OK) return st;
  tg_env_spec sp = tg_env_spec_of(env);
  if (sp.n_actions < 2)
    return tg_error(TG_ERR_INVALID, "dqn: env '%s' has %s actions; DQN needs a discrete action space of 2 or more",
                    tg_env_name(env), sp.n_actions == 0 ? "continuous" : "fewer than 2");
  if ((st = rl_run_open(&r->base, "dqn", env, dir)) != TG_OK) return st;
  tg_dqn_config saved = r->c;
  st = rl_config_start(&DQ_CONFIG_FILE, r->base.dir, &r->c, &saved, r->c.device, c->resume, env);
  if (st == TG_OK) st = run_buffers(r);
  if (st == TG_OK) st = rl_replay_init(&r->rb, c->buffer_size, r->base.sp.obs_dim, c->seed);
  rl_dqn_net_cfg nc = net_config(r);
  if (st == TG_OK) st = rl_dqn_net_open(&r->net, &nc);
  rl_run_resume rs = {c->resume, load, r, &r->step};
  if (st == TG_OK) st = rl_run_start(&r->base, &rs, r->obs, METRICS_HEADER, c->log);
  if (st == TG_OK) print_header(r);
  return st;
}

/* Epsilon-greedy actions for every instance: instance i's coin and random action are words 0 and 1
 * of Philox (seed, RL_STREAM_ACT, step * n + i); the Q-network runs only when some instance exploits. */
static tg_status act(dq_run *r) {
  int n = r->base.sp.n, A = r->base.sp.n_actions, greedy = 0;
  float eps = (float)epsilon(&r->c, r->step);
  for (int i = 0; i < n; i++) {
    uint32_t w[4];
    tg_philox(r->c.seed, RL_STREAM_ACT, (uint64_t)r->step * (uint64_t)n + (uint64_t)i, w);
    if (tg_u32_to_unit(w[0]) < eps) {
      r->actions[i] = (int32_t)rl_u32_below(w[1], A);
    } else {
      r->actions[i] = -1; /* greedy: filled from Q below */
      greedy = 1;
    }
  }
  if (!greedy) return TG_OK;
  const float *q;
  tg_status st = rl_dqn_net_q(&r->net, r->obs, &q);
  if (st != TG_OK) return st;
  for (int i = 0; i < n; i++)
    if (r->actions[i] < 0) r->actions[i] = rl_argmax(q + (size_t)i * A, A);
  return TG_OK;
}

/* The env step, finished episodes, and the n transitions into the replay ring (s' the true one). */
static tg_status env_step(dq_run *r) {
  tg_env_out out = {r->next_obs, r->final_obs, r->reward, r->term, r->trunc, r->ep_ret, r->ep_len};
  tg_status st = tg_env_step(r->base.env, r->actions, &out);
  if (st != TG_OK) return st;
  size_t od = (size_t)r->base.sp.obs_dim;
  for (int i = 0; i < r->base.sp.n; i++) {
    int done = r->term[i] || r->trunc[i];
    memcpy(r->real_next + i * od, (done ? r->final_obs : r->next_obs) + i * od, od * sizeof(float));
    if (done) {
      rl_recent_push(&r->base.recent, r->ep_ret[i], r->ep_len[i]);
      r->base.episodes++;
    }
  }
  rl_replay_add(&r->rb, r->base.sp.n, r->obs, r->real_next, r->actions, r->reward, r->term);
  float *t = r->obs; /* the next observation becomes the current one */
  r->obs = r->next_obs;
  r->next_obs = t;
  return TG_OK;
}

static tg_status numeric_stop(const dq_run *r, const char *what) {
  char at[64];
  snprintf(at, sizeof at, "step %lld (env step %lld)", (long long)r->step, (long long)(r->step * r->base.sp.n));
  return rl_numeric_stop(&r->base, what, at, "step", r->saved_step);
}

/* CleanRL's schedule at global step t = r->step: after learning_starts, a gradient step every
 * train_frequency steps and a target update every target_network_frequency steps. */
static tg_status learn(dq_run *r) {
  const tg_dqn_config *c = &r->c;
  int64_t t = r->step;
  if (t <= c->learning_starts) return TG_OK;
  if (t % c->train_frequency == 0) {
    float loss = NAN, q = NAN;
    tg_status st = rl_dqn_net_learn(&r->net, &r->rb, &loss, &q);
    if (st == TG_ERR_NUMERIC) return numeric_stop(r, tg_last_error());
    if (st != TG_OK) return st;
    if (!isfinite(loss)) return numeric_stop(r, isnan(loss) ? "the loss is NaN" : "the loss is infinite");
    r->acc.loss += loss;
    r->acc.q += q;
    r->acc.grad_norm += tg_optim_last_grad_norm(r->net.base.opt);
    r->acc.n++;
  }
  if (t % c->target_network_frequency == 0) return rl_dqn_net_update_target(&r->net, c->tau);
  return TG_OK;
}

/* One log line and one metrics.csv row for the interval that ends at r->step; resets the interval. */
static void log_interval(dq_run *r) {
  double ret, len, an = (double)r->acc.n, sps = rl_clock_interval(&r->base.clock, r->step * r->base.sp.n);
  double loss = r->acc.n ? r->acc.loss / an : NAN, q = r->acc.n ? r->acc.q / an : NAN;
  double gn = r->acc.n ? r->acc.grad_norm / an : NAN, eps = epsilon(&r->c, r->step);
  long long gsteps = (long long)tg_optim_steps(r->net.base.opt);
  rl_recent_means(&r->base.recent, &ret, &len);
  if (r->c.log) {
    fprintf(r->c.log, "step %lld/%lld  env steps %lld  episodes %lld  return %.2f  length %.1f  loss %.4g  q %.4g  "
            "eps %.3f  grad %.4g  updates %lld  %.0f env steps/s\n", (long long)r->step, (long long)r->c.total_timesteps,
            (long long)(r->step * r->base.sp.n), (long long)r->base.episodes, ret, len, loss, q, eps, gn, gsteps, sps);
    fflush(r->c.log);
  }
  if (r->base.metrics) {
    rl_metrics_row_begin(r->base.metrics, r->step, r->step * r->base.sp.n, r->base.episodes, ret, len);
    rl_csv_num(r->base.metrics, loss, 0);
    rl_csv_num(r->base.metrics, q, 0);
    rl_csv_num(r->base.metrics, eps, 0);
    rl_csv_num(r->base.metrics, gn, 0);
    fprintf(r->base.metrics, ",%lld", gsteps);
    rl_metrics_row_end(r->base.metrics, sps);
  }
  memset(&r->acc, 0, sizeof r->acc);
}

static tg_status run_loop(dq_run *r) {
  const tg_dqn_config *c = &r->c;
  rl_clock_start(&r->base.clock, r->step * r->base.sp.n);
  while (r->step < c->total_timesteps && !(c->stop_after > 0 && r->step >= c->stop_after)) {
    tg_status st = act(r);
    if (st == TG_OK) st = env_step(r);
    if (st == TG_OK) st = learn(r);
    if (st != TG_OK) return st;
    r->step++;
    int end = r->step == c->total_timesteps, stop = c->stop_after > 0 && r->step == c->stop_after;
    if (r->step % c->log_every == 0 || end) log_interval(r);
    int halt = !end && tg_stop_requested();
    if ((c->ckpt_every > 0 && r->step % c->ckpt_every == 0) || end || stop || halt) {
      if ((st = dq_ckpt_save(r)) != TG_OK) return st;
    }
    if (halt) {
      r->base.interrupted = 1;
      break;
    }
  }
  return TG_OK;
}

static void fill_result(const dq_run *r, tg_dqn_result *out) {
  memset(out, 0, sizeof *out);
  out->steps = r->step;
  out->env_steps = r->step * r->base.sp.n;
  out->episodes = r->base.episodes;
  out->grad_steps = r->net.base.opt ? tg_optim_steps(r->net.base.opt) : 0;
  out->interrupted = r->base.interrupted;
  rl_recent_means(&r->base.recent, &out->mean_return, &out->mean_length);
  out->seconds = rl_clock_call(&r->base.clock, out->env_steps, &out->env_steps_per_s);
}

tg_status tg_dqn_train(const tg_dqn_config *c, tg_env *env, const char *run_dir, tg_dqn_result *out) {
  if (!c || !env) return tg_error(TG_ERR_INVALID, "dqn: config and env are required");
  dq_run *r = tg_calloc(1, sizeof *r);
  if (!r) return tg_error(TG_ERR_NOMEM, "dqn: out of memory");
  rl_clock_start(&r->base.clock, 0);
  tg_status st = run_open(r, c, env, run_dir);
  if (st == TG_OK && r->step >= c->total_timesteps && c->log)
    fprintf(c->log, "%s finished at step %lld; nothing to do\n", r->base.dir, (long long)r->step);
  if (st == TG_OK) st = run_loop(r);
  if (out) fill_result(r, out);
  rl_error e = rl_error_keep(st); /* cleanup must not hide the reason */
  run_free(r);
  tg_free(r);
  return st == TG_OK ? TG_OK : rl_error_raise(&e);
}
