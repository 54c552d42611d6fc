/* `amk loop`: runs the search loop of one kernel at one shape on one backend, logging
 * every trial to results.tsv and the best config to best.json, with a progress bar on a
 * terminal and a JSON summary on stdout. */
#include "cli_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    if (isfinite(v->speedup))
        cJSON_AddNullToObject(o, "reason");
    else
        cJSON_AddStringToObject(o, "reason", v->reason);
    return o;
}

/* The exit code of a failed search, by the step that failed. */
static int tune_fail(cli_ctx *ctx, int e, const amk_tune_result *r, const amk_spec *s,
                     amk_diag *d)
{
    if (r->failed_on == AMK_TUNE_ON_RESULTS)
        return cli_fail_diag(ctx, cli_exit_for_results(e), d);
    int code = cli_exit_for(e);
    if (r->failed_on == AMK_TUNE_ON_RUN) {
        if (e == AMK_EBACKEND || e == AMK_EWORKER)
            code = CLI_EXIT_INTERNAL;
        if (!strstr(d->msg, amk_spec_name(s)) && code == CLI_EXIT_INPUT)
            amk_diag_prefix(d, "kernel %s at %s", amk_spec_name(s), r->shape);
    }
    return cli_fail_diag(ctx, code, d);
}

/* What one search needs, parsed once from the command line. */
typedef struct loop_args {
    const amk_spec *s;
    const amk_target *t;
    amk_shape sh;
    const char *strategy, *backend, *results;
    int64_t budget, seed, batch, jobs;
    double time_limit, min_gain, rank_timeout;
    int resume;
} loop_args;

/* One search on one model's devices (devs/ndevs: as amk_backend_opts.devices; NULL/0 = the
 * backend's choice), best config to best_path. Returns an exit code; on success *summary is
 * the JSON summary, or NULL when this process only served an MPI rank 0. */
static int loop_one(cli_ctx *ctx, const loop_args *la, const int *devs, int ndevs,
                    const char *best_path, cJSON **summary)
{
    *summary = NULL;
    amk_backend_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.target = la->t->key;
    opts.jobs = (int)la->jobs;
    opts.seed = (uint64_t)la->seed;
    opts.devices = devs;
    opts.ndevices = ndevs;
    opts.sim_path = amk_backend_sim_file(la->backend); /* NULL unless sim:FILE */
    amk_evaluator *ev = NULL;
    int served = 0; /* an MPI worker rank: it served rank 0 and is done */
    int rc = cli_loop_evaluator(ctx, la->backend, &opts, la->s, &la->sh, la->rank_timeout, &ev,
                                &served);
    if (rc != 0 || served)
        return rc;

    amk_tune_opts o = {.spec = la->s, .shape = la->sh, .target = la->t, .ev = ev,
                       .backend = la->backend, .strategy = la->strategy,
                       .seed = (uint64_t)la->seed, .budget = la->budget,
                       .time_limit_s = la->time_limit, .batch = (int)la->batch,
                       .min_gain = la->min_gain, .results_path = la->results,
                       .best_path = best_path, .resume = la->resume};
    amk_tune_result r;
    amk_diag d;
    amk_diag_clear(&d);
    int e = cli_loop_tune(ctx, &o, &r, &d);
    if (e != AMK_OK) {
        amk_evaluator_free(ev);
        return tune_fail(ctx, e, &r, la->s, &d);
    }

    const amk_loop_result *res = &r.loop;
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kernel", amk_spec_name(la->s));
    cJSON_AddStringToObject(out, "shape", r.shape);
    cJSON_AddStringToObject(out, "backend", r.backend);
    cJSON_AddStringToObject(out, "device", r.device);
    cJSON_AddStringToObject(out, "target", r.target->key);
    if (ndevs > 0 && amk_backend_find(r.backend) && amk_backend_find(r.backend)->devices) {
        cJSON *dl = cJSON_AddArrayToObject(out, "devices");
        for (int k = 0; k < ndevs; k++)
            cJSON_AddItemToArray(dl, cJSON_CreateNumber(devs[k]));
    }
    cJSON_AddNumberToObject(out, "parallelism", r.parallelism);
    cJSON_AddStringToObject(out, "strategy", la->strategy);
    cJSON_AddNumberToObject(out, "seed", (double)la->seed);
    cJSON_AddNumberToObject(out, "budget", (double)la->budget);
    cJSON_AddNumberToObject(out, "min_gain", la->min_gain);
    cJSON_AddNumberToObject(out, "trials", (double)res->trials);
    cJSON_AddNumberToObject(out, "first_trial", (double)res->first_trial);
    cJSON_AddNumberToObject(out, "last_trial", (double)res->last_trial);
    cJSON_AddBoolToObject(out, "resumed", la->resume);
    cJSON_AddBoolToObject(out, "exhausted", res->exhausted);
    cJSON_AddNumberToObject(out, "elapsed_s", round(res->elapsed_s * 1000) / 1000);
    cJSON_AddItemToObject(out, "best", res->best.has ? cli_incumbent_json(&res->best, NULL)
                                                      : cJSON_CreateNull());
    cJSON_AddItemToObject(out, "vs_default", vs_default_json(&r.vs_default));
    cJSON_AddStringToObject(out, "results", la->results);
    if (res->best.has && amk_fs_exists(best_path))
        cJSON_AddStringToObject(out, "best_file", best_path);
    else
        cJSON_AddNullToObject(out, "best_file");
    amk_evaluator_free(ev);
    *summary = out;
    return CLI_EXIT_OK;
}

