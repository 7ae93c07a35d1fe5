/* Category names: a table of distinct texts, each with its code, found again through a hash index. */
#include <string.h>
#include "base/alloc.h"
#include "base/hash.h"
#include "tickgrad/data.h"

#define MAX_NAMES (UINT32_MAX - 1) /* UINT32_MAX is TG_CATEGORY_MISSING */

static size_t name_len(const tg_categories *c, uint32_t k) { return (size_t)(c->off[k + 1] - c->off[k] - 1); }

/* The slot of [p, p + len) in the index: the one holding it, or the empty one where it would go. */
static uint32_t slot_of(const tg_categories *c, const char *p, size_t len, uint32_t h) {
  uint32_t mask = c->slot_cap - 1, s = h & mask;
  for (;;) {
    uint32_t v = c->slot[s];
    if (v == 0) return s;
    if (name_len(c, v - 1) == len && memcmp(c->text + c->off[v - 1], p, len) == 0) return s;
    s = (s + 1) & mask;
  }
}

/* Doubles the index (kept at most half full) and places every name again. */
static tg_status grow_index(tg_categories *c) {
  uint32_t cap = c->slot_cap ? c->slot_cap * 2 : 64;
  if (cap < c->slot_cap) return tg_error(TG_ERR_INVALID, "categories: too many names for the index");
  uint32_t *slot = tg_calloc(cap, sizeof *slot);
  if (!slot) return tg_error(TG_ERR_NOMEM, "categories: out of memory for an index of %u slots", cap);
  tg_free(c->slot);
  c->slot = slot;
  c->slot_cap = cap;
  for (uint32_t k = 0; k < c->n; k++) {
    const char *p = c->text + c->off[k];
    size_t len = name_len(c, k);
    c->slot[slot_of(c, p, len, tg_fnv1a32(p, len))] = k + 1;
  }
  return TG_OK;
}

/* Room for one more name of len bytes (and its NUL) in off and text. */
static tg_status make_room(tg_categories *c, size_t len) {
  if (c->n + 1 > c->cap) {
    uint32_t cap = c->cap ? (c->cap > MAX_NAMES / 2 ? MAX_NAMES : c->cap * 2) : 16;
    uint64_t *off = tg_malloc(((size_t)cap + 1) * sizeof *off);
    if (!off) return tg_error(TG_ERR_NOMEM, "categories: out of memory for %u names", cap);
    if (c->off) memcpy(off, c->off, ((size_t)c->n + 1) * sizeof *off);
    else off[0] = 0;
    tg_free(c->off);
    c->off = off;
    c->cap = cap;
  }
  if (c->text_len + len + 1 > c->text_cap) {
    size_t cap = c->text_cap ? c->text_cap * 2 : 256;
    while (cap < c->text_len + len + 1) cap *= 2;
    char *text = tg_malloc(cap);
    if (!text) return tg_error(TG_ERR_NOMEM, "categories: out of memory for %zu bytes of names", cap);
    if (c->text_len) memcpy(text, c->text, c->text_len);
    tg_free(c->text);
    c->text = text;
    c->text_cap = cap;
  }
  return TG_OK;
}

tg_status tg_categories_intern(tg_categories *c, const char *p, size_t len, uint32_t *code) {
  uint32_t h = tg_fnv1a32(p, len);
  if (c->slot_cap) {
    uint32_t v = c->slot[slot_of(c, p, len, h)];
    if (v) {
      *code = v - 1;
      return TG_OK;
    }
  }
  if (c->n >= MAX_NAMES) return tg_error(TG_ERR_INVALID, "categories: more than %u distinct names", MAX_NAMES);
  tg_status st;
  if ((uint64_t)(c->n + 1) * 2 > c->slot_cap && (st = grow_index(c)) != TG_OK) return st;
  if ((st = make_room(c, len)) != TG_OK) return st;
  uint32_t k = c->n++;
  if (len) memcpy(c->text + c->text_len, p, len);
  c->text[c->text_len + len] = '\0';
  c->text_len += len + 1;
  c->off[k + 1] = c->text_len;
  c->slot[slot_of(c, p, len, h)] = k + 1;
  *code = k;
  return TG_OK;
}

uint32_t tg_categories_find(const tg_categories *c, const char *p, size_t len) {
  if (!c->slot_cap) return TG_CATEGORY_MISSING;
  uint32_t v = c->slot[slot_of(c, p, len, tg_fnv1a32(p, len))];
  return v ? v - 1 : TG_CATEGORY_MISSING;
}

const char *tg_categories_name(const tg_categories *c, uint32_t code) { return c->text + c->off[code]; }

void tg_categories_free(tg_categories *c) {
  tg_free(c->off);
  tg_free(c->text);
  tg_free(c->slot);
  memset(c, 0, sizeof *c);
}
