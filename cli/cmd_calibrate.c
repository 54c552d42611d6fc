/* `amk calibrate`: measure a device's ceilings (device-copy bandwidth with the built-in
 * `copy` kernel, f32 FMA throughput with `fma`) by tuning both exhaustively on the gpu
 * backend, and store them where the cost model picks them up; or, with --fit, fit the cost
 * model's prediction to measured rows of results files and report the rank correlation. */
#include "cli_int.h"

static int fit(cli_ctx *ctx, const char **files, int n, const char *kernel)
{
    amk_registry *reg = NULL;
    const amk_target *t;
    int rc;
    if ((rc = cli_registry(ctx, &reg)) || (rc = cli_resolve_target(ctx, &t)))
        return rc;
    amk_calibration cal;
    size_t skipped = 0;
    amk_diag d;
    amk_diag_clear(&d);
    int e = amk_calibrate_fit(reg, files, (size_t)n, kernel, t, &cal, &skipped, &d);
    if (e != AMK_OK)
        return cli_fail_diag(ctx, e == AMK_EINVAL ? CLI_EXIT_INPUT : cli_exit_for_results(e), &d);
    cJSON *o = cJSON_CreateObject(), *c = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "target", t->key);
    cJSON_AddNumberToObject(o, "n", (double)cal.n);
    cJSON_AddNumberToObject(o, "skipped", (double)skipped);
    for (int k = 0; k < 3; k++)
        cJSON_AddItemToArray(c, cli_json_num(cal.c[k]));
    cJSON_AddItemToObject(o, "coefficients", c);
    cli_json_add_num(o, "chisq", cal.chisq);
    cli_json_add_num(o, "r2", cal.r2);
    cli_json_add_num(o, "spearman_before", cal.spearman_before);
    cli_json_add_num(o, "spearman_after", cal.spearman_after);
    if (cli_tables(ctx))
        fprintf(stderr, "fit over %zu measured trials (%zu skipped): measured = %.3g + "
                        "%.3g*compute + %.3g*memory, r2 %.3f, Spearman %.3f -> %.3f\n",
                cal.n, skipped, cal.c[0], cal.c[1], cal.c[2], cal.r2, cal.spearman_before,
                cal.spearman_after);
    return cli_print_json(ctx, o);
}

/* The exit code of a failed measurement: by the step that failed. */
static int measure_fail(cli_ctx *ctx, const char *backend, int e, const amk_calibration_run *r,
                        amk_diag *d)
{
    switch (r->stage) {
    case AMK_CALIBRATE_ON_BACKEND: return cli_evaluator_fail(ctx, backend, e, d);
    case AMK_CALIBRATE_ON_RUN:
        return cli_fail_diag(ctx, e == AMK_EBACKEND ? CLI_EXIT_INTERNAL
                                                    : cli_exit_for_results(e), d);
    case AMK_CALIBRATE_ON_SPEC: return cli_fail_diag(ctx, CLI_EXIT_INPUT, d);
    default: return cli_fail_diag(ctx, cli_exit_for_results(e), d);
    }
}

static void print_measure(const amk_ceiling_measure *m)
{
    if (m->rate > 0)
        fprintf(stderr, "%s: best of %lld trials: %.1f us -> %.3g %s\n", m->kernel,
                (long long)m->trials, m->best_us, m->rate / 1e12,
                m->flops ? "TFLOP/s" : "TB/s");
}

int cli_cmd_calibrate(cli_ctx *ctx, int argc, char **argv)
{
    const char *files[64], *kernel = NULL, *backend = "gpu", *results = NULL, *jobs_txt = NULL;
    int n_files = 0, do_fit = 0;
    cli_opt opts[] = {
        CLI_STR("--kernel", &kernel),
        CLI_STR("--backend", &backend),
        CLI_STR("--results", &results),
        CLI_STR("--jobs", &jobs_txt), /* checked only when measuring */
        CLI_FLAG("--fit", &do_fit),
        CLI_END,
    };
    cli_pos pos = {files, 64, &n_files, "at most 64 results files", NULL};
    int rc = cli_parse(ctx, argc, argv, opts, &pos);
    if (rc >= 0)
        return rc;
    if (do_fit) {
        if (n_files == 0)
            return cli_fail(ctx, CLI_EXIT_USAGE, "--fit needs at least one results file");
        return fit(ctx, files, n_files, kernel);
    }
    if (n_files > 0)
        return cli_fail(ctx, CLI_EXIT_USAGE,
                        "unexpected argument '%s' (results files go with --fit)", files[0]);
    int64_t jobs = 0;
    if (jobs_txt && (rc = cli_int_option(ctx, "--jobs", jobs_txt, 1, 1024, &jobs)) != 0)
        return rc;
    if ((rc = cli_check_backend(ctx, backend)) != 0)
        return rc;

    amk_backend_opts bo = {.jobs = (int)jobs, .seed = 1}; /* on device 0 */
    amk_registry *reg = NULL;
    if ((rc = cli_registry(ctx, &reg)) != 0)
        return rc;
    amk_calibration_run run;
    amk_diag d;
    amk_diag_clear(&d);
    int e = amk_calibrate_measure(reg, backend, &bo, results, &run, &d);
    if (cli_tables(ctx)) {
        print_measure(&run.copy);
        print_measure(&run.fma);
    }
    if (e != AMK_OK)
        return measure_fail(ctx, backend, e, &run, &d);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "target", run.target.key);
    cJSON_AddStringToObject(o, "device", run.device);
    cJSON_AddNumberToObject(o, "bw_measured", run.copy.rate);
    cJSON_AddNumberToObject(o, "simt_f32_measured", run.fma.rate);
    cJSON_AddStringToObject(o, "ceilings_file", run.ceilings_file);
    cJSON_AddStringToObject(o, "results", run.results);
    return cli_print_json(ctx, o);
}
