/* The live predictor against the trainer's own batch pipeline, its errors and allocations; forecast-rule decisions without lookahead. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "support/heap_count.h"
#include "tickgrad/tickgrad.h"

#define H 3
#define NQ 3

static char g_tmp[256];
static tg_bars g_bars;

static tg_train_config small_config(tg_model_kind kind, const char *name) {
  tg_train_config c = tg_train_defaults(kind);
  c.horizons = H;
  c.epochs = 1;
  c.threads = 1;
  snprintf(c.device, sizeof c.device, "cpu");
  snprintf(c.out, sizeof c.out, "%s/%s", g_tmp, name);
  if (kind == TG_MODEL_TFT) {
    c.model.tft.hidden = 16;
    c.model.tft.heads = 2;
    c.model.tft.enc_len = 12;
  } else if (kind == TG_MODEL_MAMBA2) {
    c.model.mamba = (tg_mamba2_cfg){.d_model = 16, .n_layers = 2, .d_state = 8, .headdim = 8, .expand = 2,
                                    .d_conv = 4, .ngroups = 1, .chunk = 16, .seq_len = 32};
  } else {
    c.model.mlp.window = 8;
  }
  c.batch = 32;
  return c;
}

/* Every bar through a fresh predictor: out [n, H*NQ], ready [n]. */
static void push_all(tg_predictor *p, const tg_bars *b, float *out, int *ready) {
  tg_predictor_reset(p);
  for (int64_t t = 0; t < b->n; t++) {
    tg_pbar bar = {b->ts[t], 0, b->open[t], b->high[t], b->low[t], b->close[t], b->volume[t], NULL, NULL};
    CHECK_OK(tg_predictor_push(p, &bar, out + t * H * NQ, &ready[t]));
  }
}

/* The trainer's dataset for c (the same options as src/train/data.c): normalised features [n, F]. */
static void trainer_dataset(const tg_train_config *c, int window, tg_dataset *ds) {
  tg_dataset_opts o;
  memset(&o, 0, sizeof o);
  o.targets.nh = H;
  for (int h = 0; h < H; h++) o.targets.horizons[h] = h + 1;
  o.splits.window = window;
  o.splits.frac_train = c->train_frac;
  o.splits.frac_val = c->val_frac;
  CHECK_OK(tg_dataset_build(&g_bars, &o, ds));
}

/* The forecast graph of run's best weights at batch 1 for past [1, L, F] (and tft's future, inst). */
typedef struct ref_net {
  tg_store *s;
  tg_graph *g;
  tg_tensor *pred;
} ref_net;

/* The model of run as a plain graph at batch 1, planned in the run's precision (the predictor runs in it too). */
static void ref_open(ref_net *r, const tg_forecast_cfg *m, const char *run, tg_precision precision) {
  tg_device host = {TG_CPU, 0};
  int64_t L = m->kind == TG_MODEL_TFT ? m->tft.enc_len : m->kind == TG_MODEL_MLP ? m->mlp.window : m->mamba.seq_len;
  int64_t sp[3] = {1, L, m->n_past}, sf[3] = {1, m->horizons, 4}, si[1] = {1};
  r->s = tg_store_new(host, 9);
  r->g = tg_graph_new(r->s, "ref");
  tg_forecast_inputs in = {tg_input(r->g, "past", TG_F32, 3, sp), NULL, NULL};
  if (m->kind == TG_MODEL_TFT) {
    in.future = tg_input(r->g, "future", TG_F32, 3, sf);
    in.inst = tg_input(r->g, "inst", TG_I64, 1, si);
  }
  r->pred = tg_forecast_build(r->g, m, &in);
  tg_plan_opts po = tg_plan_defaults(host);
  po.training = 0;
  po.precision = tg_precision_dtype(precision);
  CHECK_OK(tg_graph_plan(r->g, &po));
  char path[512];
  snprintf(path, sizeof path, "%s/best.safetensors", run);
  CHECK_OK(tg_store_load(r->s, path));
}

