/* The DBN reader: synthetic files of every version, zstd framing, hostile input, and the real files in
 * ../shared/data checked against values from Databento's own decoder. With TG_DUMP_BARS=path set it also
 * writes every bar of every shared DBN file to that CSV for tools/crosscheck_dbn.py. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "base/alloc.h"
#include "data/readers/dbn/dbn_internal.h"
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/data.h"

/* ---------------------------------------------------------------- building DBN bytes by hand */

typedef struct bytes {
  unsigned char *p; /* [n] */
  size_t n, cap;
} bytes;

static void put(bytes *b, const void *src, size_t n) {
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n) cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p) {
      fprintf(stderr, "test_dbn: out of memory\n");
      exit(1);
    }
    b->p = p;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->n, src, n);
  b->n += n;
}

static void put_le(bytes *b, uint64_t v, int width) {
  unsigned char t[8];
  for (int i = 0; i < width; i++) t[i] = (unsigned char)(v >> (8 * i));
  put(b, t, (size_t)width);
}

static void put_zeros(bytes *b, size_t n) {
  static const unsigned char z[128];
  while (n) {
    size_t k = n < sizeof z ? n : sizeof z;
    put(b, z, k);
    n -= k;
  }
}

static void put_cstr(bytes *b, const char *s, size_t len) {
  size_t k = strlen(s);
  put(b, s, k);
  put_zeros(b, len - k);
}

static void bytes_free(bytes *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

typedef struct sym {
  const char *raw;
  const char *id;
} sym;

static const sym k_syms[2] = {{"ESH1", "5482"}, {"NQH1", "4358"}};

/* Metadata of the given version with one symbol, one mapping and one interval per symbol. */
static void put_meta(bytes *b, int version, uint16_t schema, int ts_out, const sym *syms, int nsyms) {
  size_t L = version == 1 ? 22 : 71;
  size_t len = 100 + 20 + L * (size_t)nsyms + (size_t)nsyms * (L + 4 + 8 + L);
  if (version >= 3) len = (len + 7) & ~(size_t)7;
  size_t start = b->n;
  put(b, "DBN", 3);
  put_le(b, (uint64_t)version, 1);
  put_le(b, len, 4);
  put_cstr(b, "GLBX.MDP3", 16);
  put_le(b, schema, 2);
  put_le(b, 1609113600000000000ull, 8); /* start */
  put_le(b, 1609200000000000000ull, 8); /* end */
  put_le(b, 0, 8);                      /* limit */
  if (version == 1) put_le(b, UINT64_MAX, 8);
  put_le(b, 1, 1); /* stype_in raw_symbol */
  put_le(b, 0, 1); /* stype_out instrument_id */
  put_le(b, (uint64_t)ts_out, 1);
  if (version >= 2) {
    put_le(b, L, 2);
    put_zeros(b, 53);
  } else {
    put_zeros(b, 47);
  }
  put_le(b, 0, 4); /* schema definition length */
  put_le(b, (uint64_t)nsyms, 4);
  for (int i = 0; i < nsyms; i++) put_cstr(b, syms[i].raw, L);
  put_le(b, 0, 4); /* partial */
  put_le(b, 0, 4); /* not found */
  put_le(b, (uint64_t)nsyms, 4);
  for (int i = 0; i < nsyms; i++) {
    put_cstr(b, syms[i].raw, L);
    put_le(b, 1, 4);
    put_le(b, 20201228, 4);
    put_le(b, 20201229, 4);
    put_cstr(b, syms[i].id, L);
  }
  put_zeros(b, start + 8 + len - b->n);
}

typedef struct rec {
  uint8_t rtype;
  uint16_t publisher;
  uint32_t instrument;
  uint64_t ts;
  int64_t px[4]; /* open high low close, 1e-9 units */
  uint64_t volume;
} rec;

static void put_rec(bytes *b, const rec *r, int ts_out) {
  put_le(b, ts_out ? 16 : 14, 1);
  put_le(b, r->rtype, 1);
  put_le(b, r->publisher, 2);
  put_le(b, r->instrument, 4);
  put_le(b, r->ts, 8);
  for (int k = 0; k < 4; k++) put_le(b, (uint64_t)r->px[k], 8);
  put_le(b, r->volume, 8);
  if (ts_out) put_le(b, r->ts + 123456789, 8);
}

/* Two instruments, two publishers, a negative price (spreads), one-nanounit and large prices. */
#define N_RECS 4
static const rec k_recs[N_RECS] = {
    {0x21, 1, 5482, 1609113600000000000ull, {3702750000000, 3704750000000, 3702500000000, 3704750000000}, 306},
    {0x21, 1, 4358, 1609113600000000000ull, {12810250000000, 12811000000000, 12809500000000, 12810000000000}, 41},
    {0x21, 2, 5482, 1609113660000000000ull, {-1500000000, 1, -2000000000, 190000000}, 0},
    {0x21, 1, 5482, 1609113720000000000ull, {123456789012345, 123456789012345, 123456789012345, 123456789012345},
     18446744073709551ull},
};

/* A whole file: metadata of the version, then the records (ts_out as given). */
static void make_file(bytes *b, int version, int ts_out, const rec *recs, int n) {
  put_meta(b, version, 6, ts_out, k_syms, 2);
  for (int i = 0; i < n; i++) put_rec(b, &recs[i], ts_out);
}

/* zstd frame(s) of src, with the content checksum as Databento writes them. */
static void put_zstd(bytes *out, const unsigned char *src, size_t n) {
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
  size_t bound = ZSTD_compressBound(n);
  unsigned char *tmp = malloc(bound);
  size_t got = ZSTD_compress2(cc, tmp, bound, src, n);
  if (ZSTD_isError(got)) {
    fprintf(stderr, "test_dbn: zstd: %s\n", ZSTD_getErrorName(got));
    exit(1);
  }
  put(out, tmp, got);
  free(tmp);
  ZSTD_freeCCtx(cc);
}

/* ---------------------------------------------------------------- parsing helpers */

/* Parses a private, exactly sized copy (so any over-read is caught by ASan), optionally at an odd address. */
static tg_status parse_copy(const unsigned char *p, size_t n, const tg_read_opts *opts, tg_bars *out, int misalign) {
  unsigned char *copy = malloc(n + (size_t)misalign + 1);
  memcpy(copy + misalign, p, n);
  tg_status st = tg_dbn_parse("mem.dbn", copy + misalign, n, opts, out);
  free(copy);
  return st;
}

static tg_status parse_bytes(const bytes *b, const tg_read_opts *opts, tg_bars *out) {
  return parse_copy(b->p, b->n, opts, out, 0);
}

static int msg_has(const char *needle) { return strstr(tg_last_error(), needle) != NULL; }

static int bars_equal(const tg_bars *a, const tg_bars *b) {
  if (a->n != b->n) return 0;
  size_t n = (size_t)a->n;
  if (!n) return 1;
  return memcmp(a->ts, b->ts, n * 8) == 0 && memcmp(a->open, b->open, n * 8) == 0 &&
         memcmp(a->high, b->high, n * 8) == 0 && memcmp(a->low, b->low, n * 8) == 0 &&
         memcmp(a->close, b->close, n * 8) == 0 && memcmp(a->volume, b->volume, n * 8) == 0 &&
         (a->instrument == NULL) == (b->instrument == NULL) &&
         (!a->instrument || memcmp(a->instrument, b->instrument, n * 4) == 0);
}

static int status_ok_or_refused(tg_status st) {
  return st == TG_OK || st == TG_ERR_FORMAT || st == TG_ERR_UNSUPPORTED;
}

/* The synthetic records as the reader must return them. */
static void check_synthetic_values(const tg_bars *b) {
  CHECK(b->n == N_RECS);
  if (b->n != N_RECS) return;
  CHECK(b->instrument != NULL);
  CHECK(strcmp(b->format, "dbn") == 0);
  for (int i = 0; i < N_RECS; i++) {
    CHECK(b->ts[i] == (int64_t)k_recs[i].ts);
    if (b->instrument) CHECK(b->instrument[i] == k_recs[i].instrument);
  }
  CHECK(b->open[0] == 3702.75 && b->high[0] == 3704.75 && b->low[0] == 3702.5 && b->close[0] == 3704.75);
  CHECK(b->volume[0] == 306.0);
  CHECK(b->open[1] == 12810.25 && b->close[1] == 12810.0 && b->volume[1] == 41.0);
  CHECK(b->open[2] == -1.5 && b->high[2] == 1e-9 && b->low[2] == -2.0 && b->close[2] == 0.19);
  CHECK(b->open[3] == 123456.789012345 && b->volume[3] == 18446744073709551.0);
}

/* ---------------------------------------------------------------- synthetic tests */

static void test_versions(void) {
  tg_bars ref;
  tg_bars_init(&ref);
  for (int v = 1; v <= 3; v++) {
    for (int ts_out = 0; ts_out <= 1; ts_out++) {
      bytes f = {0};
      make_file(&f, v, ts_out, k_recs, N_RECS);
      tg_dbn_stream s = {"mem.dbn", f.p, f.n, 0};
      tg_dbn_meta m;
      CHECK_OK(tg_dbn_meta_parse(&s, &m));
      CHECK(m.version == v && m.ts_out == ts_out && m.schema == 6 && strcmp(m.dataset, "GLBX.MDP3") == 0);
      CHECK(m.symbol_len == (v == 1 ? 22u : 71u));
      /* v1 and v2 put records at unaligned offsets (v2: 8+345+... = 361+), v3 pads to 8 */
      if (v == 3) CHECK(m.records_at % 8 == 0);
      if (v == 2) CHECK(m.records_at % 8 != 0);
      for (int misalign = 0; misalign <= 3; misalign += 3) {
        tg_bars b;
        tg_bars_init(&b);
        CHECK_OK(parse_copy(f.p, f.n, NULL, &b, misalign));
        check_synthetic_values(&b);
        if (ref.n == 0 && b.n) {
          CHECK_OK(tg_bars_append(&ref, &b));
        } else {
          CHECK_MSG(bars_equal(&ref, &b), "version %d ts_out %d misalign %d differs", v, ts_out, misalign);
        }
        tg_bars_free(&b);
      }
      bytes_free(&f);
    }
  }
  tg_bars_free(&ref);
}

/* An OHLCV record with ts_out in the metadata must carry the 8 extra bytes. */
static void test_ts_out_length(void) {
  bytes f = {0};
  put_meta(&f, 2, 6, 1, k_syms, 1);
  put_rec(&f, &k_recs[0], 0); /* 56 bytes where 64 are due */
  tg_bars b;
  tg_bars_init(&b);
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("record 0") && msg_has("ts_out"));
  tg_bars_free(&b);
  bytes_free(&f);
}

