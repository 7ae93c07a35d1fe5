/* Lean futures bar files: the contract (expiry YYYYMM) their names carry, as each bar's contract column. */
#include <string.h>
#include <strings.h>
#include "data/readers/roll/roll_internal.h"

/* The YYYYMM of a Lean futures file name into out[7]; 0 when the name is not one. */
static int lean_contract(const char *path, char *out) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen(base);
  if (n < 11 || strcasecmp(base + n - 4, ".csv") != 0 || base[n - 11] != '_') return 0;
  const char *digits = base + n - 10;
  if (strspn(digits, "0123456789") != 6) return 0;
  static const char *const kinds[] = {"_trade", "_quote", "_openinterest"};
  for (int k = 0; k < 3; k++) {
    size_t len = strlen(kinds[k]);
    if (n - 11 >= len && strncasecmp(base + n - 11 - len, kinds[k], len) == 0) {
      memcpy(out, digits, 6);
      out[6] = '\0';
      return tg_contract_expiry_day(out) != INT64_MIN;
    }
  }
  return 0;
}

tg_status tg_lean_contract_tag(const char *path, tg_bars *b) {
  char contract[7];
  if (!lean_contract(path, contract) || tg_bars_column_index(b, "contract") >= 0) return TG_OK;
  tg_status st = tg_bars_add_column(b, "contract", TG_COLUMN_CATEGORY);
  if (st != TG_OK) return st;
  tg_bar_column *col = &b->cols[b->n_cols - 1];
  uint32_t code = 0;
  if ((st = tg_categories_intern(&col->cats, contract, 6, &code)) != TG_OK) return st;
  for (int64_t i = 0; i < b->n; i++) col->codes[i] = code;
  return TG_OK;
}
