/* CSV wall-clock times to UTC: tg_tz_local_to_utc's answers from a process-wide cache of zone offsets. */
#include <pthread.h>
#include <string.h>
#include "data/csv/csv_internal.h"
#include "data/timeconv.h"

/* The zone database answers "offset at this UTC instant" (tg_tz_offset_at_utc), slowly: each call
 * loads zone files (about 20 us). The cache keeps, per zone and for the whole process, a run of
 * contiguous UTC intervals with one offset each, grown 6 days at a time; a change of offset inside
 * a step is found by trying the instants 52 and 53 weeks from the same change a year before (summer
 * time rules name a weekday), then by bisection on a quarter-hour grid. The one assumption: a zone
 * does not leave an offset and come back to it within 6 days; in the zone database since 1970 the
 * shortest such excursion is 7 days (Brazil, October 2000). A parse keeps the last interval it
 * used, so most rows cost a few comparisons. */
#define STEP (6 * 86400LL)          /* seconds between probes */
#define GRID 900                    /* offsets change on quarter hours */
#define FAR (10 * 366 * 86400LL)    /* further than this from the known run: start a new run */
#define WEEK (7 * 86400LL)
#define ZONES 8
#define SEGS 256

typedef struct zone_run {
  char name[96]; /* "" when unused */
  int nseg;
  int64_t lo[SEGS], hi[SEGS]; /* UTC seconds, contiguous, ascending */
  int off[SEGS];
} zone_run;

static zone_run g_zones[ZONES];
static int g_next_zone;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static int is_utc(const char *tz) { return !tz || !*tz || strcmp(tz, "UTC") == 0 || strcmp(tz, "Etc/UTC") == 0; }

tg_status tg_csv_tz_init(tg_csv_tz *z, const char *tz) {
  memset(z, 0, sizeof *z);
  if (is_utc(tz)) return TG_OK;
  tg_status st = tg_tz_check(tz);
  if (st != TG_OK) return st;
  if (strlen(tz) >= sizeof g_zones[0].name)
    return tg_error(TG_ERR_INVALID, "time zone name '%.40s...' is too long", tz);
  z->tz = tz;
  return TG_OK;
}

void tg_csv_tz_forget(void) {
  pthread_mutex_lock(&g_lock);
  memset(g_zones, 0, sizeof g_zones);
  g_next_zone = 0;
  pthread_mutex_unlock(&g_lock);
}

static tg_status raw_offset(tg_csv_tz *z, int64_t u, int *off) {
  z->lookups++;
  return tg_tz_offset_at_utc(z->tz, u, off);
}

/* Checks a guessed change instant g in (a, b]: 1 when the offset is oa just before and ob at g. */
static tg_status try_guess(tg_csv_tz *z, int64_t g, int64_t a, int oa, int64_t b, int ob, int *hit) {
  *hit = 0;
  if (g <= a || g > b) return TG_OK;
  int o1, o2;
  tg_status st = raw_offset(z, g - 1, &o1);
  if (st == TG_OK && o1 == oa) st = raw_offset(z, g, &o2);
  if (st == TG_OK && o1 == oa && o2 == ob) *hit = 1;
  return st;
}

/* The first instant in (a, b] with offset ob, given offset(a) = oa != ob = offset(b) and one change
 * between. Changes of the same kind already in the run give guesses a year on (or back). */
static tg_status find_change(tg_csv_tz *z, const zone_run *r, int64_t a, int oa, int64_t b, int ob, int64_t *t) {
  tg_status st;
  int tried = 0;
  for (int i = r->nseg - 1; i >= 1 && tried < 2; i--) {
    if (r->off[i - 1] != oa || r->off[i] != ob) continue;
    tried++;
    int64_t known = r->lo[i];
    const int64_t shifts[4] = {52 * WEEK, 53 * WEEK, -52 * WEEK, -53 * WEEK};
    for (int k = 0; k < 4; k++) {
      int hit;
      if ((st = try_guess(z, known + shifts[k], a, oa, b, ob, &hit)) != TG_OK) return st;
      if (hit) {
        *t = known + shifts[k];
        return TG_OK;
      }
    }
  }
  int tried_edge = 0;
  while (b - a > 1) {
    int64_t mid = a + (b - a) / 2;
    if (b - a > GRID) {
      int64_t g = mid - ((mid % GRID) + GRID) % GRID;
      if (g > a) mid = g;
    } else if (!tried_edge && ((b % GRID) + GRID) % GRID == 0) {
      mid = b - 1; /* the change is most likely exactly at the grid point b */
      tried_edge = 1;
    }
    int o;
    if ((st = raw_offset(z, mid, &o)) != TG_OK) return st;
    if (o == oa) a = mid;
    else b = mid;
  }
  *t = b;
  return TG_OK;
}

