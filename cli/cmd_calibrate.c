/* `amk calibrate`: measure a device's ceilings (device-copy bandwidth with the built-in
 * `copy` kernel, f32 FMA throughput with `fma`) by tuning both exhaustively on the gpu
 * backend, and store them where the cost model picks them up; or, with --fit, fit the cost
 * model's prediction to measured rows of results files and report the rank correlation. */
#include "cli_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char cli_help_calibrate[] =
    "usage: amk calibrate [--backend gpu] [--results FILE] [--jobs N] [--spec-dir DIR]...\n"
    "       amk calibrate --fit RESULTS.tsv... [--kernel K] [--target T]\n"
    "\n"
    "Without --fit: measures the ceilings of the GPU the gpu backend finds: device-copy\n"
    "bandwidth (kernel `copy`, every config at its default shape, best kept) and f32 FMA\n"
    "throughput (kernel `fma`). Every trial is checked against the reference and logged to\n"
    "FILE (default: <cache dir>/calibrate/results.tsv). The ceilings are written to\n"
    "<cache dir>/ceilings/<target>.json, where every later run's cost model reads them\n"
    "(measured ceilings replace datasheet ones in the prediction; the roofline floor keeps\n"
    "the larger of the two so it stays a lower bound). Prints JSON:\n"
    "  {target, device, bw_measured, simt_f32_measured, ceilings_file, results}\n"
    "Exit 4 when no GPU answers.\n"
    "\n"
    "With --fit: fits measured ~ c0 + c1*compute + c2*memory (GSL least squares) over the\n"
    "measured `ok` rows of the files (optionally one kernel), on target T, and prints\n"
    "  {n, skipped, coefficients: [c0, c1, c2], chisq, r2, spearman_before, spearman_after}\n"
    "where spearman_* is the rank correlation of predicted vs measured latency before and\n"
    "after the fit. Needs at least 4 measured rows.\n";

static int fit(cli_ctx *ctx, const char **files, int n, const char *kernel)
{
    amk_registry *reg;
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
        fprintf(stderr, "fit over %zu measured trials (%zu skipped): measured = %.3g + %.3g*compute "
                        "+ %.3g*memory, r2 %.3f, Spearman %.3f -> %.3f\n",
                cal.n, skipped, cal.c[0], cal.c[1], cal.c[2], cal.r2, cal.spearman_before,
                cal.spearman_after);
    return cli_print_json(ctx, o);
}

/* Tunes one calibration kernel exhaustively at its default shape; *best_rate gets
 * work / best latency, where work is flops (fma) or minimum bytes (copy). */
static int measure(cli_ctx *ctx, const char *kernel, const char *backend,
                   const amk_backend_opts *opts, const char *results, int use_flops,
                   double *best_rate, amk_target *target, char *device, size_t devcap)
{
    const amk_spec *s;
    amk_shape sh;
    int rc;
    if ((rc = cli_kernel(ctx, kernel, &s)) || (rc = cli_shape(ctx, s, NULL, &sh)))
        return rc;
    amk_evaluator *ev = NULL;
    if ((rc = cli_evaluator(ctx, backend, opts, s, &sh, &ev)) != 0)
        return rc;
    *target = *amk_evaluator_target(ev);
    snprintf(device, devcap, "%s", amk_evaluator_device(ev));
    amk_space *sp = NULL;
    amk_diag d;
    amk_diag_clear(&d);
    int e = amk_space_create(s, &sh, &target->limits, &sp, &d);
    amk_loop_opts lo = {.space = sp, .ev = ev, .strategy = "exhaustive",
                        .results_path = results, .batch = 16};
    amk_loop_result res;
    if (e == AMK_OK)
        e = amk_loop_run(&lo, &res, &d);
    if (e == AMK_OK && !(res.best.has && res.best.kind == AMK_LAT_MEASURED))
        e = amk_diag_set(&d, AMK_EBACKEND, "%s: no config was measured correct (see %s)",
                         kernel, results);
    amk_cost_terms cost;
    if (e == AMK_OK && (e = amk_config_cost(&res.best.config, &target->limits, &cost, &d)) == AMK_OK)
        *best_rate = (use_flops ? (double)cost.flops : (double)cost.min_bytes) /
                     (res.best.latency_us * 1e-6);
    amk_space_free(sp);
    amk_evaluator_free(ev);
    if (e != AMK_OK)
        return cli_fail_diag(ctx, e == AMK_EBACKEND ? CLI_EXIT_INTERNAL : cli_exit_for_results(e), &d);
    if (cli_tables(ctx))
        fprintf(stderr, "%s: best of %lld trials: %.1f us -> %.3g %s\n", kernel,
                (long long)res.trials, res.best.latency_us, *best_rate / 1e12,
                use_flops ? "TFLOP/s" : "TB/s");
    return CLI_EXIT_OK;
}

