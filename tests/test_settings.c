/* The settings engine (every type from text, ranges, JSON round trip, unknown keys, the resume diff) and the number parser. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "base/alloc.h"
#include "base/json.h"
#include "base/parse.h"
#include "base/settings.h"
#include "support/check.h"
#include "tickgrad/train.h"

typedef struct cfg {
  double d;
  float f;
  int i;
  int64_t l;
  uint64_t u;
  int b;
  char s[8];
  int e;
  int nq;
  float q[4];
  int nw;
  int w[3];
  int np;
  char p[2][16];
  int threads;
  int only_a, only_b;
} cfg;

#define OFF(m) offsetof(cfg, m)
static const char *const COLOURS[] = {"red", "green", "blue", NULL};
static const tg_setting ROWS[] = {
    {.key = "d", .type = TG_SET_DOUBLE, .off = OFF(d), .lo = -1, .hi = 1, .help = "a double"},
    {.key = "f", .type = TG_SET_FLOAT, .off = OFF(f), .lo = 0, .hi = 1, .flags = TG_SET_LO_OPEN, .help = "a float"},
    {.key = "int_value", .type = TG_SET_INT, .off = OFF(i), .lo = 1, .hi = 10},
    {.key = "l", .type = TG_SET_INT64, .off = OFF(l), .lo = 0, .hi = 1e15},
    {.key = "u", .type = TG_SET_UINT64, .off = OFF(u)},
    {.key = "b", .type = TG_SET_BOOL, .off = OFF(b)},
    {.key = "s", .type = TG_SET_STRING, .off = OFF(s), .size = 8},
    {.key = "colour", .flag = "--hue", .type = TG_SET_ENUM, .off = OFF(e), .names = COLOURS},
    {.key = "q", .type = TG_SET_NUMS, .off = OFF(q), .lo = 0, .hi = 1, .flags = TG_SET_LO_OPEN | TG_SET_HI_OPEN | TG_SET_INCREASING,
     .elem = TG_SET_FLOAT, .count_off = OFF(nq), .min_n = 1, .max_n = 4},
    {.key = "w", .type = TG_SET_NUMS, .off = OFF(w), .lo = 1, .hi = 100, .elem = TG_SET_INT, .count_off = OFF(nw), .max_n = 3},
    {.key = "p", .type = TG_SET_STRS, .off = OFF(p), .size = 16, .count_off = OFF(np), .max_n = 2},
    {.key = "threads", .type = TG_SET_INT, .off = OFF(threads), .lo = 0, .hi = 64, .flags = TG_SET_RESUMABLE},
    {.key = "sa.x", .type = TG_SET_INT, .off = OFF(only_a), .lo = 0, .hi = 9, .only = 1},
    {.key = "sb.x", .type = TG_SET_INT, .off = OFF(only_b), .lo = 0, .hi = 9, .only = 2},
};
static const tg_settings T = {"test config", ROWS, (int)(sizeof ROWS / sizeof ROWS[0]), 0, 0, NULL};

static cfg defaults(void) {
  cfg c;
  memset(&c, 0, sizeof c);
  c.f = 0.5f;
  c.i = 1;
  c.nq = 1;
  c.q[0] = 0.5f;
  return c;
}

static int said(const char *a, const char *b) {
  const char *m = tg_last_error();
  return strstr(m, a) != NULL && (!b || strstr(m, b) != NULL);
}

static void test_types_from_text(void) {
  cfg c = defaults();
  CHECK_OK(tg_settings_set(&T, &c, "d", "-0.25"));
  CHECK_OK(tg_settings_set(&T, &c, "f", "0.1"));
  CHECK_OK(tg_settings_set(&T, &c, "int_value", "1e1")); /* a whole number, however written */
  CHECK_OK(tg_settings_set(&T, &c, "l", "1000000000000000"));
  CHECK_OK(tg_settings_set(&T, &c, "u", "18446744073709551615"));
  CHECK_OK(tg_settings_set(&T, &c, "b", "true"));
  CHECK_OK(tg_settings_set(&T, &c, "s", "abc"));
  CHECK_OK(tg_settings_set(&T, &c, "colour", "blue"));
  CHECK_OK(tg_settings_set(&T, &c, "q", "0.1,0.5,0.9"));
  CHECK_OK(tg_settings_set(&T, &c, "w", "64,32"));
  CHECK_OK(tg_settings_set(&T, &c, "p", "x.csv"));
  CHECK_OK(tg_settings_set(&T, &c, "p", "y dir/*.csv"));
  CHECK(c.d == -0.25 && c.f == 0.1f && c.i == 10 && c.l == 1000000000000000LL && c.u == UINT64_MAX && c.b == 1);
  CHECK(strcmp(c.s, "abc") == 0 && c.e == 2 && c.nq == 3 && c.q[2] == 0.9f && c.nw == 2 && c.w[1] == 32);
  CHECK(c.np == 2 && strcmp(c.p[1], "y dir/*.csv") == 0);
  CHECK_OK(tg_settings_set(&T, &c, "w", "none"));
  CHECK(c.nw == 0);
  CHECK_OK(tg_settings_check(&T, &c));
  /* flags: derived (--int-value), given (--hue), per variant */
  CHECK_OK(tg_settings_set_flag(&T, &c, "--int-value", "3", 1, "variant a"));
  CHECK_OK(tg_settings_set_flag(&T, &c, "--hue", "red", 1, "variant a"));
  CHECK_OK(tg_settings_set_flag(&T, &c, "--x", "4", 2, "variant b"));
  CHECK(c.i == 3 && c.e == 0 && c.only_b == 4 && c.only_a == 0);
  CHECK(tg_settings_flag_known(&T, "--x") && !tg_settings_flag_known(&T, "--colour"));
  CHECK_STATUS(tg_settings_set_flag(&T, &c, "--colour", "red", 1, "variant a"), TG_ERR_INVALID);
  CHECK(said("unknown flag '--colour'", NULL));
}

