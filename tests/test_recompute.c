/* Activation recomputation: bitwise the same results in every mode (dropout, guards, poison, seeded backward; a graph of most ops and the three forecasters), the TFT's grouped VSN against one group, its arena at most 40%, the markers' misuse errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"

#define B 4
#define L 6
#define D 8
#define H 16
#define V 10
#define N_MODES 3

static const tg_init FAN = {TG_INIT_FAN_IN, 0, 0}, ONE = {TG_INIT_ONES, 0, 0}, ZERO = {TG_INIT_ZEROS, 0, 0};

/* ---- a graph of most ops, with every case the planner tells apart ---- */

typedef struct net {
  tg_store *store;
  tg_graph *g;
  tg_tensor *loss, *probs, *side, *mix, *h, *act;
} net;

static tg_tensor *g_act; /* ffn_block's activation (inside the block), for the seeded backward */

/* "ffn": dropout inside (its value recomputed), a view, an i64 argmax read by gather_rows, a graph output (side) kept
 * inside the block. x [B, L, D] -> [B, L, D]; side [B*L]. */
static tg_tensor *ffn_block(tg_graph *g, tg_tensor *h, tg_tensor **side) {
  int64_t sw1[2] = {H, D}, sh[1] = {H}, sw2[2] = {D, H}, se[2] = {H, D}, flat[2] = {B * L, H}, back[3] = {B, L, D};
  tg_graph_block_begin(g, "ffn");
  tg_tensor *u = g_act = tg_silu(g, tg_linear(g, h, tg_param(g, "w1", 2, sw1, FAN), tg_param(g, "b1", 1, sh, FAN)));
  u = tg_dropout(g, u, 0.25f);                                      /* [B, L, H] */
  tg_tensor *uf = tg_reshape(g, u, 2, flat);                        /* a view, read inside only */
  *side = tg_tanh(g, tg_sum_last(g, uf));                           /* no consumer: a graph output */
  tg_tensor *rows = tg_gather_rows(g, tg_param(g, "pick", 2, se, FAN), tg_argmax_last(g, u)); /* [B, L, D] */
  tg_tensor *v = tg_reshape(g, tg_linear(g, uf, tg_param(g, "w2", 2, sw2, FAN), NULL), 3, back);
  tg_tensor *out = tg_add(g, h, tg_add(g, tg_scale(g, v, 0.5f), rows));
  tg_graph_block_end(g);
  return out;
}

/* "head": transposes, slices, a concat, rmsnorm and a view to [B*L, D]. mix [B, L, D] -> c [B, L, D], logits. */
static tg_tensor *head_block(tg_graph *g, tg_tensor *mix, tg_tensor **logits) {
  int64_t sd[1] = {D}, sq[2] = {D, D}, flat[2] = {B * L, D};
  tg_graph_block_begin(g, "head");
  tg_tensor *t = tg_transpose(g, mix, 1, 2); /* [B, D, L] */
  tg_tensor *parts[2] = {tg_slice(g, t, 1, 0, D / 2), tg_tanh(g, tg_slice(g, t, 1, D / 2, D / 2))};
  tg_tensor *c = tg_transpose(g, tg_concat(g, 2, parts, 1), 1, 2);
  c = tg_rmsnorm(g, c, tg_param(g, "rms.w", 1, sd, ONE), 1e-6f);
  *logits = tg_matmul(g, tg_reshape(g, c, 2, flat), tg_param(g, "proj", 2, sq, FAN), 0, 0);
  tg_graph_block_end(g);
  return c;
}

