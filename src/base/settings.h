/* The settings engine: a table of rows (key, flag, type, member, range, help) over a config struct, for every config. */
#ifndef TG_BASE_SETTINGS_H
#define TG_BASE_SETTINGS_H

#include <stddef.h>
#include <stdio.h>
#include "base/json.h"
#include "tickgrad/status.h"

typedef enum tg_setting_type {
  TG_SET_DOUBLE, TG_SET_FLOAT, TG_SET_INT, TG_SET_INT64, /* numbers in [lo, hi] (whole ones for the integer types) */
  TG_SET_UINT64, /* any unsigned 64-bit integer (a seed): digits as text, a string of digits in JSON (exact past 2^53) */
  TG_SET_BOOL,   /* an int, 0 or 1: text 0, 1, false, true; JSON false, true */
  TG_SET_STRING, /* char [size] */
  TG_SET_ENUM,   /* an int (or an enum the size of one) indexing names */
  TG_SET_NUMS,   /* a list of numbers (elem TG_SET_FLOAT or TG_SET_INT) at off, its int count at count_off: "1,2,3" */
  TG_SET_STRS,   /* a list of strings char [max_n][size] at off, its int count at count_off: text appends one */
} tg_setting_type;

enum {
  TG_SET_RESUMABLE = 1u << 0, /* may change when a run resumes (device, threads, out, log intervals) */
  TG_SET_LO_OPEN = 1u << 1,   /* lo itself is not allowed: (lo, hi] */
  TG_SET_HI_OPEN = 1u << 2,   /* hi itself is not allowed: [lo, hi) */
  TG_SET_INCREASING = 1u << 3 /* NUMS: each element above the one before */
};

typedef struct tg_setting {
  const char *key;          /* JSON name; "tft.hidden" is member "hidden" of the object "tft" */
  const char *flag;         /* NULL: "--" and the key after its last '.' with '_' as '-' (learning_rate: --learning-rate) */
  tg_setting_type type;
  size_t off;               /* the member of the config struct */
  size_t size;              /* STRING, STRS: bytes of one string with its NUL */
  double lo, hi;            /* numbers, and NUMS elements: the closed range [lo, hi] (see the OPEN flags) */
  unsigned flags;           /* TG_SET_* */
  unsigned only;            /* the variants (bits) a flag applies to, e.g. 1 << model kind; 0: every one */
  const char *help;         /* one line for --help; errors about the value quote it */
  const char *arg;          /* the value's placeholder in --help; NULL: by type (N, X, S, ...) */
  const char *const *names; /* ENUM: the names of 0, 1, ..., NULL-terminated */
  tg_setting_type elem;     /* NUMS: TG_SET_FLOAT or TG_SET_INT */
  size_t count_off;         /* NUMS, STRS: the int member counting the elements */
  int min_n, max_n;         /* NUMS, STRS: how many elements */
} tg_setting;

typedef struct tg_settings {
  const char *name;         /* errors start "<name>: " ("config", "dqn config") */
  const tg_setting *rows;   /* in the order of config.json and of --help */
  int n;
  int float_digits;         /* floats written as %.<digits>g; 0: the shortest decimal that reads back as the float */
  int complete;             /* a JSON object must hold every setting (a missing one is an error) */
  const char *const *extra; /* JSON members the caller reads itself (skipped), NULL-terminated; NULL: none */
} tg_settings;

const tg_setting *tg_settings_find(const tg_settings *t, const char *key); /* by key; NULL if unknown */
/* The flag of s into buf [n] (a derived one is written there); returns buf. */
const char *tg_setting_flag(const tg_setting *s, char *buf, size_t n);

/* Sets s from text (a flag's value; a list as "a,b,c"; STRS appends one); where names the source ("--lr", "set").
 * Errors name the setting, the value and the allowed range. */
tg_status tg_setting_set_text(const tg_settings *t, void *cfg, const tg_setting *s, const char *text, const char *where);
/* tg_setting_set_text of the row named key ("unknown setting 'key'" when there is none), where "set". */
tg_status tg_settings_set(const tg_settings *t, void *cfg, const char *key, const char *text);
/* The row whose flag is flag and applies to variant (a bit of only; 0: any), set from text. Unknown flags are
 * "unknown flag '<flag>'"; a flag only of other variants is "<flag> sets <key>, which does not apply to <vname>". */
tg_status tg_settings_set_flag(const tg_settings *t, void *cfg, const char *flag, const char *text, unsigned variant,
                               const char *vname);
int tg_settings_flag_known(const tg_settings *t, const char *flag);
/* Every setting of cfg in its range (how settings relate is the config's own check). */
tg_status tg_settings_check(const tg_settings *t, const void *cfg);
/* The first setting, not TG_SET_RESUMABLE, whose values differ between a and b; NULL when none does. */
const tg_setting *tg_settings_diff(const tg_settings *t, const void *a, const void *b);
/* The value's placeholder in --help: s->arg, else by type ("X", "N", "0|1", "S", "N,N,...", "S..."). */
const char *tg_setting_arg(const tg_setting *s);
/* "double", "float", "int", "int64", "uint64", "bool", "string", "enum", "numbers", "strings"; "?" for another. */
const char *tg_setting_type_name(tg_setting_type type);
/* One line per setting: "  --flag ARG   help". */
void tg_settings_help(const tg_settings *t, FILE *f);
/* The same for part of the table: only 0, the rows of every variant; else the rows of the variants in `only`, their
 * help without a leading `drop` (e.g. "tft: ") when it has one. */
void tg_settings_help_part(const tg_settings *t, unsigned only, const char *drop, FILE *f);

/* ---- settings_json.c ---- */

/* Every setting as members of an open JSON object, each "\n<indent>"key": value" after a comma unless *first; keys
 * with a '.' go into nested objects, after the plain ones, in the order their sections first appear. Numbers are
 * written so that they read back bitwise. */
void tg_settings_json_members(const tg_settings *t, const void *cfg, tg_text *b, int *first);
/* The value of s in cfg as a flag gives it (tg_setting_set_text reads it back): numbers as in JSON, bools 0 or 1, an
 * enum's name, a string as it is, lists comma-joined ("" when empty). */
void tg_settings_value_text(const tg_settings *t, const void *cfg, const tg_setting *s, tg_text *b);
/* The object of every setting, "{...}\n": tg_malloc'ed, NULL when out of memory. */
char *tg_settings_to_json(const tg_settings *t, const void *cfg);
/* The members of the object obj over cfg (nested objects for sections); where names the file in errors, with each
 * value's byte offset. Unknown keys are errors naming the key and the file; so are missing ones when t->complete. */
tg_status tg_settings_apply_json(const tg_settings *t, void *cfg, const tg_json *obj, const char *where);
/* text [len] parsed as JSON, then tg_settings_apply_json of its root object. */
tg_status tg_settings_apply_text(const tg_settings *t, void *cfg, const char *text, size_t len, const char *where);
/* The shortest of %.6g .. %.17g that reads back as v (as the float v when is_float), or %.<digits>g when digits > 0. */
void tg_settings_put_real(tg_text *b, double v, int is_float, int digits);

#endif