static void test_errors(void) {
  cfg c = defaults();
  /* both ends of a closed range are allowed, one past them is not, and the error names the range */
  CHECK_OK(tg_settings_set(&T, &c, "d", "-1"));
  CHECK_OK(tg_settings_set(&T, &c, "d", "1"));
  CHECK_STATUS(tg_settings_set(&T, &c, "d", "1.5"), TG_ERR_INVALID);
  CHECK_MSG(said("test config: d (set) is 1.5", "want a number in [-1, 1] (a double)"), "%s", tg_last_error());
  CHECK_OK(tg_settings_set(&T, &c, "int_value", "10"));
  CHECK_STATUS(tg_settings_set(&T, &c, "int_value", "11"), TG_ERR_INVALID);
  CHECK_MSG(said("int_value (set) is 11", "want a whole number in [1, 10]"), "%s", tg_last_error());
  CHECK_STATUS(tg_settings_set(&T, &c, "int_value", "2.5"), TG_ERR_INVALID);
  CHECK(said("2.5", "whole number"));
  /* an open end is said so */
  CHECK_OK(tg_settings_set(&T, &c, "f", "1"));
  CHECK_STATUS(tg_settings_set(&T, &c, "f", "0"), TG_ERR_INVALID);
  CHECK_MSG(said("f (set) is 0", "want a number in (0, 1]"), "%s", tg_last_error());
  CHECK_STATUS(tg_settings_set(&T, &c, "q", "0.5,0.1"), TG_ERR_INVALID);
  CHECK_MSG(said("0.1 at position 2", "(0, 1), each above the one before"), "%s", tg_last_error());
  CHECK_STATUS(tg_settings_set(&T, &c, "q", "0.1,1"), TG_ERR_INVALID);
  CHECK_STATUS(tg_settings_set(&T, &c, "q", "0.1,x"), TG_ERR_INVALID);
  CHECK(said("'0.1,x'", "separated by commas"));
  CHECK_STATUS(tg_settings_set(&T, &c, "q", "0.1,0.2,0.3,0.4,0.5"), TG_ERR_INVALID);
  CHECK(said("5 given", "want 1..4"));
  CHECK_STATUS(tg_settings_set(&T, &c, "w", "64,0"), TG_ERR_INVALID);
  CHECK_STATUS(tg_settings_set(&T, &c, "w", "64,1.5"), TG_ERR_INVALID);
  CHECK_STATUS(tg_settings_set(&T, &c, "lr", "1"), TG_ERR_INVALID);
  CHECK(said("test config: unknown setting 'lr'", NULL));
  CHECK_STATUS(tg_settings_set(&T, &c, "d", "fast"), TG_ERR_INVALID);
  CHECK(said("d (set)", "'fast' is not a number"));
  CHECK_STATUS(tg_settings_set(&T, &c, "d", "inf"), TG_ERR_INVALID);
  CHECK_STATUS(tg_settings_set(&T, &c, "d", NULL), TG_ERR_INVALID);
  CHECK(said("needs a value", NULL));
  CHECK_STATUS(tg_settings_set(&T, &c, "u", "-1"), TG_ERR_INVALID);
  CHECK_STATUS(tg_settings_set(&T, &c, "u", "18446744073709551616"), TG_ERR_INVALID);
  CHECK_STATUS(tg_settings_set(&T, &c, "b", "yes"), TG_ERR_INVALID);
  CHECK_STATUS(tg_settings_set(&T, &c, "s", "12345678"), TG_ERR_INVALID); /* 8 bytes with its NUL: 7 fit */
  CHECK(said("longer than 7 bytes", NULL));
  CHECK_STATUS(tg_settings_set(&T, &c, "colour", "mauve"), TG_ERR_INVALID);
  CHECK_MSG(said("'mauve'", "want red, green or blue"), "%s", tg_last_error());
  CHECK_OK(tg_settings_set(&T, &c, "p", "1"));
  CHECK_OK(tg_settings_set(&T, &c, "p", "2"));
  CHECK_STATUS(tg_settings_set(&T, &c, "p", "3"), TG_ERR_INVALID);
  CHECK_STATUS(tg_settings_set_flag(&T, &c, "--x", "1", 4, "variant c"), TG_ERR_INVALID);
  CHECK_MSG(said("--x sets sb.x, which does not apply to variant c", NULL), "%s", tg_last_error());
  /* a struct filled by hand */
  c = defaults();
  c.i = 0;
  CHECK_STATUS(tg_settings_check(&T, &c), TG_ERR_INVALID);
  CHECK(said("int_value is 0", "[1, 10]"));
  c = defaults();
  c.nq = 0;
  CHECK_STATUS(tg_settings_check(&T, &c), TG_ERR_INVALID);
}

