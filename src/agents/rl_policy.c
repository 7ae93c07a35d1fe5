/* What the DQN and PPO policies share as they open a trained run: its config checked against the env, its weights. */
#include <stdio.h>
#include "agents/rl_shared.h"
#include "io/ckpt_set.h"
#include "io/finite.h"

tg_status rl_policy_config(const rl_config_file *f, const char *run_dir, tg_env_spec spec, void *c) {
  char path[TG_PATH_MAX + 32];
  rl_env_id id;
  if (!run_dir) return tg_error(TG_ERR_INVALID, "%s policy: the run folder is NULL", f->what);
  snprintf(path, sizeof path, "%s/config.json", run_dir);
  tg_status st = rl_config_load(f, path, c, &id);
  if (st == TG_OK && (spec.n < 1 || spec.obs_dim != id.obs_dim || spec.n_actions != id.n_actions))
    st = tg_error(TG_ERR_INVALID, "%s policy: %s was trained on observations of %d floats and %d actions; this env has %d "
                  "instances, observations of %d floats and %d actions", f->what, path, id.obs_dim, id.n_actions, spec.n,
                  spec.obs_dim, spec.n_actions);
  return st;
}

tg_status rl_policy_weights(const char *run_dir, tg_store *store) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/weights.safetensors", run_dir);
  tg_status st = tg_ckpt_check_run_files(run_dir); /* config.json and env.json as the run wrote them */
  if (st == TG_OK) st = tg_weights_check_finite(path);
  return st == TG_OK ? tg_store_load(store, path) : st;
}
