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
 * positional (stdin). A command lists its options, as git's parse-options does, and its
 * positionals, and makes one call:
 *     cli_opt opts[] = {CLI_STR("--shape", &shape), CLI_FLAG("--exact", &exact), CLI_END};
 *     cli_pos pos = {&kernel, 1, NULL, "unexpected argument '%s' (one KERNEL)", "missing ..."};
 *     if ((rc = cli_parse(ctx, argc, argv, opts, &pos)) >= 0)
 *         return rc;
 * Every command also takes --spec-dir, --target, --tables, --quiet and --help (ctx). */
typedef enum {
    CLI_OPT_FLAG,     /* int, set to 1; no value */
    CLI_OPT_STR,      /* const char *, not empty */
    CLI_OPT_INT,      /* int64_t in [lo, hi] */
    CLI_OPT_DURATION, /* double seconds > 0 ("90s", "10m"); examples go in the message */
    CLI_OPT_FRACTION, /* double in [0, 1) */
    CLI_OPT_DEVICES,  /* cli_devices */
} cli_opt_kind;

typedef struct cli_opt {
    const char *name; /* "--budget"; NULL ends the table */
    cli_opt_kind kind;
    void *out; /* where the value goes, of the kind's type */
    int64_t lo, hi;
    const char *examples;
} cli_opt;

#define CLI_FLAG(name, out) {(name), CLI_OPT_FLAG, (out), 0, 0, NULL}
#define CLI_STR(name, out) {(name), CLI_OPT_STR, (out), 0, 0, NULL}
#define CLI_INT(name, out, lo, hi) {(name), CLI_OPT_INT, (out), (lo), (hi), NULL}
#define CLI_DURATION(name, out, examples) {(name), CLI_OPT_DURATION, (out), 0, 0, (examples)}
#define CLI_FRACTION(name, out) {(name), CLI_OPT_FRACTION, (out), 0, 0, NULL}
#define CLI_DEVICES(name, out) {(name), CLI_OPT_DEVICES, (out), 0, 0, NULL}
#define CLI_END {NULL, CLI_OPT_FLAG, NULL, 0, 0, NULL}

/* Most GPUs one --devices list may name. */
#define CLI_MAX_DEVICES AMK_MAX_DEVICES
/* --devices: "all" (n = 0: every visible device) or distinct device indices "0,1,3". */
typedef struct cli_devices {
    int idx[CLI_MAX_DEVICES];
    int n;
} cli_devices;

/* A command's positionals. max < 0: any number, gathered in order at argv[1..*n]. */
typedef struct cli_pos {
    const char **out;    /* room for max of them */
    int max;
    int *n;              /* how many were given; may be NULL */
    const char *extra;   /* usage error for one more than max; its one %s is the argument */
    const char *missing; /* usage error when none is given; NULL: they are optional */
} cli_pos;

/* One KERNEL, as `space`, `propose` and `loop` take it. */
#define CLI_ONE_KERNEL(out)                                                                  \
    {(out), 1, NULL, "unexpected argument '%s' (one KERNEL)", "missing KERNEL (see `amk list`)"}

/* Parses argv (argv[0] is the command) into opts and pos (NULL: no positionals). Returns
 * -1 to go on, or the exit code to return: 0 once --help printed the help, 1 after the
 * usage error it printed. */
int cli_parse(cli_ctx *ctx, int argc, char **argv, const cli_opt *opts, const cli_pos *pos);
/* The options before the command (`amk --target x loop ...`) into ctx; *cmd is the index
 * of the command in argv (0: none), *help says --help was seen. Returns -1 to go on, or
 * an exit code (0 after --version printed the version). */
int cli_parse_global(cli_ctx *ctx, int argc, char **argv, int *cmd, int *help);
/* A usage error found after cli_parse ("(see `amk CMD --help`)"); returns CLI_EXIT_USAGE. */
int cli_usage(const cli_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An integer option checked after cli_parse: 0, or the usage error's exit code. */
int cli_int_option(const cli_ctx *ctx, const char *name, const char *text, int64_t lo,
                   int64_t hi, int64_t *out);
/* The strategy called name; NULL after a usage error listing the known ones. */
const amk_strategy_type *cli_strategy(const cli_ctx *ctx, const char *name);

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

/* Every results file must exist ("-", stdin, too when stdin_ok); exit code 3 otherwise. */
int cli_results_files(const cli_ctx *ctx, const char *const *paths, int n, int stdin_ok);

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
int cli_shape(cli_ctx *ctx, const amk_spec *s, const char *text, const char *dtype,
              amk_shape *out);
/* Checks a --backend value: model, auto, gpu or sim:FILE (usage error otherwise). */
int cli_check_backend(cli_ctx *ctx, const char *backend);
/* CLI_EXIT_OK when --regime names a regime (or was not given), else the usage error. */
int cli_check_regime(cli_ctx *ctx, const char *regime);
/* --objective (may be NULL) goes with --backend sim:FILE only (usage error otherwise). */
int cli_check_objective(cli_ctx *ctx, const char *backend, const char *objective);
/* The message and exit code of a failed amk_evaluator_create(backend) (rc, d). */
int cli_evaluator_fail(cli_ctx *ctx, const char *backend, int rc, amk_diag *d);

/* JSON helpers: a number or null when NaN. */
cJSON *cli_json_num(double v);
void cli_json_add_num(cJSON *obj, const char *key, double v);
/* A best config (`amk loop`'s "best", `amk propose`'s "incumbent"): config, config_id
 * (NULL: computed), latency_us, latency_kind, spread, trial. */
cJSON *cli_incumbent_json(const amk_incumbent *b, const char *config_id);
/* amk_tune_groups with `amk loop`'s people output on stderr (loop_ui.c): the banner, the
 * progress bar (on a terminal) and the notes while each search runs, its summary after a
 * success (before o->done, the caller's). */
int cli_loop_tune(cli_ctx *ctx, const amk_tune_opts *o, amk_tune_result *r, amk_diag *d);

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
