/* `amk compile`: compiles kernel templates without running them (CI checks that templates
 * build; users warm the compile cache). Prints one line per compiled unit with its status,
 * compile time and cache hit, and exits non-zero when any failed. The compiler runs in
 * isolated worker processes, so a crashing or hanging compiler is a status, not our death.
 * The plan and the compiles are the evaluator's (amk_compile_plan_*). */
#include "cli_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct compile_args {
    const char *kernel, *arch, *shape, *config, *cache_dir;
    int all, json, no_reference;
    int64_t random, jobs, seed;
    double timeout_s;
} compile_args;

/* Parses argv; returns -1 to go on, or an exit code (0 after --help). */
static int parse(cli_ctx *ctx, int argc, char **argv, compile_args *o)
{
    cli_opt opts[] = {
        CLI_STR("--arch", &o->arch),
        CLI_STR("--shape", &o->shape),
        CLI_STR("--config", &o->config),
        CLI_STR("--cache-dir", &o->cache_dir),
        CLI_FLAG("--all", &o->all),
        CLI_FLAG("--json", &o->json),
        CLI_FLAG("--no-reference", &o->no_reference),
        CLI_INT("--random", &o->random, 0, 100000),
        CLI_INT("--seed", &o->seed, 0, 0x7fffffff),
        CLI_INT("--jobs", &o->jobs, 1, 1024),
        CLI_DURATION("--timeout", &o->timeout_s, "30s, 2m"),
        CLI_END,
    };
    cli_pos pos = {&o->kernel, 1, NULL, "more than one KERNEL given ('%s')", NULL};
    int rc = cli_parse(ctx, argc, argv, opts, &pos);
    if (rc < 0 && !o->kernel && !o->all && !o->config)
        rc = cli_usage(ctx, "name a KERNEL, --all or --config FILE");
    if (rc < 0 && o->all && o->kernel)
        rc = cli_usage(ctx, "give KERNEL or --all, not both ('%s')", o->kernel);
    return rc;
}

/* The target whose limits decide which configs are valid: --target, else the target of
 * --arch, else the default. */
static int compile_target(cli_ctx *ctx, const compile_args *o, const amk_target **t)
{
    if (ctx->target || !o->arch)
        return cli_resolve_target(ctx, t);
    if ((*t = amk_target_find(o->arch)) != NULL)
        return CLI_EXIT_OK;
    *t = amk_target_default();
    cli_warn(ctx, "no known target has arch %s; using %s's limits to pick valid configs",
             o->arch, (*t)->key);
    return CLI_EXIT_OK;
}

static void plan_warning(const char *msg, void *ud)
{
    cli_fail(ud, 0, "%s", msg);
}

/* Default + random configs of one kernel. */
static int plan_kernel(cli_ctx *ctx, const compile_args *o, amk_compile_plan *p,
                       const amk_spec *s)
{
    amk_shape sh;
    amk_diag d;
    amk_diag_clear(&d);
    if (o->shape && amk_shape_parse(s, o->shape, &sh, &d) != AMK_OK)
        return cli_fail(ctx, CLI_EXIT_INPUT, "%s: --shape: %s", amk_spec_name(s), d.msg);
    if (!o->shape)
        amk_spec_shape(s, 0, &sh);
    int e = amk_compile_plan_kernel(p, s, &sh, (long)o->random, &d);
    return e == AMK_OK ? -1 : cli_fail_diag(ctx, e == AMK_ENOMEM ? CLI_EXIT_INTERNAL
                                                                   : CLI_EXIT_INPUT, &d);
}

/* Configs from --config FILE (an object or an array of them). */
static int plan_config_file(cli_ctx *ctx, const compile_args *o, amk_compile_plan *p)
{
    amk_config *v = NULL;
    size_t n = 0;
    amk_diag d;
    amk_diag_clear(&d);
    int rc = cli_configs(ctx, o->config, 1, &v, &n);
    if (rc)
        return rc;
    rc = -1;
    for (size_t i = 0; i < n && rc < 0; i++) {
        if (o->kernel && strcmp(o->kernel, amk_spec_name(v[i].spec)) != 0)
            rc = cli_fail(ctx, CLI_EXIT_INPUT, "%s: config %zu is for kernel '%s', not '%s'",
                          o->config, i, amk_spec_name(v[i].spec), o->kernel);
        else if (amk_compile_plan_config(p, &v[i], &d) != AMK_OK)
            rc = cli_fail_diag(ctx, CLI_EXIT_INTERNAL, &d);
    }
    free(v);
    return rc;
}

/* The units of the command line, in order. Returns -1 to go on, or an exit code. */
static int plan_units(cli_ctx *ctx, const compile_args *o, amk_compile_plan *p)
{
    int rc = -1;
    amk_registry *reg = NULL;
    if (o->config)
        rc = plan_config_file(ctx, o, p);
    else if (o->all) {
        if ((rc = cli_registry(ctx, &reg)) != 0)
            return rc;
        rc = -1;
        for (int i = 0; i < amk_registry_count(reg) && rc < 0; i++)
            rc = plan_kernel(ctx, o, p, amk_registry_at(reg, i));
    } else {
        const amk_spec *s;
        if ((rc = cli_kernel(ctx, o->kernel, &s)) != 0)
            return rc;
        rc = plan_kernel(ctx, o, p, s);
    }
    amk_diag d;
    amk_diag_clear(&d);
    if (rc < 0 && !o->no_reference && amk_compile_plan_references(p, &d) != AMK_OK)
        rc = cli_fail_diag(ctx, CLI_EXIT_INTERNAL, &d);
    return rc;
}

