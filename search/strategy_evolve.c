/* evolve: hillclimb for the first trials (the spec's default config and the walk around
 * it: the early lead on every recorded space), then a steady-state genetic search over the
 * fastest configs seen, interleaved with that walk by a two-armed bandit: each genetic
 * proposal is, of a few dozen children of two elite configs (rank-biased parents, uniform
 * crossover, a light mutation) and uniform samples, the one a Gaussian process fitted to
 * every verdict so far expects to improve most (search/surrogate.c); now and then a plain
 * uniform sample. The walk alone stalls in the first good basin it finds; recombining the
 * best configs crosses between basins, which is where Kernel Tuner's genetic_algorithm wins
 * late, and screening the children finds the good ones sooner (docs/PERFORMANCE.md,
 * "Search quality"). A walk that gains little in its first trials (a plateau around the
 * default) hears a few uniform samples before it goes on (EVO_PLATEAU_*). Where verdicts
 * say what their trials cost (a replay's recorded compile + benchmark time; on a GPU the
 * measured share of the wall clock), the screen ranks expected improvement per second.
 * Never proposes a config twice or one in `seen`. */
#include "search_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EVO_ELITE 8         /* parents are drawn from the 8 fastest configs seen */
#define EVO_RANDOM 0.05     /* share of the genetic proposals that are uniform samples */
#define EVO_BREED_TRIES 64  /* crossover draws before a uniform sample instead */
/* Once the genetic search runs, the walk keeps a share of the proposals: it hears every
 * verdict, so it climbs from whatever crossover found (without it the deceptive landscape
 * of tests/check_search.c took 488 evaluations, median, instead of 83). The share
 * follows the two arms' success (their configs entering the elite) over their last
 * EVO_WINDOW proposals, within [EVO_SHARE_MIN, 1 - EVO_SHARE_MIN]: on a flat landscape the
 * walk's small steps keep paying and crossover's do not (dedispersion/A100's time score
 * fell from 0.83 to 0.67 with a fixed share of 0.3; 0.81 with this one). */
#define EVO_WINDOW 20
#define EVO_SHARE_MIN 0.2
#define EVO_PENDING 256     /* proposals remembered while their verdicts are due */
/* The surrogate's screen: of EVO_CHILDREN children and EVO_SAMPLES uniform samples, the one
 * of highest expected improvement (64 + 16 were no better on the development pairs and cost
 * twice as much). Its training set: every verdict while they fit in AMK__GP_MAX, then the
 * AMK__GP_MAX / 2 fastest and the most recent. Its hyperparameters are tuned again after
 * max(EVO_TUNE_EVERY, verdicts / EVO_TUNE_EVERY) new verdicts (they settle as the verdicts
 * grow). A tune costs tens of factorisations (73 on gemm_milo's 17 params, ~0.5 ms, the
 * slowest proposals by far): it runs EVO_TUNE_SLICE of them a refit, the weights in use
 * changing when it ends (2-5 refits later), so no proposal pays for a whole one. */
#define EVO_CHILDREN 32
#define EVO_SAMPLES 8
#define EVO_TUNE_EVERY 8
#define EVO_TUNE_SLICE 16   /* factorisations of a tune a proposal may make */
/* What a time budget pays for is seconds, not trials: where the verdicts carry a trial's
 * cost (amk_verdict.cost_s), a candidate's expected improvement is divided by the mean cost
 * of its EVO_COST_NEAR nearest verdicts (params that differ) among the last EVO_COST_RECENT
 * (expected improvement per second). Configs near slow ones cost more to try: a large tile
 * that compiles for seconds, a slow kernel timed many times. Development pairs and a
 * Default in a costly region: docs/PERFORMANCE.md, "Expected improvement per second"; live
 * gemm_hopper loops (level): "A live trial's cost". */
