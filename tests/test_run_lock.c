/* Run-folder locks: another process is refused with the holder's pid and task, so is this one; unlock and death free it. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/run_lock.h"
#include "support/check.h"

static char g_dir[256]; /* the test's run folder */

/* Exit code of a child that tries the lock: 0 refused with want in the message, 1 refused otherwise, 2 locked. */
static int child_try(const char *want) {
  pid_t c = fork();
  if (c == 0) {
    int fd = -1;
    if (tg_run_lock(g_dir, "backtest", &fd) == TG_OK) _exit(2);
    if (!strstr(tg_last_error(), want)) {
      fprintf(stderr, "child: refused with '%s', want '%s'\n", tg_last_error(), want);
      _exit(1);
    }
    _exit(0);
  }
  int ws = 0;
  waitpid(c, &ws, 0);
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* A lock held here refuses a child and a second lock of this process, each naming this pid and "train". */
static void test_refused(void) {
  int fd = -1, again = -1;
  char want[512];
  CHECK_OK(tg_run_lock(g_dir, "train", &fd));
  snprintf(want, sizeof want, "%s is in use by process %ld (train); wait for it to finish or choose another --out", g_dir,
           (long)getpid());
  CHECK_MSG(child_try(want) == 0, "another process was not refused as expected");
  CHECK_STATUS(tg_run_lock(g_dir, "train", &again), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), want), "same-process refusal: %s", tg_last_error());
  CHECK(again == -1);
  tg_run_unlock(fd);
  CHECK_MSG(child_try("") == 2, "the lock was not free after unlock");
  CHECK_OK(tg_run_lock(g_dir, "train", &fd));
  tg_run_unlock(fd);
}

/* A child that holds the lock and is killed with SIGKILL leaves the folder free. */
static void test_killed_holder(void) {
  int ready[2];
  CHECK(pipe(ready) == 0);
  pid_t c = fork();
  if (c == 0) {
    int fd = -1;
    char ok = tg_run_lock(g_dir, "train", &fd) == TG_OK ? 'y' : 'n';
    if (write(ready[1], &ok, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char ok = 0;
  CHECK(read(ready[0], &ok, 1) == 1 && ok == 'y');
  int fd = -1;
  char want[64];
  snprintf(want, sizeof want, "by process %ld (train)", (long)c);
  CHECK_STATUS(tg_run_lock(g_dir, "backtest", &fd), TG_ERR_INVALID);
  CHECK_MSG(strstr(tg_last_error(), want), "refusal while a child holds it: %s", tg_last_error());
  kill(c, SIGKILL);
  waitpid(c, NULL, 0);
  CHECK_OK(tg_run_lock(g_dir, "backtest", &fd));
  tg_run_unlock(fd);
  close(ready[0]);
  close(ready[1]);
}

/* A folder that does not exist is an I/O error naming the lock file. */
static void test_missing_folder(void) {
  char dir[300];
  int fd = 7;
  snprintf(dir, sizeof dir, "%s/none", g_dir);
  CHECK_STATUS(tg_run_lock(dir, "train", &fd), TG_ERR_IO);
  CHECK(strstr(tg_last_error(), "none/.lock") != NULL);
  CHECK(fd == -1);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/tg_run_lock_XXXXXX");
  if (!mkdtemp(g_dir)) return tg_test_skip("cannot create a temporary folder");
  test_refused();
  test_killed_holder();
  test_missing_folder();
  char lock[300];
  snprintf(lock, sizeof lock, "%s/.lock", g_dir);
  CHECK(unlink(lock) == 0);
  CHECK_MSG(rmdir(g_dir) == 0, "files left in %s", g_dir);
  return tg_test_finish();
}