static void ref_bind(ref_net *r, const char *name, tg_dtype dt, int ndim, const int64_t *shape, void *data) {
  tg_tensor t;
  CHECK_OK(tg_tensor_view(&t, name, (tg_device){TG_CPU, 0}, dt, ndim, shape, data));
  CHECK_OK(tg_graph_bind(r->g, name, &t));
}

static void ref_close(ref_net *r) {
  tg_graph_free(r->g);
  tg_store_free(r->s);
}

/* The model config as the trainer completed it from the data. */
static tg_forecast_cfg full_model(const tg_train_config *c, const tg_dataset *ds) {
  tg_forecast_cfg m = c->model;
  m.n_past = ds->fx.f;
  m.n_future = m.kind == TG_MODEL_TFT ? 4 : 0;
  m.n_static = ds->layout.k;
  m.horizons = H;
  if (m.kind == TG_MODEL_TFT) m.tft.dec_len = H;
  return m;
}

static double rel_diff(double a, double b) { return fabs(a - b) / (1.0 + fabs(b)); }

/* The scales the trainer divided the targets by: inference.json's, checked through the predictor's output. */
static void read_scales(const char *run, double *scale) {
  char path[512];
  snprintf(path, sizeof path, "%s/inference.json", run);
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  char text[65536];
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  text[n] = 0;
  const char *p = strstr(text, "\"target_scales\": [");
  CHECK(p != NULL);
  p = p ? p + strlen("\"target_scales\": [") : "";
  for (int h = 0; h < H; h++) scale[h] = strtod(p, (char **)&p), p += strspn(p, ", ");
}

/* tft and mlp: the forecast at bar t equals the model over the trainer's normalised window rows t-L+1..t
 * (tft: its decoder on the next H bars' calendar, where those bars are bar_ns apart). */
static void check_window_model(tg_model_kind kind, const char *name) {
  tg_train_config c = small_config(kind, name);
  CHECK_OK(tg_train_run(&c, &g_bars, NULL));
  tg_predictor *p = NULL;
  CHECK_OK(tg_predictor_open(c.out, NULL, &p));
  if (!p) return;
  const tg_predictor_info *in = tg_predictor_get_info(p);
  int L = in->window, Lw = kind == TG_MODEL_TFT ? L + H : L;
  CHECK(in->kind == kind && in->horizons == H && in->nq == NQ && in->k == 1 && in->bar_ns == 60000000000LL);
  int64_t n = g_bars.n;
  float *out = malloc((size_t)n * H * NQ * sizeof *out);
  int *ready = calloc((size_t)n, sizeof *ready);
  push_all(p, &g_bars, out, ready);
  tg_dataset ds;
  trainer_dataset(&c, Lw, &ds);
  CHECK(in->n_features == ds.fx.f && in->warmup == ds.fx.warmup_max);
  const float *xl = tg_predictor_features(p); /* the last bar's normalised row: the trainer's */
  CHECK(xl != NULL);
  double wx = 0;
  for (int j = 0; xl && j < ds.fx.f; j++) wx = fmax(wx, rel_diff(xl[j], ds.fx.x[(n - 1) * ds.fx.f + j]));
  CHECK_MSG(wx <= 1e-5, "%s: tg_predictor_features differs from the trainer's last row by %.3g", name, wx);
  tg_forecast_cfg m = full_model(&c, &ds);
  ref_net r;
  ref_open(&r, &m, c.out, in->precision);
  double scale[H];
  read_scales(c.out, scale);
  int F = ds.fx.f, fut_col[4] = {-1, -1, -1, -1};
  const char *fut_names[4] = {"tod_sin", "tod_cos", "dow_sin", "dow_cos"};
  for (int k = 0; k < 4; k++)
    for (int j = 0; j < F; j++)
      if (!strcmp(ds.fx.names[j], fut_names[k])) fut_col[k] = j;
  float *past = malloc((size_t)L * F * sizeof *past), future[H * 4];
  int64_t inst = 0, sp[3] = {1, L, F}, sf[3] = {1, H, 4}, si[1] = {1}, compared = 0, first = ds.fx.warmup_max + L - 1;
  ref_bind(&r, "past", TG_F32, 3, sp, past);
  if (kind == TG_MODEL_TFT) {
    ref_bind(&r, "future", TG_F32, 3, sf, future);
    ref_bind(&r, "inst", TG_I64, 1, si, &inst);
  }
  int ready_ok = 1;
  for (int64_t t = 0; t < n; t++) ready_ok &= ready[t] == (t >= first);
  CHECK_MSG(ready_ok, "%s: forecasts start at bar %lld (the warm-up %d plus a window of %d)", name, (long long)first,
            ds.fx.warmup_max, L);
  double worst = 0;
  for (int64_t t = first; t + H < n; t += 7) {
    int regular = 1;
    for (int k = 1; k <= H; k++) regular &= g_bars.ts[t + k] == g_bars.ts[t] + k * in->bar_ns;
    if (!regular) continue; /* across a gap the predictor's calendar is ts + k * bar_ns, the trainer's the next bar's */
    memcpy(past, ds.fx.x + (t - L + 1) * F, (size_t)L * F * sizeof *past);
    for (int k = 0; k < H && kind == TG_MODEL_TFT; k++)
      for (int j = 0; j < 4; j++) future[k * 4 + j] = ds.fx.x[(t + 1 + k) * F + fut_col[j]];
    CHECK_OK(tg_graph_run(r.g));
    const float *ref = r.pred->data;
    for (int h = 0; h < H; h++)
      for (int q = 0; q < NQ; q++) {
        double d = rel_diff(out[t * H * NQ + h * NQ + q], ref[h * NQ + q] * scale[h]);
        if (d > worst) worst = d;
      }
    compared++;
  }
  printf("%s: %lld bars against the trainer's pipeline, worst relative difference %.2e\n", name, (long long)compared,
         worst);
  CHECK(compared > 50);
  CHECK_MSG(worst <= 1e-5, "%s: predictor differs from the trainer's features and model by %.3g", name, worst);
  ref_close(&r);
  tg_dataset_free(&ds);
  free(past);
  free(out);
  free(ready);
  tg_predictor_reset(p);
  CHECK(tg_predictor_features(p) == NULL);
  tg_predictor_free(p);
}

