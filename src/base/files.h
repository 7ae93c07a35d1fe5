/* Files: folders made as needed, atomic writes, whole-file reads; errors name the path. */
#ifndef TG_IO_FILES_H
#define TG_IO_FILES_H

#include <stddef.h>
#include "tickgrad/status.h"

/* Creates path and its parents (mkdir -p); TG_ERR_IO naming the folder that could not be made. */
tg_status tg_make_dirs(const char *path);
/* Writes bytes to path through a temporary file in the same folder, fsync and rename: a reader sees the old file
 * or the new one, never a part. */
tg_status tg_write_atomic(const char *path, const void *bytes, size_t len);
/* The whole regular file, tg_malloc'ed and NUL-terminated; TG_ERR_IO naming it. */
tg_status tg_read_file(const char *path, char **text, size_t *len);
int tg_file_exists(const char *path);

#endif