static tg_tensor *build(net *n) {
  tg_graph *g = n->g;
  int64_t sx[3] = {B, L, D}, st[2] = {B, L}, sc[1] = {B * L}, se[2] = {V, D}, sd[1] = {D};
  tg_tensor *x = tg_input(g, "x", TG_F32, 3, sx), *tok = tg_input(g, "tok", TG_I32, 2, st);
  tg_tensor *cls = tg_input(g, "cls", TG_I64, 1, sc), *y = tg_input(g, "y", TG_F32, 2, st);
  tg_graph_block_begin(g, "embed");
  tg_tensor *h = tg_add(g, x, tg_gather_rows(g, tg_param(g, "emb", 2, se, FAN), tok));
  h = tg_layernorm(g, h, tg_param(g, "ln.g", 1, sd, ONE), tg_param(g, "ln.b", 1, sd, ZERO), 1e-5f);
  tg_graph_block_end(g);
  n->h = h = ffn_block(g, h, &n->side);
  n->act = g_act;
  tg_tensor *att = tg_softmax(g, tg_matmul(g, h, h, 0, 1)); /* unmarked: a segment of its own with all */
  n->mix = tg_matmul(g, att, h, 0, 0);
  tg_tensor *logits = NULL, *c = head_block(g, n->mix, &logits);
  n->probs = tg_exp(g, tg_log_softmax(g, logits));
  tg_tensor *xent = tg_softmax_cross_entropy(g, logits, cls);
  tg_tensor *reg = tg_huber_loss(g, tg_mean_last(g, tg_sigmoid(g, c)), y, 0.5f);
  return tg_add(g, xent, reg);
}

static void *g_data[4];

static int make(net *n, int training, int mode, int debug) {
  memset(n, 0, sizeof *n);
  n->store = tg_store_new(tg_cpu(0), 11);
  n->g = tg_graph_new(n->store, "recompute");
  n->loss = build(n);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  o.training = training;
  o.recompute = mode;
  o.poison = debug;
  o.guard_bytes = debug ? 32 : 0;
  if (!n->loss || tg_graph_plan(n->g, &o) != TG_OK) return 0;
  int64_t sx[3] = {B, L, D}, st[2] = {B, L}, sc[1] = {B * L};
  tg_tensor t[4];
  tg_tensor_view(&t[0], "x", tg_cpu(0), TG_F32, 3, sx, g_data[0]);
  tg_tensor_view(&t[1], "tok", tg_cpu(0), TG_I32, 2, st, g_data[1]);
  tg_tensor_view(&t[2], "cls", tg_cpu(0), TG_I64, 1, sc, g_data[2]);
  tg_tensor_view(&t[3], "y", tg_cpu(0), TG_F32, 2, st, g_data[3]);
  const char *names[4] = {"x", "tok", "cls", "y"};
  for (int i = 0; i < 4; i++)
    if (tg_graph_bind(n->g, names[i], &t[i]) != TG_OK) return 0;
  return 1;
}

static void net_free(net *n) {
  tg_graph_free(n->g);
  tg_store_free(n->store);
}

static int same(const tg_tensor *a, const tg_tensor *b) { return memcmp(a->data, b->data, tg_nbytes(a)) == 0; }

static int same_grads(tg_store *a, tg_store *b) {
  return memcmp(tg_store_grads(a), tg_store_grads(b), tg_store_numel(a) * sizeof(float)) == 0;
}

