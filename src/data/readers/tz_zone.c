/* Zone files read once: TZif parsing (RFC 8536), the process-wide registry, offsets by binary search. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "base/alloc.h"
#include "data/readers/tz_zone.h"

#define ZONE_DIR "/usr/share/zoneinfo/"
#define MAX_FILE (1 << 20)

struct tg_tz_zone {
  struct tg_tz_zone *next; /* the registry's list */
  char *name;
  int64_t n;         /* transitions */
  int64_t *at;       /* [n] UTC seconds, ascending */
  int32_t *off;      /* [n] offset from at[i] until at[i + 1] */
  int32_t first_off; /* before at[0], and always when n == 0 */
  int footer;        /* 0: none (the last offset holds), 1: rule, 2: a footer not parsed (the C library) */
  int libc_only;     /* leap-second zones: every instant through the C library */
  tg_tz_rule rule;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static tg_tz_zone *g_zones;                 /* every zone loaded, never freed */
static _Thread_local const tg_tz_zone *t_last; /* this thread's last zone: most calls skip the lock */

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static int64_t be64(const unsigned char *p) { return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4)); }

/* Reads the whole regular file into a new buffer; 0 when it cannot. */
static int slurp(const char *path, unsigned char **buf, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  struct stat sb;
  unsigned char *b = NULL;
  int ok = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size < MAX_FILE &&
           (b = tg_malloc((size_t)sb.st_size + 1)) != NULL;
  size_t n = ok ? fread(b, 1, (size_t)sb.st_size, f) : 0;
  ok = ok && n == (size_t)sb.st_size && !ferror(f);
  fclose(f);
  if (!ok) {
    tg_free(b);
    return 0;
  }
  *buf = b;
  *len = n;
  return 1;
}

/* Parses a TZif file into z (name and registry link aside). Returns NULL, or what is wrong. */
static const char *parse_tzif(const unsigned char *p, size_t len, tg_tz_zone *z) {
  if (len < 44 || memcmp(p, "TZif", 4) != 0) return "not a TZif zone file";
  int version = p[4];
  size_t tsize = 4, pos = 0;
  uint32_t cnt[6]; /* isutcnt isstdcnt leapcnt timecnt typecnt charcnt */
  for (int pass = 0; pass < 2; pass++) {
    if (len - pos < 44 || memcmp(p + pos, "TZif", 4) != 0) return "a TZif header is damaged";
    for (int k = 0; k < 6; k++) cnt[k] = be32(p + pos + 20 + 4 * k);
    if (cnt[3] > 100000 || cnt[4] > 256 || cnt[5] > 100000 || cnt[2] > 100000 || cnt[0] > 256 || cnt[1] > 256)
      return "the TZif counts are out of range";
    size_t body = cnt[3] * tsize + cnt[3] + cnt[4] * 6 + cnt[5] + cnt[2] * (tsize + 4) + cnt[1] + cnt[0];
    if (len - pos - 44 < body) return "the TZif data is truncated";
    if (pass == 1 || version < '2') break;
    pos += 44 + body; /* skip the 32-bit data: version 2+ repeats it with 64-bit times */
    tsize = 8;
  }
  uint32_t timecnt = cnt[3], typecnt = cnt[4];
  if (typecnt == 0) return "the TZif file has no local time types";
  const unsigned char *times = p + pos + 44, *idx = times + timecnt * tsize, *types = idx + timecnt;
  const unsigned char *after = types + typecnt * 6 + cnt[5] + cnt[2] * (tsize + 4) + cnt[1] + cnt[0];
  z->libc_only = cnt[2] != 0;
  int32_t utoff[256];
  int first_std = -1;
  for (uint32_t i = 0; i < typecnt; i++) {
    int32_t u = (int32_t)be32(types + 6 * i);
    if (u < -26 * 3600 || u > 26 * 3600 || types[6 * i + 4] > 1) return "a TZif local time type is out of range";
    utoff[i] = u;
    if (first_std < 0 && !types[6 * i + 4]) first_std = (int)i;
  }
  z->first_off = utoff[first_std < 0 ? 0 : first_std]; /* as the C library: the first standard-time type */
  z->n = timecnt;
  z->at = tg_malloc((size_t)timecnt * sizeof *z->at + 1);
  z->off = tg_malloc((size_t)timecnt * sizeof *z->off + 1);
  if (!z->at || !z->off) return "out of memory";
  for (uint32_t i = 0; i < timecnt; i++) {
    z->at[i] = tsize == 8 ? be64(times + 8 * i) : (int64_t)(int32_t)be32(times + 4 * i);
    if (idx[i] >= typecnt || (i && z->at[i] <= z->at[i - 1])) return "the TZif transitions are out of order";
    z->off[i] = utoff[idx[i]];
  }
  z->footer = 0;
  if (tsize == 8 && after < p + len && *after == '\n') {
    const unsigned char *s = after + 1, *e = memchr(s, '\n', (size_t)(p + len - s));
    if (!e) return "the TZif footer is not closed";
    if (e > s) z->footer = tg_tz_rule_parse((const char *)s, (size_t)(e - s), &z->rule) ? 1 : 2;
  }
  return NULL;
}

