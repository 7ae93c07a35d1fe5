/* CSV columns: the time, price, volume and instrument columns by header name, by position, or by the user's map. */
#include <stdio.h>
#include <string.h>
#include "data/readers/csv/csv_internal.h"

const char *const tg_csv_role_names[TG_CSV_ROLES] = {"ts", "time", "open", "high", "low", "close", "volume",
                                                         "instrument"};

#define NAME_MAX_LEN 64
#define ABSENT (-1)
#define UNSET (-2)

/* Lower-case letters and digits of [p, e), the rest dropped; at most NAME_MAX_LEN - 1. */
static void normalise(const char *p, const char *e, char *out) {
  size_t k = 0;
  for (; p < e && k + 1 < NAME_MAX_LEN; p++) {
    char c = *p;
    if (c >= 'A' && c <= 'Z') out[k++] = (char)(c + 32);
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out[k++] = c;
  }
  out[k] = '\0';
}

/* Names match case-insensitively with spaces, '_', '-', '.', '<', '>' ignored ("Adj Close",
 * "adj_close" and "<CLOSE>" all work); the earlier a name is in its list, the better. "Adj Close"
 * is used only when the user's map names it. Volume: a column named for the base asset ("Volume
 * BTC", "volume_btc", "Volume From") is preferred over a plain "Volume", which is preferred over one
 * named for the quote currency ("Volume USD", "Volume To"): CryptoDataDownload files call the quote
 * volume plain "volume" next to "volume_btc". The instrument: "instrument", "instrument_id", "symbol"
 * or "ticker" (csv_instrument.c turns its values into ids). The time column also goes by "timestamp_utc",
 * "ts_event" (Databento) and pandas' index names ("index", "Unnamed: 0"), and when no name matches, an unnamed first
 * column (pandas' to_csv of a frame with a DatetimeIndex writes ",open,high,...") holds the times. */
static const char *const k_ts_names[] = {"datetime", "timestamp", "timestamputc", "timestamps", "tsevent", "unix",
                                         "unixtime", "unixtimestamp", "gmttime", "utctime", "timeutc", "localtime",
                                         "date", "time", "ts", "datum", "opentime", "dt", "index", "unnamed0", NULL};
static const char *const k_open_names[] = {"open", "o", "openprice", NULL};
static const char *const k_high_names[] = {"high", "h", "highprice", NULL};
static const char *const k_low_names[] = {"low", "l", "lowprice", NULL};
static const char *const k_close_names[] = {"close", "c", "closeprice", "last", "price", NULL};
static const char *const k_instrument_names[] = {"instrument", "instrumentid", "symbol", "ticker", NULL};
static const char *const k_quote_ccy[] = {"usd", "usdt", "usdc", "busd", "tusd", "dai", "eur", "gbp", "jpy", "krw",
                                          "cad", "aud", "chf", "cny", "try", "rub", "inr", "brl", "to", "quote",
                                          "currency", "ccy", NULL};

/* Rank of a name in a list (0 best), or -1. */
static int rank_in(const char *name, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (strcmp(name, list[i]) == 0) return i;
  return -1;
}

/* Volume preference of a name: 3 base-asset volume, 2 plain, 1 quote-currency volume, 0 none. */
static int volume_rank(const char *name) {
  const char *suffix;
  if (strncmp(name, "volume", 6) == 0) suffix = name + 6;
  else if (strncmp(name, "vol", 3) == 0) suffix = name + 3;
  else return strcmp(name, "v") == 0 ? 2 : 0;
  if (!*suffix) return 2;
  if (strcmp(suffix, "from") == 0) return 3;
  if (rank_in(suffix, k_quote_ccy) >= 0) return 1;
  if (strlen(suffix) > 6) return 0; /* "volumeweightedprice" and the like are not volumes */
  return 3;
}

