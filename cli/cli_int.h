/* cli: the `amk` command. Internal header shared by main.c and the subcommand files:
 * the context every subcommand gets, the exit codes, a small argument parser and the
 * helpers that turn library diagnostics into one clear line on stderr. The CLI is a thin
 * client of the amk_* library: parse arguments, call the library, print. */
#ifndef AMK_CLI_INT_H
#define AMK_CLI_INT_H

/* First include of every cli source file: POSIX/GNU declarations (sigaction, isatty) before any
 * system header, whether or not the build defines it for this target. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "amk_common.h"
#include "amk_cost_model.h"
#include "amk_evaluator.h"
#include "amk_results.h"
#include "amk_search.h"
#include "amk_space_defs.h"
#include "space_json_int.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>

/* Process exit codes: part of the user contract (README.md, HARNESS.md, `amk help`). */
#define CLI_EXIT_MAP(XX)                                                                   \
    XX(OK, 0, "success (for `evaluate`: a verdict was produced, whatever its status)")    \
    XX(USAGE, 1, "usage error: unknown command or option, missing or malformed option value") \
    XX(INPUT, 2, "bad input: malformed JSON, unknown kernel/param/dimension/target, value "  \
                 "not among the choices, non-integer, bad spec, empty search space")     \
    XX(RESULTS, 3, "results file problem: missing, malformed, foreign or hand-edited "      \
                   "results.tsv, or it cannot be written")                                 \
    XX(NODEV, 4, "no device: the backend asked for explicitly (gpu) is not available")     \
    XX(INTERNAL, 5, "internal error (out of memory, a backend or worker that broke)")     \
    XX(COMPILE, 6, "`amk compile` only: at least one template failed to compile")

enum {
#define CLI__EXIT_ENUM(name, val, doc) CLI_EXIT_##name = (val),
    CLI_EXIT_MAP(CLI__EXIT_ENUM)
#undef CLI__EXIT_ENUM
};

#define CLI_MAX_SPEC_DIRS 32

/* What every subcommand receives: global options and lazily created shared objects. */
typedef struct cli_ctx {
    const char *cmd;                         /* subcommand name, for messages */
    const char *spec_dirs[CLI_MAX_SPEC_DIRS]; /* --spec-dir, in order */
    int n_spec_dirs;
    const char *target;                      /* --target, NULL = default */
    int tables;                              /* people output on stderr: 1 yes, 0 no, -1 auto */
    amk_registry *reg;                       /* created by cli_registry */
    amk_target target_copy;                  /* resolved target (with measured ceilings) */
    int target_ready;
} cli_ctx;

/* One subcommand. run returns a process exit code. */
typedef struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(cli_ctx *ctx, int argc, char **argv); /* argv[0] is the subcommand name */
    const char *help;                               /* full text of `amk help NAME` */
} cli_command;

extern const cli_command cli_commands[]; /* terminated by a {NULL} entry */
const cli_command *cli_command_find(const char *name);

/* ---------- argument parsing ---------------------------------------------------------------
 * Long options only, "--name value" or "--name=value"; "--" ends options; "-" is a
 * positional (stdin). Subcommands loop:
 *     while ((k = cli_args_next(&a)) != CLI_ARG_END) {
 *         if (k == CLI_ARG_POS) { ... a.arg ...; continue; }
 *         if (cli_common_option(ctx, &a)) continue;
 *         if (cli_args_value(&a, "--shape", &shape)) continue;
 *         ...
 *         cli_args_unknown(&a);
 *     }
 *     if ((rc = cli_args_done(ctx, &a)) >= 0) return rc;   (--help, or a usage error)
 */
enum { CLI_ARG_END = 0, CLI_ARG_OPT = 1, CLI_ARG_POS = 2 };

typedef struct cli_args {
    int argc;
    char **argv;
    int i;                  /* next argv index */
    const char *cmd;        /* "loop", for messages */
    const char *arg;        /* current option name (without "=value") or positional */
    char optbuf[64];        /* option name storage when "--name=value" */
    const char *inline_val; /* value after '=' or NULL */
    int only_pos;           /* after "--" */
    int matched;            /* the current option was consumed */
    int err;                /* exit code to return once the loop ends; 0 = fine */
    int help;               /* --help seen */
} cli_args;

