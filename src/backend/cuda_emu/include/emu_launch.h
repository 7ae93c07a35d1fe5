/* Emulated CUDA launches: tg_emu_launch(name, grid, block, smem, stream, caller)(args), what emu_rewrite turns <<<>>> into. */
#ifndef TG_EMU_LAUNCH_H
#define TG_EMU_LAUNCH_H

#include <stddef.h>
#include <tuple>
#include <type_traits>
#include <utility>
#include "emu_api.h"
#include "emu_device.h"

/* Work on a stream: run at once, or recorded while the stream captures (emu_runtime.cpp). */
struct tg_emu_task {
  virtual ~tg_emu_task() {}
  virtual void run() = 0;
};
/* Takes ownership of t: runs and deletes it, or appends it to the stream's capture. */
void tg_emu_submit(cudaStream_t s, tg_emu_task *t);

/* Runs every block of a grid, each thread of a block a fiber calling body(ctx) (emu_block.cpp). */
void tg_emu_run_grid(const char *kernel, dim3 grid, dim3 block, size_t smem, void (*body)(void *), void *ctx);
/* CUDA's launch checks: false (and the launch error set, as cudaGetLastError returns it) when the
 * configuration is invalid. */
bool tg_emu_launch_ok(const char *kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t s);
/* A pointer argument must be NULL, device memory or pinned host memory: anything else (a host
 * stack or heap pointer) makes the launch fail, naming the kernel and the argument. */
bool tg_emu_pointer_ok(const char *kernel, int arg, const void *p);

/* One launch: the kernel (a lambda that calls it, so template kernels are deduced as in the source)
 * and its arguments, copied when it is issued, as CUDA copies a launch's parameters. */
template <typename K, typename... A> struct tg_emu_kernel_task final : tg_emu_task {
  K call;
  const char *name;
  dim3 grid, block;
  size_t smem;
  std::tuple<A...> args;
  tg_emu_kernel_task(K k, const char *n, dim3 g, dim3 b, size_t sm, std::tuple<A...> a)
      : call(k), name(n), grid(g), block(b), smem(sm), args(std::move(a)) {}
  static void body(void *self) {
    tg_emu_kernel_task *t = static_cast<tg_emu_kernel_task *>(self);
    std::apply(t->call, t->args); /* each thread gets its own copies of the parameters */
  }
  void run() override { tg_emu_run_grid(name, grid, block, smem, &body, this); }
};

template <typename T> static inline bool tg_emu_arg_ok(const char *kernel, int i, const T &v) {
  if constexpr (std::is_pointer<T>::value) return tg_emu_pointer_ok(kernel, i, (const void *)v);
  (void)kernel, (void)i, (void)v;
  return true;
}

template <typename K> struct tg_emu_launcher {
  K call;
  const char *name;
  dim3 grid, block;
  size_t smem;
  cudaStream_t stream;
  template <typename... A> void operator()(A... args) const {
    if (!tg_emu_launch_ok(name, grid, block, smem, stream)) return;
    int i = 0;
    bool ok = true;
    ((ok = tg_emu_arg_ok<A>(name, i++, args) && ok), ...);
    (void)i;
    if (!ok) return;
    tg_emu_submit(stream, new tg_emu_kernel_task<K, A...>(call, name, grid, block, smem, std::tuple<A...>(args...)));
  }
};

/* emu_rewrite turns kernel<<<grid, block, smem, stream>>>(args) into
 * tg_emu_launch("kernel", grid, block, smem, stream, [=](auto... x) { kernel(x...); })(args). */
template <typename K>
static inline tg_emu_launcher<K> tg_emu_launch(const char *name, dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                                               K call) {
  return tg_emu_launcher<K>{call, name, grid, block, smem, stream};
}

#endif
