/* Fibers for the emulated CUDA threads: x86-64 switches six callee-saved registers and the stack pointer; elsewhere ucontext. */
#include "emu_fiber.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#if TG_EMU_ASM_SWITCH
extern "C" void tg_emu_switch_sp(void **save_sp, void *to_sp);
/* tg_emu_switch_sp(save, to): pushes rbp rbx r12-r15, stores rsp in *save, loads to, pops them and
 * returns into the other context (the x87/SSE control words are not switched: no kernel changes them). */
asm(R"(
  .text
  .globl tg_emu_switch_sp
  .type tg_emu_switch_sp, @function
tg_emu_switch_sp:
  .cfi_startproc
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .cfi_endproc
  .size tg_emu_switch_sp, .-tg_emu_switch_sp
  .section .note.GNU-stack,"",@progbits
  .text
)");

void tg_emu_ctx_make(tg_emu_ctx *ctx, char *lo, size_t size, void (*entry)(void)) {
  uintptr_t top = ((uintptr_t)(lo + size)) & ~(uintptr_t)15;
  void **sp = (void **)top;
  *--sp = nullptr;         /* entry's (never used) return address: entry starts with rsp = 8 mod 16 */
  *--sp = (void *)entry;   /* where the first switch "returns" */
  for (int r = 0; r < 6; r++) *--sp = nullptr; /* rbp rbx r12-r15 */
  ctx->sp = sp;
}

void tg_emu_ctx_swap(tg_emu_ctx *from, tg_emu_ctx *to) { tg_emu_switch_sp(&from->sp, to->sp); }
#else
void tg_emu_ctx_make(tg_emu_ctx *ctx, char *lo, size_t size, void (*entry)(void)) {
  getcontext(&ctx->uc);
  ctx->uc.uc_stack.ss_sp = lo;
  ctx->uc.uc_stack.ss_size = size;
  ctx->uc.uc_link = nullptr;
  makecontext(&ctx->uc, entry, 0);
}

void tg_emu_ctx_swap(tg_emu_ctx *from, tg_emu_ctx *to) { swapcontext(&from->uc, &to->uc); }
#endif

namespace {

size_t stack_bytes() {
  static size_t bytes = [] {
#if TG_EMU_ASAN
    size_t kb = 512; /* instrumented frames are several times larger */
#else
    size_t kb = 128;
#endif
    const char *e = getenv("TG_CUDA_EMU_STACK_KB");
    if (e && atoi(e) >= 16) kb = (size_t)atoi(e);
    return kb * 1024;
  }();
  return bytes;
}

struct pool {
  std::vector<char *> stacks; /* lowest usable byte of each; a guard page lies below */
  ~pool() {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (char *s : stacks)
      if (s) munmap(s - page, stack_bytes() + page);
  }
};
thread_local pool t_pool;

}  // namespace

char *tg_emu_stack(int i, size_t *size) {
  *size = stack_bytes();
  if ((size_t)i < t_pool.stacks.size()) return t_pool.stacks[(size_t)i];
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  while (t_pool.stacks.size() <= (size_t)i) {
    void *m = mmap(nullptr, *size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    mprotect(m, page, PROT_NONE); /* an overflow faults instead of writing over the next stack */
    t_pool.stacks.push_back((char *)m + page);
  }
  return t_pool.stacks[(size_t)i];
}
