/* Covariates in the feature spec: col: carry-forward and warm-up, known: leads, static: checks, cat: vocabularies
 * fitted on training rows, errors naming columns, the stream's push_ex, causality and per-instrument split warm-ups. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "data/readers/timeconv.h"
#include "support/check.h"
#include "tickgrad/dataset.h"

#define STEP (60 * TG_NS_PER_S)

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* n steps of instruments 5 and 9 (a bar of each per minute: row 2i + j is instrument j's i-th bar). */
static void make_bars(tg_bars *b, int n) {
  tg_bars_init(b);
  tg_bars_reserve(b, 2 * (int64_t)n, 1);
  int64_t t0 = tg_days_from_civil(2022, 1, 3) * TG_NS_PER_DAY;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 2; j++) {
      double c = (j ? 50.0 : 100.0) * exp(0.01 * sin(0.7 * i + j) + 0.0003 * i);
      tg_bars_push(b, t0 + i * STEP, c * 0.9995, c * 1.002, c * 0.998, c, 100.0 + i % 7, j ? 9u : 5u);
    }
}

static double *num_col(tg_bars *b, const char *name) {
  int k = tg_bars_column_index(b, name);
  if (k < 0 && tg_bars_add_column(b, name, TG_COLUMN_NUMERIC) == TG_OK) k = b->n_cols - 1;
  return k < 0 ? NULL : b->cols[k].values;
}

static void set_cat(tg_bars *b, const char *col, int64_t r, const char *name) {
  int k = tg_bars_column_index(b, col);
  if (k < 0 && tg_bars_add_column(b, col, TG_COLUMN_CATEGORY) == TG_OK) k = b->n_cols - 1;
  uint32_t code = TG_CATEGORY_MISSING;
  if (name) CHECK_OK(tg_categories_intern(&b->cols[k].cats, name, strlen(name), &code));
  b->cols[k].codes[r] = code;
}

/* The columns the tests share: x (instrument 5 missing for its first 4 bars, gaps later), k (known, every bar),
 * s (static: 2.5 and 3.25, some missing), sector (categories; "zeta" only in the last quarter). */
static void add_columns(tg_bars *b, int n) {
  double *x = num_col(b, "x"), *k = num_col(b, "k"), *s = num_col(b, "s");
  static const char *names[3] = {"mid", "alpha", "big"};
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 2; j++) {
      int64_t r = 2 * (int64_t)i + j;
      x[r] = (j == 0 && i < 4) || i % 5 == 3 ? NAN : 0.1 * i - j;
      k[r] = (double)((i * 7 + j) % 11) + 0.5;
      s[r] = i % 9 == 4 ? NAN : j ? 3.25 : 2.5;
      set_cat(b, "sector", r, i % 13 == 6 ? NULL : i >= 3 * n / 4 && j == 1 ? "zeta" : names[(i + j) % 3]);
    }
}

static tg_status compute(const tg_bars *b, const char *spec, int leads, const tg_vocab *v, int nv, tg_layout *lay,
                         tg_features *fx) {
  tg_feature_opts fo = {.spec = spec, .leads = leads, .vocab = v, .n_vocab = nv};
  tg_status st = tg_layout_build(b, lay);
  if (st == TG_OK) st = tg_features_compute(b, lay, &fo, fx);
  if (st != TG_OK) memset(fx, 0, sizeof *fx);
  return st;
}

