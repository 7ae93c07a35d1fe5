/* sample_rows: draws in range, spread over every row, fresh per run, replayed by the same seed. */
#include <string.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"

#define ROWS 37
#define DRAWS 4096

static int draw_runs(uint64_t seed, int runs, int64_t *out /* [runs, DRAWS] */) {
  tg_graph *g = tg_graph_new(NULL, "sampler");
  tg_tensor *idx = tg_sample_rows(g, ROWS, DRAWS);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  int ok = idx && tg_graph_set_seed(g, seed, 0) == TG_OK && tg_graph_plan(g, &o) == TG_OK;
  for (int r = 0; ok && r < runs; r++) {
    ok = tg_graph_run(g) == TG_OK;
    if (ok) memcpy(out + (size_t)r * DRAWS, idx->data, DRAWS * sizeof(int64_t));
  }
  tg_graph_free(g);
  return ok;
}

int main(void) {
  static int64_t a[3 * DRAWS], b[3 * DRAWS], c[DRAWS];
  CHECK(draw_runs(7, 3, a));
  CHECK(draw_runs(7, 3, b));
  CHECK(draw_runs(8, 1, c));
  CHECK_MSG(memcmp(a, b, sizeof a) == 0, "same seed, different draws");
  CHECK_MSG(memcmp(a, a + DRAWS, DRAWS * sizeof(int64_t)) != 0, "two runs drew the same rows");
  CHECK_MSG(memcmp(a, c, DRAWS * sizeof(int64_t)) != 0, "seeds 7 and 8 drew the same rows");
  int in_range = 1, count[ROWS] = {0};
  for (int i = 0; i < 3 * DRAWS; i++) {
    in_range &= a[i] >= 0 && a[i] < ROWS;
    if (a[i] >= 0 && a[i] < ROWS) count[a[i]]++;
  }
  CHECK(in_range);
  /* 12288 draws over 37 rows: about 332 each; a fair sampler stays well inside [230, 440] */
  for (int r = 0; r < ROWS; r++) CHECK_MSG(count[r] > 230 && count[r] < 440, "row %d drawn %d times", r, count[r]);
  tg_graph *g = tg_graph_new(NULL, "bad");
  CHECK(tg_sample_rows(g, 0, 4) == NULL && tg_graph_status(g) == TG_ERR_INVALID);
  tg_graph_free(g);
  return tg_test_finish();
}
