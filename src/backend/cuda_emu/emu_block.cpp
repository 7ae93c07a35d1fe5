/* The emulated launch model: every block of a grid in turn, each thread a fiber; __syncthreads and warp exchanges are real rendezvous, a barrier some threads never reach is an error naming the kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>
#include "emu_device.h"
#include "emu_fiber.h"
#include "emu_internal.h"

#if TG_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

thread_local uint3 threadIdx;
thread_local uint3 blockIdx;
thread_local dim3 blockDim;
thread_local dim3 gridDim;

namespace {

enum thread_state { RUNNABLE, AT_BARRIER, AT_WARP, DONE };

struct emu_thread {
  tg_emu_ctx ctx;
  char *stack;
  size_t stack_size;
  int state;
  uint3 tid;
  void *fake_stack; /* ASan's fake stack of this fiber while it is switched out */
};

#define MAX_WARPS 32 /* 1024 threads */

struct block_run {
  const char *kernel;
  void (*body)(void *);
  void *ctx;
  int n;                      /* threads per block */
  std::vector<emu_thread> t;  /* reused across launches */
  int cur;                    /* the running fiber */
  tg_emu_ctx sched;           /* the scheduler (this OS thread's own stack) */
  const void *sched_bottom;   /* ASan: the scheduler's stack */
  size_t sched_size;
  uint64_t xch[MAX_WARPS][2][32]; /* warp exchange slots, double-buffered by generation */
  unsigned gen[MAX_WARPS];
  std::vector<unsigned char> dyn_smem;
  std::string error; /* set when the block cannot go on */
};

thread_local block_run *t_run;

/* Lanes that exist in warp w of a block of n threads. */
unsigned warp_lanes(int n, int w) {
  int left = n - w * 32;
  return left >= 32 ? 0xffffffffu : (1u << left) - 1u;
}

void fiber_entry();

/* Switches from the running fiber back to the scheduler. */
void yield_to_scheduler(bool dying) {
  block_run *r = t_run;
  emu_thread *me = &r->t[(size_t)r->cur];
#if TG_EMU_ASAN
  __sanitizer_start_switch_fiber(dying ? nullptr : &me->fake_stack, r->sched_bottom, r->sched_size);
#else
  (void)dying;
#endif
  tg_emu_ctx_swap(&me->ctx, &r->sched);
#if TG_EMU_ASAN
  __sanitizer_finish_switch_fiber(me->fake_stack, &r->sched_bottom, &r->sched_size);
#endif
}

void fiber_entry() {
  block_run *r = t_run;
#if TG_EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &r->sched_bottom, &r->sched_size);
#endif
  r->body(r->ctx);
  r->t[(size_t)r->cur].state = DONE;
  yield_to_scheduler(true);
  abort(); /* a finished fiber is never resumed */
}

void resume(block_run *r, int i) {
  emu_thread *th = &r->t[(size_t)i];
  r->cur = i;
  threadIdx = th->tid;
#if TG_EMU_ASAN
  void *fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, th->stack, th->stack_size);
#endif
  tg_emu_ctx_swap(&r->sched, &th->ctx);
#if TG_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

/* After every runnable fiber has run: opens warp rendezvous and the block barrier whose threads
 * have all arrived. False when nothing can move (a deadlock; r->error says why). */
bool release(block_run *r) {
  int n = r->n, nw = (n + 31) / 32, live = 0, at_bar = 0, done = 0;
  bool moved = false;
  for (int w = 0; w < nw; w++) {
    unsigned lanes = warp_lanes(n, w), waiting = 0;
    for (int l = 0; l < 32; l++)
      if ((lanes >> l) & 1u && r->t[(size_t)(w * 32 + l)].state == AT_WARP) waiting |= 1u << l;
    if (waiting && waiting == lanes) {
      r->gen[w]++;
      for (int l = 0; l < 32; l++)
        if ((lanes >> l) & 1u) r->t[(size_t)(w * 32 + l)].state = RUNNABLE;
      moved = true;
    }
  }
  if (moved) return true;
  for (int i = 0; i < n; i++) {
    int s = r->t[(size_t)i].state;
    live += s != DONE;
    at_bar += s == AT_BARRIER;
    done += s == DONE;
  }
  if (at_bar > 0 && at_bar == live && done == 0) {
    for (int i = 0; i < n; i++) r->t[(size_t)i].state = RUNNABLE;
    return true;
  }
  char msg[400];
  snprintf(msg, sizeof msg,
           "kernel %s, block (%u,%u,%u) of %d threads: deadlock: %d at __syncthreads, %d at a warp shuffle/vote, "
           "%d exited (a barrier or warp exchange that not every thread of the block/warp reaches)",
           r->kernel, blockIdx.x, blockIdx.y, blockIdx.z, n, at_bar, live - at_bar, done);
  r->error = msg;
  return false;
}

