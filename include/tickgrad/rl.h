/* Reinforcement learning: vectorised environments (CartPole-v1, a bar-by-bar trading market) stepped n at a time. */
#ifndef TICKGRAD_RL_H
#define TICKGRAD_RL_H

#include <stdint.h>
#include "tickgrad/data.h"
#include "tickgrad/dataset.h"
#include "tickgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_env tg_env;

/* What an environment looks like to an agent. */
typedef struct tg_env_spec {
  int n;            /* instances stepped per call */
  int obs_dim;      /* floats per observation */
  int n_actions;    /* discrete actions (0: the action is one float per instance, continuous) */
  float action_lo, action_hi; /* continuous actions are clipped to [lo, hi] */
} tg_env_spec;

/* One vectorised step's results, caller memory (no allocation per step). Semantics of gymnasium
 * 0.29's vector envs (autoreset in the same step): an instance whose episode ended (terminated or
 * truncated) is reset at once, obs holds the new episode's first observation and final_obs the
 * true last one (what DQN stores as s'). */
typedef struct tg_env_out {
  float *obs;          /* [n, obs_dim] after the step (reset observation where done) */
  float *final_obs;    /* [n, obs_dim] the observation that ended the episode (rows where done; other rows
                          get obs, so final_obs is always the true s'); NULL: not wanted */
  float *reward;       /* [n] */
  uint8_t *terminated; /* [n] the MDP ended (pole fell; data ran out is truncation) */
  uint8_t *truncated;  /* [n] a time limit or the end of the segment */
  double *ep_return;   /* [n] the finished episode's return (rows where done, 0 elsewhere); NULL: not wanted */
  int32_t *ep_length;  /* [n] the finished episode's length (rows where done, 0 elsewhere); NULL: not wanted */
} tg_env_out;

tg_env_spec tg_env_spec_of(const tg_env *e);
const char *tg_env_name(const tg_env *e);
void tg_env_free(tg_env *e);
/* Resets every instance; obs [n, obs_dim]. Instance i draws from stream i of the counter RNG. */
tg_status tg_env_reset(tg_env *e, float *obs);
/* actions: int32 [n] for discrete envs, float [n] for continuous ones. An action out of range is
 * TG_ERR_INVALID naming the instance and the value, with no instance stepped. */
tg_status tg_env_step(tg_env *e, const void *actions, const tg_env_out *out);

/* ---- CartPole-v1: gymnasium's dynamics in float64 (explicit Euler), reward 1 per step including
 * the last, termination at |x| > 2.4 or |theta| > 12 degrees, truncation at max_steps (500);
 * reset draws each state component from U(-0.05, 0.05). obs_dim 4, n_actions 2. ---- */
tg_status tg_env_cartpole_new(int n, uint64_t seed, int max_steps, tg_env **out);
/* Test hooks: set / read instance i's float64 state (x, x_dot, theta, theta_dot). */
tg_status tg_env_cartpole_set_state(tg_env *e, int i, const double state[4]);
tg_status tg_env_cartpole_get_state(const tg_env *e, int i, double state[4]);

/* ---- Trading: one instrument's bars as a market, n instances stepped together ----
 * Data: tg_dataset_build over the bars (causal features, normalised on the training split only,
 * chronological splits with a purge gap). Time runs over decision bars t: the observation at t is
 * built from bars <= t only; the action is the position wanted from the next bar on.
 *   fill:    the order fills at bar t+1's open;
 *   reward:  the change of log equity from open[t+1] to open[t+2], net of costs:
 *              r_t = p_new * log(open[t+2] / open[t+1]) - (cost_bps * 1e-4 + slippage) * |p_new - p_old|
 *            (a position p earns p times the log return: log equity of a position rebalanced to p);
 *   obs:     the feature rows t-window+1 .. t ([window, F] flattened, normalised), then the position
 *            held (p_old) and its unrealised log return p_old * log(close[t] / open[fill bar]);
 *            obs_dim = window*F + 2. With omit_window the window is replaced by t itself, the row of
 *            tg_env_trading_features' table as a float: obs [t, p_old, unrealised], obs_dim 3 (final_obs
 *            the same way), so an agent gathers rows t-window+1 .. t from the table on its device;
 *   episode: starts flat. TG_TRAIN: a random contiguous segment of episode_len decisions inside the
 *            training split (instance i's k-th segment from Philox stream i, counter k); TG_VAL and
 *            TG_TEST: every decision bar of the split in order, one episode. An episode ends by
 *            truncation after its last decision (terminated is never set: data running out is a
 *            time limit); the position is not closed at the end. Then autoreset as above.
 * Decision bars of a split are exactly the last rows of its windows (tg_split): t + 2 stays inside
 * the split, so rewards never read the next split. */