static void test_record_kinds(void) {
  /* every OHLCV rtype, including the deprecated 0x11 and ohlcv-eod */
  static const uint8_t kinds[] = {0x11, 0x20, 0x21, 0x22, 0x23, 0x24};
  for (size_t k = 0; k < sizeof kinds; k++) {
    rec r[2] = {k_recs[0], k_recs[1]};
    r[0].rtype = r[1].rtype = kinds[k];
    bytes f = {0};
    put_meta(&f, 3, kinds[k] == 0x11 ? 0xFFFF : (uint16_t)(kinds[k] == 0x24 ? 13 : kinds[k] - 0x20 + 5), 0, k_syms, 2);
    put_rec(&f, &r[0], 0);
    put_rec(&f, &r[1], 0);
    tg_bars b;
    tg_bars_init(&b);
    CHECK_OK(parse_bytes(&f, NULL, &b));
    CHECK(b.n == 2 && b.open[0] == 3702.75 && b.instrument && b.instrument[1] == 4358);
    tg_bars_free(&b);
    bytes_free(&f);
  }
  /* a market-data record of another kind: refused, naming the rtype */
  {
    bytes f = {0};
    put_meta(&f, 2, 0xFFFF, 0, k_syms, 1);
    put_rec(&f, &k_recs[0], 0);
    size_t at = f.n;
    put_rec(&f, &k_recs[1], 0);
    f.p[at + 1] = 0xA0; /* mbo, also 56 bytes */
    tg_bars b;
    tg_bars_init(&b);
    CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_UNSUPPORTED);
    CHECK(msg_has("rtype 0xA0") && msg_has("mbo") && msg_has("record 1"));
    CHECK(b.n == 0);
    f.p[at + 1] = 0x7E; /* unknown */
    CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_UNSUPPORTED);
    CHECK(msg_has("rtype 0x7E"));
    tg_bars_free(&b);
    bytes_free(&f);
  }
  /* gateway records (symbol mapping, system, error) carry no market data and are skipped */
  {
    bytes f = {0};
    put_meta(&f, 2, 6, 0, k_syms, 1);
    put_rec(&f, &k_recs[0], 0);
    static const uint8_t control[] = {0x16, 0x17, 0x15};
    for (size_t k = 0; k < sizeof control; k++) {
      put_le(&f, 176 / 4, 1);
      put_le(&f, control[k], 1);
      put_zeros(&f, 174);
    }
    put_rec(&f, &k_recs[3], 0);
    tg_bars b;
    tg_bars_init(&b);
    CHECK_OK(parse_bytes(&f, NULL, &b));
    CHECK(b.n == 2 && b.open[1] == 123456.789012345);
    tg_bars_free(&b);
    bytes_free(&f);
  }
  /* one series, one interval: 1s bars after 1m bars are refused */
  {
    rec r = k_recs[1];
    r.rtype = 0x20;
    bytes f = {0};
    put_meta(&f, 3, 0xFFFF, 0, k_syms, 2);
    put_rec(&f, &k_recs[0], 0);
    put_rec(&f, &r, 0);
    tg_bars b;
    tg_bars_init(&b);
    CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_UNSUPPORTED);
    CHECK(msg_has("ohlcv-1s") && msg_has("ohlcv-1m"));
    tg_bars_free(&b);
    bytes_free(&f);
  }
  /* a non-OHLCV schema in the metadata is refused before any record */
  for (int schema = 0; schema < 2; schema++) {
    bytes f = {0};
    put_meta(&f, 3, schema ? 999 : 4, 0, k_syms, 1);
    tg_bars b;
    tg_bars_init(&b);
    CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_UNSUPPORTED);
    CHECK(schema ? msg_has("unknown schema 999") : msg_has("trades"));
    tg_bars_free(&b);
    bytes_free(&f);
  }
}

