/* Checkpoint sets: a set is written in a temporary folder, completed by a manifest, renamed, then made current by
 * switching RUN/checkpoint (one rename); a resume takes the current set or falls back to the newest complete one. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "base/alloc.h"
#include "base/files.h"
#include "base/hash.h"
#include "base/json.h"
#include "io/ckpt_set.h"

#define SET_FORMAT "tickgrad-checkpoint-1"
#define MANIFEST "checkpoint.json"
#define MAX_SETS 64
#define MAX_FILES 16

/* The files at the run's top that say what the run is, written before its first checkpoint and never changed:
 * their hashes in each set's manifest let an opener of the run tell an edited one. */
static const char *const RUN_FILES[] = {"config.json", "inference.json", "env.json"};
#define N_RUN_FILES 3

void tg_ckpt_run_id_new(char hex[17]) {
  uint64_t v = 0;
  if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t mix[3] = {(uint64_t)ts.tv_sec, (uint64_t)ts.tv_nsec, (uint64_t)getpid()};
    v = tg_fnv1a64(mix, sizeof mix);
  }
  snprintf(hex, 17, "%016llx", (unsigned long long)v);
}

/* A set folder's number ("000012" -> 12), or -1 for any other name. */
static long parse_gen(const char *name) {
  if (!*name || strlen(name) > 12) return -1;
  for (const char *p = name; *p; p++)
    if (*p < '0' || *p > '9') return -1;
  return strtol(name, NULL, 10);
}

static void sets_dir(const char *run, char *buf, size_t n) { snprintf(buf, n, "%s/checkpoints", run); }

static void set_dir(const char *run, long gen, char *buf, size_t n) { snprintf(buf, n, "%s/checkpoints/%06ld", run, gen); }

/* The folder a resume reads for gen: set gen (> 0), the checkpoint folder of a copy that followed the link (< 0), or the
 * run itself for a run from before sets (0). */
static void found_dir(const char *run, long gen, char *buf, size_t n) {
  if (gen > 0) set_dir(run, gen, buf, n);
  else if (gen < 0) snprintf(buf, n, "%s/checkpoint", run);
  else snprintf(buf, n, "%s", run);
}

/* The set RUN/checkpoint links to: its number, or -1 (no link, or a link to something else). */
static long current_gen(const char *run) {
  char link[TG_PATH_MAX + 32], target[256];
  snprintf(link, sizeof link, "%s/checkpoint", run);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return -1;
  target[n] = '\0';
  return strncmp(target, "checkpoints/", 12) == 0 ? parse_gen(target + 12) : -1;
}

/* The numbered sets of RUN/checkpoints, newest first; returns how many (at most MAX_SETS). */
static int list_sets(const char *run, long *gens) {
  char dir[TG_PATH_MAX + 32];
  sets_dir(run, dir, sizeof dir);
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    long g = parse_gen(e->d_name);
    if (g < 0 || (n == MAX_SETS && gens[n - 1] > g)) continue; /* full: keep the newest */
    int i = n < MAX_SETS ? n++ : n - 1;
    for (; i > 0 && gens[i - 1] < g; i--) gens[i] = gens[i - 1]; /* insertion: newest first */
    gens[i] = g;
  }
  closedir(d);
  return n;
}

/* config.json's hash and run id (both "" when the file or the id is absent). */
static tg_status config_id(const char *run, char hash[17], char id[17]) {
  char path[TG_PATH_MAX + 32], *text = NULL;
  size_t len = 0;
  hash[0] = id[0] = '\0';
  snprintf(path, sizeof path, "%s/config.json", run);
  if (!tg_file_exists(path)) return TG_OK;
  tg_status st = tg_read_file(path, &text, &len);
  if (st != TG_OK) return st;
  snprintf(hash, 17, "%016llx", (unsigned long long)tg_fnv1a64(text, len));
  tg_json_doc *doc = NULL;
  if (tg_json_parse(text, len, path, 0, &doc) == TG_OK) {
    const tg_json *v = tg_json_get(tg_json_root(doc), "run_id");
    if (v && v->type == TG_JSON_STRING) snprintf(id, 17, "%s", v->str);
    tg_json_free(doc);
  }
  tg_free(text);
  return TG_OK;
}

