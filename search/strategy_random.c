/* random: uniform samples of the valid configs (amk_space_sample), never one already seen;
 * reports "nothing left" once every valid config has been proposed. */
#include "search_int.h"

#include <gsl/gsl_rng.h>

typedef struct random_state {
    gsl_rng *rng;
    amk__visited vis;
    amk__sampler smp;
} random_state;

static int random_init(void *state, const amk_space *sp, const amk_strategy_opts *opts)
{
    random_state *s = state;
    s->rng = amk__rng_create(opts ? opts->seed : 0);
    if (!s->rng)
        return AMK_ENOMEM;
    amk__visited_init(&s->vis, sp);
    amk__sampler_init(&s->smp, sp, s->rng, &s->vis);
    return AMK_OK;
}

static int random_next(void *state, const amk_idset *seen, amk_proposal *out)
{
    random_state *s = state;
    amk_config c;
    int rc = amk__sampler_next(&s->smp, seen, &c);
    if (rc == 1) {
        amk__visited_mark(&s->vis, &c);
        amk__proposal_set(out, &c, "random");
    }
    return rc;
}

static void random_observe(void *state, const amk_config *c, const amk_verdict *v, int kept)
{
    (void)state, (void)c, (void)v, (void)kept; /* memoryless by design */
}

static void random_clear(void *state)
{
    random_state *s = state;
    amk__sampler_clear(&s->smp);
    amk__visited_clear(&s->vis);
    gsl_rng_free(s->rng);
    s->rng = NULL;
}

const amk_strategy_type amk__strategy_random = {
    .api_version = AMK__STRATEGY_API,
    .name = "random",
    .doc = "uniform samples of the valid configs, without repeats",
    .state_size = sizeof(random_state),
    .init = random_init,
    .next = random_next,
    .observe = random_observe,
    .clear = random_clear,
};
