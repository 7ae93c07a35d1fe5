/* The ONNX writer's refusals: an op with no ONNX form, weights that are not finite, graphs that are not twins, a path
 * that cannot be written; each names what is wrong and writes nothing (ONNX Runtime checks the files themselves:
 * python/tests/test_export_onnx.py). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "graph/onnx.h"
#include "support/check.h"
#include "tickgrad/tickgrad.h"

static char g_dir[] = "/tmp/tg_onnx_XXXXXX";

static int exists(const char *path) { return access(path, F_OK) == 0; }

/* x [B, 4] -> linear(w [3, 4], b [3]) -> relu -> [B, 3]; with_loss adds an mse loss against x's first 3 columns. */
static tg_tensor *build(tg_graph *g, int64_t B, int with_loss) {
  int64_t xs[2] = {B, 4}, ws[2] = {3, 4}, bs[1] = {3};
  tg_tensor *x = tg_input(g, "x", TG_F32, 2, xs);
  tg_tensor *w = tg_param(g, "w", 2, ws, (tg_init){TG_INIT_FAN_IN, 0, 0});
  tg_tensor *b = tg_param(g, "b", 1, bs, (tg_init){TG_INIT_ZEROS, 0, 0});
  tg_tensor *y = tg_relu(g, tg_linear(g, x, w, b));
  return with_loss ? tg_mse_loss(g, y, tg_slice(g, x, 1, 0, 3)) : y;
}

/* The spec of graphs g0 (batch 2) and g1 (batch 3) with outputs o0 and o1. */
static tg_onnx_spec spec_of(tg_graph *g0, tg_graph *g1, tg_tensor *o0, tg_tensor *o1) {
  tg_onnx_spec s = {.graph = {g0, g1}, .batch = {2, 3}, .model = "unit", .n_in = 1, .in_name = {"x"}, .n_out = 1,
                    .out = {{o0, o1}}, .out_name = {"y"}};
  return s;
}

static void test_writes_and_refuses(void) {
  char ok[64], bad[64], kept[64], none[80];
  snprintf(ok, sizeof ok, "%s/ok.onnx", g_dir);
  snprintf(bad, sizeof bad, "%s/bad.onnx", g_dir);
  snprintf(kept, sizeof kept, "%s/kept.onnx", g_dir);
  snprintf(none, sizeof none, "%s/no-such-folder/m.onnx", g_dir);
  tg_store *st = tg_store_new(tg_cpu(0), 1);
  tg_graph *g0 = tg_graph_new(st, "a"), *g1 = tg_graph_new(st, "b");
  tg_tensor *y0 = build(g0, 2, 0), *y1 = build(g1, 3, 0);
  CHECK_OK(tg_store_finalize(st));

  tg_onnx_spec s = spec_of(g0, g1, y0, y1);
  CHECK_OK(tg_onnx_export(&s, ok));
  CHECK(exists(ok));

  /* an op with no ONNX form (a loss) names the op, its node and the model */
  tg_graph *l0 = tg_graph_new(st, "c"), *l1 = tg_graph_new(st, "d");
  tg_tensor *loss0 = build(l0, 2, 1), *loss1 = build(l1, 3, 1);
  tg_onnx_spec sl = spec_of(l0, l1, loss0, loss1);
  CHECK_STATUS(tg_onnx_export(&sl, bad), TG_ERR_UNSUPPORTED);
  CHECK_MSG(strstr(tg_last_error(), "op mse_loss (node mse_loss_") && strstr(tg_last_error(), "of model unit has no ONNX form"),
            "%s", tg_last_error());
  CHECK(!exists(bad));

  /* a file already at the path survives a refused export */
  FILE *f = fopen(kept, "w");
  CHECK(f != NULL);
  if (f) {
    fputs("kept", f);
    fclose(f);
  }
  CHECK_STATUS(tg_onnx_export(&sl, kept), TG_ERR_UNSUPPORTED);
  char text[8] = {0};
  f = fopen(kept, "r");
  if (f) {
    CHECK(fread(text, 1, sizeof text - 1, f) == 4);
    fclose(f);
  }
  CHECK(strcmp(text, "kept") == 0);

  /* graphs that are not the same model at two batch sizes */
  tg_onnx_spec mixed = spec_of(g0, l1, y0, loss1);
  CHECK_STATUS(tg_onnx_export(&mixed, bad), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "differ") != NULL);

  /* an input that is neither an input of the file nor a constant */
  tg_onnx_spec no_in = s;
  no_in.n_in = 0;
  CHECK_STATUS(tg_onnx_export(&no_in, bad), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "input 'x'") != NULL);

  /* a path that cannot be written */
  CHECK_STATUS(tg_onnx_export(&s, none), TG_ERR_IO);
  CHECK(strstr(tg_last_error(), "no-such-folder") != NULL);

  /* a weight that is not finite: the parameter and the index */
  tg_store_values(st)[tg_store_param(st, tg_store_find(st, "w")).offset + 5] = NAN;
  CHECK_STATUS(tg_onnx_export(&s, bad), TG_ERR_NUMERIC);
  CHECK_MSG(strstr(tg_last_error(), "parameter 'w'") && strstr(tg_last_error(), "index 5"), "%s", tg_last_error());
  CHECK(!exists(bad));

  unlink(ok);
  unlink(kept);
  tg_graph_free(g0), tg_graph_free(g1), tg_graph_free(l0), tg_graph_free(l1);
  tg_store_free(st);
}

int main(void) {
  char why[512];
  if (!tg_onnx_available(why, sizeof why)) {
    CHECK(strstr(why, "-dev") != NULL || strstr(why, "TG_ONNX=OFF") != NULL); /* names the packages or the option */
    return tg_test_skip(why);
  }
  if (!mkdtemp(g_dir)) return tg_test_skip("cannot make a temporary folder");
  test_writes_and_refuses();
  rmdir(g_dir);
  return tg_test_finish();
}
