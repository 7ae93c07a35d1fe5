/* Continuous futures: the roll rule's text, what a contract's name says (kind, expiry), the list of rolls. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/roll/roll_internal.h"
#include "data/readers/timeconv.h"

tg_status tg_roll_parse(const char *text, tg_roll_spec *r) {
  const char *want = "want volume, open_interest, calendar or calendar:N (N days before expiry, 0-366)";
  if (!text || !*text) return tg_error(TG_ERR_INVALID, "--roll: empty rule: %s", want);
  if (strcmp(text, "volume") == 0) return r->rule = TG_ROLL_VOLUME, r->days = 0, TG_OK;
  if (strcmp(text, "open_interest") == 0) return r->rule = TG_ROLL_OPEN_INTEREST, r->days = 0, TG_OK;
  if (strcmp(text, "calendar") == 0) return r->rule = TG_ROLL_CALENDAR, r->days = 5, TG_OK;
  if (strncmp(text, "calendar:", 9) == 0) {
    const char *p = text + 9;
    char *end = NULL;
    long days = strtol(p, &end, 10);
    if (end != p && !*end && *p >= '0' && *p <= '9' && days <= 366)
      return r->rule = TG_ROLL_CALENDAR, r->days = (int)days, TG_OK;
  }
  return tg_error(TG_ERR_INVALID, "--roll '%s': %s", text, want);
}

tg_contract_kind tg_contract_kind_of(const char *name) {
  if (strchr(name, '-')) return TG_CONTRACT_SPREAD;
  if (strchr(name, ' ')) return TG_CONTRACT_OPTION;
  return TG_CONTRACT_FUTURE;
}

int64_t tg_contract_expiry_day(const char *name) {
  size_t n = strlen(name);
  if ((n != 6 && n != 8) || strspn(name, "0123456789") != n) return INT64_MIN;
  int y = (name[0] - '0') * 1000 + (name[1] - '0') * 100 + (name[2] - '0') * 10 + (name[3] - '0');
  int m = (name[4] - '0') * 10 + (name[5] - '0');
  int d = n == 8 ? (name[6] - '0') * 10 + (name[7] - '0') : 1;
  if (!tg_valid_date(y, m, d)) return INT64_MIN;
  return tg_days_from_civil(y, m, d);
}

size_t tg_contract_root_len(const char *name, int *month, int *year) {
  static const char codes[] = "FGHJKMNQUVXZ";
  size_t n = strlen(name), d = 0;
  while (d < n && d < 2 && isdigit((unsigned char)name[n - 1 - d])) d++;
  if (d == 0 || n < d + 2 || !strchr(codes, name[n - 1 - d])) return 0;
  for (size_t i = 0; i < n - 1 - d; i++)
    if (!isupper((unsigned char)name[i]) && !isdigit((unsigned char)name[i])) return 0;
  if (month) *month = (int)(strchr(codes, name[n - 1 - d]) - codes) + 1;
  if (year) *year = atoi(name + n - d);
  return n - 1 - d;
}

int64_t tg_contract_month_key(const char *name, int64_t near_ts) {
  int month = 0, year = 0;
  if (!tg_contract_root_len(name, &month, &year)) return INT64_MIN;
  int64_t days = near_ts / TG_NS_PER_DAY, y;
  int m, d;
  tg_civil_from_days(days, &y, &m, &d);
  int one_digit = strlen(name) - tg_contract_root_len(name, NULL, NULL) == 2; /* the month code and a digit */
  int64_t full = one_digit ? y - y % 10 + year : 2000 + year;
  while (one_digit && full < y - 1) full += 10;
  return full * 12 + month - 1;
}

tg_status tg_roll_list_push(tg_roll_list *l, const tg_roll *r) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    tg_roll *v = tg_malloc((size_t)cap * sizeof *v);
    if (!v) return tg_error(TG_ERR_NOMEM, "rolls: out of memory for %d rolls", cap);
    if (l->n) memcpy(v, l->v, (size_t)l->n * sizeof *v);
    tg_free(l->v);
    l->v = v, l->cap = cap;
  }
  l->v[l->n++] = *r;
  return TG_OK;
}

void tg_roll_list_free(tg_roll_list *l) {
  if (!l) return;
  tg_free(l->v);
  memset(l, 0, sizeof *l);
}
