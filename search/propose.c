/* `amk propose`: the next config to try for one kernel/shape, learnt from a results file.
 * Every recorded trial of the kernel/shape is replayed into the strategy (its seen set and
 * observations); the incumbent is the history rule's best (HARNESS.md "Best") on the device
 * of the file's latest row of this kernel and shape, the one an agent is evaluating on. */
#include "amk_search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Devices with a rule state of their own; rows of further devices only inform the strategy. */
#define PROPOSE_MAX_DEVICES 64
/* Proposals of already seen configs tolerated before the strategy counts as exhausted. */
#define PROPOSE_TRIES 10000

typedef struct replay_state {
    const amk_propose_opts *o;
    char shape[256];
    const amk_strategy_type *st;
    void *st_state;
    amk_idset *seen;
    amk_proposal_result *r;
    struct {
        char name[64];
        void *rule_state;
    } dev[PROPOSE_MAX_DEVICES];
    int ndev, last_dev;
    int oom;
} replay_state;

/* The rule state of r's device, created on first sight; NULL when out of memory or past
 * PROPOSE_MAX_DEVICES devices. */
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
    const amk_spec *s = rs->o->spec;
    if (strcmp(r->kernel, amk_spec_name(s)) != 0 || strcmp(r->shape, rs->shape) != 0)
        return 0;
    void *rule_state = device_state(rs, r);
    if (rs->oom)
        return 1;
    if (rule_state)
        amk_history_rule.add(rule_state, r, 0);
    amk_config c;
    if (amk_config_from_params_json(s, &rs->o->shape, r->params, &c, NULL) != AMK_OK) {
        rs->r->skipped++; /* recorded with another version of the spec */
        return 0;
    }
    rs->r->history_rows++;
    if (amk_idset_add(rs->seen, r->config_id) < 0) {
        rs->oom = 1;
        return 1;
    }
    amk_verdict v;
    amk_verdict_from_row(r, &v);
    rs->st->observe(rs->st_state, &c, &v, r->kept == 1);
    return 0;
}

/* Replays the results file (when there is one) and takes the incumbent. */
static int replay_file(replay_state *rs, amk_diag *d)
{
    const char *path = rs->o->results_path;
    if (!path)
        return AMK_OK;
    if (!amk_fs_exists(path)) {
        rs->r->no_file = 1;
        return AMK_OK;
    }
    amk_tsv_stats stats;
    int e = amk_tsv_read(path, replay_cb, rs, &stats, d);
    if (rs->oom)
        e = AMK_ENOMEM;
    if (e != AMK_OK) {
        if (!d->msg[0] || e == AMK_ENOMEM)
            amk_diag_set(d, e, "%s: %s", path, amk_strerror(e));
        return e;
    }
    if (!rs->ndev)
        return AMK_OK;
    const amk_row *b = amk_history_rule.best(rs->dev[rs->last_dev].rule_state, NULL);
    amk_proposal_result *r = rs->r;
    if (b && amk_config_from_params_json(rs->o->spec, &rs->o->shape, b->params,
                                         &r->incumbent_config, NULL) == AMK_OK) {
        r->incumbent = *b;
        r->has_incumbent = 1;
    }
    return AMK_OK;
}

/* The proposal: the default config when nothing is recorded and it runs on the target, else
 * the strategy's first config not seen yet, else (exhausted) the incumbent's. */
static int choose(replay_state *rs, const amk_space *sp, amk_diag *d)
{
    const amk_propose_opts *o = rs->o;
    amk_proposal_result *r = rs->r;
    amk_config_default(o->spec, &o->shape, &r->config);
    if (r->history_rows == 0 && amk_space_valid(sp, &r->config, NULL) == AMK_OK &&
        amk_cost_feasible(&r->config, o->target, NULL) == AMK_OK) {
        snprintf(r->source, sizeof r->source, "default");
        return AMK_OK;
    }
    for (int tries = 0; tries < PROPOSE_TRIES; tries++) {
        amk_proposal p;
        memset(&p, 0, sizeof p);
        int e = rs->st->next(rs->st_state, rs->seen, &p);
        if (e < 0)
            return amk_diag_set(d, e, "kernel %s at %s: strategy %s failed: %s",
                                amk_spec_name(o->spec), rs->shape, rs->st->name, amk_strerror(e));
        if (e == 0)
            break;
        char id[17];
        amk_config_id(&p.config, id);
        if (amk_idset_has(rs->seen, id))
            continue;
        r->config = p.config;
        snprintf(r->source, sizeof r->source, "%s", p.source[0] ? p.source : rs->st->name);
        return AMK_OK;
    }
    if (r->history_rows == 0)
        return amk_diag_set(d, AMK_EEMPTY, "kernel %s at %s on %s: %s (`amk space %s` lists "
                            "the restrictions)", amk_spec_name(o->spec), rs->shape,
                            o->target->key, amk_strerror(AMK_EEMPTY), amk_spec_name(o->spec));
    r->exhausted = 1;
    if (r->has_incumbent)
        r->config = r->incumbent_config;
    snprintf(r->source, sizeof r->source, "%s", r->has_incumbent ? "incumbent" : "default");
    return AMK_OK;
}

int amk_propose(const amk_propose_opts *o, amk_proposal_result *r, amk_diag *d)
{
    memset(r, 0, sizeof *r);
    replay_state rs;
    memset(&rs, 0, sizeof rs);
    rs.o = o;
    rs.r = r;
    rs.st = o->strategy;
    amk_shape_format(o->spec, &o->shape, rs.shape, sizeof rs.shape);
    amk_space *sp = NULL;
    int st_ready = 0;
    r->failed_on = AMK_PROPOSE_ON_SETUP;
    int e = amk_space_create(o->spec, &o->shape, &o->target->limits, &sp, d);
    if (e != AMK_OK)
        return e;
    rs.seen = amk_idset_create();
    rs.st_state = calloc(1, rs.st->state_size ? rs.st->state_size : 1);
    if (!rs.seen || !rs.st_state) {
        e = amk_diag_set(d, AMK_ENOMEM, "out of memory");
        goto out;
    }
    amk_strategy_opts so;
    memset(&so, 0, sizeof so);
    so.seed = o->seed;
    if ((e = rs.st->init(rs.st_state, sp, &so)) != AMK_OK) {
        amk_diag_set(d, e, "kernel %s at %s: strategy %s cannot start: %s",
                     amk_spec_name(o->spec), rs.shape, rs.st->name, amk_strerror(e));
        goto out;
    }
    st_ready = 1;
    r->failed_on = AMK_PROPOSE_ON_RESULTS;
    if ((e = replay_file(&rs, d)) != AMK_OK)
        goto out;
    r->failed_on = AMK_PROPOSE_ON_SETUP;
    if ((e = choose(&rs, sp, d)) == AMK_OK)
        r->failed_on = AMK_PROPOSE_DONE;
out:
    if (st_ready && rs.st->clear)
        rs.st->clear(rs.st_state);
    free(rs.st_state);
    for (int i = 0; i < rs.ndev; i++)
        free(rs.dev[i].rule_state);
    amk_idset_free(rs.seen);
    amk_space_free(sp);
    return e;
}