/* The header names of the file, for messages: "Date, Open, High, ..." (cut to fit). */
static void list_names(const tg_csv_field *h, int64_t ncols, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = '\0';
  for (int64_t i = 0; i < ncols && k + 8 < n; i++) {
    char q[64];
    tg_csv_quote(h[i].p, h[i].e, q, sizeof q);
    int w = snprintf(buf + k, n - k, "%s'%s'", i ? ", " : "", q);
    if (w < 0 || (size_t)w >= n - k) {
      snprintf(buf + (k < n - 5 ? k : n - 5), 5, "...");
      return;
    }
    k += (size_t)w;
  }
}

/* Auto mapping by header names. */
static void map_by_name(const tg_csv_field *h, int64_t ncols, tg_csv_map *map) {
  const char *const *lists[TG_CSV_ROLES] = {k_ts_names,  NULL,          k_open_names, k_high_names,
                                            k_low_names, k_close_names, NULL,         k_instrument_names};
  int best_rank[TG_CSV_ROLES];
  for (int r = 0; r < TG_CSV_ROLES; r++) best_rank[r] = 1 << 30;
  int64_t date_col = -1, time_col = -1;
  int best_vol = 0, unnamed_first = 0;
  for (int64_t i = 0; i < ncols; i++) {
    char name[NAME_MAX_LEN];
    normalise(h[i].p, h[i].e, name);
    if (!*name) { /* an unnamed index column */
      unnamed_first |= i == 0;
      continue;
    }
    if (strcmp(name, "date") == 0 && date_col < 0) date_col = i;
    if (strcmp(name, "time") == 0 && time_col < 0) time_col = i;
    for (int r = 0; r < TG_CSV_ROLES; r++) {
      if (!lists[r]) continue;
      int k = rank_in(name, lists[r]);
      if (k >= 0 && k < best_rank[r]) {
        best_rank[r] = k;
        map->col[r] = i;
        map->tie[r] = -1;
      } else if (k >= 0 && k == best_rank[r] && map->tie[r] < 0) { /* the same name in another case */
        map->tie[r] = i;
      }
    }
    int v = volume_rank(name);
    if (v > best_vol) {
      best_vol = v;
      map->col[TG_CSV_VOLUME] = i;
      map->tie[TG_CSV_VOLUME] = -1;
    } else if (v > 0 && v == best_vol && map->tie[TG_CSV_VOLUME] < 0) {
      char first[NAME_MAX_LEN];
      normalise(h[map->col[TG_CSV_VOLUME]].p, h[map->col[TG_CSV_VOLUME]].e, first);
      if (strcmp(first, name) == 0) map->tie[TG_CSV_VOLUME] = i; /* "Volume BTC" beside "Volume ETH" stays first */
    }
  }
  /* pandas' unnamed index column: the times when no column is named for them */
  if (map->col[TG_CSV_TS] < 0 && unnamed_first) map->col[TG_CSV_TS] = 0;
  /* "Date" and "Time" both present and nothing better: the date, plus a time-of-day column */
  if (date_col >= 0 && time_col >= 0 && map->col[TG_CSV_TS] == date_col) {
    map->col[TG_CSV_TOD] = time_col;
    map->tod_auto = 1;
  }
}

/* Finds a column by the user's name: exact, then ignoring case, then normalised. */
static int64_t find_name(const tg_csv_field *h, int64_t ncols, const char *p, const char *e) {
  size_t n = (size_t)(e - p);
  for (int64_t i = 0; i < ncols; i++) /* "Close" beside "close" is itself */
    if ((size_t)(h[i].e - h[i].p) == n && memcmp(h[i].p, p, n) == 0) return i;
  for (int64_t i = 0; i < ncols; i++) {
    if ((size_t)(h[i].e - h[i].p) != n) continue;
    size_t k = 0;
    for (; k < n; k++) {
      char a = h[i].p[k], b = p[k];
      if (a >= 'A' && a <= 'Z') a = (char)(a + 32);
      if (b >= 'A' && b <= 'Z') b = (char)(b + 32);
      if (a != b) break;
    }
    if (k == n) return i;
  }
  char want[NAME_MAX_LEN], name[NAME_MAX_LEN];
  normalise(p, e, want);
  if (!*want) return -1;
  for (int64_t i = 0; i < ncols; i++) {
    normalise(h[i].p, h[i].e, name);
    if (strcmp(name, want) == 0) return i;
  }
  return -1;
}

