/* `tickgrad synth`: writes a seeded synthetic market (OHLCV bars) as CSV, atomically, and summarises it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "data/readers/timeconv.h"
#include "tickgrad/data.h"
#include "tickgrad/synth.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad synth [--bars N] [--interval 1m|5m|1h|1d] [--seed N] [--instruments K] [--signal X]\n"
          "                      [--correlation X] [--start YYYY-MM-DD] --out FILE.csv\n"
          "Writes a seeded synthetic market: OHLCV bars with regime switches, volatility clustering,\n"
          "intraday seasonality (sessions 14:30-21:00 UTC on weekdays for intraday bars) and log-normal\n"
          "volume. --signal X plants a predictable component: the next standardized return has mean\n"
          "X times the previous one (lag-1 correlation X); 0 is a pure random walk (see tickgrad/synth.h).\n"
          "The same flags always give the same file. Columns: ts (\"YYYY-MM-DD HH:MM:SS\", UTC),\n"
          "open, high, low, close, volume, and instrument when K > 1 (ids 0..K-1, rows by time then id).\n"
          "flags:\n"
          "  --bars N          bars per instrument (default 10000)\n"
          "  --interval IVAL   bar length, whole seconds: 30s, 1m, 5m, 1h, 1d, ... (default 1m)\n"
          "  --seed N          random seed (default 1)\n"
          "  --instruments K   number of instruments, 1..1000 (default 1)\n"
          "  --signal X        planted strength in [-0.999, 0.999] (default 0)\n"
          "  --correlation X   share of shock variance common to all instruments, [0, 0.999] (default 0)\n"
          "  --start DATE      first trading day, YYYY-MM-DD (default 2020-01-02)\n"
          "  --out FILE        where to write the CSV (required)\n");
}

static int parse_date(const char *v, int64_t *ns) {
  int y, m, d;
  char tail;
  if (!v || sscanf(v, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 || strlen(v) != 10 || !tg_valid_date(y, m, d) ||
      y < 1700 || y > 2200)
    return 0;
  *ns = tg_days_from_civil(y, m, d) * TG_NS_PER_DAY;
  return 1;
}

/* Returns 0 to go on, -1 after --help, or an exit code. */
static int parse(int argc, char **argv, tg_synth_config *c, const char **out) {
  for (int i = 0; i < argc; i += 2) { /* every flag but --help takes a value */
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    long n;
    if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
      usage(stdout);
      return -1;
    } else if (strcmp(f, "--bars") == 0) {
      if (!tg_cli_parse_long(f, v, 1, 100000000L, &n)) return TG_EXIT_USAGE;
      c->bars = n;
    } else if (strcmp(f, "--interval") == 0) {
      int64_t ns;
      if (!v) return tg_cli_usage_error("synth", "--interval needs a value such as 1m, 5m, 1h, 1d");
      if (tg_interval_parse(v, &ns) != TG_OK) return tg_cli_usage_error("synth", "%s", tg_last_error());
      if (ns % TG_NS_PER_S != 0 || ns > 366 * TG_NS_PER_DAY)
        return tg_cli_usage_error("synth", "--interval '%s': want whole seconds, at most 366 days", v);
      c->interval_ns = ns;
    } else if (strcmp(f, "--seed") == 0) {
      if (!tg_cli_parse_long(f, v, 0, 2147483647L, &n)) return TG_EXIT_USAGE;
      c->seed = (uint64_t)n;
    } else if (strcmp(f, "--instruments") == 0) {
      if (!tg_cli_parse_long(f, v, 1, 1000, &n)) return TG_EXIT_USAGE;
      c->instruments = (int)n;
    } else if (strcmp(f, "--signal") == 0) {
      if (!tg_cli_number("synth", f, v, -0.999, 0.999, &c->signal)) return TG_EXIT_USAGE;
    } else if (strcmp(f, "--correlation") == 0) {
      if (!tg_cli_number("synth", f, v, 0.0, 0.999, &c->correlation)) return TG_EXIT_USAGE;
    } else if (strcmp(f, "--start") == 0) {
      if (!parse_date(v, &c->start_ns))
        return tg_cli_usage_error("synth", "--start '%s': want a date YYYY-MM-DD between 1700 and 2200", v ? v : "");
    } else if (strcmp(f, "--out") == 0) {
      if (!v) return tg_cli_usage_error("synth", "--out needs a file name");
      *out = v;
    } else {
      return tg_cli_usage_error("synth", "unknown flag '%s'", f);
    }
  }
  if (!*out) return tg_cli_usage_error("synth", "--out FILE.csv is required");
  if (c->bars * c->instruments > 200000000LL)
    return tg_cli_usage_error("synth", "%lld bars x %d instruments is over the limit of 2e8 rows", (long long)c->bars,
                              c->instruments);
  return 0;
}