/* Three training steps in each mode (debug plans for blocks and all): loss, outputs and gradients equal to none's. */
static void check_modes(void) {
  net n[N_MODES];
  for (int m = 0; m < N_MODES; m++) CHECK_MSG(make(&n[m], 1, m, 1), "%s", tg_last_error());
  tg_plan_stats s[N_MODES];
  for (int m = 0; m < N_MODES; m++) s[m] = tg_graph_stats(n[m].g);
  printf("graph: arena none %zu, blocks %zu (%d ops of %d segments again), all %zu (%d ops of %d segments)\n",
         s[0].arena_bytes, s[1].arena_bytes, s[1].recomputed, s[1].segments, s[2].arena_bytes, s[2].recomputed,
         s[2].segments);
  CHECK(s[0].recompute == TG_RECOMPUTE_NONE && s[0].recomputed == 0 && s[0].arena_bytes_no_recompute == s[0].arena_bytes);
  CHECK(s[1].recompute == TG_RECOMPUTE_BLOCKS && s[1].segments == 3 && s[1].recomputed > 0);
  CHECK(s[2].recompute == TG_RECOMPUTE_ALL && s[2].segments == 4 && s[2].recomputed > s[1].recomputed);
  for (int step = 0; step < 3; step++) { /* the dropout mask changes every step */
    for (int m = 0; m < N_MODES; m++) CHECK_OK(tg_graph_run(n[m].g));
    for (int m = 1; m < N_MODES; m++) {
      CHECK_MSG(same(n[0].loss, n[m].loss), "%s: loss differs at step %d", tg_recompute_name(m), step);
      CHECK(same(n[0].probs, n[m].probs));
    }
    for (int m = 0; m < N_MODES; m++) CHECK_OK(tg_graph_backward(n[m].g, n[m].loss));
    CHECK_OK(tg_graph_check_guards(n[0].g));
    for (int m = 1; m < N_MODES; m++) {
      CHECK_MSG(same_grads(n[0].store, n[m].store), "%s: gradients differ at step %d", tg_recompute_name(m), step);
      CHECK_MSG(same(n[0].side, n[m].side), "%s: the output inside a block changed", tg_recompute_name(m));
      CHECK(same(n[0].probs, n[m].probs));
      CHECK_OK(tg_graph_check_guards(n[m].g));
    }
  }
  for (int m = 0; m < N_MODES; m++) net_free(&n[m]);
}

/* Backward seeded at an inner node: at mix (inside all's implicit segment, below the head block) and at the silu
 * inside the ffn block, whose recompute runs before the seed's gradient buffer is live: the same gradients. */
static void check_seeded_at(int at_act) {
  net n[N_MODES];
  static float seed[B * L * H];
  for (int i = 0; i < B * L * H; i++) seed[i] = tg_rng_uniform(21, 0, (uint64_t)i) - 0.5f;
  for (int m = 0; m < N_MODES; m++) {
    CHECK_MSG(make(&n[m], 1, m, 1), "%s", tg_last_error());
    CHECK_OK(tg_graph_run(n[m].g));
    CHECK_OK(tg_store_zero_grads(n[m].store));
    CHECK_OK(tg_graph_backward_seeded(n[m].g, at_act ? n[m].act : n[m].mix, seed));
    CHECK_OK(tg_graph_check_guards(n[m].g));
  }
  for (int m = 1; m < N_MODES; m++) {
    CHECK_MSG(same_grads(n[0].store, n[m].store), "%s: gradients seeded at %s differ", tg_recompute_name(m),
              at_act ? "silu" : "mix");
    if (!at_act)
      CHECK(memcmp(tg_graph_grad(n[0].g, n[0].h), tg_graph_grad(n[m].g, n[m].h), sizeof(float) * B * L * D) == 0);
  }
  for (int m = 0; m < N_MODES; m++) net_free(&n[m]);
}

static void check_seeded(void) {
  check_seeded_at(0);
  check_seeded_at(1);
}

/* Inference plans never recompute: the option is ignored and the numbers are none's. */
static void check_inference(void) {
  net a, b;
  CHECK(make(&a, 0, TG_RECOMPUTE_NONE, 0) && make(&b, 0, TG_RECOMPUTE_ALL, 0));
  tg_plan_stats s = tg_graph_stats(b.g);
  CHECK(s.recompute == TG_RECOMPUTE_NONE && s.recomputed == 0 && s.arena_bytes == tg_graph_stats(a.g).arena_bytes);
  CHECK_OK(tg_graph_run(a.g));
  CHECK_OK(tg_graph_run(b.g));
  CHECK(same(a.probs, b.probs) && same(a.loss, b.loss));
  net_free(&a);
  net_free(&b);
}

/* A seed set after plan reaches backward and the recompute: with y = dropout(x) in a block that recomputes it and
 * loss = sum(y * y), the gradient is 2 y * mask / (1 - p) = 2 y^2 / x. */
