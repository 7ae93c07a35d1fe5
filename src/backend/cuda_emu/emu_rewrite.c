/* Build tool: copies a CUDA source for the host compiler, rewriting kernel launches and dynamic shared memory.
 *
 *   emu_rewrite IN OUT
 *
 * Every `kernel<<<grid, block[, smem[, stream]]>>>(args)` (kernel: a name, optionally with template
 * arguments) becomes `tg_emu_launch("kernel", grid, block, smem, stream, [=](auto... x) { kernel(x...); })(args)`;
 * every
 * `extern __shared__ T name[];` inside a function becomes `T *name = (T *)tg_emu_dyn_smem();`.
 * Comments and string literals are left alone; line breaks are kept, and a #line directive names
 * IN, so compiler messages point at the original file. Any launch it cannot take apart is an error
 * (exit 1, naming the file and line), so a form it does not know fails the build instead of
 * compiling into something else. Prints how many launches it rewrote. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_in;
static const char *g_text;
static size_t g_len;

static int line_of(size_t pos) {
  int line = 1;
  for (size_t i = 0; i < pos && i < g_len; i++) line += g_text[i] == '\n';
  return line;
}

static void die(size_t pos, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s:%d: emu_rewrite: error: ", g_in, line_of(pos));
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

/* ---- output buffer ---- */

static char *g_out;
static size_t g_out_len, g_out_cap;

static void put(const char *s, size_t n) {
  if (g_out_len + n + 1 > g_out_cap) {
    g_out_cap = (g_out_len + n + 1) * 2;
    g_out = realloc(g_out, g_out_cap);
    if (!g_out) {
      fprintf(stderr, "emu_rewrite: out of memory\n");
      exit(1);
    }
  }
  memcpy(g_out + g_out_len, s, n);
  g_out_len += n;
}
static void puts_(const char *s) { put(s, strlen(s)); }

/* ---- lexing helpers ---- */

/* If a comment or a string/char literal starts at i, its end (one past); else i. */
static size_t skip_non_code(size_t i) {
  const char *t = g_text;
  if (i + 1 < g_len && t[i] == '/' && t[i + 1] == '/') {
    while (i < g_len && t[i] != '\n') i++;
    return i;
  }
  if (i + 1 < g_len && t[i] == '/' && t[i + 1] == '*') {
    const char *e = strstr(t + i + 2, "*/");
    if (!e) die(i, "unterminated comment");
    return (size_t)(e - t) + 2;
  }
  if (t[i] == '"' || t[i] == '\'') {
    char q = t[i];
    size_t j = i + 1;
    while (j < g_len && t[j] != q) {
      if (t[j] == '\\') j++;
      if (j < g_len && t[j] == '\n') die(i, "unterminated literal");
      j++;
    }
    if (j >= g_len) die(i, "unterminated literal");
    return j + 1;
  }
  return i;
}

static int is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* From open (an opening bracket), the position of its matching close at depth 0 of (), [], {};
 * stops with an error at end of text. */
static size_t match_close(size_t open, char o, char c) {
  int depth = 0;
  for (size_t i = open; i < g_len;) {
    size_t j = skip_non_code(i);
    if (j != i) {
      i = j;
      continue;
    }
    char ch = g_text[i];
    if (ch == '(' || ch == '[' || ch == '{') depth++;
    if (ch == ')' || ch == ']' || ch == '}') {
      depth--;
      if (depth == 0) {
        if (ch != c) die(i, "mismatched '%c' for '%c'", ch, o);
        return i;
      }
    }
    i++;
  }
  die(open, "no closing '%c'", c);
  return 0;
}

/* ---- a launch ---- */

typedef struct span {
  size_t b, e; /* [b, e) */
} span;

static int blank(span s) {
  for (size_t i = s.b; i < s.e; i++)
    if (!isspace((unsigned char)g_text[i])) return 0;
  return 1;
}

/* The kernel expression that ends just before lt (the first '<' of "<<<"): an identifier (with ::)
 * and optionally template arguments. Returns its start; *name_end is the end of the expression. */
