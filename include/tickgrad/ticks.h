/* Ticks to bars: trade and quote records, streaming tick sources, and the one-pass bar builder (docs/TICKS.md). */
#ifndef TICKGRAD_TICKS_H
#define TICKGRAD_TICKS_H

#include <stdint.h>
#include <stdio.h>
#include "tickgrad/data.h"
#include "tickgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The aggressor of a trade: a buyer lifting the ask, a seller hitting the bid, or not said by the source. */
typedef enum tg_side { TG_SIDE_SELL = -1, TG_SIDE_UNKNOWN = 0, TG_SIDE_BUY = 1 } tg_side;

#define TG_TRADE_SUSPICIOUS 1u /* flags: the venue marked the print as doubtful (out of sequence, bad condition) */
#define TG_TRADE_CANCELLED 2u  /* flags: the print was cancelled or corrected away */

typedef struct tg_trade {
  int64_t ts;         /* ns since the epoch, UTC */
  double price, size; /* both > 0 */
  int8_t side;        /* tg_side */
  uint8_t flags;      /* TG_TRADE_* */
  int64_t line;       /* where the source read it (CSV line, DBN record number), for messages */
} tg_trade;

typedef struct tg_quote {
  int64_t ts;
  double bid, ask;           /* > 0; bid > ask is a crossed quote (counted and dropped by the sources) */
  double bid_size, ask_size; /* >= 0 */
  int64_t line;
} tg_quote;

typedef enum tg_tick_kind { TG_TICK_TRADES = 0, TG_TICK_QUOTES = 1 } tg_tick_kind;

/* Out-of-order records (a time before the previous record's): streaming cannot sort, so each is dropped and counted
 * (TG_TICKS_ORDER_DROP, the default, with one warning line naming the first) or the read fails naming it. */
typedef enum tg_tick_order { TG_TICKS_ORDER_DROP = 0, TG_TICKS_ORDER_ERROR = 1 } tg_tick_order;

typedef struct tg_tick_opts {
  const char *tz;      /* zone of naive CSV times (NULL or "UTC": UTC) */
  tg_tick_order order; /* out-of-order records */
  FILE *warn;          /* warning lines (the first out-of-order or crossed record); NULL: none */
  const char *contract; /* Lean futures zips: the expiry YYYYMM to read, zips without it skipped (NULL: each zip must
                         * hold one contract); DBN: a contract's raw symbol (tg_tick_contracts_list), the records of
                         * other instruments skipped */
  int lenient;          /* 1 (what inspect reads with): a record whose price, size, bid or ask is not a positive number
                         * (a quote size negative) is dropped and counted rather than an error; a DBN file may hold
                         * several instruments (counted); a Lean zip of several contracts without contract reads the
                         * nearest expiry (every contract named in tg_tick_source_contracts) */
} tg_tick_opts;

/* What a source read and what it dropped. */
typedef struct tg_tick_counts {
  int64_t records;      /* records handed out */
  int64_t out_of_order; /* dropped: time before the previous record's */
  int64_t crossed;      /* quotes dropped: bid above ask */
  int64_t skipped;      /* Lean rows that make no record: a trade of size 0, a suspicious quote row, a quote row
                         * before both sides of the day's book are known */
  int64_t bad_prices;   /* lenient: records dropped for a price (bid, ask) that is not a positive number */
  int64_t bad_sizes;    /* lenient: records dropped for a size that is not positive (a quote's: negative) */
  int64_t instruments;  /* distinct instrument ids of a DBN file's records (at most TG_TICK_MAX_INSTRUMENTS are told
                         * apart); 0 for sources that name none */
} tg_tick_counts;

#define TG_TICK_MAX_INSTRUMENTS 256

/* A stream of trades or quotes, read in chunks; memory is the source's fixed buffers, whatever the file's length. */
typedef struct tg_tick_source tg_tick_source;

/* Opens path as kind. The format is chosen by content: DBN (plain, "DBN" magic; trades schema as trades, tbbo and
 * mbp-1 as either), a Lean AlgoSeek tick zip (YYYYMMDD_trade.zip, YYYYMMDD_quote.zip; also a folder or a glob of
 * them, read in date order as one stream; needs libzip) or CSV with a header: trades ts,price,size[,side][,flags],
 * quotes ts,bid,ask,bid_size,ask_size (columns found by name, any order and case; docs/TICKS.md lists the names).
 * Errors name the file. */
tg_status tg_tick_open(const char *path, tg_tick_kind kind, const tg_tick_opts *opts, tg_tick_source **out);
/* A source over n records in memory (trades or quotes as kind says; not copied, must outlive the source), checked as
 * a file's records are; for tests and callers that hold ticks already. */
