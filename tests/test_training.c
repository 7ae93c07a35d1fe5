/* End-to-end training: an MLP fits a synthetic regression; runs are bitwise reproducible; a saved
 * and reloaded model computes exactly the same outputs; a resumed run equals an uninterrupted one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"

#define N 256
#define F 4

/* y = sin(2 x0) + x1 x2 - 0.5 x3 */
static void make_data(float *x /* [N, F] */, float *y /* [N, 1] */) {
  for (int r = 0; r < N; r++) {
    for (int f = 0; f < F; f++) x[r * F + f] = 2.0f * tg_rng_uniform(5, 0, (uint64_t)(r * F + f)) - 1.0f;
    y[r] = sinf(2.0f * x[r * F]) + x[r * F + 1] * x[r * F + 2] - 0.5f * x[r * F + 3];
  }
}

typedef struct model {
  tg_store *store;
  tg_graph *g;
  tg_tensor *pred, *loss;
} model;

static int model_new(model *m, float dropout, uint64_t seed, float *x, float *y) {
  int64_t xs[2] = {N, F}, ys[2] = {N, 1}, w1[2] = {32, F}, w2[2] = {32, 32}, w3[2] = {1, 32}, b[1] = {32}, b3[1] = {1};
  tg_init fan = {TG_INIT_FAN_IN, 0, 0};
  m->store = tg_store_new(tg_cpu(0), seed);
  m->g = tg_graph_new(m->store, "fit");
  tg_graph *g = m->g;
  tg_tensor *h = tg_tanh(g, tg_linear(g, tg_input(g, "x", TG_F32, 2, xs), tg_param(g, "w1", 2, w1, fan), tg_param(g, "b1", 1, b, fan)));
  if (dropout > 0) h = tg_dropout(g, h, dropout);
  h = tg_tanh(g, tg_linear(g, h, tg_param(g, "w2", 2, w2, fan), tg_param(g, "b2", 1, b, fan)));
  m->pred = tg_linear(g, h, tg_param(g, "w3", 2, w3, fan), tg_param(g, "b3", 1, b3, fan));
  m->loss = tg_mse_loss(g, m->pred, tg_input(g, "y", TG_F32, 2, ys));
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  if (!m->loss || tg_graph_plan(g, &o) != TG_OK) return 0;
  tg_tensor xt, yt;
  tg_tensor_view(&xt, "x", tg_cpu(0), TG_F32, 2, xs, x);
  tg_tensor_view(&yt, "y", tg_cpu(0), TG_F32, 2, ys, y);
  return tg_graph_bind(g, "x", &xt) == TG_OK && tg_graph_bind(g, "y", &yt) == TG_OK;
}

static void model_free(model *m) {
  tg_graph_free(m->g);
  tg_store_free(m->store);
}

static tg_optim *optim_new(model *m, int total_steps) {
  tg_optim_config c = tg_optim_defaults(TG_ADAMW);
  c.lr = 1e-2f;
  c.clip_norm = 5.0f;
  c.schedule = (tg_lr_schedule){TG_LR_COSINE, 20, total_steps, 0.05f};
  tg_optim *o = NULL;
  return tg_optim_new(m->store, &c, &o) == TG_OK ? o : NULL;
}

/* Runs `steps` full-batch steps with o; losses[steps] receives every loss. */
static int steps_with(model *m, tg_optim *o, int steps, float *losses) {
  for (int s = 0; s < steps; s++) {
    if (tg_graph_run(m->g) || tg_graph_backward(m->g, m->loss) || tg_optim_step(o)) return 0;
    losses[s] = *(float *)m->loss->data;
  }
  return 1;
}

/* Trains `steps` full-batch AdamW steps with a fresh optimizer. */
static int train(model *m, int steps, float *losses) {
  tg_optim *o = optim_new(m, steps);
  int ok = o && steps_with(m, o, steps, losses);
  tg_optim_free(o);
  return ok;
}

/* 40 steps straight must equal 20 steps, a checkpoint, and 20 steps in a new process-like setup
 * (fresh store with other initial weights, fresh optimizer, fresh graph), dropout included. */
