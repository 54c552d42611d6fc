/* amk: entry point. Parses the global options, finds the subcommand in the table and runs
 * it; `amk help [CMD]` and every `CMD --help` print the command's text from docs/help/
 * (compiled in by cmake/embed_help.cmake). */
#include "cli_int.h"

#include <gsl/gsl_errno.h>
#include <string.h>

const cli_command cli_commands[] = {
    {"list", "list the known kernels", cli_cmd_list, cli_help_list},
    {"space", "describe a kernel's search space and count its valid configs", cli_cmd_space,
     cli_help_space},
    {"propose", "print the next config to try (agent loop, step 1)", cli_cmd_propose,
     cli_help_propose},
    {"evaluate", "evaluate one config JSON and print its verdict (agent loop, step 2)",
     cli_cmd_evaluate, cli_help_evaluate},
    {"loop", "run the search loop, logging every trial to results.tsv", cli_cmd_loop,
     cli_help_loop},
    {"report", "summarise results files: best per kernel/shape, counts by status",
     cli_cmd_report, cli_help_report},
    {"devices", "show GPUs (or why none answers) and the known targets", cli_cmd_devices,
     cli_help_devices},
    {"calibrate", "measure a GPU's ceilings, or fit the cost model to measured results",
     cli_cmd_calibrate, cli_help_calibrate},
    {"compile", "compile kernel templates without running them (check, warm the cache)",
     cli_cmd_compile, cli_help_compile},
    {"export", "export best configs as a JSON database or a C header (dispatch table)",
     cli_cmd_export, cli_help_export},
    {"import", "turn a Kernel Tuner / T1 search space into an amk kernel folder",
     cli_cmd_import, cli_help_import},
    {"lookup", "look up the tuned config of a kernel/device/shape in an export database",
     cli_cmd_lookup, cli_help_lookup},
    {"help", "show help for amk or one command", cli_cmd_help, cli_help_help},
    {NULL, NULL, NULL, NULL},
};

const cli_command *cli_command_find(const char *name)
{
    for (const cli_command *c = cli_commands; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

static void print_global_help(FILE *f)
{
    fprintf(f, "amk %s - autotuning search engine for GPU kernels\n\n", AMK_VERSION);
    fprintf(f, "usage: amk [GLOBAL OPTIONS] COMMAND [ARGS]\n\ncommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(f, "  %-9s %s\n", c->name, c->summary);
    fprintf(f,
            "\nglobal options (accepted before or after COMMAND):\n"
            "  --spec-dir DIR  add user kernels: a kernel folder (with spec.json) or a folder\n"
            "                  of kernel folders; repeatable\n"
            "  --target T      target for the model/sim backends and `space`:");
    for (int i = 0; i < amk_target_count(); i++)
        fprintf(f, " %s", amk_target_at(i)->key);
    fprintf(f,
            "\n                  (default $AMK_TARGET, else h100)\n"
            "  --tables        people output (tables) on stderr even when not a terminal\n"
            "  --quiet         no people output on stderr (errors still)\n"
            "  --help          help; `amk COMMAND --help` for one command\n"
            "  --version       print the version\n"
            "\nMachine output is JSON on stdout; tables, progress and errors go to stderr.\n"
            "\nexit codes:\n");
#define XX(name, val, doc) fprintf(f, "  %d  %s\n", val, doc);
    CLI_EXIT_MAP(XX)
#undef XX
    fprintf(f, "\nenvironment: AMK_TARGET (default target), AMK_LOG (error|warn|info|debug),\n"
               "AMK_KERNELS_DIR (built-in kernels), AMK_DATA_DIR (recorded sweeps; both are\n"
               "otherwise looked for next to the executable first: <bin>/../share/amk, or a\n"
               "build tree's source space_defs/), AMK_CACHE_DIR (compile cache, ceilings)\n");
    fprintf(f, "\nSee README.md, HARNESS.md (agent contract) and space_defs/SPEC.md.\n");
}

void cli_print_help(FILE *f, const cli_command *cmd)
{
    if (!cmd) {
        print_global_help(f);
        return;
    }
    fputs(cmd->help, f);
    fprintf(f,
            "\nglobal options: --spec-dir DIR (repeatable), --target T, --tables, --quiet,\n"
            "--help. Exit codes: 0 ok, 1 usage, 2 bad input, 3 results file, 4 no device,\n"
            "5 internal (`amk help` explains each).\n");
}

int cli_cmd_help(cli_ctx *ctx, int argc, char **argv)
{
    const char *topic = NULL;
    cli_opt opts[] = {CLI_END};
    cli_pos pos = {&topic, 1, NULL, "one COMMAND at most ('%s' is extra)", NULL};
    int rc = cli_parse(ctx, argc, argv, opts, &pos);
    if (rc >= 0)
        return rc;
    if (!topic) {
        print_global_help(stdout);
        return CLI_EXIT_OK;
    }
    const cli_command *c = cli_command_find(topic);
    if (!c) {
        amk_sb sb = {0};
        for (const cli_command *x = cli_commands; x->name; x++)
            amk_sb_printf(&sb, "%s%s", x == cli_commands ? "" : ", ", x->name);
        cli_fail(ctx, CLI_EXIT_USAGE, "unknown command '%s' (commands: %s)", topic,
                 sb.p ? sb.p : "");
        amk_sb_free(&sb);
        return CLI_EXIT_USAGE;
    }
    cli_print_help(stdout, c);
    return CLI_EXIT_OK;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();

    cli_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.tables = -1;
    ctx.cmd = NULL;

    /* Global options before the command. */
    int cmd_index, help;
    int rc = cli_parse_global(&ctx, argc, argv, &cmd_index, &help);
    if (rc == CLI_EXIT_OK) /* --version */
        return rc;
    if (help && !cmd_index) {
        print_global_help(stdout);
        return CLI_EXIT_OK;
    }
    if (rc > 0) {
        fprintf(stderr, "amk: run `amk help` for usage\n");
        return rc;
    }
    if (!cmd_index) {
        print_global_help(stderr);
        fprintf(stderr, "\namk: error: no command given\n");
        return CLI_EXIT_USAGE;
    }
    char **sub_argv = argv + cmd_index;
    int sub_argc = argc - cmd_index;
    const cli_command *c = cli_command_find(sub_argv[0]);
    if (!c) {
        fprintf(stderr, "amk: error: unknown command '%s' (commands:", sub_argv[0]);
        for (const cli_command *x = cli_commands; x->name; x++)
            fprintf(stderr, " %s", x->name);
        fprintf(stderr, "; see `amk help`)\n");
        return CLI_EXIT_USAGE;
    }
    ctx.cmd = c->name;
    if (help) { /* `amk --help loop` */
        cli_print_help(stdout, c);
        return CLI_EXIT_OK;
    }
    rc = c->run(&ctx, sub_argc, sub_argv);
    amk_registry_free(ctx.reg);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "amk %s: error: cannot write standard output\n", c->name);
        if (rc == CLI_EXIT_OK)
            rc = CLI_EXIT_INTERNAL;
    }
    return rc;
}
