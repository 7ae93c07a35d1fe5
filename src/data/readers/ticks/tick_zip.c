/* Zip archives through libzip: the directory checked on open; a deflated member up to TG_ZIP_WHOLE_MAX read raw and
 * inflated whole (tick_inflate.c), any other streamed through libzip. */
#include <zip.h>
#include "base/alloc.h"
#include "data/readers/ticks/tick_inflate.h"
#include "data/readers/ticks/tick_zip.h"

struct tg_zip {
  zip_t *z;
  zip_file_t *member;   /* the open member streamed, or NULL */
  tg_zip_buffers *buf;  /* the caller's or own */
  tg_zip_buffers own;
  int whole;            /* the open member is buf->whole[whole_len] */
  size_t whole_len;
  int64_t at; /* the open member, -1 for none */
  const char *path;
};

void tg_zip_buffers_free(tg_zip_buffers *b) {
  tg_free(b->whole);
  tg_free(b->raw);
  *b = (tg_zip_buffers){0};
}

/* *p holds at least n bytes (its old bytes not kept); 0 when out of memory. */
static int reserve(char **p, size_t *cap, size_t n) {
  if (*p && *cap >= n) return 1;
  tg_free(*p);
  *p = tg_malloc(n ? n : 1);
  *cap = *p ? n : 0;
  return *p != NULL;
}

tg_status tg_zip_open(const char *path, tg_zip_buffers *buffers, tg_zip **out) {
  *out = NULL;
  int code = 0;
  zip_t *z = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (!z) {
    zip_error_t e;
    zip_error_init_with_code(&e, code);
    tg_status st = tg_error(TG_ERR_FORMAT, "%s: not a readable zip: %s", path, zip_error_strerror(&e));
    zip_error_fini(&e);
    return st;
  }
  tg_zip *t = tg_calloc(1, sizeof *t);
  if (!t) {
    zip_discard(z);
    return tg_error(TG_ERR_NOMEM, "%s: out of memory", path);
  }
  *t = (tg_zip){.z = z, .at = -1, .path = path};
  t->buf = buffers ? buffers : &t->own;
  *out = t;
  return TG_OK;
}

int64_t tg_zip_count(const tg_zip *z) { return (int64_t)zip_get_num_entries(z->z, 0); }

const char *tg_zip_name(const tg_zip *z, int64_t i) {
  const char *n = zip_get_name(z->z, (zip_uint64_t)i, 0);
  return n ? n : "?";
}

static void member_close(tg_zip *z) {
  if (z->member) zip_fclose(z->member);
  z->member = NULL, z->whole = 0, z->whole_len = 0;
}

/* 1 when member sb is read whole: deflated, not encrypted, both sizes known and within whole_max. */
static int read_whole(const zip_stat_t *sb, size_t whole_max) {
  const zip_uint64_t need = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_CRC | ZIP_STAT_COMP_METHOD |
                            ZIP_STAT_ENCRYPTION_METHOD;
  return (sb->valid & need) == need && sb->comp_method == ZIP_CM_DEFLATE && sb->encryption_method == ZIP_EM_NONE &&
         sb->size <= whole_max && sb->comp_size <= whole_max;
}

/* Reads member sb's deflated bytes as stored and inflates them into z->whole, checked against the directory. */
static tg_status open_whole(tg_zip *z, const zip_stat_t *sb) {
  char what[600];
  snprintf(what, sizeof what, "%s: member %s", z->path, tg_zip_name(z, z->at));
  zip_file_t *f = zip_fopen_index(z->z, (zip_uint64_t)z->at, ZIP_FL_COMPRESSED);
  if (!f) return tg_error(TG_ERR_FORMAT, "%s: cannot be read: %s", what, zip_strerror(z->z));
  size_t raw_len = (size_t)sb->comp_size, size = (size_t)sb->size;
  tg_zip_buffers *b = z->buf;
  tg_status st = TG_OK;
  if (!reserve(&b->raw, &b->raw_cap, raw_len) || !reserve(&b->whole, &b->whole_cap, size))
    st = tg_error(TG_ERR_NOMEM, "%s: out of memory for its %zu bytes", what, size);
  zip_int64_t got = st == TG_OK ? zip_fread(f, b->raw, raw_len) : 0;
  if (st == TG_OK && got < 0) st = tg_error(TG_ERR_FORMAT, "%s: %s", what, zip_error_strerror(zip_file_get_error(f)));
  else if (st == TG_OK && (size_t)got != raw_len)
    st = tg_error(TG_ERR_FORMAT, "%s: cut short: %lld of its %zu deflated bytes", what, (long long)got, raw_len);
  zip_fclose(f);
  if (st == TG_OK) st = tg_inflate_member(what, b->raw, raw_len, b->whole, size, (uint32_t)sb->crc);
  if (st != TG_OK) return st;
  z->whole = 1;
  z->whole_len = size;
  return TG_OK;
}

tg_status tg_zip_member_open_within(tg_zip *z, int64_t i, size_t whole_max) {
  member_close(z);
  z->at = i;
  zip_stat_t sb;
  if (tg_inflate_whole_built() && zip_stat_index(z->z, (zip_uint64_t)i, 0, &sb) == 0 && read_whole(&sb, whole_max))
    return open_whole(z, &sb);
  z->member = zip_fopen_index(z->z, (zip_uint64_t)i, 0);
  if (!z->member)
    return tg_error(TG_ERR_FORMAT, "%s: member %s: cannot be read: %s", z->path, tg_zip_name(z, i),
                    zip_strerror(z->z));
  return TG_OK;
}

tg_status tg_zip_member_open(tg_zip *z, int64_t i) { return tg_zip_member_open_within(z, i, TG_ZIP_WHOLE_MAX); }

int tg_zip_member_whole(const tg_zip *z) { return z->whole; }

/* Up to cap bytes of the open member streamed through libzip (its inflate and CRC check). */
static tg_status member_read(void *ctx, char *buf, size_t cap, size_t *got) {
  tg_zip *z = ctx;
  zip_int64_t n = zip_fread(z->member, buf, cap);
  if (n < 0) {
    *got = 0;
    return tg_error(TG_ERR_FORMAT, "%s: member %s: %s", z->path, tg_zip_name(z, z->at),
                    zip_error_strerror(zip_file_get_error(z->member)));
  }
  *got = (size_t)n;
  return TG_OK;
}

tg_status tg_zip_member_lines(tg_zip *z, tg_line_reader *r, const char *name) {
  if (z->whole) return tg_line_reader_init_span(r, z->buf->whole, z->whole_len, name);
  return tg_line_reader_init_read(r, member_read, z, name);
}

void tg_zip_close(tg_zip *z) {
  if (!z) return;
  member_close(z);
  zip_discard(z->z);
  tg_zip_buffers_free(&z->own);
  tg_free(z);
}