/* mamba2: the forecast at bar t equals the model over every bar since the first valid one (the recurrent state). */
static void check_mamba2(void) {
  tg_train_config c = small_config(TG_MODEL_MAMBA2, "m2");
  CHECK_OK(tg_train_run(&c, &g_bars, NULL));
  tg_predictor *p = NULL;
  CHECK_OK(tg_predictor_open(c.out, NULL, &p));
  if (!p) return;
  int64_t n = 600;
  float *out = malloc((size_t)n * H * NQ * sizeof *out);
  int *ready = calloc((size_t)n, sizeof *ready);
  tg_bars head = g_bars;
  head.n = n;
  push_all(p, &head, out, &ready[0]);
  tg_dataset ds;
  trainer_dataset(&c, c.model.mamba.seq_len, &ds);
  double scale[H], worst = 0;
  read_scales(c.out, scale);
  int64_t fv = ds.fx.warmup_max, lens[5] = {1, 2, 17, 64, 300};
  CHECK(tg_predictor_get_info(p)->first_bar == fv && ready[fv] && !ready[fv - 1]);
  for (int i = 0; i < 5; i++) {
    tg_forecast_cfg m = full_model(&c, &ds);
    m.mamba.seq_len = (int)lens[i];
    ref_net r;
    ref_open(&r, &m, c.out, tg_predictor_get_info(p)->precision);
    int64_t sp[3] = {1, lens[i], ds.fx.f}, t = fv + lens[i] - 1;
    ref_bind(&r, "past", TG_F32, 3, sp, ds.fx.x + fv * ds.fx.f);
    CHECK_OK(tg_graph_run(r.g));
    const float *ref = r.pred->data;
    for (int h = 0; h < H; h++)
      for (int q = 0; q < NQ; q++) {
        double d = rel_diff(out[t * H * NQ + h * NQ + q], ref[h * NQ + q] * scale[h]);
        if (d > worst) worst = d;
      }
    ref_close(&r);
  }
  printf("mamba2: the recurrent forecasts against the chunked model over 1..300 bars: worst %.2e\n", worst);
  CHECK_MSG(worst <= 1e-4, "mamba2 predictor differs from the full forward by %.3g", worst);
  tg_dataset_free(&ds);
  free(out);
  free(ready);
  tg_predictor_free(p);
}

