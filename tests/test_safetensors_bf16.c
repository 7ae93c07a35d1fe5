/* BF16 in safetensors files: bitwise round trips, malformed entries, exact widening into f32 weights and
 * optimizer state, a file PyTorch wrote (reference/data/torch_bf16.safetensors), and a file for PyTorch to read. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/bf16.h"
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/tickgrad.h"

static char g_dir[256]; /* the test's temporary folder */

/* f32 inputs as bit patterns: BF16_INPUT_BITS in reference/safetensors_interop.py (keep them in step) */
static const uint32_t k_input_bits[25] = {
    0x3F800000u, 0x3F808000u, 0x3F818000u, 0x3F808001u, 0x3F807FFFu, 0xBF818000u, 0xBF808000u, 0x7F7FFFFFu,
    0x7F7F8000u, 0x7F7F7FFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u,
    0x00000001u, 0x00008000u, 0x00018000u, 0x00010000u, 0x807FFFFFu, 0x80000000u, 0x00000000u, 0x40490FDBu,
    0x3DCCCCCDu,
};
/* bf16 patterns stored as they are: BF16_RAW_BITS there */
static const uint16_t k_raw_bits[12] = {0x7FC1u, 0xFFC0u, 0x7F81u, 0xFFFFu, 0x7F80u, 0xFF80u,
                                        0x0001u, 0x8001u, 0x8000u, 0x7F7Fu, 0x0080u, 0x3F80u};
/* torch's narrowing of k_input_bits (tensor "narrowed" of the torch file) as float64; NAN where torch made a NaN
 * (torch picks its own NaN pattern, so only NaN-ness is compared there) */
static const double k_torch_narrowed[25] = {
    0x1p+0,    0x1p+0, 0x1.04p+0, 0x1.02p+0,  0x1p+0,   -0x1.04p+0, -0x1p+0,   INFINITY, INFINITY,
    0x1.fep+127, -INFINITY, INFINITY, -INFINITY, NAN, NAN, NAN, 0.0, 0.0, 0x1p-132, 0x1p-133, -0x1p-126,
    -0.0,      0.0,    0x1.92p+1, 0x1.9ap-4,
};

static const char *tmp_path(const char *name) {
  static char buf[4][512];
  static int k;
  char *p = buf[k++ % 4];
  snprintf(p, 512, "%s/%s", g_dir, name);
  return p;
}