static void print_units(const amk_compile_job *v, size_t n, int json)
{
    if (json) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; arr && i < n; i++) {
            const amk_compile_job *u = &v[i];
            cJSON *o = cJSON_CreateObject();
            if (!o)
                break;
            cJSON_AddStringToObject(o, "kernel", amk_spec_name(u->spec));
            cJSON_AddStringToObject(o, "kind", u->reference ? "reference" : "config");
            cJSON_AddStringToObject(o, "config_id", u->res.config_id);
            cJSON_AddStringToObject(o, "status", amk_status_name(u->res.status));
            if (isnan(u->res.compile_ms))
                cJSON_AddNullToObject(o, "compile_ms");
            else
                cJSON_AddNumberToObject(o, "compile_ms", round(u->res.compile_ms * 10) / 10);
            cJSON_AddBoolToObject(o, "cache_hit", u->res.cache_hit);
            cJSON_AddNumberToObject(o, "code_bytes", (double)u->res.code_bytes);
            cJSON_AddStringToObject(o, "reason", u->res.reason);
            cJSON_AddStringToObject(o, "notes", u->res.notes);
            cJSON_AddItemToArray(arr, o);
        }
        char *txt = arr ? cJSON_Print(arr) : NULL;
        if (txt)
            printf("%s\n", txt);
        free(txt);
        cJSON_Delete(arr);
        return;
    }
    printf("%-16s %-9s %-16s %-15s %10s %s\n", "kernel", "kind", "config_id", "status",
           "compile_ms", "cache");
    for (size_t i = 0; i < n; i++) {
        const amk_compile_job *u = &v[i];
        char ms[32];
        if (isnan(u->res.compile_ms))
            snprintf(ms, sizeof ms, "-");
        else
            snprintf(ms, sizeof ms, "%.1f", u->res.compile_ms);
        printf("%-16s %-9s %-16s %-15s %10s %s\n", amk_spec_name(u->spec),
               u->reference ? "reference" : "config", u->res.config_id,
               amk_status_name(u->res.status), ms,
               u->res.status == AMK_STATUS_REJECTED ? "-"
                                                    : (u->res.cache_hit ? "hit" : "miss"));
        if (u->res.status != AMK_STATUS_OK) {
            if (u->res.reason[0])
                printf("    reason: %s\n", u->res.reason);
            if (u->res.notes[0])
                printf("    %s\n", u->res.notes);
        }
    }
}

/* The summary line on stderr: units by status, compiles and cache hits, throughput. */
static void print_summary(const amk_compile_job *v, size_t n, const char *arch, double wall)
{
    size_t by[AMK_STATUS_COUNT] = {0}, hits = 0, compiled = 0;
    for (size_t i = 0; i < n; i++) {
        by[v[i].res.status]++;
        hits += v[i].res.cache_hit != 0;
        compiled += !v[i].res.cache_hit && v[i].res.status != AMK_STATUS_REJECTED;
    }
    fprintf(stderr, "amk compile: %zu units for %s: %zu ok", n, arch, by[AMK_STATUS_OK]);
    for (int s = 0; s < AMK_STATUS_COUNT; s++)
        if (s != AMK_STATUS_OK && by[s])
            fprintf(stderr, ", %zu %s", by[s], amk_status_name((amk_status)s));
    fprintf(stderr, "; %zu compiled, %zu cache hits; %.2f s wall, %.2f units/s\n", compiled, hits,
            wall, wall > 0 ? (double)(n - by[AMK_STATUS_REJECTED]) / wall : 0.0);
}

int cli_cmd_compile(cli_ctx *ctx, int argc, char **argv)
{
    compile_args o = {.seed = 1};
    int rc = parse(ctx, argc, argv, &o);
    const amk_target *t;
    if (rc >= 0 || (rc = compile_target(ctx, &o, &t)) != 0)
        return rc;
    const char *arch = o.arch ? o.arch : t->arch;
    amk_compile_plan *p = amk_compile_plan_create(t, (uint64_t)o.seed, plan_warning, ctx);
    if (!p)
        return cli_fail(ctx, CLI_EXIT_INTERNAL, "out of memory");
    if ((rc = plan_units(ctx, &o, p)) >= 0) {
        amk_compile_plan_free(p);
        return rc;
    }
    amk_backend_opts bo = {0};
    bo.jobs = (int)o.jobs;
    bo.compile_timeout_s = o.timeout_s;
    bo.cache_dir = o.cache_dir;
    amk_diag d;
    amk_diag_clear(&d);
    double t0 = amk_now_s();
    int e = amk_compile_plan_run(p, arch, &bo, &d);
    double wall = amk_now_s() - t0;
    if (e != AMK_OK) {
        amk_compile_plan_free(p);
        return cli_fail_diag(ctx, e == AMK_EUNSUPPORTED ? CLI_EXIT_NODEV
                                  : e == AMK_EINVAL     ? CLI_EXIT_USAGE
                                                        : CLI_EXIT_INTERNAL, &d);
    }
    size_t n, ok = 0;
    const amk_compile_job *v = amk_compile_plan_units(p, &n);
    print_units(v, n, o.json);
    for (size_t i = 0; i < n; i++)
        ok += v[i].res.status == AMK_STATUS_OK;
    if (ctx->tables != 0)
        print_summary(v, n, arch, wall);
    amk_compile_plan_free(p);
    return ok == n ? CLI_EXIT_OK : CLI_EXIT_COMPILE;
}