#define EVO_COST_NEAR 3
#define EVO_COST_RECENT 256
/* A walk from the spec's default whose last EVO_WALK_STALL verdicts brought no new best
 * ends its solo trials there: the genetic search starts (the walk keeps its share) instead
 * of the walk trying the rest of a local optimum's neighbours alone. On convolution H100
 * and H200 the walk from the Default reaches a local optimum (rank 802 of 3423) within a
 * few trials and then tried its neighbours for 20 more (ranks +0.04 there on 1300 seeds;
 * the other development pairs within 0.01, the held-out pairs level). Runs asked not to
 * start at the default (no_default) are left as they were: not measured.
 * docs/PERFORMANCE.md, "A stalled walk". */
#define EVO_WALK_STALL 12
/* A walk from the spec's default that has gained less than EVO_PLATEAU_GAIN halfway through
 * its solo trials is likely on a plateau: convolution on an H200 puts the default at 1.9x
 * the optimum among neighbours within 1-2 % of it, the optimum six params away, and the walk,
 * gaining a little at each step, neither stalls nor leaves (its time score 0.30 of 100
 * seeds, many below random search). There EVO_PLATEAU_SAMPLES uniform samples come next; the
 * walk hears them and moves to one that beats it. Only where the run's limits buy at least
 * EVO_PLATEAU_TRIALS trials at the default's cost (8 samples are then about 3 % of them; a
 * time limit without a recorded cost buys none). Where the walk gains early (convolution on
 * an A100, default at 2.4x: 8 % or more by then in 15 of 20 seeds), nothing changes.
 * Development pairs and the held-out check: docs/PERFORMANCE.md, "A walk on a plateau". */
#define EVO_PLATEAU_GAIN 0.08
#define EVO_PLATEAU_SAMPLES 8
#define EVO_PLATEAU_TRIALS 250

typedef struct evo_member {
    uint8_t choice[AMK_MAX_PARAMS];
    double lg;              /* log latency */
} evo_member;

enum { ARM_WALK, ARM_GENETIC, N_ARMS };

/* A proposal waiting for its verdict, and the arm that made it. */
typedef struct evo_pending {
    uint8_t choice[AMK_MAX_PARAMS];
    int arm;
} evo_pending;

typedef struct evo_state {
    const amk_space *sp;
    int n;
    gsl_rng *rng;
    amk__visited vis;
    amk__sampler smp;
    void *hc;               /* the walk: hillclimb's state, driven through its type object */
    long walk_trials;       /* proposals the walk makes before the genetic search starts */
    long proposed;
    evo_member elite[EVO_ELITE]; /* fastest first */
    int nelite;
    evo_pending pend[EVO_PENDING];
    int npend;
    /* the last EVO_WINDOW outcomes of each arm (1: its config entered the elite) */
    uint8_t outcome[N_ARMS][EVO_WINDOW];
    int nout[N_ARMS], next_out[N_ARMS];
    /* every verdict heard, for the surrogate (lg NAN: failed) */
    uint8_t (*obs)[AMK_MAX_PARAMS];
    double *obs_lg;
    double *obs_cost;       /* the trial's cost in seconds, NAN when the verdict had none */
    long nobs, obs_cap;
    long ncosted;           /* verdicts with a cost */
    long fastest[AMK__GP_MAX / 2]; /* indices into obs of the fastest ok ones, fastest first */
    int nfastest;
    amk__gp *gp;
    long gp_at, tuned_at;   /* nobs when last fitted, when last tuned (0: never) */
    int gp_ok;
    int from_default;       /* the walk began at the spec's default config */
    int64_t budget;         /* the run's limits (amk_strategy_opts) */
    double time_limit_s;
    int plateau_checked, plateau_left; /* uniform samples still due (EVO_PLATEAU_*) */
} evo_state;

static void evo_clear(void *state)
{
    evo_state *s = state;
    if (s->hc) {
        amk__strategy_hillclimb.clear(s->hc);
        free(s->hc);
        s->hc = NULL;
    }
    free(s->obs);
    free(s->obs_lg);
    free(s->obs_cost);
    free(s->gp);
    s->obs = NULL;
    s->obs_lg = NULL;
    s->obs_cost = NULL;
    s->gp = NULL;
    amk__sampler_clear(&s->smp);
    amk__visited_clear(&s->vis);
    if (s->rng)
        gsl_rng_free(s->rng);
    s->rng = NULL;
}

