/* RUN/data.json: the fingerprint of the data a run read (its bars' hash, each input file's size, time and hash), and
 * the check that a resume reads the same data. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "base/alloc.h"
#include "base/files.h"
#include "base/hash.h"
#include "base/json.h"
#include "data/readers/timeconv.h"
#include "train/train_internal.h"

#define DATA_PRINT_FORMAT "tickgrad-data-1"
#define MAX_INPUTS (TG_TRAIN_MAX_DATA + 2) /* --data, the labels file, the quotes file */

/* One input as the run saw it: a regular file with its size, modification time (ns) and content hash; a folder or a
 * glob only by its path (the bars' hash covers its files). */
typedef struct input_print {
  char path[TG_TRAIN_PATH_MAX];
  int file;
  int64_t size, mtime_ns;
  char hash[17];
} input_print;

typedef struct data_print {
  int64_t bars;
  char bars_hash[17];
  int n;
  input_print in[MAX_INPUTS];
} data_print;

static tg_status input_of(const char *path, input_print *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->path, sizeof p->path, "%s", path);
  struct stat sb;
  if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return TG_OK;
  p->file = 1;
  p->size = (int64_t)sb.st_size;
  p->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
  return tg_file_hash(path, p->hash);
}

/* The data files of c (--data, a labels: target's file, a --quotes file) and the bars read from them. */
static tg_status print_now(const tg_train_config *c, const tr_data *d, data_print *p) {
  memset(p, 0, sizeof *p);
  p->bars = d->bars_n;
  snprintf(p->bars_hash, sizeof p->bars_hash, "%016llx", (unsigned long long)d->bars_hash);
  tg_status st = TG_OK;
  for (int i = 0; i < c->n_data && st == TG_OK; i++) st = input_of(c->data[i], &p->in[p->n++]);
  if (st == TG_OK && strncmp(c->target, "labels:", 7) == 0) st = input_of(c->target + 7, &p->in[p->n++]);
  if (st == TG_OK && c->read.by[0] && c->read.quotes[0]) st = input_of(c->read.quotes, &p->in[p->n++]);
  return st;
}

static void append_input(tg_text *t, const input_print *p) {
  tg_text_puts(t, "    {\"path\": ");
  tg_json_append_string(t, p->path);
  if (p->file) {
    char when[TG_TIME_TEXT];
    tg_text_printf(t, ", \"size\": %lld, \"modified_ns\": %lld, \"modified\": \"%s UTC\", \"hash\": \"%s\"}",
                   (long long)p->size, (long long)p->mtime_ns, tg_format_time(p->mtime_ns, when, sizeof when),
                   p->hash);
  } else {
    tg_text_puts(t, ", \"kind\": \"folder or glob\"}");
  }
}