static void test_nulls_and_scale(void) {
  rec r[N_RECS];
  memcpy(r, k_recs, sizeof r);
  r[2].px[1] = INT64_MAX; /* high of record 2 is undefined */
  bytes f = {0};
  make_file(&f, 2, 0, r, N_RECS);
  tg_bars b;
  tg_bars_init(&b);
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("record 2") && msg_has("high") && msg_has("undefined"));
  tg_read_opts o;
  memset(&o, 0, sizeof o);
  o.nulls = TG_NULLS_NAN;
  CHECK_OK(parse_bytes(&f, &o, &b));
  CHECK(b.n == N_RECS && isnan(b.high[2]) && b.open[2] == -1.5 && b.high[1] == 12811.0);
  tg_bars_free(&b);
  bytes_free(&f);

  /* an undefined ts_event is an error under either policy */
  memcpy(r, k_recs, sizeof r);
  r[1].ts = UINT64_MAX;
  make_file(&f, 3, 0, r, N_RECS);
  CHECK_STATUS(parse_bytes(&f, &o, &b), TG_ERR_FORMAT);
  CHECK(msg_has("record 1") && msg_has("ts_event"));
  tg_bars_free(&b);
  bytes_free(&f);

  make_file(&f, 3, 0, k_recs, N_RECS);
  o.nulls = TG_NULLS_ERROR;
  o.price_scale = 0.01;
  CHECK_OK(parse_bytes(&f, &o, &b));
  CHECK(b.n == N_RECS && b.open[0] == 3702.75 * 0.01 && b.open[2] == -1.5 * 0.01);
  tg_bars_free(&b);
  bytes_free(&f);
}

/* Parses into a series that already holds bars: the instrument column appears, errors leave it as it was. */
static void test_append(void) {
  tg_bars b;
  tg_bars_init(&b);
  for (int i = 0; i < 3; i++) CHECK_OK(tg_bars_push(&b, i, 1, 2, 0.5, 1.5, 10, 0));
  bytes f = {0};
  make_file(&f, 1, 0, k_recs, N_RECS);
  f.n -= 5; /* a failure first: no bars and no instrument column are added */
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  CHECK(b.n == 3 && b.instrument == NULL && b.close[2] == 1.5);
  f.n += 5;
  CHECK_OK(parse_bytes(&f, NULL, &b));
  CHECK(b.n == 3 + N_RECS && b.instrument && b.instrument[0] == 0 && b.instrument[3] == 5482 &&
        b.instrument[4] == 4358);
  f.n -= 5; /* the last record is cut short */
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  CHECK(b.n == 3 + N_RECS);
  tg_bars_free(&b);
  bytes_free(&f);
}

static void test_versions_refused(void) {
  tg_bars b;
  tg_bars_init(&b);
  bytes f = {0};
  make_file(&f, 3, 0, k_recs, 2);
  f.p[3] = 4;
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_UNSUPPORTED);
  CHECK(msg_has("version 4"));
  bytes z = {0};
  put_zstd(&z, f.p, f.n);
  CHECK_STATUS(parse_bytes(&z, NULL, &b), TG_ERR_UNSUPPORTED);
  CHECK(msg_has("version 4") && msg_has("decompressed stream"));
  f.p[3] = 200;
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_UNSUPPORTED);
  CHECK(msg_has("version 200"));
  f.p[3] = 0;
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("version 0"));
  bytes_free(&z);

  /* legacy DBZ: a skippable frame holding "DBZ" + 1 */
  bytes dbz = {0};
  put_le(&dbz, 0x184D2A50u, 4);
  put_le(&dbz, 96, 4);
  put(&dbz, "DBZ\x01", 4);
  put_zeros(&dbz, 92);
  CHECK_STATUS(parse_bytes(&dbz, NULL, &b), TG_ERR_UNSUPPORTED);
  CHECK(msg_has("legacy DBZ"));
  bytes_free(&dbz);

  /* any other skippable frame before the data is skipped, as zstd specifies */
  bytes sk = {0};
  put_le(&sk, 0x184D2A5Bu, 4);
  put_le(&sk, 5, 4);
  put(&sk, "hello", 5);
  f.p[3] = 3;
  put_zstd(&sk, f.p, f.n);
  CHECK_OK(parse_bytes(&sk, NULL, &b));
  CHECK(b.n == 2);
  bytes_free(&sk);
  bytes_free(&f);
  tg_bars_free(&b);
}