tg_status tg_ckpt_begin(const char *run, tg_ckpt_set *s) {
  char dir[TG_PATH_MAX + 32];
  long gens[MAX_SETS];
  memset(s, 0, sizeof *s);
  if (!run || !*run || strlen(run) >= sizeof s->run)
    return tg_error(TG_ERR_INVALID, "checkpoint: the run folder is empty or longer than %zu bytes", sizeof s->run - 1);
  snprintf(s->run, sizeof s->run, "%s", run);
  sets_dir(run, dir, sizeof dir);
  tg_status st = tg_make_dirs(dir);
  if (st != TG_OK) return st;
  int n = list_sets(run, gens);
  long cur = current_gen(run);
  s->gen = (n && gens[0] > cur ? gens[0] : cur < 0 ? 0 : cur) + 1;
  snprintf(s->dir, sizeof s->dir, "%s/%06ld.tmp.%ld", dir, s->gen, (long)getpid());
  if (tg_file_exists(s->dir) && (st = tg_remove_dir_files(s->dir)) != TG_OK) return st;
  return tg_make_dirs(s->dir);
}

void tg_ckpt_path(const tg_ckpt_set *s, const char *file, char *buf, size_t n) { snprintf(buf, n, "%s/%s", s->dir, file); }

void tg_ckpt_abort(tg_ckpt_set *s) {
  if (s->dir[0] && tg_is_temp_name(s->dir)) (void)tg_remove_dir_files(s->dir);
}

static int cmp_names(const void *a, const void *b) { return strcmp(a, b); }

/* The set's files (regular files but the manifest and temporaries), sorted; returns how many, or -1. */
static int set_files(const char *dir, char names[MAX_FILES][128]) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d)) != NULL) {
    char path[TG_PATH_MAX + 320];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (strcmp(e->d_name, MANIFEST) == 0 || tg_is_temp_name(e->d_name) || strlen(e->d_name) >= 128) continue;
    if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || n == MAX_FILES) continue;
    snprintf(names[n++], 128, "%.127s", e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], cmp_names);
  return n;
}

static tg_status write_manifest(const tg_ckpt_set *s, char names[MAX_FILES][128], int n) {
  char hash[17], id[17], path[TG_PATH_MAX + 320];
  tg_status st = config_id(s->run, hash, id);
  if (st != TG_OK) return st;
  tg_text b = {0};
  tg_text_printf(&b, "{\n  \"format\": \"%s\",\n  \"generation\": %ld,\n  \"run_id\": ", SET_FORMAT, s->gen);
  tg_text_puts(&b, id[0] ? "\"" : "null");
  tg_text_printf(&b, "%s%s,\n  \"config_fnv1a\": %s%s%s,\n  \"run_files\": {", id, id[0] ? "\"" : "", hash[0] ? "\"" : "",
                 hash[0] ? hash : "null", hash[0] ? "\"" : "");
  for (int i = 0, k = 0; i < N_RUN_FILES && st == TG_OK; i++) {
    char fh[17];
    snprintf(path, sizeof path, "%s/%s", s->run, RUN_FILES[i]);
    if (!tg_file_exists(path)) continue;
    st = tg_file_hash(path, fh);
    tg_text_printf(&b, "%s\"%s\": \"%s\"", k++ ? ", " : "", RUN_FILES[i], fh);
  }
  tg_text_puts(&b, "},\n  \"files\": {");
  for (int i = 0; i < n && st == TG_OK; i++) {
    char fh[17];
    snprintf(path, sizeof path, "%s/%.127s", s->dir, names[i]);
    st = tg_file_hash(path, fh);
    tg_text_puts(&b, i ? ",\n    " : "\n    ");
    tg_json_append_string(&b, names[i]);
    tg_text_printf(&b, ": \"%s\"", fh);
  }
  tg_text_puts(&b, "\n  }\n}\n");
  tg_ckpt_path(s, MANIFEST, path, sizeof path);
  if (st == TG_OK) st = b.oom ? tg_error(TG_ERR_NOMEM, "out of memory writing '%s'", path) : tg_write_atomic(path, b.data, b.len);
  tg_text_free(&b);
  return st;
}

