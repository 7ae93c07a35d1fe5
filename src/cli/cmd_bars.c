/* `tickgrad bars`: trade (and quote) ticks into bars by a recipe in one streaming pass, written as CSV or Parquet. */
#include <stdio.h>
#include <string.h>
#include "base/clock.h"
#include "cli/cli.h"
#include "cli/roll_report.h"
#include "tickgrad/ticks.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad bars --data TRADES --by RECIPE --out BARS.csv|BARS.parquet [--quotes QUOTES] [flags]\n"
          "Builds bars from trade ticks in one pass, in memory bounded by the bars made (docs/TICKS.md).\n"
          "TRADES: a CSV file with a header ts,price,size[,side][,flags], a DBN trades (tbbo, mbp-1) file, or Lean\n"
          "        AlgoSeek tick zips (YYYYMMDD_trade.zip; a folder or a glob of them reads in date order).\n"
          "QUOTES: a CSV file ts,bid,ask,bid_size,ask_size (or DBN tbbo, mbp-1, Lean _quote.zip files): adds bid, ask,\n"
          "        spread_mean, mid.\n"
          "RECIPE: time:1m, time:5s, tick:500, volume:10000, dollar:5e6, and the AFML bars tick_imbalance:E0T,\n"
          "        volume_imbalance:E0T, dollar_imbalance:E0T, tick_run:E0T, volume_run:E0T, dollar_run:E0T\n"
          "        (E0T the expected ticks per bar) with optional ,alpha=A,floor=F,cap=C,warmup=W.\n"
          "Columns out: ts,open,high,low,close,volume,trade_count,vwap,buy_volume,sell_volume[,bid,ask,spread_mean,mid].\n"
          "flags:\n"
          "  --data FILE          trade ticks (required)\n"
          "  --by RECIPE          how bars are cut (required)\n"
          "  --out FILE           the bars: Parquet when FILE ends in .parquet, else CSV (required)\n"
          "  --quotes FILE        quote ticks merged by time\n"
          "  --data-tz ZONE       zone of naive CSV times (default UTC; Lean zips are always America/New_York)\n"
          "  --contract NAME      the futures contract to read from Lean zips that hold several expiries (YYYYMM)\n"
          "                       or from a DBN file of several (its raw symbol: ESH4)\n"
          "  --roll RULE          every contract of such a source as one continuous series (bars per contract, the front\n"
          "                       kept each day): volume, open_interest or calendar[:N] (N days before expiry)\n"
          "  --adjust HOW         prices before each roll: difference (default), ratio or none\n"
          "  --keep-flagged       keep suspicious and cancelled trades (default: excluded and counted)\n"
          "  --no-tick-rule       a trade without a side counts as neither buy nor sell (default: the tick rule)\n"
          "  --out-of-order drop|error   a record older than the one before: dropped and counted (default) or an error\n");
}

typedef struct bars_args {
  const char *data, *by, *out, *quotes;
  tg_tick_opts tick;
  tg_bar_opts bar;
  tg_read_settings read; /* --roll and --adjust */
} bars_args;

/* Flags with a value; returns 0 to go on, or an exit code. */
static int value_flag(const char *f, const char *v, bars_args *a) {
  if (!v) return tg_cli_usage_error("bars", "%s needs a value", f);
  if (strcmp(f, "--data") == 0) a->data = v;
  else if (strcmp(f, "--by") == 0) a->by = v;
  else if (strcmp(f, "--out") == 0) a->out = v;
  else if (strcmp(f, "--quotes") == 0) a->quotes = v;
  else if (strcmp(f, "--data-tz") == 0) a->tick.tz = v;
  else if (strcmp(f, "--contract") == 0) a->tick.contract = v;
  else if (strcmp(f, "--roll") == 0 || strcmp(f, "--adjust") == 0) {
    if (tg_read_settings_set_flag(&a->read, f, v) != TG_OK) return tg_cli_usage_error("bars", "%s", tg_last_error());
  }
  else if (strcmp(f, "--out-of-order") == 0 && (strcmp(v, "drop") == 0 || strcmp(v, "error") == 0))
    a->tick.order = strcmp(v, "error") == 0 ? TG_TICKS_ORDER_ERROR : TG_TICKS_ORDER_DROP;
  else if (strcmp(f, "--out-of-order") == 0) return tg_cli_usage_error("bars", "--out-of-order '%s': want drop or error", v);
  else return tg_cli_usage_error("bars", "unknown flag '%s'", f);
  return 0;
}

/* Returns 0 to go on, -1 after --help, or an exit code. */
static int parse(int argc, char **argv, bars_args *a) {
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i];
    if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
      usage(stdout);
      return -1;
    }
    if (strcmp(f, "--keep-flagged") == 0) a->bar.keep_flagged = 1;
    else if (strcmp(f, "--no-tick-rule") == 0) a->bar.no_tick_rule = 1;
    else {
      int rc = value_flag(f, i + 1 < argc ? argv[i + 1] : NULL, a);
      if (rc) return rc;
      i++;
    }
  }
  if (!a->data) return tg_cli_usage_error("bars", "--data TRADES is required");
  if (!a->by) return tg_cli_usage_error("bars", "--by RECIPE is required (time:1m, tick:500, dollar:5e6, ...)");
  if (!a->out) return tg_cli_usage_error("bars", "--out BARS.csv is required");
  return 0;
}

