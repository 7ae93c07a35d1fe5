/* Files: folders made as needed, atomic writes (temporary file, fsync, rename), whole-file reads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/alloc.h"
#include "base/files.h"

tg_status tg_make_dirs(const char *path) {
  char buf[4096];
  if (!path || !*path || strlen(path) >= sizeof buf)
    return tg_error(TG_ERR_IO, "folder '%s' is empty or too long", path ? path : "");
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return tg_error(TG_ERR_IO, "cannot create folder '%s': %s", buf, strerror(errno));
    *p = '/';
  }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST) return tg_error(TG_ERR_IO, "cannot create folder '%s': %s", buf, strerror(errno));
  struct stat sb;
  if (stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode)) return tg_error(TG_ERR_IO, "'%s' is not a folder", buf);
  return TG_OK;
}

tg_status tg_write_atomic(const char *path, const void *bytes, size_t len) {
  char tmp[4096 + 32];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return tg_error(TG_ERR_IO, "cannot write '%s': %s", tmp, strerror(errno));
  const char *p = bytes;
  size_t left = len;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = errno;
      close(fd);
      unlink(tmp);
      return tg_error(TG_ERR_IO, "writing '%s': %s", tmp, strerror(e));
    }
    p += w;
    left -= (size_t)w;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int e = errno;
    unlink(tmp);
    return tg_error(TG_ERR_IO, "flushing '%s': %s", tmp, strerror(e));
  }
  if (rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    return tg_error(TG_ERR_IO, "renaming '%s' to '%s': %s", tmp, path, strerror(e));
  }
  return TG_OK;
}

tg_status tg_read_file(const char *path, char **text, size_t *len) {
  *text = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  struct stat sb;
  if (!f) return tg_error(TG_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    fclose(f);
    return tg_error(TG_ERR_IO, "cannot read '%s': not a regular file", path);
  }
  size_t n = (size_t)sb.st_size;
  char *buf = tg_malloc(n + 1);
  if (!buf) {
    fclose(f);
    return tg_error(TG_ERR_NOMEM, "out of memory reading '%s' (%zu bytes)", path, n);
  }
  size_t got = fread(buf, 1, n, f);
  fclose(f);
  if (got != n) {
    tg_free(buf);
    return tg_error(TG_ERR_IO, "error reading '%s': %zu of %zu bytes", path, got, n);
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return TG_OK;
}

int tg_file_exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}