static void test_json(void) {
  cfg c = defaults(), d = defaults();
  CHECK_OK(tg_settings_set(&T, &c, "d", "0.1"));
  c.f = nextafterf(0.3f, 1.0f); /* needs 9 digits */
  c.l = 123456789012345;
  c.u = UINT64_MAX - 1;
  CHECK_OK(tg_settings_set(&T, &c, "s", "q\"t"));
  CHECK_OK(tg_settings_set(&T, &c, "q", "0.05,0.5,0.95"));
  CHECK_OK(tg_settings_set(&T, &c, "w", "7,8,9"));
  CHECK_OK(tg_settings_set(&T, &c, "p", "x.csv"));
  c.only_a = 3;
  c.b = 1;
  c.e = 1;
  char *j1 = tg_settings_to_json(&T, &c);
  CHECK(j1 && strstr(j1, "\"u\": \"18446744073709551614\"") && strstr(j1, "\"d\": 0.1,") && strstr(j1, "\"b\": true"));
  CHECK(j1 && strstr(j1, "\n  \"sa\": {\n    \"x\": 3\n  }") && strstr(j1, "\"colour\": \"green\""));
  CHECK_OK(tg_settings_apply_text(&T, &d, j1, strlen(j1), "round trip"));
  CHECK(memcmp(&c, &d, sizeof c) == 0); /* bitwise: every member, the padding zero in both */
  char *j2 = tg_settings_to_json(&T, &d);
  CHECK(j1 && j2 && strcmp(j1, j2) == 0);
  tg_free(j1);
  tg_free(j2);
  /* unknown keys name the key and the file; so do bad types and values */
  const char *bad[] = {"{\"frob\": 1}", "{\"sa\": {\"frob\": 1}}", "{\"d\": \"x\"}", "{\"int_value\": 2.5}", "{\"u\": 5}",
                       "{\"w\": [1, 200]}", "[1]", "{\"d\": 0.1,}"};
  const char *names[] = {"unknown setting 'frob'", "unknown setting 'sa.frob'", "d (cfg.json, byte 6) is string",
                         "int_value (cfg.json, byte 14)", "want a string of digits", "200 at position 2",
                         "want an object", "byte"};
  for (int k = 0; k < 8; k++) {
    d = defaults();
    CHECK_STATUS(tg_settings_apply_text(&T, &d, bad[k], strlen(bad[k]), "cfg.json"), TG_ERR_INVALID);
    CHECK_MSG(said(names[k], "cfg.json"), "'%s': %s", bad[k], tg_last_error());
  }
  /* a complete table wants every setting; its extra members are the caller's */
  static const char *const EXTRA[] = {"format", NULL};
  tg_settings full = {"full", ROWS, 2, 0, 1, EXTRA};
  const char *some = "{\"format\": \"x\", \"d\": 0.5}";
  CHECK_STATUS(tg_settings_apply_text(&full, &d, some, strlen(some), "f.json"), TG_ERR_INVALID);
  CHECK_MSG(said("f.json: \"f\" is missing", NULL), "%s", tg_last_error());
  const char *all = "{\"format\": \"x\", \"d\": 0.5, \"f\": 0.25}";
  CHECK_OK(tg_settings_apply_text(&full, &d, all, strlen(all), "f.json"));
  CHECK(d.d == 0.5 && d.f == 0.25f);
  /* fixed float digits */
  tg_settings nine = {"nine", ROWS + 1, 1, 9, 0, NULL};
  d.f = 0.1f;
  char *j3 = tg_settings_to_json(&nine, &d);
  CHECK(j3 && strcmp(j3, "{\n  \"f\": 0.100000001\n}\n") == 0);
  tg_free(j3);
}

