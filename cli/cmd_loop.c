/* `amk loop`: the options, one call to amk_tune_groups (a search per device model, every
 * trial logged to results.tsv, the best config to best.json) and its output: a progress bar
 * on a terminal (loop_ui.c), a JSON summary on stdout, the exit code of a failed step. */
#include "cli_int.h"

#include <math.h>
#include <string.h>

#define LOOP_DEFAULT_BUDGET 100

/* vs_default of the summary (amk_loop_vs_default says how it is found). */
static cJSON *vs_default_json(const amk_vs_default *v)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "config_id", v->config_id);
    cli_json_add_num(o, "default_latency_us", v->default_us);
    if (isfinite(v->default_us))
        cJSON_AddStringToObject(o, "latency_kind", amk_latency_kind_name(v->kind));
    else
        cJSON_AddNullToObject(o, "latency_kind");
    if (v->trial > 0)
        cJSON_AddNumberToObject(o, "default_trial", (double)v->trial);
    else
        cJSON_AddNullToObject(o, "default_trial");
    cli_json_add_num(o, "speedup", v->speedup);
    if (v->beside[0])
        cJSON_AddStringToObject(o, "beside", v->beside);
    else
        cJSON_AddNullToObject(o, "beside");
    if (isfinite(v->speedup))
        cJSON_AddNullToObject(o, "reason");
    else
        cJSON_AddStringToObject(o, "reason", v->reason);
    return o;
}

/* The exit code of a failed plan, by the step that failed. */
static int tune_fail(cli_ctx *ctx, int e, const amk_tune_opts *o, const amk_tune_result *r,
                     amk_diag *d)
{
    switch (r->failed_on) {
    case AMK_TUNE_ON_DEVICES:
        return cli_fail_diag(ctx, e == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_INPUT, d);
    case AMK_TUNE_ON_MPI: return cli_fail_diag(ctx, CLI_EXIT_INTERNAL, d);
    case AMK_TUNE_ON_RANKS:
        return cli_fail_diag(ctx, e == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_NODEV, d);
    case AMK_TUNE_ON_BACKEND: return cli_evaluator_fail(ctx, o->backend, e, d);
    case AMK_TUNE_ON_RESULTS: return cli_fail_diag(ctx, cli_exit_for_results(e), d);
    default: break;
    }
    int code = cli_exit_for(e);
    if (r->failed_on == AMK_TUNE_ON_RUN) {
        if (e == AMK_EBACKEND || e == AMK_EWORKER)
            code = CLI_EXIT_INTERNAL;
        if (!strstr(d->msg, amk_spec_name(o->spec)) && code == CLI_EXIT_INPUT)
            amk_diag_prefix(d, "kernel %s at %s", amk_spec_name(o->spec), r->shape);
    }
    return cli_fail_diag(ctx, code, d);
}

/* The JSON summaries of the searches, one per device model. */
typedef struct summaries {
    const amk_tune_opts *o;
    cJSON *list;
} summaries;

static void add_summary(const amk_tune_result *r, const amk_device_group *g, void *ud)
{
    const amk_tune_opts *o = ((summaries *)ud)->o;
    const amk_loop_result *res = &r->loop;
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kernel", amk_spec_name(o->spec));
    cJSON_AddStringToObject(out, "shape", r->shape);
    cJSON_AddStringToObject(out, "backend", r->backend);
    cJSON_AddStringToObject(out, "device", r->device);
    cJSON_AddStringToObject(out, "target", r->target->key);
    if (g->n > 0 && amk_backend_find(r->backend) && amk_backend_find(r->backend)->devices) {
        cJSON *dl = cJSON_AddArrayToObject(out, "devices");
        for (int k = 0; k < g->n; k++)
            cJSON_AddItemToArray(dl, cJSON_CreateNumber(g->idx[k]));
    }
    cJSON_AddNumberToObject(out, "parallelism", r->parallelism);
    cJSON_AddStringToObject(out, "strategy", o->strategy);
    amk_backend_opts bo = {0};
    cJSON_AddStringToObject(out, "objective",
                            amk_objective_name(amk_backend_opts_objective(&bo, o->objective)));
    cJSON_AddNumberToObject(out, "seed", (double)o->seed);
    cJSON_AddNumberToObject(out, "budget", (double)o->budget);
    cJSON_AddNumberToObject(out, "min_gain", o->min_gain);
    cJSON_AddNumberToObject(out, "trials", (double)res->trials);
    cJSON_AddNumberToObject(out, "first_trial", (double)res->first_trial);
    cJSON_AddNumberToObject(out, "last_trial", (double)res->last_trial);
    cJSON_AddBoolToObject(out, "resumed", o->resume);
    cJSON_AddBoolToObject(out, "exhausted", res->exhausted);
    cJSON_AddNumberToObject(out, "elapsed_s", round(res->elapsed_s * 1000) / 1000);
    if (isfinite(res->setup_s))
        cJSON_AddNumberToObject(out, "setup_s", round(res->setup_s * 1000) / 1000);
    else
        cJSON_AddNullToObject(out, "setup_s");
    cJSON_AddItemToObject(out, "best", res->best.has ? cli_incumbent_json(&res->best, NULL)
                                                      : cJSON_CreateNull());
    cJSON_AddItemToObject(out, "vs_default", vs_default_json(&r->vs_default));
    cJSON_AddStringToObject(out, "results", o->results_path);
    if (res->best.has && amk_fs_exists(r->best_file))
        cJSON_AddStringToObject(out, "best_file", r->best_file);
    else
        cJSON_AddNullToObject(out, "best_file");
    cJSON_AddItemToArray(((summaries *)ud)->list, out);
}