static void check_seed_after_plan(void) {
  for (int m = 0; m < N_MODES; m++) {
    int64_t s[2] = {8, 16};
    tg_store *st = tg_store_new(tg_cpu(0), 2);
    tg_graph *g = tg_graph_new(st, "seeded");
    tg_tensor *x = tg_param(g, "x", 2, s, (tg_init){TG_INIT_UNIFORM, 0.5f, 1.5f});
    tg_graph_block_begin(g, "drop");
    tg_tensor *y = tg_dropout(g, x, 0.5f);
    tg_tensor *sq = tg_mul(g, y, y); /* reads y in backward: y is recomputed */
    tg_graph_block_end(g);
    tg_tensor *loss = tg_sum(g, sq);
    tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
    o.recompute = m;
    CHECK_OK(tg_graph_plan(g, &o));
    CHECK_OK(tg_graph_set_seed(g, 1234, 77));
    CHECK_OK(tg_graph_run(g));
    float y2[8 * 16];
    memcpy(y2, sq->data, sizeof y2); /* before backward, which may reuse its memory */
    CHECK_OK(tg_graph_backward(g, loss));
    const float *xv = x->data, *gx = tg_store_grads(st);
    int ok = 1, dropped = 0;
    for (int i = 0; i < 8 * 16; i++) {
      ok &= fabsf(gx[i] - 2.0f * y2[i] / xv[i]) <= 1e-5f * (1.0f + fabsf(gx[i]));
      dropped += y2[i] == 0.0f;
    }
    CHECK(dropped > 0 && dropped < 8 * 16);
    CHECK_MSG(ok, "%s: the backward's dropout mask is not the forward's", tg_recompute_name(m));
    tg_graph_free(g);
    tg_store_free(st);
  }
}

/* ---- misuse of the markers: sticky errors naming the block ---- */

static tg_graph *small_graph(tg_store **s) {
  int64_t sx[2] = {2, 3};
  *s = tg_store_new(tg_cpu(0), 1);
  tg_graph *g = tg_graph_new(*s, "misuse");
  tg_relu(g, tg_input(g, "x", TG_F32, 2, sx));
  return g;
}

static void expect_sticky(tg_graph *g, const char *needle) {
  CHECK(tg_graph_status(g) == TG_ERR_INVALID);
  int64_t sx[2] = {2, 3};
  CHECK(tg_input(g, "late", TG_F32, 2, sx) == NULL); /* builders stop */
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  CHECK_STATUS(tg_graph_plan(g, &o), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), needle) != NULL, "'%s' not in: %s", needle, tg_last_error());
}

static void check_misuse(void) {
  tg_store *s;
  tg_graph *g = small_graph(&s);
  CHECK_OK(tg_graph_block_begin(g, "outer"));
  CHECK_STATUS(tg_graph_block_begin(g, "inner"), TG_ERR_INVALID);
  expect_sticky(g, "block 'outer' is still open");
  CHECK_STATUS(tg_graph_block_end(g), TG_ERR_INVALID); /* the first error stays */
  CHECK(strstr(tg_last_error(), "'outer'") != NULL);
  tg_graph_free(g);
  tg_store_free(s);

  g = small_graph(&s);
  CHECK_STATUS(tg_graph_block_end(g), TG_ERR_INVALID);
  expect_sticky(g, "no block is open");
  tg_graph_free(g);
  tg_store_free(s);

  g = small_graph(&s);
  CHECK_OK(tg_graph_block_begin(g, "left.open"));
  tg_plan_opts po = tg_plan_defaults(tg_cpu(0));
  CHECK_STATUS(tg_graph_plan(g, &po), TG_ERR_INVALID); /* found at plan, then sticky */
  expect_sticky(g, "block 'left.open' was begun but never ended");
  tg_graph_free(g);
  tg_store_free(s);

  g = small_graph(&s);
  CHECK_STATUS(tg_graph_block_begin(g, NULL), TG_ERR_INVALID);
  expect_sticky(g, "needs a name");
  tg_graph_free(g);
  tg_store_free(s);

  g = small_graph(&s);
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  o.recompute = TG_RECOMPUTE_COUNT;
  CHECK_STATUS(tg_graph_plan(g, &o), TG_ERR_INVALID); /* a bad option is the call's error, not the graph's */
  CHECK(strstr(tg_last_error(), "recompute") != NULL && tg_graph_status(g) == TG_OK);
  o.recompute = TG_RECOMPUTE_BLOCKS;
  CHECK_OK(tg_graph_plan(g, &o));
  CHECK_STATUS(tg_graph_block_begin(g, "late"), TG_ERR_INVALID);
  CHECK(strstr(tg_last_error(), "already planned") != NULL && tg_graph_status(g) == TG_ERR_INVALID);
  tg_graph_free(g);
  tg_store_free(s);
  CHECK(strcmp(tg_recompute_name(TG_RECOMPUTE_BLOCKS), "blocks") == 0 && tg_recompute_name(-1) == NULL);
}

