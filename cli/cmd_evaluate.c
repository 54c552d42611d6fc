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
    int rc;
    const char *input = NULL, *backend = "model", *results = NULL, *regime = NULL;
    const char *objective = NULL;
    /* One config runs on one device: device 0 unless --devices says otherwise. */
    cli_devices devs = {.idx = {0}, .n = 1};
    cli_opt opts[] = {
        CLI_STR("--backend", &backend),
        CLI_STR("--objective", &objective),
        CLI_STR("--results", &results),
        CLI_DEVICES("--devices", &devs),
        CLI_STR("--regime", &regime),
        CLI_END,
    };
    cli_pos pos = {&input, 1, NULL, "unexpected argument '%s' (one CONFIG.json or -)",
                   "missing CONFIG.json (a file, or - for stdin)"};
    if ((rc = cli_parse(ctx, argc, argv, opts, &pos)) >= 0)
        return rc;
    if ((rc = cli_check_backend(ctx, backend)) != 0 || (rc = cli_check_regime(ctx, regime)) ||
        (rc = cli_check_objective(ctx, backend, objective)) != 0)
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

    /* --devices all (n = 0): every device of device 0's model. */
    amk_backend_opts bo = {.target = amk_target_named(ctx->target) ? t->key : NULL,
                           .devices = devs.n ? devs.idx : NULL, .ndevices = devs.n,
                           .regime = regime};
    amk_backend_opts_objective(&bo, objective);
    amk_evaluate_opts eo = {&cfg, backend, &bo, t, results};
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
        if (v->energy_ticks > 0)
            fprintf(stderr, ", %.6g J/launch (+-%.1f%%)", v->energy_uj * 1e-6,
                    100 * amk_energy_noise(v->energy_ticks));
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