static void test_diff_and_help(void) {
  cfg a = defaults(), b = defaults();
  CHECK(tg_settings_diff(&T, &a, &b) == NULL);
  b.threads = 8; /* may change on resume */
  CHECK(tg_settings_diff(&T, &a, &b) == NULL);
  CHECK_OK(tg_settings_set(&T, &b, "p", "x.csv"));
  const tg_setting *s = tg_settings_diff(&T, &a, &b);
  CHECK(s && strcmp(s->key, "p") == 0);
  b = a;
  b.q[0] = 0.25f;
  s = tg_settings_diff(&T, &a, &b);
  CHECK(s && strcmp(s->key, "q") == 0);
  b = a;
  b.u = 2;
  s = tg_settings_diff(&T, &a, &b);
  CHECK(s && strcmp(s->key, "u") == 0);
  FILE *f = tmpfile();
  tg_settings_help(&T, f);
  rewind(f);
  char text[4096];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  fclose(f);
  CHECK_MSG(strstr(text, "  --int-value N ") && strstr(text, "  --hue S ") && strstr(text, "  --d X ") && strstr(text, " a double\n"),
            "%s", text);
}

/* A value as flag text reads back as the same value (tg_settings_value_text, what the training rows' defaults use). */
static void test_value_text(void) {
  cfg a = defaults(), b = defaults();
  CHECK_OK(tg_settings_set(&T, &a, "q", "0.1,0.5,0.9"));
  CHECK_OK(tg_settings_set(&T, &a, "colour", "blue"));
  CHECK_OK(tg_settings_set(&T, &a, "b", "1"));
  CHECK_OK(tg_settings_set(&T, &a, "u", "18446744073709551615"));
  CHECK_OK(tg_settings_set(&T, &a, "d", "0.1"));
  CHECK_OK(tg_settings_set(&T, &a, "f", "0.1"));
  for (int i = 0; i < T.n; i++) {
    const tg_setting *s = &T.rows[i];
    tg_text t = {0};
    tg_settings_value_text(&T, &a, s, &t);
    const char *text = t.len ? t.data : "";
    if (s->type == TG_SET_STRS) {
      b.np = 0; /* STRS appends one per call: the defaults hold none here */
      CHECK(a.np == 0 && text[0] == '\0');
    } else {
      CHECK_MSG(tg_setting_set_text(&T, &b, s, text, "test") == TG_OK, "%s: '%s': %s", s->key, text, tg_last_error());
    }
    tg_text_free(&t);
  }
  CHECK(tg_settings_diff(&T, &a, &b) == NULL);
  tg_text t = {0};
  tg_settings_value_text(&T, &a, tg_settings_find(&T, "q"), &t);
  CHECK_MSG(t.len && strcmp(t.data, "0.1,0.5,0.9") == 0, "%s", t.data);
  tg_text_free(&t);
}