/* Replays, errors that leave the state alone, no allocation per bar. */
static void check_behaviour(const char *name) {
  char run[512];
  snprintf(run, sizeof run, "%s/%s", g_tmp, name);
  tg_predictor *p = NULL;
  CHECK_OK(tg_predictor_open(run, NULL, &p));
  if (!p) return;
  int64_t n = 400;
  tg_bars b = g_bars;
  b.n = n;
  float *a = malloc((size_t)n * H * NQ * sizeof *a), *z = malloc((size_t)n * H * NQ * sizeof *z), f[H * NQ];
  int *ra = calloc((size_t)n, sizeof *ra), *rz = calloc((size_t)n, sizeof *rz), ready = 1;
  push_all(p, &b, a, ra);
  push_all(p, &b, z, rz); /* reset + replay: the same forecasts, bitwise */
  CHECK_MSG(memcmp(a, z, (size_t)n * H * NQ * sizeof *a) == 0 && memcmp(ra, rz, (size_t)n * sizeof *ra) == 0,
            "%s: a replay after reset differs", name);
  /* bad bars in the middle are refused and change nothing */
  tg_predictor_reset(p);
  long heap = 0;
  int same = 1;
  for (int64_t t = 0; t < n; t++) {
    tg_pbar bar = {b.ts[t], 0, b.open[t], b.high[t], b.low[t], b.close[t], b.volume[t], NULL, NULL};
    if (t == 250) {
      tg_pbar bad = bar;
      bad.instrument = 7;
      CHECK_STATUS(tg_predictor_push(p, &bad, f, &ready), TG_ERR_INVALID);
      CHECK(strstr(tg_last_error(), "instrument 7") != NULL && ready == 0 && isnan(f[0]));
      bad = bar;
      bad.close = NAN;
      CHECK_STATUS(tg_predictor_push(p, &bad, f, &ready), TG_ERR_NUMERIC);
      bad = bar;
      bad.ts = b.ts[t - 2];
      CHECK_STATUS(tg_predictor_push(p, &bad, f, &ready), TG_ERR_INVALID);
    }
    if (t == 100) heap = tg_test_heap_calls();
    CHECK_OK(tg_predictor_push(p, &bar, f, &ready));
    same &= ready == ra[t] && memcmp(f, a + t * H * NQ, sizeof f) == 0;
  }
  heap = tg_test_heap_calls() - heap;
  CHECK_MSG(same, "%s: refused bars changed the forecasts", name);
  if (TG_TEST_HEAP_COUNTED) CHECK_MSG(heap == 0, "%s: %ld heap allocations in 300 pushes", name, heap);
  free(a), free(z), free(ra), free(rz);
  tg_predictor_free(p);
}

static void check_open_errors(void) {
  tg_predictor *p = (tg_predictor *)1;
  char dir[300], path[2048];
  snprintf(dir, sizeof dir, "%s/nothing", g_tmp);
  CHECK_STATUS(tg_predictor_open(dir, NULL, &p), TG_ERR_IO);
  CHECK(p == NULL && strstr(tg_last_error(), "config.json"));
  tg_predictor_opts o = {.weights = "newest"};
  snprintf(dir, sizeof dir, "%s/mlp", g_tmp);
  CHECK_STATUS(tg_predictor_open(dir, &o, &p), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "'newest'") != NULL);
  /* an RL run */
  snprintf(dir, sizeof dir, "%s/rl", g_tmp);
  snprintf(path, sizeof path, "mkdir -p '%s' && echo '{}' > '%s/env.json' && echo '{}' > '%s/config.json'", dir, dir, dir);
  CHECK(system(path) == 0);
  CHECK_STATUS(tg_predictor_open(dir, NULL, &p), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "reinforcement") != NULL);
  /* a damaged inference.json */
  snprintf(dir, sizeof dir, "%s/damaged", g_tmp);
  snprintf(path, sizeof path, "cp -r '%s/mlp' '%s' && sed -i 's/\"std\"/\"sd\"/' '%s/inference.json'", g_tmp, dir, dir);
  CHECK(system(path) == 0);
  CHECK_STATUS(tg_predictor_open(dir, NULL, &p), TG_ERR_FORMAT);
  CHECK(strstr(tg_last_error(), "inference.json") && strstr(tg_last_error(), "\"std\""));
}