static void observed(void) {
  tg_bars b;
  int n = 40;
  make_bars(&b, n);
  add_columns(&b, n);
  tg_layout lay;
  tg_features fx;
  CHECK_OK(compute(&b, "logret,col:x", 0, NULL, 0, &lay, &fx));
  CHECK(fx.f == 2 && strcmp(fx.names[1], "x") == 0 && fx.role[0] == TG_FEATURE_OBSERVED && fx.n_cat == 0);
  CHECK(fx.role[1] == TG_FEATURE_OBSERVED && fx.scale[1] == 1 && fx.card[1] == 0 && fx.warmup_max == 1);
  const double *x = tg_bars_column(&b, "x")->values;
  int bad = 0;
  for (int j = 0; j < 2; j++) {
    double last = NAN;
    for (int i = 0; i < n; i++) {
      int64_t r = 2 * (int64_t)i + j;
      if (!isnan(x[r])) last = x[r];
      bad += !same_bits(fx.x[r * 2 + 1], (float)last);
    }
  }
  CHECK_MSG(bad == 0, "%d carried values wrong", bad);
  CHECK(isnan(fx.x[0 * 2 + 1]) && isnan(fx.x[6 * 2 + 1]) && !isnan(fx.x[8 * 2 + 1])); /* instrument 5: bars 0..3 */
  CHECK(fx.x[(2 * 3 + 1) * 2 + 1] == fx.x[(2 * 2 + 1) * 2 + 1]);                     /* instrument 9, bar 3 carried */
  CHECK_MSG(fx.first_valid[0] == 8 && fx.first_valid[1] == 3 && fx.first_valid_row == 8, "first valid %lld %lld",
            (long long)fx.first_valid[0], (long long)fx.first_valid[1]);
  tg_features_free(&fx);
  tg_layout_free(&lay);
  /* a column without any value for an instrument: that instrument has no valid row */
  double *y = num_col(&b, "y");
  for (int i = 0; i < n; i++) y[2 * i] = 1.0;
  CHECK_OK(compute(&b, "col:y", 0, NULL, 0, &lay, &fx));
  CHECK(fx.first_valid[0] == 0 && fx.first_valid[1] == b.n && fx.first_valid_row == b.n);
  tg_features_free(&fx);
  tg_layout_free(&lay);
  /* a spec without covariates: observed roles, no cards */
  CHECK_OK(compute(&b, TG_FEATURES_DEFAULT ",inst", 0, NULL, 0, &lay, &fx));
  int other = 0;
  for (int c = 0; c < fx.f; c++) other += fx.role[c] != TG_FEATURE_OBSERVED || fx.card[c] != 0;
  CHECK(other == 0 && fx.n_cat == 0);
  tg_features_free(&fx);
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

static void known_leads(void) {
  tg_bars b;
  int n = 30;
  make_bars(&b, n);
  add_columns(&b, n);
  tg_layout lay, l0;
  tg_features fx, f0;
  CHECK_OK(compute(&b, "col:x,known:k,vol:3", 3, NULL, 0, &lay, &fx));
  CHECK_OK(compute(&b, "col:x,known:k,vol:3", 0, NULL, 0, &l0, &f0));
  const char *want[] = {"x", "k", "k@+1", "k@+2", "k@+3", "vol_3"};
  CHECK(fx.f == 6 && f0.f == 3);
  for (int c = 0; c < 6 && fx.f == 6; c++) CHECK_MSG(strcmp(fx.names[c], want[c]) == 0, "column %d %s", c, fx.names[c]);
  CHECK(fx.role[1] == TG_FEATURE_KNOWN && fx.role[2] == TG_FEATURE_KNOWN_LEAD && fx.role[4] == TG_FEATURE_KNOWN_LEAD);
  CHECK(fx.role[5] == TG_FEATURE_OBSERVED && fx.scale[3] == 1);
  int bad = 0, past = 0;
  for (int j = 0; j < 2; j++)
    for (int i = 0; i < n; i++) {
      const float *row = fx.x + (2 * i + j) * 6;
      for (int h = 1; h <= 3; h++) {
        if (i + h < n) bad += !same_bits(row[1 + h], fx.x[(2 * (i + h) + j) * 6 + 1]);
        else past += isnan(row[1 + h]);
      }
    }
  CHECK_MSG(bad == 0 && past == 2 * (1 + 2 + 3), "%d lead values wrong, %d NaN past the end", bad, past);
  CHECK(fx.first_valid[0] == f0.first_valid[0] && fx.first_valid[1] == f0.first_valid[1]); /* leads: no warm-up */
  CHECK(fx.first_valid_row == f0.first_valid_row && fx.warmup_max == 3);
  tg_features_free(&fx);
  tg_features_free(&f0);
  tg_layout_free(&lay);
  tg_layout_free(&l0);
  /* normalisation fits a lead on its finite values; the NaN past the end stays NaN */
  tg_dataset_opts o = {.features = {.spec = "known:k", .leads = 2}, .splits = {.window = 4, .frac_train = 0.6,
                                                                              .frac_val = 0.4}};
  tg_dataset raw, ds;
  o.no_normalize = 1;
  CHECK_OK(tg_dataset_build(&b, &o, &raw));
  o.no_normalize = 0;
  o.splits.frac_train = 1.0, o.splits.frac_val = 0.0;
  CHECK_OK(tg_dataset_build(&b, &o, &ds));
  if (ds.fx.f == 3) {
    /* the reference over the rows tg_norm_fit reads: the training windows' */
    double sum = 0;
    int64_t cnt = 0;
    const tg_split *tr = &ds.splits.s[TG_TRAIN];
    for (int j = 0; j < 2; j++)
      for (int64_t p = tr->begin[j]; p < tr->end[j] + 3; p++) {
        float v = raw.fx.x[ds.layout.rows[p] * 3 + 2];
        if (isfinite(v)) sum += v, cnt++;
      }
    CHECK_MSG(fabs(ds.norm.mean[2] - sum / (double)cnt) < 1e-12 && isfinite(ds.norm.std[2]), "lead mean %g, want %g",
              ds.norm.mean[2], sum / (double)cnt);
    CHECK(isnan(ds.fx.x[(b.n - 1) * 3 + 1]) && isnan(ds.fx.x[(b.n - 1) * 3 + 2]) && isfinite(ds.fx.x[(b.n - 1) * 3]));
  }
  tg_dataset_free(&raw);
  tg_dataset_free(&ds);
  tg_bars_free(&b);
}

static void statics(void) {
  tg_bars b;
  int n = 30;
  make_bars(&b, n);
  add_columns(&b, n);
  tg_layout lay;
  tg_features fx;
  CHECK_OK(compute(&b, "static:s,logret", 0, NULL, 0, &lay, &fx));
  CHECK(fx.role[0] == TG_FEATURE_STATIC && strcmp(fx.names[0], "s") == 0);
  CHECK(fx.x[0] == 2.5f && fx.x[2] == 3.25f && fx.x[(2 * 4 + 1) * 2] == 3.25f); /* bar 4 missing: carried */
  tg_features_free(&fx);
  tg_layout_free(&lay);
  tg_bars_column(&b, "s")->values[2 * 20 + 1] = 3.5; /* instrument 9 changes */
  CHECK_STATUS(compute(&b, "static:s", 0, NULL, 0, &lay, &fx), TG_ERR_INVALID);
  const char *e = tg_last_error();
  CHECK_MSG(strstr(e, "'s'") && strstr(e, "instrument 9") && strstr(e, "3.25") && strstr(e, "3.5"), "%s", e);
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

/* cat: ids from a vocabulary fitted on the training rows; a name only validation rows hold gets 0. */
static void categories(void) {
  tg_bars b;
  int n = 80;
  make_bars(&b, n);
  add_columns(&b, n);
  tg_layout lay;
  tg_features fx;
  CHECK_OK(compute(&b, "cat:sector,logret,col:x", 0, NULL, 0, &lay, &fx));
  CHECK(fx.f == 3 && fx.n_cat == 1 && strcmp(fx.names[2], "sector") == 0 && strcmp(fx.names[1], "x") == 0);
  CHECK(fx.role[2] == TG_FEATURE_CATEGORY && fx.scale[2] == 0 && fx.card[2] == 5); /* alpha big mid zeta + 0 */
  CHECK(fx.x[0 * 3 + 2] == 3.0f && fx.x[1 * 3 + 2] == 1.0f && fx.x[(2 * 6) * 3 + 2] == 0.0f); /* mid, alpha, missing */
  CHECK(fx.x[(2 * (n - 1) + 1) * 3 + 2] == 4.0f);                                              /* zeta */
  tg_features_free(&fx);
  tg_layout_free(&lay);
  tg_dataset_opts o = {.features = {.spec = "logret,cat:sector"}, .splits = {.window = 5, .frac_train = 0.5,
                                                                            .frac_val = 0.5}};
  tg_dataset ds;
  CHECK_OK(tg_dataset_build(&b, &o, &ds));
  CHECK(ds.norm.n_vocab == 1 && ds.norm.vocab && ds.fx.card[1] == 4);
  if (ds.norm.n_vocab == 1) {
    const tg_vocab *v = &ds.norm.vocab[0];
    CHECK(strcmp(v->column, "sector") == 0 && v->n == 3 && strcmp(v->names[0], "alpha") == 0 &&
          strcmp(v->names[2], "mid") == 0);
    CHECK(tg_vocab_id(v, "big") == 2 && tg_vocab_id(v, "zeta") == 0 && tg_vocab_id(v, NULL) == 0);
    CHECK(ds.norm.mean[1] == 0.0 && ds.norm.std[1] == 1.0);
    int bad = 0, zeros = 0, zetas = 0;
    const tg_bar_column *sc = tg_bars_column(&b, "sector");
    for (int64_t r = 0; r < b.n; r++) {
      uint32_t code = sc->codes[r];
      const char *name = code == TG_CATEGORY_MISSING ? NULL : tg_categories_name(&sc->cats, code);
      bad += ds.fx.x[r * 2 + 1] != (float)tg_vocab_id(v, name);
      zetas += name && strcmp(name, "zeta") == 0;
      zeros += name && strcmp(name, "zeta") == 0 && ds.fx.x[r * 2 + 1] == 0.0f;
    }
    CHECK_MSG(bad == 0 && zetas > 10 && zeros == zetas, "%d ids wrong, %d of %d zeta rows 0", bad, zeros, zetas);
  }
  /* by hand: tg_vocab_fit on the same split and tg_features_recode give the dataset's ids */
  tg_splits sp;
  tg_vocab *fit = NULL;
  int nfit = 0;
  CHECK_OK(compute(&b, "logret,cat:sector", 0, NULL, 0, &lay, &fx));
  tg_split_opts so = o.splits;
  so.horizon = 1, so.warmup = fx.warmup_max;
  CHECK_OK(tg_splits_make(&b, &lay, &so, &sp));
  CHECK_OK(tg_vocab_fit(&b, &fx, &lay, &sp, &fit, &nfit));
  CHECK(nfit == 1 && fit && fit[0].n == 3 && fx.card[1] == 5);
  CHECK_STATUS(tg_features_recode(&fx, &b, fit, 0), TG_ERR_INVALID);
  CHECK(fx.card[1] == 5);
  CHECK_OK(tg_features_recode(&fx, &b, fit, nfit));
  int same = fx.card[1] == 4;
  for (int64_t r = 0; r < b.n; r++) same &= fx.x[r * 2 + 1] == ds.fx.x[r * 2 + 1];
  CHECK(same);
  tg_vocabs_free(fit, nfit);
  tg_splits_free(&sp);
  tg_features_free(&fx);
  tg_layout_free(&lay);
  /* the same vocabulary given in the options: the same ids, kept in norm */
  tg_dataset d2;
  o.features.vocab = ds.norm.vocab;
  o.features.n_vocab = ds.norm.n_vocab;
  o.no_normalize = 1;
  CHECK_OK(tg_dataset_build(&b, &o, &d2));
  CHECK(d2.norm.n_vocab == 1 && d2.norm.vocab != ds.norm.vocab && d2.norm.vocab[0].n == 3);
  int diff = 0;
  for (int64_t r = 0; r < b.n; r++) diff += d2.fx.x[r * 2 + 1] != ds.fx.x[r * 2 + 1];
  CHECK(diff == 0 && d2.fx.card[1] == 4);
  tg_dataset_free(&d2);
  tg_dataset_free(&ds);
  tg_bars_free(&b);
}

static void errors(void) {
  tg_bars b;
  make_bars(&b, 20);
  tg_layout lay;
  tg_features fx;
  CHECK_STATUS(compute(&b, "logret,col:x", 0, NULL, 0, &lay, &fx), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "col:x") && strstr(tg_last_error(), "no extra columns"), "%s", tg_last_error());
  tg_layout_free(&lay);
  add_columns(&b, 20);
  CHECK_STATUS(compute(&b, "known:nope", 0, NULL, 0, &lay, &fx), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "known:nope") && strstr(tg_last_error(), "x, k, s, sector"), "%s",
            tg_last_error());
  tg_layout_free(&lay);
  CHECK_STATUS(compute(&b, "cat:x", 0, NULL, 0, &lay, &fx), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "numeric") && strstr(tg_last_error(), "col:x"), "%s", tg_last_error());
  tg_layout_free(&lay);
  CHECK_STATUS(compute(&b, "col:sector", 0, NULL, 0, &lay, &fx), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "categories") && strstr(tg_last_error(), "cat:sector"), "%s", tg_last_error());
  tg_layout_free(&lay);
  for (int64_t r = 0; r < b.n; r++) set_cat(&b, "price2", r, r == 7 ? "n/a?" : r % 2 ? "1.5" : "2"); /* one bad value */
  snprintf(b.source, sizeof b.source, "desk.csv");
  CHECK_STATUS(compute(&b, "col:price2", 0, NULL, 0, &lay, &fx), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "desk.csv") && strstr(tg_last_error(), "bar 8 ") && strstr(tg_last_error(), "'n/a?'"),
            "%s", tg_last_error());
  tg_layout_free(&lay);
  static const char *bad[] = {"col:x,col:x", "col:x,known:x", "col:", "static: ", "cat", "known:k,col:k@+2"};
  for (int i = 0; i < 6; i++) {
    CHECK_STATUS(compute(&b, bad[i], 2, NULL, 0, &lay, &fx), TG_ERR_INVALID);
    tg_layout_free(&lay);
  }
  CHECK_STATUS(compute(&b, "known:k", -1, NULL, 0, &lay, &fx), TG_ERR_INVALID);
  tg_layout_free(&lay);
  CHECK_STATUS(compute(&b, "known:k", TG_FEATURES_MAX_LEADS + 1, NULL, 0, &lay, &fx), TG_ERR_INVALID);
  tg_layout_free(&lay);
  tg_vocab other = {.column = "other"};
  CHECK_STATUS(compute(&b, "cat:sector", 0, &other, 1, &lay, &fx), TG_ERR_INVALID); /* no vocabulary of sector */
  CHECK_MSG(strstr(tg_last_error(), "sector"), "%s", tg_last_error());
  tg_layout_free(&lay);
  double *logret = num_col(&b, "logret");
  logret[0] = 1.0;
  CHECK_STATUS(compute(&b, "logret,col:logret", 0, NULL, 0, &lay, &fx), TG_ERR_INVALID); /* two columns "logret" */
  tg_layout_free(&lay);
  tg_bars_column(&b, "x")->values[7] = INFINITY;
  CHECK_STATUS(compute(&b, "col:x", 0, NULL, 0, &lay, &fx), TG_ERR_NUMERIC);
  tg_layout_free(&lay);
  /* finite, but no float32: named with its bar and time, not left to an Inf mean at normalisation */
  tg_bars_column(&b, "x")->values[7] = -1e300;
  CHECK_STATUS(compute(&b, "col:x", 0, NULL, 0, &lay, &fx), TG_ERR_NUMERIC);
  char want[120], t[TG_TIME_TEXT];
  snprintf(want, sizeof want, "column 'x' is -1e+300 at bar 7 (%s), beyond float32's range",
           tg_format_time(b.ts[7], t, sizeof t));
  CHECK_MSG(strstr(tg_last_error(), want) != NULL, "%s", tg_last_error());
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

