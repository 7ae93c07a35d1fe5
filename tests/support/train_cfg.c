/* Small forecasting runs shared by the trainer tests: seeded synthetic bars, a small config of each model, and a
 * bitwise comparison of two runs' safetensors files. */
#include <stdio.h>
#include <string.h>
#include "support/train_cfg.h"

int tg_test_synth_bars(tg_bars *b, int64_t n, double signal, uint64_t seed) {
  tg_synth_config s = tg_synth_defaults();
  s.bars = n;
  s.signal = signal;
  s.seed = seed;
  return tg_synth_generate(&s, b) == TG_OK;
}

tg_train_config tg_test_small_config(tg_model_kind kind, const char *dir, const char *name, int epochs) {
  tg_train_config c = tg_train_defaults(kind);
  c.horizons = 2;
  c.epochs = epochs;
  snprintf(c.device, sizeof c.device, "cpu");
  c.threads = 1; /* tiny models: threads cost more than they give */
  /* fp32 on every CPU kind: auto takes bf16 from width 64 on some (tickgrad devices), and the tests that compare runs
   * (devices, ranks, resumes) are about fp32 numerics; a test of bf16 or auto asks for it */
  c.precision = TG_PRECISION_FP32;
  snprintf(c.out, sizeof c.out, "%s/%s", dir, name);
  if (kind == TG_MODEL_TFT) {
    c.model.tft.hidden = 16;
    c.model.tft.heads = 2;
    c.model.tft.enc_len = 16;
    c.batch = 32;
  } else if (kind == TG_MODEL_MAMBA2) {
    c.model.mamba = (tg_mamba2_cfg){.d_model = 16, .n_layers = 1, .d_state = 8, .headdim = 8, .expand = 2,
                                    .d_conv = 4, .ngroups = 1, .chunk = 16, .seq_len = 16};
    c.batch = 32;
  } else if (kind == TG_MODEL_TRANSFORMER) {
    c.model.transformer = (tg_transformer_cfg){.d_model = 16, .n_heads = 2, .n_layers = 1, .seq_len = 16};
    c.batch = 32;
  }
  return c;
}

int tg_test_same_tensors(const char *a, const char *b) {
  tg_safetensors *fa = NULL, *fb = NULL;
  int same = tg_safetensors_load(a, &fa) == TG_OK && tg_safetensors_load(b, &fb) == TG_OK &&
             tg_safetensors_count(fa) == tg_safetensors_count(fb) && tg_safetensors_count(fa) > 0;
  for (int i = 0; same && i < tg_safetensors_count(fa); i++) {
    const tg_tensor *ta = tg_safetensors_at(fa, i), *tb = tg_safetensors_find(fb, ta->name);
    same = tb && tg_nbytes(ta) == tg_nbytes(tb) && memcmp(ta->data, tb->data, tg_nbytes(ta)) == 0;
  }
  tg_safetensors_free(fa);
  tg_safetensors_free(fb);
  return same;
}
