/* The DBN reader's entry point: recognise plain DBN, zstd-compressed DBN and legacy DBZ, then run the stages. */
#include <stdio.h>
#include "base/alloc.h"
#include "data/readers/bar_columns.h"
#include "data/readers/dbn/dbn_internal.h"

static int is_zstd_frame(const unsigned char *p, size_t len) {
  return len >= 4 && tg_dbn_u32(p) == 0xFD2FB528u;
}

static int is_skippable_frame(const unsigned char *p, size_t len) {
  return len >= 4 && (tg_dbn_u32(p) & 0xFFFFFFF0u) == 0x184D2A50u;
}

tg_status tg_dbn_stream_open(const char *path, const void *bytes, size_t len, tg_dbn_stream *s,
                             unsigned char **plain) {
  const unsigned char *p = bytes ? bytes : (const unsigned char *)"";
  *plain = NULL;
  if (!bytes && len) return tg_error(TG_ERR_INVALID, "%s: dbn: no data for %zu bytes", path, len);
  if (is_skippable_frame(p, len) && len >= 12 && memcmp(p + 8, "DBZ", 3) == 0)
    return tg_error(TG_ERR_UNSUPPORTED,
                    "%s: byte 8: this is the legacy DBZ format (Databento's format before DBN, used until 2022), "
                    "which tickgrad does not read; re-encode it as DBN (for example with Databento's dbn tool)",
                    path);
  *s = (tg_dbn_stream){path, p, len, 0};
  if (is_zstd_frame(p, len) || is_skippable_frame(p, len)) {
    size_t plain_len = 0;
    tg_status st = tg_dbn_zstd_inflate(path, p, len, tg_dbn_zstd_limit(len), plain, &plain_len);
    if (st != TG_OK) return st;
    s->p = *plain;
    s->len = plain_len;
    s->decompressed = 1;
  } else if (len < 3 || memcmp(p, "DBN", 3) != 0) {
    return tg_error(TG_ERR_FORMAT, "%s: byte 0: not DBN data: it starts with neither \"DBN\" nor a zstd frame", path);
  }
  return TG_OK;
}

tg_status tg_dbn_parse(const char *path, const void *bytes, size_t len, const tg_read_opts *opts, tg_bars *out) {
  if (!path) path = "(dbn data)";
  if (!out) return tg_error(TG_ERR_INVALID, "%s: dbn: no output series", path);
  tg_dbn_stream s;
  unsigned char *plain = NULL;
  tg_status open_st = tg_dbn_stream_open(path, bytes, len, &s, &plain);
  if (open_st != TG_OK) return open_st;

  int64_t n0 = out->n;
  int had_instrument = out->instrument != NULL;
  tg_dbn_meta m;
  tg_status st = tg_dbn_meta_parse(&s, &m);
  if (st == TG_OK) st = tg_dbn_records_parse(&s, &m, opts, out);
  int cols0 = out->n_cols;
  if (st == TG_OK) st = tg_dbn_contract_tag(&s, &m, out, n0);
  if (st != TG_OK) tg_bar_columns_truncate(out, cols0);
  tg_free(plain);
  if (st != TG_OK) {
    out->n = n0; /* drop this file's bars; the caller's earlier ones stay, without a new instrument column */
    if (!had_instrument && out->instrument) {
      tg_free(out->instrument);
      out->instrument = NULL;
    }
    return st;
  }
  snprintf(out->format, sizeof out->format, "dbn");
  return TG_OK;
}
