/* Fibers for the emulated CUDA threads: a stack pool reused across launches and a context switch. */
#ifndef TG_EMU_FIBER_H
#define TG_EMU_FIBER_H

#include <stddef.h>

/* AddressSanitizer (gcc defines __SANITIZE_ADDRESS__, clang answers __has_feature): fiber switches
 * are then announced to it. */
#if defined(__SANITIZE_ADDRESS__)
#define TG_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TG_EMU_ASAN 1
#endif
#endif
#ifndef TG_EMU_ASAN
#define TG_EMU_ASAN 0
#endif

#if defined(__x86_64__)
#define TG_EMU_ASM_SWITCH 1
struct tg_emu_ctx {
  void *sp; /* saved stack pointer; callee-saved registers are on that stack */
};
#else
#include <ucontext.h>
#define TG_EMU_ASM_SWITCH 0
struct tg_emu_ctx {
  ucontext_t uc;
};
#endif

/* Prepares ctx to start entry() on stack [lo, lo + size). entry never returns. */
void tg_emu_ctx_make(tg_emu_ctx *ctx, char *lo, size_t size, void (*entry)(void));
/* Saves the running context in from and resumes to. */
void tg_emu_ctx_swap(tg_emu_ctx *from, tg_emu_ctx *to);

/* Stack i of this OS thread's pool (created on first use with a guard page below it, kept for
 * every later launch); its size in *size. NULL when it cannot be mapped. */
char *tg_emu_stack(int i, size_t *size);

#endif
