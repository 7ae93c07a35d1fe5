/* safetensors and checkpoints: exact round trips, atomic writes, strict loads, truncation and corruption fuzz. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/json.h"
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/tickgrad.h"

static unsigned long long g_seed;
static char g_dir[256]; /* the test's temporary folder */

/* ---- helpers ---- */

static const char *tmp_path(const char *name) {
  static char buf[8][512];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 512, "%s/%s", g_dir, name);
  return p;
}

static void write_bytes(const char *path, const void *b, size_t n) {
  FILE *f = fopen(path, "wb");
  fwrite(b, 1, n, f);
  fclose(f);
}

/* Entries in the temporary folder other than "." and "..", and whether any is a temp file. */
static int dir_count(int *temps) {
  DIR *d = opendir(g_dir);
  int n = 0;
  *temps = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    n++;
    if (strstr(e->d_name, ".tmp.")) (*temps)++;
  }
  if (d) closedir(d);
  return n;
}

static void dir_remove_all(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[768];
  while (d && (e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (stat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) dir_remove_all(p);
    else unlink(p);
  }
  if (d) closedir(d);
  rmdir(dir);
}

/* bytes of a safetensors file: 8-byte little-endian length, header, data */
static unsigned char *make_file(const char *header, const void *data, size_t data_len, size_t *len) {
  size_t h = strlen(header);
  *len = 8 + h + data_len;
  unsigned char *b = malloc(*len);
  for (int k = 0; k < 8; k++) b[k] = (unsigned char)((uint64_t)h >> (8 * k));
  memcpy(b + 8, header, h);
  if (data_len) memcpy(b + 8 + h, data, data_len);
  return b;
}

static tg_status parse_text(const char *header, const void *data, size_t data_len,
                            tg_safetensors **out) {
  size_t len;
  unsigned char *b = make_file(header, data, data_len, &len);
  tg_safetensors *f = NULL;
  tg_status st = tg_safetensors_parse(b, len, "crafted", &f);
  free(b);
  if (out) *out = f;
  else tg_safetensors_free(f);
  return st;
}

/* A store with layer.w [3, 4] and layer.b [4] (plus extra params for mismatch tests). */
static tg_store *make_store(uint64_t seed, int w_rows, int with_b, int with_c) {
  tg_store *s = tg_store_new(tg_cpu(0), seed);
  tg_graph *g = tg_graph_new(s, "t");
  int64_t ws[2] = {w_rows, 4}, bs[1] = {4}, cs[1] = {2};
  tg_init init = {TG_INIT_NORMAL, 0.0f, 1.0f};
  CHECK(tg_param(g, "layer.w", 2, ws, init) != NULL);
  if (with_b) CHECK(tg_param(g, "layer.b", 1, bs, init) != NULL);
  if (with_c) CHECK(tg_param(g, "extra.c", 1, cs, init) != NULL);
  CHECK_OK(tg_store_finalize(s));
  tg_graph_free(g);
  return s;
}

static void fill_grads(tg_store *s, uint64_t round) {
  float *g = tg_store_grads(s);
  for (size_t k = 0; k < tg_store_numel(s); k++) g[k] = tg_rng_normal(g_seed, 1000 + round, k);
}

/* The small mixed file used by the round-trip and fuzz tests. */
static tg_status save_mixed(const char *path) {
  static float f[6];
  static int32_t i32[4];
  static int64_t i64[3];
  static float scalar = 3.5f;
  static float empty[1];
  for (int k = 0; k < 6; k++) f[k] = (float)k * 0.5f - 1.25f;
  for (int k = 0; k < 4; k++) i32[k] = k * 1000003 - 7;
  for (int k = 0; k < 2; k++) i64[k] = (int64_t)(k + 1) * 1000000000000000LL + k;
  i64[2] = -((int64_t)1 << 62);
  int64_t fs[2] = {2, 3}, is[1] = {4}, ls[1] = {3}, es[2] = {0, 4};
  tg_tensor t[5];
  tg_tensor_view(&t[0], "f", tg_cpu(0), TG_F32, 2, fs, f);
  tg_tensor_view(&t[1], "i32", tg_cpu(0), TG_I32, 1, is, i32);
  tg_tensor_view(&t[2], "i64", tg_cpu(0), TG_I64, 1, ls, i64);
  tg_tensor_view(&t[3], "scalar", tg_cpu(0), TG_F32, 0, NULL, &scalar);
  tg_tensor_view(&t[4], "empty", tg_cpu(0), TG_F32, 2, es, empty);
  tg_kv meta[2] = {{"written_by", "tickgrad"},
                   {"note", "quote \" backslash \\ newline \n tab \t unicode \xc3\xa9"}};
  return tg_safetensors_save(path, 5, t, 2, meta);
}

/* ---- JSON reader ---- */

static tg_status json_text(const char *text, tg_json_doc **d) {
  return tg_json_parse(text, strlen(text), "j", 0, d);
}

static void test_json(void) {
  tg_json_doc *d = NULL;
  CHECK_OK(json_text(" {\"a\": [1, -2, 3.5e2, true, false, null], \"s\": \"x\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"} ", &d));
  const tg_json *r = tg_json_root(d);
  CHECK(r && r->type == TG_JSON_OBJECT && r->count == 2);
  const tg_json *a = tg_json_get(r, "a");
  CHECK(a && a->type == TG_JSON_ARRAY && a->count == 6 && a->offset == 7);
  CHECK(a->first->type == TG_JSON_INT && a->first->i == 1 && a->first->next->i == -2);
  CHECK(a->first->next->next->type == TG_JSON_REAL && a->first->next->next->num == 350.0);
  const tg_json *s = tg_json_get(r, "s");
  CHECK(s && s->type == TG_JSON_STRING && strcmp(s->str, "x\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80") == 0);
  tg_json_free(d);
  CHECK_OK(json_text("-9223372036854775808", &d));
  CHECK(tg_json_root(d)->i == INT64_MIN);
  tg_json_free(d);
  CHECK_OK(json_text("9223372036854775807", &d));
  CHECK(tg_json_root(d)->i == INT64_MAX);
  tg_json_free(d);

  struct {
    const char *text;
    const char *word;
  } bad[] = {
      {"", "byte 0"},
      {"{", "byte 1"},
      {"{\"a\":1,}", "byte 7"},
      {"[1,]", "byte 3"},
      {"{\"a\" 1}", "':'"},
      {"{\"a\":1 \"b\":2}", "','"},
      {"01", "leading zeros"},
      {"1.", "digit"},
      {"-", "digit"},
      {"1e+", "exponent"},
      {"9223372036854775808", "range"},
      {"1e999", "range"},
      {"\"abc", "unterminated"},
      {"\"a\\x\"", "escape"},
      {"\"\\u12\"", "hex"},
      {"\"\\ud800\"", "surrogate"},
      {"\"\\udc00\"", "surrogate"},
      {"\"\\u0000\"", "NUL"},
      {"\"a\tb\"", "control"},
      {"\"\xc3\"", "UTF-8"},
      {"\"\xc0\xaf\"", "UTF-8"},
      {"\"\xed\xa0\x80\"", "UTF-8"},
      {"\"\xf4\x90\x80\x80\"", "UTF-8"},
      {"{\"k\":1,\"k\":2}", "duplicate key \"k\""},
      {"tru", "unexpected"},
      {"nul", "unexpected"},
      {"[1] x", "after the end"},
      {"{\"a\":1}}", "after the end"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_STATUS(json_text(bad[i].text, &d), TG_ERR_FORMAT);
    CHECK_MSG(strstr(tg_last_error(), bad[i].word) && strstr(tg_last_error(), "byte "),
              "'%s': want '%s' in: %s", bad[i].text, bad[i].word, tg_last_error());
    CHECK(d == NULL);
  }
  /* nesting: 64 levels parse, 65 do not */
  char deep[200];
  memset(deep, '[', 64);
  memset(deep + 64, ']', 64);
  deep[128] = '\0';
  CHECK_OK(json_text(deep, &d));
  tg_json_free(d);
  memset(deep, '[', 65);
  memset(deep + 65, ']', 65);
  deep[130] = '\0';
  CHECK_STATUS(json_text(deep, &d), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "nesting") && strstr(tg_last_error(), "byte 64"), "%s", tg_last_error());
  /* a text that is not NUL-terminated is never read past its length */
  char unterminated[4] = {'[', '1', ',', '2'};
  CHECK_STATUS(tg_json_parse(unterminated, 4, "j", 100, &d), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "byte 104"), "%s", tg_last_error());
  /* builder escaping */
  tg_text b = {0};
  tg_json_append_string(&b, "a\"b\\c\n\x01\x7f\xc3\xa9");
  CHECK(!b.oom && strcmp(b.data, "\"a\\\"b\\\\c\\n\\u0001\\u007f\xc3\xa9\"") == 0);
  CHECK_OK(tg_json_parse(b.data, b.len, "j", 0, &d));
  CHECK(strcmp(tg_json_root(d)->str, "a\"b\\c\n\x01\x7f\xc3\xa9") == 0);
  tg_json_free(d);
  tg_text_free(&b);
  for (int i = 0; i < 100; i++) tg_text_printf(&b, "%d,", i);
  CHECK(b.len == 290 && strncmp(b.data, "0,1,2,", 6) == 0);
  tg_text_free(&b);
}

/* ---- safetensors ---- */

static void check_mixed(const tg_safetensors *f) {
  CHECK(tg_safetensors_count(f) == 5);
  const tg_tensor *t = tg_safetensors_find(f, "f");
  CHECK(t && t->dtype == TG_F32 && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3);
  for (int k = 0; t && k < 6; k++) CHECK(((const float *)t->data)[k] == (float)k * 0.5f - 1.25f);
  t = tg_safetensors_find(f, "i32");
  CHECK(t && t->dtype == TG_I32 && t->ndim == 1 && t->shape[0] == 4);
  for (int k = 0; t && k < 4; k++) CHECK(((const int32_t *)t->data)[k] == k * 1000003 - 7);
  t = tg_safetensors_find(f, "i64");
  CHECK(t && t->dtype == TG_I64 && t->shape[0] == 3 && ((uintptr_t)t->data % 8) == 0);
  CHECK(t && ((const int64_t *)t->data)[1] == 2000000000000001LL &&
        ((const int64_t *)t->data)[2] == -((int64_t)1 << 62));
  t = tg_safetensors_find(f, "scalar");
  CHECK(t && t->ndim == 0 && *(const float *)t->data == 3.5f);
  t = tg_safetensors_find(f, "empty");
  CHECK(t && t->ndim == 2 && t->shape[0] == 0 && t->shape[1] == 4);
  CHECK(tg_safetensors_find(f, "nope") == NULL && tg_safetensors_at(f, 5) == NULL);
  const char *m = tg_safetensors_meta(f, "written_by");
  CHECK(m && strcmp(m, "tickgrad") == 0);
  m = tg_safetensors_meta(f, "note");
  CHECK(m && strcmp(m, "quote \" backslash \\ newline \n tab \t unicode \xc3\xa9") == 0);
  CHECK(tg_safetensors_meta(f, "absent") == NULL);
}

static void test_safetensors_roundtrip(void) {
  const char *p = tmp_path("mixed.safetensors");
  CHECK_OK(save_mixed(p));
  tg_safetensors *f = NULL;
  CHECK_OK(tg_safetensors_load(p, &f));
  if (f) check_mixed(f);
  tg_safetensors_free(f);
  size_t len = 0;
  unsigned char *b = tg_test_read_file(p, &len);
  uint64_t h = 0;
  for (int k = 7; k >= 0; k--) h = (h << 8) | b[k];
  CHECK(h % 8 == 0 && 8 + h <= len && b[8] == '{');
  CHECK_OK(tg_safetensors_parse(b, len, "mixed", &f));
  if (f) check_mixed(f);
  tg_safetensors_free(f);
  free(b);

  /* bit patterns survive exactly: NaN payloads, -0, subnormals, infinities */
  uint32_t bits[6] = {0x7fc12345u, 0x80000000u, 0x00000001u, 0x7f800000u, 0xff800000u, 0x3f800001u};
  int64_t shape[1] = {6};
  tg_tensor t;
  tg_tensor_view(&t, "bits", tg_cpu(0), TG_F32, 1, shape, bits);
  p = tmp_path("bits.safetensors");
  CHECK_OK(tg_safetensors_save(p, 1, &t, 0, NULL));
  CHECK_OK(tg_safetensors_load(p, &f));
  CHECK(f && memcmp(tg_safetensors_find(f, "bits")->data, bits, sizeof bits) == 0);
  tg_safetensors_free(f);

  /* bad inputs to save create nothing */
  tg_tensor two[2] = {t, t};
  CHECK_STATUS(tg_safetensors_save(tmp_path("dup.safetensors"), 2, two, 0, NULL), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "'bits'") != NULL);
  tg_tensor dev = t;
  dev.device = tg_cuda(0);
  CHECK_STATUS(tg_safetensors_save(tmp_path("dev.safetensors"), 1, &dev, 0, NULL), TG_ERR_DEVICE);
  tg_kv badmeta = {"k", "\xff"};
  CHECK_STATUS(tg_safetensors_save(tmp_path("meta.safetensors"), 1, &t, 1, &badmeta), TG_ERR_INVALID);
  CHECK(access(tmp_path("dup.safetensors"), F_OK) != 0 && access(tmp_path("meta.safetensors"), F_OK) != 0);
  unlink(tmp_path("mixed.safetensors"));
  unlink(tmp_path("bits.safetensors"));
}

