/* DBN futures contracts by name: the metadata's symbol mappings name each instrument id, and bars of several contracts
 * of one root get those names in a contract column for the roll (docs/TICKS.md "Continuous futures"). */
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "data/readers/dbn/dbn_internal.h"
#include "data/readers/roll/roll_internal.h"

tg_status tg_dbn_mapping_names(const tg_dbn_stream *s, const tg_dbn_meta *m, tg_dbn_named_id **v, int *n) {
  const unsigned char *p = s->p + m->mappings_at;
  size_t L = m->symbol_len;
  uint32_t count = tg_dbn_u32(p);
  p += 4;
  int cap = 0;
  for (uint32_t i = 0; i < count; i++) {
    const unsigned char *raw = p;
    uint32_t intervals = tg_dbn_u32(p + L);
    p += L + 4;
    for (uint32_t k = 0; k < intervals; k++, p += 8 + L) {
      const char *out = (const char *)p + 8;
      size_t len = strnlen(out, L);
      if (len == 0 || len > 10 || strspn(out, "0123456789") != len) continue;
      if (*n == cap) {
        cap = cap ? cap * 2 : 16;
        tg_dbn_named_id *w = tg_malloc((size_t)cap * sizeof *w);
        if (!w) return tg_error(TG_ERR_NOMEM, "%s: out of memory for symbol mappings", s->path);
        if (*n) memcpy(w, *v, (size_t)*n * sizeof *w);
        tg_free(*v);
        *v = w;
      }
      tg_dbn_named_id *x = &(*v)[(*n)++];
      x->id = (uint32_t)strtoul(out, NULL, 10);
      size_t rl = strnlen((const char *)raw, L);
      if (rl >= sizeof x->name) rl = sizeof x->name - 1;
      memcpy(x->name, raw, rl);
      x->name[rl] = '\0';
    }
  }
  return TG_OK;
}

static const char *name_of(const tg_dbn_named_id *v, int n, uint32_t id) {
  for (int i = 0; i < n; i++)
    if (v[i].id == id) return v[i].name;
  return NULL;
}

/* 1 when every id of bars [n0, n) has a name, the outrights share one root and there are at least two of them, and
 * every other name (a spread, an option) starts with that root. */
static int one_future(const tg_bars *b, int64_t n0, const tg_dbn_named_id *v, int n) {
  const char *root = NULL;
  size_t rl = 0;
  uint32_t first = 0;
  int outrights = 0, two = 0;
  for (int64_t i = n0; i < b->n; i++) {
    const char *name = name_of(v, n, b->instrument[i]);
    if (!name) return 0;
    size_t r = tg_contract_root_len(name, NULL, NULL);
    if (r && !root) root = name, rl = r, first = b->instrument[i];
    if (r) outrights++, two |= b->instrument[i] != first;
  }
  if (!root || !two || outrights < 2) return 0;
  for (int64_t i = n0; i < b->n; i++) {
    const char *name = name_of(v, n, b->instrument[i]);
    size_t r = tg_contract_root_len(name, NULL, NULL);
    if ((r && (r != rl || strncmp(name, root, rl) != 0)) || (!r && strncmp(name, root, rl) != 0)) return 0;
  }
  return 1;
}

tg_status tg_dbn_contract_tag(const tg_dbn_stream *s, const tg_dbn_meta *m, tg_bars *out, int64_t n0) {
  if (!out->instrument || out->n - n0 < 2 || tg_bars_column_index(out, "contract") >= 0) return TG_OK;
  tg_dbn_named_id *v = NULL;
  int n = 0;
  tg_status st = tg_dbn_mapping_names(s, m, &v, &n);
  if (st == TG_OK && one_future(out, n0, v, n)) {
    st = tg_bars_add_column(out, "contract", TG_COLUMN_CATEGORY);
    tg_bar_column *col = st == TG_OK ? &out->cols[out->n_cols - 1] : NULL;
    for (int64_t i = n0; st == TG_OK && i < out->n; i++) {
      const char *name = name_of(v, n, out->instrument[i]);
      st = tg_categories_intern(&col->cats, name, strlen(name), &col->codes[i]);
    }
  }
  tg_free(v);
  return st;
}
