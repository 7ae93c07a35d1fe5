/* The ISA line of a benchmark run: tickgrad's SIMD level and the CPU flags that decide how fast bf16 GEMMs can be. */
#include <stdio.h>
#include <string.h>
#include "bench.h"
#include "tickgrad/device.h"

/* "yes" when /proc/cpuinfo's first flags line lists flag as a whole word, "no" when it does not, "?" unreadable. */
static const char *cpu_flag(const char *flag) {
  static char line[8192];
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return "?";
  const char *answer = "?";
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) != 0) continue;
    answer = "no";
    size_t n = strlen(flag);
    for (const char *p = strstr(line, flag); p; p = strstr(p + 1, flag))
      if (p[-1] == ' ' && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0')) {
        answer = "yes";
        break;
      }
    break;
  }
  fclose(f);
  return answer;
}

void bench_isa_line(void) {
  tg_cpu_info ci;
  tg_cpu_info_get(&ci);
  bench_extra_add("isa simd=%s avx512f=%s avx512_bf16=%s amx_bf16=%s", ci.simd, cpu_flag("avx512f"),
                  cpu_flag("avx512_bf16"), cpu_flag("amx_bf16"));
  bench_extra_add("gemm %s", ci.gemm);
}