tg_status tg_tick_open_memory(const void *records, int64_t n, tg_tick_kind kind, const tg_tick_opts *opts,
                              const char *name, tg_tick_source **out);
/* Up to cap records into buf (tg_trade or tg_quote by the source's kind); *n = 0 at the end. An error names the file,
 * the line (or record) and the value: a price or size that is not a positive number, a side or flag not known. */
tg_status tg_tick_next(tg_tick_source *s, void *buf, int64_t cap, int64_t *n);
/* The futures contracts a source holds: a Lean zip (folder, glob) of futures lists each contract expiry YYYYMM any of
 * its zips holds, sorted (the zips' member names are read, no data); a DBN file whose records carry several outright
 * contracts of one root lists their raw symbols, sorted (one pass over the records; names from the definition
 * records of the DBN files beside it, else from its metadata's symbol mappings; spreads and options, by the
 * definitions' instrument class or else by a '-' or ' ' in the name, are left out and counted); every other source
 * gives none (n = 0). */
#define TG_CONTRACT_NAME_MAX 32
typedef struct tg_tick_contracts {
  int n;
  char (*names)[TG_CONTRACT_NAME_MAX]; /* [n] */
  int spreads, options;                /* DBN: the contracts left out */
  int definitions;                     /* DBN: 1 when definition records named them */
} tg_tick_contracts;
tg_status tg_tick_contracts_list(const char *path, tg_tick_kind kind, tg_tick_contracts *out);
void tg_tick_contracts_free(tg_tick_contracts *c); /* and empties it */
tg_tick_kind tg_tick_source_kind(const tg_tick_source *s);
const tg_tick_counts *tg_tick_source_counts(const tg_tick_source *s);
/* What was opened: "csv", "dbn trades" (tbbo, mbp-1: the metadata's schema), "lean equity", "lean futures", "memory". */
const char *tg_tick_source_format(const tg_tick_source *s);
/* The futures contracts (expiries YYYYMM) the Lean zips read so far name, in the order seen, "" for none. */
const char *tg_tick_source_contracts(const tg_tick_source *s);

/* ---- inspecting a tick file ------------------------------------------------------------------------------------ */

/* What one streaming pass over a tick source saw (tg_tick_inspect). */
typedef struct tg_tick_report {
  tg_tick_kind kind;
  char format[32];          /* tg_tick_source_format */
  char contracts[256];      /* tg_tick_source_contracts; "" when none */
  tg_tick_counts counts;    /* records kept, dropped (out of order, crossed, bad) and skipped */
  int64_t first_ts, last_ts; /* of the records kept (0 when none) */
  int64_t suspicious, cancelled; /* trades kept that carry those flags */
  int64_t buys, sells, unknown_side; /* trades by aggressor */
  int64_t locked;           /* quotes with bid == ask */
  double min_price, max_price; /* trades: price; quotes: bid (min) and ask (max); NaN when none */
  double volume;            /* trades: the sum of sizes */
} tg_tick_report;

/* 1 when path opens as a tick source of some kind and its first records read: *kind receives the first of trades and
 * quotes that gives a record (or, when neither does, the first that opens); 0 otherwise (a bar file, say). One chunk
 * of each kind is read at most. */
int tg_tick_sniff(const char *path, const tg_tick_opts *opts, tg_tick_kind *kind);
/* Reads path as kind once, leniently (opts->lenient is set for the pass), in constant memory, into *r. Errors are those
 * of the source that lenience does not cover (a malformed line or record, an unreadable file), naming the file. */
tg_status tg_tick_inspect(const char *path, tg_tick_kind kind, const tg_tick_opts *opts, tg_tick_report *r);
/* Writes every record path's source hands out as kind (read as `tickgrad bars` reads it, opts as given) to out_path as
 * CSV, atomically: trades ts_ns,price,size,side,flags,record; quotes ts_ns,bid,ask,bid_size,ask_size,record (numbers
 * to 17 digits: the doubles exactly; record: the source's line or record number). For cross-checks against other
 * decoders (tools/check_dbn_ticks.py). */
tg_status tg_tick_dump(const char *path, tg_tick_kind kind, const tg_tick_opts *opts, const char *out_path);
void tg_tick_close(tg_tick_source *s);

/* ---- bars ------------------------------------------------------------------------------------------------------ */

typedef enum tg_bar_kind {
  TG_BARS_TIME = 0, /* fixed clock intervals, aligned to the UTC epoch */
  TG_BARS_TICK,     /* every `size` trades */
  TG_BARS_VOLUME,   /* once `size` units traded (the trade that crosses it stays whole in the bar) */
  TG_BARS_DOLLAR,   /* once `size` of notional (price x size) traded */
  TG_BARS_TICK_IMBALANCE, TG_BARS_VOLUME_IMBALANCE, TG_BARS_DOLLAR_IMBALANCE, /* AFML 2.3.2.1-2 */
  TG_BARS_TICK_RUN, TG_BARS_VOLUME_RUN, TG_BARS_DOLLAR_RUN                    /* AFML 2.3.2.3 */
} tg_bar_kind;