static void test_atomic_writes(void) {
  const char *p = tmp_path("atomic.safetensors");
  int temps = 0;
  int before = dir_count(&temps);
  CHECK_OK(save_mixed(p));
  CHECK(dir_count(&temps) == before + 1 && temps == 0);
  size_t len1 = 0, len2 = 0;
  unsigned char *old = tg_test_read_file(p, &len1);
  /* overwrite with different content: the new file replaces the old one whole */
  float v = 1.0f;
  tg_tensor t;
  tg_tensor_view(&t, "v", tg_cpu(0), TG_F32, 0, NULL, &v);
  CHECK_OK(tg_safetensors_save(p, 1, &t, 0, NULL));
  unsigned char *now = tg_test_read_file(p, &len2);
  CHECK(len2 != len1 && dir_count(&temps) == before + 1 && temps == 0);
  free(now);
  CHECK_OK(save_mixed(p));
  /* a failing save leaves the old file as it was and no temp file behind */
  CHECK_STATUS(tg_safetensors_save(p, 1, NULL, 0, NULL), TG_ERR_INVALID);
  const char *sub = tmp_path("a_directory");
  mkdir(sub, 0755);
  CHECK_STATUS(tg_safetensors_save(sub, 1, &t, 0, NULL), TG_ERR_IO); /* rename onto a folder fails */
  CHECK_MSG(strstr(tg_last_error(), "a_directory") != NULL, "%s", tg_last_error());
  CHECK_STATUS(tg_safetensors_save(tmp_path("no/such/folder.safetensors"), 1, &t, 0, NULL), TG_ERR_IO);
  now = tg_test_read_file(p, &len2);
  CHECK(now && len2 == len1 && memcmp(now, old, len1) == 0);
  CHECK(dir_count(&temps) == before + 2 && temps == 0);
  free(now);
  free(old);
  rmdir(sub);
  unlink(p);
}

