/* evolve: hillclimb's start (the spec's default config and the walk around it) for the first
 * trials, then a genetic search interleaved with that walk. The genetic part is
 * generational: each generation is a population of configs bred from the previous one
 * (rank-weighted parents, uniform crossover, a light mutation); a child already evaluated
 * joins the population at its known latency without costing a trial, so only new configs
 * are proposed. Never proposes a config twice or one in `seen`. */
#include "search_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EVO_ELITE_MAX 64
#define EVO_BREED_TRIES 64 /* crossover draws before a uniform sample instead */

typedef struct evo_member {
    uint8_t choice[AMK_MAX_PARAMS];
    double lg;             /* log latency; INFINITY for a failed config, NAN while pending */
} evo_member;

/* Latencies of the configs evaluated so far (open addressing on their choice vectors). */
typedef struct evo_known {
    evo_member *slot;
    uint8_t *used;
    size_t cap, len;
} evo_known;

typedef struct evo_state {
    const amk_space *sp;
    int n;
    gsl_rng *rng;
    amk__visited vis;
    amk__sampler smp;
    evo_known known;
    /* the walk: hillclimb's own state, driven through its type object */
    void *hc;
    int walk_only;         /* trials given to the walk alone at the start */
    double p_walk;         /* afterwards: the share of proposals the walk makes */
    /* the genetic search */
    int elite_size;
    double mut_rate, p_random, bias;
    int niche;
    evo_member elite[EVO_ELITE_MAX]; /* the fastest configs so far, fastest first */
    int nelite;
    long proposed;
    int hc_rc;             /* the walk's last next(): 0 once it has nothing left */
} evo_state;

static double env_or(const char *name, double dflt)
{
    const char *v = getenv(name);
    return v && *v ? atof(v) : dflt;
}

/* ---- known latencies --------------------------------------------------------------------- */

static uint64_t choice_hash(const uint8_t *c, int n)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (int i = 0; i < n; i++)
        h = (h ^ c[i]) * UINT64_C(1099511628211);
    return h;
}

static evo_member *known_find(evo_state *s, const uint8_t *c)
{
    evo_known *k = &s->known;
    if (!k->cap)
        return NULL;
    for (size_t i = choice_hash(c, s->n) & (k->cap - 1);; i = (i + 1) & (k->cap - 1)) {
        if (!k->used[i])
            return NULL;
        if (memcmp(k->slot[i].choice, c, (size_t)s->n) == 0)
            return &k->slot[i];
    }
}

/* Records c's log latency; AMK_ENOMEM leaves the table as it was (the search goes on, it
 * only re-proposes nothing: a child it cannot look up is still checked against `seen`). */
static int known_put(evo_state *s, const uint8_t *c, double lg)
{
    evo_known *k = &s->known;
    if (2 * (k->len + 1) > k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 256;
        evo_member *slot = calloc(cap, sizeof *slot);
        uint8_t *used = calloc(cap, 1);
        if (!slot || !used) {
            free(slot);
            free(used);
            return AMK_ENOMEM;
        }
        for (size_t j = 0; j < k->cap; j++) {
            if (!k->used[j])
                continue;
            size_t i = choice_hash(k->slot[j].choice, s->n) & (cap - 1);
            while (used[i])
                i = (i + 1) & (cap - 1);
            slot[i] = k->slot[j];
            used[i] = 1;
        }
        free(k->slot);
        free(k->used);
        k->slot = slot;
        k->used = used;
        k->cap = cap;
    }
    size_t i = choice_hash(c, s->n) & (k->cap - 1);
    while (k->used[i] && memcmp(k->slot[i].choice, c, (size_t)s->n) != 0)
        i = (i + 1) & (k->cap - 1);
    if (!k->used[i]) {
        k->used[i] = 1;
        k->len++;
        memset(&k->slot[i], 0, sizeof k->slot[i]);
        memcpy(k->slot[i].choice, c, (size_t)s->n);
    }
    k->slot[i].lg = lg;
    return AMK_OK;
}

/* ---- init / clear ------------------------------------------------------------------------ */

static void evo_clear(void *state);