/* How bars are cut. Parsed from "kind:SIZE[,key=value...]" (tg_bar_recipe_parse): time:1m, tick:500, volume:1e4,
 * dollar:5e6, tick_imbalance:100, volume_run:50,alpha=0.1,floor=0.2,cap=5,warmup=200.
 *
 * Imbalance and run bars (docs/TICKS.md has the formulas). v_t is 1, the size or price x size by the kind; b_t is the
 * trade's side, else the tick rule's sign. SIZE is E0[T], the expected bar length in ticks. The guards:
 * - warm-up: the first `warmup` trades (default SIZE, at least 1) estimate the expectations the first bar is cut by
 *   (imbalance: the mean of b_t v_t; runs: the means of the buy and of the sell v_t; both: the mean v_t, V0); no bar
 *   closes before the warm-up ends;
 * - after each bar the expectations are EWMAs over bars: E[T] <- alpha T + (1 - alpha) E[T], and the same for the bar's
 *   mean imbalance (or buy and sell means) per tick;
 * - the threshold E[T] |E[b v]| (runs: E[T] max(E[buy v], E[sell v])) is clamped to [floor S0, cap S0] where
 *   S0 = SIZE x V0 is the initial expectation's scale (a one-sided bar of SIZE ticks): floor keeps balanced flow from
 *   collapsing bars to single ticks, cap keeps one-sided flow from feeding ever longer bars. Defaults: alpha 0.2,
 *   floor 0.1, cap 10. */
typedef struct tg_bar_recipe {
  tg_bar_kind kind;
  int64_t interval_ns; /* TIME */
  double size;         /* TICK/VOLUME/DOLLAR: the threshold; imbalance and run: E0[T] in ticks */
  double alpha;        /* EWMA weight of the last bar, (0, 1] */
  double floor, cap;   /* threshold bounds, times S0: 0 < floor <= 1 <= cap */
  int64_t warmup;      /* trades before the first imbalance or run bar may close (0: SIZE rounded up) */
} tg_bar_recipe;

/* Parses a recipe (above). TG_ERR_INVALID naming the text and what is wrong: an unknown kind or key, a size that is not
 * a positive number, a time bar's interval, a guard out of range. */
tg_status tg_bar_recipe_parse(const char *text, tg_bar_recipe *r);
/* The kind's name as recipes spell it ("tick_imbalance"). */
const char *tg_bar_kind_name(tg_bar_kind k);

typedef struct tg_bar_opts {
  int keep_flagged; /* 1: suspicious and cancelled trades make bars too (default: excluded and counted) */
  int no_tick_rule; /* 1: a trade without a side gets b = 0 rather than the tick rule's sign */
  int quotes;       /* 1: the bars get quote columns (bid, ask, spread_mean, mid) */
} tg_bar_opts;

/* What one pass did. */
typedef struct tg_bar_stats {
  int64_t trades, quotes;    /* records given to the builder */
  int64_t excluded;          /* flagged trades left out */
  int64_t bars;              /* bars pushed */
  int64_t floor_hits, cap_hits; /* imbalance and run bars cut at a clamped threshold */
} tg_bar_stats;

/* The builder: one bar open at a time, fixed memory; finished bars are pushed into a tg_bars with extra columns
 * trade_count, vwap, buy_volume, sell_volume (b_t = +1 and -1 trades; b_t = 0 in neither) and, with opts->quotes,
 * bid, ask (the last quote at the bar's close; NaN before any), spread_mean (mean ask - bid of the quotes since the
 * previous bar closed, the last quote's when none came) and mid ((bid + ask) / 2 of the last). A bar's ts is its
 * interval's start for time bars, else its first trade's time. */
typedef struct tg_bar_builder tg_bar_builder;

/* out must be initialised and hold no extra column of the builder's names. */
tg_status tg_bar_builder_new(const tg_bar_recipe *r, const tg_bar_opts *opts, tg_bars *out, tg_bar_builder **b);
/* Records in time order (a time before the last record's is TG_ERR_INVALID naming it). */
tg_status tg_bar_builder_trade(tg_bar_builder *b, const tg_trade *t);
tg_status tg_bar_builder_quote(tg_bar_builder *b, const tg_quote *q);
/* Pushes the open bar (a partial last bar) and ends the pass; an imbalance recipe whose warm-up saw no trade with a
 * side under no_tick_rule is TG_ERR_INVALID (it fails as soon as the warm-up ends, too). */