/* RUN/checkpoint -> checkpoints/N, moving aside a folder that a copy left there instead of the link. */
static tg_status switch_current(const tg_ckpt_set *s) {
  char link[TG_PATH_MAX + 32], target[64], aside[TG_PATH_MAX + 64];
  struct stat sb;
  snprintf(link, sizeof link, "%s/checkpoint", s->run);
  snprintf(target, sizeof target, "checkpoints/%06ld", s->gen);
  if (lstat(link, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    snprintf(aside, sizeof aside, "%s/checkpoints/copied.tmp.%ld", s->run, (long)getpid());
    tg_status st = tg_rename(link, aside);
    if (st != TG_OK) return st;
  }
  tg_status st = tg_symlink_replace(target, link);
  return st == TG_OK ? tg_sync_dir(s->run) : st;
}

/* RUN/FILE -> checkpoint/FILE for each file of the set. */
static tg_status link_files(const tg_ckpt_set *s, char names[MAX_FILES][128], int n) {
  int changed = 0;
  for (int i = 0; i < n; i++) {
    char link[TG_PATH_MAX + 160], want[160], have[160];
    snprintf(link, sizeof link, "%s/%.127s", s->run, names[i]);
    snprintf(want, sizeof want, "checkpoint/%.127s", names[i]);
    ssize_t k = readlink(link, have, sizeof have - 1);
    if (k > 0 && (have[k] = '\0', strcmp(have, want) == 0)) continue;
    tg_status st = tg_symlink_replace(want, link);
    if (st != TG_OK) return st;
    changed = 1;
  }
  return changed ? tg_sync_dir(s->run) : TG_OK;
}

/* Every set but keep[0] and keep[1], and the temporaries, from RUN/checkpoints (best effort: a set left behind costs
 * only space). */
static void remove_old(const char *run, long keep0, long keep1) {
  long gens[MAX_SETS];
  char dir[TG_PATH_MAX + 64];
  int n = list_sets(run, gens);
  for (int i = 0; i < n; i++) {
    if (gens[i] == keep0 || gens[i] == keep1) continue;
    set_dir(run, gens[i], dir, sizeof dir);
    (void)tg_remove_dir_files(dir);
  }
  sets_dir(run, dir, sizeof dir);
  (void)tg_remove_temps(dir);
}

tg_status tg_ckpt_commit(tg_ckpt_set *s) {
  char names[MAX_FILES][128], final[TG_PATH_MAX + 64], sets[TG_PATH_MAX + 32];
  int n = set_files(s->dir, names);
  tg_status st = n < 0 ? tg_error(TG_ERR_IO, "cannot list the checkpoint folder '%s': %s", s->dir, strerror(errno))
                       : write_manifest(s, names, n);
  set_dir(s->run, s->gen, final, sizeof final);
  sets_dir(s->run, sets, sizeof sets);
  if (st == TG_OK) st = tg_rename(s->dir, final);
  if (st != TG_OK) {
    tg_ckpt_abort(s);
    return st;
  }
  snprintf(s->dir, sizeof s->dir, "%s", final);
  long prev = current_gen(s->run);
  st = tg_sync_dir(sets);
  if (st == TG_OK) st = switch_current(s);
  if (st == TG_OK) st = link_files(s, names, n);
  if (st == TG_OK) remove_old(s->run, s->gen, prev);
  return st;
}

tg_status tg_ckpt_end(tg_ckpt_set *s, tg_status st) {
  if (st == TG_OK) return tg_ckpt_commit(s);
  tg_ckpt_abort(s);
  return st;
}

/* 1 when run holds a checkpoint from before sets: trainer.json (a forecaster) or agent.safetensors (an agent) as a
 * file at its top. */
static int legacy_checkpoint(const char *run) {
  const char *last[2] = {"trainer.json", "agent.safetensors"};
  for (int i = 0; i < 2; i++) {
    char path[TG_PATH_MAX + 32];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", run, last[i]);
    if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode)) return 1;
  }
  return 0;
}