static uint32_t bits_of(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static void inputs(float *x) { memcpy(x, k_input_bits, sizeof k_input_bits); } /* x [25] */

/* Whether float x is the double want: the same value and sign, or both NaN. */
static int same_value(float x, double want) {
  if (isnan(want)) return isnan(x);
  return (double)x == want && !signbit(x) == !signbit(want);
}

/* ---- round trip ---- */

/* "packed" [25] = tg_bf16_pack of the inputs, "raw" [3, 4], a bf16 scalar, an empty [0, 5] and one f32 and i64 each
 * (so the writer orders 8-, 4- and 2-byte tensors). h holds 25 + 12 + 1 bf16 values. */
static tg_status save_bf16_file(const char *path, uint16_t *h) {
  static float f[2] = {1.5f, -2.0f};
  static int64_t i64[1] = {-7};
  float x[25];
  inputs(x);
  tg_bf16_pack(h, x, 25);
  memcpy(h + 25, k_raw_bits, sizeof k_raw_bits);
  h[37] = tg_bf16_from_f32(-3.0f);
  int64_t s25[1] = {25}, s34[2] = {3, 4}, s05[2] = {0, 5}, s2[1] = {2}, s1[1] = {1};
  tg_tensor t[6];
  tg_tensor_view(&t[0], "packed", tg_cpu(0), TG_BF16, 1, s25, h);
  tg_tensor_view(&t[1], "raw", tg_cpu(0), TG_BF16, 2, s34, h + 25);
  tg_tensor_view(&t[2], "scalar16", tg_cpu(0), TG_BF16, 0, NULL, h + 37);
  tg_tensor_view(&t[3], "empty16", tg_cpu(0), TG_BF16, 2, s05, h);
  tg_tensor_view(&t[4], "f", tg_cpu(0), TG_F32, 1, s2, f);
  tg_tensor_view(&t[5], "i", tg_cpu(0), TG_I64, 1, s1, i64);
  return tg_safetensors_save(path, 6, t, 0, NULL);
}

static void check_bf16_file(const tg_safetensors *f, const uint16_t *h) {
  CHECK(tg_safetensors_count(f) == 6);
  const tg_tensor *t = tg_safetensors_find(f, "packed");
  CHECK(t && t->dtype == TG_BF16 && t->ndim == 1 && t->shape[0] == 25 && (uintptr_t)t->data % 2 == 0);
  CHECK(t && memcmp(t->data, h, 25 * sizeof *h) == 0);
  t = tg_safetensors_find(f, "raw");
  CHECK(t && t->dtype == TG_BF16 && t->ndim == 2 && t->shape[0] == 3 && t->shape[1] == 4);
  CHECK(t && memcmp(t->data, k_raw_bits, sizeof k_raw_bits) == 0);
  t = tg_safetensors_find(f, "scalar16");
  CHECK(t && t->dtype == TG_BF16 && t->ndim == 0 && tg_f32_from_bf16(*(const uint16_t *)t->data) == -3.0f);
  t = tg_safetensors_find(f, "empty16");
  CHECK(t && t->dtype == TG_BF16 && t->ndim == 2 && t->shape[0] == 0 && t->shape[1] == 5 && tg_nbytes(t) == 0);
  t = tg_safetensors_find(f, "f");
  CHECK(t && t->dtype == TG_F32 && ((const float *)t->data)[1] == -2.0f);
  t = tg_safetensors_find(f, "i");
  CHECK(t && t->dtype == TG_I64 && ((const int64_t *)t->data)[0] == -7);
}

static void test_roundtrip(void) {
  const char *p = tmp_path("bf16.safetensors");
  uint16_t h[38];
  CHECK_OK(save_bf16_file(p, h));
  tg_safetensors *f = NULL;
  CHECK_OK(tg_safetensors_load(p, &f));
  if (f) check_bf16_file(f, h);
  tg_safetensors_free(f);
  size_t len = 0;
  unsigned char *b = tg_test_read_file(p, &len);
  CHECK(b && strstr((const char *)b + 8, "\"packed\":{\"dtype\":\"BF16\",\"shape\":[25]") != NULL);
  f = NULL;
  CHECK_OK(tg_safetensors_parse(b, len, "bf16 bytes", &f));
  if (f) check_bf16_file(f, h);
  tg_safetensors_free(f);
  free(b);
  /* the writer's checks apply to bf16 views as to any other */
  int64_t s2[1] = {2};
  tg_tensor t;
  tg_tensor_view(&t, "gone16", tg_cpu(0), TG_BF16, 1, s2, NULL);
  CHECK_STATUS(tg_safetensors_save(tmp_path("nodata.safetensors"), 1, &t, 0, NULL), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "'gone16'"), "%s", tg_last_error());
  tg_tensor_view(&t, "dev16", tg_cuda(0), TG_BF16, 1, s2, h);
  CHECK_STATUS(tg_safetensors_save(tmp_path("dev.safetensors"), 1, &t, 0, NULL), TG_ERR_DEVICE);
  CHECK_MSG(strstr(tg_last_error(), "'dev16'"), "%s", tg_last_error());
  CHECK(access(tmp_path("nodata.safetensors"), F_OK) != 0 && access(tmp_path("dev.safetensors"), F_OK) != 0);
  unlink(tmp_path("bf16.safetensors")); /* p's buffer has been reused by now */
}

/* ---- malformed BF16 entries ---- */