static int evo_init(void *state, const amk_space *sp, const amk_strategy_opts *opts)
{
    evo_state *s = state;
    memset(s, 0, sizeof *s);
    s->sp = sp;
    s->n = amk_spec_n_params(amk_space_spec(sp));
    s->rng = amk__rng_create(opts ? opts->seed : 0);
    s->hc = calloc(1, amk__strategy_hillclimb.state_size);
    if (!s->rng || !s->hc)
        goto fail;
    int rc = amk__strategy_hillclimb.init(s->hc, sp, opts);
    if (rc < 0) {
        free(s->hc);
        s->hc = NULL;
        evo_clear(s);
        return rc;
    }
    amk__visited_init(&s->vis, sp);
    amk__sampler_init(&s->smp, sp, s->rng, &s->vis);
    s->walk_only = (int)env_or("EVO_WALKONLY", 2 * s->n + 8);
    s->p_walk = env_or("EVO_PWALK", 0.0);
    s->elite_size = (int)env_or("EVO_ELITE", 8);
    if (s->elite_size > EVO_ELITE_MAX)
        s->elite_size = EVO_ELITE_MAX;
    if (s->elite_size < 2)
        s->elite_size = 2;
    s->p_random = env_or("EVO_PRAND", 0.05);
    s->bias = env_or("EVO_BIAS", 2.0);
    s->niche = (int)env_or("EVO_NICHE", 0);
    s->mut_rate = env_or("EVO_MUT", 1.0);
    s->hc_rc = 1;
    return AMK_OK;
fail:
    free(s->hc);
    s->hc = NULL;
    evo_clear(s);
    return AMK_ENOMEM;
}

static void evo_clear(void *state)
{
    evo_state *s = state;
    if (s->hc) {
        amk__strategy_hillclimb.clear(s->hc);
        free(s->hc);
    }
    s->hc = NULL;
    amk__sampler_clear(&s->smp);
    amk__visited_clear(&s->vis);
    free(s->known.slot);
    free(s->known.used);
    memset(&s->known, 0, sizeof s->known);
    if (s->rng)
        gsl_rng_free(s->rng);
    s->rng = NULL;
}

/* ---- breeding ---------------------------------------------------------------------------- */

/* A rank-biased draw from the elite: the fastest is likeliest. */
static int pick_parent(evo_state *s)
{
    double u = gsl_rng_uniform(s->rng);
    int i = (int)(s->nelite * pow(u, s->bias));
    return i < s->nelite ? i : s->nelite - 1;
}

/* A child of two elite configs: uniform crossover, then each param moves with probability
 * mut_rate / n (one step up or down, or now and then to any of its values); a child equal to
 * its first parent gets one forced move. 1 with *out valid and not yet evaluated. */
static int ga_next(evo_state *s, const amk_idset *seen, amk_config *out)
{
    const amk_spec *spec = amk_space_spec(s->sp);
    if (s->nelite < 2 || gsl_rng_uniform(s->rng) < s->p_random)
        return 0;
    for (int t = 0; t < EVO_BREED_TRIES; t++) {
        int a = pick_parent(s), b = pick_parent(s);
        if (a == b)
            b = (a + 1 + (int)gsl_rng_uniform_int(s->rng, (unsigned long)(s->nelite - 1))) %
                s->nelite;
        amk_config c;
        amk__config_zero(s->sp, &c);
        int same = 1;
        for (int p = 0; p < s->n; p++) {
            c.choice[p] = gsl_rng_uniform_int(s->rng, 2) ? s->elite[a].choice[p]
                                                          : s->elite[b].choice[p];
            same &= c.choice[p] == s->elite[a].choice[p];
        }
        int forced = same ? (int)gsl_rng_uniform_int(s->rng, (unsigned long)s->n) : -1;
        for (int p = 0; p < s->n; p++) {
            int nc = amk_spec_param_n_choices(spec, p);
            if (nc < 2 || (p != forced && gsl_rng_uniform(s->rng) >= s->mut_rate / s->n))
                continue;
            int v = c.choice[p];
            if (gsl_rng_uniform(s->rng) < 0.25) {
                v = (int)gsl_rng_uniform_int(s->rng, (unsigned long)nc);
            } else {
                v += gsl_rng_uniform_int(s->rng, 2) ? 1 : -1;
                if (v < 0 || v >= nc)
                    v = 2 * c.choice[p] - v;
            }
            c.choice[p] = (uint8_t)v;
        }
        if (amk__space_valid(s->sp, &c) && !known_find(s, c.choice) &&
            !amk__visited_has(&s->vis, seen, &c)) {
            *out = c;
            return 1;
        }
    }
    return 0;
}