int tg_ckpt_exists(const char *run) {
  char path[TG_PATH_MAX + 32];
  long gens[MAX_SETS];
  struct stat sb;
  if (current_gen(run) >= 0 || list_sets(run, gens) > 0) return 1;
  snprintf(path, sizeof path, "%s/checkpoint", run);
  return stat(path, &sb) == 0 || legacy_checkpoint(run);
}

/* TG_OK when the set in dir is whole (every file of its manifest, by hash); TG_ERR_FORMAT naming what is wrong;
 * TG_ERR_INVALID when it was written with another config.json. */
static tg_status verify(const char *run, const char *dir, long gen) {
  char path[TG_PATH_MAX + 320], hash[17], id[17];
  snprintf(path, sizeof path, "%s/%s", dir, MANIFEST);
  tg_json_doc *doc = NULL;
  tg_status st = tg_file_exists(path) ? tg_json_parse_file(path, &doc)
                                      : tg_error(TG_ERR_FORMAT, "%s is missing", path);
  if (st != TG_OK) return tg_error(TG_ERR_FORMAT, "%s", tg_last_error());
  const tg_json *root = tg_json_root(doc), *fmt = tg_json_get(root, "format"), *files = tg_json_get(root, "files");
  const tg_json *want = tg_json_get(root, "config_fnv1a"), *rid = tg_json_get(root, "run_id");
  if (!fmt || fmt->type != TG_JSON_STRING || strcmp(fmt->str, SET_FORMAT) != 0 || !files || files->type != TG_JSON_OBJECT)
    st = tg_error(TG_ERR_FORMAT, "%s: not a tickgrad checkpoint manifest (format %s)", path, SET_FORMAT);
  for (const tg_json *f = st == TG_OK ? files->first : NULL; f && st == TG_OK; f = f->next) {
    char fpath[TG_PATH_MAX + 320], fh[17];
    snprintf(fpath, sizeof fpath, "%s/%s", dir, f->key);
    if (f->type != TG_JSON_STRING || strchr(f->key, '/')) st = tg_error(TG_ERR_FORMAT, "%s: bad entry '%s'", path, f->key);
    else if (!tg_file_exists(fpath)) st = tg_error(TG_ERR_FORMAT, "%s is missing", fpath);
    else if (tg_file_hash(fpath, fh) != TG_OK) st = tg_error(TG_ERR_FORMAT, "%s", tg_last_error());
    else if (strcmp(fh, f->str) != 0) st = tg_error(TG_ERR_FORMAT, "%s is not the file %s names (damaged)", fpath, MANIFEST);
  }
  if (st == TG_OK) st = config_id(run, hash, id);
  if (st == TG_OK && want && want->type == TG_JSON_STRING && strcmp(want->str, hash) != 0) {
    if (rid && rid->type == TG_JSON_STRING && id[0] && strcmp(rid->str, id) != 0)
      st = tg_error(TG_ERR_INVALID, "%s: checkpoint %ld was written by another run (run id %s; %s/config.json is run %s): "
                    "a checkpoint cannot move between runs; resume the run it came from", run, gen, rid->str, run, id);
    else
      st = tg_error(TG_ERR_INVALID, "%s/config.json changed after checkpoint %ld was written with it (hash %s, now %s): "
                    "a resumed run keeps its settings; restore config.json, or start a new run with --config", run,
                    gen, want->str, hash[0] ? hash : "none");
  }
  tg_json_free(doc);
  return st;
}