static void drop_first(zone_run *r) {
  memmove(r->lo, r->lo + 1, (size_t)(r->nseg - 1) * sizeof *r->lo);
  memmove(r->hi, r->hi + 1, (size_t)(r->nseg - 1) * sizeof *r->hi);
  memmove(r->off, r->off + 1, (size_t)(r->nseg - 1) * sizeof *r->off);
  r->nseg--;
}

static tg_status extend_forward(tg_csv_tz *z, zone_run *r) {
  int k = r->nseg - 1;
  int64_t b = r->hi[k], p = b + STEP;
  int o;
  tg_status st = raw_offset(z, p, &o);
  if (st != TG_OK) return st;
  if (o == r->off[k]) {
    r->hi[k] = p;
    return TG_OK;
  }
  int64_t t;
  if ((st = find_change(z, r, b, r->off[k], p, o, &t)) != TG_OK) return st;
  r->hi[k] = t - 1;
  if (r->nseg == SEGS) drop_first(r);
  k = r->nseg++;
  r->lo[k] = t;
  r->hi[k] = p;
  r->off[k] = o;
  return TG_OK;
}

static tg_status extend_backward(tg_csv_tz *z, zone_run *r) {
  int64_t a = r->lo[0], p = a - STEP;
  int o;
  tg_status st = raw_offset(z, p, &o);
  if (st != TG_OK) return st;
  if (o == r->off[0]) {
    r->lo[0] = p;
    return TG_OK;
  }
  int64_t t;
  if ((st = find_change(z, r, p, o, a, r->off[0], &t)) != TG_OK) return st;
  r->lo[0] = t;
  if (r->nseg == SEGS) r->nseg--; /* forget the latest interval */
  memmove(r->lo + 1, r->lo, (size_t)r->nseg * sizeof *r->lo);
  memmove(r->hi + 1, r->hi, (size_t)r->nseg * sizeof *r->hi);
  memmove(r->off + 1, r->off, (size_t)r->nseg * sizeof *r->off);
  r->nseg++;
  r->lo[0] = p;
  r->hi[0] = t - 1;
  r->off[0] = o;
  return TG_OK;
}

/* The run of zone tz (made, or taken over from the least recently made, when missing). Locked. */
static zone_run *run_for(const char *tz) {
  for (int i = 0; i < ZONES; i++)
    if (strcmp(g_zones[i].name, tz) == 0) return &g_zones[i];
  zone_run *r = &g_zones[g_next_zone];
  g_next_zone = (g_next_zone + 1) % ZONES;
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", tz);
  return r;
}

/* The zone's offset at UTC instant u, and the interval around u where it holds. */
static tg_status offset_at(tg_csv_tz *z, int64_t u, int *off) {
  if (z->have && u >= z->lo && u <= z->hi) {
    *off = z->off;
    return TG_OK;
  }
  tg_status st = TG_OK;
  pthread_mutex_lock(&g_lock);
  zone_run *r = run_for(z->tz);
  if (r->nseg == 0 || u > r->hi[r->nseg - 1] + FAR || u < r->lo[0] - FAR) {
    int o;
    if ((st = raw_offset(z, u, &o)) == TG_OK) {
      r->nseg = 1;
      r->lo[0] = r->hi[0] = u;
      r->off[0] = o;
    }
  }
  while (st == TG_OK && u > r->hi[r->nseg - 1]) st = extend_forward(z, r);
  while (st == TG_OK && u < r->lo[0]) st = extend_backward(z, r);
  if (st == TG_OK) {
    int a = 0, b = r->nseg - 1;
    while (a < b) {
      int m = (a + b) / 2;
      if (u > r->hi[m]) a = m + 1;
      else b = m;
    }
    z->have = 1;
    z->lo = r->lo[a];
    z->hi = r->hi[a];
    z->off = r->off[a];
    *off = z->off;
  }
  pthread_mutex_unlock(&g_lock);
  return st;
}

tg_status tg_csv_tz_to_utc(tg_csv_tz *z, int64_t local_s, int64_t *utc_s) {
  if (!z->tz) {
    *utc_s = local_s;
    return TG_OK;
  }
  /* as tg_tz_local_to_utc: the offsets in force a day either side are the candidates; the first
   * consistent one wins (the larger, i.e. daylight, for repeated times); in a spring gap the
   * smaller (pre-gap) one moves the time forward */
  int oa, ob, check;
  tg_status st = offset_at(z, local_s - 86400, &oa);
  if (st == TG_OK) st = offset_at(z, local_s + 86400, &ob);
  if (st != TG_OK) return st;
  int cand[2] = {oa > ob ? oa : ob, oa > ob ? ob : oa};
  for (int i = 0; i < 2; i++) {
    if ((st = offset_at(z, local_s - cand[i], &check)) != TG_OK) return st;
    if (check == cand[i]) {
      *utc_s = local_s - cand[i];
      return TG_OK;
    }
  }
  *utc_s = local_s - cand[1];
  return TG_OK;
}
