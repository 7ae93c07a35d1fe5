/* Extra columns over several files: the intersection by name and kind, and the warning that names the rest. */
#include <stdarg.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/common_columns.h"

static int noted(const tg_common_cols *cc, const char *name) {
  for (int k = 0; k < cc->n; k++)
    if (strcmp(cc->names[k], name) == 0) return 1;
  return 0;
}

/* Adds name and why ("not in b.csv") to the list, unless name is there already. */
static tg_status note(tg_common_cols *cc, const char *name, const char *fmt, ...) {
  if (noted(cc, name)) return TG_OK;
  char why[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  size_t need = cc->len + strlen(name) + strlen(why) + 8;
  if (cc->n == cc->names_cap || need > cc->cap) {
    int ncap = cc->names_cap ? cc->names_cap * 2 : 8;
    size_t tcap = need > cc->cap ? need * 2 : cc->cap;
    char **names = tg_malloc((size_t)ncap * sizeof *names);
    char *text = tg_malloc(tcap);
    if (!names || !text) {
      tg_free(names);
      tg_free(text);
      return tg_error(TG_ERR_NOMEM, "read: out of memory listing dropped columns");
    }
    if (cc->n) memcpy(names, cc->names, (size_t)cc->n * sizeof *names);
    if (cc->len) memcpy(text, cc->text, cc->len + 1);
    tg_free(cc->names);
    tg_free(cc->text);
    cc->names = names;
    cc->text = text;
    cc->names_cap = ncap;
    cc->cap = tcap;
  }
  size_t nl = strlen(name);
  char *copy = tg_malloc(nl + 1);
  if (!copy) return tg_error(TG_ERR_NOMEM, "read: out of memory listing dropped columns");
  memcpy(copy, name, nl + 1);
  cc->names[cc->n++] = copy;
  cc->len += (size_t)snprintf(cc->text + cc->len, cc->cap - cc->len, "%s'%s' (%s)", cc->len ? ", " : "", name, why);
  return TG_OK;
}

static const char *kind_name(tg_column_kind k) { return k == TG_COLUMN_NUMERIC ? "numeric" : "a category"; }

tg_status tg_common_cols_keep(tg_common_cols *cc, tg_bars *acc, const char *first, tg_bars *one, const char *path) {
  tg_status st = TG_OK;
  for (int k = 0; k < acc->n_cols && st == TG_OK;) {
    const tg_bar_column *a = &acc->cols[k];
    int j = tg_bars_column_index(one, a->name);
    if (j >= 0 && one->cols[j].kind == a->kind) {
      k++;
      continue;
    }
    if (j < 0) st = note(cc, a->name, "not in %s", path);
    else st = note(cc, a->name, "%s in %s, %s in %s", kind_name(a->kind), first, kind_name(one->cols[j].kind), path);
    if (j >= 0) tg_bars_drop_column(one, j);
    tg_bars_drop_column(acc, k);
  }
  for (int k = 0; k < one->n_cols && st == TG_OK;) {
    if (tg_bars_column_index(acc, one->cols[k].name) >= 0) {
      k++;
      continue;
    }
    st = note(cc, one->cols[k].name, "not in %s", first); /* a name dropped before is noted already */
    tg_bars_drop_column(one, k);
  }
  return st;
}

void tg_common_cols_warn(const tg_common_cols *cc, FILE *warn, const char *what) {
  if (!warn || !cc->n) return;
  fprintf(warn, "warning: %s: kept only the extra columns every file has with one kind (a column numeric in one file "
          "and a category in another is dropped); dropped %s\n", what, cc->text);
}

void tg_common_cols_free(tg_common_cols *cc) {
  for (int k = 0; k < cc->n; k++) tg_free(cc->names[k]);
  tg_free(cc->names);
  tg_free(cc->text);
  memset(cc, 0, sizeof *cc);
}
