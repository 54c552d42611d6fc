/* `amk propose`: the next config to try for one kernel/shape, learnt from a results file.
 * Every recorded trial of the kernel/shape is replayed into the strategy (its seen set and
 * observations); the incumbent is the history rule's best (HARNESS.md "Best") on the device
 * of the file's latest row of this kernel and shape, the one an agent is evaluating on. */
#include "search_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Proposals of already seen configs tolerated before the strategy counts as exhausted. */
#define PROPOSE_TRIES 10000

typedef struct replay_state {
    const amk_propose_opts *o;
    char shape[256];
    const amk_strategy_type *st;
    void *st_state;
    amk_history *h;
    amk__peer_frame frame; /* the clock state the strategy is shown latencies in */
    amk_proposal_result *r;
} replay_state;

/* Every recorded row of the kernel/shape (any device) informs the strategy. */
static void observe_row(const amk_row *r, const amk_config *c, void *ud)
{
    replay_state *rs = ud;
    if (!c)
        return;
    amk_verdict v;
    amk_verdict_from_row(r, &v);
    amk__verdict_for_strategy(rs->o->objective, &rs->frame, &v);
    rs->st->observe(rs->st_state, c, &v, r->kept == 1);
}

/* Reads the results file (when there is one) into the history and takes its best. */
static int replay_file(replay_state *rs, amk_diag *d)
{
    const char *path = rs->o->results_path;
    amk_proposal_result *r = rs->r;
    if (path && !amk_fs_exists(path))
        r->no_file = 1;
    amk_history_opts ho = {.shape = rs->shape, .spec = rs->o->spec, .at = &rs->o->shape,
                           .limits = &rs->o->target->limits,
                           .min_gain = AMK_HISTORY_MIN_GAIN, .each = observe_row, .ud = rs,
                           .objective = rs->o->objective};
    int e = amk_history_load(r->no_file ? NULL : path, &ho, &rs->h, d);
    if (e != AMK_OK)
        return e;
    r->skipped = amk_history_skipped(rs->h);
    r->history_rows = amk_history_rows(rs->h) - r->skipped;
    amk_incumbent best;
    const amk_row *b = amk_history_best(rs->h, &best);
    if (b && best.has) {
        r->incumbent = *b;
        r->incumbent_config = best.config;
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
        int e = rs->st->next(rs->st_state, amk_history_seen(rs->h), &p);
        if (e < 0)
            return amk_diag_set(d, e, "kernel %s at %s: strategy %s failed: %s",
                                amk_spec_name(o->spec), rs->shape, rs->st->name, amk_strerror(e));
        if (e == 0)
            break;
        char id[17];
        amk_config_id(&p.config, id);
        if (amk_idset_has(amk_history_seen(rs->h), id))
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
    rs.st_state = calloc(1, rs.st->state_size ? rs.st->state_size : 1);
    if (!rs.st_state) {
        e = amk_diag_set(d, AMK_ENOMEM, "out of memory");
        goto out;
    }
    amk_strategy_opts so;
    memset(&so, 0, sizeof so);
    so.seed = o->seed;
    so.target = o->target; /* as a loop on this target gives its strategy */
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
    amk_history_free(rs.h);
    amk_space_free(sp);
    return e;
}