/* Column names with commas, quotes and spaces, written CSV-style in the spec. */
static void quoted_names(void) {
  tg_bars b;
  make_bars(&b, 20);
  double *w = num_col(&b, "weird \"q\", \xc3\xa9"), *p = num_col(&b, " pad ");
  for (int64_t r = 0; r < b.n; r++) w[r] = 0.5 * (double)r, p[r] = 1.0 + (double)(r % 3);
  tg_layout lay;
  tg_features fx;
  CHECK_OK(compute(&b, " logret , col:\"weird \"\"q\"\", \xc3\xa9\" ,col:\" pad \"", 0, NULL, 0, &lay, &fx));
  CHECK_MSG(fx.f == 3 && strcmp(fx.names[1], "weird \"q\", \xc3\xa9") == 0 && strcmp(fx.names[2], " pad ") == 0,
            "f %d, names '%s' '%s'", fx.f, fx.f > 1 ? fx.names[1] : "", fx.f > 2 ? fx.names[2] : "");
  tg_features_free(&fx);
  tg_layout_free(&lay);
  CHECK_STATUS(compute(&b, "logret,col:\"weird", 0, NULL, 0, &lay, &fx), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "quote is left open"), "%s", tg_last_error());
  tg_layout_free(&lay);
  CHECK_STATUS(compute(&b, "logret,col:weird \"q\", \xc3\xa9", 0, NULL, 0, &lay, &fx), TG_ERR_INVALID); /* unquoted */
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