/* ---- the forecasters ---- */

typedef struct fc {
  tg_store *store;
  tg_graph *g;
  tg_tensor *pred, *loss;
  tg_tensor in[4]; /* past, future, inst, target: views of host data */
} fc;

/* Random inputs for c at batch b: past, future (TFT), inst (TFT), target; freed by the caller. */
static void fc_data(const tg_forecast_cfg *c, int64_t b, int64_t lp, float **past, float **fut, int64_t **inst,
                    float **tgt) {
  int64_t np = b * lp * c->n_past, nf = b * c->tft.dec_len * c->n_future;
  *past = malloc((size_t)np * sizeof **past);
  *fut = malloc((size_t)(nf > 0 ? nf : 1) * sizeof **fut);
  *inst = malloc((size_t)b * sizeof **inst);
  *tgt = malloc((size_t)(b * c->horizons) * sizeof **tgt);
  for (int64_t i = 0; i < np; i++) (*past)[i] = 2.0f * tg_rng_uniform(31, 0, (uint64_t)i) - 1.0f;
  for (int64_t i = 0; i < nf; i++) (*fut)[i] = 2.0f * tg_rng_uniform(31, 1, (uint64_t)i) - 1.0f;
  for (int64_t i = 0; i < b; i++) (*inst)[i] = i % c->n_static;
  for (int64_t i = 0; i < b * c->horizons; i++) (*tgt)[i] = tg_rng_uniform(31, 2, (uint64_t)i) - 0.5f;
}

static int64_t past_len(const tg_forecast_cfg *c) {
  return c->kind == TG_MODEL_TFT           ? c->tft.enc_len
         : c->kind == TG_MODEL_MAMBA2      ? c->mamba.seq_len
         : c->kind == TG_MODEL_TRANSFORMER ? c->transformer.seq_len
                                           : c->mlp.window;
}

/* The forecaster c with its pinball loss on inputs bound to data, planned for training in mode. */
static int fc_make(fc *f, const tg_forecast_cfg *c, int64_t b, int mode, int debug, void *const *data) {
  memset(f, 0, sizeof *f);
  f->store = tg_store_new(tg_cpu(0), 5);
  f->g = tg_graph_new(f->store, "forecaster");
  int tft = c->kind == TG_MODEL_TFT;
  int64_t ps[3] = {b, past_len(c), c->n_past}, fs[3] = {b, c->tft.dec_len, c->n_future}, is[1] = {b};
  int64_t ts[2] = {b, c->horizons};
  tg_forecast_inputs in = {tg_input(f->g, "past", TG_F32, 3, ps), tft ? tg_input(f->g, "future", TG_F32, 3, fs) : NULL,
                           tft ? tg_input(f->g, "inst", TG_I64, 1, is) : NULL};
  f->pred = tg_forecast_build(f->g, c, &in);
  f->loss = f->pred ? tg_pinball_loss(f->g, f->pred, tg_input(f->g, "target", TG_F32, 2, ts), c->nq, c->q) : NULL;
  tg_plan_opts o = tg_plan_defaults(tg_cpu(0));
  o.recompute = mode;
  o.poison = debug;
  o.guard_bytes = debug ? 64 : 0;
  if (!f->loss || tg_graph_plan(f->g, &o) != TG_OK) return 0;
  tg_tensor_view(&f->in[0], "past", tg_cpu(0), TG_F32, 3, ps, data[0]);
  tg_tensor_view(&f->in[1], "future", tg_cpu(0), TG_F32, 3, fs, data[1]);
  tg_tensor_view(&f->in[2], "inst", tg_cpu(0), TG_I64, 1, is, data[2]);
  tg_tensor_view(&f->in[3], "target", tg_cpu(0), TG_F32, 2, ts, data[3]);
  const char *names[4] = {"past", "future", "inst", "target"};
  for (int i = 0; i < 4; i++)
    if ((tft || i == 0 || i == 3) && tg_graph_bind(f->g, names[i], &f->in[i]) != TG_OK) return 0;
  return 1;
}

