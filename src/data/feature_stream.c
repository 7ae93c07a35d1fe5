/* Features one bar at a time (live data): per-instrument state through the same per-bar update as tg_features_compute. */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "data/features_internal.h"
#include "data/timeconv.h"

struct tg_feature_stream {
  tg_fplan plan;              /* plan.tz points at tz */
  char *tz;                   /* the zone's name (NULL: UTC) */
  char (*names)[TG_NAME_MAX]; /* [f] */
  tg_finst *inst;             /* [k] */
};

void tg_feature_stream_free(tg_feature_stream *s) {
  if (!s) return;
  if (s->inst)
    for (int j = 0; j < s->plan.k; j++) tg_finst_free(&s->inst[j]);
  tg_free(s->inst);
  tg_free(s->names);
  tg_free(s->tz);
  tg_free(s);
}

static tg_status check_ids(const uint32_t *ids, int k) {
  if (k < 1 || !ids)
    return tg_error(TG_ERR_INVALID, "feature stream: %d instrument ids%s (need at least 1)", k, ids ? "" : " (NULL)");
  for (int j = 1; j < k; j++)
    if (ids[j] <= ids[j - 1])
      return tg_error(TG_ERR_INVALID, "feature stream: instrument ids must be strictly ascending (as tg_layout.ids): "
                      "ids[%d] = %u follows ids[%d] = %u", j, ids[j], j - 1, ids[j - 1]);
  return TG_OK;
}

/* The stream's own copy of the zone name, the names and the per-instrument states (plan made already). */
static tg_status alloc_parts(tg_feature_stream *s, const char *tz, const uint32_t *ids) {
  const tg_fplan *p = &s->plan;
  if (p->zone) {
    size_t len = strlen(tz);
    if (!(s->tz = tg_malloc(len + 1))) return tg_error(TG_ERR_NOMEM, "feature stream: out of memory");
    memcpy(s->tz, tz, len + 1);
    s->plan.tz = s->tz;
  }
  s->names = tg_calloc((size_t)p->f, sizeof *s->names);
  s->inst = tg_calloc((size_t)p->k, sizeof *s->inst);
  if (!s->names || !s->inst) return tg_error(TG_ERR_NOMEM, "feature stream: out of memory for %d instruments", p->k);
  for (int c = 0; c < p->f; c++) {
    int32_t warm;
    uint8_t scale;
    tg_fplan_column(p, ids, c, s->names[c], &warm, &scale);
  }
  for (int j = 0; j < p->k; j++) {
    tg_status st = tg_finst_init(&s->inst[j], p);
    if (st != TG_OK) return st;
  }
  return TG_OK;
}

tg_status tg_feature_stream_new(const tg_feature_opts *opts, const uint32_t *ids, int k, tg_feature_stream **out) {
  *out = NULL;
  tg_status st = check_ids(ids, k);
  if (st != TG_OK) return st;
  tg_feature_stream *s = tg_calloc(1, sizeof *s);
  if (!s) return tg_error(TG_ERR_NOMEM, "feature stream: out of memory");
  const char *tz = opts ? opts->tz : NULL;
  st = tg_fplan_make(opts ? opts->spec : NULL, tz, k, &s->plan);
  if (st == TG_OK) st = alloc_parts(s, tz, ids);
  if (st != TG_OK) {
    tg_feature_stream_free(s);
    return st;
  }
  *out = s;
  return TG_OK;
}

int tg_feature_stream_width(const tg_feature_stream *s) { return s->plan.f; }

const char *tg_feature_stream_name(const tg_feature_stream *s, int col) {
  return col >= 0 && col < s->plan.f ? s->names[col] : NULL;
}

int tg_feature_stream_warmup(const tg_feature_stream *s) { return s->plan.warmup_max; }

void tg_feature_stream_reset(tg_feature_stream *s) {
  for (int j = 0; j < s->plan.k; j++) tg_finst_reset(&s->inst[j], &s->plan);
}

tg_status tg_feature_stream_push(tg_feature_stream *s, int inst, int64_t ts, double open, double high, double low,
                                 double close, double volume, float *row, int *valid) {
  if (inst < 0 || inst >= s->plan.k)
    return tg_error(TG_ERR_INVALID, "feature stream: instrument index %d is out of range (0..%d)", inst, s->plan.k - 1);
  tg_finst *in = &s->inst[inst];
  char t[48], prev[48];
  if (in->i > 0 && ts < in->last_ts)
    return tg_error(TG_ERR_INVALID, "feature stream: instrument %d: bar at %s is earlier than its previous bar at %s",
                    inst, tg_format_utc(ts, 1, t, sizeof t), tg_format_utc(in->last_ts, 1, prev, sizeof prev));
  tg_fbar b = {ts, open, high, low, close, volume};
  int bad = tg_fbar_bad(&b);
  if (bad) {
    char where[128];
    snprintf(where, sizeof where, "feature stream: instrument %d, bar %lld at %s", inst, (long long)in->i,
             tg_format_utc(ts, 1, t, sizeof t));
    return tg_fbar_error(&b, bad, where);
  }
  int64_t i = in->i;
  tg_status st = tg_feature_bar(&s->plan, in, inst, &b, row);
  if (st != TG_OK) return st;
  if (valid) *valid = i >= s->plan.warmup_max;
  return TG_OK;
}
