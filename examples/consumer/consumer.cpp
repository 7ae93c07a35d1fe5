// A C++17 program that uses tickgrad as an installed library (docs/EMBEDDING.md): it opens a trained forecaster run,
// reads its bars the way the run read its own (RUN/config.json), pushes them through the predictor one at a time and
// prints the forecast of the last bar, or of bar N (1-based) when given, as `tickgrad predict` writes it:
//
//   h1_q0.1,h1_q0.5,h1_q0.9,...     (tickgrad predict's header without ts,instrument,close)
//   -0.00112,0.000134,...           (each number as %.9g, the command's format)
//
//   consumer RUN BARS_FILE [N]
// Built outside the project's build, against an installed tickgrad: see CMakeLists.txt (find_package) and Makefile
// (pkg-config) beside this file.
#include <tickgrad/tickgrad.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

// Owners for the library's objects: each is freed by the library's own call.
struct PredictorFree {
  void operator()(tg_predictor *p) const { tg_predictor_free(p); }
};
using Predictor = std::unique_ptr<tg_predictor, PredictorFree>;

struct Bars {
  tg_bars b{};
  bool read = false;
  ~Bars() {
    if (read) tg_bars_free(&b);
  }
};

int fail(const char *what) {
  // every failing call leaves its message (what, where, what to do) in the thread's tg_last_error()
  std::fprintf(stderr, "consumer: %s: %s\n", what, tg_last_error());
  return 1;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s RUN BARS_FILE [N]   (tickgrad %s)\n", argv[0], tg_version());
    return 2;
  }
  const char *run = argv[1];
  long long want = argc == 4 ? std::atoll(argv[3]) : 0;
  if (tg_set_threads(1) != TG_OK) return fail("threads");  // one bar at a time: one core is fastest

  tg_predictor *raw = nullptr;
  tg_predictor_opts opts{};
  opts.weights = "best";
  opts.log = stderr;
  if (tg_predictor_open(run, &opts, &raw) != TG_OK) return fail("open");
  Predictor p(raw);
  const tg_predictor_info *info = tg_predictor_get_info(p.get());

  // the run's own read settings: column map, time zone, price scale, duplicates (as `tickgrad predict` does)
  std::unique_ptr<tg_train_config> cfg(new tg_train_config(tg_train_defaults(tg_model_default_kind())));
  std::string config = std::string(run) + "/config.json";
  if (tg_train_config_load(config.c_str(), cfg.get()) != TG_OK) return fail("config");
  tg_read_opts ro = tg_read_settings_opts(&cfg->read, stderr);
  Bars bars;
  if (tg_bars_read(argv[2], &ro, &bars.b) != TG_OK) return fail("bars");
  bars.read = true;
  if (want == 0) want = bars.b.n;
  if (want < 1 || want > bars.b.n) {
    std::fprintf(stderr, "consumer: bar %lld: the file has %lld bars\n", want, (long long)bars.b.n);
    return 2;
  }

  std::vector<float> out(static_cast<size_t>(tg_predictor_out_len(info)));
  int ready = 0;
  for (int64_t i = 0; i < want; i++) {
    tg_pbar bar;
    if (tg_predictor_bar_at(p.get(), &bars.b, i, 1, &bar) != TG_OK) return fail("bar");
    if (tg_predictor_push(p.get(), &bar, out.data(), &ready) != TG_OK) return fail("push");
  }
  if (!ready) {
    std::fprintf(stderr, "consumer: bar %lld has no forecast yet (the first is bar %lld)\n", want,
                 (long long)info->first_bar + 1);
    return 1;
  }

  for (int k = 0; k < info->n_classes; k++) std::printf("%sp_%s", k ? "," : "", info->classes[k]);
  for (int h = 0; h < info->horizons; h++)
    for (int q = 0; q < info->nq; q++) std::printf("%sh%d_q%g", h || q ? "," : "", h + 1, info->q[q]);
  std::printf("\n");
  for (size_t i = 0; i < out.size(); i++) std::printf("%s%.9g", i ? "," : "", out[i]);
  std::printf("\n");
  return 0;
}
