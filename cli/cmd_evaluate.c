/* `amk evaluate`: step 2 of the agent loop. Turns a config JSON (or a whole `amk propose`
 * output) into a config, runs the evaluator pipeline on it and prints the verdict JSON;
 * with --results the trial is appended as a row with source "user". */
#include "cli_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Reads the config document (a config or a propose output); exit code on failure. */
static int read_config(cli_ctx *ctx, const char *path, amk_config *cfg)
{
    amk_registry *reg;
    int rc = cli_registry(ctx, &reg);
    if (rc)
        return rc;
    amk_config *v = NULL;
    size_t n = 0;
    amk_diag d;
    amk_diag_clear(&d);
    int e = amk_configs_read(reg, path, 0, &v, &n, &d);
    if (e != AMK_OK)
        return cli_fail_diag(ctx, e == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_INPUT, &d);
    *cfg = v[0];
    free(v);
    return CLI_EXIT_OK;
}

int cli_cmd_evaluate(cli_ctx *ctx, int argc, char **argv)
{
    cli_args a;
    int k, rc;
    const char *input = NULL, *backend = "model", *results = NULL, *devices_txt = NULL;
    /* One config runs on one device: device 0 unless --devices says otherwise. */
    int devs[CLI_MAX_DEVICES] = {0}, ndevs = 1;
    cli_args_init(&a, "evaluate", argc, argv);
    while ((k = cli_args_next(&a)) != CLI_ARG_END) {
        if (k == CLI_ARG_POS) {
            if (input)
                cli_args_fail(&a, "unexpected argument '%s' (one CONFIG.json or -)", a.arg);
            input = a.arg;
            continue;
        }
        if (cli_common_option(ctx, &a) || cli_args_value(&a, "--backend", &backend) ||
            cli_args_value(&a, "--results", &results))
            continue;
        if (cli_args_value(&a, "--devices", &devices_txt)) {
            cli_args_devices(&a, "--devices", devices_txt, devs, &ndevs);
            continue;
        }
        cli_args_unknown(&a);
    }
    if ((rc = cli_args_done(ctx, &a)) >= 0)
        return rc;
    if (!input) {
        cli_args_fail(&a, "missing CONFIG.json (a file, or - for stdin)");
        return a.err;
    }
    if ((rc = cli_check_backend(ctx, backend)) != 0)
        return rc;

    amk_config cfg;
    if ((rc = read_config(ctx, input, &cfg)) != 0)
        return rc;
    const amk_target *t;
    if ((rc = cli_resolve_target(ctx, &t)) != 0)
        return rc;

    amk_backend_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.target = t->key;
    opts.devices = ndevs > 0 ? devs : NULL; /* --devices all: every device of device 0's model */
    opts.ndevices = ndevs;
    opts.sim_path = amk_backend_sim_file(backend); /* NULL unless sim:FILE */
    amk_evaluator *ev = NULL;
    if ((rc = cli_evaluator(ctx, backend, &opts, cfg.spec, &cfg.shape, &ev)) != 0)
        return rc;

    char shape[256], device[64];
    amk_shape_format(cfg.spec, &cfg.shape, shape, sizeof shape);
    const amk_target *et = amk_evaluator_target(ev);
    const char *dev = amk_evaluator_device(ev);
    snprintf(device, sizeof device, "%s", dev && *dev ? dev : (et ? et : t)->key);
    const char *used = amk_evaluator_backend(ev);
    char used_backend[32];
    snprintf(used_backend, sizeof used_backend, "%s", used ? used : backend);

    /* Opened and read before the evaluation: a bad file is refused before paying for one. */
    amk_trial_log *lg = NULL;
    amk_diag d;
    amk_diag_clear(&d);
    int e = results ? amk_trial_log_open(results, &cfg, device, &lg, &d) : AMK_OK;
    if (e != AMK_OK) {
        amk_evaluator_free(ev);
        return cli_fail_diag(ctx, cli_exit_for_results(e), &d);
    }
    amk_space *sp = NULL;
    amk_verdict v;
    amk_verdict_init(&v);
    e = amk_space_create(cfg.spec, &cfg.shape, &(et ? et : t)->limits, &sp, &d);
    if (e != AMK_OK) {
        rc = cli_fail_diag(ctx, cli_exit_for(e), &d);
        goto done;
    }
    const amk_config *cp = &cfg;
    e = amk_evaluator_run(ev, sp, &cp, 1, NAN, &v);
    if (e != AMK_OK) {
        rc = cli_fail(ctx, e == AMK_ENOMEM || cli_exit_for(e) == CLI_EXIT_INPUT
                               ? CLI_EXIT_INTERNAL : cli_exit_for(e),
                      "backend %s failed on %s: %s", used_backend, amk_spec_name(cfg.spec),
                      amk_strerror(e));
        goto done;
    }
    if (!v.config_id[0])
        amk_config_id(&cfg, v.config_id);

    amk_row row;
    row.trial = 0;
    row.kept = 0;
    if (lg && (e = amk_trial_log_append(lg, &cfg, device, &v, &row, &d)) != AMK_OK) {
        rc = cli_fail_diag(ctx, cli_exit_for_results(e), &d);
        goto done;
    }

    if (cli_tables(ctx)) {
        /* The model and sim backends already name themselves in their device string. */
        int named = strstr(device, used_backend) != NULL;
        fprintf(stderr, "%s %s at %s on %s%s%s%s: %s", amk_spec_name(cfg.spec), v.config_id,
                shape, device, named ? "" : " (", named ? "" : used_backend, named ? "" : ")",
                amk_status_name(v.status));
        if (!isnan(v.latency_us))
            fprintf(stderr, ", %.3f us (%s)", v.latency_us,
                    amk_latency_kind_name(v.latency_kind));
        if (v.reason[0])
            fprintf(stderr, ": %s", v.reason);
        fputc('\n', stderr);
        if (results)
            fprintf(stderr, "logged as trial %lld in %s%s\n", (long long)row.trial, results,
                    row.kept ? " (new incumbent)" : "");
    }
    {
        char *text = amk_verdict_to_json(&v);
        rc = cli_print_json(ctx, text ? cJSON_Parse(text) : NULL);
        free(text);
    }

done:
    amk_space_free(sp);
    amk_trial_log_close(lg);
    amk_evaluator_free(ev);
    return rc;
}