static void test_truncation_fuzz(void) {
  const char *p = tmp_path("trunc.safetensors");
  CHECK_OK(save_mixed(p));
  size_t len = 0;
  unsigned char *b = tg_test_read_file(p, &len);
  int errors = 0, formats = 0;
  for (size_t n = 0; n < len; n++) {
    /* an exact-size copy, so ASan sees any read past the truncated end */
    unsigned char *c = malloc(n ? n : 1);
    memcpy(c, b, n);
    tg_safetensors *f = NULL;
    tg_status st = tg_safetensors_parse(c, n, "trunc", &f);
    errors += st != TG_OK;
    formats += st == TG_ERR_FORMAT;
    CHECK(st != TG_OK || f != NULL);
    tg_safetensors_free(f);
    free(c);
  }
  CHECK_MSG(errors == (int)len && formats == (int)len, "%d of %zu truncations failed (%d as format)",
            errors, len, formats);
  /* the same through a file */
  write_bytes(p, b, len - 1);
  tg_safetensors *f = NULL;
  CHECK_STATUS(tg_safetensors_load(p, &f), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), p) != NULL, "%s", tg_last_error());
  write_bytes(p, b, 5);
  CHECK_STATUS(tg_safetensors_load(p, &f), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "byte 0"), "%s", tg_last_error());
  CHECK_STATUS(tg_safetensors_load(tmp_path("missing.safetensors"), &f), TG_ERR_IO);
  free(b);
  unlink(p);
}

