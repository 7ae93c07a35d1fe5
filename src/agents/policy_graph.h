/* A trained DQN or PPO run's network as graphs at given batch sizes on a host store holding its weights (for export). */
#ifndef TG_AGENTS_POLICY_GRAPH_H
#define TG_AGENTS_POLICY_GRAPH_H

#include <stdint.h>
#include "tickgrad/graph.h"

/* The network from the observation the network reads ("obs" [B, obs_width] f32: a trading env that gathers its
 * windows on the device reads the window's feature rows flattened, then its two position values) to
 *   dqn: "q_values" [B, A];
 *   ppo: "logits" [B, A] (continuous: "mean" [B, 1], the Gaussian's mean) and "value" [B, 1]. */
typedef struct rl_policy_graph {
  char model[8];           /* "dqn" or "ppo" */
  tg_store *store;         /* on the host, the run's weights.safetensors loaded */
  tg_graph *g[2];          /* the network at batch[0] and batch[1] */
  int n_out;
  const char *out_name[2];
  tg_tensor *out[2][2];    /* out[k][j]: output k of g[j] */
  int64_t obs_width;
  int n_actions;           /* 0: a continuous (Gaussian) PPO policy */
} rl_policy_graph;

/* model "dqn" or "ppo"; run_dir's config.json and weights.safetensors (checked finite: TG_ERR_NUMERIC naming the
 * tensor and index otherwise). */
tg_status rl_policy_graph_open(const char *model, const char *run_dir, const int64_t batch[2], rl_policy_graph *pg);
void rl_policy_graph_close(rl_policy_graph *pg);

#endif
