/* Files: folders made as needed, atomic writes (temporary file, fsync, rename), folder upkeep, whole-file reads. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/alloc.h"
#include "base/files.h"

static int make_dir(const char *path) {
  if (tg_fault_point("mkdir", path) != 0) return -1;
  return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

tg_status tg_make_dirs(const char *path) {
  char buf[4096];
  struct stat sb;
  if (!path || !*path || strlen(path) >= sizeof buf)
    return tg_error(TG_ERR_IO, "folder '%s' is empty or too long", path ? path : "");
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) return TG_OK;
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (stat(buf, &sb) != 0 && make_dir(buf) != 0)
      return tg_error(TG_ERR_IO, "cannot create folder '%s': %s", buf, strerror(errno));
    *p = '/';
  }
  if (make_dir(buf) != 0) return tg_error(TG_ERR_IO, "cannot create folder '%s': %s", buf, strerror(errno));
  if (stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode)) return tg_error(TG_ERR_IO, "'%s' is not a folder", buf);
  return TG_OK;
}

/* The folder that holds path. */
static void parent_of(const char *path, char *dir, size_t n) {
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(dir, n, ".");
  else if (slash == path) snprintf(dir, n, "/");
  else snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

tg_status tg_sync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return tg_error(TG_ERR_IO, "cannot open folder '%s' to flush it: %s", dir, strerror(errno));
  int bad = tg_fault_point("fsync", dir) != 0 || (fsync(fd) != 0 && errno != EINVAL);
  int e = errno;
  close(fd);
  return bad ? tg_error(TG_ERR_IO, "flushing folder '%s': %s", dir, strerror(e)) : TG_OK;
}

tg_status tg_atomic_open(tg_atomic_file *f, const char *path) {
  f->fd = -1;
  if (!path || !*path || strlen(path) >= sizeof f->path) return tg_error(TG_ERR_IO, "file '%s' is empty or too long", path ? path : "");
  snprintf(f->path, sizeof f->path, "%s", path);
  snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld", path, (long)getpid());
  if (tg_fault_point("create", f->tmp) != 0) return tg_error(TG_ERR_IO, "cannot write '%s': %s", f->tmp, strerror(errno));
  f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (f->fd < 0) return tg_error(TG_ERR_IO, "cannot write '%s': %s", f->tmp, strerror(errno));
  return TG_OK;
}

void tg_atomic_abort(tg_atomic_file *f) {
  if (f->fd < 0) return;
  close(f->fd);
  f->fd = -1;
  unlink(f->tmp);
}

tg_status tg_atomic_write(tg_atomic_file *f, const void *bytes, size_t len) {
  const char *p = bytes;
  if (len && tg_fault_point("write", f->tmp) != 0) {
    int e = errno;
    tg_atomic_abort(f);
    return tg_error(TG_ERR_IO, "writing '%s': %s", f->tmp, strerror(e));
  }
  while (len > 0) {
    ssize_t w = write(f->fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = w < 0 ? errno : ENOSPC;
      tg_atomic_abort(f);
      return tg_error(TG_ERR_IO, "writing '%s': %s", f->tmp, strerror(e));
    }
    p += w;
    len -= (size_t)w;
  }
  return TG_OK;
}

tg_status tg_atomic_commit(tg_atomic_file *f) {
  char dir[sizeof f->path];
  if (tg_fault_point("fsync", f->tmp) != 0 || fsync(f->fd) != 0) {
    int e = errno;
    tg_atomic_abort(f);
    return tg_error(TG_ERR_IO, "flushing '%s': %s", f->tmp, strerror(e));
  }
  int fd = f->fd;
  f->fd = -1;
  if (close(fd) != 0) {
    int e = errno;
    unlink(f->tmp);
    return tg_error(TG_ERR_IO, "flushing '%s': %s", f->tmp, strerror(e));
  }
  tg_status st = tg_rename(f->tmp, f->path);
  if (st != TG_OK) {
    unlink(f->tmp);
    return st;
  }
  parent_of(f->path, dir, sizeof dir);
  return tg_sync_dir(dir);
}

tg_status tg_write_atomic(const char *path, const void *bytes, size_t len) {
  tg_atomic_file f;
  tg_status st = tg_atomic_open(&f, path);
  if (st == TG_OK) st = tg_atomic_write(&f, bytes, len);
  return st == TG_OK ? tg_atomic_commit(&f) : st;
}

tg_status tg_rename(const char *from, const char *to) {
  if (tg_fault_point("rename", to) != 0 || rename(from, to) != 0)
    return tg_error(TG_ERR_IO, "renaming '%s' to '%s': %s", from, to, strerror(errno));
  return TG_OK;
}

tg_status tg_symlink_replace(const char *target, const char *link) {
  char tmp[TG_PATH_MAX + 96];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", link, (long)getpid());
  unlink(tmp);
  if (tg_fault_point("link", tmp) != 0 || symlink(target, tmp) != 0)
    return tg_error(TG_ERR_IO, "cannot make the link '%s' to '%s': %s", tmp, target, strerror(errno));
  tg_status st = tg_rename(tmp, link);
  if (st != TG_OK) unlink(tmp);
  return st;
}

int tg_is_temp_name(const char *name) {
  const char *t = strstr(name, ".tmp.");
  if (!t) return 0;
  while (strstr(t + 1, ".tmp.")) t = strstr(t + 1, ".tmp.");
  t += 5;
  if (!*t) return 0;
  for (; *t; t++)
    if (*t < '0' || *t > '9') return 0;
  return 1;
}

/* Removes one entry of a folder: a file, or a folder of files. */
static int remove_entry(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) != 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(sb.st_mode)) return tg_fault_point("remove", path) != 0 || unlink(path) != 0 ? -1 : 0;
  return tg_remove_dir_files(path) == TG_OK ? 0 : -1;
}

tg_status tg_remove_dir_files(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return errno == ENOENT ? TG_OK : tg_error(TG_ERR_IO, "cannot list folder '%s': %s", dir, strerror(errno));
  struct dirent *e;
  char path[TG_PATH_MAX + 320];
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) continue; /* files only: nothing below is touched */
    if (tg_fault_point("remove", path) != 0 || unlink(path) != 0) {
      int err = errno;
      closedir(d);
      return tg_error(TG_ERR_IO, "cannot remove '%s': %s", path, strerror(err));
    }
  }
  closedir(d);
  if (tg_fault_point("remove", dir) != 0 || rmdir(dir) != 0)
    return tg_error(TG_ERR_IO, "cannot remove folder '%s': %s", dir, strerror(errno));
  return TG_OK;
}

int tg_remove_temps(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *e;
  char path[TG_PATH_MAX + 320];
  int n = 0;
  while ((e = readdir(d)) != NULL) {
    if (!tg_is_temp_name(e->d_name)) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (remove_entry(path) == 0) n++;
  }
  closedir(d);
  return n;
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
