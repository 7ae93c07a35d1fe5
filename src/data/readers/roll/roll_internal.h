/* Continuous futures inside: what a contract's name says, and the roll list (roll*.c). */
#ifndef TG_DATA_ROLL_INTERNAL_H
#define TG_DATA_ROLL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "tickgrad/data.h"

typedef enum tg_contract_kind { TG_CONTRACT_FUTURE = 0, TG_CONTRACT_SPREAD, TG_CONTRACT_OPTION } tg_contract_kind;

/* A spread when the name holds '-' ("ESZ3-ESH4"), an option when it holds ' ' ("ESZ3 C4500"), else an outright. */
tg_contract_kind tg_contract_kind_of(const char *name);
/* The expiry a name gives, in days since the epoch: YYYYMMDD that day, YYYYMM (Lean's contract month) the month's
 * first day; INT64_MIN for any other name. */
int64_t tg_contract_expiry_day(const char *name);
/* The length of the root of an exchange-style outright name (ES of ESH1 or ESZ23: upper-case letters and digits, a
 * month code FGHJKMNQUVXZ, one or two year digits), 0 when name is not one; month (1-12) and year (the digits as
 * written) when not NULL. */
size_t tg_contract_root_len(const char *name, int *month, int *year);
/* An order of contracts: the month an exchange-style name delivers in (year * 12 + month - 1; a one-digit year is the
 * first year ending in it from the year before near_ts on), or INT64_MIN for another name. */
int64_t tg_contract_month_key(const char *name, int64_t near_ts);
/* Lean futures bar files name their contract: YYYYMMDD_sym_minute_trade_YYYYMM.csv, sym_trade_YYYYMM.csv (also
 * _quote_, _openinterest_). When path's name is one, every bar of b gets that YYYYMM in a category column contract
 * (b must not hold one); any other name leaves b as it is. */
tg_status tg_lean_contract_tag(const char *path, tg_bars *b);
/* Appends r; TG_ERR_NOMEM naming the rolls. */
tg_status tg_roll_list_push(tg_roll_list *l, const tg_roll *r);

#endif