/* Decisions at bars up to t do not change when the bars after t are cut off; the rules do what they say. */
static void check_rule(const char *name) {
  char run[512];
  snprintf(run, sizeof run, "%s/%s", g_tmp, name);
  tg_predictor *p = NULL;
  CHECK_OK(tg_predictor_open(run, NULL, &p));
  if (!p) return;
  int64_t n = 900, from = 300;
  tg_bars b = g_bars;
  b.n = n;
  double *full = malloc((size_t)n * sizeof *full), *cut = malloc((size_t)n * sizeof *cut);
  tg_fc_rule r = tg_fc_rule_defaults();
  r.kind = TG_FC_MEDIAN;
  r.horizon = 2;
  int64_t got = 0, longs = 0, shorts = 0;
  CHECK_OK(tg_fc_targets(p, &b, from, &r, full, &got));
  CHECK(got == n - from);
  const int64_t ends[4] = {301, 450, 451, 777};
  for (int i = 0; i < 4; i++) {
    tg_bars c = b;
    c.n = ends[i];
    CHECK_OK(tg_fc_targets(p, &c, from, &r, cut, NULL));
    CHECK_MSG(memcmp(cut, full, (size_t)(ends[i] - from) * sizeof *cut) == 0,
              "%s: decisions up to bar %lld change when later bars are cut off", name, (long long)ends[i]);
  }
  /* the median rule at cost 0 is the sign of the median forecast of horizon 2 */
  float *out = malloc((size_t)n * H * NQ * sizeof *out);
  int *ready = calloc((size_t)n, sizeof *ready), agree = 1;
  push_all(p, &b, out, ready);
  for (int64_t t = from; t < n; t++) {
    float mid = out[t * H * NQ + 1 * NQ + 1];
    agree &= full[t - from] == (mid > 0 ? 1.0 : mid < 0 ? -1.0 : 0.0);
    longs += full[t - from] > 0, shorts += full[t - from] < 0;
  }
  CHECK_MSG(agree, "%s: median rule is not the sign of the median forecast", name);
  printf("%s: median rule, cost 0: %lld long, %lld short of %lld bars\n", name, (long long)longs, (long long)shorts,
         (long long)(n - from));
  /* long only, sized, a prohibitive cost, the band rule */
  r.allow_short = 0;
  r.sized = 1;
  CHECK_OK(tg_fc_targets(p, &b, from, &r, cut, NULL));
  int ok = 1;
  for (int64_t t = from; t < n; t++) {
    const float *q = out + t * H * NQ + NQ;
    double spread = fabs((double)q[2] - (double)q[0]);
    double want = q[1] > 0 ? (spread > 0 ? fmin(1.0, fabs((double)q[1]) / spread) : 1.0) : 0.0;
    ok &= fabs(cut[t - from] - want) <= 1e-12;
  }
  CHECK_MSG(ok, "%s: long-only sized positions are not min(1, |median| / spread)", name);
  r = tg_fc_rule_defaults();
  r.cost = 1.0;
  CHECK_OK(tg_fc_targets(p, &b, from, &r, cut, NULL));
  ok = 1;
  for (int64_t t = from; t < n; t++) ok &= cut[t - from] == 0.0;
  CHECK_MSG(ok, "%s: a round trip of 100%% still trades", name);
  r.cost = 0;
  CHECK_OK(tg_fc_targets(p, &b, from, &r, cut, NULL));
  ok = 1;
  for (int64_t t = from; t < n; t++) {
    const float *q = out + t * H * NQ + (H - 1) * NQ; /* horizon 0 in the rule: the longest */
    ok &= cut[t - from] == (q[0] > 0 ? 1.0 : q[2] < 0 ? -1.0 : 0.0);
  }
  CHECK_MSG(ok, "%s: the band rule is not long when the lowest quantile > 0, short when the highest < 0", name);
  r.horizon = H + 1;
  CHECK_STATUS(tg_fc_targets(p, &b, from, &r, cut, NULL), TG_ERR_INVALID);
  free(full), free(cut), free(out), free(ready);
  tg_predictor_free(p);
}

