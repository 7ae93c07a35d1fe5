/* PPO in bf16 mixed precision solves CartPole: a mean return of 475 within 500k environment steps on 3 seeds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "support/check.h"
#include "support/files.h"
#include "tickgrad/tickgrad.h"

/* The first metrics.csv row (one per 10,000 steps) whose mean return over the last 100 episodes reaches 475: its
 * env_steps, or -1 when none does. */
static long long steps_to_475(const char *run) {
  char path[700];
  snprintf(path, sizeof path, "%s/metrics.csv", run);
  size_t len = 0;
  char *csv = (char *)tg_test_read_file(path, &len);
  long long at = -1;
  char *line = csv ? strchr(csv, '\n') : NULL; /* past the header: iteration,env_steps,episodes,mean_return,... */
  while (line && at < 0) {
    long long it, steps, episodes;
    double ret;
    if (sscanf(line + 1, "%lld,%lld,%lld,%lf", &it, &steps, &episodes, &ret) == 4 && ret >= 475.0) at = steps;
    line = strchr(line + 1, '\n');
  }
  free(csv);
  return at;
}

int main(void) {
  const char *san = getenv("TG_SANITIZED");
  if (san && strcmp(san, "1") == 0)
    return tg_test_skip("1.5 million CartPole steps take many minutes under the sanitizers; the Release suite runs it");
  CHECK_OK(tg_set_threads(1)); /* a small network: more threads only contend with the tests beside it */
  char dir[] = "/tmp/tg_ppo_bf16_XXXXXX";
  if (!mkdtemp(dir)) return tg_test_skip("cannot make a temporary folder");
  for (uint64_t seed = 1; seed <= 3; seed++) {
    char run[600];
    snprintf(run, sizeof run, "%s/seed%llu", dir, (unsigned long long)seed);
    tg_env *env = NULL;
    CHECK_OK(tg_env_cartpole_new(4, seed, 500, &env));
    tg_ppo_config c = tg_ppo_defaults(); /* CleanRL's CartPole settings: 500,000 steps */
    c.seed = seed;
    c.precision = TG_PRECISION_BF16;
    tg_ppo_result r;
    CHECK_OK(tg_ppo_train(&c, env, run, &r));
    long long at = steps_to_475(run);
    printf("ppo bf16 cartpole seed %llu: mean return %.1f at the end of %lld steps; 475 first reached at %lld steps\n",
           (unsigned long long)seed, r.mean_return, (long long)r.env_steps, at);
    CHECK_MSG(at > 0 && at <= 500000, "seed %llu: the mean return never reached 475 within 500k steps",
              (unsigned long long)seed);
    tg_env_free(env);
  }
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return tg_test_finish();
}