static void fc_free(fc *f) {
  tg_graph_free(f->g);
  tg_store_free(f->store);
}

/* Two training steps of c at batch b: with blocks and all (guard bytes, poison) bitwise none's. */
static void check_forecaster(const char *what, const tg_forecast_cfg *c, int64_t b) {
  float *past, *fut, *tgt;
  int64_t *inst;
  fc_data(c, b, past_len(c), &past, &fut, &inst, &tgt);
  void *data[4] = {past, fut, inst, tgt};
  fc f[N_MODES];
  for (int m = 0; m < N_MODES; m++) CHECK_MSG(fc_make(&f[m], c, b, m, m > 0, data), "%s: %s", what, tg_last_error());
  tg_plan_stats s = tg_graph_stats(f[TG_RECOMPUTE_BLOCKS].g);
  printf("%s: %d ops of %d segments recomputed with blocks, arena %zu bytes (%zu without)\n", what, s.recomputed,
         s.segments, s.arena_bytes, s.arena_bytes_no_recompute);
  CHECK_MSG(s.recomputed > 0, "%s: its blocks recompute nothing", what);
  for (int step = 0; step < 2; step++) {
    for (int m = 0; m < N_MODES; m++) CHECK_OK(tg_graph_run(f[m].g));
    for (int m = 1; m < N_MODES; m++) { /* the forecast before backward: its buffer is reused after */
      CHECK_MSG(same(f[0].pred, f[m].pred), "%s %s: forecast differs at step %d", what, tg_recompute_name(m), step);
      CHECK_MSG(same(f[0].loss, f[m].loss), "%s %s: loss differs at step %d", what, tg_recompute_name(m), step);
    }
    for (int m = 0; m < N_MODES; m++) CHECK_OK(tg_graph_backward(f[m].g, f[m].loss));
    for (int m = 1; m < N_MODES; m++) {
      CHECK_MSG(same_grads(f[0].store, f[m].store), "%s %s: gradients differ at step %d", what, tg_recompute_name(m), step);
      CHECK_OK(tg_graph_check_guards(f[m].g));
    }
  }
  for (int m = 0; m < N_MODES; m++) fc_free(&f[m]);
  free(past);
  free(fut);
  free(inst);
  free(tgt);
}

static tg_forecast_cfg tft_cfg(int hidden, int enc, int dec, int n_past) {
  tg_forecast_cfg c = tg_forecast_defaults(TG_MODEL_TFT);
  c.n_past = n_past;
  c.n_future = 2;
  c.n_static = 2;
  c.horizons = dec;
  c.dropout = 0.2f;
  c.tft = (tg_tft_cfg){.hidden = hidden, .heads = 2, .enc_len = enc, .dec_len = dec};
  return c;
}

/* A TFT large enough that its VSNs run the per-variable GRNs in groups (hidden 32, encoder 64, 16 past features,
 * batch 16: four groups of 4). */