/* The training table as rows (tg_train_setting_get): every key once, flags the command knows, models in the model
 * table, and each default reading back as the flag gives it. */
static void test_train_rows(void) {
  int n = tg_train_setting_count(), every = 0, own[32] = {0};
  tg_train_setting_info r0;
  CHECK(n > 40);
  for (int i = 0; i < n; i++) {
    tg_train_setting_info r;
    CHECK_OK(tg_train_setting_get(i, &r));
    CHECK_MSG(r.key && r.help && r.type && r.arg && tg_train_flag_known(r.flag), "row %d", i);
    for (int j = 0; j < i; j++) {
      tg_train_setting_info o;
      CHECK_OK(tg_train_setting_get(j, &o));
      CHECK_MSG(strcmp(o.key, r.key) != 0, "%s twice", r.key);
    }
    CHECK(r.models >> tg_model_count() == 0);
    if (!r.models) every++;
    int kind = -1;
    for (int k = 0; k < tg_model_count(); k++)
      if (r.models & (1u << k)) {
        own[k]++;
        if (kind < 0) kind = k;
        char prefix[40];
        snprintf(prefix, sizeof prefix, "%s: ", tg_model_name((tg_model_kind)k));
        CHECK_MSG(strncmp(r.help, prefix, strlen(prefix)) == 0, "%s: %s", r.key, r.help);
      }
    CHECK((strcmp(r.type, "enum") == 0) == (r.names != NULL));
    if (kind >= 0) { /* a model's own row, from its table entry: one kind, its key under the kind's name */
      size_t len = strlen(tg_model_name((tg_model_kind)kind));
      CHECK_MSG((r.models & (r.models - 1)) == 0 && strncmp(r.key, tg_model_name((tg_model_kind)kind), len) == 0 &&
                    r.key[len] == '.', "%s: models %#x", r.key, r.models);
    }
    tg_train_config *c = tg_malloc(sizeof *c), *d = tg_malloc(sizeof *d);
    CHECK(c && d);
    if (!c || !d) return;
    *c = *d = tg_train_defaults(kind < 0 ? tg_model_default_kind() : (tg_model_kind)kind);
    if (strcmp(r.key, "data") == 0) CHECK(r.def[0] == '\0');
    else if (strcmp(r.key, "model") != 0)
      CHECK_MSG(tg_train_config_set_flag(d, r.flag, r.def) == TG_OK && memcmp(c, d, sizeof *c) == 0, "%s: '%s': %s",
                r.key, r.def, tg_last_error());
    tg_free(c);
    tg_free(d);
    if (strcmp(r.key, "lr") == 0)
      CHECK(strcmp(r.flag, "--lr") == 0 && r.has_range && strcmp(r.def, "0.001") == 0 && strcmp(r.type, "double") == 0);
    if (strcmp(r.key, "quantiles") == 0)
      CHECK(strcmp(r.def, "0.1,0.5,0.9") == 0 && r.lo_open && r.hi_open && r.increasing && r.max_n > 1);
    if (strcmp(r.key, "batch") == 0) /* every kind's default batch, from the table */
      for (int k = 0; k < tg_model_count(); k++) {
        char with[64];
        snprintf(with, sizeof with, "%d %s", tg_train_defaults((tg_model_kind)k).batch, tg_model_name((tg_model_kind)k));
        CHECK_MSG(strstr(r.help, tg_model_name((tg_model_kind)k)) && (k > 0 || strstr(r.help, with)), "batch: %s", r.help);
      }
    if (strcmp(r.key, "mamba2.n_layers") == 0) CHECK(strcmp(r.flag, "--layers") == 0 && strcmp(r.def, "2") == 0);
  }
  CHECK(every > 20);
  for (int k = 0; k < tg_model_count(); k++) CHECK_MSG(own[k] > 0, "model %d has no rows", k);
  CHECK_OK(tg_train_setting_get(0, &r0));
  char names[256], small[6];
  int need = tg_model_list(names, sizeof names, ", ", " or ");
  CHECK_MSG(strcmp(r0.key, "model") == 0 && strcmp(r0.help, names) == 0, "%s: '%s'", r0.key, r0.help);
  CHECK(strncmp(names, "tft, mamba2, ", 13) == 0 && strstr(names, " or ") != NULL);
  CHECK(tg_model_list(small, sizeof small, ", ", " or ") == need && strcmp(small, "tft, ") == 0); /* truncated */
  tg_train_setting_info r;
  CHECK_STATUS(tg_train_setting_get(n, &r), TG_ERR_INVALID);
  CHECK_STATUS(tg_train_setting_get(-1, &r), TG_ERR_INVALID);
}