/* Runs the current block to completion; false on a deadlock. */
bool run_block(block_run *r) {
  for (int i = 0; i < r->n; i++) {
    emu_thread *th = &r->t[(size_t)i];
    th->state = RUNNABLE;
#if TG_EMU_ASAN
    /* the top of a reused stack may still carry poison from the last fiber's frames */
    __asan_unpoison_memory_region(th->stack + th->stack_size - 16384, 16384);
#endif
    tg_emu_ctx_make(&th->ctx, th->stack, th->stack_size, fiber_entry);
  }
  memset(r->gen, 0, sizeof r->gen);
  for (;;) {
    bool any_live = false;
    for (int i = 0; i < r->n; i++) {
      if (r->t[(size_t)i].state == RUNNABLE) resume(r, i);
      if (!r->error.empty()) return false;
      any_live |= r->t[(size_t)i].state != DONE;
    }
    if (!any_live) return true;
    if (!release(r)) return false;
  }
}

thread_local block_run t_block;

}  // namespace

void tg_emu_run_grid(const char *kernel, dim3 grid, dim3 block, size_t smem, void (*body)(void *), void *ctx) {
  block_run *r = &t_block;
  if (t_run) { /* a launch from inside a kernel (dynamic parallelism) */
    tg_emu_fail_launch(std::string("kernel ") + kernel + ": launched from device code, which the emulator does not support");
    return;
  }
  int n = (int)(block.x * block.y * block.z);
  r->kernel = kernel;
  r->body = body;
  r->ctx = ctx;
  r->n = n;
  r->error.clear();
  if (r->t.size() < (size_t)n) r->t.resize((size_t)n);
  for (int i = 0; i < n; i++) {
    emu_thread *th = &r->t[(size_t)i];
    th->stack = tg_emu_stack(i, &th->stack_size);
    if (!th->stack) {
      tg_emu_fail_launch(std::string("kernel ") + kernel + ": cannot map fiber stacks");
      return;
    }
    unsigned u = (unsigned)i;
    th->tid = uint3{u % block.x, (u / block.x) % block.y, u / (block.x * block.y)};
    th->fake_stack = nullptr;
  }
  r->dyn_smem.assign(smem, 0xCD); /* uninitialised, as on a device: a read before a write shows */
  gridDim = grid;
  blockDim = block;
  t_run = r;
  for (unsigned z = 0; z < grid.z; z++)
    for (unsigned y = 0; y < grid.y; y++)
      for (unsigned x = 0; x < grid.x; x++) {
        blockIdx = uint3{x, y, z};
        if (!run_block(r)) {
          t_run = nullptr;
          tg_emu_fail_launch(r->error);
          return;
        }
      }
  t_run = nullptr;
}

void tg_emu_syncthreads(void) {
  block_run *r = t_run;
  if (!r) return; /* host code */
  r->t[(size_t)r->cur].state = AT_BARRIER;
  yield_to_scheduler(false);
}

int tg_emu_warp_exchange(unsigned mask, uint64_t mine, uint64_t all[32]) {
  block_run *r = t_run;
  if (!r) {
    all[0] = mine;
    return 0;
  }
  int i = r->cur, w = i / 32, lane = i % 32;
  unsigned lanes = warp_lanes(r->n, w);
  if ((mask & lanes) != lanes && r->error.empty()) {
    char msg[300];
    snprintf(msg, sizeof msg,
             "kernel %s, block (%u,%u,%u), thread %d: warp exchange with mask 0x%08x, but the warp's lanes are 0x%08x "
             "(the emulator supports whole-warp masks only)",
             r->kernel, blockIdx.x, blockIdx.y, blockIdx.z, i, mask, lanes);
    r->error = msg;
  }
  int buf = (int)(r->gen[w] & 1u);
  r->xch[w][buf][lane] = mine;
  r->t[(size_t)i].state = AT_WARP;
  yield_to_scheduler(false);
  memcpy(all, r->xch[w][buf], sizeof r->xch[w][buf]);
  return lane;
}

void *tg_emu_dyn_smem(void) { return t_run ? t_run->dyn_smem.data() : nullptr; }