/* data.json from p, with the earlier accepted changes (JSON array text or NULL) and one more (NULL: none). */
static tg_status write_print(const char *run, const data_print *p, const char *accepted, const char *more) {
  tg_text t = {0};
  tg_text_printf(&t, "{\n  \"format\": \"%s\",\n  \"bars\": %lld,\n  \"bars_hash\": \"%s\",\n  \"inputs\": [\n",
                 DATA_PRINT_FORMAT, (long long)p->bars, p->bars_hash);
  for (int i = 0; i < p->n; i++) {
    append_input(&t, &p->in[i]);
    tg_text_puts(&t, i + 1 < p->n ? ",\n" : "\n");
  }
  tg_text_puts(&t, "  ],\n  \"accepted_changes\": [");
  if (accepted && *accepted) tg_text_puts(&t, accepted);
  if (more) {
    if (accepted && *accepted) tg_text_puts(&t, ",");
    tg_text_puts(&t, "\n    ");
    tg_text_puts(&t, more);
  }
  tg_text_puts(&t, "]\n}\n");
  char path[TG_TRAIN_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/data.json", run);
  tg_status st = t.oom ? tg_error(TG_ERR_NOMEM, "train: out of memory writing %s", path)
                       : tg_write_atomic(path, t.data, t.len);
  tg_text_free(&t);
  return st;
}

tg_status tr_data_print_write(const tg_train_config *c, const tr_data *d) {
  data_print p;
  tg_status st = print_now(c, d, &p);
  return st == TG_OK ? write_print(c->out, &p, NULL, NULL) : st;
}

/* The saved fingerprint from data.json's root into p; the accepted changes' text (between the brackets) into acc. */
static tg_status read_print(const char *path, const tg_json *root, data_print *p, tg_text *acc, const char *text) {
  memset(p, 0, sizeof *p);
  const tg_json *fmt = tg_json_get(root, "format"), *bars = tg_json_get(root, "bars");
  const tg_json *hash = tg_json_get(root, "bars_hash"), *inputs = tg_json_get(root, "inputs");
  if (!fmt || fmt->type != TG_JSON_STRING || strcmp(fmt->str, DATA_PRINT_FORMAT) != 0 || !bars ||
      bars->type != TG_JSON_INT || !hash || hash->type != TG_JSON_STRING || hash->len != 16 || !inputs ||
      inputs->type != TG_JSON_ARRAY)
    return tg_error(TG_ERR_FORMAT, "%s: not a data fingerprint of this tickgrad (format \"%s\")", path,
                    DATA_PRINT_FORMAT);
  p->bars = bars->i;
  memcpy(p->bars_hash, hash->str, 17);
  for (const tg_json *e = inputs->first; e && p->n < MAX_INPUTS; e = e->next) {
    input_print *q = &p->in[p->n++];
    const tg_json *ip = tg_json_get(e, "path"), *sz = tg_json_get(e, "size"), *mt = tg_json_get(e, "modified_ns");
    const tg_json *h = tg_json_get(e, "hash");
    if (ip && ip->type == TG_JSON_STRING) snprintf(q->path, sizeof q->path, "%s", ip->str);
    q->file = sz && sz->type == TG_JSON_INT && mt && mt->type == TG_JSON_INT && h && h->type == TG_JSON_STRING &&
              h->len == 16;
    if (q->file) q->size = sz->i, q->mtime_ns = mt->i, memcpy(q->hash, h->str, 17);
  }
  const tg_json *a = tg_json_get(root, "accepted_changes");
  if (a && a->type == TG_JSON_ARRAY && a->count > 0) { /* the array's text as written, without its brackets */
    const char *open = text + a->offset, *close = strrchr(open, ']');
    if (close && close > open + 1) tg_text_append(acc, open + 1, (size_t)(close - open - 1));
  }
  return TG_OK;
}

/* What changed between the saved fingerprint s and now: one clause per input that differs, else the bars. */
static void describe(const data_print *s, const data_print *now, tg_text *why) {
  int named = 0;
  for (int i = 0; i < now->n; i++) {
    const input_print *a = NULL, *b = &now->in[i];
    for (int j = 0; j < s->n && !a; j++)
      if (strcmp(s->in[j].path, b->path) == 0) a = &s->in[j];
    if (!a || !a->file || !b->file) continue;
    if (a->size == b->size && strcmp(a->hash, b->hash) == 0) continue;
    char t0[TG_TIME_TEXT], t1[TG_TIME_TEXT];
    tg_text_printf(why, "%s'%s': %lld -> %lld bytes, modified %s -> %s UTC, content hash %s -> %s", named ? "; " : "",
                   b->path, (long long)a->size, (long long)b->size, tg_format_time(a->mtime_ns, t0, sizeof t0),
                   tg_format_time(b->mtime_ns, t1, sizeof t1), a->hash, b->hash);
    named++;
  }
  if (!named) {
    for (int i = 0; i < now->n; i++) tg_text_printf(why, "%s'%s'", i ? ", " : "the bars read from ", now->in[i].path);
    if (!now->n) tg_text_puts(why, "the bars given");
  }
  tg_text_printf(why, "%s%lld -> %lld bars, bars hash %s -> %s", named ? " (" : ": ", (long long)s->bars,
                 (long long)now->bars, s->bars_hash, now->bars_hash);
  if (named) tg_text_puts(why, ")");
}

/* The saved fingerprint of run (its data.json) against the bars d read: *differs, and why (each input that changed, or
 * the bars); acc receives the saved file's accepted changes. */
static tg_status compare(const char *run, const tg_train_config *c, const tr_data *d, data_print *now, tg_text *acc,
                         tg_text *why, int *differs) {
  char path[TG_TRAIN_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/data.json", run);
  char *text = NULL;
  size_t len = 0;
  tg_json_doc *doc = NULL;
  data_print saved;
  *differs = 0;
  tg_status st = tg_read_file(path, &text, &len);
  if (st == TG_OK) st = tg_json_parse(text, len, path, 0, &doc);
  if (st == TG_OK) st = read_print(path, tg_json_root(doc), &saved, acc, text);
  if (st == TG_OK) st = print_now(c, d, now);
  if (st == TG_OK && strcmp(saved.bars_hash, now->bars_hash) != 0) {
    *differs = 1;
    describe(&saved, now, why);
    if (why->oom) st = tg_error(TG_ERR_NOMEM, "out of memory comparing the data with %s", path);
  }
  tg_json_free(doc);
  tg_free(text);
  return st;
}

static int has_print(const char *run) {
  char path[TG_TRAIN_PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/data.json", run);
  struct stat sb;
  return stat(path, &sb) == 0;
}

tg_status tr_data_print_check(const tg_train_config *c, const tr_data *d, FILE *log) {
  if (!has_print(c->out)) { /* a run from before data fingerprints: start keeping one */
    if (log) fprintf(log, "warning: resume: %s has no data.json (a run from an older tickgrad): the data it read cannot "
                     "be checked; it is recorded from now on\n", c->out);
    return tr_data_print_write(c, d);
  }
  data_print now;
  tg_text acc = {0}, why = {0};
  int differs = 0;
  tg_status st = compare(c->out, c, d, &now, &acc, &why, &differs);
  if (st == TG_OK && differs && !c->data_changed_ok) {
    st = tg_error(TG_ERR_INVALID, "resume: the data changed since %s started: %s; resume it on the data it read, or "
                  "give --data-changed ok to continue on the new data (data.json records that)", c->out, why.data);
  } else if (st == TG_OK && differs) {
    char when[TG_TIME_TEXT];
    tg_text r = {0};
    tg_text_printf(&r, "{\"at\": \"%s UTC\", \"what\": ",
                   tg_format_time((int64_t)time(NULL) * 1000000000, when, sizeof when));
    tg_json_append_string(&r, why.data);
    tg_text_puts(&r, "}");
    if (log) fprintf(log, "warning: resume: the data changed since %s started: %s; continuing on it as "
                     "--data-changed ok asks (recorded in data.json)\n", c->out, why.data);
    st = r.oom ? tg_error(TG_ERR_NOMEM, "resume: out of memory") : write_print(c->out, &now, acc.data, r.data);
    tg_text_free(&r);
  }
  tg_text_free(&acc);
  tg_text_free(&why);
  return st;
}

tg_status tr_data_print_same(const char *run, const tg_train_config *c, const tr_data *d, const char *who, int *known) {
  *known = has_print(run);
  if (!*known) return TG_OK;
  data_print now;
  tg_text acc = {0}, why = {0};
  int differs = 0;
  tg_status st = compare(run, c, d, &now, &acc, &why, &differs);
  if (st == TG_OK && differs)
    st = tg_error(TG_ERR_INVALID, "%s: the bars are not the ones %s trained on: %s; its splits and normalisation come "
                  "from those bars, so give it the data it read", who, run, why.data);
  tg_text_free(&acc);
  tg_text_free(&why);
  return st;
}