static void test_parser(void) {
  double v;
  int64_t i;
  uint64_t u;
  CHECK_OK(tg_parse_double("2.5e-3", 0, 1, "x", &v));
  CHECK(v == 2.5e-3);
  CHECK_OK(tg_parse_double("0", 0, 1, "x", &v)); /* both ends inclusive */
  CHECK_OK(tg_parse_double("1", 0, 1, "x", &v));
  CHECK_STATUS(tg_parse_double("1.5", 0, 1, "gamma (--gamma)", &v), TG_ERR_INVALID);
  CHECK_MSG(said("gamma (--gamma): 1.5 is out of range; want a number in [0, 1]", NULL), "%s", tg_last_error());
  CHECK_STATUS(tg_parse_double("1.5x", 0, 10, "lr", &v), TG_ERR_INVALID); /* trailing junk */
  CHECK(said("lr: '1.5x' is not a number", NULL));
  CHECK_STATUS(tg_parse_double("", 0, 1, "lr", &v), TG_ERR_INVALID);
  CHECK_STATUS(tg_parse_double(NULL, 0, 1, "lr", &v), TG_ERR_INVALID);
  CHECK_STATUS(tg_parse_double(" 1", 0, 10, "lr", &v), TG_ERR_INVALID);
  CHECK_STATUS(tg_parse_double("nan", -INFINITY, INFINITY, "lr", &v), TG_ERR_INVALID);
  CHECK_STATUS(tg_parse_double("inf", -1e300, 1e300, "lr", &v), TG_ERR_INVALID);
  CHECK_STATUS(tg_parse_double("1e999", -1e300, 1e300, "lr", &v), TG_ERR_INVALID);
  CHECK_OK(tg_parse_double("-inf", -INFINITY, 0, "lr", &v)); /* an infinity where the range holds it */
  CHECK(v == -INFINITY);
  CHECK_OK(tg_parse_int64("-9223372036854775808", INT64_MIN, INT64_MAX, "n", &i));
  CHECK(i == INT64_MIN);
  CHECK_STATUS(tg_parse_int64("9223372036854775808", INT64_MIN, INT64_MAX, "n", &i), TG_ERR_INVALID); /* overflow */
  CHECK(said("n: 9223372036854775808 is out of range", NULL));
  CHECK_STATUS(tg_parse_int64("12a", 0, 100, "n", &i), TG_ERR_INVALID);
  CHECK_STATUS(tg_parse_int64("1.0", 0, 100, "n", &i), TG_ERR_INVALID);
  CHECK_STATUS(tg_parse_int64("", 0, 100, "n", &i), TG_ERR_INVALID);
  CHECK_STATUS(tg_parse_int64("-", 0, 100, "n", &i), TG_ERR_INVALID);
  CHECK_STATUS(tg_parse_int64("101", 0, 100, "--epochs", &i), TG_ERR_INVALID);
  CHECK(said("--epochs: 101 is out of range; want a whole number in [0, 100]", NULL));
  CHECK_OK(tg_parse_int64("100", 0, 100, "n", &i));
  CHECK_OK(tg_parse_uint64("18446744073709551615", "seed", &u));
  CHECK(u == UINT64_MAX);
  CHECK_STATUS(tg_parse_uint64("18446744073709551616", "seed", &u), TG_ERR_INVALID);
  CHECK_STATUS(tg_parse_uint64("-1", "seed", &u), TG_ERR_INVALID);
  CHECK_STATUS(tg_parse_uint64("+1", "seed", &u), TG_ERR_INVALID);
  CHECK_STATUS(tg_parse_uint64("1 ", "seed", &u), TG_ERR_INVALID);
}

int main(void) {
  test_types_from_text();
  test_errors();
  test_json();
  test_diff_and_help();
  test_value_text();
  test_train_rows();
  test_parser();
  return tg_test_finish();
}