#define GROUPED_BATCH 16
static tg_forecast_cfg grouped_tft_cfg(void) { return tft_cfg(32, 64, 8, 16); }

static void check_forecasters(void) {
  tg_forecast_cfg t = tft_cfg(8, 6, 3, 3);
  check_forecaster("tft", &t, 3);
  tg_forecast_cfg tg = grouped_tft_cfg();
  check_forecaster("tft grouped", &tg, GROUPED_BATCH);
  tg_forecast_cfg m = tg_forecast_defaults(TG_MODEL_MAMBA2);
  m.n_past = 3;
  m.horizons = 2;
  m.dropout = 0.2f;
  m.mamba = (tg_mamba2_cfg){.d_model = 8, .n_layers = 2, .d_state = 4, .headdim = 4, .expand = 2, .d_conv = 3,
                            .ngroups = 1, .chunk = 4, .seq_len = 6};
  check_forecaster("mamba2", &m, 2);
  tg_forecast_cfg p = tg_forecast_defaults(TG_MODEL_MLP);
  p.n_past = 3;
  p.horizons = 2;
  p.dropout = 0.3f;
  p.mlp = (tg_mlp_cfg){.window = 4, .hidden = 8};
  check_forecaster("mlp", &p, 5);
  tg_forecast_cfg r = tg_forecast_defaults(TG_MODEL_TRANSFORMER);
  r.n_past = 3;
  r.horizons = 2;
  r.dropout = 0.2f;
  r.transformer = (tg_transformer_cfg){.d_model = 8, .n_heads = 2, .n_layers = 2, .seq_len = 6};
  check_forecaster("transformer", &r, 3);
}

/* The grouped TFT at batch 16 computes what it does one window at a time, where each window's VSN is one group:
 * the same forecasts and (the loss being a mean over the batch) the mean of the single windows' gradients. */
static void check_tft_groups(void) {
  tg_forecast_cfg c = grouped_tft_cfg();
  c.dropout = 0.0f;
  int64_t nb = GROUPED_BATCH, lp = c.tft.enc_len, per_pred = c.tft.dec_len * c.nq;
  float *past, *fut, *tgt;
  int64_t *inst;
  fc_data(&c, nb, lp, &past, &fut, &inst, &tgt);
  void *data[4] = {past, fut, inst, tgt};
  fc all;
  CHECK_MSG(fc_make(&all, &c, nb, TG_RECOMPUTE_NONE, 0, data), "%s", tg_last_error());
  CHECK_OK(tg_graph_run(all.g));
  float *pred = malloc((size_t)(nb * per_pred) * sizeof *pred); /* before backward, which reuses its buffer */
  memcpy(pred, all.pred->data, (size_t)(nb * per_pred) * sizeof *pred);
  CHECK_OK(tg_graph_backward(all.g, all.loss));
  size_t np = tg_store_numel(all.store);
  double *mean = calloc(np, sizeof *mean), worst_pred = 0.0, worst_grad = 0.0, scale = 0.0, pscale = 0.0;
  for (int64_t i = 0; i < nb * per_pred; i++) pscale = fmax(pscale, fabs(pred[i]));
  for (int64_t r = 0; r < nb; r++) {
    void *row[4] = {past + r * lp * c.n_past, fut + r * c.tft.dec_len * c.n_future, inst + r, tgt + r * c.horizons};
    fc one;
    CHECK_MSG(fc_make(&one, &c, 1, TG_RECOMPUTE_NONE, 0, row), "%s", tg_last_error());
    CHECK_MSG(memcmp(tg_store_values(one.store), tg_store_values(all.store), np * sizeof(float)) == 0,
              "window %lld: the stores start from different weights", (long long)r);
    CHECK_OK(tg_graph_run(one.g));
    const float *p1 = one.pred->data, *pa = pred + r * per_pred, *g1 = tg_store_grads(one.store);
    for (int64_t i = 0; i < per_pred; i++) worst_pred = fmax(worst_pred, fabs((double)p1[i] - pa[i]));
    CHECK_OK(tg_graph_backward(one.g, one.loss));
    for (size_t i = 0; i < np; i++) mean[i] += g1[i] / (double)nb;
    fc_free(&one);
  }
  const float *ga = tg_store_grads(all.store);
  for (size_t i = 0; i < np; i++) {
    worst_grad = fmax(worst_grad, fabs(ga[i] - mean[i]));
    scale = fmax(scale, fabs(mean[i]));
  }
  printf("tft grouped VSN against one window at a time: forecasts differ by %.3g (largest %.3g), gradients by %.3g "
         "(largest %.3g)\n", worst_pred, pscale, worst_grad, scale);
  CHECK_MSG(pscale > 0.0 && worst_pred <= 1e-4 * pscale, "grouped forecasts differ by %.3g of %.3g", worst_pred, pscale);
  CHECK_MSG(scale > 0.0 && worst_grad <= 1e-4 * scale, "grouped gradients differ by %.3g of %.3g", worst_grad, scale);
  fc_free(&all);
  free(pred);
  free(mean);
  free(past);
  free(fut);
  free(inst);
  free(tgt);
}

