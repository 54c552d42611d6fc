/* cli helpers: error reporting and exit-code mapping, and the shared steps of several
 * subcommands (registry, kernel, target, shape, evaluator, JSON bits). */
#include "cli_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------- messages --------------------------------------------------------------------- */

static void vmsg(const cli_ctx *ctx, const char *kind, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void vmsg(const cli_ctx *ctx, const char *kind, const char *fmt, va_list ap)
{
    /* Messages quote their input (a config's kernel name, a path): shown as the results
     * reader shows a field, with no control byte or broken UTF-8 reaching the terminal. */
    char raw[8192], safe[sizeof raw + 4];
    int n = vsnprintf(raw, sizeof raw, fmt, ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1;
    fprintf(stderr, "amk%s%s: %s%s\n", ctx && ctx->cmd ? " " : "",
            ctx && ctx->cmd ? ctx->cmd : "", kind, amk_text_show(safe, sizeof safe, raw, len, len));
}

int cli_fail(const cli_ctx *ctx, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(ctx, "error: ", fmt, ap);
    va_end(ap);
    return code;
}

void cli_warn(const cli_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(ctx, "", fmt, ap);
    va_end(ap);
}

int cli_fail_diag(const cli_ctx *ctx, int code, const amk_diag *d)
{
    if (d && d->msg[0])
        return cli_fail(ctx, code, "%s", d->msg);
    return cli_fail(ctx, code, "%s", amk_strerror(d ? d->code : AMK_EINVAL));
}

_Static_assert(CLI_EXIT_INPUT == 2 && CLI_EXIT_RESULTS == 3 && CLI_EXIT_NODEV == 4 &&
                   CLI_EXIT_INTERNAL == 5,
               "amk_err_exit_code's numbers are the CLI's exit codes");

int cli_exit_for(int code)
{
    return amk_err_exit_code(code); /* the library's table: bindings classify by it too */
}

int cli_exit_for_results(int code)
{
    if (code == AMK_OK)
        return CLI_EXIT_OK;
    return code == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_RESULTS;
}

int cli_tables(const cli_ctx *ctx)
{
    if (ctx->tables >= 0)
        return ctx->tables;
    return isatty(STDERR_FILENO);
}

int cli_print_json(const cli_ctx *ctx, cJSON *json)
{
    if (!json)
        return cli_fail(ctx, CLI_EXIT_INTERNAL, "out of memory building the JSON output");
    char *s = cJSON_Print(json);
    cJSON_Delete(json);
    if (!s)
        return cli_fail(ctx, CLI_EXIT_INTERNAL, "out of memory printing the JSON output");
    /* cJSON indents with tabs and separates keys with ":\t"; raw tabs occur nowhere else
     * (tabs inside strings are escaped), so print two spaces per level and ": ". */
    for (const char *p = s; *p; p++) {
        if (*p != '\t')
            fputc(*p, stdout);
        else if (p > s && p[-1] == ':')
            fputc(' ', stdout);
        else
            fputs("  ", stdout);
    }
    fputc('\n', stdout);
    free(s);
    return CLI_EXIT_OK;
}

int cli_results_files(const cli_ctx *ctx, const char *const *paths, int n, int stdin_ok)
{
    for (int i = 0; i < n; i++)
        if (!(stdin_ok && !strcmp(paths[i], "-")) && !amk_fs_exists(paths[i]))
            return cli_fail(ctx, CLI_EXIT_RESULTS, "%s: no such file", paths[i]);
    return CLI_EXIT_OK;
}

/* ---------- shared objects --------------------------------------------------------------- */

int cli_registry(cli_ctx *ctx, amk_registry **out)
{
    amk_diag d;
    amk_diag_clear(&d);
    int rc = AMK_OK;
    if (!ctx->reg)
        rc = amk_registry_open(ctx->spec_dirs, ctx->n_spec_dirs, &ctx->reg, &d);
    if (rc != AMK_OK)
        return cli_fail_diag(ctx, rc == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_INPUT, &d);
    *out = ctx->reg;
    return CLI_EXIT_OK;
}

int cli_kernel(cli_ctx *ctx, const char *name, const amk_spec **out)
{
    amk_registry *r = NULL;
    amk_diag d;
    amk_diag_clear(&d);
    int rc = cli_registry(ctx, &r);
    if (rc == CLI_EXIT_OK && amk_registry_lookup(r, name, out, &d) != AMK_OK)
        rc = cli_fail_diag(ctx, CLI_EXIT_INPUT, &d);
    return rc;
}

int cli_configs(cli_ctx *ctx, const char *path, int many, amk_config **out, size_t *n)
{
    amk_registry *reg = NULL;
    int rc = cli_registry(ctx, &reg);
    if (rc)
        return rc;
    amk_diag d;
    amk_diag_clear(&d);
    int e = amk_configs_read(reg, path, many, out, n, &d);
    if (e == AMK_OK)
        return CLI_EXIT_OK;
    return cli_fail_diag(ctx, e == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_INPUT, &d);
}

int cli_resolve_target(cli_ctx *ctx, const amk_target **out)
{
    const amk_target *t;
    amk_diag d;
    amk_diag_clear(&d);
    if (!ctx->target_ready) {
        if (amk_target_resolve(ctx->target, &t, &d) != AMK_OK)
            return cli_fail_diag(ctx, CLI_EXIT_INPUT, &d);
        amk_target_with_ceilings(t, &ctx->target_copy);
        ctx->target_ready = 1;
    }
    *out = &ctx->target_copy;
    return CLI_EXIT_OK;
}

int cli_shape(cli_ctx *ctx, const amk_spec *s, const char *text, const char *dtype,
              amk_shape *out)
{
    amk_diag d;
    amk_diag_clear(&d);
    int rc = AMK_OK;
    if (!text)
        amk_spec_shape(s, 0, out);
    else if ((rc = amk_shape_parse(s, text, out, &d)) != AMK_OK)
        amk_diag_prefix(&d, "--shape '%s' for kernel %s", text, amk_spec_name(s));
    if (rc == AMK_OK && dtype) {
        /* --dtype D: the shape (named, given or the default) with its dtype replaced */
        if (text && strstr(text, "dtype"))
            return cli_usage(ctx, "--dtype %s: --shape '%s' names the dtype already", dtype,
                             text);
        char buf[512];
        amk_shape_format(s, out, buf, sizeof buf);
        char *at = strstr(buf, "dtype=");
        if (at)
            snprintf(at, sizeof buf - (size_t)(at - buf), "dtype=%s", dtype);
        if ((rc = amk_shape_parse(s, buf, out, &d)) != AMK_OK)
            amk_diag_prefix(&d, "--dtype %s for kernel %s", dtype, amk_spec_name(s));
    }
    if (rc != AMK_OK)
        return cli_fail_diag(ctx, rc == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_INPUT, &d);
    return CLI_EXIT_OK;
}

int cli_check_backend(cli_ctx *ctx, const char *b)
{
    amk_diag d = {0};
    return amk_backend_check_name(b, &d) == AMK_OK ? CLI_EXIT_OK
                                                   : cli_fail_diag(ctx, CLI_EXIT_USAGE, &d);
}

int cli_check_regime(cli_ctx *ctx, const char *regime)
{
    amk_diag d = {0};
    return amk_regime_check_name(regime, &d) == AMK_OK ? CLI_EXIT_OK
                                                        : cli_fail_diag(ctx, CLI_EXIT_USAGE, &d);
}

int cli_check_objective(cli_ctx *ctx, const char *backend, const char *objective)
{
    amk_objective obj;
    if (!objective || amk_objective_parse(objective, &obj) == AMK_OK ||
        amk_backend_sim_file(backend))
        return CLI_EXIT_OK;
    return cli_fail(ctx, CLI_EXIT_USAGE, "--objective %s: not time, energy or edp; another name "
                    "chooses the field a Kernel Tuner file replays, and needs --backend "
                    "sim:FILE (not '%s')", objective, backend);
}

int cli_evaluator_fail(cli_ctx *ctx, const char *backend, int rc, amk_diag *d)
{
    int code;
    if (rc == AMK_ENOMEM)
        code = CLI_EXIT_INTERNAL;
    else if (rc == AMK_ENODEV || rc == AMK_EUNSUPPORTED || rc == AMK_EBACKEND ||
             rc == AMK_EWORKER)
        code = CLI_EXIT_NODEV;
    else if (amk_backend_sim_foreign(backend))
        code = cli_exit_for(rc); /* a Kernel Tuner file: bad input */
    else if (amk_backend_sim_file(backend) && rc != AMK_ENOTCOVERED && rc != AMK_ENOENERGY)
        code = CLI_EXIT_RESULTS; /* the file to replay is a results file */
    else
        code = cli_exit_for(rc);
    if (!strstr(d->msg, backend))
        amk_diag_prefix(d, "backend %s", backend);
    return cli_fail_diag(ctx, code, d);
}

/* ---------- JSON --------------------------------------------------------------------------- */

cJSON *cli_json_num(double v)
{
    if (isnan(v) || isinf(v))
        return cJSON_CreateNull();
    return cJSON_CreateNumber(v);
}

void cli_json_add_num(cJSON *obj, const char *key, double v)
{
    cJSON_AddItemToObject(obj, key, cli_json_num(v));
}

cJSON *cli_incumbent_json(const amk_incumbent *b, const char *config_id)
{
    char id[17];
    cJSON *o = cJSON_CreateObject();
    if (!config_id)
        amk_config_id(&b->config, id);
    cJSON_AddItemToObject(o, "config", amk_config_to_json(&b->config));
    cJSON_AddStringToObject(o, "config_id", config_id ? config_id : id);
    cli_json_add_num(o, "latency_us", b->latency_us);
    cJSON_AddStringToObject(o, "latency_kind", amk_latency_kind_name(b->kind));
    cli_json_add_num(o, "spread", b->spread);
    cJSON_AddNumberToObject(o, "trial", (double)b->trial);
    cJSON_AddStringToObject(o, "clock_regime", b->clock_regime);
    /* Energy per launch: measured over a counter window (energy_ticks set) or an estimate. */
    cli_json_add_num(o, "energy_uj", b->energy_uj);
    cli_json_add_num(o, "energy_window_ms", b->energy_window_ms);
    if (b->energy_ticks > 0)
        cJSON_AddNumberToObject(o, "energy_ticks", b->energy_ticks);
    else
        cJSON_AddNullToObject(o, "energy_ticks");
    if (b->peer[0] && b->peer_us > 0) { /* timed beside it by amk's harness, same regime */
        cJSON *p = cJSON_AddObjectToObject(o, "vs_peer");
        cJSON_AddStringToObject(p, "peer", b->peer);
        cli_json_add_num(p, "peer_us", b->peer_us);
        cli_json_add_num(p, "speedup", b->vs_peer);
    } else {
        cJSON_AddNullToObject(o, "vs_peer");
    }
    return o;
}