static tg_status parse_text(const char *header, size_t data_len) {
  static const unsigned char data[16] = {0};
  size_t hl = strlen(header), len = 8 + hl + data_len;
  unsigned char *b = malloc(len); /* [len] length, header, data */
  for (int k = 0; k < 8; k++) b[k] = (unsigned char)((uint64_t)hl >> (8 * k));
  memcpy(b + 8, header, hl);
  memcpy(b + 8 + hl, data, data_len);
  tg_safetensors *f = NULL;
  tg_status st = tg_safetensors_parse(b, len, "crafted", &f);
  free(b);
  tg_safetensors_free(f);
  return st;
}

static void test_malformed(void) {
  struct {
    const char *header;
    size_t data_len;
    tg_status want;
    const char *words[2];
  } cases[] = {
      {"{\"b\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[0,5]}}", 5, TG_ERR_FORMAT,
       {"'b'", "BF16 with 3 elements needs 6 bytes but data_offsets span 5"}},
      {"{\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,6]}}", 6, TG_ERR_FORMAT, {"'b'", "needs 4 bytes"}},
      {"{\"b\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[0,6]}}", 4, TG_ERR_FORMAT, {"'b'", "run past"}},
      {"{\"b\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[4,2]}}", 4, TG_ERR_FORMAT, {"'b'", "before"}},
      {"{\"b\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[2,4]}}", 4, TG_ERR_FORMAT, {"'b'", "unused"}},
      {"{\"b\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[0,2]}}", 4, TG_ERR_FORMAT, {"cover 2", "4"}},
      {"{\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]},"
       "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[2,6]}}", 6, TG_ERR_FORMAT,
       {"'b'", "overlaps tensor 'a'"}},
      {"{\"b\":{\"dtype\":\"BF16\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,2]}}", 2, TG_ERR_FORMAT,
       {"'b'", "overflows 64 bits"}},
      /* a BF16 tensor at an odd offset parses (copied to an aligned buffer); the U8 before it is refused by name */
      {"{\"u\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
       "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[1,5]}}", 5, TG_ERR_UNSUPPORTED, {"'u'", "U8"}},
      {"{\"h\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2, TG_ERR_UNSUPPORTED,
       {"F16", "tickgrad reads F32, BF16, I32 and I64"}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tg_status st = parse_text(cases[i].header, cases[i].data_len);
    CHECK_MSG(st == cases[i].want, "case %zu: got %s: %s", i, tg_status_name(st), tg_last_error());
    for (int w = 0; w < 2; w++)
      CHECK_MSG(strstr(tg_last_error(), cases[i].words[w]) && strstr(tg_last_error(), "crafted"),
                "case %zu: want '%s' in: %s", i, cases[i].words[w], tg_last_error());
  }
}

/* ---- widening into f32 weights and optimizer state ---- */

/* A store with layer.w [3, 4] and layer.b [4]. */
static tg_store *make_store(uint64_t seed) {
  tg_store *s = tg_store_new(tg_cpu(0), seed);
  tg_graph *g = tg_graph_new(s, "t");
  int64_t ws[2] = {3, 4}, bs[1] = {4};
  tg_init init = {TG_INIT_NORMAL, 0.0f, 1.0f};
  CHECK(tg_param(g, "layer.w", 2, ws, init) != NULL);
  CHECK(tg_param(g, "layer.b", 1, bs, init) != NULL);
  CHECK_OK(tg_store_finalize(s));
  tg_graph_free(g);
  return s;
}

static const float *param(tg_store *s, const char *name) {
  return tg_store_values(s) + tg_store_param(s, tg_store_find(s, name)).offset;
}

static void test_store_widening(void) {
  const char *p = tmp_path("w16.safetensors");
  float b[4] = {0.25f, -1.0f, 3.0f, 1e-3f};
  int64_t ws[2] = {3, 4}, bs[1] = {4}, wrong[2] = {4, 3};
  tg_tensor t[2];
  tg_tensor_view(&t[0], "layer.w", tg_cpu(0), TG_BF16, 2, ws, (void *)k_raw_bits);
  tg_tensor_view(&t[1], "layer.b", tg_cpu(0), TG_F32, 1, bs, b);
  CHECK_OK(tg_safetensors_save(p, 2, t, 0, NULL));
  tg_store *s = make_store(3);
  CHECK_OK(tg_store_load(s, p));
  int bad = 0;
  for (int k = 0; k < 12; k++) bad += bits_of(param(s, "layer.w")[k]) != (uint32_t)k_raw_bits[k] << 16;
  CHECK_MSG(bad == 0, "%d bf16 weights not widened bit for bit (NaN payloads, inf, subnormals, -0)", bad);
  CHECK(memcmp(param(s, "layer.b"), b, sizeof b) == 0);
  /* a bf16 tensor of the wrong shape or an i32 tensor: named, nothing changes */
  size_t n = tg_store_numel(s);
  float *before = malloc(n * sizeof *before); /* [n] */
  memcpy(before, tg_store_values(s), n * sizeof *before);
  tg_tensor_view(&t[0], "layer.w", tg_cpu(0), TG_BF16, 2, wrong, (void *)k_raw_bits);
  CHECK_OK(tg_safetensors_save(p, 2, t, 0, NULL));
  CHECK_STATUS(tg_store_load(s, p), TG_ERR_SHAPE);
  CHECK_MSG(strstr(tg_last_error(), "'layer.w' has shape [4, 3] in the file, [3, 4]"), "%s", tg_last_error());
  int32_t iv[12] = {0};
  tg_tensor_view(&t[0], "layer.w", tg_cpu(0), TG_I32, 2, ws, iv);
  CHECK_OK(tg_safetensors_save(p, 2, t, 0, NULL));
  CHECK_STATUS(tg_store_load(s, p), TG_ERR_SHAPE);
  CHECK_MSG(strstr(tg_last_error(), "'layer.w' is i32") && strstr(tg_last_error(), "bf16 widened exactly"), "%s",
            tg_last_error());
  CHECK(memcmp(before, tg_store_values(s), n * sizeof *before) == 0);
  free(before);
  tg_store_free(s);
  unlink(p);
}

/* A training-state file whose first moment is narrowed to BF16 loads with that moment widened exactly. */
static void test_state_widening(void) {
  const char *sp = tmp_path("state.safetensors"), *np = tmp_path("state16.safetensors");
  tg_store *a = make_store(5);
  tg_optim_config c = tg_optim_defaults(TG_ADAMW);
  tg_optim *oa = NULL;
  CHECK_OK(tg_optim_new(a, &c, &oa));
  size_t n = tg_store_numel(a);
  for (int r = 0; r < 3; r++) {
    for (size_t k = 0; k < n; k++) tg_store_grads(a)[k] = tg_rng_normal(9, (uint64_t)r, k);
    CHECK_OK(tg_optim_step(oa));
  }
  tg_train_state ts = {3, 11, 12, 1, 40};
  CHECK_OK(tg_train_state_save(sp, oa, &ts));
  tg_safetensors *f = NULL;
  CHECK_OK(tg_safetensors_load(sp, &f));
  static const char *keys[9] = {"format", "version", "optimizer", "optim_step", "step",
                                "rng_seed", "rng_offset", "epoch", "cursor"};
  tg_kv meta[9];
  for (int k = 0; k < 9; k++) meta[k] = (tg_kv){keys[k], f ? tg_safetensors_meta(f, keys[k]) : ""};
  uint16_t *m16 = malloc(n * sizeof *m16); /* [n] exp_avg narrowed */
  tg_bf16_pack(m16, tg_optim_state(oa, 0, NULL), n);
  int64_t shape[1] = {(int64_t)n}, short_shape[1] = {(int64_t)n - 1};
  tg_tensor t[2];
  tg_tensor_view(&t[0], "exp_avg", tg_cpu(0), TG_BF16, 1, shape, m16);
  tg_tensor_view(&t[1], "exp_avg_sq", tg_cpu(0), TG_F32, 1, shape, tg_optim_state(oa, 1, NULL));
  CHECK_OK(tg_safetensors_save(np, 2, t, 9, meta));
  tg_store *b = make_store(6);
  tg_optim *ob = NULL;
  CHECK_OK(tg_optim_new(b, &c, &ob));
  tg_train_state got;
  CHECK_OK(tg_train_state_load(np, ob, &got));
  CHECK(tg_optim_steps(ob) == 3 && got.cursor == 40);
  int bad = 0;
  for (size_t k = 0; k < n; k++) bad += bits_of(tg_optim_state(ob, 0, NULL)[k]) != (uint32_t)m16[k] << 16;
  CHECK_MSG(bad == 0, "%d bf16 moments not widened exactly", bad);
  CHECK(memcmp(tg_optim_state(ob, 1, NULL), tg_optim_state(oa, 1, NULL), n * sizeof(float)) == 0);
  /* a bf16 moment of the wrong length is refused by name */
  tg_optim *oc = NULL;
  CHECK_OK(tg_optim_new(b, &c, &oc));
  tg_tensor_view(&t[0], "exp_avg", tg_cpu(0), TG_BF16, 1, short_shape, m16);
  tg_tensor_view(&t[1], "exp_avg_sq", tg_cpu(0), TG_F32, 1, shape, tg_optim_state(oa, 1, NULL));
  CHECK_OK(tg_safetensors_save(np, 2, t, 9, meta));
  CHECK_STATUS(tg_train_state_load(np, oc, NULL), TG_ERR_SHAPE);
  CHECK_MSG(strstr(tg_last_error(), "'exp_avg' is bf16") && strstr(tg_last_error(), "or bf16"), "%s",
            tg_last_error());
  CHECK(tg_optim_steps(oc) == 0);
  tg_safetensors_free(f);
  free(m16);
  tg_optim_free(oa);
  tg_optim_free(ob);
  tg_optim_free(oc);
  tg_store_free(a);
  tg_store_free(b);
  unlink(sp);
  unlink(np);
}

/* ---- PyTorch's file ---- */

static void test_torch_file(void) {
  /* ctest sets TG_SOURCE_DIR; run by hand from a build folder inside the checkout, ".." works */
  const char *src = getenv("TG_SOURCE_DIR");
  if (!src) src = access("reference/data", F_OK) == 0 ? "." : "..";
  char path[1024];
  snprintf(path, sizeof path, "%s/reference/data/torch_bf16.safetensors", src);
  tg_safetensors *f = NULL;
  CHECK_OK(tg_safetensors_load(path, &f));
  if (!f) return;
  const tg_tensor *x = tg_safetensors_find(f, "src"), *h = tg_safetensors_find(f, "narrowed");
  const tg_tensor *raw = tg_safetensors_find(f, "raw");
  CHECK(tg_safetensors_count(f) == 3 && strcmp(tg_safetensors_meta(f, "source"), "torch") == 0);
  CHECK(x && x->dtype == TG_F32 && x->ndim == 1 && x->shape[0] == 25);
  CHECK(h && h->dtype == TG_BF16 && h->ndim == 1 && h->shape[0] == 25);
  CHECK(raw && raw->dtype == TG_BF16 && raw->ndim == 2 && raw->shape[0] == 3 && raw->shape[1] == 4);
  if (!x || !h || !raw || x->shape[0] != 25 || h->shape[0] != 25 || tg_numel(raw) != 12) {
    tg_safetensors_free(f);
    return;
  }
  CHECK(memcmp(x->data, k_input_bits, sizeof k_input_bits) == 0);
  CHECK(memcmp(raw->data, k_raw_bits, sizeof k_raw_bits) == 0);
  const float *xs = x->data;
  const uint16_t *hs = h->data;
  for (int k = 0; k < 25; k++) {
    float wide = tg_f32_from_bf16(hs[k]);
    CHECK_MSG(same_value(wide, k_torch_narrowed[k]), "narrowed[%d] = 0x%04X = %a, want %a", k, hs[k], wide,
              k_torch_narrowed[k]);
    /* tickgrad narrows as torch does; NaNs are NaN in both (the patterns differ by design) */
    uint16_t ours = tg_bf16_from_f32(xs[k]);
    if (isnan(k_torch_narrowed[k]))
      CHECK_MSG(isnan(tg_f32_from_bf16(ours)), "src[%d] = 0x%08X narrowed to 0x%04X", k, k_input_bits[k], ours);
    else
      CHECK_MSG(ours == hs[k], "src[%d] = 0x%08X: tickgrad 0x%04X, torch 0x%04X", k, k_input_bits[k], ours, hs[k]);
  }
  tg_safetensors_free(f);
  /* into f32 parameters of the same names: F32 as it is, BF16 widened exactly */
  tg_store *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(s, "torch");
  int64_t s25[1] = {25}, s34[2] = {3, 4};
  tg_init init = {TG_INIT_NORMAL, 0.0f, 1.0f};
  CHECK(tg_param(g, "src", 1, s25, init) && tg_param(g, "narrowed", 1, s25, init) && tg_param(g, "raw", 2, s34, init));
  CHECK_OK(tg_store_finalize(s));
  CHECK_OK(tg_store_load(s, path));
  int bad = 0;
  for (int k = 0; k < 25; k++) {
    bad += bits_of(param(s, "src")[k]) != k_input_bits[k];
    bad += !same_value(param(s, "narrowed")[k], k_torch_narrowed[k]);
  }
  for (int k = 0; k < 12; k++) bad += bits_of(param(s, "raw")[k]) != (uint32_t)k_raw_bits[k] << 16;
  CHECK_MSG(bad == 0, "%d values of the torch file differ once loaded into f32 parameters", bad);
  tg_graph_free(g);
  tg_store_free(s);
}

/* With TG_INTEROP_DIR set, writes tickgrad_bf16.safetensors there for reference/safetensors_interop.py:
 * "packed" [25] = tg_bf16_pack of the inputs, "rounded" [25] = tg_f32_round_bf16 of them, "raw" [3, 4] as they
 * are and "widened" [12] = tg_bf16_unpack of raw. */
static void interop_write(void) {
  const char *dir = getenv("TG_INTEROP_DIR");
  if (!dir) return;
  float x[25], rounded[25], widened[12];
  uint16_t packed[25];
  inputs(x);
  tg_bf16_pack(packed, x, 25);
  tg_f32_round_bf16(rounded, x, 25);
  tg_bf16_unpack(widened, k_raw_bits, 12);
  int64_t s25[1] = {25}, s34[2] = {3, 4}, s12[1] = {12};
  tg_tensor t[4];
  tg_tensor_view(&t[0], "packed", tg_cpu(0), TG_BF16, 1, s25, packed);
  tg_tensor_view(&t[1], "rounded", tg_cpu(0), TG_F32, 1, s25, rounded);
  tg_tensor_view(&t[2], "raw", tg_cpu(0), TG_BF16, 2, s34, (void *)k_raw_bits);
  tg_tensor_view(&t[3], "widened", tg_cpu(0), TG_F32, 1, s12, widened);
  char path[1024];
  snprintf(path, sizeof path, "%s/tickgrad_bf16.safetensors", dir);
  CHECK_OK(tg_safetensors_save(path, 4, t, 0, NULL));
  printf("interop file written to %s\n", path);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/tg_st_bf16_XXXXXX");
  if (!mkdtemp(g_dir)) return tg_test_skip("cannot create a temporary folder");
  test_roundtrip();
  test_malformed();
  test_store_widening();
  test_state_widening();
  test_torch_file();
  interop_write();
  CHECK_MSG(rmdir(g_dir) == 0, "files left in %s", g_dir);
  return tg_test_finish();
}
