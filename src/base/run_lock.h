/* One writer per run folder: an advisory flock on DIR/.lock, released on unlock or when the process ends. */
#ifndef TG_BASE_RUN_LOCK_H
#define TG_BASE_RUN_LOCK_H

#include "tickgrad/status.h"

/* Locks the existing folder dir for this process (DIR/.lock, flock LOCK_EX|LOCK_NB) and records "PID WHAT" in it;
 * *fd receives the lock (-1 on failure). A folder locked by any open lock, this process's own included, is refused
 * with TG_ERR_INVALID: "DIR is in use by process PID (WHAT); wait for it to finish or choose another --out".
 * Once locked, the temporaries a stopped process left in DIR (tg_remove_temps) are removed. */
tg_status tg_run_lock(const char *dir, const char *what, int *fd);
/* The same with the refusal's advice after "in use by PID (WHAT); " (a reader of the run: wait for the writer). */
tg_status tg_run_lock_advice(const char *dir, const char *what, const char *advice, int *fd);
/* Releases a lock from tg_run_lock; fd -1 is ignored. .lock stays in the folder. */
void tg_run_unlock(int fd);
/* Releases the lock as tg_run_unlock does and, where DIR holds nothing but .lock, removes .lock and DIR: a run that
 * made its folder and was refused before writing into it leaves no empty folder behind. */
void tg_run_unlock_discard(int fd, const char *dir);

#endif