/* Several instruments: each keeps its own state, so interleaved bars give each instrument the forecasts it gets
 * alone; the TFT's static embedding follows the instrument id. */
static void check_instruments(void) {
  tg_synth_config sc = tg_synth_defaults();
  sc.bars = 1500;
  sc.instruments = 2;
  sc.signal = 0.5;
  sc.seed = 12;
  tg_bars two;
  CHECK_OK(tg_synth_generate(&sc, &two));
  tg_train_config c = small_config(TG_MODEL_TFT, "tft2");
  CHECK_OK(tg_train_run(&c, &two, NULL));
  tg_predictor *p = NULL;
  CHECK_OK(tg_predictor_open(c.out, NULL, &p));
  if (!p) return;
  CHECK(tg_predictor_get_info(p)->k == 2 && tg_predictor_get_info(p)->ids[1] == 1);
  int64_t n = two.n;
  float *mixed = malloc((size_t)n * H * NQ * sizeof *mixed), f[H * NQ];
  int *ready = calloc((size_t)n, sizeof *ready), r = 0, same = 1, differ = 0;
  for (int64_t t = 0; t < n; t++) {
    tg_pbar bar = {two.ts[t], two.instrument[t], two.open[t], two.high[t], two.low[t], two.close[t], two.volume[t], NULL, NULL};
    CHECK_OK(tg_predictor_push(p, &bar, mixed + t * H * NQ, &ready[t]));
  }
  for (uint32_t id = 0; id < 2; id++) {
    tg_predictor_reset(p);
    for (int64_t t = 0; t < n; t++) {
      if (two.instrument[t] != id) continue;
      tg_pbar bar = {two.ts[t], id, two.open[t], two.high[t], two.low[t], two.close[t], two.volume[t], NULL, NULL};
      CHECK_OK(tg_predictor_push(p, &bar, f, &r));
      same &= r == ready[t] && memcmp(f, mixed + t * H * NQ, sizeof f) == 0;
    }
  }
  CHECK_MSG(same, "interleaved instruments change each other's forecasts");
  /* the same bars under the other instrument's id: another static embedding, other forecasts */
  tg_predictor_reset(p);
  for (int64_t t = 0; t < n; t++) {
    if (two.instrument[t] != 0) continue;
    tg_pbar bar = {two.ts[t], 1, two.open[t], two.high[t], two.low[t], two.close[t], two.volume[t], NULL, NULL};
    CHECK_OK(tg_predictor_push(p, &bar, f, &r));
    if (r) differ |= memcmp(f, mixed + t * H * NQ, sizeof f) != 0;
  }
  CHECK_MSG(differ, "the instrument id does not reach the TFT's static embedding");
  free(mixed);
  free(ready);
  tg_predictor_free(p);
  tg_bars_free(&two);
}

/* A price of 1e308 or 1e-320 (finite and positive, so the predictor takes it) makes features overflow: no forecast is
 * ever NaN or infinite; such bars fail with TG_ERR_NUMERIC naming the bar, and the bars before are unaffected. */
