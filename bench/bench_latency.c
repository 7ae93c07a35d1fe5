/* tickgrad_bench latency CASE: single-prediction latency at batch 1 on one CPU thread, every call timed on its own. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"
#include "tickgrad/predictor.h"
#include "tickgrad/rl_agents.h"
#include "tickgrad/tickgrad.h"

#define OBS_TABLE 1024     /* distinct observations a DQN case cycles through */
#define TRAIN_BARS 3000    /* bars of the synthetic market a forecaster trains on (one epoch) */

/* What a case is given: where to make its run, how many calls to warm up with and to time. */
typedef struct lat_opts {
  const char *dir;  /* a scratch folder the case may fill (its run folders) */
  int64_t warmup, calls;
} lat_opts;

/* A case makes its run, opens the live API and writes the microseconds of each of o->calls calls into us. */
typedef int (*lat_fn)(const lat_opts *o, double *us);

typedef struct lat_case {
  const char *name, *what;
  lat_fn run;
} lat_case;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

/* ---- DQN: the greedy action of a trained run's Q-network for one observation ---- */

/* A DQN run of a few thousand steps on env in dir (the weights' values do not matter for latency). */
static int dqn_run(tg_env *env, const char *dir) {
  tg_dqn_config c = tg_dqn_defaults(); /* CleanRL's network, 120-84 ReLU */
  c.total_timesteps = 2000;
  c.learning_starts = 500;
  c.buffer_size = 2000;
  c.target_network_frequency = 200;
  c.log_every = 1000;
  c.ckpt_every = 0;
  return tg_dqn_train(&c, env, dir, NULL) != TG_OK;
}

/* obs [OBS_TABLE, dim]: standard normals, except column 0 of a gathering trading env's [t, position,
 * unrealised], which must be a decision row: t in [first, first + OBS_TABLE). */
static float *dqn_obs(int dim, int64_t first_row) {
  float *obs = malloc(sizeof(float) * (size_t)OBS_TABLE * (size_t)dim);
  for (int64_t i = 0; obs && i < (int64_t)OBS_TABLE * dim; i++) obs[i] = tg_rng_normal(11, 0, (uint64_t)i);
  for (int i = 0; obs && first_row >= 0 && i < OBS_TABLE; i++) {
    obs[(size_t)i * (size_t)dim] = (float)(first_row + i);
    obs[(size_t)i * (size_t)dim + 1] = (float)(i % 3 - 1); /* a position: short, flat, long */
  }
  return obs;
}

/* Times tg_dqn_policy_act for one observation at a time, cycling through obs. */
static int dqn_time(tg_dqn_policy *p, const float *obs, int dim, const lat_opts *o, double *us) {
  int32_t a = -1;
  for (int64_t r = -o->warmup; r < o->calls; r++) {
    const float *x = obs + (size_t)((r + o->warmup) % OBS_TABLE) * (size_t)dim;
    double t0 = now_ns();
    if (tg_dqn_policy_act(p, x, &a) != TG_OK) return 1;
    double t1 = now_ns();
    if (r >= 0) us[r] = 1e-3 * (t1 - t0);
  }
  return a < 0;
}

static int lat_dqn_cartpole(const lat_opts *o, double *us) {
  char dir[1100];
  snprintf(dir, sizeof dir, "%s/dqn-cartpole", o->dir);
  tg_env *env = NULL;
  tg_dqn_policy *p = NULL;
  int rc = tg_env_cartpole_new(1, 1, 500, &env) != TG_OK || dqn_run(env, dir) ||
           tg_dqn_policy_load(dir, tg_env_spec_of(env), tg_cpu(0), &p) != TG_OK;
  float *obs = rc ? NULL : dqn_obs(4, -1);
  if (!rc) rc = !obs || dqn_time(p, obs, 4, o, us);
  free(obs);
  tg_dqn_policy_free(p);
  tg_env_free(env);
  return rc;
}

/* dir/env.json for a trading run on the synthetic market sc with env tc, as tickgrad train writes it (what tickgrad
 * export reads the observation's layout from). */
static int trading_env_json(const char *dir, const tg_synth_config *sc, const tg_trading_cfg *tc) {
  tg_agent_env e;
  tg_agent_env_defaults(&e);
  snprintf(e.kind, sizeof e.kind, "trading");
  e.synth_bars = sc->bars;
  e.synth_signal = sc->signal;
  e.window = tc->window;
  e.copy_windows = !tc->omit_window;
  return tg_agent_env_write(dir, "dqn", &e) != TG_OK;
}

