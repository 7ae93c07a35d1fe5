/* CSV instrument ids: whole numbers as they are, symbols by 32-bit FNV-1a, hash collisions caught per file. */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/hash.h"
#include "data/readers/csv/csv_internal.h"

/* A whole number in [0, 2^32) written with digits only. */
static int whole_number(const char *p, const char *e, uint32_t *id) {
  if (p == e || e - p > 10) return 0;
  uint64_t v = 0;
  for (; p < e; p++) {
    if ((unsigned)(*p - '0') > 9) return 0;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  if (v > 0xFFFFFFFFull) return 0;
  *id = (uint32_t)v;
  return 1;
}

uint32_t tg_instrument_id(const char *p, size_t n) {
  uint32_t id;
  return whole_number(p, p + n, &id) ? id : tg_fnv1a32(p, n);
}

void tg_csv_ids_free(tg_csv_ids *t) {
  tg_free(t->slot);
  tg_free(t->text);
  memset(t, 0, sizeof *t);
}

static int grow_text(tg_csv_ids *t, size_t need) {
  if (t->text_len + need <= t->text_cap) return 1;
  size_t cap = t->text_cap ? t->text_cap : 1024;
  while (cap < t->text_len + need) cap *= 2;
  char *nt = tg_malloc(cap);
  if (!nt) return 0;
  if (t->text_len) memcpy(nt, t->text, t->text_len);
  tg_free(t->text);
  t->text = nt;
  t->text_cap = cap;
  return 1;
}

static int rehash(tg_csv_ids *t) {
  size_t cap = t->cap ? t->cap * 2 : 64;
  tg_csv_id_slot *ns = tg_calloc(cap, sizeof *ns);
  if (!ns) return 0;
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->slot[i].used) continue;
    size_t k = t->slot[i].id & (cap - 1);
    while (ns[k].used) k = (k + 1) & (cap - 1);
    ns[k] = t->slot[i];
  }
  tg_free(t->slot);
  t->slot = ns;
  t->cap = cap;
  return 1;
}

/* "'AAPL'" or "the number 7" for messages. */
static const char *describe(const char *p, size_t n, int numeric, char *buf, size_t len) {
  char q[64];
  tg_csv_quote(p, p + n, q, sizeof q);
  snprintf(buf, len, numeric ? "the number %s" : "'%s'", q);
  return buf;
}

tg_status tg_csv_instrument_id(tg_csv_ids *t, const char *path, int64_t line, const char *p, const char *e,
                               uint32_t *id) {
  size_t n = (size_t)(e - p);
  if (t->have_last && t->last_len == n && memcmp(t->text + t->last_at, p, n) == 0) { /* the previous row's symbol */
    *id = t->last_id;
    return TG_OK;
  }
  int numeric = whole_number(p, e, id);
  if (!numeric) *id = tg_fnv1a32(p, n);
  if ((t->count + 1) * 2 > t->cap && !rehash(t))
    return tg_error(TG_ERR_NOMEM, "%s: out of memory for instrument ids", path);
  size_t k = *id & (t->cap - 1);
  for (; t->slot[k].used; k = (k + 1) & (t->cap - 1)) {
    tg_csv_id_slot *s = &t->slot[k];
    if (s->id != *id) continue;
    const char *seen = t->text + s->at;
    /* numbers merge by value ("007" is 7); text merges only with the same bytes */
    if (numeric ? s->numeric : !s->numeric && s->len == n && memcmp(seen, p, n) == 0) {
      if (!numeric) {
        t->have_last = 1;
        t->last_at = s->at;
        t->last_len = s->len;
        t->last_id = *id;
      }
      return TG_OK;
    }
    char a[96], b[96];
    return tg_error(TG_ERR_FORMAT, "%s: line %lld: instrument %s and %s (line %lld) both get id %u (symbols take "
                    "the 32-bit FNV-1a hash of their text), which would merge them; rename one or give numeric ids",
                    path, (long long)line, describe(p, n, numeric, a, sizeof a),
                    describe(seen, s->len, s->numeric, b, sizeof b), (long long)s->line, (unsigned)*id);
  }
  if (!grow_text(t, n + 1)) return tg_error(TG_ERR_NOMEM, "%s: out of memory for instrument names", path);
  memcpy(t->text + t->text_len, p, n);
  t->slot[k] = (tg_csv_id_slot){*id, 1, numeric, t->text_len, n, line};
  if (!numeric) {
    t->have_last = 1;
    t->last_at = t->text_len;
    t->last_len = n;
    t->last_id = *id;
  }
  t->text_len += n;
  t->count++;
  return TG_OK;
}
