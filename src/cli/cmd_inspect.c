/* `tickgrad inspect FILE...`: reads bar or tick files and prints a readable report of each. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/read_flags.h"
#include "cli/roll_report.h"
#include "data/readers/timeconv.h"
#include "tickgrad/data.h"
#include "tickgrad/ticks.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad inspect [flags] FILE|FOLDER|GLOB...\n"
          "Reads bar files (CSV, Databento DBN, Parquet; the format is found from the content) and reports\n"
          "format, rows, instruments, time range, median bar interval, gaps longer than 3 intervals,\n"
          "duplicate and out-of-order timestamps, OHLC violations and NaN/zero/negative prices, and the\n"
          "extra columns kept beside the bars (CSV and Parquet: every further column by name, numeric or a\n"
          "category, with its missing values; several files keep those every file has).\n"
          "The bar checks every other command makes when it reads (duplicate times, OHLC, volume, prices) are\n"
          "reported, not enforced: the line 'check' gives the first failure, as train would report it.\n"
          "Tick files (what tickgrad bars --data reads: CSV trades or quotes, DBN trades/tbbo/mbp-1, Lean tick zips, a\n"
          "folder or glob of them) are found as the tick reader finds them (trades tried first) and reported from one\n"
          "streaming pass: format and schema, instruments, Lean futures contracts, records, time range, out-of-order\n"
          "and crossed records, bad prices and sizes (dropped and counted, not fatal), Lean's skipped rows, the\n"
          "suspicious and cancelled flags, sides, price range.\n"
          "DBN definition and statistics files (found by their metadata's schema) report their records, instruments,\n"
          "instrument classes and expiries, each instrument's symbol, multiplier and tick size, and open interest.\n"
          "flags:\n"
          "  --ticks KIND       read every file as ticks of KIND: trades or quotes (a tbbo or mbp-1 file holds both)\n"
          "  --contract YYYYMM  Lean futures zips: the contract to read (default: the nearest expiry of each day)\n"
          "  --dump OUT.csv     one tick file: also write every record as tickgrad bars reads it (ts_ns and exact\n"
          "                     numbers; tools/check_dbn_ticks.py compares them with Databento's decoder); a DBN\n"
          "                     definition or statistics file: every such record\n"
          "  --tz ZONE          zone of naive local timestamps and of --resample's buckets (default UTC)\n"
          "  --resample IVAL    aggregate to a coarser interval first: 5m, 1h, 1d, ...\n"
          "  --session HH:MM-HH:MM  with --resample: keep bars starting in this local session\n"
          "Several futures contracts (a contract column; Lean futures files name theirs) are reported as read unless\n"
          "--roll is given; then the stitched series is, with its rolls (date, from, to, adjustment).\n");
  cli_read_flags_help(f);
}

static int parse_hhmm(const char *s, int *min) {
  int h, m;
  char tail;
  if (sscanf(s, "%d:%d%c", &h, &m, &tail) != 2 || h < 0 || h > 24 || m < 0 || m > 59 || h * 60 + m > 1440) return 0;
  *min = h * 60 + m;
  return 1;
}

static void print_report(const tg_bars *b, const tg_bars_report *r, const tg_column_report *cols, const char *check,
                         const tg_read_opts *ro) {
  char t0[40], t1[40], iv[32];
  printf("%s\n", b->source);
  printf("  format      %s\n", b->format);
  printf("  columns     ts open high low close%s%s\n", r->has_volume ? " volume" : "",
         b->instrument ? " instrument" : "");
  printf("  rows        %lld, %lld instrument%s\n", (long long)r->rows, (long long)r->instruments,
         r->instruments == 1 ? "" : "s");
  printf("  check       %s\n", check);
  if (r->rows == 0) return;
  printf("  range       %s .. %s UTC\n", tg_format_utc(r->first_ts, 0, t0, sizeof t0),
         tg_format_utc(r->last_ts, 0, t1, sizeof t1));
  printf("  interval    %s (median)\n", r->median_interval_ns ? tg_format_duration(r->median_interval_ns, iv, sizeof iv) : "-");
  printf("  gaps        %lld longer than 3 intervals", (long long)r->gaps);
  for (int k = 0; k < TG_INSPECT_MAX_GAPS && k < r->gaps; k++)
    printf("%s%s after %s", k ? ", " : "; longest: ", tg_format_duration(r->gap_ns[k], iv, sizeof iv),
           tg_format_utc(r->gap_at[k], 0, t0, sizeof t0));
  printf("\n");
  printf("  duplicates  %lld\n", (long long)r->duplicates);
  printf("  reordered   %lld\n", (long long)r->reordered);
  printf("  ohlc        %lld violations\n", (long long)r->ohlc_violations);
  printf("  prices      %lld NaN, %lld zero, %lld negative\n", (long long)r->nan_prices, (long long)r->zero_prices,
         (long long)r->negative_prices);
  if (r->has_volume)
    printf("  volume      %lld NaN, %lld negative\n", (long long)r->nan_volume, (long long)r->negative_volume);
  if (b->n_cols) printf("  extra       %d column%s\n", b->n_cols, b->n_cols == 1 ? "" : "s");
  for (int k = 0; k < b->n_cols; k++) {
    if (cols[k].kind == TG_COLUMN_NUMERIC)
      printf("              '%s' numeric, %lld missing\n", cols[k].name, (long long)cols[k].missing);
    else
      printf("              '%s' category, %lld distinct, %lld missing\n", cols[k].name, (long long)cols[k].distinct,
             (long long)cols[k].missing);
  }
  if (ro->rolls && (ro->rolls->n || ro->roll)) tg_cli_print_rolls(stdout, ro->rolls, ro->roll, ro->adjust);
}

static void print_ticks(const char *path, const tg_tick_report *r, const char *contract) {
  const tg_tick_counts *c = &r->counts;
  char t0[40], t1[40];
  printf("%s\n", path);
  printf("  format      %s ticks (%s)\n", r->kind == TG_TICK_TRADES ? "trade" : "quote", r->format);
  if (c->instruments) printf("  instruments %lld%s\n", (long long)c->instruments, c->instruments >= TG_TICK_MAX_INSTRUMENTS ? " or more" : "");
  if (r->contracts[0])
    printf("  contracts   %s (read: %s)\n", r->contracts, contract ? contract : "the nearest expiry of each day");
  printf("  records     %lld\n", (long long)c->records);
  if (c->records)
    printf("  range       %s .. %s UTC\n", tg_format_utc(r->first_ts, 0, t0, sizeof t0),
           tg_format_utc(r->last_ts, 0, t1, sizeof t1));
  printf("  reordered   %lld out of order (dropped)\n", (long long)c->out_of_order);
  printf("  bad         %lld prices, %lld sizes (dropped)\n", (long long)c->bad_prices, (long long)c->bad_sizes);
  if (r->kind == TG_TICK_QUOTES)
    printf("  crossed     %lld (dropped); %lld locked (bid = ask)\n", (long long)c->crossed, (long long)r->locked);
  else {
    printf("  flags       %lld suspicious, %lld cancelled\n", (long long)r->suspicious, (long long)r->cancelled);
    printf("  sides       %lld buy, %lld sell, %lld unknown\n", (long long)r->buys, (long long)r->sells,
           (long long)r->unknown_side);
  }
  if (c->skipped) printf("  skipped     %lld rows that make no record\n", (long long)c->skipped);
  if (c->records)
    printf("  prices      %.10g .. %.10g%s\n", r->min_price, r->max_price, r->kind == TG_TICK_QUOTES ? " (lowest bid .. highest ask)" : "");
  if (r->kind == TG_TICK_TRADES && c->records) printf("  volume      %.10g\n", r->volume);
}

static int by_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* The distinct instrument ids of r's statistics (one sort), or -1 when out of memory. */
static int64_t distinct_stat_ids(const tg_dbn_refdata *r) {
  uint32_t *v = malloc((size_t)(r->n_stats ? r->n_stats : 1) * sizeof *v);
  if (!v) return -1;
  for (int64_t i = 0; i < r->n_stats; i++) v[i] = r->stats[i].id;
  qsort(v, (size_t)r->n_stats, sizeof *v, by_u32);
  int64_t ids = 0;
  for (int64_t i = 0; i < r->n_stats; i++) ids += i == 0 || v[i] != v[i - 1];
  free(v);
  return ids;
}

