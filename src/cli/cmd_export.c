/* `tickgrad export`: a trained run's model written as an ONNX file. */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "tickgrad/tickgrad.h"

static void ex_usage(FILE *f) {
  fprintf(f,
          "usage: tickgrad export --run RUN --out FILE [--format onnx] [--weights best|last]\n"
          "Writes a trained run's model as an ONNX file (opset 17, a dynamic batch axis) that ONNX Runtime and other\n"
          "runtimes run (docs/EXPORT.md):\n"
          "  forecasters (mlp, transformer, patchtst, ...): features [batch, window, n_features], the raw feature values\n"
          "    of a window's bars (the normalisation is inside the graph) -> quantiles [batch, horizons, quantiles] of\n"
          "    the forward log return, as tickgrad predict gives them\n"
          "  dqn: obs [batch, obs_width] -> q_values [batch, actions];  ppo: obs -> logits [batch, actions], value\n"
          "\n"
          "  --run RUN         the run folder (a finished or stopped run: one still being written is refused)\n"
          "  --out FILE        the file to write (atomically: on any error nothing is written)\n"
          "  --format F        onnx (the default and the only one)\n"
          "  --weights W       a forecaster's best (default) or last weights\n"
          "exit codes: 0 written, 1 failure (the message names the op and model with no ONNX form, the weight that is\n"
          "not finite, the path), 2 usage\n");
}

int tg_cmd_export(int argc, char **argv) {
  const char *run = NULL, *out = NULL, *format = "onnx", *weights = NULL;
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
      ex_usage(stdout);
      return 0;
    }
    if (strcmp(f, "--run") && strcmp(f, "--out") && strcmp(f, "--format") && strcmp(f, "--weights"))
      return tg_cli_usage_error("export", "unknown flag '%s'", f);
    if (!v) return tg_cli_usage_error("export", "%s needs a value", f);
    if (!strcmp(f, "--run")) run = v;
    else if (!strcmp(f, "--out")) out = v;
    else if (!strcmp(f, "--format")) format = v;
    else weights = v;
    i++;
  }
  if (!run || !out) return tg_cli_usage_error("export", "give --run RUN and --out FILE");
  if (strcmp(format, "onnx") != 0) return tg_cli_usage_error("export", "unknown format '%s' (known: onnx)", format);
  if (weights && strcmp(weights, "best") && strcmp(weights, "last"))
    return tg_cli_usage_error("export", "--weights must be best or last, not '%s'", weights);
  if (tg_run_export(run, format, out, weights) != TG_OK) {
    fprintf(stderr, "tickgrad %s\n", tg_last_error()); /* the library's message starts "export: " */
    return 1;
  }
  printf("wrote %s\n", out);
  return 0;
}
