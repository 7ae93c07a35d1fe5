/* DBN records: the length-prefixed record loop, OHLCV bars into the series, everything else refused by rtype. */
#include <math.h>
#include <stdio.h>
#include "data/readers/dbn/dbn_internal.h"

enum {
  RTYPE_OHLCV_DEPRECATED = 0x11,
  RTYPE_ERROR = 0x15,
  RTYPE_SYMBOL_MAPPING = 0x16,
  RTYPE_SYSTEM = 0x17,
  RTYPE_OHLCV_1S = 0x20,
  RTYPE_OHLCV_EOD = 0x24,
};

static const char *rtype_name(unsigned rtype) {
  switch (rtype) {
    case 0x00: return "mbp-0 (trades)";
    case 0x01: return "mbp-1";
    case 0x0A: return "mbp-10";
    case 0x11: return "ohlcv (deprecated)";
    case 0x12: return "status";
    case 0x13: return "instrument definition";
    case 0x14: return "imbalance";
    case 0x15: return "error";
    case 0x16: return "symbol mapping";
    case 0x17: return "system";
    case 0x18: return "statistics";
    case 0x20: return "ohlcv-1s";
    case 0x21: return "ohlcv-1m";
    case 0x22: return "ohlcv-1h";
    case 0x23: return "ohlcv-1d";
    case 0x24: return "ohlcv-eod";
    case 0xA0: return "mbo";
    case 0xB1: return "cmbp-1";
    case 0xC0: return "cbbo-1s";
    case 0xC1: return "cbbo-1m";
    case 0xC2: return "tcbbo";
    case 0xC3: return "bbo-1s";
    case 0xC4: return "bbo-1m";
    default: return "unknown";
  }
}

static int rtype_is_ohlcv(unsigned rtype) {
  return rtype == RTYPE_OHLCV_DEPRECATED || (rtype >= RTYPE_OHLCV_1S && rtype <= RTYPE_OHLCV_EOD);
}

/* Gateway messages that carry no market data: skipped. */
static int rtype_is_control(unsigned rtype) {
  return rtype == RTYPE_ERROR || rtype == RTYPE_SYMBOL_MAPPING || rtype == RTYPE_SYSTEM;
}

/* A fixed-point price (1 unit = 1e-9) as a double, or the null sentinel per the options. Dividing
 * (rather than multiplying by 1e-9) gives the correctly rounded value Databento's decoder gives. */
static tg_status price(const tg_dbn_stream *s, size_t at, uint64_t index, const char *field, int64_t raw,
                       int nan_nulls, double scale, double *out) {
  if (raw == TG_DBN_UNDEF_PRICE) {
    if (nan_nulls) {
      *out = NAN;
      return TG_OK;
    }
    return tg_dbn_fail(s, TG_ERR_FORMAT, at,
                       "record %llu: %s is the undefined-price sentinel (set nulls to NaN to read it as NaN)",
                       (unsigned long long)index, field);
  }
  *out = (double)raw / 1e9 * scale;
  return TG_OK;
}

tg_status tg_dbn_records_parse(const tg_dbn_stream *s, const tg_dbn_meta *m, const tg_read_opts *opts, tg_bars *out) {
  const unsigned char *p = s->p;
  size_t pos = m->records_at, end = s->len;
  size_t want_len = TG_DBN_OHLCV_LEN + (m->ts_out ? 8 : 0);
  double scale = opts && opts->price_scale != 0 ? opts->price_scale : 1.0;
  int nan_nulls = opts && opts->nulls == TG_NULLS_NAN;
  /* Room for every record if all are OHLCV: bounded by the data's own size. */
  tg_status st = tg_bars_reserve(out, out->n + (int64_t)((end - pos) / want_len), 1);
  if (st != TG_OK) return st;
  int first_rtype = -1;
  uint64_t index = 0;
  for (; pos < end; index++) {
    size_t left = end - pos;
    size_t rec_len = 4u * p[pos];
    if (rec_len < 16)
      return tg_dbn_fail(s, TG_ERR_FORMAT, pos,
                         "record %llu: length field %u (x4 = %zu bytes) is shorter than the 16-byte record header",
                         (unsigned long long)index, p[pos], rec_len);
    if (rec_len > left)
      return tg_dbn_fail(s, TG_ERR_FORMAT, pos,
                         "record %llu declares %zu bytes but only %zu remain; the data is truncated",
                         (unsigned long long)index, rec_len, left);
    unsigned rtype = p[pos + 1];
    if (rtype_is_control(rtype)) {
      pos += rec_len;
      continue;
    }
    if (!rtype_is_ohlcv(rtype))
      return tg_dbn_fail(s, TG_ERR_UNSUPPORTED, pos + 1,
                         "record %llu has rtype 0x%02X (%s); this reader reads OHLCV bars only",
                         (unsigned long long)index, rtype, rtype_name(rtype));
    if (rec_len < want_len)
      return tg_dbn_fail(s, TG_ERR_FORMAT, pos, "record %llu (%s) is %zu bytes; an OHLCV record%s needs %zu",
                         (unsigned long long)index, rtype_name(rtype), rec_len, m->ts_out ? " with ts_out" : "",
                         want_len);
    if (first_rtype < 0) {
      first_rtype = (int)rtype;
    } else if ((unsigned)first_rtype != rtype) {
      return tg_dbn_fail(s, TG_ERR_UNSUPPORTED, pos + 1,
                         "record %llu is %s but earlier records are %s; one series holds one bar interval",
                         (unsigned long long)index, rtype_name(rtype), rtype_name((unsigned)first_rtype));
    }
    const unsigned char *r = p + pos;
    uint32_t instrument = tg_dbn_u32(r + 4);
    uint64_t ts_event = tg_dbn_u64(r + 8);
    if (ts_event > (uint64_t)INT64_MAX)
      return tg_dbn_fail(s, TG_ERR_FORMAT, pos + 8, "record %llu: ts_event is %s", (unsigned long long)index,
                         ts_event == TG_DBN_UNDEF_TS ? "the undefined-timestamp sentinel" : "out of range");
    static const char *const fields[4] = {"open", "high", "low", "close"};
    double px[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; k++) {
      st = price(s, pos + 16 + 8 * (size_t)k, index, fields[k], (int64_t)tg_dbn_u64(r + 16 + 8 * k), nan_nulls,
                 scale, &px[k]);
      if (st != TG_OK) return st;
    }
    double volume = (double)tg_dbn_u64(r + 48);
    st = tg_bars_push(out, (int64_t)ts_event, px[0], px[1], px[2], px[3], volume, instrument);
    if (st != TG_OK) return st;
    pos += rec_len;
  }
  return TG_OK;
}