static int key_role(const char *p, const char *e) {
  char k[NAME_MAX_LEN];
  normalise(p, e, k);
  if (!strcmp(k, "ts") || !strcmp(k, "timestamp") || !strcmp(k, "datetime")) return TG_CSV_TS;
  if (!strcmp(k, "date")) return 100; /* the date column of a date + time pair */
  if (!strcmp(k, "time")) return TG_CSV_TOD;
  for (int r = TG_CSV_OPEN; r < TG_CSV_ROLES; r++)
    if (!strcmp(k, tg_csv_role_names[r])) return r;
  return -1;
}

/* Applies the user's map ("ts=Date,close=Adj Close" or "ts=0,close=4") over the automatic one. */
static tg_status apply_user_map(const char *path, const tg_csv_field *h, int64_t ncols, const char *spec,
                                tg_csv_map *map) {
  int64_t user[TG_CSV_ROLES + 1];
  for (int r = 0; r <= TG_CSV_ROLES; r++) user[r] = UNSET; /* user[TG_CSV_ROLES]: "date" */
  const char *p = spec;
  while (*p) {
    const char *s = p;
    while (*p && *p != ',') p++;
    const char *item_e = p;
    if (*p == ',') p++;
    while (s < item_e && (*s == ' ' || *s == '\t')) s++;
    const char *t = item_e;
    while (t > s && (t[-1] == ' ' || t[-1] == '\t')) t--;
    if (s == t) continue;
    const char *eq = memchr(s, '=', (size_t)(t - s));
    char item[128];
    tg_csv_quote(s, t, item, sizeof item);
    if (!eq)
      return tg_error(TG_ERR_INVALID, "%s: column map item '%s' is not KEY=COLUMN (keys: ts, date, time, open, "
                      "high, low, close, volume, instrument)", path, item);
    const char *ke = eq, *vs = eq + 1;
    while (ke > s && (ke[-1] == ' ' || ke[-1] == '\t')) ke--;
    while (vs < t && (*vs == ' ' || *vs == '\t')) vs++;
    int role = key_role(s, ke);
    if (role < 0)
      return tg_error(TG_ERR_INVALID, "%s: column map item '%s': unknown key (keys: ts, date, time, open, high, "
                      "low, close, volume, instrument)", path, item);
    int slot = role == 100 ? TG_CSV_ROLES : role;
    if (user[slot] != UNSET)
      return tg_error(TG_ERR_INVALID, "%s: column map item '%s': that key was already given", path, item);
    int64_t col;
    if (vs == t || (t - vs == 4 && !strncmp(vs, "none", 4))) {
      if (role != TG_CSV_VOLUME && role != TG_CSV_INSTRUMENT)
        return tg_error(TG_ERR_INVALID, "%s: column map item '%s': only volume and instrument may be left out",
                        path, item);
      col = ABSENT;
    } else {
      int digits = 1;
      for (const char *q = vs; q < t; q++) digits &= (unsigned)(*q - '0') < 10;
      if (digits && t - vs <= 9) {
        col = 0;
        for (const char *q = vs; q < t; q++) col = col * 10 + (*q - '0');
        if (col >= ncols)
          return tg_error(TG_ERR_INVALID, "%s: column map item '%s': rows have only %lld columns (positions count "
                          "from 0)", path, item, (long long)ncols);
      } else if (!h) {
        return tg_error(TG_ERR_INVALID, "%s: column map item '%s' names a column, but the file has no header; "
                        "give positions counted from 0 (ts=0,open=1,...)", path, item);
      } else {
        col = find_name(h, ncols, vs, t);
        if (col < 0) {
          char names[512];
          list_names(h, ncols, names, sizeof names);
          return tg_error(TG_ERR_INVALID, "%s: column map item '%s': no such column in the header (%s)", path, item,
                          names);
        }
      }
    }
    user[slot] = col;
  }
  /* date and time pair up; either one alone is the timestamp */
  int64_t date = user[TG_CSV_ROLES], ts = user[TG_CSV_TS], tod = user[TG_CSV_TOD];
  if (date != UNSET && ts != UNSET)
    return tg_error(TG_ERR_INVALID, "%s: column map: give ts, or date and time, not both", path);
  if (date != UNSET) ts = date;
  if (ts == UNSET && tod != UNSET) ts = tod, tod = UNSET;
  if (ts != UNSET) {
    map->col[TG_CSV_TS] = ts;
    map->col[TG_CSV_TOD] = tod != UNSET ? tod : ABSENT;
    map->tod_auto = 0;
  } else if (tod != UNSET) {
    map->col[TG_CSV_TOD] = tod;
    map->tod_auto = 0;
  }
  for (int r = TG_CSV_OPEN; r < TG_CSV_ROLES; r++)
    if (user[r] != UNSET) map->col[r] = user[r];
  for (int r = 0; r < TG_CSV_ROLES; r++) /* the user chose: no tie left */
    if (user[r] != UNSET || (r == TG_CSV_TS && (date != UNSET || tod != UNSET))) map->tie[r] = -1;
  return TG_OK;
}

