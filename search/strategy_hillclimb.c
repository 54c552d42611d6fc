/* hillclimb (the default): the spec's default config first, climbing from it at once (its
 * author's choice beats a design of a few points on every recorded sweep); a default that
 * breaks a restriction is replaced by the nearest valid config to it. Asked to start without
 * the default (no_default), or where no valid config is near it, a Sobol initial design
 * (randomly shifted per seed, Cranley-Patterson, so seeds differ while the design stays
 * low-discrepancy; at most 3% of the valid configs of a small space). Then mutations of the
 * current point: its neighbours (one that breaks a restriction repaired by a step of another
 * param), then its diagonal neighbours (those the cost model predicts clearly faster first,
 * the rest ordered by what every latency so far says about each param value), then jumps of
 * 2-3 params once those are used up; after `patience` trials without improvement it
 * restarts from a fresh point (alternately the continued Sobol sequence and a uniform
 * sample). Never proposes a config twice or one in `seen`. */
#include "search_int.h"

#include <gsl/gsl_qrng.h>
#include <math.h>
#include <string.h>

#define HC_SOBOL_TRIES 32 /* Sobol points tried before falling back to a uniform sample */
/* A small space gets a smaller initial design: a user tuning 120 configs expects a good one
 * within a dozen trials, and a dozen Sobol points would be the whole of them. */
#define HC_INITIAL_PERCENT 3
#define HC_INITIAL_MIN 2

typedef struct hc_state {
    const amk_space *sp;
    int n;
    gsl_rng *rng;
    gsl_qrng *q;           /* NULL when the space has no params */
    double shift[AMK_MAX_PARAMS];
    amk__visited vis;
    amk__sampler smp;
    int initial, patience;
    int designed;          /* initial-design points proposed (the default config counts) */
    int defaulted;         /* the spec's default config was considered */
    int climbing;          /* the initial design is over */
    long proposed;
    long restarts;
    int has_cur;
    amk_config cur;        /* centre of the mutations */
    double cur_lat;
    amk__near near; /* around cur */
    amk__marginals marg;   /* guides the order of near's moves */
    int stall;             /* observed trials since cur last moved */
} hc_state;

typedef struct count_ctx {
    int64_t n, cap;
} count_ctx;

static int count_upto(const amk_config *c, void *ud)
{
    (void)c;
    count_ctx *k = ud;
    return ++k->n >= k->cap;
}

/* The default initial design: max(2n+4, 8) points, or HC_INITIAL_PERCENT of the valid
 * configs (at least HC_INITIAL_MIN) when that is fewer. Counts no further than it needs. */
static int default_initial(const amk_space *sp, int n)
{
    int dflt = 2 * n + 4 > 8 ? 2 * n + 4 : 8;
    count_ctx k = {0, (int64_t)dflt * 100 / HC_INITIAL_PERCENT + 1};
    if (amk_space_enumerate(sp, count_upto, &k) != AMK_OK || k.n >= k.cap)
        return dflt;
    int small = (int)(k.n * HC_INITIAL_PERCENT / 100);
    return small < HC_INITIAL_MIN ? HC_INITIAL_MIN : small < dflt ? small : dflt;
}

static int hc_init(void *state, const amk_space *sp, const amk_strategy_opts *opts)
{
    hc_state *s = state;
    memset(s, 0, sizeof *s);
    s->sp = sp;
    s->n = amk_spec_n_params(amk_space_spec(sp));
    s->rng = amk__rng_create(opts ? opts->seed : 0);
    if (!s->rng)
        return AMK_ENOMEM;
    if (s->n > 0) {
        s->q = gsl_qrng_alloc(gsl_qrng_sobol, (unsigned)s->n);
        if (!s->q) {
            gsl_rng_free(s->rng);
            s->rng = NULL;
            return AMK_ENOMEM;
        }
    }
    for (int i = 0; i < s->n; i++)
        s->shift[i] = gsl_rng_uniform(s->rng);
    amk__visited_init(&s->vis, sp);
    amk__sampler_init(&s->smp, sp, s->rng, &s->vis);
    s->initial = opts && opts->initial > 0 ? opts->initial : default_initial(sp, s->n);
    s->patience = opts && opts->patience > 0 ? opts->patience : 2 * s->n + 8;
    s->defaulted = opts && opts->no_default; /* as if considered: the design comes first */
    s->cur_lat = NAN;
    s->near.guide = &s->marg;
    s->near.model = opts ? opts->target : NULL;
    return AMK_OK;
}

