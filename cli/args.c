/* cli argument parsing: one pass over argv driven by the command's table of options and its
 * positionals (cli_parse), the global options before the command (cli_parse_global), and the
 * usage errors, all worded the same way for every command. */
#include "cli_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Where one pass over argv stands. */
typedef struct cli_args {
    int argc;
    char **argv;
    int i;                  /* next argv index */
    const cli_ctx *ctx;     /* its cmd names the command in messages; NULL before it */
    const char *arg;        /* current option name (without "=value") or positional */
    char optbuf[64];        /* option name storage when "--name=value" */
    const char *inline_val; /* value after '=' or NULL */
    int only_pos;           /* after "--" */
    int err;                /* exit code to return once the pass ends; 0 = fine */
    int help;               /* --help seen */
    const char *given[64];  /* the value of opts[k] once given: a second one is refused */
    const char *target;     /* --target's value when given */
} cli_args;

enum { ARG_END, ARG_OPT, ARG_POS };

static void usage_v(const char *cmd, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void usage_v(const char *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "amk%s%s: error: ", cmd ? " " : "", cmd ? cmd : "");
    vfprintf(stderr, fmt, ap);
    if (cmd)
        fprintf(stderr, " (see `amk %s --help`)\n", cmd);
    else
        fprintf(stderr, " (see `amk help`)\n");
}