static size_t kernel_start(size_t lt, size_t *name_end) {
  size_t i = lt;
  while (i > 0 && isspace((unsigned char)g_text[i - 1])) i--;
  *name_end = i;
  if (i > 0 && g_text[i - 1] == '>') { /* template arguments: walk back to the matching '<' */
    int depth = 0;
    while (i > 0) {
      char c = g_text[--i];
      if (c == '>') depth++;
      else if (c == '<' && --depth == 0) break;
      else if (c == ';' || c == '{' || c == '}') die(lt, "cannot find the start of the kernel's template arguments");
    }
    if (depth != 0) die(lt, "unbalanced template arguments before <<<");
    while (i > 0 && isspace((unsigned char)g_text[i - 1])) i--;
  }
  size_t end = i;
  while (i > 0 && (is_ident(g_text[i - 1]) || g_text[i - 1] == ':')) i--;
  if (i == end || isdigit((unsigned char)g_text[i]))
    die(lt, "the launch's kernel is not a name (or name<template arguments>): a form emu_rewrite does not know");
  return i;
}

/* Copies s, collapsing runs of white space to one space (for the kernel's name string). */
static void put_collapsed(span s) {
  int space = 0;
  for (size_t i = s.b; i < s.e; i++) {
    char c = g_text[i];
    if (isspace((unsigned char)c)) {
      space = 1;
      continue;
    }
    if (space) puts_(" ");
    space = 0;
    if (c == '"' || c == '\\') puts_("\\");
    put(&c, 1);
  }
}

/* Copies only the line breaks in s (so the output keeps IN's line numbers). */
static void put_newlines(span s) {
  for (size_t i = s.b; i < s.e; i++)
    if (g_text[i] == '\n') puts_("\n");
}

/* Rewrites the launch whose "<<<" is at lt; out already holds the text up to kstart. Returns the
 * position after the launch's closing ')'. */
static size_t rewrite_launch(size_t kstart, size_t kend, size_t lt) {
  /* the configuration: top-level comma-separated expressions up to ">>>" */
  span part[4];
  int np = 0;
  size_t i = lt + 3, b = i;
  int depth = 0;
  for (;;) {
    if (i >= g_len) die(lt, "no >>> after <<<");
    size_t j = skip_non_code(i);
    if (j != i) {
      i = j;
      continue;
    }
    char c = g_text[i];
    if (c == '(' || c == '[' || c == '{') depth++;
    else if (c == ')' || c == ']' || c == '}') depth--;
    else if (c == ';') die(i, "';' inside a launch configuration");
    if (depth < 0) die(i, "unbalanced brackets in a launch configuration");
    if (depth == 0 && strncmp(g_text + i, ">>>", 3) == 0) break;
    if (depth == 0 && c == ',') {
      if (np == 4) die(i, "more than 4 launch parameters");
      part[np++] = (span){b, i};
      b = i + 1;
    }
    i++;
  }
  if (np == 4) die(i, "more than 4 launch parameters");
  part[np++] = (span){b, i};
  if (np < 2) die(lt, "a launch needs at least a grid and a block");
  for (int k = 0; k < np; k++)
    if (blank(part[k])) die(lt, "launch parameter %d is empty", k + 1);
  size_t gt = i;
  i = gt + 3;
  size_t ws = i;
  while (i < g_len && isspace((unsigned char)g_text[i])) i++;
  if (i >= g_len || g_text[i] != '(') die(gt, "expected '(' and the kernel's arguments after >>>");
  size_t open = i, close = match_close(open, '(', ')');

  puts_("tg_emu_launch(\"");
  put_collapsed((span){kstart, kend});
  puts_("\",");
  for (int k = 0; k < np; k++) {
    if (k) puts_(",");
    put(g_text + part[k].b, part[k].e - part[k].b);
  }
  if (np < 3) puts_(", 0");
  if (np < 4) puts_(", 0");
  /* a lambda that calls the kernel: template arguments are deduced from the launch's arguments as in
   * the source, and a kernel held in a function pointer is captured by value */
  puts_(", [=](auto... tg_emu_x) { ");
  put(g_text + kstart, kend - kstart);
  puts_("(tg_emu_x...); })");
  put_newlines((span){kend, lt});
  put_newlines((span){ws, open});
  put(g_text + open, close + 1 - open); /* (args): passed to the launcher, converted as in a call */
  return close + 1;
}