static void zone_free(tg_tz_zone *z) {
  if (!z) return;
  tg_free(z->name);
  tg_free(z->at);
  tg_free(z->off);
  tg_free(z);
}

static tg_status load(const char *tz, tg_tz_zone **out) {
  char path[512];
  if (strstr(tz, "..") || tz[0] == '/' || snprintf(path, sizeof path, ZONE_DIR "%s", tz) >= (int)sizeof path)
    return tg_error(TG_ERR_INVALID, "time zone '%.200s' is unknown (use a name from " ZONE_DIR " such as "
                    "America/New_York; the tzdata package provides them)", tz);
  unsigned char *buf = NULL;
  size_t len = 0;
  if (!slurp(path, &buf, &len))
    return tg_error(TG_ERR_INVALID, "time zone '%.200s' is unknown (use a name from " ZONE_DIR " such as "
                    "America/New_York; the tzdata package provides them)", tz);
  tg_tz_zone *z = tg_calloc(1, sizeof *z);
  size_t nlen = strlen(tz);
  const char *why = z && (z->name = tg_malloc(nlen + 1)) ? parse_tzif(buf, len, z) : "out of memory";
  tg_free(buf);
  if (why) {
    zone_free(z);
    if (strcmp(why, "out of memory") == 0) return tg_error(TG_ERR_NOMEM, "time zone '%.200s': out of memory", tz);
    return tg_error(TG_ERR_INVALID, "time zone '%.200s': %s: %s", tz, path, why);
  }
  memcpy(z->name, tz, nlen + 1);
  *out = z;
  return TG_OK;
}

static const tg_tz_zone *find_locked(const char *tz) {
  for (const tg_tz_zone *z = g_zones; z; z = z->next)
    if (strcmp(z->name, tz) == 0) return z;
  return NULL;
}

tg_status tg_tz_zone_get(const char *tz, const tg_tz_zone **out) {
  const tg_tz_zone *last = t_last;
  if (last && strcmp(last->name, tz) == 0) {
    *out = last;
    return TG_OK;
  }
  pthread_mutex_lock(&g_lock);
  const tg_tz_zone *z = find_locked(tz);
  pthread_mutex_unlock(&g_lock);
  if (!z) { /* read the file outside the lock; if another thread registered it meanwhile, keep theirs */
    tg_tz_zone *mine;
    tg_status st = load(tz, &mine);
    if (st != TG_OK) return st;
    pthread_mutex_lock(&g_lock);
    z = find_locked(tz);
    if (!z) {
      mine->next = g_zones;
      g_zones = mine;
      z = mine;
      mine = NULL;
    }
    pthread_mutex_unlock(&g_lock);
    zone_free(mine);
  }
  t_last = z;
  *out = z;
  return TG_OK;
}

int tg_tz_zone_offset(const tg_tz_zone *z, int64_t u, int *off, int64_t *from, int64_t *until) {
  int64_t a = INT64_MIN, b = INT64_MAX;
  if (z->libc_only) return 0;
  if (z->n == 0 || u < z->at[0]) {
    *off = z->first_off;
    if (z->n) b = z->at[0];
  } else if (u >= z->at[z->n - 1]) {
    a = z->at[z->n - 1];
    if (z->footer == 0) {
      *off = z->off[z->n - 1];
    } else {
      if (z->footer == 2 || u >= TG_TZ_RULE_LIMIT || u <= -TG_TZ_RULE_LIMIT) return 0;
      int64_t ra, rb;
      *off = tg_tz_rule_offset(&z->rule, u, &ra, &rb);
      a = ra > a ? ra : a;
      b = rb;
    }
  } else {
    int64_t lo = 0, hi = z->n - 1; /* at[lo] <= u < at[hi] */
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      if (z->at[mid] <= u) lo = mid;
      else hi = mid;
    }
    *off = z->off[lo];
    a = z->at[lo];
    b = z->at[hi];
  }
  if (from) *from = a;
  if (until) *until = b;
  return 1;
}
