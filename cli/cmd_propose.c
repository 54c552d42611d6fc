/* `amk propose`: step 1 of the agent loop. Replays the recorded trials of one kernel/shape
 * into a search strategy and prints the next config to try, the search space and the
 * incumbent as JSON, for an agent to edit and hand to `amk evaluate`. */
#include "cli_int.h"

#include <stdlib.h>

/* The incumbent as `amk loop`'s best, and where it was measured: its row's device and
 * source. */
static cJSON *incumbent_json(const amk_proposal_result *p)
{
    const amk_row *r = &p->incumbent;
    amk_incumbent b = {.has = 1, .config = p->incumbent_config};
    amk_incumbent_set_row(&b, r);
    cJSON *o = cli_incumbent_json(&b, r->config_id);
    cJSON_AddStringToObject(o, "device", r->device);
    cJSON_AddStringToObject(o, "source", r->source);
    return o;
}

int cli_cmd_propose(cli_ctx *ctx, int argc, char **argv)
{
    int rc;
    const char *kernel = NULL, *shape_txt = NULL, *dtype = NULL, *results = NULL;
    const char *strategy = amk_strategies[0]->name, *objective = NULL;
    int64_t seed = 1;
    cli_opt opts[] = {
        CLI_STR("--shape", &shape_txt), CLI_STR("--dtype", &dtype),
        CLI_STR("--results", &results),
        CLI_STR("--objective", &objective),
        CLI_STR("--strategy", &strategy),
        CLI_INT("--seed", &seed, 0, INT64_MAX),
        CLI_END,
    };
    cli_pos pos = CLI_ONE_KERNEL(&kernel);
    if ((rc = cli_parse(ctx, argc, argv, opts, &pos)) >= 0)
        return rc;
    const amk_strategy_type *st = cli_strategy(ctx, strategy);
    if (!st)
        return CLI_EXIT_USAGE;
    amk_objective obj = AMK_OBJ_TIME;
    if (objective && amk_objective_parse(objective, &obj) != AMK_OK)
        return cli_usage(ctx, "--objective %s: not an objective (time, energy or edp)",
                         objective);

    const amk_spec *s;
    const amk_target *t;
    amk_shape sh;
    if ((rc = cli_kernel(ctx, kernel, &s)) || (rc = cli_resolve_target(ctx, &t)) ||
        (rc = cli_shape(ctx, s, shape_txt, dtype, &sh)))
        return rc;
    char shape[256];
    amk_shape_format(s, &sh, shape, sizeof shape);
    amk_propose_opts po = {s, sh, t, st, (uint64_t)seed, results, obj};
    amk_proposal_result p;
    amk_diag d;
    amk_diag_clear(&d);
    int e = amk_propose(&po, &p, &d);
    if (p.no_file && cli_tables(ctx))
        cli_warn(ctx, "%s does not exist yet: no history", results);
    if (e != AMK_OK)
        return cli_fail_diag(ctx, p.failed_on == AMK_PROPOSE_ON_RESULTS ? cli_exit_for_results(e)
                                                                       : cli_exit_for(e), &d);
    if (p.skipped)
        cli_warn(ctx, "warning: %s: %zu row(s) of %s at %s have params that do not fit the "
                 "current spec; ignored", results, p.skipped, amk_spec_name(s), shape);
    if (p.exhausted && cli_tables(ctx))
        cli_warn(ctx, "every config %s can propose at %s has been tried", st->name, shape);

    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kernel", amk_spec_name(s));
    cJSON_AddStringToObject(out, "shape", shape);
    cJSON_AddItemToObject(out, "config", amk_config_to_json(&p.config));
    char id[17];
    amk_config_id(&p.config, id);
    cJSON_AddStringToObject(out, "config_id", id);
    cJSON_AddStringToObject(out, "source", p.source);
    cJSON_AddStringToObject(out, "strategy", st->name);
    cJSON_AddStringToObject(out, "objective", amk_objective_name(obj));
    cJSON_AddStringToObject(out, "target", t->key);
    cJSON_AddItemToObject(out, "search_space", amk_space_to_json(s));
    cJSON_AddItemToObject(out, "incumbent", p.has_incumbent ? incumbent_json(&p)
                                                            : cJSON_CreateNull());
    cJSON_AddNumberToObject(out, "history_rows", (double)p.history_rows);
    cJSON_AddBoolToObject(out, "exhausted", p.exhausted);
    if (cli_tables(ctx)) {
        char *params = amk_config_params_json(&p.config);
        fprintf(stderr, "propose %s at %s (%s, %zu recorded): %s\n", amk_spec_name(s), shape,
                p.source, p.history_rows, params ? params : "?");
        if (p.has_incumbent)
            fprintf(stderr, "incumbent: trial %lld, %.3f us (%s)\n",
                    (long long)p.incumbent.trial, p.incumbent.latency_us,
                    amk_latency_kind_name(p.incumbent.latency_kind));
        free(params);
    }
    return cli_print_json(ctx, out);
}
