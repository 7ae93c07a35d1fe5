/* Shared pieces of the command line: commands, flag parsing helpers, exit codes. */
#ifndef TG_CLI_H
#define TG_CLI_H

#define TG_EXIT_OK 0
#define TG_EXIT_FAIL 1
#define TG_EXIT_USAGE 2
#define TG_EXIT_INTERRUPTED 130 /* stopped by Ctrl-C (SIGINT) or SIGTERM after a checkpoint, as a shell reports SIGINT */

/* Each command gets the arguments after its name. */
int tg_cmd_devices(int argc, char **argv);
int tg_cmd_ops(int argc, char **argv);
int tg_cmd_demo(int argc, char **argv);
int tg_cmd_inspect(int argc, char **argv);
int tg_cmd_synth(int argc, char **argv);
int tg_cmd_bars(int argc, char **argv);
int tg_cmd_train(int argc, char **argv);
/* `train --model dqn|ppo`: 1 when argv asks for an RL run (also --resume of one), and the command itself. */
int tg_cli_train_is_rl(int argc, char **argv);
int tg_cmd_train_rl(int argc, char **argv);
int tg_cmd_backtest(int argc, char **argv);
int tg_cmd_evaluate(int argc, char **argv);
int tg_cmd_report(int argc, char **argv);
int tg_cmd_predict(int argc, char **argv);
int tg_cmd_export(int argc, char **argv);
int tg_cmd_walkforward(int argc, char **argv);
int tg_cmd_sweep(int argc, char **argv);
/* A new forecaster run's config from `tickgrad train`'s flags (--model, --data, --config, every setting); 0, -1
 * after --help printed train's usage, or the exit code of a usage error (printed, naming cmd). */
struct tg_train_config;
int tg_cli_train_config(const char *cmd, int argc, char **argv, struct tg_train_config *c);

/* A flag's value as a whole number or a number in the closed range [lo, hi] (the library's one number parser,
 * base/parse.h): 1 with *out set, or 0 after printing a usage error naming the flag, the text and the range. */
int tg_cli_parse_long(const char *flag, const char *value, long lo, long hi, long *out);
int tg_cli_number(const char *cmd, const char *flag, const char *value, double lo, double hi, double *out);
/* Clears the library's stop request and installs the SIGINT and SIGTERM handler of the training commands: the first
 * signal calls tg_stop_request and says so on stderr (write(2)); a second restores the default action and re-raises. */
void tg_cli_stop_signals(void);
/* Prints "tickgrad: <msg>" for a usage error and returns TG_EXIT_USAGE. */
int tg_cli_usage_error(const char *cmd, const char *fmt, ...);

#endif
