/* anneal: simulated annealing over neighbour moves. The energy is log-latency, so the
 * temperature reads as a relative slow-down: at T a move 10% slower is accepted with
 * probability exp(-0.095/T) (Metropolis). Geometric cooling; the chain restarts from a fresh
 * uniform point, reheated, when it is cold or has not improved for `patience` trials. */
#include "search_int.h"

#include <math.h>
#include <string.h>

#define AN_T0 0.15      /* a 10% slower move is accepted about half the time at the start */
#define AN_TMIN 0.002   /* below this the chain is frozen: restart */

typedef struct anneal_state {
    const amk_space *sp;
    int n;
    gsl_rng *rng;
    amk__visited vis;
    amk__sampler smp;
    double T, alpha;
    int patience, stall;
    int started;
    int has_cur;
    amk_config cur;
    double cur_log, chain_best_log;
    amk__near near; /* around cur */
} anneal_state;

static int anneal_init(void *state, const amk_space *sp, const amk_strategy_opts *opts)
{
    anneal_state *s = state;
    memset(s, 0, sizeof *s);
    s->sp = sp;
    s->n = amk_spec_n_params(amk_space_spec(sp));
    s->rng = amk__rng_create(opts ? opts->seed : 0);
    if (!s->rng)
        return AMK_ENOMEM;
    amk__visited_init(&s->vis, sp);
    amk__sampler_init(&s->smp, sp, s->rng, &s->vis);
    /* Cool from T0 to TMIN over about max(60, 15 n) trials. */
    double steps = 15.0 * s->n > 60 ? 15.0 * s->n : 60;
    s->alpha = pow(AN_TMIN / AN_T0, 1.0 / steps);
    s->T = AN_T0;
    s->patience = opts && opts->patience > 0 ? opts->patience : 4 * s->n + 20;
    return AMK_OK;
}

static int anneal_next(void *state, const amk_idset *seen, amk_proposal *out)
{
    anneal_state *s = state;
    amk_config c;
    if (s->has_cur && (s->T < AN_TMIN || s->stall >= s->patience))
        s->has_cur = 0;
    if (s->has_cur) {
        if (amk__near_next(&s->near, s->sp, s->rng, &s->cur, &s->vis, seen, &c) !=
            AMK__NEAR_NONE) {
            amk__visited_mark(&s->vis, &c);
            amk__proposal_set(out, &c, "anneal");
            return 1;
        }
        s->has_cur = 0; /* the neighbourhood is used up: restart */
    }
    int rc = amk__sampler_next(&s->smp, seen, &c);
    if (rc == 1) {
        amk__visited_mark(&s->vis, &c);
        amk__proposal_set(out, &c, s->started ? "restart" : "random");
        s->started = 1;
        s->T = AN_T0;
        s->stall = 0;
        s->near.ready = 0;
    }
    return rc;
}

static void accept(anneal_state *s, const amk_config *c, double lg)
{
    if (!s->has_cur || !amk_config_equal(&s->cur, c))
        s->near.ready = 0;
    if (!s->has_cur) { /* a new chain: its first point is its best */
        s->chain_best_log = INFINITY;
        s->stall = 0;
    }
    s->cur = *c;
    s->cur_log = lg;
    s->has_cur = 1;
}

static void anneal_observe(void *state, const amk_config *c, const amk_verdict *v, int kept)
{
    anneal_state *s = state;
    int ok = v && v->status == AMK_STATUS_OK && isfinite(v->latency_us) && v->latency_us > 0;
    if (s->has_cur)
        s->T *= s->alpha;
    if (!ok) {
        s->stall++;
        return;
    }
    double lg = log(v->latency_us);
    if (kept || !s->has_cur) {
        accept(s, c, lg);
    } else {
        double delta = lg - s->cur_log;
        if (delta <= 0 || gsl_rng_uniform(s->rng) < exp(-delta / s->T))
            accept(s, c, lg);
    }
    if (lg < s->chain_best_log) {
        s->chain_best_log = lg;
        s->stall = 0;
    } else {
        s->stall++;
    }
}

static void anneal_clear(void *state)
{
    anneal_state *s = state;
    amk__sampler_clear(&s->smp);
    amk__visited_clear(&s->vis);
    if (s->rng)
        gsl_rng_free(s->rng);
    s->rng = NULL;
}

const amk_strategy_type amk__strategy_anneal = {
    .api_version = AMK__STRATEGY_API,
    .name = "anneal",
    .doc = "simulated annealing over neighbour moves on log-latency (Metropolis rule), "
           "restarting when cold or stalled",
    .state_size = sizeof(anneal_state),
    .init = anneal_init,
    .next = anneal_next,
    .observe = anneal_observe,
    .clear = anneal_clear,
};
