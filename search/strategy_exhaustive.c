/* exhaustive: every valid config in amk_space_enumerate order (odometer, last param
 * fastest), walked lazily with a resumable cursor so a huge space is never materialised.
 * Configs already seen (a resumed run) are skipped; "nothing left" once the odometer wraps. */
#include "search_int.h"

#include <string.h>

typedef struct exhaustive_state {
    const amk_space *sp;
    int n;
    int nc[AMK_MAX_PARAMS];
    amk_config cur;
    int started, done;
} exhaustive_state;

static int exhaustive_init(void *state, const amk_space *sp, const amk_strategy_opts *opts)
{
    (void)opts;
    exhaustive_state *s = state;
    memset(s, 0, sizeof *s);
    s->sp = sp;
    const amk_spec *spec = amk_space_spec(sp);
    s->n = amk_spec_n_params(spec);
    for (int i = 0; i < s->n; i++) {
        s->nc[i] = amk_spec_param_n_choices(spec, i);
        if (s->nc[i] < 1)
            return AMK_EINVAL;
    }
    amk__config_zero(sp, &s->cur);
    return AMK_OK;
}

/* Advances the odometer; 0 when it wraps around (the walk is over). */
static int advance(exhaustive_state *s)
{
    for (int i = s->n - 1; i >= 0; i--) {
        if ((int)s->cur.choice[i] + 1 < s->nc[i]) {
            s->cur.choice[i]++;
            return 1;
        }
        s->cur.choice[i] = 0;
    }
    return 0;
}

static int exhaustive_next(void *state, const amk_idset *seen, amk_proposal *out)
{
    exhaustive_state *s = state;
    while (!s->done) {
        if (!s->started)
            s->started = 1;
        else if (!advance(s)) {
            s->done = 1;
            break;
        }
        if (amk__space_valid(s->sp, &s->cur) && !amk__config_seen(seen, &s->cur)) {
            amk__proposal_set(out, &s->cur, "exhaustive");
            return 1;
        }
    }
    return 0;
}

static void exhaustive_observe(void *state, const amk_config *c, const amk_verdict *v,
                               int kept)
{
    (void)state, (void)c, (void)v, (void)kept; /* the order does not depend on results */
}

static void exhaustive_clear(void *state)
{
    exhaustive_state *s = state;
    s->done = 1;
}

const amk_strategy_type amk__strategy_exhaustive = {
    .api_version = AMK__STRATEGY_API,
    .name = "exhaustive",
    .doc = "every valid config in enumeration order (lazy odometer)",
    .state_size = sizeof(exhaustive_state),
    .init = exhaustive_init,
    .next = exhaustive_next,
    .observe = exhaustive_observe,
    .clear = exhaustive_clear,
};
