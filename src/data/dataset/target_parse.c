/* The --target text: logret, col:NAME[:diff|:logdiff], labels:FILE, triple-barrier:UP,DOWN,BARS. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tickgrad/dataset.h"

#define FORMS "logret, col:NAME[:diff|:logdiff], labels:FILE or triple-barrier:UP,DOWN,BARS"

static tg_status bad(const char *text, const char *why) {
  return tg_error(TG_ERR_INVALID, "target '%s': %s; want " FORMS, text, why);
}

/* The column and its transform: a last ":diff" or ":logdiff" is the transform, the rest the name. */
static tg_status parse_column(const char *text, const char *spec, tg_target_opts *o) {
  size_t len = strlen(spec);
  const char *colon = strrchr(spec, ':');
  if (colon && strcmp(colon, ":diff") == 0) o->transform = TG_COL_DIFF, len = (size_t)(colon - spec);
  else if (colon && strcmp(colon, ":logdiff") == 0) o->transform = TG_COL_LOGDIFF, len = (size_t)(colon - spec);
  if (len == 0) return bad(text, "no column name after col:");
  if (len >= sizeof o->column) return bad(text, "the column name is too long");
  memcpy(o->column, spec, len);
  o->column[len] = '\0';
  o->kind = TG_TARGET_COLUMN;
  return TG_OK;
}

static tg_status parse_barrier(const char *text, const char *spec, tg_target_opts *o) {
  char *e1 = NULL, *e2 = NULL, *e3 = NULL;
  o->tb_up = strtod(spec, &e1);
  if (*e1 == ',') o->tb_down = strtod(e1 + 1, &e2);
  if (e2 && *e2 == ',') o->tb_bars = (int)strtol(e2 + 1, &e3, 10);
  if (!e3 || *e3 || e3 == e2 + 1)
    return bad(text, "triple-barrier takes three numbers: the upper and lower barrier in volatilities, the bars");
  if (!(o->tb_up > 0 && isfinite(o->tb_up) && o->tb_down > 0 && isfinite(o->tb_down)))
    return bad(text, "the barriers must be finite and > 0 (in units of the trailing volatility)");
  if (o->tb_bars < 1 || o->tb_bars > 100000) return bad(text, "the time limit must be 1..100000 bars");
  o->kind = TG_TARGET_TRIPLE_BARRIER;
  return TG_OK;
}

tg_status tg_target_parse(const char *text, tg_target_opts *out) {
  memset(out, 0, sizeof *out);
  if (!text || !*text || strcmp(text, "logret") == 0) return TG_OK;
  if (strncmp(text, "col:", 4) == 0) return parse_column(text, text + 4, out);
  if (strncmp(text, "triple-barrier:", 15) == 0) return parse_barrier(text, text + 15, out);
  if (strncmp(text, "labels:", 7) == 0) {
    if (!text[7]) return bad(text, "no file after labels:");
    if (strlen(text + 7) >= sizeof out->labels_path) return bad(text, "the path is too long");
    strcpy(out->labels_path, text + 7);
    out->kind = TG_TARGET_LABELS;
    return TG_OK;
  }
  return bad(text, "unknown kind");
}
