/* tickgrad_bench: times one benchmark case in C (warm-up, then the median of many timed runs). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench.h"
#include "tickgrad/tickgrad.h"

typedef struct bench_case {
  const char *name;
  const char *what;
  bench_fn run;
  int precision; /* 1: the case plans in --precision (fp32 or bf16); 0: fp32 only */
} bench_case;

int bench_mlp_step(int warmup, int reps, double *median_us);
int bench_tft_step(int warmup, int reps, double *median_us);
int bench_tft_step_recompute(int warmup, int reps, double *median_us);
int bench_mamba2_step_recompute(int warmup, int reps, double *median_us);
int bench_mamba2_step(int warmup, int reps, double *median_us);
int bench_transformer_step(int warmup, int reps, double *median_us);
int bench_transformer_long_step(int warmup, int reps, double *median_us);
int bench_patchtst_step(int warmup, int reps, double *median_us);
int bench_dqn_step(int warmup, int reps, double *median_us);
int bench_ppo_update(int warmup, int reps, double *median_us);
int bench_gemm_peak(int warmup, int reps, double *median_us);
int bench_mlp_step_cuda_b64(int warmup, int reps, double *median_us);
int bench_mlp_step_cuda_b64_eager(int warmup, int reps, double *median_us);
int bench_mlp_step_cuda_b4096(int warmup, int reps, double *median_us);
int bench_read_spy_hour_csv(int warmup, int reps, double *median_us);
int bench_read_eurusd_hour_csv(int warmup, int reps, double *median_us);
int bench_read_es_snappy_parquet(int warmup, int reps, double *median_us);
int bench_read_es_zstd_parquet(int warmup, int reps, double *median_us);
int bench_ticks_spy_time(int warmup, int reps, double *median_us);
int bench_ticks_spy_volume(int warmup, int reps, double *median_us);
int bench_ticks_spy_dollar(int warmup, int reps, double *median_us);
int bench_env_cartpole_1(int warmup, int reps, double *median_us);
int bench_env_cartpole_64(int warmup, int reps, double *median_us);
int bench_env_trading_1(int warmup, int reps, double *median_us);
int bench_env_trading_64(int warmup, int reps, double *median_us);
int bench_latency_main(int argc, char **argv); /* bench_latency.c: `tickgrad_bench latency ...` */

static const bench_case CASES[] = {
    {"mlp_step", "MLP 256-256-256-3 ReLU, batch 64, MSE, Adam: forward + backward + update", bench_mlp_step, 1},
    {"tft_step", "TFT hidden 64, 4 heads, encoder 64, decoder 8, 16+4 features, batch 32, pinball, Adam: one step",
     bench_tft_step, 1},
    {"mamba2_step", "Mamba-2 d_model 128, 2 layers, d_state 64, headdim 32, seq 128, batch 8, pinball, Adam: one step",
     bench_mamba2_step, 1},
    {"transformer_step", "causal transformer d_model 64, 4 heads, 2 layers, seq 64, 16 features, batch 32, pinball, "
     "Adam: one step", bench_transformer_step, 1},
    {"transformer_long_step", "the same transformer over a 512-bar window at batch 4 (the same bars a step, 8x the "
     "attention per bar): one step", bench_transformer_long_step, 1},
    {"patchtst_step", "PatchTST d_model 64, 4 heads, 2 layers, seq 64, patch 16 stride 8, 16 features, batch 32, "
     "pinball, Adam: one step", bench_patchtst_step, 1},
    {"tft_step_recompute", "tft_step planned with recompute = blocks", bench_tft_step_recompute, 1},
    {"mamba2_step_recompute", "mamba2_step planned with recompute = blocks", bench_mamba2_step_recompute, 1},
    {"dqn_step", "Double DQN, Q-network 64-256-256-256-3 ReLU, batch 64 from a 10,000-transition replay, target network, "
     "Huber, Adam: one step", bench_dqn_step, 1},
    {"ppo_update", "PPO minibatch update: actor and critic 64-256-64-64 tanh, 3 actions, minibatch 256, clipped "
     "surrogate + clipped value loss + entropy, grad clip 0.5, Adam", bench_ppo_update, 1},
    {"gemm_peak", "a 1024-cube matmul through the engine's planned GEMM path (inference plan): the GFLOP/s peak of "
     "the roofline, the path that ran and the ISA lines", bench_gemm_peak, 1},
    {"mlp_step_cuda_b64", "the same on cuda:0, batch 64 drawn on the device from 65,536 resident rows, captured step",
     bench_mlp_step_cuda_b64, 0},
    {"mlp_step_cuda_b64_eager", "mlp_step_cuda_b64 with capture off (every step launched op by op)",
     bench_mlp_step_cuda_b64_eager, 0},
    {"mlp_step_cuda_b4096", "mlp_step_cuda_b64 with batch 4096", bench_mlp_step_cuda_b4096, 0},
    {"read_spy_hour_csv", "Lean SPY hourly CSV (40,832 bars, New York times) into bars", bench_read_spy_hour_csv, 0},
    {"read_eurusd_hour_csv", "Lean FXCM EURUSD hourly CSV (69,928 quote bars) into bars", bench_read_eurusd_hour_csv, 0},
    {"read_es_snappy_parquet", "ES 1-minute Parquet, snappy (16,673 bars) into bars", bench_read_es_snappy_parquet, 0},
    {"read_es_zstd_parquet", "ES 1-minute Parquet, zstd, 4,096-row groups (16,673 bars) into bars", bench_read_es_zstd_parquet, 0},
    {"ticks_spy_time", "Lean SPY trade ticks, 5 daily zips (about 1.2 M trades), into 1-minute bars", bench_ticks_spy_time, 0},
    {"ticks_spy_volume", "the same ticks into volume bars of 100,000 shares", bench_ticks_spy_volume, 0},
    {"ticks_spy_dollar", "the same ticks into dollar bars of 17,000,000", bench_ticks_spy_dollar, 0},
    {"env_cartpole_1", "CartPole-v1, 1 instance: one step (us per vectorised step)", bench_env_cartpole_1, 0},
    {"env_cartpole_64", "CartPole-v1, 64 instances: one vectorised step", bench_env_cartpole_64, 0},
    {"env_trading_1", "trading env on the default synthetic market, window 32 x 16 features, 1 instance: one step",
     bench_env_trading_1, 0},
    {"env_trading_64", "the trading env with 64 instances: one vectorised step", bench_env_trading_64, 0},
};