typedef struct tg_trading_cfg {
  int window;            /* bars of features in an observation (default 32) */
  double cost_bps;       /* commission per unit of position traded, basis points (default 1.0) */
  double slippage;       /* fraction of the price lost per unit traded (default 0) */
  int split;             /* TG_TRAIN (0): random segments; TG_VAL (1), TG_TEST (2): the split in order */
  int episode_len;       /* decisions per training episode (default 256; the whole split when it is shorter) */
  int continuous;        /* 0: actions int32 0 short, 1 flat, 2 long; 1: a float target position in [-1, 1] */
  uint64_t seed;         /* segment starts (default 1) */
  const char *features;  /* feature spec of tg_feature_opts (NULL: TG_FEATURES_DEFAULT) */
  const char *tz;        /* zone for the tod / dow features (NULL: UTC) */
  double frac_train, frac_val; /* chronological split by fraction of bars (0, 0: 0.7, 0.15) */
  double bars_per_year;  /* Sharpe annualisation; 0: the series' own rate, (bars - 1) / (its span in years) */
  int omit_window;       /* 1: obs is (t, position, unrealised), t the decision bar's feature row; the agent
                            gathers the window itself (bars must be < TG_TRADING_OMIT_ROWS_MAX) */
} tg_trading_cfg;

/* omit_window writes the row t as a float: exact only below 2^24 rows (more is TG_ERR_INVALID). */
#define TG_TRADING_OMIT_ROWS_MAX ((int64_t)1 << 24)

tg_trading_cfg tg_trading_defaults(void);

/* n instances over bars of one instrument (an instrument column with more than one id is an error;
 * the bars are copied, the caller keeps them). Bad configuration: TG_ERR_INVALID naming the field. */
tg_status tg_env_trading_new(int n, const tg_bars *bars, const tg_trading_cfg *cfg, tg_env **out);

/* What the market looks like: sizes, the split's decision bars, the annualisation. */
typedef struct tg_trading_info {
  int window, f;             /* obs window and features per bar */
  int64_t rows;              /* bars in the series (rows of the feature table) */
  int64_t first_bar, last_bar; /* the split's first and last decision bar (rows) */
  int64_t steps;             /* decisions in the split: last_bar - first_bar + 1 */
  int64_t episode_len;       /* decisions per episode (steps for TG_VAL / TG_TEST) */
  double bars_per_year;
  double cost;               /* cost_bps * 1e-4 + slippage: log equity lost per unit traded */
  int omit_window;           /* 1: obs is [t, position, unrealised] (the window left to the agent) */
} tg_trading_info;

tg_status tg_env_trading_info(const tg_env *e, tg_trading_info *out);
/* Instance i's current decision bar: its row and time (ts, UTC ns). Either pointer may be NULL. */
tg_status tg_env_trading_bar(const tg_env *e, int i, int64_t *row, int64_t *ts);
/* Every instance's current decision bar t [n] (int64): the observation's window is the feature rows
 * t-window+1 .. t of tg_env_trading_features, so an agent holding that table on a device (uploaded
 * once) can build idx [n, window] and gather it there instead of copying obs features each step. */
tg_status tg_env_trading_rows(const tg_env *e, int64_t *rows);
/* The normalised feature table [rows, f] (f32, host), the one observations are copied from. */
const tg_tensor *tg_env_trading_features(const tg_env *e);

/* Statistics of one in-order episode. */
typedef struct tg_trading_stats {
  int64_t steps;             /* decisions */
  double total_log_return;   /* sum of rewards: log equity gained, after costs */
  double sharpe;             /* mean / sample std of the step rewards * sqrt(bars_per_year); 0 when std is 0 */
  double bh_log_return;      /* buy and hold (long 1 from the first fill, the entry cost paid once) */
  double bh_sharpe;
  int64_t trades;            /* steps whose fill changed the position (the episode starts flat) */
  double turnover;           /* sum of |position change| */
  double exposure;           /* mean |position| held */
  double bars_per_year;
} tg_trading_stats;

/* From an episode's step rewards [T], the positions held after each step's fill [T] and buy and
 * hold's step rewards [T]. */
tg_status tg_trading_stats_compute(const double *reward, const double *position, const double *bh, int64_t T,
                                   double bars_per_year, tg_trading_stats *out);
/* Instance i's last completed episode (TG_ERR_INVALID when it has none yet). */
tg_status tg_env_trading_episode_stats(const tg_env *e, int i, tg_trading_stats *out);

#ifdef __cplusplus
}
#endif
#endif