/* The trading env on the default synthetic market: window 32 x 16 features; gather: the CLI's default
 * observation [t, position, unrealised] with the window gathered by the policy; else copied (514 floats). */
static int lat_dqn_trading(const lat_opts *o, double *us, int gather) {
  char dir[1100];
  snprintf(dir, sizeof dir, "%s/dqn-trading%s", o->dir, gather ? "-gather" : "");
  tg_synth_config sc = tg_synth_defaults();
  sc.bars = 20000;
  sc.signal = 0.3;
  tg_trading_cfg tc = tg_trading_defaults();
  tc.omit_window = gather;
  tg_bars bars;
  tg_bars_init(&bars);
  tg_env *env = NULL;
  tg_dqn_policy *p = NULL;
  float *obs = NULL;
  tg_trading_info info;
  int rc = tg_synth_generate(&sc, &bars) != TG_OK || tg_env_trading_new(1, &bars, &tc, &env) != TG_OK ||
           tg_env_trading_info(env, &info) != TG_OK || dqn_run(env, dir) || trading_env_json(dir, &sc, &tc);
  if (!rc) rc = (gather ? tg_dqn_policy_load_env(dir, env, tg_cpu(0), &p)
                        : tg_dqn_policy_load(dir, tg_env_spec_of(env), tg_cpu(0), &p)) != TG_OK;
  int dim = rc ? 0 : tg_env_spec_of(env).obs_dim;
  if (!rc) rc = !(obs = dqn_obs(dim, gather ? info.first_bar : -1)) || dqn_time(p, obs, dim, o, us);
  free(obs);
  tg_dqn_policy_free(p);
  tg_env_free(env);
  tg_bars_free(&bars);
  return rc;
}

static int lat_dqn_trading_copy(const lat_opts *o, double *us) { return lat_dqn_trading(o, us, 0); }
static int lat_dqn_trading_gather(const lat_opts *o, double *us) { return lat_dqn_trading(o, us, 1); }

/* ---- forecasters: tg_predictor_push of one bar on a run trained for one epoch ---- */

/* A run of kind at the defaults, trained one epoch on the first TRAIN_BARS bars of the synthetic market, in fp32 (the
 * peer's precision; auto would pick bf16 for the wider models on a CPU with native bf16). */
static int forecast_run(tg_model_kind kind, const char *dir) {
  tg_synth_config sc = tg_synth_defaults();
  sc.bars = TRAIN_BARS;
  tg_train_config c = tg_train_defaults(kind);
  c.epochs = 1;
  c.threads = 1;
  c.precision = TG_PRECISION_FP32;
  snprintf(c.device, sizeof c.device, "cpu");
  snprintf(c.out, sizeof c.out, "%s", dir);
  tg_bars bars;
  tg_bars_init(&bars);
  int rc = tg_synth_generate(&sc, &bars) != TG_OK || tg_train_run(&c, &bars, NULL) != TG_OK;
  tg_bars_free(&bars);
  return rc;
}

/* Opens the run and pushes the synthetic market's bars one by one: the warm-up bars (features and window)
 * and o->warmup more untimed, then o->calls timed, each of which must give a forecast. */
static int predictor_time(const char *dir, const lat_opts *o, double *us) {
  tg_predictor *p = NULL;
  if (tg_predictor_open(dir, NULL, &p) != TG_OK) return 1;
  const tg_predictor_info *info = tg_predictor_get_info(p);
  int64_t lead = info->first_bar + o->warmup;
  tg_synth_config sc = tg_synth_defaults();
  sc.bars = lead + o->calls;
  tg_bars b;
  tg_bars_init(&b);
  float *out = malloc(sizeof(float) * (size_t)tg_predictor_out_len(info));
  int rc = !out || tg_synth_generate(&sc, &b) != TG_OK, ready = 0;
  for (int64_t t = 0; t < b.n && !rc; t++) {
    tg_pbar bar = {b.ts[t], 0, b.open[t], b.high[t], b.low[t], b.close[t], b.volume[t], NULL, NULL};
    double t0 = now_ns();
    rc = tg_predictor_push(p, &bar, out, &ready) != TG_OK;
    double t1 = now_ns();
    if (t >= lead) {
      us[t - lead] = 1e-3 * (t1 - t0);
      if (!ready || !isfinite(out[0])) {
        fprintf(stderr, "latency: bar %lld gave no forecast (ready %d, out[0] %g)\n", (long long)t, ready, (double)out[0]);
        rc = 1;
      }
    }
  }
  free(out);
  tg_bars_free(&b);
  tg_predictor_free(p);
  return rc;
}