int cli_cmd_loop(cli_ctx *ctx, int argc, char **argv)
{
    int rc, resume = 0, no_default = 0;
    const char *kernel = NULL, *shape_txt = NULL, *dtype = NULL, *strategy = amk_strategies[0]->name;
    const char *backend = "auto";
    const char *results = "results.tsv", *best_path = "best.json", *regime = NULL;
    const char *objective = NULL;
    int64_t budget = -1, seed = 1, batch = 0, jobs = 0;
    cli_devices devs = {.n = 0};
    double time_limit = 0, min_gain = AMK_HISTORY_MIN_GAIN, rank_timeout = 0;
    cli_opt opts[] = {
        CLI_STR("--shape", &shape_txt), CLI_STR("--dtype", &dtype),
        CLI_STR("--strategy", &strategy),
        CLI_STR("--backend", &backend),
        CLI_STR("--objective", &objective),
        CLI_STR("--results", &results),
        CLI_STR("--best", &best_path),
        CLI_FLAG("--resume", &resume),
        CLI_FLAG("--no-default", &no_default),
        CLI_INT("--budget", &budget, 0, INT64_C(1000000000000)),
        CLI_INT("--seed", &seed, 0, INT64_MAX),
        CLI_INT("--batch", &batch, 1, 4096),
        CLI_INT("--jobs", &jobs, 1, 1024),
        CLI_STR("--regime", &regime),
        CLI_DEVICES("--devices", &devs),
        CLI_DURATION("--time", &time_limit, "90s, 10m, 1h"),
        CLI_FRACTION("--min-gain", &min_gain),
        CLI_DURATION("--rank-timeout", &rank_timeout, "30, 90s, 10m"), /* MPI only */
        CLI_END,
    };
    cli_pos pos = CLI_ONE_KERNEL(&kernel);
    if ((rc = cli_parse(ctx, argc, argv, opts, &pos)) >= 0)
        return rc;
    if (!cli_strategy(ctx, strategy))
        return CLI_EXIT_USAGE;
    if ((rc = cli_check_backend(ctx, backend)) != 0 || (rc = cli_check_regime(ctx, regime)) ||
        (rc = cli_check_objective(ctx, backend, objective)) != 0)
        return rc;
    if (budget < 0)
        budget = time_limit > 0 ? 0 : LOOP_DEFAULT_BUDGET;
    if (!strcmp(results, best_path))
        return cli_fail(ctx, CLI_EXIT_USAGE, "--results and --best name the same file '%s'",
                        results);

    const amk_spec *s;
    const amk_target *t;
    amk_shape sh;
    if ((rc = cli_kernel(ctx, kernel, &s)) || (rc = cli_resolve_target(ctx, &t)) ||
        (rc = cli_shape(ctx, s, shape_txt, dtype, &sh)))
        return rc;

    amk_tune_opts o = {.spec = s, .shape = sh, .target = t,
                       .target_named = amk_target_named(ctx->target) != NULL,
                       .backend = backend,
                       .objective = objective,
                       .strategy = strategy, .seed = (uint64_t)seed, .no_default = no_default,
                       .budget = budget,
                       .time_limit_s = time_limit, .batch = (int)batch, .min_gain = min_gain,
                       .results_path = results, .best_path = best_path, .resume = resume,
                       .jobs = (int)jobs, .regime = regime, .devices = devs.idx,
                       .ndevices = devs.n,
                       .rank_timeout_s = rank_timeout, .done = add_summary};
    cJSON *all = cJSON_CreateObject();
    summaries sum = {&o, cJSON_AddArrayToObject(all, "groups")};
    o.ud = &sum;
    amk_tune_result r;
    amk_diag d;
    amk_diag_clear(&d);
    int e = cli_loop_tune(ctx, &o, &r, &d);
    rc = e == AMK_OK ? CLI_EXIT_OK : tune_fail(ctx, e, &o, &r, &d);
    if (cJSON_GetArraySize(sum.list) == 0) { /* a failure, or an MPI worker rank */
        cJSON_Delete(all);
        return rc;
    }
    /* One model (or the backend's choice): its summary; several: each one that ran. */
    cJSON *out = r.ngroups > 1 ? all : cJSON_DetachItemFromArray(sum.list, 0);
    if (out != all)
        cJSON_Delete(all);
    int prc = cli_print_json(ctx, out);
    return rc ? rc : prc;
}