/* TG_ERR_FORMAT when two header names map to one role and differ only in case or punctuation. */
static tg_status check_ties(const char *path, int64_t line, const tg_csv_field *h, const tg_csv_map *map) {
  for (int r = 0; r < TG_CSV_ROLES; r++) {
    if (map->tie[r] < 0 || map->col[r] < 0) continue;
    const tg_csv_field *x = &h[map->col[r]], *y = &h[map->tie[r]];
    if (x->e - x->p == y->e - y->p && memcmp(x->p, y->p, (size_t)(x->e - x->p)) == 0)
      continue; /* the very same name twice: csv_extra.c says so */
    char a[64], b[64];
    tg_csv_quote(h[map->col[r]].p, h[map->col[r]].e, a, sizeof a);
    tg_csv_quote(h[map->tie[r]].p, h[map->tie[r]].e, b, sizeof b);
    const char *role = r == TG_CSV_TS ? "ts" : tg_csv_role_names[r];
    return tg_error(TG_ERR_FORMAT, "%s: line %lld: columns '%s' and '%s' both name %s (names compare without case "
                    "and punctuation); say which in the column map, e.g. %s=%s", path, (long long)line, a, b, role,
                    role, b);
  }
  return TG_OK;
}

tg_status tg_csv_columns_map(const char *path, int64_t line, const tg_csv_field *header, int64_t ncols,
                             const char *columns, tg_csv_map *map) {
  for (int r = 0; r < TG_CSV_ROLES; r++) map->col[r] = ABSENT, map->tie[r] = -1;
  map->tod_auto = 0;
  if (header) {
    map_by_name(header, ncols, map);
  } else {
    /* Lean's layout: ts, open, high, low, close[, volume], more columns ignored */
    for (int r = TG_CSV_OPEN; r <= TG_CSV_VOLUME; r++)
      if (r - 1 < ncols) map->col[r] = r - 1;
    map->col[TG_CSV_TS] = 0;
  }
  if (columns && *columns) {
    tg_status st = apply_user_map(path, header, ncols, columns, map);
    if (st != TG_OK) return st;
  }
  if (header) {
    tg_status st = check_ties(path, line, header, map);
    if (st != TG_OK) return st;
  }
  for (int r = 0; r < TG_CSV_ROLES; r++) {
    if (r == TG_CSV_TOD || r == TG_CSV_VOLUME || r == TG_CSV_INSTRUMENT || map->col[r] >= 0) continue;
    if (header) {
      char names[512];
      list_names(header, ncols, names, sizeof names);
      return tg_error(TG_ERR_FORMAT, "%s: line %lld: no %s column in the header (%s); name it in the column map, "
                      "e.g. %s=NAME", path, (long long)line, r == TG_CSV_TS ? "time" : tg_csv_role_names[r], names,
                      tg_csv_role_names[r]);
    }
    return tg_error(TG_ERR_FORMAT, "%s: line %lld: no header and only %lld columns: the layout without a header is "
                    "ts, open, high, low, close[, volume]; give a column map (ts=0,open=1,...)", path, (long long)line,
                    (long long)ncols);
  }
  return TG_OK;
}