/* The distinct instrument ids of r's definitions (or statistics) and, for definitions, counts by class and the
 * expiries' range; each instrument's latest definition on a line of its own (the first 20). */
static void print_refdata(const char *path, const tg_dbn_refdata *r) {
  char t0[40], t1[40];
  printf("%s\n", path);
  printf("  format      dbn %s (DBN version %d)\n", r->schema, r->version);
  printf("  records     %lld definition, %lld statistics\n", (long long)r->n_defs, (long long)r->n_stats);
  int64_t classes[128] = {0}, expiring = 0, oi = 0;
  int64_t first_exp = INT64_MAX, last_exp = INT64_MIN;
  unsigned char *latest = calloc((size_t)(r->n_defs ? r->n_defs : 1), 1); /* [n_defs] its instrument's last */
  int64_t ids = !latest ? -1 : r->n_defs ? r->n_ids : distinct_stat_ids(r);
  if (ids < 0) {
    free(latest);
    printf("  (out of memory for the instrument counts)\n");
    return;
  }
  for (int64_t k = 0; k < r->n_ids; k++) latest[r->by_id[k]] = 1;
  for (int64_t i = 0; i < r->n_defs; i++) {
    const tg_instrument_def *d = &r->defs[i];
    if (!latest[i]) continue; /* an earlier version of a later record */
    classes[(unsigned char)d->instrument_class & 127]++;
    if (d->expiration != INT64_MIN) {
      expiring++;
      if (d->expiration < first_exp) first_exp = d->expiration;
      if (d->expiration > last_exp) last_exp = d->expiration;
    }
  }
  for (int64_t i = 0; i < r->n_stats; i++) oi += r->stats[i].type == TG_DBN_STAT_OPEN_INTEREST;
  printf("  instruments %lld\n", (long long)ids);
  if (r->n_defs) {
    printf("  classes    ");
    for (int c = 0; c < 128; c++)
      if (classes[c]) printf(" %lld %s", (long long)classes[c], tg_instrument_class_name((char)c));
    printf("\n");
    if (expiring)
      printf("  expiries    %lld, %s .. %s UTC\n", (long long)expiring, tg_format_utc(first_exp, 0, t0, sizeof t0),
             tg_format_utc(last_exp, 0, t1, sizeof t1));
    else
      printf("  expiries    none\n");
    int shown = 0;
    for (int64_t i = 0; i < r->n_defs && shown < 20; i++) {
      const tg_instrument_def *d = &r->defs[i];
      if (!latest[i]) continue;
      shown++;
      char mult[32] = "-", tick[32] = "-";
      if (!isnan(d->multiplier)) snprintf(mult, sizeof mult, "%.10g", d->multiplier);
      if (!isnan(d->tick_size)) snprintf(tick, sizeof tick, "%.10g", d->tick_size);
      printf("              %u %s: %s, expires %s, multiplier %s, tick %s\n", d->id, d->symbol,
             tg_instrument_class_name(d->instrument_class),
             d->expiration == INT64_MIN ? "-" : tg_format_utc(d->expiration, 0, t0, sizeof t0), mult, tick);
    }
    if (ids > shown) printf("              ... and %lld more\n", (long long)(ids - shown));
  }
  if (r->n_stats) {
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (int64_t i = 0; i < r->n_stats; i++) {
      if (r->stats[i].ts < first) first = r->stats[i].ts;
      if (r->stats[i].ts > last) last = r->stats[i].ts;
    }
    printf("  range       %s .. %s UTC\n", tg_format_utc(first, 0, t0, sizeof t0), tg_format_utc(last, 0, t1, sizeof t1));
    int64_t by_type[65] = {0}; /* DBN's stat types are small numbers; [64] counts any larger one */
    for (int64_t i = 0; i < r->n_stats; i++) by_type[r->stats[i].type < 64 ? r->stats[i].type : 64]++;
    printf("  stat types ");
    for (int t = 0; t < 64; t++)
      if (by_type[t]) printf(" %d (%lld)", t, (long long)by_type[t]);
    if (by_type[64]) printf(" 64 or more (%lld)", (long long)by_type[64]);
    printf("\n  open interest %lld records (stat type %d)\n", (long long)oi, TG_DBN_STAT_OPEN_INTEREST);
  }
  free(latest);
}