int cli_usage(const cli_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    usage_v(ctx->cmd, fmt, ap);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

/* The pass ends at a usage error (already printed). */
static void args_stop(cli_args *a)
{
    a->err = CLI_EXIT_USAGE;
    a->i = a->argc;
}

/* Prints a usage error and ends the pass at it. */
static void args_fail(cli_args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void args_fail(cli_args *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    usage_v(a->ctx->cmd, fmt, ap);
    va_end(ap);
    args_stop(a);
}

static int args_next(cli_args *a)
{
    a->inline_val = NULL;
    a->arg = NULL;
    if (a->err || a->i >= a->argc)
        return ARG_END;
    const char *s = a->argv[a->i++];
    if (a->only_pos || s[0] != '-' || s[1] == '\0') {
        a->arg = s;
        return ARG_POS;
    }
    if (!strcmp(s, "--")) {
        a->only_pos = 1;
        return args_next(a);
    }
    if (!strcmp(s, "-h"))
        s = "--help";
    const char *eq = s[1] == '-' ? strchr(s, '=') : NULL;
    if (eq) {
        size_t n = (size_t)(eq - s);
        if (n >= sizeof a->optbuf)
            n = sizeof a->optbuf - 1;
        memcpy(a->optbuf, s, n);
        a->optbuf[n] = '\0';
        a->arg = a->optbuf;
        a->inline_val = eq + 1;
    } else {
        a->arg = s;
    }
    return ARG_OPT;
}

/* The current option as a flag: 0 after a usage error (it was given a value). */
static int args_flag(cli_args *a)
{
    if (a->inline_val)
        args_fail(a, "option %s takes no value (got '%s')", a->arg, a->inline_val);
    return !a->err;
}

/* The value of the current option; NULL after a usage error (missing or empty). A value
 * never starts with "--", so "--a --b" is a missing value, not "--b". */
static const char *args_value(cli_args *a)
{
    const char *v = a->inline_val;
    if (!v && a->i < a->argc && strncmp(a->argv[a->i], "--", 2) != 0)
        v = a->argv[a->i++];
    if (!v)
        args_fail(a, "option %s needs a value", a->arg);
    else if (!*v)
        args_fail(a, "option %s: empty value", a->arg);
    return a->err ? NULL : v;
}

int cli_int_option(const cli_ctx *ctx, const char *name, const char *text, int64_t lo,
                   int64_t hi, int64_t *out)
{
    int64_t v;
    if (amk_parse_i64(text, &v) != AMK_OK || v < lo || v > hi)
        return cli_usage(ctx, "option %s: '%s' is not an integer in %lld..%lld", name, text,
                         (long long)lo, (long long)hi);
    *out = v;
    return CLI_EXIT_OK;
}

const amk_strategy_type *cli_strategy(const cli_ctx *ctx, const char *name)
{
    const amk_strategy_type *st = amk_strategy_find(name);
    if (!st) {
        amk_sb sb = {0};
        for (int i = 0; amk_strategies[i]; i++)
            amk_sb_printf(&sb, "%s%s", i ? ", " : "", amk_strategies[i]->name);
        cli_usage(ctx, "unknown strategy '%s' (known: %s)", name, sb.p ? sb.p : "none");
        amk_sb_free(&sb);
    }
    return st;
}

/* Parses the value of option o into o->out; a usage error when it does not fit its kind. */
static void take_value(cli_args *a, const cli_opt *o, const char *v)
{
    double x;
    char *end = NULL;
    amk_diag d;
    switch (o->kind) {
    case CLI_OPT_FLAG: break;
    case CLI_OPT_STR: *(const char **)o->out = v; break;
    case CLI_OPT_INT:
        if (cli_int_option(a->ctx, o->name, v, o->lo, o->hi, o->out) != CLI_EXIT_OK)
            args_stop(a);
        break;
    case CLI_OPT_DURATION:
        if (amk_parse_duration(v, &x) != AMK_OK || !(x > 0))
            args_fail(a, "option %s: '%s' is not a duration (e.g. %s)", o->name, v,
                      o->examples);
        else
            *(double *)o->out = x;
        break;
    case CLI_OPT_FRACTION:
        errno = 0;
        x = strtod(v, &end);
        if (errno || end == v || *end || !(x >= 0 && x < 1))
            args_fail(a, "option %s: '%s' is not a fraction in [0, 1)", o->name, v);
        else
            *(double *)o->out = x;
        break;
    case CLI_OPT_DEVICES: {
        cli_devices *dv = o->out;
        if (amk_devices_parse(v, dv->idx, &dv->n, &d) != AMK_OK)
            args_fail(a, "option %s: %s", o->name, d.msg);
        break;
    }
    }
}

/* A single-valued option given again would silently take the last value (--results A
 * --results B): a usage error naming both, as a JSON object's duplicate key is refused. */
static int once(cli_args *a, const char **slot, const char *v)
{
    if (*slot) {
        args_fail(a, "option %s given twice ('%s', then '%s'); it takes one value", a->arg,
                  *slot, v);
        return 0;
    }
    *slot = v;
    return 1;
}

/* --spec-dir, --target, --tables, --quiet and --help, which every command takes. 0 when the
 * current option is none of them. */
static int common_option(cli_ctx *ctx, cli_args *a)
{
    const char *v;
    if (!strcmp(a->arg, "--spec-dir")) {
        if ((v = args_value(a)) && ctx->n_spec_dirs >= CLI_MAX_SPEC_DIRS)
            args_fail(a, "at most %d --spec-dir options", CLI_MAX_SPEC_DIRS);
        else if (v)
            ctx->spec_dirs[ctx->n_spec_dirs++] = v;
    } else if (!strcmp(a->arg, "--target")) {
        if ((v = args_value(a)) && once(a, &a->target, v))
            ctx->target = v;
    } else if (!strcmp(a->arg, "--tables") || !strcmp(a->arg, "--quiet")) {
        if (args_flag(a))
            ctx->tables = !strcmp(a->arg, "--tables");
    } else if (!strcmp(a->arg, "--help")) {
        args_flag(a); /* "--help=x": the error, and then the help all the same */
        a->help = 1;
        a->i = a->argc; /* nothing else matters */
    } else {
        return 0;
    }
    return 1;
}

static void take_option(cli_ctx *ctx, cli_args *a, const cli_opt *opts)
{
    if (common_option(ctx, a))
        return;
    const cli_opt *o = opts;
    while (o->name && strcmp(o->name, a->arg) != 0)
        o++;
    if (!o->name) {
        args_fail(a, "unknown option '%s'", a->arg);
    } else if (o->kind == CLI_OPT_FLAG) {
        if (args_flag(a))
            *(int *)o->out = 1;
    } else {
        const char *v = args_value(a);
        size_t k = (size_t)(o - opts);
        if (v && (k >= sizeof a->given / sizeof a->given[0] || once(a, &a->given[k], v)))
            take_value(a, o, v);
    }
}

/* -Wformat=2 wants literal formats, so pos->extra's one "%s" is filled in here. */
static void take_positional(cli_args *a, const cli_pos *pos, int *n)
{
    if (pos->max < 0 || *n < pos->max) {
        if (pos->max < 0)
            a->argv[1 + *n] = (char *)a->arg; /* never ahead of the pass: 1 + *n < a->i */
        else
            pos->out[*n] = a->arg;
        (*n)++;
        return;
    }
    const char *fmt = pos->extra ? pos->extra : "unexpected argument '%s'";
    const char *s = strstr(fmt, "%s");
    if (s)
        args_fail(a, "%.*s%s%s", (int)(s - fmt), fmt, a->arg, s + 2);
    else
        args_fail(a, "%s", fmt);
}

int cli_parse(cli_ctx *ctx, int argc, char **argv, const cli_opt *opts, const cli_pos *pos)
{
    static const cli_pos none = {NULL, 0, NULL, NULL, NULL};
    cli_args a = {.argc = argc, .argv = argv, .i = 1, .ctx = ctx};
    int k, n = 0;
    if (!pos)
        pos = &none;
    while ((k = args_next(&a)) != ARG_END) {
        if (k == ARG_POS)
            take_positional(&a, pos, &n);
        else
            take_option(ctx, &a, opts);
    }
    if (pos->n)
        *pos->n = n;
    if (a.help) {
        cli_print_help(stdout, cli_command_find(ctx->cmd ? ctx->cmd : "help"));
        return CLI_EXIT_OK;
    }
    if (a.err)
        return a.err;
    if (n == 0 && pos->missing)
        return cli_usage(ctx, "%s", pos->missing);
    return -1;
}

int cli_parse_global(cli_ctx *ctx, int argc, char **argv, int *cmd, int *help)
{
    cli_args a = {.argc = argc, .argv = argv, .i = 1, .ctx = ctx};
    int k;
    *cmd = 0;
    *help = 0;
    while ((k = args_next(&a)) != ARG_END) {
        if (k == ARG_POS) {
            *cmd = a.i - 1;
            break;
        }
        if (!strcmp(a.arg, "--help")) { /* `amk --help [COMMAND]` */
            args_flag(&a);
            *help = 1;
        } else if (!strcmp(a.arg, "--version")) {
            args_flag(&a); /* "--version=x": the error, and the version all the same */
            printf("amk %s\n", AMK_VERSION);
            return CLI_EXIT_OK;
        } else if (!common_option(ctx, &a)) {
            args_fail(&a, "unknown option '%s'", a.arg);
        }
    }
    return a.err ? a.err : -1;
}
