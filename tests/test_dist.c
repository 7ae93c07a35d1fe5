/* Data-parallel training over MPI: 2 ranks with half batches = 1 rank, reproducible, resumable, clear errors on every rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "tickgrad/tickgrad.h"

static char g_tmp[256];

#define MPIRUN "timeout 120 mpirun --allow-run-as-root --oversubscribe"
#define TRAIN "--threads 1 train --precision fp32 --model mlp --horizons 2 --epochs 3 --dropout 0 --batch 64"

/* Runs a shell command, its output into g_tmp/out.txt; returns the exit status. */
static int sh(const char *fmt, const char *a, const char *b) {
  char cmd[2048];
  char part[1500];
  snprintf(part, sizeof part, fmt, a, b);
  snprintf(cmd, sizeof cmd, "cd '%s' && (%s) > out.txt 2>&1", g_tmp, part);
  int rc = system(cmd);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int out_has(const char *text) {
  char path[300], buf[65536];
  snprintf(path, sizeof path, "%s/out.txt", g_tmp);
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  buf[n] = 0;
  return strstr(buf, text) != NULL;
}

/* The largest difference between two runs' weights, relative to 1e-3 + |a|; -1 when they cannot be compared. */
static double weights_diff(const char *run_a, const char *run_b, int *bitwise) {
  char pa[400], pb[400];
  snprintf(pa, sizeof pa, "%s/%s/weights.safetensors", g_tmp, run_a);
  snprintf(pb, sizeof pb, "%s/%s/weights.safetensors", g_tmp, run_b);
  tg_safetensors *a = NULL, *b = NULL;
  double worst = -1;
  *bitwise = 1;
  if (tg_safetensors_load(pa, &a) == TG_OK && tg_safetensors_load(pb, &b) == TG_OK &&
      tg_safetensors_count(a) == tg_safetensors_count(b)) {
    worst = 0;
    for (int i = 0; i < tg_safetensors_count(a); i++) {
      const tg_tensor *x = tg_safetensors_at(a, i), *y = tg_safetensors_find(b, x->name);
      int64_t n = tg_numel(x);
      if (!y || n != tg_numel(y)) return tg_safetensors_free(a), tg_safetensors_free(b), -1;
      const float *u = x->data, *v = y->data;
      for (int64_t j = 0; j < n; j++) {
        double d = fabs((double)u[j] - v[j]) / (1e-3 + fabs((double)u[j]));
        if (d > worst) worst = d;
        if (u[j] != v[j]) *bitwise = 0;
      }
    }
  }
  tg_safetensors_free(a);
  tg_safetensors_free(b);
  return worst;
}

int main(void) {
#if defined(__SANITIZE_ADDRESS__)
  return tg_test_skip("under AddressSanitizer (LeakSanitizer reports Open MPI's own allocations at exit); the plain "
                      "build runs this test");
#endif
  if (!tg_dist_have_mpi()) return tg_test_skip("this build has no MPI (install libopenmpi-dev and configure again)");
  if (system("mpirun --version > /dev/null 2>&1") != 0) return tg_test_skip("mpirun is not installed (openmpi-bin)");
  char cwd[1024];
  if (!getcwd(cwd, sizeof cwd)) return tg_test_skip("no working directory");
  snprintf(g_tmp, sizeof g_tmp, "/tmp/tg_dist_XXXXXX");
  if (!mkdtemp(g_tmp)) return tg_test_skip("cannot make a temporary folder");
  char bin[1100];
  snprintf(bin, sizeof bin, "%s/tickgrad", cwd);
  CHECK(sh("'%s' synth --bars 6000 --signal 0.5 --seed 5 --out b.csv%s", bin, "") == 0);

  /* 1 rank with the global batch of 64, 2 ranks with 32 each: the same training to float32 round-off */
  CHECK(sh("'%s' " TRAIN " --data b.csv --out one%s", bin, "") == 0);
  CHECK(sh(MPIRUN " -np 2 '%s' " TRAIN " --data b.csv --out two%s", bin, "") == 0);
  CHECK_MSG(out_has("data-parallel over 2 ranks"), "the 2-rank run does not say it is data-parallel");
  int bitwise = 0;
  double d = weights_diff("one", "two", &bitwise);
  printf("1 rank (batch 64) vs 2 ranks (32 each), 3 epochs: worst weight difference %.3g (relative to 1e-3 + |w|)\n", d);
  CHECK_MSG(d >= 0 && d < 1e-4, "2 ranks differ from 1 rank by %.3g", d);
  /* the same 2-rank run again: bitwise the same */
  CHECK(sh(MPIRUN " -np 2 '%s' " TRAIN " --data b.csv --out two_again%s", bin, "") == 0);
  d = weights_diff("two", "two_again", &bitwise);
  CHECK_MSG(d == 0 && bitwise, "a 2-rank run is not reproducible (%.3g)", d);
  /* stop after 1 epoch and resume on 2 ranks: the same as uninterrupted */
  CHECK(sh(MPIRUN " -np 2 '%s' " TRAIN " --data b.csv --out part --stop-after 1 && cp -a part held%s", bin, "") == 0);
  CHECK(sh(MPIRUN " -np 2 '%s' --threads 1 train --resume part%s", bin, "") == 0);
  d = weights_diff("two", "part", &bitwise);
  CHECK_MSG(d == 0 && bitwise, "a resumed 2-rank run differs from an uninterrupted one (%.3g)", d);
  /* the same resume with a temporary in the folder (named for this live process) and rank 0 paused 2 s before it
   * removes it: only the holder of the run's lock touches the folder, so rank 1, killed at its first file operation,
   * never is, and rank 0 still removes the temporary */
  char tmp_name[64];
  snprintf(tmp_name, sizeof tmp_name, "held/checkpoints/000009.tmp.%ld", (long)getpid());
  CHECK(sh("touch %s%s", tmp_name, "") == 0);
  int rc = sh(MPIRUN " -np 1 env TICKGRAD_FAULT=pause:1 '%s' --threads 1 train --resume held : -np 1 env "
              "TICKGRAD_FAULT=kill:1 '%s' --threads 1 train --resume held", bin, bin);
  CHECK_MSG(out_has("remove held/checkpoints/000009.tmp."), "rank 0's pause did not fall on the temporary's removal");
  CHECK_MSG(rc == 0, "a 2-rank resume with a temporary in the run folder: exit %d", rc);
  CHECK_MSG(sh("test ! -e %s%s", tmp_name, "") == 0, "rank 0 left %s", tmp_name);
  d = weights_diff("two", "held", &bitwise);
  CHECK_MSG(d == 0 && bitwise, "a 2-rank resume with a temporary in the run folder differs from the uninterrupted run "
            "(%.3g)", d);
  /* a setting that differs between ranks: an error naming it, no hang */
  rc = sh(MPIRUN " -np 1 '%s' " TRAIN " --data b.csv --out mix --lr 0.001 : -np 1 '%s' " TRAIN
          " --data b.csv --out mix --lr 0.002", bin, bin);
  CHECK_MSG(rc != 0 && rc != 124 && out_has("differs between ranks"), "mismatched ranks: exit %d", rc);
  /* a global batch the ranks cannot share: the job ends, the error naming the rank; the first rank to fail ends
   * every rank (MPI_Abort), which may come before the other has printed its own line */
  rc = sh(MPIRUN " -np 2 '%s' --threads 1 train --model mlp --data b.csv --batch 63 --out odd%s", bin, "");
  CHECK_MSG(rc != 0 && rc != 124 && (out_has("rank 0 of 2: --batch 63") || out_has("rank 1 of 2: --batch 63")),
            "odd batch: exit %d", rc);
  /* walk-forward folds spread over 2 ranks: the same files as one process */
#define WF "--threads 1 walkforward --folds 3 --train-blocks 2 --model mlp --data b.csv --horizons 2 --epochs 2 --rule median"
  CHECK(sh("'%s' " WF " --out wf1%s", bin, "") == 0);
  CHECK(sh(MPIRUN " -np 2 '%s' " WF " --out wf2%s", bin, "") == 0);
  CHECK_MSG(sh("cmp wf1/walkforward.csv wf2/walkforward.csv && cmp wf1/walkforward.html wf2/walkforward.html%s%s", "",
               "") == 0, "a walk-forward on 2 ranks differs from one on 1");
  /* a sweep's runs spread over 2 ranks: the same table as one process */
#define SW "--threads 1 sweep --grid lr=0.001,0.003,0.01 --model mlp --data b.csv --horizons 2 --epochs 2 --backtest"
  CHECK(sh("'%s' " SW " --out sw1%s", bin, "") == 0);
  CHECK(sh(MPIRUN " -np 2 '%s' " SW " --out sw2%s", bin, "") == 0);
  CHECK_MSG(sh("cmp sw1/sweep.csv sw2/sweep.csv && cmp sw1/sweep.html sw2/sweep.html%s%s", "", "") == 0,
            "a sweep on 2 ranks differs from one on 1");
  /* other commands run as one process */
  rc = sh(MPIRUN " -np 2 '%s' inspect b.csv%s", bin, "");
  CHECK_MSG(rc != 0 && rc != 124 && out_has("only `tickgrad train` (forecasters), `walkforward` and `sweep`"),
            "inspect under mpirun: exit %d", rc);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return tg_test_finish();
}