/* Reports a DBN definition or statistics file (and dumps its records); 0 done, 1 failed. */
static int inspect_refdata(const char *path, const char *dump) {
  tg_dbn_refdata r;
  if (tg_dbn_refdata_read(path, &r) != TG_OK) {
    fprintf(stderr, "tickgrad inspect: %s\n", tg_last_error());
    return 1;
  }
  int failed = dump && tg_dbn_refdata_dump(&r, dump) != TG_OK;
  if (failed) fprintf(stderr, "tickgrad inspect: --dump: %s\n", tg_last_error());
  else print_refdata(path, &r);
  tg_dbn_refdata_free(&r);
  return failed;
}

/* Reports path as ticks when kind_flag names a kind or it opens as a tick source; 0 done, 1 failed, -1 not ticks. */
static int inspect_ticks(const char *path, const char *kind_flag, const tg_tick_opts *to, const char *dump) {
  tg_tick_kind kind;
  if (kind_flag) kind = !strcmp(kind_flag, "quotes") ? TG_TICK_QUOTES : TG_TICK_TRADES;
  else if (!tg_tick_sniff(path, to, &kind)) return -1;
  if (dump && tg_tick_dump(path, kind, to, dump) != TG_OK) {
    fprintf(stderr, "tickgrad inspect: --dump: %s\n", tg_last_error());
    return 1;
  }
  tg_tick_report r;
  if (tg_tick_inspect(path, kind, to, &r) != TG_OK) {
    fprintf(stderr, "tickgrad inspect: %s\n", tg_last_error());
    return 1;
  }
  print_ticks(path, &r, to->contract);
  return 0;
}

