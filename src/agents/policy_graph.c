/* A trained DQN or PPO run's network built at two batch sizes over its weights, the form ONNX export walks. */
#include <stdio.h>
#include <string.h>
#include "agents/dqn_internal.h"
#include "agents/policy_graph.h"
#include "agents/ppo_internal.h"

void rl_policy_graph_close(rl_policy_graph *pg) {
  tg_graph_free(pg->g[0]);
  tg_graph_free(pg->g[1]);
  tg_store_free(pg->store);
  memset(pg, 0, sizeof *pg);
}

/* The input width of the first layer named first_weight in the run's weights (a gathering trading env's network reads
 * more than its env's observation holds). */
static tg_status obs_width(const char *run_dir, const char *first_weight, int64_t *width) {
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/weights.safetensors", run_dir);
  tg_safetensors *f = NULL;
  tg_status st = tg_safetensors_load(path, &f);
  if (st != TG_OK) return st;
  const tg_tensor *w = tg_safetensors_find(f, first_weight);
  if (!w || w->ndim != 2)
    st = tg_error(TG_ERR_FORMAT, "%s: no 2-d tensor '%s' (the network's first layer)", path, first_weight);
  else
    *width = w->shape[1];
  tg_safetensors_free(f);
  return st;
}

/* The DQN's Q-network or PPO's actor and critic on obs [B, width] in graph j. */
static void build(rl_policy_graph *pg, int j, int64_t B, const int *hidden, int n_hidden) {
  tg_graph *g = pg->g[j];
  int64_t xs[2] = {B, pg->obs_width};
  tg_tensor *x = tg_input(g, "obs", TG_F32, 2, xs);
  if (strcmp(pg->model, "dqn") == 0) {
    rl_mlp_spec q = rl_mlp_torch("q", n_hidden, hidden, pg->n_actions);
    pg->out[0][j] = rl_mlp(g, x, &q);
    return;
  }
  rl_mlp_spec a = rl_mlp_orthogonal("actor", n_hidden, hidden, pg->n_actions ? pg->n_actions : 1, 0.01f);
  rl_mlp_spec c = rl_mlp_orthogonal("critic", n_hidden, hidden, 1, 1.0f);
  pg->out[0][j] = rl_mlp(g, x, &a);
  pg->out[1][j] = rl_mlp(g, x, &c);
}

tg_status rl_policy_graph_open(const char *model, const char *run_dir, const int64_t batch[2], rl_policy_graph *pg) {
  memset(pg, 0, sizeof *pg);
  int dqn = strcmp(model, "dqn") == 0;
  if (!dqn && strcmp(model, "ppo") != 0) return tg_error(TG_ERR_INVALID, "policy export: '%s' is not dqn or ppo", model);
  snprintf(pg->model, sizeof pg->model, "%s", model);
  char path[TG_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/config.json", run_dir);
  tg_dqn_config dc = tg_dqn_defaults();
  tg_ppo_config pc = tg_ppo_defaults();
  rl_env_id id;
  tg_status st = dqn ? rl_config_load(&DQ_CONFIG_FILE, path, &dc, &id) : rl_config_load(&PP_CONFIG_FILE, path, &pc, &id);
  if (st != TG_OK) return st;
  const int *hidden = dqn ? dc.hidden : pc.hidden;
  int n_hidden = dqn ? dc.n_hidden : pc.n_hidden;
  pg->n_actions = id.n_actions;
  pg->n_out = dqn ? 1 : 2;
  pg->out_name[0] = dqn ? "q_values" : id.n_actions ? "logits" : "mean";
  pg->out_name[1] = "value";
  st = obs_width(run_dir, dqn ? "q.0.weight" : "actor.0.weight", &pg->obs_width);
  if (st == TG_OK && !(pg->store = tg_store_new(tg_cpu(0), 1))) st = tg_error(TG_ERR_NOMEM, "policy export: out of memory");
  for (int j = 0; st == TG_OK && j < 2; j++) {
    if (!(pg->g[j] = tg_graph_new(pg->store, dqn ? "dqn_policy" : "ppo_policy")))
      st = tg_error(TG_ERR_NOMEM, "policy export: out of memory");
    else
      build(pg, j, batch[j], hidden, n_hidden);
    if (st == TG_OK) st = tg_graph_status(pg->g[j]);
  }
  if (st == TG_OK) st = tg_store_finalize(pg->store);
  if (st == TG_OK) st = rl_policy_weights(run_dir, pg->store);
  if (st != TG_OK) rl_policy_graph_close(pg);
  return st;
}