static void summarise(const bars_args *a, const tg_tick_bars_report *rep, const tg_bars *b) {
  const tg_tick_counts *tc = &rep->trades, *qc = &rep->quotes;
  const tg_bar_stats *s = &rep->stats;
  if (rep->contracts)
    printf("wrote %s: %lld bars by %s, one contract at a time (%d contracts, %lld bars made)\n", a->out,
           (long long)b->n, a->by, rep->contracts, (long long)rep->contract_bars);
  else
    printf("wrote %s: %lld bars by %s\n", a->out, (long long)s->bars, a->by);
  printf("  trades      %lld read from %s, %lld excluded (suspicious or cancelled)%s, %lld out of order dropped\n",
         (long long)tc->records, a->data, (long long)s->excluded, a->bar.keep_flagged ? " [kept: --keep-flagged]" : "",
         (long long)tc->out_of_order);
  if (tc->skipped) printf("  skipped     %lld trade rows of size 0 (Lean)\n", (long long)tc->skipped);
  if (a->quotes) {
    printf("  quotes      %lld read from %s, %lld crossed dropped, %lld out of order dropped\n",
           (long long)qc->records, a->quotes, (long long)qc->crossed, (long long)qc->out_of_order);
    if (qc->skipped)
      printf("  skipped     %lld quote rows (Lean: before both sides of the day's book were known, or suspicious)\n",
             (long long)qc->skipped);
  }
  if (s->floor_hits || s->cap_hits)
    printf("  thresholds  %lld bars cut at the floor, %lld at the cap\n", (long long)s->floor_hits,
           (long long)s->cap_hits);
}

/* The contracts of a stitched series in order ("201311 -> 201312"), and its rolls. */
static void print_front(const tg_bars *b, const tg_roll_list *rolls, const bars_args *a, const tg_roll_spec *spec) {
  const tg_bar_column *con = tg_bars_column(b, "contract");
  printf("  front       ");
  for (int64_t i = 0; con && i < b->n; i++)
    if (i == 0 || con->codes[i] != con->codes[i - 1])
      printf("%s%s", i ? " -> " : "", tg_categories_name(&con->cats, con->codes[i]));
  printf("\n");
  tg_cli_print_rolls(stdout, rolls, a->read.roll, spec->adjust);
}

/* Makes the bars (with spec, the contracts of a futures source stitched by the library's roll) and writes them; prints
 * the summary. */
static int build(const bars_args *a, const tg_bar_recipe *r, const tg_roll_spec *spec) {
  if (spec && a->quotes) {
    fprintf(stderr, "tickgrad bars: --quotes with several futures contracts is not built; name one with --contract\n");
    return TG_EXIT_FAIL;
  }
  double t0 = tg_clock_seconds();
  tg_bars b;
  tg_tick_bars_report rep;
  tg_roll_list rolls = {0};
  tg_status st = spec ? tg_ticks_read_rolled(a->data, r, &a->tick, &a->bar, spec, &b, &rep, &rolls)
                      : tg_ticks_read_bars(a->data, a->quotes, r, &a->tick, &a->bar, &b, &rep);
  if (st == TG_OK) st = tg_bars_write(&b, a->out);
  if (st == TG_OK) {
    double secs = tg_clock_seconds() - t0;
    summarise(a, &rep, &b);
    if (spec) print_front(&b, &rolls, a, spec);
    printf("  elapsed     %.2f s (%.0f ticks/s)\n", secs, secs > 0 ? (double)(rep.trades.records) / secs : 0.0);
  } else {
    fprintf(stderr, "tickgrad bars: %s\n", tg_last_error());
  }
  tg_bars_free(&b);
  tg_roll_list_free(&rolls);
  return st == TG_OK ? TG_EXIT_OK : TG_EXIT_FAIL;
}

int tg_cmd_bars(int argc, char **argv) {
  bars_args a;
  memset(&a, 0, sizeof a);
  a.tick.warn = stderr;
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  tg_bar_recipe r;
  if (tg_bar_recipe_parse(a.by, &r) != TG_OK) return tg_cli_usage_error("bars", "--by: %s", tg_last_error());
  if (a.tick.contract && a.read.roll[0]) return tg_cli_usage_error("bars", "--contract reads one contract; --roll all");
  tg_tick_contracts list = {0};
  if (!a.tick.contract && tg_tick_contracts_list(a.data, TG_TICK_TRADES, &list) != TG_OK) {
    fprintf(stderr, "tickgrad bars: %s\n", tg_last_error());
    return TG_EXIT_FAIL;
  }
  if (list.n < 2 && a.read.roll[0])
    fprintf(stderr, "warning: %s holds %s futures contract; --roll has nothing to stitch\n", a.data,
            list.n ? "one" : "no");
  tg_roll_spec spec = {.adjust = (tg_adjust)a.read.adjust};
  if (list.n >= 2 && a.read.roll[0] && tg_roll_parse(a.read.roll, &spec) != TG_OK) {
    tg_tick_contracts_free(&list);
    return tg_cli_usage_error("bars", "%s", tg_last_error());
  }
  rc = list.n < 2 ? build(&a, &r, NULL) : a.read.roll[0] ? build(&a, &r, &spec) : TG_EXIT_FAIL;
  if (list.n >= 2 && !a.read.roll[0]) {
    fprintf(stderr, "tickgrad bars: %s: %d contracts (", a.data, list.n);
    for (int k = 0; k < list.n; k++) fprintf(stderr, "%s%s", k ? ", " : "", list.names[k]);
    if (list.spreads || list.options)
      fprintf(stderr, "; %d spread and %d option contracts left out", list.spreads, list.options);
    int lean = strspn(list.names[0], "0123456789") == strlen(list.names[0]);
    fprintf(stderr, "): give --roll volume|open_interest|calendar[:N] (and --adjust difference|ratio|none) for one "
            "continuous series, or --contract %s for one\n", lean ? "YYYYMM" : "NAME");
  }
  tg_tick_contracts_free(&list);
  return rc;
}