/* The first m rows of src with their extra columns. */
static void cut_bars(const tg_bars *src, int64_t m, tg_bars *dst) {
  tg_bars_init(dst);
  tg_bars_reserve(dst, m, 1);
  for (int64_t r = 0; r < m; r++)
    tg_bars_push(dst, src->ts[r], src->open[r], src->high[r], src->low[r], src->close[r], src->volume[r],
                 src->instrument[r]);
  for (int k = 0; k < src->n_cols; k++) {
    const tg_bar_column *c = &src->cols[k];
    CHECK_OK(tg_bars_add_column(dst, c->name, c->kind));
    for (int64_t r = 0; r < m; r++) {
      if (c->kind == TG_COLUMN_NUMERIC) dst->cols[k].values[r] = c->values[r];
      else set_cat(dst, c->name, r, c->codes[r] == TG_CATEGORY_MISSING ? NULL : tg_categories_name(&c->cats, c->codes[r]));
    }
  }
}

/* Rows <= t do not change when the bars after t are cut (col:, known: without leads, static:, cat: with a given
 * vocabulary). */
static void causality(void) {
  tg_bars b;
  int n = 60;
  make_bars(&b, n);
  add_columns(&b, n);
  const char *spec = "col:x,known:k,static:s,cat:sector,logret";
  tg_vocab v = {.column = "sector", .n = 2};
  char names[2][TG_NAME_MAX] = {"big", "mid"};
  v.names = names;
  tg_layout lay;
  tg_features full;
  CHECK_OK(compute(&b, spec, 0, &v, 1, &lay, &full));
  int64_t cuts[] = {0, 1, 7, 8, 9, 40, 77, 2 * (int64_t)n - 2};
  int bad = 0;
  for (size_t q = 0; q < sizeof cuts / sizeof *cuts; q++) {
    tg_bars c;
    cut_bars(&b, cuts[q] + 1, &c);
    tg_layout l2;
    tg_features part;
    CHECK_OK(compute(&c, spec, 0, &v, 1, &l2, &part));
    if (part.f == full.f)
      bad += memcmp(part.x, full.x, (size_t)(cuts[q] + 1) * (size_t)full.f * sizeof(float)) != 0;
    tg_features_free(&part);
    tg_layout_free(&l2);
    tg_bars_free(&c);
  }
  CHECK_MSG(bad == 0, "%d cuts changed earlier rows", bad);
  CHECK(full.card[4] == 3 && full.x[0 * 5 + 4] == 2.0f && full.x[1 * 5 + 4] == 0.0f); /* mid, alpha unseen */
  tg_features_free(&full);
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

/* The stream: push_ex equals compute bitwise (cat ids through the options' vocabulary, leads from the caller), the
 * old push is refused, a varying static value is refused without changing anything. */
static void stream(void) {
  tg_bars b;
  int n = 50;
  make_bars(&b, n);
  add_columns(&b, n);
  const char *spec = "logret,col:x,cat:sector,known:k,static:s,vol:3";
  tg_vocab v = {.column = "sector", .n = 3};
  char names[3][TG_NAME_MAX] = {"alpha", "mid", "zeta"};
  v.names = names;
  tg_feature_opts fo = {.spec = spec, .leads = 2, .vocab = &v, .n_vocab = 1};
  tg_layout lay;
  tg_features fx;
  CHECK_OK(compute(&b, spec, 2, &v, 1, &lay, &fx));
  tg_feature_stream *s = NULL;
  CHECK_OK(tg_feature_stream_new(&fo, lay.ids, lay.k, &s));
  if (!s || fx.f != 8) {
    tg_feature_stream_free(s);
    return;
  }
  const char *want[] = {"x", "k", "k@+1", "k@+2", "s", "sector"};
  CHECK(tg_feature_stream_n_inputs(s) == 6 && tg_feature_stream_n_num_inputs(s) == 5);
  for (int i = 0; i < 6; i++) CHECK_MSG(strcmp(tg_feature_stream_input_name(s, i), want[i]) == 0, "input %d", i);
  CHECK(tg_feature_stream_input_name(s, 6) == NULL && tg_feature_stream_input_name(s, -1) == NULL);
  float row[8];
  CHECK_STATUS(tg_feature_stream_push(s, 0, b.ts[0], b.open[0], b.high[0], b.low[0], b.close[0], b.volume[0], row,
                                      NULL), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "tg_feature_stream_push_ex"), "%s", tg_last_error());
  const double *x = tg_bars_column(&b, "x")->values, *k = tg_bars_column(&b, "k")->values;
  const double *sv = tg_bars_column(&b, "s")->values;
  const tg_bar_column *sc = tg_bars_column(&b, "sector");
  int bad = 0;
  for (int64_t r = 0; r < b.n; r++) {
    int j = lay.inst[r], valid = -1;
    double num[5] = {x[r], k[r], fx.x[r * 8 + 3], fx.x[r * 8 + 4], sv[r]};
    const char *cat[1] = {sc->codes[r] == TG_CATEGORY_MISSING ? NULL : tg_categories_name(&sc->cats, sc->codes[r])};
    if (r == 41) { /* a static value the instrument did not have: refused, nothing changes */
      double wrong[5] = {num[0], num[1], num[2], num[3], 99.0};
      CHECK_STATUS(tg_feature_stream_push_ex(s, j, b.ts[r], b.open[r], b.high[r], b.low[r], b.close[r], b.volume[r],
                                             wrong, cat, row, &valid), TG_ERR_INVALID);
      CHECK_MSG(strstr(tg_last_error(), "static:s") && strstr(tg_last_error(), "99"), "%s", tg_last_error());
      CHECK_STATUS(tg_feature_stream_push_ex(s, j, b.ts[r], b.open[r], b.high[r], b.low[r], b.close[r], b.volume[r],
                                             NULL, cat, row, &valid), TG_ERR_INVALID);
    }
    tg_status st = tg_feature_stream_push_ex(s, j, b.ts[r], b.open[r], b.high[r], b.low[r], b.close[r], b.volume[r],
                                             num, cat, row, &valid);
    bad += st != TG_OK || memcmp(row, fx.x + r * 8, sizeof row) != 0 || valid != (r >= fx.first_valid[j]);
  }
  CHECK_MSG(bad == 0, "%d streamed rows differ from the batch", bad);
  CHECK(fx.first_valid[0] == 8 && fx.first_valid[1] == 7); /* x from instrument 5's bar 4; vol:3 warm-up 3 */
  tg_feature_stream_free(s);
  tg_feature_opts novocab = {.spec = spec};
  CHECK_STATUS(tg_feature_stream_new(&novocab, lay.ids, lay.k, &s), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), "cat:sector"), "%s", tg_last_error());
  tg_features_free(&fx);
  tg_layout_free(&lay);
  tg_bars_free(&b);
}