static void test_corruption_fuzz(void) {
  const char *p = tmp_path("corrupt.safetensors");
  CHECK_OK(save_mixed(p));
  size_t len = 0;
  unsigned char *b = tg_test_read_file(p, &len);
  uint64_t h = 0;
  for (int k = 7; k >= 0; k--) h = (h << 8) | b[k];
  const unsigned char vals[] = {'{', '}', '[', ']', '"', '9', '0', '-', ',', ':', '\\', ' ', 'e', 0x00, 0xff, 0x80, 0xc3};
  int ok = 0, bad = 0, wrong_status = 0;
  unsigned char *c = malloc(len);
  for (size_t at = 0; at < 8 + h; at++) {
    for (size_t v = 0; v < sizeof vals; v++) {
      memcpy(c, b, len);
      c[at] = vals[v];
      tg_safetensors *f = NULL;
      tg_status st = tg_safetensors_parse(c, len, "corrupt", &f);
      if (st == TG_OK) {
        ok++;
        /* whatever parsed must be readable in full */
        double sink = 0;
        for (int i = 0; i < tg_safetensors_count(f); i++) {
          const tg_tensor *t = tg_safetensors_at(f, i);
          const unsigned char *d = t->data;
          for (size_t k = 0; k < tg_nbytes(t); k++) sink += d[k];
        }
        (void)sink;
      } else {
        bad++;
        if (st != TG_ERR_FORMAT && st != TG_ERR_UNSUPPORTED) wrong_status++;
      }
      tg_safetensors_free(f);
    }
  }
  CHECK(bad > 0 && wrong_status == 0);
  printf("header corruption: %d parsed, %d rejected\n", ok, bad);
  /* random multi-byte corruption anywhere in the file */
  wrong_status = 0;
  for (uint64_t it = 0; it < 3000; it++) {
    memcpy(c, b, len);
    int flips = 1 + (int)(tg_rng_uniform(g_seed, 5, it * 8) * 4);
    for (int k = 0; k < flips; k++) {
      size_t at = (size_t)(tg_rng_uniform(g_seed, 5, it * 8 + 1 + (uint64_t)k) * (float)len) % len;
      c[at] = (unsigned char)(tg_rng_uniform(g_seed, 6, it * 8 + (uint64_t)k) * 256.0f);
    }
    tg_safetensors *f = NULL;
    tg_status st = tg_safetensors_parse(c, len, "random", &f);
    if (st != TG_OK && st != TG_ERR_FORMAT && st != TG_ERR_UNSUPPORTED) wrong_status++;
    tg_safetensors_free(f);
  }
  CHECK(wrong_status == 0);
  free(c);
  free(b);
  unlink(p);
}

