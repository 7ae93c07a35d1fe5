/* Zip archives through libzip: the directory checked on open, one member streamed at a time. */
#include <zip.h>
#include "base/alloc.h"
#include "data/readers/ticks/tick_zip.h"

struct tg_zip {
  zip_t *z;
  zip_file_t *member;
  int64_t at; /* the open member, -1 for none */
  const char *path;
};

tg_status tg_zip_open(const char *path, tg_zip **out) {
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
  *out = t;
  return TG_OK;
}

int64_t tg_zip_count(const tg_zip *z) { return (int64_t)zip_get_num_entries(z->z, 0); }

const char *tg_zip_name(const tg_zip *z, int64_t i) {
  const char *n = zip_get_name(z->z, (zip_uint64_t)i, 0);
  return n ? n : "?";
}

tg_status tg_zip_member_open(tg_zip *z, int64_t i) {
  if (z->member) zip_fclose(z->member);
  z->at = i;
  z->member = zip_fopen_index(z->z, (zip_uint64_t)i, 0);
  if (!z->member)
    return tg_error(TG_ERR_FORMAT, "%s: member %s: cannot be read: %s", z->path, tg_zip_name(z, i),
                    zip_strerror(z->z));
  return TG_OK;
}

tg_status tg_zip_member_read(void *ctx, char *buf, size_t cap, size_t *got) {
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

void tg_zip_close(tg_zip *z) {
  if (!z) return;
  if (z->member) zip_fclose(z->member);
  zip_discard(z->z);
  tg_free(z);
}