static int lat_predictor(tg_model_kind kind, const lat_opts *o, double *us) {
  char dir[1100];
  snprintf(dir, sizeof dir, "%s/%s", o->dir, tg_train_model_name(kind));
  return forecast_run(kind, dir) || predictor_time(dir, o, us);
}

static int lat_mamba2_stream(const lat_opts *o, double *us) { return lat_predictor(TG_MODEL_MAMBA2, o, us); }
static int lat_tft_batch1(const lat_opts *o, double *us) { return lat_predictor(TG_MODEL_TFT, o, us); }
static int lat_mlp_batch1(const lat_opts *o, double *us) { return lat_predictor(TG_MODEL_MLP, o, us); }
static int lat_transformer_batch1(const lat_opts *o, double *us) { return lat_predictor(TG_MODEL_TRANSFORMER, o, us); }

/* ---- the models alone, without a run: fresh weights, fixed inputs ---- */

#define N_PAST 16  /* the default feature spec's columns */

static tg_forecast_cfg model_cfg(tg_model_kind kind) {
  tg_forecast_cfg c = tg_forecast_defaults(kind);
  c.n_past = N_PAST;
  c.n_future = kind == TG_MODEL_TFT ? 4 : 0;
  c.n_static = 1;
  c.horizons = 8;
  if (kind == TG_MODEL_TFT) c.tft.dec_len = 8;
  return c;
}

/* tg_mamba2_step alone: the recurrent step of one bar's normalised features (the predictor's inner call). */
static int lat_mamba2_step_raw(const lat_opts *o, double *us) {
  tg_forecast_cfg c = model_cfg(TG_MODEL_MAMBA2);
  int64_t ps[3] = {1, c.mamba.seq_len, N_PAST};
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(s, "mamba2_params");
  tg_forecast_inputs in = {tg_input(g, "past", TG_F32, 3, ps), NULL, NULL};
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  po.training = 0; /* an inference plan: dropout is the identity, no gradients */
  tg_mamba2_stepper *st = NULL;
  float x[OBS_TABLE][N_PAST], pred[8 * TG_MAX_QUANTILES];
  for (int i = 0; i < OBS_TABLE; i++)
    for (int k = 0; k < N_PAST; k++) x[i][k] = tg_rng_normal(12, 0, (uint64_t)(i * N_PAST + k));
  int rc = !tg_forecast_build(g, &c, &in) || tg_graph_plan(g, &po) != TG_OK ||
           tg_mamba2_stepper_new(s, &c, 1, &st) != TG_OK;
  for (int64_t r = -o->warmup; r < o->calls && !rc; r++) {
    double t0 = now_ns();
    rc = tg_mamba2_step(st, x[(r + o->warmup) % OBS_TABLE], pred) != TG_OK;
    double t1 = now_ns();
    if (r >= 0) us[r] = 1e-3 * (t1 - t0);
  }
  tg_mamba2_stepper_free(st);
  tg_graph_free(g);
  tg_store_free(s);
  return rc;
}

/* tg_graph_run of the forecast graph at batch 1 (the predictor's inner call for tft, mlp and transformer). */
static int forward_b1(tg_model_kind kind, const lat_opts *o, double *us) {
  tg_forecast_cfg c = model_cfg(kind);
  int64_t L = tg_forecast_window(&c);
  int64_t ps[3] = {1, L, N_PAST}, fs[3] = {1, c.horizons, 4}, is[1] = {1};
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(s, "forward_b1");
  tg_forecast_inputs in = {tg_input(g, "past", TG_F32, 3, ps), NULL, NULL};
  if (kind == TG_MODEL_TFT) {
    in.future = tg_input(g, "future", TG_F32, 3, fs);
    in.inst = tg_input(g, "inst", TG_I64, 1, is);
  }
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  po.training = 0; /* an inference plan: dropout is the identity, no gradients */
  float *past = malloc(sizeof(float) * (size_t)(L * N_PAST)), fut[8 * 4];
  int64_t inst = 0;
  for (int64_t i = 0; past && i < L * N_PAST; i++) past[i] = tg_rng_normal(13, 0, (uint64_t)i);
  for (int i = 0; i < 8 * 4; i++) fut[i] = tg_rng_normal(13, 1, (uint64_t)i);
  tg_tensor pt, ft, it;
  int rc = !past || !tg_forecast_build(g, &c, &in) || tg_graph_plan(g, &po) != TG_OK ||
           tg_tensor_view(&pt, "past", tg_cpu(0), TG_F32, 3, ps, past) != TG_OK || tg_graph_bind(g, "past", &pt) != TG_OK;
  if (!rc && kind == TG_MODEL_TFT)
    rc = tg_tensor_view(&ft, "future", tg_cpu(0), TG_F32, 3, fs, fut) != TG_OK || tg_graph_bind(g, "future", &ft) != TG_OK ||
         tg_tensor_view(&it, "inst", tg_cpu(0), TG_I64, 1, is, &inst) != TG_OK || tg_graph_bind(g, "inst", &it) != TG_OK;
  for (int64_t r = -o->warmup; r < o->calls && !rc; r++) {
    double t0 = now_ns();
    rc = tg_graph_run(g) != TG_OK;
    double t1 = now_ns();
    if (r >= 0) us[r] = 1e-3 * (t1 - t0);
  }
  free(past);
  tg_graph_free(g);
  tg_store_free(s);
  return rc;
}

