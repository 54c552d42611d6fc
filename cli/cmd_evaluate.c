/* `amk evaluate`: step 2 of the agent loop. Turns a config JSON (or a whole `amk propose`
 * output) into a config, runs the evaluator pipeline on it and prints the verdict JSON;
 * with --results the trial is appended as a row with source "user". */
#include "cli_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The exit code of a failed evaluation, by the step that failed. */
static int evaluate_fail(cli_ctx *ctx, const char *backend, int e, const amk_evaluate_result *r,
                         amk_diag *d)
{
    switch (r->failed_on) {
    case AMK_EVALUATE_ON_BACKEND: return cli_evaluator_fail(ctx, backend, e, d);
    case AMK_EVALUATE_ON_RESULTS: return cli_fail_diag(ctx, cli_exit_for_results(e), d);
    case AMK_EVALUATE_ON_RUN:
        return cli_fail_diag(ctx, e == AMK_ENOMEM || cli_exit_for(e) == CLI_EXIT_INPUT
                                      ? CLI_EXIT_INTERNAL : cli_exit_for(e), d);
    default: return cli_fail_diag(ctx, cli_exit_for(e), d);
    }
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

    amk_config cfg, *one = NULL;
    size_t n;
    if ((rc = cli_configs(ctx, input, 0, &one, &n)) != 0) /* a config or a propose output */
        return rc;
    cfg = one[0];
    free(one);
    const amk_target *t;
    if ((rc = cli_resolve_target(ctx, &t)) != 0)
        return rc;

    amk_backend_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.target = t->key;
    opts.devices = ndevs > 0 ? devs : NULL; /* --devices all: every device of device 0's model */
    opts.ndevices = ndevs;
    opts.sim_path = amk_backend_sim_file(backend); /* NULL unless sim:FILE */
    amk_evaluate_opts eo = {&cfg, backend, &opts, t, results};
    amk_evaluate_result r;
    amk_diag d;
    amk_diag_clear(&d);
    int e = amk_evaluate_one(&eo, &r, &d);
    if (e != AMK_OK)
        return evaluate_fail(ctx, backend, e, &r, &d);
    const amk_verdict *v = &r.verdict;
    if (cli_tables(ctx)) {
        /* The model and sim backends already name themselves in their device string. */
        int named = strstr(r.device, r.backend) != NULL;
        fprintf(stderr, "%s %s at %s on %s%s%s%s: %s", amk_spec_name(cfg.spec), v->config_id,
                r.shape, r.device, named ? "" : " (", named ? "" : r.backend, named ? "" : ")",
                amk_status_name(v->status));
        if (!isnan(v->latency_us))
            fprintf(stderr, ", %.3f us (%s)", v->latency_us,
                    amk_latency_kind_name(v->latency_kind));
        if (v->reason[0])
            fprintf(stderr, ": %s", v->reason);
        fputc('\n', stderr);
        if (r.logged)
            fprintf(stderr, "logged as trial %lld in %s%s\n", (long long)r.row.trial, results,
                    r.row.kept ? " (new incumbent)" : "");
    }
    char *text = amk_verdict_to_json(v);
    rc = cli_print_json(ctx, text ? cJSON_Parse(text) : NULL);
    free(text);
    return rc;
}
