/* What a run on vulkan:0 keeps when its device fails (the TICKGRAD_VK_FAULT hook, vk_fault_hook.h): a device lost in
 * the second epoch ends the run with an error naming the device and what it was doing, the first epoch's checkpoint is
 * intact, and resuming from it ends bitwise as the uninterrupted run; a device allocation that fails while a run is
 * planned is an out-of-memory error naming the device and the bytes, before any step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/vulkan/vk_device.h"
#include "backend/vulkan/vk_fault_hook.h"
#include "support/check.h"
#include "support/files.h"
#include "support/train_cfg.h"
#include "tickgrad/tickgrad.h"
#include "vulkan/vk_test.h"

static char g_dir[] = "/tmp/tg_vk_faults_XXXXXX";

static tg_train_config small(const char *name, int epochs) {
  tg_train_config c = tg_test_small_config(TG_MODEL_MLP, g_dir, name, epochs);
  snprintf(c.device, sizeof c.device, "vulkan:0");
  return c;
}

/* Runs c with TICKGRAD_VK_FAULT set to fault (NULL: unset), the hook restarted. */
static tg_status run_with(const tg_train_config *c, const tg_bars *bars, const char *fault, tg_train_result *r) {
  if (fault) setenv("TICKGRAD_VK_FAULT", fault, 1);
  else unsetenv("TICKGRAD_VK_FAULT");
  tg_vk_hook_reset();
  tg_status st = tg_train_run(c, bars, r);
  unsetenv("TICKGRAD_VK_FAULT");
  tg_vk_hook_reset();
  return st;
}

/* The device's submit count at the end of each epoch. */
typedef struct epoch_submits {
  tg_vk_dev *d;
  uint64_t at[4];
} epoch_submits;

static int note_epoch(void *ctx, const tg_train_metrics *m, tg_store *store) {
  (void)store;
  epoch_submits *e = ctx;
  if (m->epoch >= 1 && m->epoch <= 4) e->at[m->epoch - 1] = e->d->submits;
  return 0;
}

static void check_lost(const tg_bars *bars) {
  epoch_submits e = {0};
  CHECK_OK(tg_vk_device(0, &e.d));
  tg_train_result r;
  /* the uninterrupted run, counting its submits: the lost device below comes 3 submits into its second epoch */
  tg_train_config full = small("full", 2), broken = small("broken", 2);
  full.on_epoch = note_epoch, full.on_epoch_ctx = &e;
  uint64_t start = e.d->submits;
  CHECK_OK(run_with(&full, bars, NULL, &r));
  CHECK(e.at[1] > e.at[0] + 3);
  char fault[64];
  snprintf(fault, sizeof fault, "lost:%llu", (unsigned long long)(e.at[0] - start + 3));
  tg_status st = run_with(&broken, bars, fault, &r);
  CHECK_MSG(st == TG_ERR_DEVICE && strstr(tg_last_error(), "train: epoch 2, step ") &&
                strstr(tg_last_error(), "vulkan:0: the device was lost during"),
            "a lost device: status %d, %s", (int)st, tg_last_error());
  printf("lost device (%s): %s\n", fault, tg_last_error());
  snprintf(broken.resume, sizeof broken.resume, "%s", broken.out);
  CHECK_OK(run_with(&broken, bars, NULL, &r));
  CHECK(r.epochs_run == 2);
  char pa[1100], pb[1100];
  snprintf(pa, sizeof pa, "%s/weights.safetensors", full.out), snprintf(pb, sizeof pb, "%s/weights.safetensors", broken.out);
  CHECK_MSG(tg_test_same_tensors(pa, pb), "resumed after the lost device, the weights differ from the uninterrupted run's");
}

static void check_oom(const tg_bars *bars) {
  tg_train_config c = small("oom", 1);
  tg_train_result r;
  tg_status st = run_with(&c, bars, "oom:3", &r);
  CHECK_MSG(st == TG_ERR_NOMEM && strstr(tg_last_error(), "vulkan:0") && strstr(tg_last_error(), "out of device memory"),
            "a failed allocation: status %d, %s", (int)st, tg_last_error());
  printf("failed allocation (oom:3): %s\n", tg_last_error());
}

int main(void) {
  int rc = vk_test_no_device();
  if (rc >= 0) return rc;
  CHECK(mkdtemp(g_dir) != NULL);
  tg_bars bars;
  CHECK(tg_test_synth_bars(&bars, 600, 0.5, 3));
  check_lost(&bars);
  check_oom(&bars);
  tg_bars_free(&bars);
  tg_test_remove_tree(g_dir);
  return tg_test_finish();
}
