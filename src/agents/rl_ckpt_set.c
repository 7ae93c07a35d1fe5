/* An agent's checkpoint set: its stores' weights, the optimizer's state and agent.safetensors written and read as one. */
#include "agents/rl_shared.h"
#include "io/ckpt_set.h"

typedef char rl_ckpt_path[TG_PATH_MAX + 96];

/* The set's files other than agent.safetensors, in the kind's order. */
static void other_paths(const rl_ckpt_parts *p, const char *dir, rl_ckpt_path path[RL_CKPT_MAX_FILES]) {
  for (int i = 0; i < p->kind->n_files; i++) rl_run_path(path[i], sizeof path[i], dir, p->kind->files[i]);
}

static uint64_t draws_of(const rl_ckpt_parts *p) { return p->draws ? *p->draws : 0; }

tg_status rl_ckpt_save(const rl_ckpt_parts *p, const char *run) {
  rl_ckpt_path path[RL_CKPT_MAX_FILES];
  int n_stores = p->kind->n_files - 1;
  tg_ckpt_set set;
  tg_status st = tg_ckpt_begin(run, &set);
  if (st != TG_OK) return st;
  other_paths(p, set.dir, path);
  tg_train_state ts = rl_train_state(*p->position, p->seed, draws_of(p));
  for (int i = 0; i < n_stores && st == TG_OK; i++) st = tg_store_save(p->stores[i], path[i]);
  if (st == TG_OK) st = tg_train_state_save(path[n_stores], p->opt, &ts);
  if (st == TG_OK) st = p->save_agent(p->run, set.dir);
  st = tg_ckpt_end(&set, st);
  if (st == TG_OK) *p->saved = *p->position;
  return st;
}

tg_status rl_ckpt_load(const rl_ckpt_parts *p, const char *run, FILE *log, int *found) {
  rl_ckpt_path path[RL_CKPT_MAX_FILES];
  int n_stores = p->kind->n_files - 1;
  tg_ckpt_set set;
  tg_train_state ts;
  tg_status st = tg_ckpt_find(run, log, &set, found);
  if (st != TG_OK || !*found) return st;
  other_paths(p, set.dir, path);
  st = p->load_agent(p->run, set.dir);
  for (int i = 0; i < n_stores && st == TG_OK; i++) st = tg_store_load(p->stores[i], path[i]);
  if (st == TG_OK) st = tg_train_state_load(path[n_stores], p->opt, &ts);
  if (st == TG_OK) st = rl_train_state_check(path[n_stores], &ts, *p->position, draws_of(p), p->unit);
  if (st == TG_OK) *p->saved = *p->position;
  return st;
}