void cli_args_init(cli_args *a, const char *cmd, int argc, char **argv);
int cli_args_next(cli_args *a);
/* 1 when the current option is `name` (a flag: no value allowed). */
int cli_args_flag(cli_args *a, const char *name);
/* 1 when the current option is `name`; *val gets its value (a missing value is a usage
 * error recorded in a->err, *val is then NULL). */
int cli_args_value(cli_args *a, const char *name, const char **val);
/* Records "unknown option" for the current option. */
void cli_args_unknown(cli_args *a);
/* Records a usage error with a message (printed at once). */
void cli_args_fail(cli_args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Integer option value in [lo, hi]; a usage error otherwise. Returns 1 when parsed. */
int cli_args_int(cli_args *a, const char *name, const char *text, int64_t lo, int64_t hi,
                 int64_t *out);

/* Duration option value ("90s", "10m", a number of seconds), > 0; a usage error naming
 * the examples otherwise. Returns 1 when parsed. */
int cli_args_duration(cli_args *a, const char *name, const char *text, const char *examples,
                      double *out);
/* The strategy called name; NULL after a usage error listing the known ones. */
const amk_strategy_type *cli_args_strategy(cli_args *a, const char *name);

/* Most GPUs one --devices list may name. */
#define CLI_MAX_DEVICES AMK_MAX_DEVICES
/* --devices value: "all" (*n = 0: every visible device) or distinct device indices
 * "0,1,3" (out[0..*n-1], at most CLI_MAX_DEVICES). A usage error otherwise. Returns 1 when
 * parsed. */
int cli_args_devices(cli_args *a, const char *name, const char *text, int *out, int *n);

/* After the parse loop: prints the command's help and returns CLI_EXIT_OK after --help,
 * returns the usage error code after an error, or -1 to go on. */
int cli_args_done(const cli_ctx *ctx, const cli_args *a);
/* --spec-dir, --target, --tables, --quiet and --help, accepted by every subcommand. */
int cli_common_option(cli_ctx *ctx, cli_args *a);

/* ---------- messages ----------------------------------------------------------------------- */
/* "amk CMD: message" on stderr, returns code. */
int cli_fail(const cli_ctx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cli_warn(const cli_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the library diagnostic and returns the exit code `code`. */
int cli_fail_diag(const cli_ctx *ctx, int code, const amk_diag *d);
/* Exit code for a library error outside of results-file handling. */
int cli_exit_for(int amk_code);
/* Exit code for a library error while reading/writing a results file. */
int cli_exit_for_results(int amk_code);
/* 1 when people output (tables) goes to stderr: --tables, or auto and stderr is a tty. */
int cli_tables(const cli_ctx *ctx);

/* Prints JSON (pretty) plus a newline on stdout and frees it; CLI_EXIT_INTERNAL on OOM. */
int cli_print_json(const cli_ctx *ctx, cJSON *json);

/* ---------- shared objects ------------------------------------------------------------------ */
/* Registry of built-in kernels plus every --spec-dir; prints the error and returns an exit
 * code on failure. */
int cli_registry(cli_ctx *ctx, amk_registry **out);
/* Finds KERNEL in the registry: unknown names list the known ones (exit 2). */
int cli_kernel(cli_ctx *ctx, const char *name, const amk_spec **out);
/* The configs of a file (- = stdin) as amk_configs_read reads them (many: arrays too);
 * *out is malloc'd. Exit code 2 (bad input) or 5 on failure, with the message printed. */
int cli_configs(cli_ctx *ctx, const char *path, int many, amk_config **out, size_t *n);
/* Resolves --target (or the default) and applies measured ceilings from the cache. */
int cli_resolve_target(cli_ctx *ctx, const amk_target **out);
/* Parses --shape text (NULL = the spec's default shape). */
int cli_shape(cli_ctx *ctx, const amk_spec *s, const char *text, amk_shape *out);
/* Checks a --backend value: model, auto, gpu or sim:FILE (usage error otherwise). */
int cli_check_backend(cli_ctx *ctx, const char *backend);
/* Creates the evaluator; exit code on failure (4 when an explicit gpu has no device). */
int cli_evaluator(cli_ctx *ctx, const char *backend, const amk_backend_opts *opts,
                  const amk_spec *s, const amk_shape *sh, amk_evaluator **out);
/* The message and exit code of a failed amk_evaluator_create(backend) (rc, d). */
int cli_evaluator_fail(cli_ctx *ctx, const char *backend, int rc, amk_diag *d);
/* `amk loop`'s evaluator (cmd_loop_mpi.c): under mpirun in an AMK_MPI build, worker ranks
 * serve rank 0 and return with *served = 1 (the exit code is returned; nothing else to do),
 * rank 0 gets the `mpi` evaluator (rank_timeout_s: deadline of one chunk, 0 = from the
 * backend); otherwise it is cli_evaluator's. */
int cli_loop_evaluator(cli_ctx *ctx, const char *backend, const amk_backend_opts *opts,
                       const amk_spec *s, const amk_shape *sh, double rank_timeout_s,
                       amk_evaluator **out, int *served);
/* Ranks of the MPI job this process belongs to (1 outside mpirun or in builds without MPI). */
int cli_loop_world_size(void);

/* JSON helpers: a number or null when NaN. */
cJSON *cli_json_num(double v);
void cli_json_add_num(cJSON *obj, const char *key, double v);
/* `amk loop`'s people output (loop_ui.c): init hooks the banner, the progress bar (on a
 * terminal) and the notes into o; end takes the bar off and restores the signal handlers;
 * summary prints the result on stderr. */
typedef struct cli_loop_ui {
    cli_ctx *ctx;
    const amk_tune_opts *o;
    int bar;            /* draw the bar (stderr is a terminal) */
    int started;        /* the banner is out and the signal handlers are set */
    int drawn;          /* a bar line is on screen */
    int64_t calls;      /* trials seen by this run */
    double last_draw;
    struct sigaction old_int, old_term;
} cli_loop_ui;
void cli_loop_ui_init(cli_loop_ui *ui, cli_ctx *ctx, amk_tune_opts *o);
void cli_loop_ui_end(cli_loop_ui *ui);
void cli_loop_ui_summary(const amk_tune_result *r, const char *results, const char *best_path);

/* Subcommands. */
int cli_cmd_list(cli_ctx *ctx, int argc, char **argv);
int cli_cmd_space(cli_ctx *ctx, int argc, char **argv);
int cli_cmd_propose(cli_ctx *ctx, int argc, char **argv);
int cli_cmd_evaluate(cli_ctx *ctx, int argc, char **argv);
int cli_cmd_loop(cli_ctx *ctx, int argc, char **argv);
int cli_cmd_report(cli_ctx *ctx, int argc, char **argv);
int cli_cmd_devices(cli_ctx *ctx, int argc, char **argv);
int cli_cmd_calibrate(cli_ctx *ctx, int argc, char **argv); /* cmd_calibrate.c */
int cli_cmd_compile(cli_ctx *ctx, int argc, char **argv);
int cli_cmd_export(cli_ctx *ctx, int argc, char **argv);    /* cmd_export.c */
int cli_cmd_lookup(cli_ctx *ctx, int argc, char **argv);    /* cmd_export.c */
int cli_cmd_import(cli_ctx *ctx, int argc, char **argv);    /* cmd_import.c */
int cli_cmd_help(cli_ctx *ctx, int argc, char **argv);

/* Help texts: docs/help/NAME.txt, compiled in (cmake/embed_help.cmake). */
extern const char cli_help_list[], cli_help_space[], cli_help_propose[], cli_help_evaluate[],
    cli_help_loop[], cli_help_report[], cli_help_devices[], cli_help_help[],
    cli_help_calibrate[], cli_help_compile[];
extern const char cli_help_export[], cli_help_lookup[], cli_help_import[];
/* Prints the help of one command (or the global help when cmd is NULL) on f. */
void cli_print_help(FILE *f, const cli_command *cmd);

#endif