double bench_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *times, int n) {
  qsort(times, (size_t)n, sizeof *times, cmp_double);
  return times[n / 2];
}

static void usage(FILE *f) {
  fprintf(f, "usage: tickgrad_bench [--threads N] [--warmup N] [--reps N] [--precision fp32|bf16] [--ops] <case>\n"
             "       tickgrad_bench latency [--calls N] [--warmup N] [--dir DIR] <case>   (--help lists its cases)\n"
             "Prints \"<case> <median us>\"; the training-step cases (*) then \"roofline <case> key=value...\" from\n"
             "max(3, reps / 4) more steps with the graphs' profile on (GEMM GFLOP per step, GEMM GFLOP/s, the share of\n"
             "the step outside the GEMM ops matmul, linear, stacked_linear; lstm's internal GEMMs and ssd_scan are\n"
             "outside them and shown apart), gemm_peak \"peak ...\", \"isa ...\" and \"gemm ...\" lines.\n"
             "--precision bf16 (cases marked *): GEMM operands rounded to bf16, f32 accumulation. --ops: after the\n"
             "roofline line one \"op <case> <op> ...\" line per op kind (calls, us, share of the step, GFLOP per step,\n"
             "forward and backward us).\n"
             "Exit status: 0 done, 1 failed, 2 usage, 3 skipped (no GPU).\ncases:\n");
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
    fprintf(f, "  %-24s %s%s\n", CASES[i].name, CASES[i].precision ? "* " : "", CASES[i].what);
}

int main(int argc, char **argv) {
  int warmup = 50, reps = 500, threads = 1;
  const char *name = NULL;
  tg_blas_fix_core(argv);
  if (argc > 1 && !strcmp(argv[1], "latency")) return bench_latency_main(argc - 1, argv + 1);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--precision") && i + 1 < argc) {
      const char *p = argv[++i];
      if (strcmp(p, "fp32") && strcmp(p, "bf16")) {
        fprintf(stderr, "tickgrad_bench: --precision must be fp32 or bf16, not '%s'\n", p);
        return 2;
      }
      bench_precision = strcmp(p, "bf16") ? TG_PRECISION_FP32 : TG_PRECISION_BF16;
    } else if (!strcmp(argv[i], "--ops")) {
      bench_ops = 1;
    } else if (!strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if (argv[i][0] == '-' || name) {
      fprintf(stderr, "tickgrad_bench: unexpected argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    } else name = argv[i];
  }
  if (!name || threads < 1 || reps < 1 || warmup < 0) {
    usage(stderr);
    return 2;
  }
  if (tg_set_threads(threads) != TG_OK) {
    fprintf(stderr, "tickgrad_bench: %s\n", tg_last_error());
    return 2;
  }
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
    if (strcmp(CASES[i].name, name) != 0) continue;
    if (bench_precision != TG_PRECISION_FP32 && !CASES[i].precision) {
      fprintf(stderr, "tickgrad_bench: case '%s' runs in fp32 only (--precision is for the cases marked *)\n", name);
      return 2;
    }
    double us;
    int rc = CASES[i].run(warmup, reps, &us);
    if (rc == BENCH_SKIP) return BENCH_SKIP; /* the case said why */
    if (rc != 0) {
      fprintf(stderr, "tickgrad_bench %s: %s\n", name, tg_last_error());
      return 1;
    }
    printf("%s %.3f\n%s", name, us, bench_extra);
    return 0;
  }
  fprintf(stderr, "tickgrad_bench: unknown case '%s'\n", name);
  usage(stderr);
  return 2;
}
