/* Resampling bars to a coarser interval on the local wall clock of a zone, with a session filter,
 * per instrument; and parsing interval strings such as "5m". */
#include <stdlib.h>
#include <string.h>
#include "base/intmath.h"
#include "base/alloc.h"
#include "data/readers/timeconv.h"
#include "tickgrad/data.h"


tg_status tg_interval_parse(const char *s, int64_t *ns) {
  static const struct { const char *name; int64_t ns; } units[] = {
      {"ns", 1},
      {"us", 1000LL},
      {"ms", 1000000LL},
      {"s", TG_NS_PER_S},
      {"m", 60LL * TG_NS_PER_S},
      {"min", 60LL * TG_NS_PER_S},
      {"h", 3600LL * TG_NS_PER_S},
      {"d", TG_NS_PER_DAY},
      {"w", 7LL * TG_NS_PER_DAY},
  };
  if (!s || !ns) return tg_error(TG_ERR_INVALID, "interval: no string given");
  const char *p = s;
  int64_t v = 0;
  if (*p < '0' || *p > '9')
    return tg_error(TG_ERR_INVALID, "interval '%s': want a whole number and a unit, such as 30s, 5m, 1h, 1d", s);
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > (INT64_MAX - 9) / 10) return tg_error(TG_ERR_INVALID, "interval '%s': number too large", s);
    v = v * 10 + (*p - '0');
  }
  if (!*p) return tg_error(TG_ERR_INVALID, "interval '%s': no unit (use ns, us, ms, s, m, h, d or w)", s);
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcmp(p, units[i].name) != 0) continue;
    if (v == 0) return tg_error(TG_ERR_INVALID, "interval '%s': must be positive", s);
    if (v > INT64_MAX / units[i].ns) return tg_error(TG_ERR_INVALID, "interval '%s': too long for int64 nanoseconds", s);
    *ns = v * units[i].ns;
    return TG_OK;
  }
  return tg_error(TG_ERR_INVALID, "interval '%s': unknown unit '%s' (use ns, us, ms, s, m, h, d or w)", s, p);
}


/* The UTC instant (ns) of the local wall-clock time local_ns, preferring the reading with offset off
 * (the offset of the bar that falls in the bucket), so the two repeated autumn hours stay apart. */
static tg_status local_start_to_utc(const char *tz, int64_t local_ns, int off, int64_t *utc_ns) {
  int64_t cand = local_ns - (int64_t)off * TG_NS_PER_S;
  int o2, o3;
  tg_status st = tg_tz_offset_at_utc(tz, tg_floor_div(cand, TG_NS_PER_S), &o2);
  if (st != TG_OK) return st;
  if (o2 == off) {
    *utc_ns = cand;
    return TG_OK;
  }
  int64_t cand2 = local_ns - (int64_t)o2 * TG_NS_PER_S;
  if ((st = tg_tz_offset_at_utc(tz, tg_floor_div(cand2, TG_NS_PER_S), &o3)) != TG_OK) return st;
  if (o3 == o2) {
    *utc_ns = cand2;
    return TG_OK;
  }
  /* the local start does not exist (a spring gap): the zone code moves it forward by the gap */
  int64_t local_s = tg_floor_div(local_ns, TG_NS_PER_S), utc_s;
  if ((st = tg_tz_local_to_utc(tz, local_s, &utc_s)) != TG_OK) return st;
  *utc_ns = utc_s * TG_NS_PER_S + (local_ns - local_s * TG_NS_PER_S);
  return TG_OK;
}

/* One instrument's open bucket. */
typedef struct bucket {
  int64_t key;
  double open, high, low, close, volume;
  uint32_t instrument;
  int used;
} bucket;

static int u32_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* Maps instrument ids to dense slots: directly when the ids are small, else through a sorted list. */
typedef struct slots {
  uint32_t *ids; /* [count] sorted distinct ids, or NULL for direct indexing */
  int64_t count;
} slots;

static tg_status slots_build(const tg_bars *in, slots *s) {
  memset(s, 0, sizeof *s);
  if (!in->instrument || in->n == 0) {
    s->count = 1;
    return TG_OK;
  }
  uint32_t max = 0;
  for (int64_t i = 0; i < in->n; i++) max = in->instrument[i] > max ? in->instrument[i] : max;
  if (max < 65536) {
    s->count = (int64_t)max + 1;
    return TG_OK;
  }
  s->ids = tg_malloc(sizeof(uint32_t) * (size_t)in->n);
  if (!s->ids) return tg_error(TG_ERR_NOMEM, "resample: out of memory for %lld instrument ids", (long long)in->n);
  memcpy(s->ids, in->instrument, sizeof(uint32_t) * (size_t)in->n);
  qsort(s->ids, (size_t)in->n, sizeof(uint32_t), u32_cmp);
  int64_t k = 0;
  for (int64_t i = 0; i < in->n; i++)
    if (i == 0 || s->ids[i] != s->ids[k - 1]) s->ids[k++] = s->ids[i];
  s->count = k;
  return TG_OK;
}