static void check_extreme_prices(const char *name, double extreme) {
  char run[512];
  snprintf(run, sizeof run, "%s/%s", g_tmp, name);
  tg_predictor *p = NULL;
  CHECK_OK(tg_predictor_open(run, NULL, &p));
  if (!p) return;
  float f[H * NQ];
  int ready = 0, refused = 0, emitted = 0, first = 1;
  for (int64_t t = 0; t < 400; t++) {
    tg_pbar bar = {g_bars.ts[t], 0, g_bars.open[t], g_bars.high[t], g_bars.low[t], g_bars.close[t], g_bars.volume[t],
                   NULL, NULL};
    if (t == 300) bar.open = bar.high = bar.low = bar.close = extreme;
    tg_status st = tg_predictor_push(p, &bar, f, &ready);
    if (st == TG_OK) {
      int finite = 1;
      for (int i = 0; ready && i < H * NQ; i++) finite &= isfinite(f[i]) != 0;
      CHECK_MSG(finite, "%s: close %g: bar %lld got a forecast that is not finite", name, extreme, (long long)t);
      emitted += ready;
      continue;
    }
    CHECK_MSG(st == TG_ERR_NUMERIC && t >= 300, "%s: close %g: bar %lld: %s", name, extreme, (long long)t,
              tg_last_error());
    CHECK_MSG(strstr(tg_last_error(), "instrument 0") && strstr(tg_last_error(), " UTC") && ready == 0 && isnan(f[0]),
              "%s: the error names the bar: %s", name, tg_last_error());
    if (first) printf("%s, close %g: %s\n", name, extreme, tg_last_error());
    first = 0;
    refused++;
  }
  CHECK_MSG(refused > 0 && emitted > 0, "%s: close %g: %d bars refused, %d forecast", name, extreme, refused, emitted);
  tg_predictor_free(p);
}