tg_status tg_bar_builder_finish(tg_bar_builder *b);
const tg_bar_stats *tg_bar_builder_stats(const tg_bar_builder *b);
void tg_bar_builder_free(tg_bar_builder *b);

/* One pass over trades (and quotes, may be NULL: merged by time, a quote before a trade of the same time) into out,
 * which is initialised by this call (freed on failure); opts->quotes is taken from whether quotes is given. stats may
 * be NULL. */
tg_status tg_ticks_to_bars(tg_tick_source *trades, tg_tick_source *quotes, const tg_bar_recipe *r,
                           const tg_bar_opts *opts, tg_bars *out, tg_bar_stats *stats);

/* Bars of every contract of a futures source (tg_tick_contracts_list), one pass of the recipe per contract (each reads
 * only its own members), with a category column `contract` naming each bar's and, where Lean's
 * YYYYMMDD_openinterest.zip lies beside a trade zip, a column open_interest (the contract's last value at or before the bar's time), sorted by
 * time: the per-contract bars tg_bars_roll stitches. out is initialised by this call (freed on failure); stats and counts (may be NULL) are
 * summed over the contracts. A source of one contract or none gives its bars with no contract column. */
tg_status tg_ticks_to_contract_bars(const char *path, const tg_tick_opts *opts, const tg_bar_recipe *r,
                                    const tg_bar_opts *bo, tg_bars *out, tg_bar_stats *stats, tg_tick_counts *counts);
/* What tg_ticks_read_bars read, made and dropped. */
typedef struct tg_tick_bars_report {
  tg_bar_stats stats;
  tg_tick_counts trades, quotes; /* quotes: all 0 without a quotes file */
  int contracts;                 /* a source of several futures contracts: how many were read one at a time (else 0) */
  int64_t contract_bars;         /* the bars those passes made (before a roll keeps the front's) */
} tg_tick_bars_report;

/* Opens trades (and quotes, may be NULL) as tg_tick_open does, makes bars by r in one pass (tg_ticks_to_bars) and
 * closes them; out is initialised by this call (freed on failure), report may be NULL. A trades source of several
 * futures contracts (no quotes, no tick->contract) gives each contract's bars instead (tg_ticks_to_contract_bars), which
 * a read stitches by its roll rule or refuses naming them. A trades path that does not
 * open as ticks but reads as bars is TG_ERR naming it as bars (leave --by out). This is what `tickgrad bars` and a
 * read with tg_read_opts.by do. */
tg_status tg_ticks_read_bars(const char *trades, const char *quotes, const tg_bar_recipe *r,
                             const tg_tick_opts *tick, const tg_bar_opts *bar, tg_bars *out,
                             tg_tick_bars_report *report);

/* tg_ticks_read_bars of trades (no quotes), and a source of several futures contracts stitched into one series by spec
 * (tg_bars_roll: its warning line to tick->warn, the rolls into rolls, which may be NULL; a spec of no rule refuses
 * contracts that overlap, naming them). out is initialised by this call (freed on failure). What `tickgrad bars
 * --roll` does; a read with tg_read_opts.by and roll stitches the same bars in tg_bars_read. */
tg_status tg_ticks_read_rolled(const char *trades, const tg_bar_recipe *r, const tg_tick_opts *tick,
                               const tg_bar_opts *bar, const tg_roll_spec *spec, tg_bars *out,
                               tg_tick_bars_report *report, tg_roll_list *rolls);

/* Writes bars as CSV (atomically): ts ("YYYY-MM-DD HH:MM:SS[.fffffffff]", UTC), open, high, low, close, volume,
 * instrument when present, then every numeric extra column by name (NaN as an empty field; numbers to 17 digits,
 * so the CSV reader gives them back bit for bit). Category columns are written as their names. */
tg_status tg_bars_write_csv(const tg_bars *b, const char *path);
/* Writes bars as Parquet (atomically), one row group of zstd-compressed pages: ts INT64 TIMESTAMP(NANOS, UTC), open,
 * high, low, close, volume DOUBLE (NaN stays NaN), instrument INT64 when present, then every extra column by name:
 * numeric ones DOUBLE, category ones BYTE_ARRAY STRING, dictionary-encoded with the names in code order and missing
 * values null. tg_bars_read gives the bars back bit for bit (a series of no bars has no row group, so its category
 * names are not kept). An extra column named like a bar field is TG_ERR_INVALID naming it. */
tg_status tg_bars_write_parquet(const tg_bars *b, const char *path);
/* tg_bars_write_parquet when path ends in ".parquet" (any case), else tg_bars_write_csv. */
tg_status tg_bars_write(const tg_bars *b, const char *path);

#ifdef __cplusplus
}
#endif
#endif
