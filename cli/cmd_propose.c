/* `amk propose`: step 1 of the agent loop. Replays the recorded trials of one kernel/shape
 * into a search strategy and prints the next config to try, the search space and the
 * incumbent as JSON, for an agent to edit and hand to `amk evaluate`. */
#include "cli_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The incumbent is the history rule's best (HARNESS.md "Best") of one (kernel, shape,
 * device) group: the device of the file's latest row of this kernel and shape, the one an
 * agent is evaluating on. Each device seen gets its own rule state. */
#define PROPOSE_MAX_DEVICES 64

typedef struct replay_state {
    const amk_spec *spec;
    const amk_shape *shape;
    const char *shape_txt;
    const amk_strategy_type *st;
    void *st_state;
    amk_idset *seen;
    size_t rows, skipped;
    struct {
        char name[64];
        void *rule_state;
    } dev[PROPOSE_MAX_DEVICES];
    int ndev, last_dev;
    int has_best;
    amk_row best;
    amk_config best_config;
    int oom;
} replay_state;

/* The rule state of r's device, created on first sight; NULL when out of memory or past
 * PROPOSE_MAX_DEVICES devices (then the row only informs the strategy). */
static void *device_state(replay_state *rs, const amk_row *r)
{
    for (int i = 0; i < rs->ndev; i++)
        if (!strcmp(rs->dev[i].name, r->device)) {
            rs->last_dev = i;
            return rs->dev[i].rule_state;
        }
    if (rs->ndev == PROPOSE_MAX_DEVICES)
        return NULL;
    void *st = calloc(1, amk_history_rule.state_size);
    if (!st) {
        rs->oom = 1;
        return NULL;
    }
    snprintf(rs->dev[rs->ndev].name, sizeof rs->dev[rs->ndev].name, "%s", r->device);
    rs->dev[rs->ndev].rule_state = st;
    rs->last_dev = rs->ndev++;
    return st;
}

static int replay_cb(const amk_row *r, void *ud)
{
    replay_state *rs = ud;
    if (strcmp(r->kernel, amk_spec_name(rs->spec)) != 0 || strcmp(r->shape, rs->shape_txt) != 0)
        return 0;
    void *rule_state = device_state(rs, r);
    if (rs->oom)
        return 1;
    if (rule_state)
        amk_history_rule.add(rule_state, r, 0);
    amk_config c;
    if (amk_config_from_params_json(rs->spec, rs->shape, r->params, &c, NULL) != AMK_OK) {
        rs->skipped++; /* recorded with another version of the spec */
        return 0;
    }
    rs->rows++;
    if (amk_idset_add(rs->seen, r->config_id) < 0) {
        rs->oom = 1;
        return 1;
    }
    amk_verdict v;
    amk_verdict_from_row(r, &v);
    rs->st->observe(rs->st_state, &c, &v, r->kept == 1);
    return 0;
}

/* The rule's best on the latest row's device, when its params fit the current spec. */
static void take_incumbent(replay_state *rs)
{
    if (!rs->ndev)
        return;
    const amk_row *b = amk_history_rule.best(rs->dev[rs->last_dev].rule_state, NULL);
    if (b && amk_config_from_params_json(rs->spec, rs->shape, b->params, &rs->best_config,
                                         NULL) == AMK_OK) {
        rs->best = *b;
        rs->has_best = 1;
    }
}

static cJSON *incumbent_json(const replay_state *rs)
{
    const amk_row *r = &rs->best;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "config", amk_config_to_json(&rs->best_config));
    cJSON_AddStringToObject(o, "config_id", r->config_id);
    cli_json_add_num(o, "latency_us", r->latency_us);
    cJSON_AddStringToObject(o, "latency_kind", amk_latency_kind_name(r->latency_kind));
    cli_json_add_num(o, "spread", r->spread);
    cJSON_AddNumberToObject(o, "trial", (double)r->trial);
    cJSON_AddStringToObject(o, "device", r->device);
    cJSON_AddStringToObject(o, "source", r->source);
    return o;
}