static void test_bad_metadata(void) {
  tg_bars b;
  tg_bars_init(&b);
  bytes good = {0};
  make_file(&good, 2, 0, k_recs, 1);
  bytes f = {0};
  /* too short, wrong magic, empty */
  static const char *const tiny[] = {"", "D", "DB", "DBN", "DBN\x02", "DBN\x02\x10\x00", "XYZ\x02\x10\x00\x00\x00"};
  for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
    size_t n = strlen(tiny[i]);
    CHECK_STATUS(parse_copy((const unsigned char *)tiny[i], n, NULL, &b, 0), TG_ERR_FORMAT);
  }
  CHECK_STATUS(tg_dbn_parse("empty.dbn", NULL, 0, NULL, &b), TG_ERR_FORMAT);
  /* metadata length below the minimum and past the end */
  put(&f, good.p, good.n);
  f.p[4] = 99, f.p[5] = f.p[6] = f.p[7] = 0;
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("below the 100-byte minimum") && msg_has("byte 4"));
  f.p[4] = f.p[5] = f.p[6] = f.p[7] = 0xFF;
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("runs past the end"));
  /* symbol string length 0, ts_out 2 */
  memcpy(f.p, good.p, good.n);
  f.p[53] = f.p[54] = 0;
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("symbol length is 0"));
  memcpy(f.p, good.p, good.n);
  f.p[52] = 2;
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("ts_out is 2"));
  /* a symbol string length larger than the metadata: the symbols no longer fit */
  memcpy(f.p, good.p, good.n);
  f.p[53] = 0xFF, f.p[54] = 0xFF;
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  /* huge counts: schema definition, symbols, partial, not found, mappings, intervals (two symbols) */
  size_t L = 71;
  size_t at_sdl = 108, at_syms = 112, at_partial = 116 + 2 * L, at_maps = at_partial + 8;
  size_t at_intervals = at_maps + 4 + L, at_last_intervals = at_intervals + 4 + 8 + L + L;
  size_t where[] = {at_sdl, at_syms, at_partial, at_partial + 4, at_maps, at_intervals, at_last_intervals};
  for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
    memcpy(f.p, good.p, good.n);
    f.p[where[i]] = f.p[where[i] + 1] = f.p[where[i] + 2] = f.p[where[i] + 3] = 0xFF;
    CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
    CHECK_MSG(msg_has("metadata"), "count at %zu: %s", where[i], tg_last_error());
  }
  memcpy(f.p, good.p, good.n);
  CHECK(tg_dbn_u32(f.p + at_last_intervals) == 1);
  f.p[at_last_intervals] = 2; /* one interval more than the metadata holds */
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("mapping intervals"));
  /* a declared length shorter than the variable part is refused; a longer one (padding) is skipped */
  memcpy(f.p, good.p, good.n);
  f.p[4] = 101, f.p[5] = 0;
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("metadata ends"));
  bytes padded = {0};
  uint32_t meta_len = tg_dbn_u32(good.p + 4);
  put(&padded, good.p, 8 + meta_len);
  put_zeros(&padded, 11);
  put(&padded, good.p + 8 + meta_len, good.n - 8 - meta_len);
  padded.p[4] = (unsigned char)(meta_len + 11);
  padded.p[5] = (unsigned char)((meta_len + 11) >> 8);
  CHECK_OK(parse_bytes(&padded, NULL, &b));
  CHECK(b.n == 1 && b.open[0] == 3702.75);
  bytes_free(&padded);
  bytes_free(&f);
  bytes_free(&good);
  tg_bars_free(&b);
}

static void test_bad_records(void) {
  tg_bars b;
  tg_bars_init(&b);
  bytes f = {0};
  make_file(&f, 2, 0, k_recs, 2);
  size_t rec1 = f.n - 56;
  for (int len = 0; len < 4; len++) {
    unsigned char keep = f.p[rec1];
    f.p[rec1] = (unsigned char)len;
    CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
    CHECK(msg_has("record 1") && msg_has("shorter than the 16-byte record header"));
    f.p[rec1] = keep;
  }
  f.p[rec1] = 15; /* 60 bytes, only 56 left */
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("truncated"));
  char want[64];
  snprintf(want, sizeof want, "byte %zu:", rec1);
  CHECK(msg_has(want));
  f.p[rec1] = 4; /* a 16-byte record of an OHLCV type: too short */
  CHECK_STATUS(parse_bytes(&f, NULL, &b), TG_ERR_FORMAT);
  tg_bars_free(&b);
  bytes_free(&f);
}

/* Every prefix of a plain file: a prefix ending on a record boundary is a shorter valid file, any
 * other is a clean format error. */
static void test_truncation_plain(void) {
  for (int v = 1; v <= 3; v++) {
    bytes f = {0};
    make_file(&f, v, v == 2, k_recs, N_RECS);
    tg_dbn_stream s = {"mem.dbn", f.p, f.n, 0};
    tg_dbn_meta m;
    CHECK_OK(tg_dbn_meta_parse(&s, &m));
    size_t rl = v == 2 ? 64 : 56;
    int bad = 0;
    for (size_t k = 0; k < f.n; k++) {
      tg_bars b;
      tg_bars_init(&b);
      tg_status st = parse_copy(f.p, k, NULL, &b, 0);
      int boundary = k >= m.records_at && (k - m.records_at) % rl == 0;
      if (boundary) bad += st != TG_OK || b.n != (int64_t)((k - m.records_at) / rl);
      else bad += st != TG_ERR_FORMAT;
      tg_bars_free(&b);
    }
    CHECK_MSG(bad == 0, "version %d: %d prefixes misread", v, bad);
    bytes_free(&f);
  }
}