static int64_t slot_of(const slots *s, uint32_t id) {
  if (!s->ids) return s->count == 1 ? 0 : (int64_t)id;
  const uint32_t *p = bsearch(&id, s->ids, (size_t)s->count, sizeof(uint32_t), u32_cmp);
  return p - s->ids;
}

static tg_status emit(tg_bars *out, const bucket *b) {
  return tg_bars_push(out, b->key, b->open, b->high, b->low, b->close, b->volume, b->instrument);
}

tg_status tg_bars_resample(const tg_bars *in, const tg_resample_opts *opts, tg_bars *out) {
  if (!in || !opts || !out) return tg_error(TG_ERR_INVALID, "resample: bars, options and output are all required");
  if (in == out) return tg_error(TG_ERR_INVALID, "resample: the output must be a different tg_bars than the input");
  tg_bars_init(out);
  int64_t iv = opts->interval_ns;
  if (iv <= 0) return tg_error(TG_ERR_INVALID, "resample: interval_ns %lld must be positive", (long long)iv);
  int filter = opts->session_start_min < opts->session_end_min;
  if (filter && (opts->session_start_min < 0 || opts->session_end_min > 1440))
    return tg_error(TG_ERR_INVALID, "resample: session %d..%d minutes must lie within 0..1440", opts->session_start_min,
                    opts->session_end_min);
  tg_status st = tg_tz_check(opts->tz);
  if (st != TG_OK) return st;
  for (int64_t i = 1; i < in->n; i++)
    if (in->ts[i] < in->ts[i - 1]) {
      char t0[TG_TIME_TEXT], t1[TG_TIME_TEXT];
      return tg_error(TG_ERR_INVALID, "resample: input is not sorted by time at bar %lld (%s, after %s; call "
                      "tg_bars_sort first)", (long long)i, tg_format_time(in->ts[i], t1, sizeof t1),
                      tg_format_time(in->ts[i - 1], t0, sizeof t0));
    }
  snprintf(out->source, sizeof out->source, "%s", in->source);
  snprintf(out->format, sizeof out->format, "%s", in->format);
  if ((st = tg_bars_reserve(out, 1024, in->instrument != NULL)) != TG_OK) return st;
  if (in->n == 0) return TG_OK;

  slots sl;
  if ((st = slots_build(in, &sl)) != TG_OK) return st;
  bucket *acc = tg_calloc((size_t)sl.count, sizeof *acc);
  if (!acc) {
    tg_free(sl.ids);
    return tg_error(TG_ERR_NOMEM, "resample: out of memory for %lld instruments", (long long)sl.count);
  }
  const int64_t day_ns = TG_NS_PER_DAY, min_ns = 60LL * TG_NS_PER_S;
  for (int64_t i = 0; i < in->n && st == TG_OK; i++) {
    int64_t t = in->ts[i];
    int off;
    if ((st = tg_tz_offset_at_utc(opts->tz, tg_floor_div(t, TG_NS_PER_S), &off)) != TG_OK) break;
    int64_t local = t + (int64_t)off * TG_NS_PER_S;
    if (filter) {
      int64_t minute = (local - tg_floor_div(local, day_ns) * day_ns) / min_ns;
      if (minute < opts->session_start_min || minute >= opts->session_end_min) continue;
    }
    int64_t key;
    if ((st = local_start_to_utc(opts->tz, tg_floor_div(local, iv) * iv, off, &key)) != TG_OK) break;
    uint32_t id = in->instrument ? in->instrument[i] : 0;
    bucket *b = &acc[slot_of(&sl, id)];
    if (b->used && b->key == key) {
      if (in->high[i] > b->high) b->high = in->high[i];
      if (in->low[i] < b->low) b->low = in->low[i];
      b->close = in->close[i];
      b->volume += in->volume[i];
      continue;
    }
    if (b->used && (st = emit(out, b)) != TG_OK) break;
    *b = (bucket){key, in->open[i], in->high[i], in->low[i], in->close[i], in->volume[i], id, 1};
  }
  for (int64_t s = 0; s < sl.count && st == TG_OK; s++)
    if (acc[s].used) st = emit(out, &acc[s]);
  tg_free(acc);
  tg_free(sl.ids);
  if (st == TG_OK) st = tg_bars_sort(out, NULL);
  if (st != TG_OK) tg_bars_free(out);
  return st;
}