/* `extern __shared__ T name[];` at s (the 'e' of extern), inside a function (depth > 0). */
static size_t rewrite_dyn_shared(size_t s, int brace_depth) {
  const char *t = g_text;
  size_t semi = s;
  while (semi < g_len && t[semi] != ';') semi++;
  if (semi >= g_len) die(s, "extern __shared__ without ';'");
  if (brace_depth == 0)
    die(s, "extern __shared__ at file scope: emu_rewrite only handles it inside a function (move it into the kernel)");
  size_t tb = s + strlen("extern __shared__");
  /* ... name [ ] ; */
  size_t e = semi;
  while (e > tb && isspace((unsigned char)t[e - 1])) e--;
  if (e < tb + 2 || t[e - 1] != ']') die(s, "extern __shared__ that is not `T name[]`");
  e--;
  while (e > tb && isspace((unsigned char)t[e - 1])) e--;
  if (t[e - 1] != '[') die(s, "extern __shared__ with a size: not `T name[]`");
  e--;
  while (e > tb && isspace((unsigned char)t[e - 1])) e--;
  size_t ne = e;
  while (e > tb && is_ident(t[e - 1])) e--;
  if (e == ne) die(s, "extern __shared__ without a name");
  span type = {tb, e}, name = {e, ne};
  if (blank(type)) die(s, "extern __shared__ without a type");
  put(t + type.b, type.e - type.b);
  puts_(" *");
  put(t + name.b, name.e - name.b);
  puts_(" = (");
  put(t + type.b, type.e - type.b);
  puts_(" *)tg_emu_dyn_smem();");
  put_newlines((span){s, semi});
  return semi + 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: emu_rewrite IN OUT\n");
    return 2;
  }
  g_in = argv[1];
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "%s: read failed\n", argv[1]);
    return 1;
  }
  fclose(f);
  text[n] = 0;
  g_text = text;
  g_len = (size_t)n;

  char hdr[4200];
  snprintf(hdr, sizeof hdr, "#line 1 \"%s\"\n", argv[1]);
  puts_(hdr);
  int launches = 0, shared = 0, depth = 0;
  size_t done = 0; /* text before this is in the output */
  for (size_t i = 0; i < g_len;) {
    size_t j = skip_non_code(i);
    if (j != i) {
      i = j;
      continue;
    }
    char c = g_text[i];
    if (c == '{') depth++;
    if (c == '}') depth--;
    if (c == '<' && strncmp(g_text + i, "<<<", 3) == 0) {
      size_t kend, ks = kernel_start(i, &kend);
      if (ks < done) die(i, "overlapping launches");
      put(g_text + done, ks - done);
      i = done = rewrite_launch(ks, kend, i);
      launches++;
      continue;
    }
    if (c == 'e' && strncmp(g_text + i, "extern", 6) == 0 && (i == 0 || !is_ident(g_text[i - 1]))) {
      size_t k = i + 6;
      while (k < g_len && isspace((unsigned char)g_text[k])) k++;
      if (strncmp(g_text + k, "__shared__", 10) == 0) {
        put(g_text + done, i - done);
        /* normalise "extern   __shared__" so rewrite_dyn_shared can skip a fixed prefix */
        if (k != i + 7 || g_text[i + 6] != ' ') die(i, "write `extern __shared__` with one space");
        i = done = rewrite_dyn_shared(i, depth);
        shared++;
        continue;
      }
    }
    if (c == '>' && strncmp(g_text + i, ">>>", 3) == 0) die(i, ">>> without a launch before it");
    i++;
  }
  put(g_text + done, g_len - done);

  FILE *o = fopen(argv[2], "wb");
  if (!o || fwrite(g_out, 1, g_out_len, o) != g_out_len || fclose(o) != 0) {
    perror(argv[2]);
    return 1;
  }
  printf("emu_rewrite: %s: %d launch%s, %d dynamic shared array%s\n", argv[1], launches, launches == 1 ? "" : "es",
         shared, shared == 1 ? "" : "s");
  free(text);
  free(g_out);
  return 0;
}