/* Copies run `from` to `to` and rewrites to/best.safetensors with every F32 value v as edit(v, its flat index). */
static void edit_weights(const char *from, const char *to, float (*edit)(float, int64_t)) {
  char cmd[1200], path[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s/%s' && cp -r '%s/%s' '%s/%s'", g_tmp, to, g_tmp, from, g_tmp, to);
  CHECK(system(cmd) == 0);
  snprintf(path, sizeof path, "%s/%s/best.safetensors", g_tmp, to);
  tg_safetensors *f = NULL;
  CHECK_OK(tg_safetensors_load(path, &f));
  if (!f) return;
  int n = tg_safetensors_count(f);
  tg_tensor *ts = calloc((size_t)n, sizeof *ts);
  float **copies = calloc((size_t)n, sizeof *copies);
  for (int k = 0; k < n; k++) {
    ts[k] = *tg_safetensors_at(f, k);
    int64_t m = tg_numel(&ts[k]);
    copies[k] = malloc((size_t)(m ? m : 1) * sizeof(float));
    for (int64_t i = 0; i < m; i++) copies[k][i] = edit(((const float *)ts[k].data)[i], i);
    ts[k].data = copies[k];
  }
  const tg_kv meta[] = {{"format", tg_safetensors_meta(f, "format")}, {"version", tg_safetensors_meta(f, "version")}};
  CHECK_OK(tg_safetensors_save(path, n, ts, 2, meta));
  for (int k = 0; k < n; k++) free(copies[k]);
  free(copies), free(ts);
  tg_safetensors_free(f);
}

static float nan_at_3(float v, int64_t i) { return i == 3 ? NAN : v; }
static float huge(float v, int64_t i) { return (void)i, v * 1e25f; }

/* Weights holding NaN are refused at open by file, tensor and index; finite weights that overflow the network give
 * no forecast: the bar fails naming the output. */
static void check_weights_not_finite(void) {
  char run[512];
  tg_predictor *p = NULL;
  edit_weights("mlp", "nan_weights", nan_at_3);
  snprintf(run, sizeof run, "%s/nan_weights", g_tmp);
  CHECK_STATUS(tg_predictor_open(run, NULL, &p), TG_ERR_NUMERIC);
  CHECK_MSG(p == NULL && strstr(tg_last_error(), "best.safetensors: tensor '") && strstr(tg_last_error(), "NaN at index 3"),
            "NaN weights: %s", tg_last_error());
  edit_weights("mlp", "huge_weights", huge);
  snprintf(run, sizeof run, "%s/huge_weights", g_tmp);
  CHECK_OK(tg_predictor_open(run, NULL, &p));
  if (!p) return;
  float f[H * NQ];
  int ready = 0;
  tg_status st = TG_OK;
  for (int64_t t = 0; t < 200 && st == TG_OK; t++) {
    tg_pbar bar = {g_bars.ts[t], 0, g_bars.open[t], g_bars.high[t], g_bars.low[t], g_bars.close[t], g_bars.volume[t],
                   NULL, NULL};
    st = tg_predictor_push(p, &bar, f, &ready);
    CHECK(st != TG_OK || !ready); /* never a forecast */
  }
  CHECK_STATUS(st, TG_ERR_NUMERIC);
  CHECK_MSG(strstr(tg_last_error(), "forecast h1_q0.1 is") && strstr(tg_last_error(), "instrument 0"),
            "overflowing weights: %s", tg_last_error());
  tg_predictor_free(p);
}

/* inference.json and config.json values out of range are refused at open, naming the file and the key; edits within
 * range are refused as files changed since the run wrote them. */
static void check_meta_ranges(void) {
  static const struct {
    const char *file, *sed, *want;
  } cases[] = {
      {"inference.json", "s/\"target_scales\": \\[/\"target_scales\": [-/", "\"target_scales\"[0] (horizon 1) is -"},
      {"inference.json", "s/\"std\": \\[/\"std\": [-/", "\"std\"[0]"},
      {"inference.json", "s/\"target_scales\": \\[[^]]*\\]/\"target_scales\": []/", "\"target_scales\""},
      {"config.json", "s/\"quantiles\": \\[[^]]*\\]/\"quantiles\": [0.9, 0.5, 0.1]/", "quantile"},
      /* in range, so only the hashes the checkpoint set keeps of them tell: relabelled quantiles, a moved mean */
      {"config.json", "s/\"quantiles\": \\[[^]]*\\]/\"quantiles\": [0.2, 0.5, 0.8]/", "is not the file the run wrote"},
      {"inference.json", "s/\"mean\": \\[/\"mean\": [1e-3, /; s/\"mean\": \\[1e-3, [^,]*,/\"mean\": [1e-3,/",
       "is not the file the run wrote"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char dir[300], cmd[4096];
    snprintf(dir, sizeof dir, "%s/edited%zu", g_tmp, k);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s/mlp' '%s' && sed -i '%s' '%s/%s' && ! cmp -s '%s/%s' '%s/mlp/%s'",
             dir, g_tmp, dir, cases[k].sed, dir, cases[k].file, dir, cases[k].file, g_tmp, cases[k].file);
    CHECK_MSG(system(cmd) == 0, "the edit %s of %s changed nothing", cases[k].sed, cases[k].file);
    tg_predictor *p = NULL;
    tg_status st = tg_predictor_open(dir, NULL, &p);
    CHECK_MSG(st != TG_OK && p == NULL && strstr(tg_last_error(), cases[k].file) && strstr(tg_last_error(), cases[k].want),
              "edit %zu (%s): %s", k, cases[k].sed, st == TG_OK ? "opened" : tg_last_error());
    tg_predictor_free(p);
  }
}

int main(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_predict_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot make a temporary folder");
  tg_synth_config s = tg_synth_defaults();
  s.bars = 4000;
  s.signal = 0.5;
  s.seed = 11;
  CHECK_OK(tg_synth_generate(&s, &g_bars));
  check_window_model(TG_MODEL_MLP, "mlp");
  check_window_model(TG_MODEL_TFT, "tft");
  check_mamba2();
  check_behaviour("mlp");
  check_behaviour("tft");
  check_behaviour("m2");
  check_extreme_prices("mlp", 1e308);
  check_extreme_prices("tft", 1e-320);
  check_extreme_prices("m2", 1e308);
  check_open_errors();
  check_weights_not_finite();
  check_meta_ranges();
  check_instruments();
  check_rule("tft");
  check_rule("m2");
  tg_bars_free(&g_bars);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
