/* `amk compile`: compiles kernel templates without running them (CI checks that templates
 * build; users warm the compile cache). Prints one line per compiled unit with its status,
 * compile time and cache hit, and exits non-zero when any failed. The compiler runs in
 * isolated worker processes, so a crashing or hanging compiler is a status, not our death.
 * The plan and the compiles are the evaluator's (amk_compile_plan_*). */
#include "cli_int.h"

#include <math.h>
#include <stdlib.h>

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

/* The plan's notes: what it covers less of than asked for is printed as an error line, as
 * it always was; the others (the limits of an unknown --arch) as a plain line. */
static void plan_note(const char *msg, int warning, void *ud)
{
    if (warning)
        cli_fail(ud, 0, "%s", msg);
    else
        cli_warn(ud, "%s", msg);
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
    if (rc >= 0)
        return rc;
    amk_compile_plan_opts po = {
        .target = ctx->target, .arch = o.arch, .spec_dirs = ctx->spec_dirs,
        .n_spec_dirs = ctx->n_spec_dirs, .kernel = o.kernel, .all = o.all,
        .config_path = o.config, .shape = o.shape, .random = (long)o.random,
        .seed = (uint64_t)o.seed, .no_reference = o.no_reference, .note = plan_note, .ud = ctx,
    };
    amk_compile_plan *p;
    amk_compile_plan_stage on;
    amk_diag d;
    amk_diag_clear(&d);
    int e = amk_compile_plan_build(&po, &p, &on, &d);
    if (e != AMK_OK) /* bad input is 2; out of memory, in any step, 5 */
        return cli_fail_diag(ctx, on == AMK_COMPILE_PLAN_ON_INPUT && e != AMK_ENOMEM
                                      ? CLI_EXIT_INPUT : CLI_EXIT_INTERNAL, &d);
    const char *arch = amk_compile_plan_arch(p);
    amk_backend_opts bo = {0};
    bo.jobs = (int)o.jobs;
    bo.compile_timeout_s = o.timeout_s;
    bo.cache_dir = o.cache_dir;
    double t0 = amk_now_s();
    e = amk_compile_plan_run(p, arch, &bo, &d);
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