static int hamming(const uint8_t *a, const uint8_t *b, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++)
        d += a[i] != b[i];
    return d;
}

/* Inserts a config into the elite (fastest first) when it is among the elite_size fastest.
 * Crowding: a config within `niche` params of a member competes with that member only, so
 * one basin's neighbours cannot fill the elite and crossover keeps material from others. */
static void elite_add(evo_state *s, const uint8_t *c, double lg)
{
    int i = -1;
    if (s->niche > 0) {
        int dmin = s->n + 1;
        for (int j = 0; j < s->nelite; j++) {
            int d = hamming(s->elite[j].choice, c, s->n);
            if (d < dmin) {
                dmin = d;
                i = j;
            }
        }
        if (dmin > s->niche)
            i = -1;
        else if (lg >= s->elite[i].lg)
            return;
    }
    if (i < 0) {
        if (s->nelite == s->elite_size && lg >= s->elite[s->nelite - 1].lg)
            return;
        i = s->nelite < s->elite_size ? s->nelite++ : s->nelite - 1;
    }
    while (i > 0 && s->elite[i - 1].lg > lg) {
        s->elite[i] = s->elite[i - 1];
        i--;
    }
    memcpy(s->elite[i].choice, c, sizeof s->elite[i].choice);
    s->elite[i].lg = lg;
}

/* ---- the strategy ------------------------------------------------------------------------ */

static int evo_next(void *state, const amk_idset *seen, amk_proposal *out)
{
    evo_state *s = state;
    int walk = s->hc_rc == 1 &&
               (s->proposed < s->walk_only || gsl_rng_uniform(s->rng) < s->p_walk);
    for (int tries = 0; tries < 4; tries++) {
        amk_config c;
        if (walk) {
            int rc = amk__strategy_hillclimb.next(s->hc, seen, out);
            if (rc < 0)
                return rc;
            s->hc_rc = rc;
            if (rc == 1 && !known_find(s, out->config.choice)) {
                known_put(s, out->config.choice, NAN);
                s->proposed++;
                return 1;
            }
            walk = 0;
            continue;
        }
        if (!ga_next(s, seen, &c))
            break;
        known_put(s, c.choice, NAN);
        amk__visited_mark(&s->vis, &c);
        s->proposed++;
        amk__proposal_set(out, &c, "evolve");
        return 1;
    }
    amk_config c;
    int rc = amk__sampler_next(&s->smp, seen, &c);
    if (rc == 1) {
        known_put(s, c.choice, NAN);
        s->proposed++;
        amk__proposal_set(out, &c, "random");
    }
    return rc;
}

static void evo_observe(void *state, const amk_config *c, const amk_verdict *v, int kept)
{
    evo_state *s = state;
    amk__strategy_hillclimb.observe(s->hc, c, v, kept);
    amk__visited_mark(&s->vis, c);
    int ok = v && v->status == AMK_STATUS_OK && isfinite(v->latency_us) && v->latency_us > 0;
    double lg = ok ? log(v->latency_us) : INFINITY;
    known_put(s, c->choice, lg);
    if (ok)
        elite_add(s, c->choice, lg);
}

const amk_strategy_type amk__strategy_evolve = {
    .api_version = AMK__STRATEGY_API,
    .name = "evolve",
    .doc = "hillclimb's start (the spec's default config and the walk around it), then a "
           "generational genetic search (rank-weighted parents, uniform crossover, light "
           "mutation) interleaved with that walk",
    .state_size = sizeof(evo_state),
    .init = evo_init,
    .next = evo_next,
    .observe = evo_observe,
    .clear = evo_clear,
};