static void test_format_errors(void) {
  unsigned char data[64] = {0};
  struct {
    const char *header;
    size_t data_len;
    tg_status want;
    const char *words[2];
  } cases[] = {
      {"[]", 0, TG_ERR_FORMAT, {"JSON object", "byte 8"}},
      {"{\"x\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, TG_ERR_FORMAT, {"'x'", "dtype"}},
      {"{\"x\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, TG_ERR_FORMAT, {"'x'", "shape"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, TG_ERR_FORMAT, {"'x'", "data_offsets"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, TG_ERR_FORMAT, {"'x'", "needs 8 bytes"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, TG_ERR_FORMAT, {"cover 4", "8"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,8]}}", 4, TG_ERR_FORMAT, {"'x'", "run past"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, TG_ERR_FORMAT, {"'x'", "before"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
       "\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[2,6]}}", 8, TG_ERR_FORMAT, {"'y'", "overlaps tensor 'x'"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, TG_ERR_FORMAT, {"'x'", "unused"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, TG_ERR_FORMAT, {"'x'", "7 dimensions"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, TG_ERR_FORMAT, {"'x'", ">= 0"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", 4, TG_ERR_FORMAT, {"'x'", "integers"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}", 4, TG_ERR_FORMAT, {"'x'", "overflows 64 bits"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"extra\":1}}", 4, TG_ERR_FORMAT, {"'x'", "unknown field \"extra\""}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
       "\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, TG_ERR_FORMAT, {"duplicate key \"x\"", "byte "}},
      {"{\"x\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, TG_ERR_FORMAT, {"'x'", "dtype must be a string"}},
      {"{\"x\":[1]}", 0, TG_ERR_FORMAT, {"'x'", "object"}},
      {"{\"__metadata__\":{\"k\":1}}", 0, TG_ERR_FORMAT, {"__metadata__", "\"k\""}},
      {"{\"__metadata__\":[]}", 0, TG_ERR_FORMAT, {"__metadata__", "byte 24"}},
      {"{\"\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, TG_ERR_FORMAT, {"empty name", "byte 9"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},}", 4, TG_ERR_FORMAT, {"byte 62", "key"}},
      {"{\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, TG_ERR_UNSUPPORTED, {"'h'", "F16"}},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
       "\"d\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[4,12]}}", 12, TG_ERR_UNSUPPORTED, {"'d'", "F64"}},
      {"{\"b\":{\"dtype\":\"U16\",\"shape\":[3],\"data_offsets\":[0,6]}}", 6, TG_ERR_UNSUPPORTED, {"'b'", "U16"}},
      {"{\"q\":{\"dtype\":\"Q7\",\"shape\":[3],\"data_offsets\":[0,6]}}", 6, TG_ERR_UNSUPPORTED, {"'q'", "Q7"}},
      /* a format error beats an unsupported dtype */
      {"{\"h\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,4]}}", 4, TG_ERR_FORMAT, {"'h'", "needs 6 bytes"}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tg_safetensors *f = NULL;
    tg_status st = parse_text(cases[i].header, data, cases[i].data_len, &f);
    CHECK_MSG(st == cases[i].want, "case %zu: got %s: %s", i, tg_status_name(st), tg_last_error());
    for (int w = 0; w < 2; w++)
      CHECK_MSG(strstr(tg_last_error(), cases[i].words[w]) && strstr(tg_last_error(), "crafted"),
                "case %zu: want '%s' in: %s", i, cases[i].words[w], tg_last_error());
    CHECK(f == NULL);
  }
  /* header length past the end of the file */
  size_t len;
  unsigned char *b = make_file("{}", NULL, 0, &len);
  b[0] = 200;
  tg_safetensors *f = NULL;
  CHECK_STATUS(tg_safetensors_parse(b, len, "crafted", &f), TG_ERR_FORMAT);
  CHECK_MSG(strstr(tg_last_error(), "byte 0") && strstr(tg_last_error(), "200"), "%s", tg_last_error());
  b[0] = 2;
  b[7] = 0x80;
  CHECK_STATUS(tg_safetensors_parse(b, len, "crafted", &f), TG_ERR_FORMAT);
  free(b);
  /* valid oddities: an empty file, an unpadded header, a misaligned I64, a long name */
  CHECK_OK(parse_text("{}", NULL, 0, &f));
  CHECK(f && tg_safetensors_count(f) == 0);
  tg_safetensors_free(f);
  int64_t vals[2] = {0, 0};
  float one = 1.0f;
  int64_t big = -1234567890123LL;
  memcpy(data, &one, 4);
  memcpy(data + 4, &big, 8);
  (void)vals;
  CHECK_OK(parse_text("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                      "\"y\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[4,12]}}",
                      data, 12, &f));
  const tg_tensor *y = f ? tg_safetensors_find(f, "y") : NULL;
  CHECK(y && (uintptr_t)y->data % 8 == 0 && *(const int64_t *)y->data == big);
  CHECK(f && *(const float *)tg_safetensors_find(f, "x")->data == 1.0f);
  tg_safetensors_free(f);
  const char *longname = "a_really_long_tensor_name_that_is_longer_than_sixty_three_bytes_in_total";
  char hdr[256];
  snprintf(hdr, sizeof hdr, "{\"%s\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", longname);
  CHECK_OK(parse_text(hdr, data, 4, &f));
  const tg_tensor *ln = f ? tg_safetensors_find(f, longname) : NULL;
  CHECK(ln && strlen(ln->name) == TG_NAME_MAX - 1 && strncmp(ln->name, longname, TG_NAME_MAX - 1) == 0);
  tg_safetensors_free(f);
}

/* ---- checkpoints ---- */

static void test_store_roundtrip(void) {
  const char *p = tmp_path("weights.safetensors");
  tg_store *a = make_store(g_seed, 3, 1, 0);
  tg_store *b = make_store(g_seed + 1, 3, 1, 0);
  int temps;
  int before = dir_count(&temps);
  CHECK_OK(tg_store_save(a, p));
  CHECK(dir_count(&temps) == before + 1 && temps == 0);
  CHECK(memcmp(tg_store_values(a), tg_store_values(b), tg_store_numel(a) * sizeof(float)) != 0);
  CHECK_OK(tg_store_load(b, p));
  CHECK(memcmp(tg_store_values(a), tg_store_values(b), tg_store_numel(a) * sizeof(float)) == 0);
  tg_safetensors *f = NULL;
  CHECK_OK(tg_safetensors_load(p, &f));
  CHECK(f && strcmp(tg_safetensors_meta(f, "format"), "tickgrad-weights") == 0 &&
        strcmp(tg_safetensors_meta(f, "version"), "1") == 0);
  tg_safetensors_free(f);

  /* mismatches: named in the message, nothing changes */
  struct {
    int rows, with_b, with_c;
    const char *words[2];
  } cases[] = {
      {3, 1, 1, {"missing tensor 'extra.c'", "nothing was loaded"}},
      {3, 0, 0, {"extra tensor 'layer.b'", "nothing was loaded"}},
      {5, 1, 0, {"'layer.w'", "[3, 4] in the file, [5, 4]"}},
      {5, 0, 1, {"missing tensor 'extra.c'", "extra tensor 'layer.b'"}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tg_store *c = make_store(g_seed + 2, cases[i].rows, cases[i].with_b, cases[i].with_c);
    size_t n = tg_store_numel(c);
    float *copy = malloc(n * sizeof(float));
    memcpy(copy, tg_store_values(c), n * sizeof(float));
    CHECK_STATUS(tg_store_load(c, p), TG_ERR_SHAPE);
    for (int w = 0; w < 2; w++)
      CHECK_MSG(strstr(tg_last_error(), cases[i].words[w]) != NULL, "case %zu: want '%s' in: %s", i,
                cases[i].words[w], tg_last_error());
    CHECK(memcmp(copy, tg_store_values(c), n * sizeof(float)) == 0);
    free(copy);
    tg_store_free(c);
  }
  /* an I32 tensor where a parameter is expected */
  int32_t iv[12] = {0};
  float bv[4] = {0};
  int64_t ws[2] = {3, 4}, bs[1] = {4};
  tg_tensor t[2];
  tg_tensor_view(&t[0], "layer.w", tg_cpu(0), TG_I32, 2, ws, iv);
  tg_tensor_view(&t[1], "layer.b", tg_cpu(0), TG_F32, 1, bs, bv);
  CHECK_OK(tg_safetensors_save(tmp_path("i32w.safetensors"), 2, t, 0, NULL));
  CHECK_STATUS(tg_store_load(b, tmp_path("i32w.safetensors")), TG_ERR_SHAPE);
  CHECK_MSG(strstr(tg_last_error(), "'layer.w' is i32"), "%s", tg_last_error());
  CHECK(memcmp(tg_store_values(a), tg_store_values(b), tg_store_numel(a) * sizeof(float)) == 0);
  /* a file without tickgrad metadata (another tool's) loads when names and shapes match */
  t[0].dtype = TG_F32;
  CHECK_OK(tg_safetensors_save(tmp_path("i32w.safetensors"), 2, t, 0, NULL));
  CHECK_OK(tg_store_load(b, tmp_path("i32w.safetensors")));
  CHECK(tg_store_values(b)[0] == 0.0f);
  unlink(tmp_path("i32w.safetensors"));
  unlink(p);
  tg_store_free(a);
  tg_store_free(b);
}

static void test_train_state(void) {
  const char *wp = tmp_path("run.safetensors"), *sp = tmp_path("run.state.safetensors");
  tg_store *a = make_store(g_seed, 3, 1, 0);
  tg_optim_config c = tg_optim_defaults(TG_ADAMW);
  c.lr = 0.01f;
  c.schedule = (tg_lr_schedule){TG_LR_COSINE, 2, 20, 0.1f};
  c.clip_norm = 2.0f;
  tg_optim *oa = NULL;
  CHECK_OK(tg_optim_new(a, &c, &oa));
  for (uint64_t r = 0; r < 3; r++) {
    fill_grads(a, r);
    CHECK_OK(tg_optim_step(oa));
  }
  tg_train_state st = {3, 0xfedcba9876543210ull, ((uint64_t)1 << 63) + 5, 2, 12345};
  CHECK_OK(tg_store_save(a, wp));
  CHECK_OK(tg_train_state_save(sp, oa, &st));
  int temps;
  dir_count(&temps);
  CHECK(temps == 0);
  tg_safetensors *f = NULL;
  CHECK_OK(tg_safetensors_load(sp, &f));
  CHECK(f && tg_safetensors_count(f) == 2 && strcmp(tg_safetensors_meta(f, "optimizer"), "adamw") == 0 &&
        strcmp(tg_safetensors_meta(f, "rng_offset"), "9223372036854775813") == 0);
  tg_safetensors_free(f);

  /* resume into a fresh store and optimizer */
  tg_store *b = make_store(g_seed + 9, 3, 1, 0);
  tg_optim *ob = NULL;
  CHECK_OK(tg_optim_new(b, &c, &ob));
  tg_train_state got;
  memset(&got, 0, sizeof got);
  CHECK_OK(tg_store_load(b, wp));
  CHECK_OK(tg_train_state_load(sp, ob, &got));
  CHECK(got.step == 3 && got.rng_seed == st.rng_seed && got.rng_offset == st.rng_offset &&
        got.epoch == 2 && got.cursor == 12345);
  CHECK(tg_optim_steps(ob) == 3);
  size_t n = tg_store_numel(a);
  for (int k = 0; k < 2; k++)
    CHECK(memcmp(tg_optim_state(oa, k, NULL), tg_optim_state(ob, k, NULL), n * sizeof(float)) == 0);
  /* the resumed run continues exactly like the uninterrupted one */
  for (uint64_t r = 3; r < 6; r++) {
    fill_grads(a, r);
    fill_grads(b, r);
    CHECK_OK(tg_optim_step(oa));
    CHECK_OK(tg_optim_step(ob));
  }
  CHECK(memcmp(tg_store_values(a), tg_store_values(b), n * sizeof(float)) == 0);
  CHECK(tg_optim_last_lr(oa) == tg_optim_last_lr(ob));

  /* refusals leave the optimizer unchanged */
  float *m0 = malloc(n * sizeof(float));
  memcpy(m0, tg_optim_state(ob, 0, NULL), n * sizeof(float));
  tg_optim_config ca = tg_optim_defaults(TG_ADAM);
  tg_optim *adam = NULL;
  CHECK_OK(tg_optim_new(b, &ca, &adam));
  CHECK_STATUS(tg_train_state_load(sp, adam, NULL), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "adamw") && strstr(tg_last_error(), "adam"), "%s", tg_last_error());
  CHECK(tg_optim_steps(adam) == 0);
  tg_optim_free(adam);
  tg_store *other = make_store(g_seed, 5, 1, 0);
  tg_optim *oo = NULL;
  CHECK_OK(tg_optim_new(other, &c, &oo));
  CHECK_STATUS(tg_train_state_load(sp, oo, NULL), TG_ERR_SHAPE);
  CHECK_MSG(strstr(tg_last_error(), "exp_avg"), "%s", tg_last_error());
  CHECK(tg_optim_steps(oo) == 0);
  tg_optim_free(oo);
  tg_store_free(other);
  CHECK_STATUS(tg_train_state_load(wp, ob, NULL), TG_ERR_FORMAT); /* a weights file */
  CHECK_STATUS(tg_store_load(b, sp), TG_ERR_FORMAT);              /* a state file as weights */
  /* hand-made state files with bad numbers */
  const char *bad_keys[] = {"step", "rng_seed", "epoch", "cursor", "optim_step", "rng_offset"};
  const char *bad_vals[] = {"12x", "-1", "", "99999999999999999999", " 1", "1.5"};
  for (int i = 0; i < 6; i++) {
    tg_kv meta[9] = {{"format", "tickgrad-train-state"}, {"version", "1"}, {"optimizer", "adamw"},
                     {"optim_step", "3"}, {"step", "3"}, {"rng_seed", "1"}, {"rng_offset", "2"},
                     {"epoch", "0"}, {"cursor", "0"}};
    for (int k = 0; k < 9; k++)
      if (strcmp(meta[k].key, bad_keys[i]) == 0) meta[k].value = bad_vals[i];
    tg_tensor t[2];
    int64_t shape[1] = {(int64_t)n};
    tg_tensor_view(&t[0], "exp_avg", tg_cpu(0), TG_F32, 1, shape, m0);
    tg_tensor_view(&t[1], "exp_avg_sq", tg_cpu(0), TG_F32, 1, shape, m0);
    const char *bp = tmp_path("bad.state.safetensors");
    CHECK_OK(tg_safetensors_save(bp, 2, t, 9, meta));
    int64_t steps = tg_optim_steps(ob);
    float *before = malloc(n * sizeof(float));
    memcpy(before, tg_optim_state(ob, 1, NULL), n * sizeof(float));
    CHECK_STATUS(tg_train_state_load(bp, ob, &got), TG_ERR_FORMAT);
    CHECK_MSG(strstr(tg_last_error(), bad_keys[i]), "want '%s' in: %s", bad_keys[i], tg_last_error());
    CHECK(tg_optim_steps(ob) == steps &&
          memcmp(before, tg_optim_state(ob, 1, NULL), n * sizeof(float)) == 0);
    free(before);
    unlink(bp);
  }
  free(m0);

  /* SGD with momentum (one buffer) and plain SGD (none) round-trip too */
  for (int mom = 0; mom < 2; mom++) {
    tg_optim_config cs = tg_optim_defaults(TG_SGD);
    cs.momentum = mom ? 0.9f : 0.0f;
    tg_optim *s1 = NULL, *s2 = NULL;
    CHECK_OK(tg_optim_new(a, &cs, &s1));
    CHECK_OK(tg_optim_new(b, &cs, &s2));
    fill_grads(a, 50);
    CHECK_OK(tg_optim_step(s1));
    CHECK_OK(tg_optim_step(s1));
    tg_train_state zs = {2, 1, 2, 0, 7};
    CHECK_OK(tg_train_state_save(sp, s1, &zs));
    CHECK_OK(tg_train_state_load(sp, s2, &got));
    CHECK(tg_optim_steps(s2) == 2 && got.cursor == 7);
    CHECK(tg_optim_state_count(s2) == mom);
    if (mom) CHECK(memcmp(tg_optim_state(s1, 0, NULL), tg_optim_state(s2, 0, NULL), n * sizeof(float)) == 0);
    tg_optim_free(s1);
    tg_optim_free(s2);
  }
  tg_optim_free(oa);
  tg_optim_free(ob);
  tg_store_free(a);
  tg_store_free(b);
  unlink(wp);
  unlink(sp);
}

/* ---- interop with PyTorch's safetensors (see reference/safetensors_interop.py) ---- */

static void test_torch_interop(void) {
  /* ctest sets TG_SOURCE_DIR; run by hand from a build folder inside the checkout, ".." works */
  const char *src = getenv("TG_SOURCE_DIR");
  if (!src) src = access("reference/data", F_OK) == 0 ? "." : "..";
  char path[1024];
  snprintf(path, sizeof path, "%s/reference/data/torch_saved.safetensors", src);
  tg_safetensors *f = NULL;
  CHECK_OK(tg_safetensors_load(path, &f));
  if (!f) return;
  CHECK(tg_safetensors_count(f) == 6);
  const char *m = tg_safetensors_meta(f, "source");
  CHECK(m && strcmp(m, "torch") == 0);
  const tg_tensor *t = tg_safetensors_find(f, "a");
  CHECK(t && t->dtype == TG_F32 && t->ndim == 2 && t->shape[0] == 3 && t->shape[1] == 4);
  for (int k = 0; t && k < 12; k++) CHECK(((const float *)t->data)[k] == (float)k / 4.0f - 1.0f);
  t = tg_safetensors_find(f, "b");
  CHECK(t && t->dtype == TG_I32 && t->ndim == 1 && t->shape[0] == 5);
  for (int k = 0; t && k < 5; k++) CHECK(((const int32_t *)t->data)[k] == k - 3);
  t = tg_safetensors_find(f, "c");
  CHECK(t && t->dtype == TG_I64 && t->shape[0] == 4);
  for (int k = 0; t && k < 4; k++) CHECK(((const int64_t *)t->data)[k] == k * 3000000000000LL - 5);
  t = tg_safetensors_find(f, "s");
  CHECK(t && t->ndim == 0 && *(const float *)t->data == 2.5f);
  t = tg_safetensors_find(f, "e");
  CHECK(t && t->ndim == 2 && t->shape[0] == 0 && t->shape[1] == 3);
  t = tg_safetensors_find(f, "n.dotted.name");
  CHECK(t && t->ndim == 3 && t->shape[0] == 1 && t->shape[1] == 2 && t->shape[2] == 3);
  for (int k = 0; t && k < 6; k++) CHECK(((const float *)t->data)[k] == (float)k * -0.125f);
  tg_safetensors_free(f);
  snprintf(path, sizeof path, "%s/reference/data/torch_f16.safetensors", src);
  CHECK_STATUS(tg_safetensors_load(path, &f), TG_ERR_UNSUPPORTED);
  CHECK_MSG(strstr(tg_last_error(), "'h'") && strstr(tg_last_error(), "F16"), "%s", tg_last_error());
}

/* With TG_INTEROP_DIR set, leaves files there for reference/safetensors_interop.py to read. */
static void interop_write(void) {
  const char *dir = getenv("TG_INTEROP_DIR");
  if (!dir) return;
  char path[1024];
  snprintf(path, sizeof path, "%s/tickgrad_tensors.safetensors", dir);
  CHECK_OK(save_mixed(path));
  tg_store *s = make_store(1, 3, 1, 0);
  tg_param_info w = tg_store_param(s, tg_store_find(s, "layer.w"));
  tg_param_info b = tg_store_param(s, tg_store_find(s, "layer.b"));
  for (size_t k = 0; k < w.numel; k++) tg_store_values(s)[w.offset + k] = (float)k / 8.0f - 1.0f;
  for (size_t k = 0; k < b.numel; k++) tg_store_values(s)[b.offset + k] = (float)k / 16.0f;
  snprintf(path, sizeof path, "%s/tickgrad_weights.safetensors", dir);
  CHECK_OK(tg_store_save(s, path));
  tg_store_free(s);
  printf("interop files written to %s\n", dir);
}

int main(void) {
  g_seed = tg_test_seed(7);
  snprintf(g_dir, sizeof g_dir, "/tmp/tg_checkpoint_XXXXXX");
  if (!mkdtemp(g_dir)) return tg_test_skip("cannot create a temporary folder");
  test_json();
  test_safetensors_roundtrip();
  test_atomic_writes();
  test_truncation_fuzz();
  test_corruption_fuzz();
  test_format_errors();
  test_store_roundtrip();
  test_train_state();
  test_torch_interop();
  interop_write();
  int left = 0, temps = 0;
  left = dir_count(&temps);
  CHECK_MSG(left == 0, "%d files left in %s", left, g_dir);
  dir_remove_all(g_dir);
  return tg_test_finish();
}