/* Windows start past each instrument's own covariate warm-up, so normalisation sees no NaN. */
static void split_warmups(void) {
  tg_bars b;
  int n = 200;
  make_bars(&b, n);
  double *late = num_col(&b, "late");
  for (int i = 0; i < n; i++) {
    late[2 * i] = i >= 50 ? 1.0 + 0.01 * i : NAN;  /* instrument 5: from its bar 50 */
    late[2 * i + 1] = i >= 2 ? 2.0 - 0.01 * i : NAN; /* instrument 9: from its bar 2 */
  }
  tg_dataset_opts o = {.features = {.spec = "logret,col:late"}, .splits = {.window = 8, .frac_train = 0.7,
                                                                          .frac_val = 0.3}};
  tg_dataset ds;
  CHECK_OK(tg_dataset_build(&b, &o, &ds));
  if (ds.fx.f == 2) {
    const tg_split *tr = &ds.splits.s[TG_TRAIN];
    CHECK_MSG(tr->begin[0] == ds.layout.seg[0] + 50 && tr->begin[1] == ds.layout.seg[1] + 2, "begins %lld %lld",
              (long long)tr->begin[0], (long long)tr->begin[1]);
    CHECK(isfinite(ds.norm.mean[1]) && isfinite(ds.norm.std[1]));
  }
  tg_dataset_free(&ds);
  tg_bars_free(&b);
}

int main(void) {
  observed();
  known_leads();
  statics();
  categories();
  errors();
  quoted_names();
  causality();
  stream();
  split_warmups();
  return tg_test_finish();
}