int cli_cmd_loop(cli_ctx *ctx, int argc, char **argv)
{
    int rc, resume = 0;
    const char *kernel = NULL, *shape_txt = NULL, *strategy = "hillclimb", *backend = "auto";
    const char *results = "results.tsv", *best_path = "best.json";
    int64_t budget = -1, seed = 1, batch = 0, jobs = 0;
    cli_devices devs = {.n = 0};
    double time_limit = 0, min_gain = 0.01, rank_timeout = 0;
    cli_opt opts[] = {
        CLI_STR("--shape", &shape_txt),
        CLI_STR("--strategy", &strategy),
        CLI_STR("--backend", &backend),
        CLI_STR("--results", &results),
        CLI_STR("--best", &best_path),
        CLI_FLAG("--resume", &resume),
        CLI_INT("--budget", &budget, 0, INT64_C(1000000000000)),
        CLI_INT("--seed", &seed, 0, INT64_MAX),
        CLI_INT("--batch", &batch, 1, 4096),
        CLI_INT("--jobs", &jobs, 0, 1024),
        CLI_DEVICES("--devices", &devs),
        CLI_DURATION("--time", &time_limit, "90s, 10m, 1h"),
        CLI_FRACTION("--min-gain", &min_gain),
        CLI_DURATION("--rank-timeout", &rank_timeout, "30, 90s, 10m"), /* cmd_loop_mpi.c */
        CLI_END,
    };
    cli_pos pos = CLI_ONE_KERNEL(&kernel);
    if ((rc = cli_parse(ctx, argc, argv, opts, &pos)) >= 0)
        return rc;
    if (!cli_strategy(ctx, strategy))
        return CLI_EXIT_USAGE;
    if ((rc = cli_check_backend(ctx, backend)) != 0)
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
        (rc = cli_shape(ctx, s, shape_txt, &sh)))
        return rc;

    loop_args la = {s, t, sh, strategy, backend, results, budget, seed, batch, jobs,
                    time_limit, min_gain, rank_timeout, resume};
    amk_device_group *groups = calloc(AMK_MAX_DEVICES, sizeof *groups);
    int ng = 0;
    if (!groups)
        return cli_fail(ctx, CLI_EXIT_INTERNAL, "out of memory");
    amk_diag dd;
    amk_diag_clear(&dd);
    if (amk_device_groups(backend, devs.idx, devs.n, groups, &ng, &dd) != AMK_OK) {
        free(groups);
        return cli_fail_diag(ctx, CLI_EXIT_INPUT, &dd);
    }
    cJSON *out = NULL;
    if (ng <= 1) {
        /* One model: one search (ng == 0: the backend picks, as without --devices). */
        rc = ng ? loop_one(ctx, &la, groups[0].idx, groups[0].n, best_path, &out)
                : loop_one(ctx, &la, devs.n > 0 ? devs.idx : NULL, devs.n, best_path, &out);
        free(groups);
        return rc || !out ? rc : cli_print_json(ctx, out);
    }
    /* Several models: one search per model, one after another, each its own results key
     * (the device column) and its own best file. Not under MPI: every rank would have to
     * go through the same groups in step, and each rank sees only its own host's GPUs. */
    char which[2048];
    amk_device_groups_describe(groups, ng, which, sizeof which);
    if (cli_loop_world_size() > 1) {
        free(groups);
        return cli_fail(ctx, CLI_EXIT_INPUT, "under MPI every rank tunes one GPU model, but "
                        "these devices are of %d (%s): pass --devices of one model", ng, which);
    }
    if (ctx->tables != 0)
        cli_warn(ctx, "note: the devices are of %d models (%s): one search per model, one "
                 "after another", ng, which);
    cJSON *all = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(all, "groups");
    rc = CLI_EXIT_OK;
    for (int gi = 0; gi < ng && rc == CLI_EXIT_OK; gi++) {
        char best[4096];
        amk_best_path_for_model(best_path, groups[gi].name, best, sizeof best);
        rc = loop_one(ctx, &la, groups[gi].idx, groups[gi].n, best, &out);
        if (out)
            cJSON_AddItemToArray(list, out);
    }
    free(groups);
    if (cJSON_GetArraySize(list) == 0) {
        cJSON_Delete(all);
        return rc;
    }
    int prc = cli_print_json(ctx, all);
    return rc ? rc : prc;
}
