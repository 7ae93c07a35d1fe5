/* Run-folder locks: flock on DIR/.lock (close-on-exec), the holder's pid and task written after locking. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "base/files.h"
#include "base/run_lock.h"

/* The holder's "PID WHAT" from the lock file, or a note that it has not written it yet. */
static void holder(int fd, char *buf, size_t cap) {
  char text[128];
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  long pid = 0;
  char what[64] = "";
  text[n > 0 ? n : 0] = '\0';
  if (sscanf(text, "%ld %63s", &pid, what) == 2) snprintf(buf, cap, "process %ld (%s)", pid, what);
  else snprintf(buf, cap, "another process");
}

tg_status tg_run_lock(const char *dir, const char *what, int *fd) {
  return tg_run_lock_advice(dir, what, "wait for it to finish or choose another --out", fd);
}

tg_status tg_run_lock_advice(const char *dir, const char *what, const char *advice, int *fd) {
  char path[TG_PATH_MAX + 8];
  *fd = -1;
  if (snprintf(path, sizeof path, "%s/.lock", dir) >= (int)sizeof path)
    return tg_error(TG_ERR_IO, "run folder '%s' is too long to lock", dir);
  int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (f < 0) return tg_error(TG_ERR_IO, "cannot open '%s' to lock the run folder: %s", path, strerror(errno));
  if (flock(f, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    char who[128];
    if (e == EWOULDBLOCK) holder(f, who, sizeof who);
    close(f);
    if (e != EWOULDBLOCK) return tg_error(TG_ERR_IO, "cannot lock '%s': %s", path, strerror(e));
    return tg_error(TG_ERR_INVALID, "%s is in use by %s; %s", dir, who, advice);
  }
  char text[96];
  int n = snprintf(text, sizeof text, "%ld %.60s\n", (long)getpid(), what);
  if (ftruncate(f, 0) != 0 || pwrite(f, text, (size_t)n, 0) != n) {
    int e = errno;
    close(f);
    return tg_error(TG_ERR_IO, "cannot write '%s': %s", path, strerror(e));
  }
  *fd = f;
  (void)tg_remove_temps(dir); /* only a holder writes here: any temporary is a stopped process's */
  return TG_OK;
}

void tg_run_unlock(int fd) {
  if (fd >= 0) close(fd); /* closing the only descriptor of the open file releases its flock */
}

/* Whether dir holds no entry but .lock. */
static int holds_only_lock(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int only = 1;
  for (struct dirent *e; only && (e = readdir(d)) != NULL;)
    only = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, ".lock");
  closedir(d);
  return only;
}

void tg_run_unlock_discard(int fd, const char *dir) {
  char path[TG_PATH_MAX + 8];
  if (fd >= 0 && holds_only_lock(dir) && snprintf(path, sizeof path, "%s/.lock", dir) < (int)sizeof path &&
      unlink(path) == 0)
    (void)rmdir(dir); /* still locked while unlinking: no other holder can have written here */
  tg_run_unlock(fd);
}