static int lat_tft_forward_b1(const lat_opts *o, double *us) { return forward_b1(TG_MODEL_TFT, o, us); }
static int lat_mlp_forward_b1(const lat_opts *o, double *us) { return forward_b1(TG_MODEL_MLP, o, us); }
static int lat_transformer_forward_b1(const lat_opts *o, double *us) { return forward_b1(TG_MODEL_TRANSFORMER, o, us); }

/* ---- the machine's own noise: a fixed chain of dependent multiply-adds, no memory and no library ---- */

#define NOISE_CHAIN 2000 /* links: about 3 us on a 2-3 GHz core, the length of the trading DQN's call */

/* What the machine adds to any call of this length (interrupts, a shared core, the hypervisor): a case's p99 cannot
 * be read below this case's p99 minus its p50. */
static int lat_noise_floor(const lat_opts *o, double *us) {
  volatile float seed = 1.0f;
  float acc = seed;
  for (int64_t r = -o->warmup; r < o->calls; r++) {
    double t0 = now_ns();
    for (int i = 0; i < NOISE_CHAIN; i++) acc = acc * 0.9999999f + 1e-7f;
    double t1 = now_ns();
    if (r >= 0) us[r] = 1e-3 * (t1 - t0);
  }
  seed = acc; /* keeps the chain */
  return 0;
}

static const lat_case LAT_CASES[] = {
    {"dqn_policy_cartpole", "DQN greedy action, CartPole's CleanRL network 4-120-84-2 ReLU, one observation "
     "(tg_dqn_policy_act on cpu:0)", lat_dqn_cartpole},
    {"dqn_policy_trading", "DQN greedy action, the trading env's network 514-120-84-3 (window 32 x 16 features "
     "copied into the observation)", lat_dqn_trading_copy},
    {"dqn_policy_trading_gather", "the same network on the CLI's default trading observation [t, position, "
     "unrealised]: the policy gathers the window from its feature table", lat_dqn_trading_gather},
    {"mamba2_stream", "tg_predictor_push of one bar on a Mamba-2 run (d_model 128, 2 layers, d_state 64, headdim 32): "
     "streamed features + the recurrent step", lat_mamba2_stream},
    {"mamba2_step_raw", "tg_mamba2_step alone (the same model, one bar's features in, the forecast out)",
     lat_mamba2_step_raw},
    {"tft_batch1", "tg_predictor_push of one bar on a TFT run (hidden 64, 4 heads, encoder 64, 8 horizons): "
     "the bar's past variable selection, then the rest of the model over the 64-bar window", lat_tft_batch1},
    {"tft_forward_b1", "tg_graph_run of the same TFT's whole forward of a window at batch 1 (fixed inputs)",
     lat_tft_forward_b1},
    {"mlp_batch1", "tg_predictor_push of one bar on an MLP run (window 16 x 16 features, hidden 64): one forward "
     "at batch 1", lat_mlp_batch1},
    {"mlp_forward_b1", "tg_graph_run of the same MLP at batch 1 alone (fixed inputs)", lat_mlp_forward_b1},
    {"transformer_batch1", "tg_predictor_push of one bar on a causal transformer run (d_model 64, 4 heads, 2 layers, "
     "window 64): one forward of the ring's window at batch 1", lat_transformer_batch1},
    {"transformer_forward_b1", "tg_graph_run of the same transformer at batch 1 alone (fixed inputs)",
     lat_transformer_forward_b1},
    {"noise_floor", "no model: a fixed chain of 2,000 dependent multiply-adds, timed like a call; the machine's own "
     "timing noise at about the trading DQN call's length", lat_noise_floor},
};
#define N_LAT_CASES (sizeof LAT_CASES / sizeof LAT_CASES[0])

