/* Calendar arithmetic and zone conversion: round trips, leap years, New York's DST edges. */
#include "data/timeconv.h"
#include "support/check.h"

int main(void) {
  CHECK(tg_days_from_civil(1970, 1, 1) == 0);
  CHECK(tg_days_from_civil(2000, 3, 1) == 11017);
  CHECK(tg_days_from_civil(1969, 12, 31) == -1);
  int bad = 0;
  for (int64_t d = -800000; d < 800000; d += 7) {
    int64_t y;
    int m, dd;
    tg_civil_from_days(d, &y, &m, &dd);
    bad += tg_days_from_civil(y, m, dd) != d || !tg_valid_date(y, m, dd);
  }
  CHECK(bad == 0);
  CHECK(tg_valid_date(2000, 2, 29) && !tg_valid_date(1900, 2, 29) && !tg_valid_date(2021, 4, 31));
  if (tg_tz_check("America/New_York") != TG_OK) return tg_test_skip("no zone database (install tzdata)");
  int off = 0;
  CHECK_OK(tg_tz_offset_at_utc("America/New_York", 1609459200, &off)); /* 2021-01-01 00:00 UTC */
  CHECK(off == -18000);
  CHECK_OK(tg_tz_offset_at_utc("America/New_York", 1625097600, &off)); /* 2021-07-01 */
  CHECK(off == -14400);
  int64_t day = tg_days_from_civil(2021, 3, 31) * 86400, utc = 0;
  CHECK_OK(tg_tz_local_to_utc("America/New_York", day + 9 * 3600 + 1800, &utc)); /* 09:30 EDT */
  CHECK(utc == day + 13 * 3600 + 1800);
  day = tg_days_from_civil(2021, 3, 14) * 86400; /* spring forward at 02:00 */
  CHECK_OK(tg_tz_local_to_utc("America/New_York", day + 2 * 3600 + 1800, &utc)); /* 02:30 does not exist */
  CHECK(utc == day + 7 * 3600 + 1800);                                             /* = 03:30 EDT */
  day = tg_days_from_civil(2021, 11, 7) * 86400; /* fall back at 02:00 */
  CHECK_OK(tg_tz_local_to_utc("America/New_York", day + 1 * 3600 + 1800, &utc)); /* 01:30 twice */
  CHECK(utc == day + 5 * 3600 + 1800);                                             /* the EDT one */
  CHECK_STATUS(tg_tz_check("Mars/Olympus"), TG_ERR_INVALID);
  CHECK_STATUS(tg_tz_check("../../etc/passwd"), TG_ERR_INVALID);
  return tg_test_finish();
}