static int evo_init(void *state, const amk_space *sp, const amk_strategy_opts *opts)
{
    evo_state *s = state;
    memset(s, 0, sizeof *s);
    s->sp = sp;
    s->n = amk_spec_n_params(amk_space_spec(sp));
    amk__visited_init(&s->vis, sp);
    s->rng = amk__rng_create(opts ? opts->seed : 0);
    s->hc = calloc(1, amk__strategy_hillclimb.state_size);
    s->gp = calloc(1, sizeof *s->gp);
    /* the model's ~630 KB touched now, a page at a time, so that its pages are not first
     * written (a fault each) inside the proposal that first tunes it */
    for (size_t at = 0; s->gp && at < sizeof *s->gp; at += 4096)
        ((volatile char *)s->gp)[at] = 0;
    if (!s->rng || !s->hc || !s->gp) {
        evo_clear(s);
        return AMK_ENOMEM;
    }
    int rc = amk__strategy_hillclimb.init(s->hc, sp, opts);
    if (rc < 0) {
        free(s->hc); /* init failed: nothing of it to clear */
        s->hc = NULL;
        evo_clear(s);
        return rc;
    }
    amk__sampler_init(&s->smp, sp, s->rng, &s->vis);
    /* hillclimb's patience: the walk gets about one stall's worth of trials alone */
    s->walk_trials = opts && opts->patience > 0 ? opts->patience : 2 * s->n + 8;
    s->from_default = !(opts && opts->no_default);
    s->budget = opts ? opts->budget : 0;
    s->time_limit_s = opts ? opts->time_limit_s : 0;
    return AMK_OK;
}

/* A rank-biased draw from the elite (index n*u^2): the fastest is likeliest. */
static int pick_parent(evo_state *s)
{
    double u = gsl_rng_uniform(s->rng);
    int i = (int)(s->nelite * u * u);
    return i < s->nelite ? i : s->nelite - 1;
}

/* A child of two elite configs: uniform crossover, then each param moves with probability
 * 1/n, one step up or down (reflected at the ends) or, one time in four, to any of its
 * values; a child equal to its first parent gets one forced move. 1 with *out valid and
 * neither visited nor seen; 0 when EVO_BREED_TRIES draws found none. */
static int breed(evo_state *s, const amk_idset *seen, amk_config *out)
{
    const amk_spec *spec = amk_space_spec(s->sp);
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
            if (nc < 2 || (p != forced && gsl_rng_uniform(s->rng) >= 1.0 / s->n))
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
        if (amk__space_valid(s->sp, &c) && !amk__visited_has(&s->vis, seen, &c)) {
            *out = c;
            return 1;
        }
    }
    return 0;
}

static void pending_add(evo_state *s, const amk_config *c, int arm)
{
    if (s->npend == EVO_PENDING) { /* a verdict never came: forget the oldest */
        memmove(s->pend, s->pend + 1, (EVO_PENDING - 1) * sizeof *s->pend);
        s->npend--;
    }
    memcpy(s->pend[s->npend].choice, c->choice, sizeof s->pend[s->npend].choice);
    s->pend[s->npend++].arm = arm;
}

/* The arm that proposed c (removed from the pending list), or -1 (a resumed run's rows). */
static int pending_take(evo_state *s, const amk_config *c)
{
    for (int i = s->npend - 1; i >= 0; i--)
        if (memcmp(s->pend[i].choice, c->choice, sizeof c->choice) == 0) {
            int arm = s->pend[i].arm;
            s->pend[i] = s->pend[--s->npend];
            return arm;
        }
    return -1;
}

/* The walk's share of the proposals: the arms' success rates over their recent proposals
 * (Laplace-smoothed), in proportion, kept within [EVO_SHARE_MIN, 1 - EVO_SHARE_MIN]. */