/* Writes the CSV to a temporary file beside path and renames it into place. */
static int write_csv(const tg_bars *b, const char *path) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
    fprintf(stderr, "tickgrad synth: output path too long\n");
    return TG_EXIT_FAIL;
  }
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "tickgrad synth: cannot write '%s' (via '%s'): %s\n", path, tmp, strerror(errno));
    return TG_EXIT_FAIL;
  }
  static char buf[1 << 16];
  setvbuf(f, buf, _IOFBF, sizeof buf);
  int ok = fprintf(f, "ts,open,high,low,close,volume%s\n", b->instrument ? ",instrument" : "") > 0;
  char ts[40];
  for (int64_t i = 0; ok && i < b->n; i++) {
    tg_format_utc(b->ts[i], 0, ts, sizeof ts);
    if (b->instrument)
      ok = fprintf(f, "%s,%.17g,%.17g,%.17g,%.17g,%.17g,%u\n", ts, b->open[i], b->high[i], b->low[i], b->close[i],
                   b->volume[i], (unsigned)b->instrument[i]) > 0;
    else
      ok = fprintf(f, "%s,%.17g,%.17g,%.17g,%.17g,%.17g\n", ts, b->open[i], b->high[i], b->low[i], b->close[i],
                   b->volume[i]) > 0;
  }
  int err = ok ? 0 : errno;
  if (ok && fflush(f) != 0) ok = 0, err = errno;
  if (ok && fsync(fileno(f)) != 0) ok = 0, err = errno;
  if (fclose(f) != 0 && ok) ok = 0, err = errno;
  if (ok && rename(tmp, path) != 0) ok = 0, err = errno;
  if (!ok) {
    fprintf(stderr, "tickgrad synth: cannot write '%s': %s\n", path, strerror(err ? err : EIO));
    remove(tmp);
    return TG_EXIT_FAIL;
  }
  return TG_EXIT_OK;
}

static void summarise(const tg_bars *b, const tg_synth_config *c, const char *path) {
  char t0[40], t1[40], iv[32];
  printf("wrote %s: %lld bars (%d instrument%s x %lld), format %s\n", path, (long long)b->n, c->instruments,
         c->instruments == 1 ? "" : "s", (long long)c->bars, b->format);
  if (b->n == 0) return;
  printf("  range       %s .. %s UTC, interval %s\n", tg_format_utc(b->ts[0], 0, t0, sizeof t0),
         tg_format_utc(b->ts[b->n - 1], 0, t1, sizeof t1), tg_format_duration(c->interval_ns, iv, sizeof iv));
  printf("  seed %llu, signal %g, correlation %g\n", (unsigned long long)c->seed, c->signal, c->correlation);
  int k = c->instruments, shown = k < 8 ? k : 8;
  for (int j = 0; j < shown; j++) {
    double lo = b->low[j], hi = b->high[j], vol = 0;
    for (int64_t i = j; i < b->n; i += k) {
      lo = b->low[i] < lo ? b->low[i] : lo;
      hi = b->high[i] > hi ? b->high[i] : hi;
      vol += b->volume[i];
    }
    printf("  instrument %d: open %.4f, last close %.4f, low %.4f, high %.4f, volume %.0f\n", j, b->open[j],
           b->close[b->n - k + j], lo, hi, vol);
  }
  if (shown < k) printf("  ... and %d more instruments\n", k - shown);
}

int tg_cmd_synth(int argc, char **argv) {
  tg_synth_config c = tg_synth_defaults();
  const char *out = NULL;
  int rc = parse(argc, argv, &c, &out);
  if (rc) return rc < 0 ? TG_EXIT_OK : rc;
  tg_bars b;
  if (tg_synth_generate(&c, &b) != TG_OK) {
    fprintf(stderr, "tickgrad synth: %s\n", tg_last_error());
    return TG_EXIT_FAIL;
  }
  rc = write_csv(&b, out);
  if (rc == TG_EXIT_OK) summarise(&b, &c, out);
  tg_bars_free(&b);
  return rc;
}
