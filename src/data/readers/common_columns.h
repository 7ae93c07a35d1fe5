/* Extra columns over several files: only those every file has, with one kind, are kept, and the others are named. */
#ifndef TG_DATA_COMMON_COLUMNS_H
#define TG_DATA_COMMON_COLUMNS_H

#include <stdio.h>
#include "tickgrad/data.h"

/* What was dropped: "'x' (not in b.csv), 'y' (numeric in a.csv, a category in c.csv)", each name once. */
typedef struct tg_common_cols {
  char *text;        /* [cap], len used; NUL-terminated when len > 0 */
  size_t len, cap;
  char **names;      /* [n] the names dropped */
  int n, names_cap;
} tg_common_cols;

/* Makes acc (the files read so far, the first of them named first) and one (the next, named path) hold the same
 * extra columns: drops from each those the other lacks or holds with the other kind (a column numeric in one file
 * and a category in another is dropped: its numbers have no text to become names from). */
tg_status tg_common_cols_keep(tg_common_cols *cc, tg_bars *acc, const char *first, tg_bars *one, const char *path);
/* One warning line naming what was dropped, when anything was and warn is not NULL. */
void tg_common_cols_warn(const tg_common_cols *cc, FILE *warn, const char *what);
void tg_common_cols_free(tg_common_cols *cc);

#endif