static double walk_share(const evo_state *s)
{
    double rate[N_ARMS];
    for (int a = 0; a < N_ARMS; a++) {
        int won = 0;
        for (int i = 0; i < s->nout[a]; i++)
            won += s->outcome[a][i];
        rate[a] = (won + 1.0) / (s->nout[a] + 2.0);
    }
    double p = rate[ARM_WALK] / (rate[ARM_WALK] + rate[ARM_GENETIC]);
    return p < EVO_SHARE_MIN ? EVO_SHARE_MIN : p > 1 - EVO_SHARE_MIN ? 1 - EVO_SHARE_MIN : p;
}

/* Remembers a verdict for the surrogate (lg NAN: failed; cost NAN: unknown) and keeps the
 * list of the fastest. Out of memory it forgets the verdict: the surrogate sees less,
 * nothing else changes. */
static void obs_add(evo_state *s, const amk_config *c, double lg, double cost)
{
    if (s->nobs == s->obs_cap) {
        long cap = s->obs_cap ? 2 * s->obs_cap : 256;
        uint8_t(*o)[AMK_MAX_PARAMS] = realloc(s->obs, (size_t)cap * sizeof *o);
        if (!o)
            return;
        s->obs = o;
        double *l = realloc(s->obs_lg, (size_t)cap * sizeof *l);
        if (!l)
            return;
        s->obs_lg = l;
        double *co = realloc(s->obs_cost, (size_t)cap * sizeof *co);
        if (!co)
            return;
        s->obs_cost = co;
        s->obs_cap = cap;
    }
    long k = s->nobs++;
    memcpy(s->obs[k], c->choice, sizeof s->obs[k]);
    s->obs_lg[k] = lg;
    s->obs_cost[k] = cost;
    s->ncosted += isfinite(cost);
    if (isnan(lg))
        return;
    const int cap = AMK__GP_MAX / 2;
    if (s->nfastest == cap && lg >= s->obs_lg[s->fastest[cap - 1]])
        return;
    int i = s->nfastest < cap ? s->nfastest++ : cap - 1;
    while (i > 0 && s->obs_lg[s->fastest[i - 1]] > lg) {
        s->fastest[i] = s->fastest[i - 1];
        i--;
    }
    s->fastest[i] = k;
}

/* Fits the surrogate to the verdicts heard, a failed config at the slowest latency of the
 * set (so it steers away from where configs fail). 1 when it is usable. */
static int gp_refit(evo_state *s)
{
    /* a tune under way goes on for a slice; once it ends, its weights need a fit */
    int tuned = s->gp->tuning && amk__gp_tune_step(s->gp, EVO_TUNE_SLICE);
    if (s->gp_at == s->nobs && !tuned)
        return s->gp_ok;
    uint8_t x[AMK__GP_MAX][AMK_MAX_PARAMS];
    double lg[AMK__GP_MAX];
    long pick[AMK__GP_MAX];
    int m = 0;
    if (s->nobs <= AMK__GP_MAX) {
        for (long k = 0; k < s->nobs; k++)
            pick[m++] = k;
    } else {
        for (int i = 0; i < s->nfastest; i++)
            pick[m++] = s->fastest[i];
        int nf = m;
        for (long k = s->nobs - 1; k >= 0 && m < AMK__GP_MAX; k--) {
            int dup = 0;
            for (int i = 0; i < nf && !dup; i++)
                dup = pick[i] == k;
            if (!dup)
                pick[m++] = k;
        }
    }
    double worst = -INFINITY;
    int nok = 0;
    for (int i = 0; i < m; i++)
        if (!isnan(s->obs_lg[pick[i]])) {
            nok++;
            worst = fmax(worst, s->obs_lg[pick[i]]);
        }
    s->gp_at = s->nobs;
    s->gp_ok = 0;
    if (nok < 2)
        return 0;
    for (int i = 0; i < m; i++) {
        memcpy(x[i], s->obs[pick[i]], sizeof x[i]);
        lg[i] = isnan(s->obs_lg[pick[i]]) ? worst : s->obs_lg[pick[i]];
    }
    long every = s->nobs / EVO_TUNE_EVERY > EVO_TUNE_EVERY ? s->nobs / EVO_TUNE_EVERY
                                                           : EVO_TUNE_EVERY;
    int retune = !s->gp->tuning && (s->tuned_at == 0 || s->nobs - s->tuned_at >= every);
    /* the obs indices name the points: the kernel between those of the last fit is kept */
    s->gp_ok = amk__gp_fit(s->gp, s->n, (const uint8_t(*)[AMK_MAX_PARAMS])x, pick, lg, m, 0);
    if (retune && s->gp_ok) {
        /* a tune of these points, a slice now and one at each refit after: the weights in
         * use change when it ends, and no proposal pays for a whole tune */
        s->tuned_at = s->nobs;
        amk__gp_tune_begin(s->gp);
        if (amk__gp_tune_step(s->gp, EVO_TUNE_SLICE))
            s->gp_ok = amk__gp_fit(s->gp, s->n, (const uint8_t(*)[AMK_MAX_PARAMS])x, pick, lg,
                                   m, 0);
    }
    return s->gp_ok;
}