static void test_resume(float *x, float *y, const char *dir) {
  float straight[40], resumed[40];
  char weights[256], state[256];
  snprintf(weights, sizeof weights, "%s/resume.safetensors", dir);
  snprintf(state, sizeof state, "%s/resume.state.safetensors", dir);
  model a, b;
  CHECK(model_new(&a, 0.2f, 21, x, y));
  tg_optim *oa = optim_new(&a, 40);
  CHECK(oa && steps_with(&a, oa, 40, straight));

  CHECK(model_new(&b, 0.2f, 21, x, y));
  tg_optim *ob = optim_new(&b, 40);
  CHECK(ob && steps_with(&b, ob, 20, resumed));
  tg_train_state st = {tg_optim_steps(ob), tg_graph_rng_seed(b.g), tg_graph_rng_offset(b.g), 0, 20};
  CHECK_OK(tg_store_save(b.store, weights));
  CHECK_OK(tg_train_state_save(state, ob, &st));
  tg_optim_free(ob);
  model_free(&b);

  CHECK(model_new(&b, 0.2f, 77, x, y));
  ob = optim_new(&b, 40);
  tg_train_state back;
  CHECK_OK(tg_store_load(b.store, weights));
  CHECK_OK(tg_train_state_load(state, ob, &back));
  CHECK(back.step == 20 && back.cursor == 20 && back.rng_seed == st.rng_seed && back.rng_offset == st.rng_offset);
  tg_graph_set_seed(b.g, back.rng_seed, back.rng_offset);
  CHECK(ob && steps_with(&b, ob, 20, resumed + 20));
  CHECK_MSG(memcmp(straight, resumed, sizeof straight) == 0, "resumed losses differ from the straight run");
  tg_tensor wa = tg_store_tensor(a.store, 0, 0), wb = tg_store_tensor(b.store, 0, 0);
  CHECK_MSG(memcmp(wa.data, wb.data, tg_store_numel(a.store) * sizeof(float)) == 0,
            "resumed weights differ from the straight run");
  tg_optim_free(oa);
  tg_optim_free(ob);
  model_free(&a);
  model_free(&b);
  unlink(weights);
  unlink(state);
}

int main(void) {
  static float x[N * F], y[N], losses[1500], again[1500];
  make_data(x, y);
  model m;
  CHECK(model_new(&m, 0, 3, x, y));
  CHECK_OK(train(&m, 1500, losses) ? TG_OK : TG_ERR_INVALID);
  printf("fit: loss %.5f -> %.6f\n", losses[0], losses[1499]);
  CHECK_MSG(losses[1499] < 2e-3f && losses[1499] < losses[0] * 5e-3f, "final loss %g from %g", losses[1499], losses[0]);

  /* save, reload into a fresh store, same outputs bit for bit */
  char dir[] = "/tmp/tickgrad_training_XXXXXX", path[256];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/fit.safetensors", dir);
  CHECK_OK(tg_store_save(m.store, path));
  CHECK_OK(tg_graph_run(m.g));
  static float before[N];
  memcpy(before, m.pred->data, sizeof before);
  model m2;
  CHECK(model_new(&m2, 0, 99, x, y)); /* other seed: different initial weights */
  CHECK_OK(tg_store_load(m2.store, path));
  CHECK_OK(tg_graph_run(m2.g));
  CHECK_MSG(memcmp(before, m2.pred->data, sizeof before) == 0, "reloaded model differs");
  model_free(&m2);
  model_free(&m);
  unlink(path);
  test_resume(x, y, dir);
  rmdir(dir);

  /* same seed (dropout included): bitwise the same losses */
  CHECK(model_new(&m, 0.1f, 11, x, y));
  CHECK(train(&m, 50, losses));
  model_free(&m);
  CHECK(model_new(&m, 0.1f, 11, x, y));
  CHECK(train(&m, 50, again));
  model_free(&m);
  CHECK_MSG(memcmp(losses, again, 50 * sizeof(float)) == 0, "two runs with one seed differ");
  CHECK(model_new(&m, 0.1f, 12, x, y));
  CHECK(train(&m, 50, again));
  model_free(&m);
  CHECK_MSG(memcmp(losses, again, 50 * sizeof(float)) != 0, "another seed gave the same losses");
  return tg_test_finish();
}