/* Sobol modes of fresh_point. */
enum { FRESH_UNIFORM, FRESH_SOBOL_NEAREST, FRESH_SOBOL_VALID };

/* A fresh unseen point. FRESH_SOBOL_NEAREST (the initial design): the next shifted Sobol
 * point mapped to the nearest valid config (amk_space_from_unit). FRESH_SOBOL_VALID
 * (restarts): the next Sobol points whose cell is itself valid, skipping invalid cells
 * instead of paying a nearest-valid search each time. Otherwise, or when Sobol keeps
 * landing on seen or invalid points, a uniform sample. */
static int fresh_point(hc_state *s, const amk_idset *seen, int mode, amk_config *out)
{
    if (mode != FRESH_UNIFORM && s->q) {
        const amk_spec *spec = amk_space_spec(s->sp);
        double u[AMK_MAX_PARAMS];
        for (int t = 0; t < HC_SOBOL_TRIES; t++) {
            if (gsl_qrng_get(s->q, u) != 0)
                break;
            for (int i = 0; i < s->n; i++) {
                u[i] += s->shift[i];
                if (u[i] >= 1.0)
                    u[i] -= 1.0;
            }
            amk_config c;
            amk__config_zero(s->sp, &c);
            if (mode == FRESH_SOBOL_NEAREST) {
                if (amk_space_from_unit(s->sp, u, AMK__RNG(s->rng), &c) != AMK_OK)
                    continue;
            } else {
                for (int i = 0; i < s->n; i++) {
                    int nc = amk_spec_param_n_choices(spec, i);
                    int k = (int)(u[i] * nc);
                    c.choice[i] = (uint8_t)(k < 0 ? 0 : k >= nc ? nc - 1 : k);
                }
                if (!amk__space_valid(s->sp, &c))
                    continue;
            }
            if (!amk__visited_has(&s->vis, seen, &c)) {
                *out = c;
                return 1;
            }
        }
    }
    return amk__sampler_next(&s->smp, seen, out);
}

static int emit(hc_state *s, amk_proposal *out, const amk_config *c, const char *source)
{
    amk__visited_mark(&s->vis, c);
    s->proposed++;
    amk__proposal_set(out, c, source);
    return 1;
}

/* A default that breaks a restriction still says where its author would look: the valid
 * config fewest single-choice moves from it (amk_space_from_unit's breadth-first search from
 * its cell; deterministic, no draw from the stream). Dedispersion's T1 Default breaks two
 * restrictions (tile_size_x 1 with tile_stride_x 1, the same along y): started there,
 * evolve's time score on the development GPUs A100/MI250X rose from 0.864/0.929 to
 * 0.869/0.963 (seeds 1-20) and from 0.867/0.923 to 0.889/0.964 (seeds 21-40), where a Sobol
 * design had come first. Leaves c as it is where the search finds none. */
static void nearest_valid(hc_state *s, amk_config *c)
{
    const amk_spec *spec = amk_space_spec(s->sp);
    double u[AMK_MAX_PARAMS];
    for (int i = 0; i < s->n; i++)
        u[i] = (c->choice[i] + 0.5) / amk_spec_param_n_choices(spec, i);
    amk_config near;
    amk__config_zero(s->sp, &near);
    if (amk_space_from_unit(s->sp, u, NULL, &near) == AMK_OK)
        *c = near;
}

static void move_to(hc_state *s, const amk_config *c, double lat)
{
    if (!s->has_cur || !amk_config_equal(&s->cur, c))
        s->near.ready = 0;
    s->cur = *c;
    s->cur_lat = lat;
    s->has_cur = 1;
    s->stall = 0;
}