/* What trying x would cost: the mean cost of its EVO_COST_NEAR nearest verdicts with a cost
 * among the last EVO_COST_RECENT (distance: the params that differ). NAN when none has one. */
static double cost_near(const evo_state *s, const uint8_t *x)
{
    int dist[EVO_COST_NEAR];
    double cost[EVO_COST_NEAR];
    int m = 0;
    for (long k = s->nobs > EVO_COST_RECENT ? s->nobs - EVO_COST_RECENT : 0; k < s->nobs; k++) {
        if (!isfinite(s->obs_cost[k]))
            continue;
        int d = amk__diff_count(s->obs[k], x);
        if (m == EVO_COST_NEAR && d >= dist[m - 1])
            continue;
        int i = m < EVO_COST_NEAR ? m++ : m - 1; /* insertion, nearest first */
        while (i > 0 && dist[i - 1] > d) {
            dist[i] = dist[i - 1];
            cost[i] = cost[i - 1];
            i--;
        }
        dist[i] = d;
        cost[i] = s->obs_cost[k];
    }
    double sum = 0;
    for (int i = 0; i < m; i++)
        sum += cost[i];
    return m && sum > 0 ? sum / m : NAN;
}

/* The cheapest recorded cost among the last EVO_COST_RECENT verdicts: no candidate's
 * cost_near is below it. NAN when none is positive or any is not. */
static double cost_floor(const evo_state *s)
{
    double lo = INFINITY;
    for (long k = s->nobs > EVO_COST_RECENT ? s->nobs - EVO_COST_RECENT : 0; k < s->nobs; k++)
        if (isfinite(s->obs_cost[k]))
            lo = fmin(lo, s->obs_cost[k]);
    return isfinite(lo) && lo > 0 ? lo : NAN;
}

/* Expected improvement per second: each positive ei divided by its candidate's cost_near,
 * in order of ei. A candidate whose ei over cost_floor is already below the best ratio
 * cannot win; it is left undivided and flagged in later[] (screened divides it only if the
 * winner turns out seen), which keeps a proposal's cost within bounds on a large history. */