static void test_zstd(void) {
  bytes f = {0};
  make_file(&f, 2, 0, k_recs, N_RECS);
  tg_bars ref, b;
  tg_bars_init(&ref);
  tg_bars_init(&b);
  CHECK_OK(parse_bytes(&f, NULL, &ref));

  bytes z = {0};
  put_zstd(&z, f.p, f.n);
  CHECK_OK(parse_bytes(&z, NULL, &b));
  CHECK(bars_equal(&ref, &b));
  tg_bars_free(&b);

  /* two frames split at every byte (inside the metadata, inside records), and three frames */
  int bad = 0;
  for (size_t cut = 1; cut < f.n; cut++) {
    bytes two = {0};
    put_zstd(&two, f.p, cut);
    put_zstd(&two, f.p + cut, f.n - cut);
    if (cut % 7 == 0) put_zstd(&two, f.p, 0); /* an empty third frame */
    tg_status st = parse_bytes(&two, NULL, &b);
    bad += st != TG_OK || !bars_equal(&ref, &b);
    tg_bars_free(&b);
    bytes_free(&two);
  }
  CHECK_MSG(bad == 0, "%d frame splits misread", bad);

  /* every prefix of the compressed file is a clean error (a frame that ends early) */
  bad = 0;
  int said_truncated = 1;
  for (size_t k = 0; k < z.n; k++) {
    tg_status st = parse_copy(z.p, k, NULL, &b, 0);
    bad += st != TG_ERR_FORMAT;
    if (k >= 4 && !msg_has("truncated")) said_truncated = 0;
    tg_bars_free(&b);
  }
  CHECK_MSG(bad == 0, "%d compressed prefixes misread", bad);
  CHECK(said_truncated);

  /* garbage after the last frame; a flipped byte inside the frame (checksum or block error) */
  bytes tail = {0};
  put(&tail, z.p, z.n);
  put(&tail, "junk", 4);
  CHECK_STATUS(parse_bytes(&tail, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("compressed file") && msg_has("zstd"));
  memcpy(tail.p, z.p, z.n);
  tail.n = z.n;
  tail.p[z.n - 2] ^= 0x55; /* inside the XXH64 checksum */
  CHECK_STATUS(parse_bytes(&tail, NULL, &b), TG_ERR_FORMAT);
  bytes_free(&tail);

  /* records truncated inside a complete frame: the offset is in the decompressed stream */
  bytes cut = {0};
  put_zstd(&cut, f.p, f.n - 10);
  CHECK_STATUS(parse_bytes(&cut, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("of the decompressed stream") && msg_has("truncated"));
  bytes_free(&cut);

  /* the output bound: exactly at the limit is fine, one byte over is refused */
  unsigned char *out = NULL;
  size_t out_len = 0;
  CHECK_OK(tg_dbn_zstd_inflate("mem.zst", z.p, z.n, f.n, &out, &out_len));
  CHECK(out_len == f.n && out && memcmp(out, f.p, f.n) == 0);
  tg_free(out);
  CHECK_STATUS(tg_dbn_zstd_inflate("mem.zst", z.p, z.n, f.n - 1, &out, &out_len), TG_ERR_FORMAT);
  CHECK(msg_has("decompression bomb") && out == NULL);
  CHECK(tg_dbn_zstd_limit(100) == (size_t)16 << 20 && tg_dbn_zstd_limit(1 << 20) == (size_t)1000 << 20);

  /* a real bomb: a valid header and then 24 MiB of zeros in a few hundred compressed bytes */
  size_t big = (size_t)24 << 20;
  unsigned char *bomb = calloc(big, 1);
  memcpy(bomb, f.p, f.n);
  bytes bz = {0};
  put_zstd(&bz, bomb, big);
  free(bomb);
  CHECK(bz.n * 1000 < big);
  CHECK_STATUS(parse_bytes(&bz, NULL, &b), TG_ERR_FORMAT);
  CHECK(msg_has("decompression bomb"));
  bytes_free(&bz);

  bytes_free(&z);
  bytes_free(&f);
  tg_bars_free(&ref);
  tg_bars_free(&b);
}

/* Deterministic corruption: every byte of small files set to a few values, then random multi-byte
 * damage. Nothing may crash; each outcome is success or a clean format/unsupported error. */
static void test_corruption(unsigned long long seed) {
  static const unsigned char vals[] = {0x00, 0xFF, 0x01, 0x80, 0x0E, 0x21};
  int bad = 0;
  for (int v = 1; v <= 3; v++) {
    bytes f = {0};
    make_file(&f, v, v == 3, k_recs, N_RECS);
    unsigned char *copy = malloc(f.n);
    for (size_t i = 0; i < f.n; i++) {
      for (size_t k = 0; k < sizeof vals; k++) {
        memcpy(copy, f.p, f.n);
        copy[i] = vals[k];
        tg_bars b;
        tg_bars_init(&b);
        bad += !status_ok_or_refused(parse_copy(copy, f.n, NULL, &b, (int)(i & 1)));
        tg_bars_free(&b);
      }
    }
    bytes z = {0};
    put_zstd(&z, f.p, f.n);
    unsigned long long x = seed + (unsigned long long)v;
    for (int t = 0; t < 3000; t++) {
      bytes *src = (t & 1) ? &z : &f;
      memcpy(copy, src->p, src->n);
      int hits = 1 + (int)(x % 4);
      for (int h = 0; h < hits; h++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        copy[(x >> 33) % src->n] = (unsigned char)(x >> 17);
      }
      tg_bars b;
      tg_bars_init(&b);
      bad += !status_ok_or_refused(parse_copy(copy, src->n, NULL, &b, 0));
      tg_bars_free(&b);
    }
    bytes_free(&z);
    free(copy);
    bytes_free(&f);
  }
  CHECK_MSG(bad == 0, "%d corrupted inputs gave an unexpected status", bad);
}

/* ---------------------------------------------------------------- the real files in ../shared/data */

typedef struct names {
  char **v;
  size_t n, cap;
} names;

static void names_add(names *ns, const char *s) {
  if (ns->n == ns->cap) {
    ns->cap = ns->cap ? ns->cap * 2 : 64;
    ns->v = realloc(ns->v, ns->cap * sizeof *ns->v);
  }
  ns->v[ns->n++] = strdup(s);
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void list_files(const char *dir, names *out) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char full[4096];
    snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (stat(full, &sb) != 0) continue;
    if (S_ISDIR(sb.st_mode)) list_files(full, out);
    else if (S_ISREG(sb.st_mode)) names_add(out, full);
  }
  closedir(d);
}

static int ends_with(const char *s, const char *tail) {
  size_t a = strlen(s), b = strlen(tail);
  return a >= b && strcmp(s + a - b, tail) == 0;
}

/* Bars per file, as Databento's decoder counts them; -1 for files this test does not know. */
static int64_t expected_count(const char *rel) {
  int daily = strstr(rel, "ohlcv-1d") != NULL;
  if (strncmp(rel, "databento-dbn/", 14) == 0) return daily ? 0 : 2;
  if (strncmp(rel, "databento-python/", 17) == 0) return daily && !strstr(rel, "OPRA") ? 1 : 4;
  return -1;
}

typedef struct expect_bar {
  const char *rel;
  int64_t index;
  int64_t ts;
  uint32_t instrument;
  double o, h, l, c, v;
} expect_bar;

/* From databento-dbn 0.72 (Python): DBNDecoder(compression=ZSTD) on the same files. */
static const expect_bar k_truth[] = {
    {"databento-python/GLBX.MDP3/test_data.ohlcv-1m.dbn.zst", 0, 1609113600000000000, 5482, 3702.75, 3704.75, 3702.5,
     3704.75, 306},
    {"databento-python/GLBX.MDP3/test_data.ohlcv-1m.dbn.zst", 3, 1609113780000000000, 5482, 3704.5, 3704.5, 3703.0,
     3703.0, 158},
    {"databento-dbn/test_data.ohlcv-1h.dbn", 1, 1609164000000000000, 5482, 372225.0, 372450.0, 371600.0, 371950.0,
     112698},
    {"databento-dbn/test_data.ohlcv-1s.v1.dbn.zst", 1, 1609160401000000000, 5482, 372050.0, 372050.0, 372050.0,
     372050.0, 13},
    {"databento-python/OPRA.PILLAR/test_data.ohlcv-1m.dbn.zst", 0, 1740061800000000000, 16783963, 0.25, 0.38, 0.25,
     0.33, 70},
    {"databento-python/OPRA.PILLAR/test_data.ohlcv-1m.dbn.zst", 1, 1740061800000000000, 16783963, 0.37, 0.37, 0.31,
     0.32, 19},
    {"databento-python/OPRA.PILLAR/test_data.ohlcv-1m.dbn.zst", 2, 1740061800000000000, 16783963, 0.19, 0.33, 0.19,
     0.33, 20},
    {"databento-python/OPRA.PILLAR/test_data.ohlcv-1m.dbn.zst", 3, 1740061800000000000, 16783963, 0.19, 0.38, 0.19,
     0.35, 80},
    {"databento-python/NDEX.IMPACT/test_data.ohlcv-1m.dbn.zst", 0, 1705561200000000000, 5733529, 27.965, 28.035,
     27.965, 28.035, 45},
    {"databento-python/EQUS.MINI/test_data.ohlcv-1d.dbn.zst", 0, 1679961600000000000, 13340, 307.83, 308.6, 304.78,
     307.5, 3309022},
    {"databento-python/IFEU.IMPACT/test_data.ohlcv-1s.dbn.zst", 2, 1705539602000000000, 5617221, 77.69, 77.73, 77.68,
     77.68, 160},
    {"databento-python/XNAS.ITCH/test_data.ohlcv-1h.dbn.zst", 3, 1609156800000000000, 6155, 521.32, 521.97, 521.0,
     521.8, 3137},
};

/* Rows of the TG_DUMP_BARS CSV; the file column is relative to the shared data folder. */
static void dump_bars(FILE *fp, const char *rel, const tg_bars *b) {
  for (int64_t i = 0; i < b->n; i++)
    fprintf(fp, "dbn/%s,%lld,%u,%.17g,%.17g,%.17g,%.17g,%.17g\n", rel, (long long)b->ts[i],
            b->instrument ? b->instrument[i] : 0u, b->open[i], b->high[i], b->low[i], b->close[i], b->volume[i]);
}

static void test_shared_files(const char *root) {
  names files = {0};
  list_files(root, &files);
  if (files.n) qsort(files.v, files.n, sizeof *files.v, cmp_names);
  CHECK_MSG(files.n >= 44, "only %zu files under %s", files.n, root);
  const char *dump_path = getenv("TG_DUMP_BARS");
  FILE *dump = NULL;
  if (dump_path && *dump_path) {
    dump = fopen(dump_path, "w");
    CHECK_MSG(dump != NULL, "cannot write %s", dump_path);
    if (dump) fprintf(dump, "file,ts,instrument,open,high,low,close,volume\n");
  }
  size_t root_len = strlen(root) + 1, read_ok = 0, refused_dbz = 0, truth_seen = 0;
  for (size_t i = 0; i < files.n; i++) {
    const char *path = files.v[i], *rel = path + root_len;
    tg_bars b;
    tg_read_opts raw = {.no_checks = 1}; /* what the files hold: OPRA bars of one option from two publishers share times */
    tg_status st = tg_bars_read(path, &raw, &b);
    if (ends_with(path, ".dbz")) {
      CHECK_MSG(st == TG_ERR_UNSUPPORTED && msg_has("legacy DBZ"), "%s: %s", rel, tg_last_error());
      refused_dbz += st == TG_ERR_UNSUPPORTED;
      continue;
    }
    CHECK_MSG(st == TG_OK, "%s: %s", rel, tg_last_error());
    if (st != TG_OK) continue;
    read_ok++;
    int64_t want = expected_count(rel);
    CHECK_MSG(want < 0 || b.n == want, "%s: %lld bars, want %lld", rel, (long long)b.n, (long long)want);
    CHECK_MSG(strcmp(b.format, "dbn") == 0 && b.instrument != NULL, "%s: format %s", rel, b.format);
    int sane = 1;
    for (int64_t k = 0; k < b.n; k++)
      sane &= b.low[k] <= b.open[k] && b.low[k] <= b.close[k] && b.high[k] >= b.open[k] && b.high[k] >= b.close[k] &&
              b.volume[k] >= 0 && b.ts[k] > 1500000000000000000;
    CHECK_MSG(sane, "%s: a bar breaks low <= open, close <= high", rel);
    for (size_t t = 0; t < sizeof k_truth / sizeof k_truth[0]; t++) {
      const expect_bar *e = &k_truth[t];
      if (strcmp(e->rel, rel) != 0 || e->index >= b.n) continue;
      int64_t k = e->index;
      truth_seen++;
      CHECK_MSG(b.ts[k] == e->ts && b.instrument[k] == e->instrument && b.open[k] == e->o && b.high[k] == e->h &&
                    b.low[k] == e->l && b.close[k] == e->c && b.volume[k] == e->v,
                "%s bar %lld: %lld %u %.17g %.17g %.17g %.17g %.17g", rel, (long long)k, (long long)b.ts[k],
                b.instrument[k], b.open[k], b.high[k], b.low[k], b.close[k], b.volume[k]);
    }
    tg_bars_free(&b);
    if (dump) {
      /* file order, straight from the parser (tg_bars_read sorts) */
      size_t len = 0;
      unsigned char *raw = tg_test_read_file(path, &len);
      tg_bars_init(&b);
      if (raw && tg_dbn_parse(rel, raw, len, NULL, &b) == TG_OK) dump_bars(dump, rel, &b);
      tg_bars_free(&b);
      free(raw);
    }
  }
  CHECK_MSG(read_ok >= 40 && refused_dbz == 4, "read %zu files, refused %zu DBZ", read_ok, refused_dbz);
  CHECK_MSG(truth_seen == sizeof k_truth / sizeof k_truth[0], "%zu of %zu reference bars found", truth_seen,
            sizeof k_truth / sizeof k_truth[0]);
  if (dump) fclose(dump);
  for (size_t i = 0; i < files.n; i++) free(files.v[i]);
  free(files.v);
}

/* test_data.ohlcv-<s>.dbn (v2, plain) and .v1/.v2/.v3.dbn.zst hold the same bars. */
static void test_shared_versions(const char *root) {
  static const char *const schemas[] = {"1s", "1m", "1h", "1d"};
  static const char *const forms[] = {"dbn", "v1.dbn.zst", "v2.dbn.zst", "v3.dbn.zst"};
  for (int s = 0; s < 4; s++) {
    tg_bars first;
    tg_bars_init(&first);
    for (int f = 0; f < 4; f++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/databento-dbn/test_data.ohlcv-%s.%s", root, schemas[s], forms[f]);
      tg_bars b;
      tg_status st = tg_bars_read(path, NULL, &b);
      CHECK_MSG(st == TG_OK, "%s: %s", path, tg_last_error());
      if (st != TG_OK) continue;
      if (f == 0) {
        first = b;
        CHECK(b.n == (s == 3 ? 0 : 2));
        if (s == 3) CHECK(b.instrument != NULL); /* an empty series, still with the instrument column */
        continue;
      }
      CHECK_MSG(bars_equal(&first, &b), "%s differs from the plain v2 file", path);
      tg_bars_free(&b);
    }
    tg_bars_free(&first);
  }
}

/* Every prefix of a real plain file and a real compressed file; every header byte of the plain one damaged. */
static void test_shared_damage(const char *root) {
  char path[4096];
  snprintf(path, sizeof path, "%s/databento-dbn/test_data.ohlcv-1m.dbn", root);
  size_t n = 0;
  unsigned char *p = tg_test_read_file(path, &n);
  CHECK_MSG(p && n == 465, "%s: %zu bytes", path, n);
  if (p && n == 465) {
    int bad = 0;
    for (size_t k = 0; k < n; k++) {
      tg_bars b;
      tg_bars_init(&b);
      tg_status st = parse_copy(p, k, NULL, &b, 0);
      if (k == 353 || k == 409) bad += st != TG_OK || b.n != (int64_t)(k - 353) / 56;
      else bad += st != TG_ERR_FORMAT;
      tg_bars_free(&b);
    }
    CHECK_MSG(bad == 0, "%d prefixes of %s misread", bad, path);
    bad = 0;
    unsigned char *copy = malloc(n);
    for (size_t i = 0; i < 353; i++) {
      for (int k = 0; k < 3; k++) {
        memcpy(copy, p, n);
        copy[i] = k == 0 ? (unsigned char)~p[i] : k == 1 ? 0 : (unsigned char)(p[i] + 1);
        tg_bars b;
        tg_bars_init(&b);
        tg_status st = parse_copy(copy, n, NULL, &b, 0);
        bad += !status_ok_or_refused(st);
        /* a damaged magic or version must be reported */
        if (i < 4 && k == 0) bad += st == TG_OK;
        tg_bars_free(&b);
      }
    }
    CHECK_MSG(bad == 0, "%d damaged headers of %s misread", bad, path);
    free(copy);
  }
  free(p);

  snprintf(path, sizeof path, "%s/databento-dbn/test_data.ohlcv-1m.v3.dbn.zst", root);
  p = tg_test_read_file(path, &n);
  CHECK_MSG(p && n == 166, "%s: %zu bytes", path, n);
  if (p && n == 166) {
    int bad = 0;
    for (size_t k = 0; k < n; k++) {
      tg_bars b;
      tg_bars_init(&b);
      bad += parse_copy(p, k, NULL, &b, 0) != TG_ERR_FORMAT;
      tg_bars_free(&b);
    }
    CHECK_MSG(bad == 0, "%d prefixes of %s misread", bad, path);
  }
  free(p);
}

/* The reorder warning through tg_bars_read: two instruments in time order whose ties are not in id order are only
 * ordered (no warning, nothing counted); a bar whose time goes backwards is counted and named. */
static void test_reorder_message(void) {
  char dir[] = "/tmp/tickgrad_dbn_order_XXXXXX", path[600], msg[1024];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/two.dbn", dir);
  rec r[4] = {
      {0x21, 1, 5482, 1609113600000000000ull, {100000000000, 101000000000, 99000000000, 100500000000}, 10},
      {0x21, 1, 4358, 1609113600000000000ull, {200000000000, 201000000000, 199000000000, 200500000000}, 10},
      {0x21, 1, 5482, 1609113660000000000ull, {100000000000, 101000000000, 99000000000, 100500000000}, 10},
      {0x21, 1, 4358, 1609113660000000000ull, {200000000000, 201000000000, 199000000000, 200500000000}, 10},
  };
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) { /* the last bar now comes before the first in time */
      r[3].ts = 1609113540000000000ull;
    }
    bytes b = {0};
    make_file(&b, 2, 0, r, 4);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b.p, 1, b.n, f) == b.n);
    if (f) fclose(f);
    bytes_free(&b);
    tg_read_opts o;
    memset(&o, 0, sizeof o);
    o.warn = tmpfile();
    tg_bars bars;
    CHECK_OK(tg_bars_read(path, &o, &bars));
    memset(msg, 0, sizeof msg);
    rewind(o.warn);
    size_t got = fread(msg, 1, sizeof msg - 1, o.warn);
    fclose(o.warn);
    if (pass == 0) {
      CHECK_MSG(got == 0 && bars.reordered == 0, "ties ordered by instrument: %lld counted, warned '%s'",
                (long long)bars.reordered, msg);
      CHECK(bars.n == 4 && bars.instrument[0] == 4358 && bars.instrument[1] == 5482);
    } else {
      CHECK_MSG(bars.reordered > 0 && strstr(msg, "out of time order"), "%lld, '%s'", (long long)bars.reordered, msg);
    }
    tg_bars_free(&bars);
  }
  unlink(path);
  rmdir(dir);
}