int cli_cmd_calibrate(cli_ctx *ctx, int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, "calibrate", argc, argv);
    const char *files[64], *kernel = NULL, *backend = "gpu", *results = NULL, *jobs_txt = NULL;
    int n_files = 0, do_fit = 0, k;
    while ((k = cli_args_next(&a)) != CLI_ARG_END) {
        if (k == CLI_ARG_POS) {
            if (n_files == 64)
                cli_args_fail(&a, "at most 64 results files");
            else
                files[n_files++] = a.arg;
            continue;
        }
        if (cli_common_option(ctx, &a) || cli_args_value(&a, "--kernel", &kernel) ||
            cli_args_value(&a, "--backend", &backend) ||
            cli_args_value(&a, "--results", &results) || cli_args_value(&a, "--jobs", &jobs_txt))
            continue;
        if (cli_args_flag(&a, "--fit")) {
            do_fit = 1;
            continue;
        }
        cli_args_unknown(&a);
    }
    int done = cli_args_done(ctx, &a); /* prints the help after --help */
    if (done >= 0)
        return done;
    if (do_fit) {
        if (n_files == 0)
            return cli_fail(ctx, CLI_EXIT_USAGE, "--fit needs at least one results file");
        return fit(ctx, files, n_files, kernel);
    }
    if (n_files > 0)
        return cli_fail(ctx, CLI_EXIT_USAGE, "unexpected argument '%s' (results files go with --fit)",
                        files[0]);
    int64_t jobs = 0;
    if (jobs_txt && !cli_args_int(&a, "--jobs", jobs_txt, 0, 1024, &jobs))
        return a.err;
    int rc = cli_check_backend(ctx, backend);
    if (rc)
        return rc;

    amk_backend_opts opts;
    static const int device0 = 0; /* ceilings are measured on one device */
    memset(&opts, 0, sizeof opts);
    opts.jobs = (int)jobs;
    opts.seed = 1;
    opts.devices = &device0;
    opts.ndevices = 1;
    opts.sim_path = amk_backend_sim_file(backend); /* NULL unless sim:FILE */
    char path[4096], dir[3072];
    if (!results) {
        if (amk_fs_cache_dir(dir, sizeof dir) != AMK_OK)
            return cli_fail(ctx, CLI_EXIT_INTERNAL, "cannot find a cache directory");
        snprintf(path, sizeof path, "%s/calibrate", dir);
        amk_diag d;
        amk_diag_clear(&d);
        if (amk_fs_mkdir_p(path, &d) != AMK_OK)
            return cli_fail_diag(ctx, CLI_EXIT_RESULTS, &d);
        snprintf(path, sizeof path, "%s/calibrate/results.tsv", dir);
        results = path;
    }
    amk_target t;
    char device[64];
    double bw = 0, flops = 0;
    if ((rc = measure(ctx, "copy", backend, &opts, results, 0, &bw, &t, device, sizeof device)) ||
        (rc = measure(ctx, "fma", backend, &opts, results, 1, &flops, &t, device, sizeof device)))
        return rc;
    t.bw_measured = bw;
    t.measured[AMK_UNIT_SIMT_F32] = flops;
    char ceil_path[4096];
    amk_ceilings_path(&t, ceil_path, sizeof ceil_path);
    amk_diag d;
    amk_diag_clear(&d);
    if (amk_ceilings_save(&t, ceil_path, &d) != AMK_OK)
        return cli_fail_diag(ctx, CLI_EXIT_RESULTS, &d);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "target", t.key);
    cJSON_AddStringToObject(o, "device", device);
    cJSON_AddNumberToObject(o, "bw_measured", bw);
    cJSON_AddNumberToObject(o, "simt_f32_measured", flops);
    cJSON_AddStringToObject(o, "ceilings_file", ceil_path);
    cJSON_AddStringToObject(o, "results", results);
    return cli_print_json(ctx, o);
}