static void per_second(const evo_state *s, const uint8_t (*x)[AMK_MAX_PARAMS], int nc,
                       double *ei, uint8_t *later)
{
    double floor = cost_floor(s);
    int order[EVO_CHILDREN + EVO_SAMPLES], m = 0;
    for (int i = 0; i < nc; i++) {
        later[i] = 0;
        if (!(ei[i] > 0))
            continue;
        int j = m++;
        while (j > 0 && ei[order[j - 1]] < ei[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    double best = -1;
    for (int k = 0; k < m; k++) {
        int i = order[k];
        if (isfinite(floor) && ei[i] / floor < best) {
            later[i] = 1;
            continue;
        }
        double cost = cost_near(s, x[i]);
        if (isfinite(cost))
            ei[i] /= cost;
        best = fmax(best, ei[i]);
    }
}

/* Of EVO_CHILDREN children of the elite and EVO_SAMPLES uniform samples, the one of highest
 * expected improvement under the surrogate, per second of its expected cost where verdicts
 * carry costs (the first of equals). 1 with *out set; 0 when none was drawn. The
 * candidates are checked against this search's visited memo only; the loop's `seen` (rows
 * this search never proposed nor heard of: a shared results file) is asked by config id, a
 * canonical JSON text and its hash, once per winner instead of once per candidate (40 of
 * them were a third of a proposal's time on gemm_milo). */
static int screened(evo_state *s, const amk_idset *seen, amk_config *out)
{
    amk_config cand[EVO_CHILDREN + EVO_SAMPLES];
    uint8_t x[EVO_CHILDREN + EVO_SAMPLES][AMK_MAX_PARAMS];
    double ei[EVO_CHILDREN + EVO_SAMPLES];
    uint8_t later[EVO_CHILDREN + EVO_SAMPLES] = {0};
    int nc = 0;
    for (int t = 0; t < EVO_CHILDREN + EVO_SAMPLES; t++) {
        amk_config *c = &cand[nc];
        if (t < EVO_CHILDREN) {
            if (!breed(s, NULL, c))
                continue;
        } else {
            amk__config_zero(s->sp, c);
            if (amk_space_sample(s->sp, AMK__RNG(s->rng), c, 16) != AMK_OK ||
                amk__visited_has(&s->vis, NULL, c))
                continue;
        }
        memcpy(x[nc++], c->choice, sizeof x[0]);
    }
    amk__gp_ei_many(s->gp, (const uint8_t(*)[AMK_MAX_PARAMS])x, nc, ei);
    if (s->ncosted > 0)
        per_second(s, (const uint8_t(*)[AMK_MAX_PARAMS])x, nc, ei, later);
    for (;;) {
        double best = -1; /* below any expected improvement; a NaN one is never picked */
        int at = -1;
        for (int i = 0; i < nc; i++)
            if (!later[i] && ei[i] > best) {
                best = ei[i];
                at = i;
            }
        if (at < 0)
            return 0;
        if (!amk__visited_has(&s->vis, seen, &cand[at])) {
            *out = cand[at];
            return 1;
        }
        ei[at] = NAN; /* seen: the next best, of every candidate's ratio */
        for (int i = 0; i < nc; i++)
            if (later[i]) {
                ei[i] /= cost_near(s, x[i]);
                later[i] = 0;
            }
    }
}

static int emit(evo_state *s, amk_proposal *out, const amk_config *c, const char *source)
{
    pending_add(s, c, ARM_GENETIC);
    amk__visited_mark(&s->vis, c);
    s->proposed++;
    amk__proposal_set(out, c, source);
    return 1;
}

/* Halfway through the walk's solo trials: whether it is on a plateau around the default
 * (EVO_PLATEAU_*), and the uniform samples due if so. Asked once. A resumed run (`amk
 * propose` is one) asked later gets what is left of them; past the solo trials, none. */
static void plateau_check(evo_state *s)
{
    s->plateau_checked = 1;
    if (!s->from_default || s->proposed > s->walk_trials || s->nobs < 2 ||
        isnan(s->obs_lg[0]) || s->nelite == 0)
        return; /* no walk from a default that answered, or none heard yet (a walk of 2 or
                 * 3 trials is checked right after the default: nothing to judge) */
    if (s->elite[0].lg < s->obs_lg[0] + log(1 - EVO_PLATEAU_GAIN))
        return; /* the walk gains */
    double trials = s->budget > 0 ? (double)s->budget : INFINITY;
    if (s->time_limit_s > 0)
        trials = fmin(trials, s->obs_cost[0] > 0 ? s->time_limit_s / s->obs_cost[0] : 0);
    long late = s->proposed - s->walk_trials / 2;
    if (trials >= EVO_PLATEAU_TRIALS && late < EVO_PLATEAU_SAMPLES)
        s->plateau_left = EVO_PLATEAU_SAMPLES - (int)late;
}

static int evo_next(void *state, const amk_idset *seen, amk_proposal *out)
{
    evo_state *s = state;
    amk_config c;
    if (!s->plateau_checked && s->proposed >= s->walk_trials / 2)
        plateau_check(s);
    /* the walk has stalled (EVO_WALK_STALL: verdicts heard since the fastest, fastest[0]);
     * not before the plateau check, whose samples are the first way off a Default that its
     * neighbours do not beat */
    long since_best = s->nobs - (s->nfastest > 0 ? s->fastest[0] + 1 : 0);
    if (s->from_default && s->plateau_checked && s->plateau_left == 0 &&
        s->proposed < s->walk_trials && since_best >= EVO_WALK_STALL)
        s->walk_trials = s->proposed;
    if (s->plateau_left > 0) {
        s->plateau_left--;
        if (amk__sampler_next(&s->smp, seen, &c) == 1)
            return emit(s, out, &c, "plateau");
    }
    if (s->proposed < s->walk_trials || gsl_rng_uniform(s->rng) < walk_share(s)) {
        int rc = amk__strategy_hillclimb.next(s->hc, seen, out);
        if (rc != 0) {
            if (rc == 1) {
                pending_add(s, &out->config, ARM_WALK);
                amk__visited_mark(&s->vis, &out->config);
                s->proposed++;
            }
            return rc;
        }
        /* the walk has nothing left: the space is exhausted, the sampler will say so */
    }
    if (s->nelite >= 2 && gsl_rng_uniform(s->rng) >= EVO_RANDOM) {
        if (gp_refit(s) && screened(s, seen, &c))
            return emit(s, out, &c, "surrogate");
        if (breed(s, seen, &c))
            return emit(s, out, &c, "crossover");
    }
    int rc = amk__sampler_next(&s->smp, seen, &c);
    return rc == 1 ? emit(s, out, &c, "random") : rc;
}

/* Inserts a config into the elite (fastest first) when it is among the EVO_ELITE fastest. */
static int elite_add(evo_state *s, const amk_config *c, double lg)
{
    if (s->nelite == EVO_ELITE && lg >= s->elite[EVO_ELITE - 1].lg)
        return 0;
    int i = s->nelite < EVO_ELITE ? s->nelite++ : EVO_ELITE - 1;
    while (i > 0 && s->elite[i - 1].lg > lg) {
        s->elite[i] = s->elite[i - 1];
        i--;
    }
    memcpy(s->elite[i].choice, c->choice, sizeof s->elite[i].choice);
    s->elite[i].lg = lg;
    return 1;
}

static void evo_observe(void *state, const amk_config *c, const amk_verdict *v, int kept)
{
    evo_state *s = state;
    /* the walk hears every verdict: a resumed run's replayed rows restore its centre */
    amk__strategy_hillclimb.observe(s->hc, c, v, kept);
    amk__visited_mark(&s->vis, c);
    int ok = v && v->status == AMK_STATUS_OK && isfinite(v->latency_us) && v->latency_us > 0;
    obs_add(s, c, ok ? log(v->latency_us) : NAN, v ? v->cost_s : NAN);
    int won = ok && elite_add(s, c, log(v->latency_us));
    int arm = pending_take(s, c);
    if (arm < 0) {
        /* a row of an earlier run (resume, `amk propose`): it counts as a trial of this
         * search, so a long history goes on with the genetic search, not a new walk */
        s->proposed++;
        return;
    }
    if (s->proposed <= s->walk_trials)
        return; /* the walk alone: no comparison to learn from */
    s->outcome[arm][s->next_out[arm]] = (uint8_t)won;
    s->next_out[arm] = (s->next_out[arm] + 1) % EVO_WINDOW;
    if (s->nout[arm] < EVO_WINDOW)
        s->nout[arm]++;
}

const amk_strategy_type amk__strategy_evolve = {
    .api_version = AMK__STRATEGY_API,
    .name = "evolve",
    .doc = "hillclimb's walk from the spec's default config for the first trials, then "
           "crossover and mutation of the fastest configs seen (steady-state genetic search), "
           "children screened by a Gaussian process's expected improvement (per second of "
           "their trials' cost, where verdicts record it), interleaved with that walk",
    .state_size = sizeof(evo_state),
    .init = evo_init,
    .next = evo_next,
    .observe = evo_observe,
    .clear = evo_clear,
};