int cli_cmd_propose(cli_ctx *ctx, int argc, char **argv)
{
    cli_args a;
    int k, rc;
    const char *kernel = NULL, *shape_txt = NULL, *results = NULL, *strategy = "hillclimb";
    const char *seed_txt = NULL;
    int64_t seed = 1;
    cli_args_init(&a, "propose", argc, argv);
    while ((k = cli_args_next(&a)) != CLI_ARG_END) {
        if (k == CLI_ARG_POS) {
            if (kernel)
                cli_args_fail(&a, "unexpected argument '%s' (one KERNEL)", a.arg);
            kernel = a.arg;
            continue;
        }
        if (cli_common_option(ctx, &a) || cli_args_value(&a, "--shape", &shape_txt) ||
            cli_args_value(&a, "--results", &results) ||
            cli_args_value(&a, "--strategy", &strategy))
            continue;
        if (cli_args_value(&a, "--seed", &seed_txt)) {
            cli_args_int(&a, "--seed", seed_txt, 0, INT64_MAX, &seed);
            continue;
        }
        cli_args_unknown(&a);
    }
    if ((rc = cli_args_done(ctx, &a)) >= 0)
        return rc;
    if (!kernel) {
        cli_args_fail(&a, "missing KERNEL (see `amk list`)");
        return a.err;
    }
    const amk_strategy_type *st = cli_args_strategy(&a, strategy);
    if (!st)
        return a.err;

    const amk_spec *s;
    const amk_target *t;
    amk_shape sh;
    if ((rc = cli_kernel(ctx, kernel, &s)) || (rc = cli_resolve_target(ctx, &t)) ||
        (rc = cli_shape(ctx, s, shape_txt, &sh)))
        return rc;
    char shape[256];
    amk_shape_format(s, &sh, shape, sizeof shape);

    amk_diag d;
    amk_diag_clear(&d);
    amk_space *sp = NULL;
    int e = amk_space_create(s, &sh, &t->limits, &sp, &d);
    if (e != AMK_OK)
        return cli_fail_diag(ctx, cli_exit_for(e), &d);

    replay_state rs;
    memset(&rs, 0, sizeof rs);
    rs.spec = s;
    rs.shape = &sh;
    rs.shape_txt = shape;
    rs.st = st;
    rs.seen = amk_idset_create();
    rs.st_state = calloc(1, st->state_size ? st->state_size : 1);
    cJSON *out = NULL;
    int st_ready = 0;
    if (!rs.seen || !rs.st_state) {
        rc = cli_fail(ctx, CLI_EXIT_INTERNAL, "out of memory");
        goto done;
    }
    amk_strategy_opts so;
    memset(&so, 0, sizeof so);
    so.seed = (uint64_t)seed;
    e = st->init(rs.st_state, sp, &so);
    if (e != AMK_OK) {
        rc = cli_fail(ctx, cli_exit_for(e), "kernel %s at %s: strategy %s cannot start: %s",
                      amk_spec_name(s), shape, st->name, amk_strerror(e));
        goto done;
    }
    st_ready = 1;

    if (results) {
        if (!amk_fs_exists(results)) {
            if (cli_tables(ctx))
                cli_warn(ctx, "%s does not exist yet: no history", results);
        } else {
            amk_tsv_stats stats;
            e = amk_tsv_read(results, replay_cb, &rs, &stats, &d);
            if (rs.oom)
                e = AMK_ENOMEM;
            if (e != AMK_OK) {
                if (!d.msg[0] || e == AMK_ENOMEM)
                    amk_diag_set(&d, e, "%s: %s", results, amk_strerror(e));
                rc = cli_fail_diag(ctx, cli_exit_for_results(e), &d);
                goto done;
            }
            take_incumbent(&rs);
            if (rs.skipped)
                cli_warn(ctx, "warning: %s: %zu row(s) of %s at %s have params that do not "
                         "fit the current spec; ignored", results, rs.skipped,
                         amk_spec_name(s), shape);
        }
    }

    /* The proposal. */
    amk_config cfg;
    const char *source = NULL;
    char proposal_source[32] = "";
    int exhausted = 0;
    amk_config_default(s, &sh, &cfg);
    if (rs.rows == 0 && amk_space_valid(sp, &cfg, NULL) == AMK_OK &&
        amk_cost_feasible(&cfg, t, NULL) == AMK_OK) {
        source = "default";
    } else {
        for (int tries = 0; tries < 10000 && !source; tries++) {
            amk_proposal p;
            memset(&p, 0, sizeof p);
            e = st->next(rs.st_state, rs.seen, &p);
            if (e < 0) {
                rc = cli_fail(ctx, cli_exit_for(e), "kernel %s at %s: strategy %s failed: %s",
                              amk_spec_name(s), shape, st->name, amk_strerror(e));
                goto done;
            }
            if (e == 0) {
                exhausted = 1;
                break;
            }
            char id[17];
            amk_config_id(&p.config, id);
            if (amk_idset_has(rs.seen, id))
                continue;
            cfg = p.config;
            snprintf(proposal_source, sizeof proposal_source, "%s", p.source);
            source = proposal_source[0] ? proposal_source : st->name;
        }
        if (!source && rs.rows == 0) {
            rc = cli_fail(ctx, CLI_EXIT_INPUT, "kernel %s at %s on %s: %s (`amk space %s` "
                          "lists the restrictions)", amk_spec_name(s), shape, t->key,
                          amk_strerror(AMK_EEMPTY), amk_spec_name(s));
            goto done;
        }
        if (!source) {
            exhausted = 1;
            if (rs.has_best)
                cfg = rs.best_config;
            source = rs.has_best ? "incumbent" : "default";
            if (cli_tables(ctx))
                cli_warn(ctx, "every config %s can propose at %s has been tried",
                         st->name, shape);
        }
    }

    out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kernel", amk_spec_name(s));
    cJSON_AddStringToObject(out, "shape", shape);
    cJSON_AddItemToObject(out, "config", amk_config_to_json(&cfg));
    char id[17];
    amk_config_id(&cfg, id);
    cJSON_AddStringToObject(out, "config_id", id);
    cJSON_AddStringToObject(out, "source", source);
    cJSON_AddStringToObject(out, "strategy", st->name);
    cJSON_AddStringToObject(out, "target", t->key);
    cJSON_AddItemToObject(out, "search_space", amk_space_to_json(s));
    cJSON_AddItemToObject(out, "incumbent", rs.has_best ? incumbent_json(&rs) : cJSON_CreateNull());
    cJSON_AddNumberToObject(out, "history_rows", (double)rs.rows);
    cJSON_AddBoolToObject(out, "exhausted", exhausted);
    if (cli_tables(ctx)) {
        char *params = amk_config_params_json(&cfg);
        fprintf(stderr, "propose %s at %s (%s, %zu recorded): %s\n", amk_spec_name(s), shape,
                source, rs.rows, params ? params : "?");
        if (rs.has_best)
            fprintf(stderr, "incumbent: trial %lld, %.3f us (%s)\n", (long long)rs.best.trial,
                    rs.best.latency_us, amk_latency_kind_name(rs.best.latency_kind));
        free(params);
    }
    rc = cli_print_json(ctx, out);
    out = NULL;

done:
    cJSON_Delete(out);
    if (st_ready && st->clear)
        st->clear(rs.st_state);
    free(rs.st_state);
    for (int i = 0; i < rs.ndev; i++)
        free(rs.dev[i].rule_state);
    amk_idset_free(rs.seen);
    amk_space_free(sp);
    return rc;
}
