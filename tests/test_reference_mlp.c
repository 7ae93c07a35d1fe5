/* A 2-layer MLP trained 5 Adam steps must match PyTorch's losses, gradients and weights. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"

static const char *PARAMS[4] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};

/* max |got - want| relative to max |want| over the tensor */
static double rel_err(const float *got, const tg_tensor *want) {
  const float *w = want->data;
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < tg_numel(want); i++) {
    diff = fmax(diff, fabs((double)got[i] - w[i]));
    scale = fmax(scale, fabs((double)w[i]));
  }
  return diff / (scale > 0 ? scale : 1);
}

static const tg_tensor *need(const tg_safetensors *f, const char *name) {
  const tg_tensor *t = tg_safetensors_find(f, name);
  CHECK_MSG(t != NULL, "reference tensor '%s' missing", name);
  return t;
}

int main(void) {
  const char *src = getenv("TG_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/reference/data/mlp_adam.safetensors", src ? src : "..");
  tg_safetensors *ref = NULL;
  CHECK_OK(tg_safetensors_load(path, &ref));
  if (!ref) return tg_test_finish();
  const tg_tensor *x = need(ref, "x"), *y = need(ref, "y"), *losses = need(ref, "losses");
  const tg_tensor *w1 = need(ref, "init.fc1.weight"), *w2 = need(ref, "init.fc2.weight");
  if (!x || !y || !losses || !w1 || !w2) return tg_test_finish();

  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(s, "reference_mlp");
  tg_init zero = {TG_INIT_ZEROS, 0, 0};
  tg_tensor *xi = tg_input(g, "x", TG_F32, 2, x->shape), *yi = tg_input(g, "y", TG_F32, 2, y->shape);
  tg_tensor *fc1w = tg_param(g, "fc1.weight", 2, w1->shape, zero), *fc1b = tg_param(g, "fc1.bias", 1, w1->shape, zero);
  tg_tensor *fc2w = tg_param(g, "fc2.weight", 2, w2->shape, zero), *fc2b = tg_param(g, "fc2.bias", 1, w2->shape, zero);
  tg_tensor *loss = tg_mse_loss(g, tg_linear(g, tg_relu(g, tg_linear(g, xi, fc1w, fc1b)), fc2w, fc2b), yi);
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  CHECK_OK(tg_graph_plan(g, &po));
  for (int p = 0; p < 4; p++) {
    char name[64];
    snprintf(name, sizeof name, "init.%s", PARAMS[p]);
    const tg_tensor *init = need(ref, name);
    tg_tensor dst = tg_store_tensor(s, tg_store_find(s, PARAMS[p]), 0);
    CHECK(init && tg_shape_eq(init, &dst));
    if (init && tg_shape_eq(init, &dst)) memcpy(dst.data, init->data, tg_nbytes(&dst));
  }
  CHECK_OK(tg_graph_bind(g, "x", x));
  CHECK_OK(tg_graph_bind(g, "y", y));
  tg_optim_config oc = tg_optim_defaults(TG_ADAM);
  oc.lr = 1e-2f;
  tg_optim *opt = NULL;
  CHECK_OK(tg_optim_new(s, &oc, &opt));
  for (int step = 0; step < tg_numel(losses); step++) {
    CHECK_OK(tg_graph_run(g));
    CHECK_OK(tg_graph_backward(g, loss));
    double want = ((const float *)losses->data)[step], got = *(float *)loss->data;
    CHECK_MSG(fabs(got - want) <= 1e-5 * fabs(want), "step %d loss %.9g, torch %.9g", step, got, want);
    for (int p = 0; p < 4; p++) {
      char name[64];
      snprintf(name, sizeof name, "step%d.grad.%s", step, PARAMS[p]);
      const tg_tensor *gref = need(ref, name);
      tg_tensor grad = tg_store_tensor(s, tg_store_find(s, PARAMS[p]), 1);
      if (!gref) continue;
      double e = rel_err(grad.data, gref);
      CHECK_MSG(e <= 1e-5, "step %d gradient of %s: relative error %.3g", step, PARAMS[p], e);
    }
    CHECK_OK(tg_optim_step(opt));
  }
  for (int p = 0; p < 4; p++) {
    char name[64];
    snprintf(name, sizeof name, "final.%s", PARAMS[p]);
    const tg_tensor *fref = need(ref, name);
    tg_tensor val = tg_store_tensor(s, tg_store_find(s, PARAMS[p]), 0);
    if (!fref) continue;
    double e = rel_err(val.data, fref);
    CHECK_MSG(e <= 1e-5, "final %s: relative error %.3g", PARAMS[p], e);
  }
  printf("matched %lld PyTorch steps (%s)\n", (long long)tg_numel(losses), tg_safetensors_meta(ref, "torch"));
  tg_optim_free(opt);
  tg_graph_free(g);
  tg_store_free(s);
  tg_safetensors_free(ref);
  return tg_test_finish();
}
