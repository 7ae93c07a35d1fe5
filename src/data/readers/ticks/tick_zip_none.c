/* Zip archives in a build without libzip: every zip is refused naming the package that reads them. Since no archive
 * ever opens, the other calls are never reached with one. */
#include "data/readers/ticks/tick_zip.h"

void tg_zip_buffers_free(tg_zip_buffers *b) { (void)b; }

tg_status tg_zip_open(const char *path, tg_zip_buffers *buffers, tg_zip **out) {
  (void)buffers;
  *out = NULL;
  return tg_error(TG_ERR_UNSUPPORTED, "%s: a zip (Lean's tick files), and this tickgrad was built without libzip: "
                  "install libzip-dev (scripts/setup.sh does) and rebuild", path);
}

int64_t tg_zip_count(const tg_zip *z) {
  (void)z;
  return 0;
}

const char *tg_zip_name(const tg_zip *z, int64_t i) {
  (void)z, (void)i;
  return "";
}

tg_status tg_zip_member_open(tg_zip *z, int64_t i) { return tg_zip_member_open_within(z, i, TG_ZIP_WHOLE_MAX); }

tg_status tg_zip_member_open_within(tg_zip *z, int64_t i, size_t whole_max) {
  (void)z, (void)i, (void)whole_max;
  return TG_ERR_UNSUPPORTED;
}

int tg_zip_member_whole(const tg_zip *z) {
  (void)z;
  return 0;
}

tg_status tg_zip_member_lines(tg_zip *z, tg_line_reader *r, const char *name) {
  (void)z, (void)r, (void)name;
  return TG_ERR_UNSUPPORTED;
}

void tg_zip_close(tg_zip *z) { (void)z; }