tg_status tg_ckpt_check_run_files(const char *run) {
  char path[TG_PATH_MAX + 64];
  long gen = current_gen(run);
  if (gen < 0) return TG_OK; /* a run from before sets, or a copy that followed the link: nothing recorded */
  snprintf(path, sizeof path, "%s/checkpoint/%s", run, MANIFEST);
  tg_json_doc *doc = NULL;
  tg_status st = tg_json_parse_file(path, &doc);
  const tg_json *files = st == TG_OK ? tg_json_get(tg_json_root(doc), "run_files") : NULL;
  for (const tg_json *f = files && files->type == TG_JSON_OBJECT ? files->first : NULL; f && st == TG_OK; f = f->next) {
    char fpath[TG_PATH_MAX + 320], fh[17];
    snprintf(fpath, sizeof fpath, "%s/%s", run, f->key);
    st = f->type == TG_JSON_STRING && !strchr(f->key, '/') ? tg_file_hash(fpath, fh)
                                                          : tg_error(TG_ERR_FORMAT, "%s: bad entry '%s'", path, f->key);
    if (st == TG_OK && strcmp(fh, f->str) != 0)
      st = tg_error(TG_ERR_INVALID, "%s is not the file the run wrote (hash %s when checkpoint %ld was written, now %s): "
                    "it was edited after training; restore it or train a new run", fpath, f->str, gen, fh);
  }
  tg_json_free(doc);
  return st;
}

/* Sets numbered above the current one were never made current: a stop came between their rename and the switch. */
static void remove_uncommitted(const char *run, long cur, const long *gens, int n) {
  char dir[TG_PATH_MAX + 64];
  for (int i = 0; i < n && gens[i] > cur; i++) {
    set_dir(run, gens[i], dir, sizeof dir);
    (void)tg_remove_dir_files(dir);
  }
}

tg_status tg_ckpt_find(const char *run, FILE *log, tg_ckpt_set *s, int *found) {
  char dir[TG_PATH_MAX + 64], why[1024] = "";
  long gens[MAX_SETS];
  struct stat sb;
  memset(s, 0, sizeof *s);
  *found = 0;
  snprintf(s->run, sizeof s->run, "%s", run);
  sets_dir(run, dir, sizeof dir);
  int removed = tg_remove_temps(run) + tg_remove_temps(dir);
  if (removed && log) fprintf(log, "removed %d temporary file%s that a stopped process left in %s\n", removed,
                              removed == 1 ? "" : "s", run);
  long cur = current_gen(run);
  int n = list_sets(run, gens);
  if (cur >= 0) remove_uncommitted(run, cur, gens, n);
  n = list_sets(run, gens);
  snprintf(dir, sizeof dir, "%s/checkpoint", run);
  int copied = cur < 0 && lstat(dir, &sb) == 0 && S_ISDIR(sb.st_mode); /* a copy that followed the link */
  for (int i = -1; i < n; i++) {
    long gen = i < 0 ? cur : gens[i];
    if (i < 0 && !copied && cur < 0) continue;
    if (i >= 0 && gen == cur) continue;
    found_dir(run, gen, dir, sizeof dir);
    tg_status st = verify(run, dir, gen);
    if (st == TG_ERR_INVALID) return st;
    if (st != TG_OK) {
      if (log) fprintf(log, "checkpoint %ld is not whole: %s\n", gen, tg_last_error());
      snprintf(why + strlen(why), sizeof why - strlen(why), "%s%ld", why[0] ? ", " : "", gen);
      continue;
    }
    if (why[0] && log) fprintf(log, "resuming from checkpoint %ld, the newest whole one (not %s)\n", gen, why);
    tg_ckpt_at(run, gen, s);
    *found = 1;
    return TG_OK;
  }
  if (why[0])
    return tg_error(TG_ERR_FORMAT, "%s: no whole checkpoint to resume from (checkpoints %s are damaged; see above)", run, why);
  if (legacy_checkpoint(run)) {
    tg_ckpt_at(run, 0, s);
    *found = 1;
  }
  return TG_OK;
}

void tg_ckpt_at(const char *run, long gen, tg_ckpt_set *s) {
  memset(s, 0, sizeof *s);
  snprintf(s->run, sizeof s->run, "%s", run);
  s->gen = gen;
  found_dir(run, gen, s->dir, sizeof s->dir);
}