int tg_cmd_inspect(int argc, char **argv) {
  cli_read_flags rf;
  memset(&rf, 0, sizeof rf);
  tg_resample_opts rs;
  memset(&rs, 0, sizeof rs);
  const char *files[256], *ticks = NULL, *dump = NULL;
  tg_tick_opts to = {0};
  int n_files = 0;
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
      usage(stdout);
      return TG_EXIT_OK;
    } else if (f[0] == '-' && f[1] == '-') {
      int rc = 0;
      if (cli_read_flag("inspect", &rf, f, v, &rc) > 0) {
        if (rc) return rc;
        i++;
        continue;
      }
      if (!v) return tg_cli_usage_error("inspect", "%s needs a value", f);
      i++;
      if (!strcmp(f, "--tz")) {
        if (tg_tz_check(v) != TG_OK) return tg_cli_usage_error("inspect", "%s", tg_last_error());
        snprintf(rf.s.tz, sizeof rf.s.tz, "%s", v);
        rs.tz = v;
      } else if (!strcmp(f, "--ticks")) {
        if (strcmp(v, "trades") && strcmp(v, "quotes"))
          return tg_cli_usage_error("inspect", "--ticks '%s': want trades or quotes", v);
        ticks = v;
      } else if (!strcmp(f, "--dump")) {
        dump = v;
      } else if (!strcmp(f, "--contract")) {
        if (strlen(v) != 6 || strspn(v, "0123456789") != 6)
          return tg_cli_usage_error("inspect", "--contract '%s': want an expiry YYYYMM", v);
        to.contract = v;
      } else if (!strcmp(f, "--resample")) {
        if (tg_interval_parse(v, &rs.interval_ns) != TG_OK) return tg_cli_usage_error("inspect", "%s", tg_last_error());
      } else if (!strcmp(f, "--session")) {
        const char *dash = strchr(v, '-');
        char a[16];
        if (!dash || dash - v >= (long)sizeof a) return tg_cli_usage_error("inspect", "--session '%s': want HH:MM-HH:MM", v);
        memcpy(a, v, (size_t)(dash - v));
        a[dash - v] = '\0';
        if (!parse_hhmm(a, &rs.session_start_min) || !parse_hhmm(dash + 1, &rs.session_end_min) ||
            rs.session_start_min >= rs.session_end_min)
          return tg_cli_usage_error("inspect", "--session '%s': want HH:MM-HH:MM with start before end", v);
      } else {
        return tg_cli_usage_error("inspect", "unknown flag '%s'", f);
      }
    } else if (n_files < (int)(sizeof files / sizeof files[0])) {
      files[n_files++] = f;
    } else {
      return tg_cli_usage_error("inspect", "too many files (at most 256; pass a folder or a glob)");
    }
  }
  if (n_files == 0) return tg_cli_usage_error("inspect", "no file given");
  if (rs.session_end_min && !rs.interval_ns) return tg_cli_usage_error("inspect", "--session goes with --resample");
  tg_read_opts ro = tg_read_settings_opts(&rf.s, stderr);
  ro.no_checks = 1; /* reported below, not enforced */
  tg_roll_list rolls = {0};
  ro.rolls = &rolls;
  int failed = 0;
  to.tz = rf.s.tz[0] ? rf.s.tz : NULL;
  if (ticks && rs.interval_ns) return tg_cli_usage_error("inspect", "--resample goes with bar files, not --ticks");
  if (ticks && rf.s.by[0]) return tg_cli_usage_error("inspect", "--by reports the bars made from ticks; --ticks the ticks");
  if (dump && n_files != 1) return tg_cli_usage_error("inspect", "--dump takes one tick file, not %d", n_files);
  for (int i = 0; i < n_files; i++) {
    tg_bars bars, coarse;
    tg_bars_report rep;
    /* with --by the bars made from the ticks are reported, as every command reads them */
    int tick_rc = rs.interval_ns || rf.s.by[0] ? -1
                  : !ticks && tg_dbn_refdata_sniff(files[i]) ? inspect_refdata(files[i], dump)
                                                             : inspect_ticks(files[i], ticks, &to, dump);
    if (tick_rc < 0 && dump) {
      fprintf(stderr, "tickgrad inspect: --dump: %s is not a tick file (give --ticks trades|quotes to read it as one)\n",
              files[i]);
      return TG_EXIT_FAIL;
    }
    if (tick_rc >= 0) {
      failed |= tick_rc;
      continue;
    }
    if (tg_bars_read(files[i], &ro, &bars) != TG_OK) {
      fprintf(stderr, "tickgrad inspect: %s\n", tg_last_error());
      failed = 1;
      continue;
    }
    tg_read_opts checks = ro; /* the same read as the other commands make, for its verdict */
    tg_bars checked;
    checks.no_checks = 0;
    checks.warn = NULL;
    checks.rolls = NULL;
    char check[1024] = "ok";
    if (tg_bars_read(files[i], &checks, &checked) != TG_OK) snprintf(check, sizeof check, "%s", tg_last_error());
    tg_bars_free(&checked);
    if (rs.interval_ns) {
      tg_bars_init(&coarse);
      if (tg_bars_resample(&bars, &rs, &coarse) != TG_OK) {
        fprintf(stderr, "tickgrad inspect: %s: resample: %s\n", files[i], tg_last_error());
        tg_bars_free(&bars);
        failed = 1;
        continue;
      }
      snprintf(coarse.source, sizeof coarse.source, "%.200s (resampled)", bars.source);
      snprintf(coarse.format, sizeof coarse.format, "%s", bars.format);
      tg_bars_free(&bars);
      bars = coarse;
    }
    tg_column_report *cols = malloc(((size_t)bars.n_cols + 1) * sizeof *cols);
    if (!cols || tg_bars_inspect(&bars, &rep) != TG_OK || tg_bars_inspect_columns(&bars, cols) != TG_OK) {
      fprintf(stderr, "tickgrad inspect: %s: %s\n", files[i], cols ? tg_last_error() : "out of memory");
      failed = 1;
    } else {
      print_report(&bars, &rep, cols, check, &ro);
    }
    free(cols);
    tg_bars_free(&bars);
  }
  tg_roll_list_free(&rolls);
  return failed ? TG_EXIT_FAIL : TG_EXIT_OK;
}