static int hc_next(void *state, const amk_idset *seen, amk_proposal *out)
{
    hc_state *s = state;
    amk_config c;
    int rc;
    if (!s->climbing) {
        if (!s->defaulted) {
            /* The spec's default: the point its author expects to be good. */
            s->defaulted = 1;
            amk_config_default(amk_space_spec(s->sp), amk_space_shape(s->sp), &c);
            if (!amk__space_valid(s->sp, &c))
                nearest_valid(s, &c);
            if (amk__space_valid(s->sp, &c) && !amk__visited_has(&s->vis, seen, &c)) {
                s->climbing = 1; /* climb from it: a design first costs more than it finds */
                /* ... at once: a batch asked for before its verdict (a GPU loop's first
                 * `--jobs` proposals) gets its neighbours, not restarts; its verdict, or a
                 * faster one, sets the latency to beat */
                move_to(s, &c, INFINITY);
                return emit(s, out, &c, "default");
            }
        }
        if (s->designed < s->initial) {
            s->designed++;
            rc = fresh_point(s, seen, FRESH_SOBOL_NEAREST, &c);
            return rc == 1 ? emit(s, out, &c, "sobol") : rc;
        }
        s->climbing = 1;
        s->stall = 0;
    }
    if (s->has_cur && s->stall < s->patience) {
        int how = amk__near_next(&s->near, s->sp, s->rng, &s->cur, &s->vis, seen, &c);
        if (how != AMK__NEAR_NONE)
            return emit(s, out, &c, how == AMK__NEAR_NEIGHBOUR ? "mutate" : "jump");
    }
    /* Restart: forget the current point; the next good verdict becomes the new centre. */
    s->has_cur = 0;
    s->near.ready = 0;
    s->stall = 0;
    s->restarts++;
    rc = fresh_point(s, seen, s->restarts & 1 ? FRESH_SOBOL_VALID : FRESH_UNIFORM, &c);
    return rc == 1 ? emit(s, out, &c, "restart") : rc;
}

static void hc_observe(void *state, const amk_config *c, const amk_verdict *v, int kept)
{
    hc_state *s = state;
    int ok = v && v->status == AMK_STATUS_OK && isfinite(v->latency_us) && v->latency_us > 0;
    double lat = ok ? v->latency_us : NAN;
    if (ok)
        amk__marginals_add(&s->marg, c, lat);
    if (kept) {
        /* The loop's incumbent moved here. Before any proposal this is a resumed run:
         * skip the initial design and climb from the restored incumbent. */
        if (!s->climbing && s->proposed == 0)
            s->climbing = 1;
        move_to(s, c, lat);
        return;
    }
    /* Not the incumbent: follow the best latency of this climb, even a gain the loop judged
     * to be noise. The incumbent stays the loop's decision; stepping onto an equally good
     * point only lets the walk go on across a plateau (VEC 2 -> 4 within noise, then 8). */
    if (ok && (!s->has_cur || lat < s->cur_lat)) {
        move_to(s, c, lat);
        return;
    }
    if (!ok && s->has_cur && isinf(s->cur_lat) && amk_config_equal(&s->cur, c)) {
        s->has_cur = 0; /* the default failed: no centre until a good verdict, as before */
        return;
    }
    if (s->climbing && s->has_cur)
        s->stall++;
}

static void hc_clear(void *state)
{
    hc_state *s = state;
    amk__sampler_clear(&s->smp);
    amk__visited_clear(&s->vis);
    if (s->q)
        gsl_qrng_free(s->q);
    if (s->rng)
        gsl_rng_free(s->rng);
    s->q = NULL;
    s->rng = NULL;
}

const amk_strategy_type amk__strategy_hillclimb = {
    .api_version = AMK__STRATEGY_API,
    .name = "hillclimb",
    .doc = "the spec's default config (one that breaks a restriction: its nearest valid "
           "config; with no_default a Sobol initial design, smaller for small "
           "spaces), then neighbour (a restriction broken: repaired by a step of another "
           "param) and diagonal mutations of the best point, those the cost "
           "model predicts clearly faster first, then the evidence-favoured, 2-3 param jumps, "
           "restarting after `patience` trials without improvement",
    .state_size = sizeof(hc_state),
    .init = hc_init,
    .next = hc_next,
    .observe = hc_observe,
    .clear = hc_clear,
};
