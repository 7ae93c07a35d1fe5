/* The Vulkan kernels of attention against the CPU's, forward and backward: causal at offsets that hide every key of
 * some rows, of all rows or of none, a single query row at the last key (a decoder's step), non-causal, heads of 1, odd
 * and wide widths, scales other than 1, more rows than a workgroup, shapes cut into several key, row and column-chunk
 * dispatches, hidden keys holding NaN and infinity; each gradient alone and in pairs. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_op_check.h"
#include "vulkan/vk_test.h"

/* attention of q [b, tq, h dh], k and v [b, tk, h dh] filled from seeds; causal at offset, or not (causal 0); want: dq,
 * dk, dv. poison > 0: the keys j >= poison (which no row may see) hold NaN and infinities in k and v. */
static void check(const char *label, int64_t b, int64_t tq, int64_t tk, int64_t h, int64_t dh, int causal,
                  int64_t offset, float scale, const int *want, int64_t poison) {
  vk_pair in[3];
  vk_pair_new(&in[0], "q", 3, (int64_t[]){b, tq, h * dh});
  vk_pair_fill(&in[0], 61, -1.5f, 1.5f);
  vk_pair_new(&in[1], "k", 3, (int64_t[]){b, tk, h * dh});
  vk_pair_fill(&in[1], 62, -1.5f, 1.5f);
  vk_pair_new(&in[2], "v", 3, (int64_t[]){b, tk, h * dh});
  vk_pair_fill(&in[2], 63, -1.0f, 1.0f);
  if (poison > 0) {
    for (int t = 1; t < 3; t++) {
      for (int64_t bi = 0; bi < b; bi++)
        for (int64_t j = poison; j < tk; j++)
          for (int64_t c = 0; c < h * dh; c++)
            in[t].host[(bi * tk + j) * h * dh + c] = (c + j) % 3 == 0 ? NAN : (c + j) % 3 == 1 ? INFINITY : -INFINITY;
      vk_pair_upload(&in[t]);
    }
  }
  tg_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.i[0] = h, attr.i[1] = causal, attr.i[2] = causal ? offset : 0;
  attr.f[0] = scale;
  vk_check_op(label, TG_OP_ATTENTION, in, 3, 3, in[0].shape, want, &attr);
  for (int i = 0; i < 3; i++) vk_pair_free(&in[i]);
}

static const int ALL[3] = {1, 1, 1};

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  float s16 = 0.25f; /* 1 / sqrt(16), the transformer's */
  check("causal, offset 0", 2, 9, 9, 2, 4, 1, 0, 0.5f, ALL, 0);
  check("causal, dh 16 (the transformer's)", 2, 24, 24, 4, 16, 1, 0, s16, ALL, 0);
  check("one query row at the last key", 3, 1, 12, 2, 16, 1, 11, s16, ALL, 0);
  check("one query row at the last key, long", 1, 1, 300, 2, 8, 1, 299, 0.3f, ALL, 0);
  check("causal, offset -3 (rows that see nothing)", 2, 7, 7, 2, 3, 1, -3, 1.0f, ALL, 0);
  check("causal, offset 2, fewer queries than keys", 2, 5, 11, 3, 4, 1, 2, 0.7f, ALL, 0);
  check("causal, offset past every key", 2, 5, 7, 2, 4, 1, 1000000000000LL, 1.0f, ALL, 0);
  check("causal, offset before every key", 2, 5, 7, 2, 4, 1, -1000000000000LL, 1.0f, ALL, 0);
  check("causal, offset INT64_MAX", 1, 4, 6, 2, 3, 1, INT64_MAX, 1.0f, ALL, 0);
  check("causal, offset INT64_MIN", 1, 4, 6, 2, 3, 1, INT64_MIN, 1.0f, ALL, 0);
  check("causal, offset -Tq (every row sees nothing)", 1, 4, 6, 2, 3, 1, -4, 1.0f, ALL, 0);
  check("causal, offset -Tq + 1 (the last row sees one key)", 1, 4, 6, 2, 3, 1, -3, 1.0f, ALL, 0);
  check("non-causal", 2, 5, 11, 2, 6, 0, 0, 0.4f, ALL, 0);
  check("non-causal, more queries than keys", 2, 13, 3, 1, 5, 0, 0, 1.0f, ALL, 0);
  check("dh 1", 2, 6, 6, 3, 1, 1, 0, 1.0f, ALL, 0);
  check("dh 20, scale 2.5", 2, 8, 8, 2, 20, 1, 0, 2.5f, ALL, 0);
  check("dh 7, negative scale", 1, 6, 9, 2, 7, 1, 1, -0.8f, ALL, 0);
  check("more rows than a workgroup", 2, 70, 70, 3, 20, 1, 0, 1.0f / sqrtf(20.0f), ALL, 0);
  check("hidden keys hold NaN and infinities", 2, 4, 10, 2, 5, 1, 2, 0.5f, ALL, 6);
  check("dq only", 2, 9, 9, 2, 5, 1, 0, 0.5f, (int[]){1, 0, 0}, 0);
  check("dk only", 2, 9, 9, 2, 5, 1, 0, 0.5f, (int[]){0, 1, 0}, 0);
  check("dv only", 2, 9, 9, 2, 5, 1, -2, 0.5f, (int[]){0, 0, 1}, 0);
  check("dk and dv, not dq", 2, 70, 70, 3, 20, 1, 0, 0.3f, (int[]){0, 1, 1}, 0);
  check("dq and dv, not dk", 1, 5, 8, 2, 4, 0, 0, 0.6f, (int[]){1, 0, 1}, 0);
  check("no gradient wanted", 1, 5, 8, 2, 4, 1, 0, 0.6f, (int[]){0, 0, 0}, 0);
  /* past one dispatch's loops (vk_k_attention.c's LOOP_MAX; lavapipe silently ends them, these cases fail without
   * the cuts): 13 column chunks cut the keys (3 forward chunks: the statistics' slots swap back) and the rows into
   * several dispatches each; 25 also split the column chunks; 20,000 keys for one row (scale 1 spreads the scores,
   * so that the largest probabilities, and the gradients' increments, stand well above the rounding of the gradients
   * they are added to), and 20,000 rows for one key */
  check("dh 200, several key and row chunks", 1, 400, 400, 1, 200, 1, 0, 0.07f, ALL, 0);
  check("dh 400, column chunks split", 1, 100, 100, 2, 400, 1, 5, 0.05f, ALL, 0);
  check("20,000 keys for one query row", 1, 1, 20000, 1, 16, 1, 19999, 1.0f, ALL, 0);
  check("20,000 rows over 3 keys", 1, 20000, 3, 1, 16, 0, 0, s16, ALL, 0);
  vk_report("attention", "");
  return tg_test_finish();
}
