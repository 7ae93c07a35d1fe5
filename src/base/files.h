/* Files: folders made as needed, atomic writes, whole-file reads, the crash-test fault hook; errors name the path. */
#ifndef TG_IO_FILES_H
#define TG_IO_FILES_H

#include <stddef.h>
#include "tickgrad/status.h"

/* Creates path and its parents (mkdir -p); TG_ERR_IO naming the folder that could not be made. */
tg_status tg_make_dirs(const char *path);

/* A file written whole and atomically: PATH.tmp.PID in the same folder takes the bytes, is fsynced and renamed over
 * PATH, and the folder is fsynced, so a reader (or a machine that loses power) sees the old file or the new one,
 * never a part. On any error the temporary is removed and PATH is untouched. */
typedef struct tg_atomic_file {
  int fd;                         /* -1 once committed or aborted */
  char path[TG_PATH_MAX + 64];
  char tmp[TG_PATH_MAX + 96];
} tg_atomic_file;

tg_status tg_atomic_open(tg_atomic_file *f, const char *path);
tg_status tg_atomic_write(tg_atomic_file *f, const void *bytes, size_t len); /* aborts f on error */
tg_status tg_atomic_commit(tg_atomic_file *f);                               /* aborts f on error */
void tg_atomic_abort(tg_atomic_file *f);
/* Open, write and commit in one call. */
tg_status tg_write_atomic(const char *path, const void *bytes, size_t len);

/* fsync of a folder, so the renames and removals inside it are durable. */
tg_status tg_sync_dir(const char *dir);
/* rename(2) through the fault hook, TG_ERR_IO naming both paths. */
tg_status tg_rename(const char *from, const char *to);
/* Makes link a symbolic link to target, replacing what link was (a link or a file) in one rename. */
tg_status tg_symlink_replace(const char *target, const char *link);
/* Removes a folder and the files in it (not below it); a missing folder is fine. */
tg_status tg_remove_dir_files(const char *dir);
/* 1 when name is a temporary of tg_atomic_file or of a checkpoint set: "<anything>.tmp.<digits>". */
int tg_is_temp_name(const char *name);
/* Removes the temporaries (tg_is_temp_name) directly in dir, files or folders of files, that a killed process left;
 * call only while holding the folder's run lock. Returns how many were removed. */
int tg_remove_temps(const char *dir);

/* The whole regular file, tg_malloc'ed and NUL-terminated; TG_ERR_IO naming it. */
tg_status tg_read_file(const char *path, char **text, size_t *len);
int tg_file_exists(const char *path);

/* The crash-test hook: every file operation that writes (create, write, fsync, rename, mkdir, link, remove) passes
 * through it, numbered from 1. TICKGRAD_FAULT="kill:N" sends SIGKILL to the process at operation N,
 * "enospc:N" makes operation N fail with ENOSPC (No space left on device), "pause:N" holds the process 2 seconds
 * before operation N (so a test can make another process act while, say, a temporary is open), "list" prints every
 * operation ("fault point N: OP PATH") to stderr. Returns 0, or -1 with errno set when the operation must fail. */
int tg_fault_point(const char *op, const char *path);

#endif