/* The TFT at its defaults (hidden 64, 4 heads, encoder 64, decoder 8, 16 past and 4 future features, batch 32),
 * planned only: recomputing its blocks needs at most 40% of the arena without (the memory goal), all no
 * more than blocks. */
#define DEFAULT_BATCH 32
static void check_tft_arena(void) {
  tg_forecast_cfg c = tg_forecast_defaults(TG_MODEL_TFT);
  c.n_past = 16;
  c.n_future = 4;
  c.horizons = c.tft.dec_len;
  float *past, *fut, *tgt;
  int64_t *inst;
  fc_data(&c, DEFAULT_BATCH, c.tft.enc_len, &past, &fut, &inst, &tgt);
  void *data[4] = {past, fut, inst, tgt};
  size_t bytes[N_MODES];
  for (int m = 0; m < N_MODES; m++) {
    fc f;
    CHECK_MSG(fc_make(&f, &c, DEFAULT_BATCH, m, 0, data), "%s", tg_last_error());
    bytes[m] = tg_graph_stats(f.g).arena_bytes;
    CHECK(tg_graph_stats(f.g).arena_bytes_no_recompute == bytes[0]);
    fc_free(&f);
  }
  printf("tft at its defaults, batch 32: arena none %zu, blocks %zu (%.0f%%), all %zu (%.0f%%)\n",
         bytes[0], bytes[1], 100.0 * (double)bytes[1] / (double)bytes[0], bytes[2],
         100.0 * (double)bytes[2] / (double)bytes[0]);
  CHECK_MSG(bytes[1] <= 0.4 * (double)bytes[0], "blocks: %zu bytes, over 40%% of none's %zu", bytes[1], bytes[0]);
  CHECK(bytes[2] <= bytes[1]);
  free(past);
  free(fut);
  free(inst);
  free(tgt);
}

int main(void) {
  static float x[B * L * D], y[B * L];
  static int32_t tok[B * L];
  static int64_t cls[B * L];
  for (int i = 0; i < B * L * D; i++) x[i] = 2.0f * tg_rng_uniform(3, 1, (uint64_t)i) - 1.0f;
  for (int i = 0; i < B * L; i++) {
    y[i] = tg_rng_uniform(3, 2, (uint64_t)i);
    tok[i] = (int32_t)(tg_rng_uniform(3, 3, (uint64_t)i) * V) % V;
    cls[i] = (int64_t)(tg_rng_uniform(3, 4, (uint64_t)i) * D) % D;
  }
  g_data[0] = x, g_data[1] = tok, g_data[2] = cls, g_data[3] = y;
  check_modes();
  check_seeded();
  check_inference();
  check_seed_after_plan();
  check_misuse();
  check_forecasters();
  check_tft_groups();
  check_tft_arena();
  return tg_test_finish();
}