/* Several contracts of one future by instrument id: the mappings name them (ESH1 -> 5482, ESM1 -> 5483), the bars get
 * a contract column, and the roll stitches them into one instrument. Per day (UTC, 2020-12-28 to 12-30) the closes
 * and volumes are H 3700 / 100, 3701 / 50, 3702 / 10 and M 3690 / 10, 3693 / 80, 3695 / 200: M's volume beats H's on
 * 12-29, so M is the front from 12-30; basis 3693 - 3701 = -8 added to H's bars 3700 and 3701. Two roots (ESH1, NQH1)
 * are two instruments, not contracts: no column. */
static void test_contracts(void) {
  static const sym es[2] = {{"ESH1", "5482"}, {"ESM1", "5483"}};
  const uint64_t day = 86400000000000ull, t0 = 1609113600000000000ull;
  const double h[3] = {3700, 3701, 3702}, m[3] = {3690, 3693, 3695}, hv[3] = {100, 50, 10}, mv[3] = {10, 80, 200};
  bytes b = {0};
  put_meta(&b, 2, 6, 0, es, 2);
  for (int d = 0; d < 3; d++) {
    for (int k = 0; k < 2; k++) {
      int64_t px = (int64_t)((k ? m[d] : h[d]) * 1e9);
      rec r = {0x21, 1, k ? 5483u : 5482u, t0 + (uint64_t)d * day, {px, px, px, px}, (uint64_t)(k ? mv[d] : hv[d])};
      put_rec(&b, &r, 0);
    }
  }
  tg_bars bars;
  tg_bars_init(&bars);
  CHECK(parse_bytes(&b, NULL, &bars) == TG_OK);
  const tg_bar_column *c = tg_bars_column(&bars, "contract");
  CHECK(c && c->kind == TG_COLUMN_CATEGORY && bars.n == 6);
  if (c && bars.n == 6) CHECK(strcmp(tg_categories_name(&c->cats, c->codes[0]), "ESH1") == 0 &&
                              strcmp(tg_categories_name(&c->cats, c->codes[1]), "ESM1") == 0);
  tg_roll_list l = {0};
  tg_roll_spec spec = {.rule = TG_ROLL_VOLUME};
  CHECK(tg_bars_roll(&bars, &spec, "mem.dbn", NULL, &l) == TG_OK);
  CHECK(bars.n == 3 && l.n == 1 && bars.close[0] == 3692 && bars.close[1] == 3693 && bars.close[2] == 3695);
  if (bars.n == 3) CHECK(bars.instrument[0] == 5483 && bars.instrument[1] == 5483 && bars.instrument[2] == 5483);
  if (l.n == 1) CHECK(strcmp(l.v[0].from, "ESH1") == 0 && strcmp(l.v[0].to, "ESM1") == 0 && l.v[0].adjustment == -8);
  tg_bars_free(&bars);
  /* the calendar rule has no expiry for ESH1: the error names it */
  tg_bars_init(&bars);
  CHECK(parse_bytes(&b, NULL, &bars) == TG_OK);
  spec.rule = TG_ROLL_CALENDAR;
  CHECK_STATUS(tg_bars_roll(&bars, &spec, "mem.dbn", NULL, &l), TG_ERR_INVALID);
  CHECK(msg_has("'ESH1'"));
  tg_bars_free(&bars);
  bytes_free(&b);
  tg_roll_list_free(&l);
  make_file(&b, 2, 0, k_recs, 2); /* ESH1 and NQH1 */
  tg_bars_init(&bars);
  CHECK(parse_bytes(&b, NULL, &bars) == TG_OK && tg_bars_column(&bars, "contract") == NULL);
  tg_bars_free(&bars);
  bytes_free(&b);
}

int main(void) {
  unsigned long long seed = tg_test_seed(20240611);
  test_contracts();
  test_versions();
  test_ts_out_length();
  test_record_kinds();
  test_nulls_and_scale();
  test_append();
  test_versions_refused();
  test_bad_metadata();
  test_bad_records();
  test_truncation_plain();
  test_zstd();
  test_corruption(seed);
  test_reorder_message();

  const char *shared = getenv("TG_SHARED_DATA");
  char root[2048];
  snprintf(root, sizeof root, "%s/dbn", shared ? shared : "");
  struct stat sb;
  if (!shared || !*shared || stat(root, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    printf("skipping the real-file checks: %s not found (set TG_SHARED_DATA to the shared data folder)\n",
           shared && *shared ? root : "TG_SHARED_DATA is not set, so ../shared/data/dbn");
  } else {
    test_shared_files(root);
    test_shared_versions(root);
    test_shared_damage(root);
  }
  return tg_test_finish();
}