/* ---- the scratch folder ---- */

/* Removes path and, if it is a folder, everything under it. */
static void remove_tree(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) != 0) return;
  if (S_ISDIR(sb.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char child[4096];
      snprintf(child, sizeof child, "%s/%s", path, e->d_name);
      remove_tree(child);
    }
    if (d) closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

/* ---- percentiles and the command ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The nearest-rank percentile p (0..1) of sorted[n]: the smallest value with at least p * n values at or below it. */
static double percentile(const double *sorted, int64_t n, double p) {
  int64_t k = (int64_t)ceil(p * (double)n - 1e-9) - 1; /* 1e-9: 0.99 * 100000 is whole, however it rounds */
  return sorted[k < 0 ? 0 : k >= n ? n - 1 : k];
}

static void lat_usage(FILE *f) {
  fprintf(f, "usage: tickgrad_bench latency [--calls N] [--warmup N] [--dir DIR] <case>\n"
             "Makes the case's run (a short training in DIR, default a new folder under $TMPDIR or /tmp, removed\n"
             "afterwards), warms up, then times --calls (default 100000) calls one by one on one thread and prints\n"
             "\"<case> <p50 us> <p99 us> <p99.9 us> <calls> <mean us> <max us>\". Percentiles are nearest-rank.\n"
             "Exit status: 0 done, 1 failed, 2 usage.\ncases:\n");
  for (size_t i = 0; i < N_LAT_CASES; i++) fprintf(f, "  %-26s %s\n", LAT_CASES[i].name, LAT_CASES[i].what);
}

static int run_case(const lat_case *c, const lat_opts *o) {
  double *us = malloc(sizeof(double) * (size_t)o->calls);
  if (!us) return fprintf(stderr, "tickgrad_bench latency: out of memory\n"), 1;
  double t0 = now_ns();
  if (c->run(o, us) != 0) {
    fprintf(stderr, "tickgrad_bench latency %s: failed: %s\n", c->name, tg_last_error());
    free(us);
    return 1;
  }
  double sum = 0.0;
  for (int64_t i = 0; i < o->calls; i++) sum += us[i];
  qsort(us, (size_t)o->calls, sizeof *us, cmp_double);
  printf("%s %.3f %.3f %.3f %lld %.3f %.3f\n", c->name, percentile(us, o->calls, 0.5), percentile(us, o->calls, 0.99),
         percentile(us, o->calls, 0.999), (long long)o->calls, sum / (double)o->calls, us[o->calls - 1]);
  fprintf(stderr, "# %s: %.1f s in all (run made, %lld warm-up and %lld timed calls)\n", c->name,
          1e-9 * (now_ns() - t0), (long long)o->warmup, (long long)o->calls);
  free(us);
  return 0;
}

int bench_latency_main(int argc, char **argv) {
  lat_opts o = {NULL, 2000, 100000};
  const char *name = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--calls") && i + 1 < argc) o.calls = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) o.warmup = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--dir") && i + 1 < argc) o.dir = argv[++i];
    else if (!strcmp(argv[i], "--help")) return lat_usage(stdout), 0;
    else if (argv[i][0] == '-' || name) {
      fprintf(stderr, "tickgrad_bench latency: unexpected argument '%s'\n", argv[i]);
      return lat_usage(stderr), 2;
    } else name = argv[i];
  }
  if (!name || o.calls < 1 || o.warmup < 0) return lat_usage(stderr), 2;
  const lat_case *c = NULL;
  for (size_t i = 0; i < N_LAT_CASES; i++)
    if (!strcmp(LAT_CASES[i].name, name)) c = &LAT_CASES[i];
  if (!c) {
    fprintf(stderr, "tickgrad_bench latency: unknown case '%s'\n", name);
    return lat_usage(stderr), 2;
  }
  if (tg_set_threads(1) != TG_OK) return fprintf(stderr, "tickgrad_bench latency: %s\n", tg_last_error()), 1;
  char made[1024] = "";
  if (!o.dir) {
    const char *tmp = getenv("TMPDIR");
    snprintf(made, sizeof made, "%s/tg_latency_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(made)) return fprintf(stderr, "tickgrad_bench latency: cannot make a folder %s\n", made), 1;
    o.dir = made;
  }
  int rc = run_case(c, &o);
  if (made[0]) remove_tree(made);
  return rc;
}
