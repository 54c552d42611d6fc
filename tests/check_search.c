/* Check suite for search: the strategy table, keep/revert and the loop. Strategies run on the
 * landscape fixture (tests/fixtures/specs/landscape) through the `model` backend, whose
 * prediction is a bumpy function with one global optimum, and on a sweep recorded from it
 * replayed by the `sim` backend. Seeds are fixed; the assertions are about search quality,
 * determinism, budgets, resume and crash consistency, and can fail. */
#include "amk_search.h"
#include "amk_test.h"
#include "search_int.h"
#include "evaluator_int.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- fixture ---------------------------------------------------------------------------- */

typedef struct fixture {
    amk_spec *spec;
    amk_shape shape;
    amk_evaluator *ev;
    amk_space *sp;
    char dir[256];
    char results[320];
    char best[320];
} fixture;

static fixture F;

static void setup(void)
{
    amk_diag d = {0};
    memset(&F, 0, sizeof F);
    int rc = amk_spec_load(AMK_TEST_FIXTURES "/specs/landscape", &F.spec, &d);
    ck_assert_msg(rc == AMK_OK, "landscape fixture: %s", d.msg);
    amk_spec_shape(F.spec, 0, &F.shape);
    amk_backend_opts bo = {.target = "h100"};
    rc = amk_evaluator_create("model", &bo, F.spec, &F.shape, &F.ev, &d);
    ck_assert_msg(rc == AMK_OK, "model evaluator: %s", d.msg);
    rc = amk_space_create(F.spec, &F.shape, &amk_evaluator_target(F.ev)->limits, &F.sp, &d);
    ck_assert_msg(rc == AMK_OK, "space: %s", d.msg);
    amk_test_tmpdir_make_tmpfs(F.dir, sizeof F.dir, "search"); /* thousands of fsyncs */
    snprintf(F.results, sizeof F.results, "%s/results.tsv", F.dir);
    snprintf(F.best, sizeof F.best, "%s/best.json", F.dir);
}

static void teardown(void)
{
    amk_test_tmpdir_remove(F.dir);
    amk_space_free(F.sp);
    amk_evaluator_free(F.ev);
    amk_spec_free(F.spec);
    memset(&F, 0, sizeof F);
}

/* A landscape config by param values. */
static amk_config make(int x, int y, int z, int t)
{
    amk_config c;
    amk_config_default(F.spec, &F.shape, &c);
    const char *names[4] = {"X", "Y", "Z", "T"};
    const int want[4] = {x, y, z, t};
    for (int k = 0; k < 4; k++) {
        int p = amk_spec_param_index(F.spec, names[k]), found = 0;
        ck_assert_int_ge(p, 0);
        for (int j = 0; j < amk_spec_param_n_choices(F.spec, p); j++)
            if (amk_spec_param_value(F.spec, p, j) == want[k]) {
                c.choice[p] = (uint8_t)j;
                found = 1;
            }
        ck_assert_msg(found, "%s=%d is not a choice", names[k], want[k]);
    }
    return c;
}

/* The fixture's designed optimum; test_landscape_* proves it is the unique one. */
static void optimum_id(char out[17])
{
    amk_config c = make(9, 2, 8, 128);
    amk_config_id(&c, out);
}

static int64_t count_space(void)
{
    int64_t n = amk_space_count(F.sp);
    ck_assert_int_gt(n, 0);
    return n;
}

static amk_loop_opts opts_for(const char *strategy, uint64_t seed, int64_t budget)
{
    amk_loop_opts o = {0};
    o.space = F.sp;
    o.ev = F.ev;
    o.strategy = strategy;
    o.strategy_opts.seed = seed;
    o.budget = budget;
    o.results_path = F.results;
    o.min_gain = AMK_HISTORY_MIN_GAIN;
    return o;
}

/* ---- reading results back ---------------------------------------------------------------- */

typedef struct rowvec {
    amk_row *v;
    size_t n, cap;
} rowvec;

static int collect(const amk_row *r, void *ud)
{
    rowvec *rv = ud;
    if (rv->n == rv->cap) {
        rv->cap = rv->cap ? 2 * rv->cap : 256;
        rv->v = realloc(rv->v, rv->cap * sizeof *rv->v);
        ck_assert_ptr_nonnull(rv->v);
    }
    rv->v[rv->n++] = *r;
    return 0;
}

static rowvec read_rows(const char *path, amk_tsv_stats *st)
{
    rowvec rv = {0};
    amk_diag d = {0};
    amk_tsv_stats local;
    int rc = amk_tsv_read(path, collect, &rv, st ? st : &local, &d);
    ck_assert_msg(rc == AMK_OK, "read %s: %s", path, d.msg);
    return rv;
}

/* Number of distinct config ids among the rows. */
static size_t distinct_ids(const rowvec *rv)
{
    amk_idset *s = amk_idset_create();
    for (size_t i = 0; i < rv->n; i++)
        amk_idset_add(s, rv->v[i].config_id);
    size_t n = amk_idset_size(s);
    amk_idset_free(s);
    return n;
}

static void remove_results(void)
{
    unlink(F.results);
    unlink(F.best);
}

/* ---- progress probes --------------------------------------------------------------------- */

typedef struct probe {
    char target[17];
    int64_t calls;
    int64_t found_at;       /* evaluations (rows of this run) until target was evaluated */
    int sleep_us;           /* makes the "evaluator" slow */
    amk_incumbent first_best;
    char ids[4096][17];     /* first config ids, in order */
} probe;

static void on_progress(const amk_loop_progress *p, void *ud)
{
    probe *pr = ud;
    if (pr->calls == 0)
        pr->first_best = *p->best;
    if (pr->calls < 4096)
        snprintf(pr->ids[pr->calls], 17, "%s", p->last->config_id);
    pr->calls++;
    if (!pr->found_at && pr->target[0] && strcmp(p->last->config_id, pr->target) == 0)
        pr->found_at = pr->calls;
    if (pr->sleep_us)
        usleep((useconds_t)pr->sleep_us);
}

static probe *probe_new(void)
{
    probe *p = calloc(1, sizeof *p);
    ck_assert_ptr_nonnull(p);
    optimum_id(p->target);
    return p;
}

/* Evaluations until the optimum is first evaluated (budget + 1 when never). */
static int64_t evals_to_optimum(const char *strategy, uint64_t seed, int64_t budget,
                                const amk_strategy_opts *so)
{
    remove_results();
    probe *pr = probe_new();
    amk_loop_opts o = opts_for(strategy, seed, budget);
    if (so)
        o.strategy_opts = *so;
    o.strategy_opts.seed = seed;
    o.progress = on_progress;
    o.progress_ud = pr;
    amk_loop_result res;
    amk_diag d = {0};
    int rc = amk_loop_run(&o, &res, &d);
    ck_assert_msg(rc == AMK_OK, "%s seed %llu: %s", strategy, (unsigned long long)seed, d.msg);
    int64_t n = pr->found_at ? pr->found_at : budget + 1;
    free(pr);
    return n;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static double median_i64(int64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    return n % 2 ? (double)v[n / 2] : 0.5 * (double)(v[n / 2 - 1] + v[n / 2]);
}

/* ---- the fixture itself ------------------------------------------------------------------ */

typedef struct enum_ctx {
    amk_config *v;
    size_t n, cap;
} enum_ctx;

static int enum_collect(const amk_config *c, void *ud)
{
    enum_ctx *e = ud;
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 1024;
        e->v = realloc(e->v, e->cap * sizeof *e->v);
        ck_assert_ptr_nonnull(e->v);
    }
    e->v[e->n++] = *c;
    return 0;
}

static double predicted(const amk_config *c)
{
    amk_estimate est;
    amk_diag d = {0};
    ck_assert_msg(amk_cost_estimate(c, amk_evaluator_target(F.ev), &est, &d) == AMK_OK, "%s",
                  d.msg);
    return est.predicted_us;
}

START_TEST(test_landscape_has_unique_optimum_and_local_optima)
{
    enum_ctx e = {0};
    ck_assert_int_eq(amk_space_enumerate(F.sp, enum_collect, &e), AMK_OK);
    ck_assert_int_eq((int64_t)e.n, count_space());
    ck_assert_int_lt((int64_t)e.n, (int64_t)amk_space_raw_size(F.sp)); /* restrictions bite */
    char opt[17];
    optimum_id(opt);
    double best = INFINITY, second = INFINITY;
    size_t local_minima = 0;
    char best_id[17] = "";
    for (size_t i = 0; i < e.n; i++) {
        double p = predicted(&e.v[i]);
        if (p < best) {
            second = best;
            best = p;
            amk_config_id(&e.v[i], best_id);
        } else if (p < second) {
            second = p;
        }
        amk_config nb[2 * AMK_MAX_PARAMS];
        int nn = amk_space_neighbours(F.sp, &e.v[i], nb, 2 * AMK_MAX_PARAMS);
        ck_assert_int_gt(nn, 0);
        int is_min = 1;
        for (int k = 0; k < nn && is_min; k++)
            if (predicted(&nb[k]) <= p)
                is_min = 0;
        local_minima += (size_t)is_min;
    }
    fprintf(stderr, "landscape: %zu valid of %.0f raw configs, optimum %.3f us, runner-up "
            "%.3f us, %zu strict local minima\n", e.n, amk_space_raw_size(F.sp), best, second,
            local_minima);
    ck_assert_str_eq(best_id, opt);
    ck_assert_msg(second > best * 1.05, "optimum must win by > 5%% (%.3f vs %.3f)", best,
                  second);
    ck_assert_msg(local_minima >= 20, "only %zu local minima: not a bumpy landscape",
                  local_minima);
    free(e.v);
}
END_TEST

/* ---- strategy table ---------------------------------------------------------------------- */

START_TEST(test_amk_strategy_find_every_listed_strategy)
{
    const char *want[] = {"hillclimb", "random", "exhaustive", "anneal", "evolve"};
    int n = 0;
    for (; amk_strategies[n]; n++) {
        const amk_strategy_type *t = amk_strategies[n];
        ck_assert_int_eq(t->api_version, 1);
        ck_assert(t->state_size > 0);
        ck_assert(t->init && t->next && t->observe && t->clear && t->doc && t->doc[0]);
        ck_assert_ptr_eq(amk_strategy_find(t->name), t);
        for (int j = 0; j < n; j++)
            ck_assert_str_ne(amk_strategies[j]->name, t->name);
    }
    ck_assert_int_eq(n, 5);
    for (int i = 0; i < 5; i++)
        ck_assert_ptr_nonnull(amk_strategy_find(want[i]));
    ck_assert_ptr_null(amk_strategy_find("genetic"));
    ck_assert_ptr_null(amk_strategy_find(NULL));
    ck_assert_ptr_null(amk_strategy_find("Hillclimb"));
}
END_TEST

/* Every strategy, driven directly with a `seen` that holds all but 7 valid configs, proposes
 * exactly those 7, each once, then reports that nothing is left. */
START_TEST(test_amk_strategy_next_avoids_seen_and_ends)
{
    enum_ctx e = {0};
    ck_assert_int_eq(amk_space_enumerate(F.sp, enum_collect, &e), AMK_OK);
    gsl_rng *rng = amk__rng_create(99);
    size_t keep[7];
    for (int i = 0; i < 7; i++) {
        int dup;
        do {
            keep[i] = (size_t)gsl_rng_uniform_int(rng, e.n);
            dup = 0;
            for (int j = 0; j < i; j++)
                dup |= keep[j] == keep[i];
        } while (dup);
    }
    for (int k = 0; amk_strategies[k]; k++) {
        const amk_strategy_type *st = amk_strategies[k];
        amk_idset *seen = amk_idset_create(), *left = amk_idset_create();
        for (size_t i = 0; i < e.n; i++) {
            char id[17];
            amk_config_id(&e.v[i], id);
            int is_kept = 0;
            for (int j = 0; j < 7; j++)
                is_kept |= keep[j] == i;
            amk_idset_add(is_kept ? left : seen, id);
        }
        void *state = calloc(1, st->state_size);
        amk_strategy_opts so = {.seed = 5};
        ck_assert_int_eq(st->init(state, F.sp, &so), AMK_OK);
        int got = 0, rc = 1;
        for (int call = 0; call < 100 && rc == 1; call++) {
            amk_proposal p;
            rc = st->next(state, seen, &p);
            ck_assert_int_ge(rc, 0);
            if (rc == 0)
                break;
            char id[17];
            amk_config_id(&p.config, id);
            ck_assert_msg(amk_idset_has(left, id), "%s proposed a seen config (%s)", st->name,
                          p.source);
            ck_assert_msg(!amk_idset_has(seen, id), "%s repeated a config", st->name);
            amk_idset_add(seen, id);
            amk_verdict v = {0};
            amk_verdict_init(&v);
            v.status = AMK_STATUS_OK;
            v.latency_us = predicted(&p.config);
            st->observe(state, &p.config, &v, got == 0);
            got++;
        }
        ck_assert_msg(rc == 0 && got == 7, "%s: %d proposals, last rc %d", st->name, got, rc);
        st->clear(state);
        free(state);
        amk_idset_free(seen);
        amk_idset_free(left);
    }
    gsl_rng_free(rng);
    free(e.v);
}
END_TEST

/* The strategy's next proposal (there must be one), marked seen as a loop would. */
static void propose_marked(const amk_strategy_type *st, void *state, amk_idset *seen,
                           amk_proposal *p)
{
    ck_assert_int_eq(st->next(state, seen, p), 1);
    char id[17];
    amk_config_id(&p->config, id);
    amk_idset_add(seen, id);
}

/* Tells a strategy driven directly that c ran ok at latency_us, its trial costing cost_s
 * (NAN: not recorded). */
static void hear_ok(const amk_strategy_type *st, void *state, const amk_config *c,
                    double latency_us, double cost_s)
{
    amk_verdict v;
    amk_verdict_init(&v);
    v.status = AMK_STATUS_OK;
    v.latency_us = latency_us;
    v.cost_s = cost_s;
    st->observe(state, c, &v, 0);
}

/* evolve driven directly, its walk cut to 2 trials so that crossover starts at once: every
 * proposal satisfies the restrictions (X + Y + Z <= 30: children of two valid parents often
 * do not), none repeats, and most come from the genetic arm (children screened by the
 * surrogate; the walk keeps at least 2 in 10). */
START_TEST(test_amk_strategy_next_evolve_children_are_valid_and_new)
{
    const amk_strategy_type *st = amk_strategy_find("evolve");
    ck_assert_ptr_nonnull(st);
    void *state = calloc(1, st->state_size);
    amk_strategy_opts so = {.seed = 3, .patience = 2};
    ck_assert_int_eq(st->init(state, F.sp, &so), AMK_OK);
    amk_idset *seen = amk_idset_create();
    int crossover = 0;
    for (int call = 0; call < 400; call++) {
        amk_proposal p;
        ck_assert_int_eq(st->next(state, seen, &p), 1);
        ck_assert_msg(amk_space_valid(F.sp, &p.config, NULL) == AMK_OK,
                      "proposal %d (%s) breaks a restriction", call, p.source);
        char id[17];
        amk_config_id(&p.config, id);
        ck_assert_msg(!amk_idset_has(seen, id), "proposal %d (%s) repeats a config", call,
                      p.source);
        amk_idset_add(seen, id);
        crossover += strcmp(p.source, "surrogate") == 0 || strcmp(p.source, "crossover") == 0;
        hear_ok(st, state, &p.config, predicted(&p.config), NAN);
    }
    ck_assert_msg(crossover > 200, "only %d of 400 proposals were children", crossover);
    st->clear(state);
    free(state);
    amk_idset_free(seen);
}
END_TEST

/* The share of evolve's screened proposals (after a 2-trial walk) that fall where T is not
 * its smallest value, over 3 seeds of 300 proposals, with verdicts that carry a recorded cost
 * of 1 s where T is smallest and 20 s elsewhere (costed) or no cost at all. */
static double evolve_dear_share(int costed)
{
    const amk_strategy_type *st = amk_strategy_find("evolve");
    int t = amk_spec_param_index(amk_space_spec(F.sp), "T");
    ck_assert_int_ge(t, 0);
    int dear = 0, screened = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        void *state = calloc(1, st->state_size);
        amk_strategy_opts so = {.seed = seed, .patience = 2};
        ck_assert_int_eq(st->init(state, F.sp, &so), AMK_OK);
        amk_idset *seen = amk_idset_create();
        for (int call = 0; call < 300; call++) {
            amk_proposal p;
            propose_marked(st, state, seen, &p);
            if (strcmp(p.source, "surrogate") == 0) {
                screened++;
                dear += p.config.choice[t] != 0;
            }
            hear_ok(st, state, &p.config, predicted(&p.config),
                    !costed ? NAN : p.config.choice[t] == 0 ? 1.0 : 20.0);
        }
        st->clear(state);
        free(state);
        amk_idset_free(seen);
    }
    ck_assert_int_gt(screened, 300);
    return (double)dear / screened;
}

/* Where verdicts carry what their trials cost (a replay's recorded times), evolve's screen
 * ranks expected improvement per second: far fewer of its picks land where trials cost 20x
 * more than without costs, where the cheap third of the space gets no preference. */
START_TEST(test_amk_strategy_next_evolve_screen_weighs_recorded_costs)
{
    double plain = evolve_dear_share(0), costed = evolve_dear_share(1);
    printf("evolve's screened proposals where trials cost 20x: %.2f without costs, %.2f "
           "with\n", plain, costed);
    ck_assert_msg(costed < 0.5 * plain, "with costs %.2f of the screened proposals are dear, "
                  "without %.2f", costed, plain);
}
END_TEST

/* evolve driven directly for `calls` proposals (at most 60) on a synthetic landscape around
 * the spec's default: each param off the default scales the latency by `step` (0.999: a
 * plateau; 0.8: a slope down; 1.1: the default is a local optimum), every trial recorded as
 * costing 1 s. Each proposal's source goes to source[call]. */
static void evolve_on_steps(double step, const amk_strategy_opts *so, int calls,
                            char (*source)[32])
{
    const amk_strategy_type *st = amk_strategy_find("evolve");
    amk_config def;
    amk_config_default(F.spec, &F.shape, &def);
    void *state = calloc(1, st->state_size);
    ck_assert_int_eq(st->init(state, F.sp, so), AMK_OK);
    amk_idset *seen = amk_idset_create();
    for (int call = 0; call < calls; call++) {
        amk_proposal p;
        propose_marked(st, state, seen, &p);
        snprintf(source[call], sizeof source[call], "%s", p.source);
        hear_ok(st, state, &p.config,
                100 * pow(step, amk__diff_count(p.config.choice, def.choice)), 1);
    }
    st->clear(state);
    free(state);
    amk_idset_free(seen);
}

/* Of evolve_on_steps' 60 proposals, those marked "plateau": how many, the first's index
 * (-1: none). */
static int evolve_plateau_samples(double step, const amk_strategy_opts *so, int *first)
{
    char source[60][32];
    evolve_on_steps(step, so, 60, source);
    int n = 0;
    *first = -1;
    for (int call = 0; call < 60; call++)
        if (strcmp(source[call], "plateau") == 0) {
            *first = *first < 0 ? call : *first;
            n++;
        }
    return n;
}

/* A walk from the default that gains under 8 % halfway through its solo trials (here 2 x 4
 * params + 8 = 16) gets 8 uniform samples next, where the run's limits buy 250 trials at the
 * default's cost; not on a slope, not on a short budget or clock, not without the default,
 * not before the walk has taken a step. */
START_TEST(test_amk_strategy_next_evolve_samples_off_a_plateau)
{
    int first;
    amk_strategy_opts so = {.seed = 4};
    ck_assert_int_eq(evolve_plateau_samples(0.999, &so, &first), 8);
    ck_assert_int_eq(first, 8);
    so.budget = 250;
    so.time_limit_s = 300;
    ck_assert_int_eq(evolve_plateau_samples(0.999, &so, &first), 8);
    ck_assert_int_eq(evolve_plateau_samples(0.8, &so, &first), 0);
    /* a Default no neighbour beats, a walk of 30 trials checked at 15: it has stalled for
     * 12 verdicts by then, and still gets all 8 samples before its solo trials end */
    amk_strategy_opts long_walk = so;
    long_walk.patience = 30;
    ck_assert_int_eq(evolve_plateau_samples(1.1, &long_walk, &first), 8);
    ck_assert_int_eq(first, 15);
    so.budget = 249;
    ck_assert_int_eq(evolve_plateau_samples(0.999, &so, &first), 0);
    so.budget = 0;
    so.time_limit_s = 249;
    ck_assert_int_eq(evolve_plateau_samples(0.999, &so, &first), 0);
    amk_strategy_opts nodef = {.seed = 4, .no_default = 1};
    ck_assert_int_eq(evolve_plateau_samples(0.999, &nodef, &first), 0);
    /* a walk of 2 trials is checked after the default alone: no step to judge it by */
    amk_strategy_opts brief = {.seed = 4, .patience = 2};
    ck_assert_int_eq(evolve_plateau_samples(0.999, &brief, &first), 0);
    brief.patience = 4;
    ck_assert_int_eq(evolve_plateau_samples(0.999, &brief, &first), 8);
    ck_assert_int_eq(first, 2);

    /* a history of 10 trials heard first (`amk propose`, a resumed loop): 2 of the 8 samples
     * are past, 6 are due */
    const amk_strategy_type *st = amk_strategy_find("evolve");
    void *state = calloc(1, st->state_size);
    amk_strategy_opts plain = {.seed = 4};
    ck_assert_int_eq(st->init(state, F.sp, &plain), AMK_OK);
    gsl_rng *rng = amk__rng_create(7);
    amk_config c, def;
    amk_config_default(F.spec, &F.shape, &def);
    amk_idset *seen = amk_idset_create();
    for (int k = 0; k < 10; k++) {
        if (k == 0)
            c = def;
        else
            ck_assert_int_eq(amk_space_sample(F.sp, AMK__RNG(rng), &c, 16), AMK_OK);
        char id[17];
        amk_config_id(&c, id);
        amk_idset_add(seen, id);
        hear_ok(st, state, &c, 100 * pow(0.999, amk__diff_count(c.choice, def.choice)), NAN);
    }
    int due = 0;
    for (int call = 0; call < 20; call++) {
        amk_proposal p;
        ck_assert_int_eq(st->next(state, seen, &p), 1);
        due += strcmp(p.source, "plateau") == 0;
    }
    ck_assert_int_eq(due, 6);
    st->clear(state);
    free(state);
    gsl_rng_free(rng);
    amk_idset_free(seen);
}
END_TEST

/* Of evolve_on_steps' first 16 proposals (the walk's solo trials: 2 x 4 params + 8), those
 * from the genetic search, over 5 seeds, on a budget under 250 trials (no plateau samples). */
static int evolve_genetic_in_solo_trials(double step, int no_default)
{
    int genetic = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        amk_strategy_opts so = {.seed = seed, .budget = 100, .no_default = no_default};
        char source[16][32];
        evolve_on_steps(step, &so, 16, source);
        for (int call = 0; call < 16; call++)
            genetic += strcmp(source[call], "surrogate") == 0 ||
                       strcmp(source[call], "crossover") == 0 ||
                       strcmp(source[call], "random") == 0;
    }
    return genetic;
}

/* A walk from the default that hears 12 verdicts in a row without a new best hands over to
 * the genetic search before its solo trials are over; a walk that gains does not, nor a
 * search that begins with a design (no_default). */
START_TEST(test_amk_strategy_next_evolve_stalled_walk_hands_over_early)
{
    int stalled = evolve_genetic_in_solo_trials(1.1, 0);
    ck_assert_msg(stalled > 0, "no genetic proposal in a stalled walk's 16 solo trials");
    ck_assert_int_eq(evolve_genetic_in_solo_trials(0.8, 0), 0);
    ck_assert_int_eq(evolve_genetic_in_solo_trials(1.1, 1), 0);
}
END_TEST

/* The landscape fixture with X = Y = Z = 11 as its default, which breaks its restriction
 * X + Y + Z <= 30, in a new folder dir: its spec and space. */
static void broken_default_space(char *dir, size_t size, amk_spec **spec, amk_space **sp)
{
    char path[320];
    amk_test_tmpdir_make(dir, size, "nodefault");
    snprintf(path, sizeof path, "%s/spec.json", dir);
    FILE *f = fopen(AMK_TEST_FIXTURES "/specs/landscape/spec.json", "r");
    ck_assert_ptr_nonnull(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    cJSON *j = cJSON_Parse(text);
    ck_assert_ptr_nonnull(j);
    cJSON *params = cJSON_GetObjectItem(j, "params");
    for (const char *const *p = (const char *const[]){"X", "Y", "Z", NULL}; *p; p++)
        cJSON_ReplaceItemInObject(cJSON_GetObjectItem(params, *p), "default",
                                  cJSON_CreateNumber(11));
    char *out = cJSON_Print(j);
    amk_test_write_file(path, out);
    free(out);
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/landscape.hip", dir);
    ck_assert_int_eq(symlink(AMK_TEST_FIXTURES "/specs/landscape/landscape.hip", path), 0);
    amk_diag d = {0};
    ck_assert_msg(amk_spec_load(dir, spec, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_space_create(*spec, &F.shape, &amk_evaluator_target(F.ev)->limits, sp,
                                   &d) == AMK_OK, "%s", d.msg);
}

static void broken_default_free(char *dir, amk_spec *spec, amk_space *sp)
{
    amk_space_free(sp);
    amk_spec_free(spec);
    amk_test_tmpdir_remove(dir);
}

/* The spec's default first, for hillclimb and evolve alike: where it breaks a restriction,
 * the valid config fewest single-choice moves from it (X = Y = Z = 11 breaks X + Y + Z <=
 * 30: three moves down, T left alone); with no_default, the Sobol design instead. */
START_TEST(test_amk_strategy_next_starts_at_the_default_or_its_nearest_valid_config)
{
    char dir[256];
    amk_spec *spec;
    amk_space *sp;
    broken_default_space(dir, sizeof dir, &spec, &sp);
    amk_config def;
    amk_config_default(spec, &F.shape, &def);
    ck_assert_int_ne(amk_space_valid(sp, &def, NULL), AMK_OK);

    for (const char *const *name = (const char *const[]){"hillclimb", "evolve", NULL}; *name;
         name++) {
        const amk_strategy_type *st = amk_strategy_find(*name);
        amk_idset *seen = amk_idset_create();
        amk_proposal p;
        /* the broken default: its nearest valid config first */
        void *state = calloc(1, st->state_size);
        amk_strategy_opts so = {.seed = 5};
        ck_assert_int_eq(st->init(state, sp, &so), AMK_OK);
        ck_assert_int_eq(st->next(state, seen, &p), 1);
        ck_assert_str_eq(p.source, "default");
        ck_assert_int_eq(amk_space_valid(sp, &p.config, NULL), AMK_OK);
        ck_assert_int_eq(amk_config_param(&p.config, 0) + amk_config_param(&p.config, 1) +
                             amk_config_param(&p.config, 2),
                         30);
        ck_assert_int_eq(amk_config_param(&p.config, 3), 256);
        st->clear(state);
        /* asked to start without it: the design, not the default (nor its repair) */
        memset(state, 0, st->state_size);
        so.no_default = 1;
        ck_assert_int_eq(st->init(state, F.sp, &so), AMK_OK);
        ck_assert_int_eq(st->next(state, seen, &p), 1);
        ck_assert_str_eq(p.source, "sobol");
        st->clear(state);
        free(state);
        amk_idset_free(seen);
    }
    broken_default_free(dir, spec, sp);
}
END_TEST

/* A batch asked for before the default's verdict (a GPU loop's first `--jobs` proposals)
 * climbs from the default at once: its neighbours, not restarts. A default that then fails
 * leaves no centre (restarts until a good verdict), as in a loop of one proposal at a time. */
START_TEST(test_hillclimb_batch_before_the_defaults_verdict_gets_its_neighbours)
{
    const amk_strategy_type *st = amk_strategy_find("hillclimb");
    for (int fail = 0; fail <= 1; fail++) {
        amk_idset *seen = amk_idset_create();
        void *state = calloc(1, st->state_size);
        amk_strategy_opts so = {.seed = 3};
        ck_assert_int_eq(st->init(state, F.sp, &so), AMK_OK);
        amk_proposal def, p;
        ck_assert_int_eq(st->next(state, seen, &def), 1);
        ck_assert_str_eq(def.source, "default");
        for (int k = 0; k < 7; k++) {
            ck_assert_int_eq(st->next(state, seen, &p), 1);
            ck_assert_msg(strcmp(p.source, "mutate") == 0, "proposal %d: %s", k + 2, p.source);
            int moved = 0;
            for (int q = 0; q < amk_spec_n_params(F.spec); q++)
                moved += p.config.choice[q] != def.config.choice[q];
            ck_assert_int_ge(moved, 1);
            ck_assert_int_le(moved, 2);
        }
        amk_verdict v = {.status = fail ? AMK_STATUS_COMPILE_ERROR : AMK_STATUS_OK,
                         .latency_us = fail ? NAN : 5.0};
        st->observe(state, &def.config, &v, !fail);
        ck_assert_int_eq(st->next(state, seen, &p), 1);
        ck_assert_str_eq(p.source, fail ? "restart" : "mutate");
        st->clear(state);
        free(state);
        amk_idset_free(seen);
    }
}
END_TEST

/* A single move that breaks a restriction comes repaired by one step of another param, in
 * the walk's stage of single moves: from a start on X + Y + Z = 30 that stays the centre
 * (every other config slower), each of X, Y, Z with room to go up does so, another of them
 * a step down, within the stage (as many proposals as the centre has steps in range); none
 * of those is a diagonal move (two params down, or T and another param). */
START_TEST(test_hillclimb_repairs_a_single_move_that_breaks_a_restriction)
{
    char dir[256];
    amk_spec *spec;
    amk_space *sp;
    broken_default_space(dir, sizeof dir, &spec, &sp);
    const amk_strategy_type *st = amk_strategy_find("hillclimb");
    for (uint64_t seed = 1; seed <= 8; seed++) {
        amk_idset *seen = amk_idset_create();
        void *state = calloc(1, st->state_size);
        amk_strategy_opts so = {.seed = seed};
        ck_assert_int_eq(st->init(state, sp, &so), AMK_OK);
        amk_proposal p;
        ck_assert_int_eq(st->next(state, seen, &p), 1);
        amk_config centre = p.config;
        amk_verdict v = {.status = AMK_STATUS_OK, .latency_us = 1.0};
        st->observe(state, &p.config, &v, 1);
        int up[3] = {0}, room[3] = {0}, steps = 0;
        for (int q = 0; q < 4; q++) {
            int c = centre.choice[q], nc = amk_spec_param_n_choices(spec, q);
            steps += (c > 0) + (c < nc - 1);
            if (q < 3)
                room[q] = c < nc - 1;
        }
        for (int k = 0; k < steps; k++) {
            ck_assert_int_eq(st->next(state, seen, &p), 1);
            ck_assert_int_eq(amk_space_valid(sp, &p.config, NULL), AMK_OK);
            int moved = 0, ups = 0, downs = 0;
            for (int q = 0; q < 4; q++) {
                int dq = p.config.choice[q] - centre.choice[q];
                ck_assert_int_le(abs(dq), 1);
                moved += dq != 0;
                if (q < 3 && dq > 0) {
                    ups++;
                    up[q] = 1;
                }
                downs += q < 3 && dq < 0;
            }
            ck_assert_msg(moved == 1 || (moved == 2 && ups == 1 && downs == 1),
                          "seed %llu, proposal %d is a diagonal move",
                          (unsigned long long)seed, k + 1);
            v.latency_us = 2.0;
            st->observe(state, &p.config, &v, 0);
        }
        for (int q = 0; q < 3; q++)
            ck_assert_msg(up[q] == room[q], "seed %llu: param %d up %d, room %d",
                          (unsigned long long)seed, q, up[q], room[q]);
        st->clear(state);
        free(state);
        amk_idset_free(seen);
    }
    broken_default_free(dir, spec, sp);
}
END_TEST

/* ---- the surrogate ------------------------------------------------------------------------ */

/* A landscape of 4 params x 4 choices where only params 0 and 1 matter (log latency 0 with
 * p0 = 2, else 2; plus 1 with p1 = 3), fitted on 40 configs: the model expects far more
 * improvement of unseen configs with p0 = 2 than of their twins with p0 = 0, and a change in
 * an irrelevant param costs less similarity than one in p0 (its weight is lower). */
static double gp_truth(const uint8_t *x)
{
    return (x[0] == 2 ? 0.0 : 2.0) + (x[1] == 3 ? 1.0 : 0.0);
}

START_TEST(test_amk__gp_fit_learns_which_params_matter)
{
    static amk__gp g;
    memset(&g, 0, sizeof g);
    uint8_t x[40][AMK_MAX_PARAMS] = {{0}};
    double lg[40];
    gsl_rng *rng = amk__rng_create(11);
    int m = 0;
    while (m < 40) {
        uint8_t c[AMK_MAX_PARAMS] = {0};
        for (int p = 0; p < 4; p++)
            c[p] = (uint8_t)gsl_rng_uniform_int(rng, 4);
        if (c[0] == 2 && c[2] == 1)
            continue; /* held out: the configs scored below */
        memcpy(x[m], c, sizeof c);
        lg[m] = gp_truth(c);
        m++;
    }
    gsl_rng_free(rng);
    ck_assert_int_eq(amk__gp_fit(&g, 4, (const uint8_t(*)[AMK_MAX_PARAMS])x, NULL, lg, 40, 1),
                     1);
    /* unseen configs: p0 = 2 (fast) against p0 = 0 (slow), the rest alike */
    int better = 0;
    for (int p3 = 0; p3 < 4; p3++) {
        uint8_t fast[AMK_MAX_PARAMS] = {2, 0, 1, (uint8_t)p3};
        uint8_t slow[AMK_MAX_PARAMS] = {0, 0, 1, (uint8_t)p3};
        better += amk__gp_ei(&g, fast) > 10 * amk__gp_ei(&g, slow);
    }
    ck_assert_int_eq(better, 4);
    /* automatic relevance: p2 and p3 weigh less than p0 */
    ck_assert_msg(g.w[2] < g.w[0] && g.w[3] < g.w[0], "weights %g %g %g %g", g.w[0], g.w[1],
                  g.w[2], g.w[3]);
    /* too few points, or too many, leave the model unusable */
    ck_assert_int_eq(amk__gp_fit(&g, 4, (const uint8_t(*)[AMK_MAX_PARAMS])x, NULL, lg, 1, 1), 0);
    ck_assert_int_eq(amk__gp_fit(&g, 4, (const uint8_t(*)[AMK_MAX_PARAMS])x, NULL, lg,
                                 AMK__GP_MAX + 1, 1), 0);
}
END_TEST

/* 90 points of 6 params (the fit tunes on every other one): a tune run a few factorisations
 * at a time lands on the weights of a whole one, keeps the old weights until its last piece,
 * and amk__gp_ei_many gives each candidate amk__gp_ei's number exactly. */
static void gp_points(uint8_t (*x)[AMK_MAX_PARAMS], double *lg, int m, uint64_t seed)
{
    gsl_rng *rng = amk__rng_create(seed);
    for (int i = 0; i < m; i++) {
        memset(x[i], 0, AMK_MAX_PARAMS);
        for (int p = 0; p < 6; p++)
            x[i][p] = (uint8_t)gsl_rng_uniform_int(rng, 5);
        lg[i] = (x[i][0] == 1 ? 0.0 : 1.5) + 0.3 * x[i][2] + 0.01 * gsl_rng_uniform(rng);
    }
    gsl_rng_free(rng);
}

START_TEST(test_amk__gp_tune_step_in_pieces_matches_whole)
{
    static amk__gp whole, pieces;
    memset(&whole, 0, sizeof whole);
    memset(&pieces, 0, sizeof pieces);
    uint8_t x[90][AMK_MAX_PARAMS];
    double lg[90];
    gp_points(x, lg, 90, 5);
    const uint8_t(*cx)[AMK_MAX_PARAMS] = (const uint8_t(*)[AMK_MAX_PARAMS])x;
    ck_assert_int_eq(amk__gp_fit(&whole, 6, cx, NULL, lg, 90, 1), 1);
    ck_assert_int_eq(amk__gp_fit(&pieces, 6, cx, NULL, lg, 90, 0), 1);
    double w0[AMK_MAX_PARAMS];
    memcpy(w0, pieces.w, sizeof w0);
    amk__gp_tune_begin(&pieces);
    int calls = 0, cost = amk__gp_tune_cost(6);
    ck_assert_int_eq(cost, 29);
    while (!amk__gp_tune_step(&pieces, 3)) {
        ck_assert_int_eq(memcmp(w0, pieces.w, sizeof w0), 0); /* old weights meanwhile */
        ck_assert_int_lt(++calls, cost);
    }
    ck_assert_int_ge(calls, cost / 3 - 1); /* at most 3 a call: the tune took several */
    ck_assert_int_eq(amk__gp_tune_step(&pieces, 3), 0); /* nothing under way any more */
    ck_assert_int_eq(pieces.scale_i, whole.scale_i);
    ck_assert_int_eq(memcmp(pieces.rel_i, whole.rel_i, sizeof whole.rel_i), 0);
    ck_assert_msg(memcmp(w0, pieces.w, sizeof w0) != 0, "the tune changed no weight");
    ck_assert_int_eq(amk__gp_fit(&pieces, 6, cx, NULL, lg, 90, 0), 1);
    /* the candidates: unseen configs, some near the data, some not */
    uint8_t c[21][AMK_MAX_PARAMS];
    double lc[21], ei[21];
    gp_points(c, lc, 21, 6);
    amk__gp_ei_many(&pieces, (const uint8_t(*)[AMK_MAX_PARAMS])c, 21, ei);
    for (int i = 0; i < 21; i++) {
        ck_assert_msg(ei[i] == amk__gp_ei(&whole, c[i]), "candidate %d: %.17g against %.17g",
                      i, ei[i], amk__gp_ei(&whole, c[i]));
        ck_assert(ei[i] >= 0);
    }
}
END_TEST

/* A tune skips the stretches of params its points all share (no kernel value depends on
 * them): on 6 params of which 2 never vary it makes the factorisations, and lands on the
 * weights, of a tune on the other 4 alone. */
static int tune_in_steps(amk__gp *g, int n, const uint8_t (*x)[AMK_MAX_PARAMS],
                         const double *lg, int m)
{
    ck_assert_int_eq(amk__gp_fit(g, n, x, NULL, lg, m, 0), 1);
    amk__gp_tune_begin(g);
    int calls = 1;
    while (!amk__gp_tune_step(g, 1))
        calls++;
    return calls;
}

START_TEST(test_amk__gp_tune_step_skips_params_all_points_share)
{
    static amk__gp six, four;
    memset(&six, 0, sizeof six);
    memset(&four, 0, sizeof four);
    uint8_t x[40][AMK_MAX_PARAMS], x4[40][AMK_MAX_PARAMS] = {{0}};
    double lg[40];
    gp_points(x, lg, 40, 9);
    for (int i = 0; i < 40; i++) {
        memcpy(x4[i], x[i] + 2, 4);
        x[i][0] = x[i][1] = 3;
    }
    int calls = tune_in_steps(&six, 6, (const uint8_t(*)[AMK_MAX_PARAMS])x, lg, 40);
    ck_assert_int_eq(calls, tune_in_steps(&four, 4, (const uint8_t(*)[AMK_MAX_PARAMS])x4, lg, 40));
    ck_assert_int_lt(calls, amk__gp_tune_cost(6));
    ck_assert_int_eq(six.scale_i, four.scale_i);
    ck_assert_int_eq(memcmp(six.rel_i + 2, four.rel_i, 4 * sizeof *six.rel_i), 0);
    ck_assert_int_eq(six.rel_i[0], 1); /* untouched: the default stretch */
    ck_assert_int_eq(six.rel_i[1], 1);
}
END_TEST

/* A tune moves r^2 of each pair by the change of one weight (or scales it with the shared
 * scale) instead of summing the weights again: at its end r^2 and the kernel of every pair
 * are bit for bit those of the final weights summed over the params the pair differs in, and
 * the fit that takes the tune's kernel is a fresh fit's. */
START_TEST(test_amk__gp_tune_step_updates_r2_exactly)
{
    static amk__gp g;
    memset(&g, 0, sizeof g);
    uint8_t x[90][AMK_MAX_PARAMS];
    double lg[90];
    gp_points(x, lg, 90, 5);
    ck_assert_int_eq(amk__gp_fit(&g, 6, (const uint8_t(*)[AMK_MAX_PARAMS])x, NULL, lg, 90, 1),
                     1);
    int moved = g.scale_i != 2;
    for (int p = 0; p < 6; p++)
        moved += g.rel_i[p] != 1;
    ck_assert_msg(moved >= 2, "the tune kept the default weights: nothing to check");
    ck_assert_int_eq(g.t_m, 45);
    for (int i = 0; i < g.t_m; i++)
        for (int j = 0; j <= i; j++) {
            double r2 = 0;
            for (int p = 0; p < 6; p++)
                if (g.x[i][p] != g.x[j][p])
                    r2 += g.w[p];
            double r = sqrt(r2), k = (1.0 + r + r * r / 3.0) * exp(-r);
            int at = i * AMK__GP_TUNE_MAX + j;
            ck_assert_msg(memcmp(&r2, &g.t_r2[at], sizeof r2) == 0 &&
                              memcmp(&k, &g.t_K[at], sizeof k) == 0,
                          "pair %d %d: r2 %.17g against %.17g", i, j, g.t_r2[at], r2);
        }
    /* the fit that tuned took the tune's kernel among its points: a fresh fit at the same
     * weights models the same */
    static amk__gp fresh;
    memcpy(&fresh, &g, sizeof fresh);
    fresh.k_ok = 0;
    ck_assert_int_eq(
        amk__gp_fit(&fresh, 6, (const uint8_t(*)[AMK_MAX_PARAMS])x, NULL, lg, 90, 0), 1);
    ck_assert_int_eq(memcmp(fresh.alpha, g.alpha, sizeof g.alpha), 0);
    ck_assert_int_eq(memcmp(fresh.L, g.L, sizeof g.L), 0);
}
END_TEST

/* The vector paths (AVX2: a tune's trials and expected improvement's candidates four to an
 * instruction) give the one-at-a-time numbers bit for bit: weights, alpha, the factor and
 * the expected improvements. Without AVX2 both models take the scalar path. */
START_TEST(test_amk__gp_fit_vector_paths_match_scalar)
{
    static amk__gp vec, one;
    memset(&vec, 0, sizeof vec);
    memset(&one, 0, sizeof one);
    one.no_simd = 1;
    uint8_t x[90][AMK_MAX_PARAMS], c[21][AMK_MAX_PARAMS];
    double lg[90], lc[21], e1[21], e2[21];
    gp_points(x, lg, 90, 12);
    gp_points(c, lc, 21, 13);
    const uint8_t(*cx)[AMK_MAX_PARAMS] = (const uint8_t(*)[AMK_MAX_PARAMS])x;
    ck_assert_int_eq(amk__gp_fit(&vec, 6, cx, NULL, lg, 90, 0), 1);
    ck_assert_int_eq(amk__gp_fit(&one, 6, cx, NULL, lg, 90, 0), 1);
    amk__gp_tune_begin(&vec);
    amk__gp_tune_begin(&one);
    int done;
    do { /* every trial's likelihood, four at a time */
        done = amk__gp_tune_step(&vec, 4);
        ck_assert_int_eq(amk__gp_tune_step(&one, 4), done);
        ck_assert_int_eq(vec.t_nml, one.t_nml);
        ck_assert_int_eq(memcmp(vec.t_ml, one.t_ml, (size_t)vec.t_nml * sizeof *vec.t_ml), 0);
    } while (!done);
    ck_assert_int_eq(amk__gp_fit(&vec, 6, cx, NULL, lg, 90, 0), 1);
    ck_assert_int_eq(amk__gp_fit(&one, 6, cx, NULL, lg, 90, 0), 1);
    ck_assert_int_eq(vec.scale_i, one.scale_i);
    ck_assert_int_eq(memcmp(vec.rel_i, one.rel_i, sizeof vec.rel_i), 0);
    ck_assert_int_eq(memcmp(&vec.t_best_ml, &one.t_best_ml, sizeof vec.t_best_ml), 0);
    ck_assert_int_eq(memcmp(vec.alpha, one.alpha, sizeof vec.alpha), 0);
    ck_assert_int_eq(memcmp(vec.L, one.L, sizeof vec.L), 0);
    amk__gp_ei_many(&vec, (const uint8_t(*)[AMK_MAX_PARAMS])c, 21, e1);
    amk__gp_ei_many(&one, (const uint8_t(*)[AMK_MAX_PARAMS])c, 21, e2);
    ck_assert_int_eq(memcmp(e1, e2, sizeof e1), 0);
}
END_TEST

/* The kernel memo gives the formula's value bit for bit, for values it has seen and not,
 * across the resets that keep it at most half full. */
START_TEST(test_amk__gp_kernel_memo_matches_formula)
{
    static amk__gp g;
    memset(&g, 0, sizeof g);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 3 * AMK__GP_MEMO; i++) {
            double r2 = i * 0.0625 / (1 + pass * (i % 3)); /* the second pass: seen and not */
            double r = sqrt(r2), k = (1.0 + r + r * r / 3.0) * exp(-r);
            double got = amk__gp_kernel(&g, r2);
            ck_assert_msg(memcmp(&k, &got, sizeof k) == 0, "r2 %.17g: %.17g against %.17g",
                          r2, got, k);
            ck_assert_int_le(g.memo_used, AMK__GP_MEMO / 2);
        }
}
END_TEST

/* A fit that takes the kernel between points it had before (ids) from the last fit models
 * the same as a fresh one: points dropped, added and reordered, m crossing the tuning
 * subset's 48 (which reorders the stored points), and again after the weights change. */
START_TEST(test_amk__gp_fit_kept_kernel_matches_fresh)
{
    static amk__gp kept, fresh;
    memset(&kept, 0, sizeof kept);
    uint8_t x[120][AMK_MAX_PARAMS], c[16][AMK_MAX_PARAMS];
    double lg[120], lc[16], e1[16], e2[16];
    long ids[120];
    gp_points(x, lg, 120, 7);
    gp_points(c, lc, 16, 8);
    for (int i = 0; i < 120; i++)
        ids[i] = 1000 + i;
    const int from[] = {0, 2, 5, 5, 30, 29, 3, 24};
    const int count[] = {40, 44, 50, 60, 90, 90, 96, 96};
    for (int r = 0; r < 8; r++) {
        if (r == 6) { /* new weights: nothing kept is of them */
            amk__gp_tune_begin(&kept);
            ck_assert_int_eq(amk__gp_tune_step(&kept, 1000), 1);
        }
        const uint8_t(*cx)[AMK_MAX_PARAMS] = (const uint8_t(*)[AMK_MAX_PARAMS])(x + from[r]);
        ck_assert_int_eq(amk__gp_fit(&kept, 6, cx, ids + from[r], lg + from[r], count[r], 0),
                         1);
        memcpy(&fresh, &kept, sizeof fresh);
        fresh.k_ok = 0;
        ck_assert_int_eq(amk__gp_fit(&fresh, 6, cx, NULL, lg + from[r], count[r], 0), 1);
        ck_assert_int_eq(memcmp(kept.alpha, fresh.alpha, sizeof kept.alpha), 0);
        amk__gp_ei_many(&kept, (const uint8_t(*)[AMK_MAX_PARAMS])c, 16, e1);
        amk__gp_ei_many(&fresh, (const uint8_t(*)[AMK_MAX_PARAMS])c, 16, e2);
        ck_assert_int_eq(memcmp(e1, e2, sizeof e1), 0);
    }
    /* the ids of another point set: a kernel kept under them would be wrong */
    for (int i = 0; i < 60; i++)
        ids[i] = 1000 + (i + 7) % 60;
    memcpy(&fresh, &kept, sizeof fresh);
    fresh.k_ok = 0;
    int ok = amk__gp_fit(&kept, 6, (const uint8_t(*)[AMK_MAX_PARAMS])x, ids, lg, 60, 0);
    ck_assert_int_eq(amk__gp_fit(&fresh, 6, (const uint8_t(*)[AMK_MAX_PARAMS])x, NULL, lg, 60,
                                 0), 1);
    ck_assert_msg(!ok || memcmp(kept.alpha, fresh.alpha, sizeof kept.alpha) != 0,
                  "renamed points gave the same model: is the kernel kept at all?");
}
END_TEST

/* ---- keep/revert ------------------------------------------------------------------------- */

static amk_verdict ok_verdict(double lat, double spread)
{
    amk_verdict v;
    amk_verdict_init(&v);
    v.status = AMK_STATUS_OK;
    v.valid = 1;
    v.latency_us = lat;
    v.latency_kind = AMK_LAT_MEASURED;
    v.spread = spread;
    return v;
}

static amk_incumbent incumbent(amk_config c, double lat, double spread)
{
    amk_incumbent inc = {0};
    inc.has = 1;
    inc.config = c;
    inc.latency_us = lat;
    inc.spread = spread;
    inc.kind = AMK_LAT_MEASURED;
    inc.trial = 1;
    return inc;
}

START_TEST(test_amk_keep_decide_first_ok_candidate_is_kept)
{
    amk_config c = make(3, 3, 3, 256);
    amk_verdict v = ok_verdict(500.0, NAN);
    amk_incumbent none = {0};
    ck_assert_int_eq(amk_keep_decide(&none, &c, &v, 0.01), 1);
    ck_assert_int_eq(amk_keep_decide(NULL, &c, &v, 0.01), 1);
    v.status = AMK_STATUS_SCREENED;
    ck_assert_int_eq(amk_keep_decide(&none, &c, &v, 0.01), 0);
}
END_TEST

START_TEST(test_amk_keep_decide_not_ok_never_kept)
{
    amk_config inc_c = make(5, 5, 5, 128), c = make(6, 5, 5, 64);
    amk_incumbent inc = incumbent(inc_c, 100.0, NAN);
    for (int s = 0; s < AMK_STATUS_COUNT; s++) {
        if (s == AMK_STATUS_OK)
            continue;
        amk_verdict v = ok_verdict(1.0, NAN); /* 100x faster, but not ok */
        v.status = (amk_status)s;
        ck_assert_msg(amk_keep_decide(&inc, &c, &v, 0.01) == 0, "status %s was kept",
                      amk_status_name((amk_status)s));
        ck_assert_int_eq(amk_keep_decide(NULL, &c, &v, 0.01), 0);
    }
    amk_verdict v = ok_verdict(NAN, NAN); /* ok without a number is not trusted */
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 0);
    v = ok_verdict(-3.0, NAN);
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 0);
    /* The incumbent itself is never "kept" again. */
    v = ok_verdict(50.0, NAN);
    ck_assert_int_eq(amk_keep_decide(&inc, &inc_c, &v, 0.01), 0);
}
END_TEST

/* A candidate timed at another SM clock than its incumbent is re-measured when the clock
 * moved beyond the keep margin in the winner's favour and could explain the gap; not when
 * the winner had the lower clock, either clock is unknown, the clocks agree, or the gap is
 * larger than any clock move explains. */
START_TEST(test_keep_clock_moved_asks_for_a_remeasure)
{
    amk_config inc_c = make(5, 5, 5, 128), c = make(6, 5, 5, 64);
    amk_incumbent inc = incumbent(inc_c, 100.0, 0.005);
    inc.sm_mhz = 1700;
    amk_verdict v = ok_verdict(97.0, 0.005);
    v.sm_mhz = 1980; /* 16% higher clock, 3% faster: the clock could have decided it */
    ck_assert_int_eq(amk__keep_clock_moved(&inc, &c, &v, 0.01), 1);
    v.latency_us = 103.0; /* slower, at the higher clock: slower still at one clock */
    ck_assert_int_eq(amk__keep_clock_moved(&inc, &c, &v, 0.01), 0);
    inc.sm_mhz = 1980;
    v.sm_mhz = 1700; /* slower at the lower clock: the clock could have decided it */
    ck_assert_int_eq(amk__keep_clock_moved(&inc, &c, &v, 0.01), 1);
    v.latency_us = 97.0; /* faster at the lower clock: faster still at one clock */
    ck_assert_int_eq(amk__keep_clock_moved(&inc, &c, &v, 0.01), 0);
    inc.sm_mhz = 1700;
    v.sm_mhz = 1980;
    v.latency_us = 50.0; /* 2x faster: no clock move explains that */
    ck_assert_int_eq(amk__keep_clock_moved(&inc, &c, &v, 0.01), 0);
    v.latency_us = 97.0;
    v.sm_mhz = 1705; /* the same clock, within the margin */
    ck_assert_int_eq(amk__keep_clock_moved(&inc, &c, &v, 0.01), 0);
    v.sm_mhz = NAN; /* not observed */
    ck_assert_int_eq(amk__keep_clock_moved(&inc, &c, &v, 0.01), 0);
    v.sm_mhz = 1980;
    v.latency_kind = AMK_LAT_REPLAYED; /* replays carry no clock state */
    ck_assert_int_eq(amk__keep_clock_moved(&inc, &c, &v, 0.01), 0);
    v.latency_kind = AMK_LAT_MEASURED;
    ck_assert_int_eq(amk__keep_clock_moved(&inc, &inc_c, &v, 0.01), 0); /* itself */
}
END_TEST

START_TEST(test_amk_keep_decide_holds_peered_configs_in_one_clock_state)
{
    /* The H200 race: the default measured 209.3 us while cuBLAS beside it took 200.9 us (a
     * slow moment); a candidate 198.3 us beside a 181.9 us cuBLAS. Raw, the candidate is 5%
     * faster; in the incumbent's clock state it is 198.3 x 200.9 / 181.9 = 219 us: slower. */
    amk_config inc_c = make(5, 5, 5, 128), c = make(6, 5, 5, 64);
    amk_incumbent inc = incumbent(inc_c, 209.3, 0.002);
    snprintf(inc.peer, sizeof inc.peer, "cublas");
    inc.peer_us = 200.9;
    inc.sm_mhz = 1955;
    amk_verdict v = ok_verdict(198.3, 0.002);
    snprintf(v.peer, sizeof v.peer, "cublas");
    v.peer_us = 181.9;
    v.sm_mhz = 1826;
    ck_assert_int_eq(amk__keep_peered(&inc, &v), 1);
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 0);
    ck_assert_int_eq(amk__keep_clock_moved(&inc, &c, &v, 0.01), 0); /* the peer cancels it */
    v.latency_us = 175.0; /* 175 x 200.9 / 181.9 = 193.3 us: 7.6% faster in one state */
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 1);
    ck_assert_int_eq(amk__keep_close(&inc, &c, &v, 0.01), 0);
    v.latency_us = 190.0; /* 209.8 us in the incumbent's state: 0.2% apart, a close call */
    ck_assert_int_eq(amk__keep_close(&inc, &c, &v, 0.01), 1);
    /* Another peer, or none: the raw latencies, as before. */
    v.latency_us = 198.3;
    snprintf(v.peer, sizeof v.peer, "copy");
    ck_assert_int_eq(amk__keep_peered(&inc, &v), 0);
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 1);
    v.peer[0] = '\0';
    v.peer_us = NAN;
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 1);
    ck_assert(isnan(amk_peer_scaled(100, "cublas", 0, "cublas", 100)));
    ck_assert(fabs(amk_peer_scaled(100, "cublas", 50, "cublas", 60) - 120) < 1e-9);
    /* The strategy sees latencies in the first peered verdict's clock state. */
    amk__peer_frame frame = {{0}, 0};
    amk_verdict a = ok_verdict(209.3, 0.002), b = ok_verdict(198.3, 0.002);
    snprintf(a.peer, sizeof a.peer, "cublas");
    snprintf(b.peer, sizeof b.peer, "cublas");
    a.peer_us = 200.9, b.peer_us = 181.9;
    amk__verdict_for_strategy(AMK_OBJ_TIME, &frame, &a);
    amk__verdict_for_strategy(AMK_OBJ_TIME, &frame, &b);
    ck_assert(fabs(a.latency_us - 209.3) < 1e-9);
    ck_assert(fabs(b.latency_us - 198.3 * 200.9 / 181.9) < 1e-9);
    amk_verdict raw = ok_verdict(150.0, 0.002); /* no peer: as measured */
    amk__verdict_for_strategy(AMK_OBJ_TIME, &frame, &raw);
    ck_assert(fabs(raw.latency_us - 150.0) < 1e-9);
}
END_TEST

START_TEST(test_amk_keep_decide_respects_noise_margin)
{
    /* Candidate has more threads (256 > 128): ties never go its way. */
    amk_config inc_c = make(5, 5, 5, 128), c = make(5, 5, 5, 256);
    amk_incumbent inc = incumbent(inc_c, 100.0, 0.05);
    amk_verdict v = ok_verdict(97.0, NAN); /* 3% faster, inside 5% noise */
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 0);
    v = ok_verdict(94.0, NAN); /* 6% faster: beyond the noise */
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 1);
    /* The candidate's own spread counts too: the larger one wins. */
    inc.spread = NAN;
    v = ok_verdict(94.0, 0.08);
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 0);
    v = ok_verdict(91.0, 0.08);
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 1);
    /* No spread (NAN = 0): min_gain is the margin. */
    v = ok_verdict(99.5, NAN);
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 0);
    v = ok_verdict(98.5, NAN);
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 1);
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.02), 0);
    /* min_gain 0: any real gain counts. */
    v = ok_verdict(99.99, NAN);
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.0), 1);
}
END_TEST

/* Objective energy or edp: the keep rule judges the energy per launch measured over a counter
 * window (or energy x latency), with the counter's quantisation (1/ticks) as the noise; an
 * estimated energy (no window) is never evidence; no interleaved latency re-measure. */
START_TEST(test_amk_keep_decide_follows_the_objective)
{
    amk_config inc_c = make(5, 5, 5, 128), c = make(5, 5, 5, 256);
    amk_incumbent inc = incumbent(inc_c, 100.0, 0.005);
    inc.objective = AMK_OBJ_ENERGY;
    inc.energy_uj = 70000;
    inc.energy_ticks = 20; /* 5% noise */
    amk_verdict v = ok_verdict(130.0, 0.005); /* 30% slower ... */
    v.energy_uj = 63000;                      /* ... but 10% less energy: kept */
    v.energy_ticks = 20;
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 1);
    v.energy_uj = 67000; /* 4.3% less: inside the counter's 5% */
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 0);
    v.energy_ticks = 50; /* a longer window of the candidate: the incumbent's 5% still counts */
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 0);
    v = ok_verdict(50.0, 0.005); /* twice as fast, energy an estimate only: not evidence */
    v.energy_uj = 10000;
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 0);
    amk_incumbent none = {0};
    none.objective = AMK_OBJ_ENERGY;
    ck_assert_int_eq(amk_keep_decide(&none, &c, &v, 0.01), 0); /* not even as the first */
    v.energy_ticks = 12;
    ck_assert_int_eq(amk_keep_decide(&none, &c, &v, 0.01), 1);
    /* edp: 20% slower and 30% less energy is 16% better (noise 0.5% + 5%) */
    inc.objective = AMK_OBJ_EDP;
    v = ok_verdict(120.0, 0.005);
    v.energy_uj = 49000;
    v.energy_ticks = 20;
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 1);
    v.energy_uj = 63000; /* 8% less energy, 20% slower: worse */
    ck_assert_int_eq(amk_keep_decide(&inc, &c, &v, 0.01), 0);
    /* a close call in time is not re-measured: the energy window decides */
    inc.objective = AMK_OBJ_ENERGY;
    v = ok_verdict(99.5, 0.005);
    v.energy_uj = 69000;
    v.energy_ticks = 20;
    ck_assert_int_eq(amk__keep_close(&inc, &c, &v, 0.01), 0);
    inc.objective = AMK_OBJ_TIME;
    ck_assert_int_eq(amk__keep_close(&inc, &c, &v, 0.01), 1);
}
END_TEST

START_TEST(test_amk_keep_decide_tie_goes_to_simpler)
{
    amk_config t256 = make(4, 4, 4, 256), t128 = make(4, 4, 4, 128);
    amk_incumbent inc = incumbent(t256, 100.0, NAN);
    /* Fewer threads, 0.5% slower: inside the 1% margin, simpler wins. */
    amk_verdict v = ok_verdict(100.5, NAN);
    ck_assert_int_eq(amk_keep_decide(&inc, &t128, &v, 0.01), 1);
    /* ...but not when slower by more than the margin. */
    v = ok_verdict(102.0, NAN);
    ck_assert_int_eq(amk_keep_decide(&inc, &t128, &v, 0.01), 0);
    /* Wide spreads widen the tie, but the simpler config does not win it measured slower
     * by more than min_gain: 9% slower inside a 10% spread stays out (it was kept). */
    inc = incumbent(t256, 100.0, 0.10);
    v = ok_verdict(109.0, 0.10);
    ck_assert_int_eq(amk_keep_decide(&inc, &t128, &v, 0.01), 0);
    v = ok_verdict(100.8, 0.10);
    ck_assert_int_eq(amk_keep_decide(&inc, &t128, &v, 0.01), 1);
    inc = incumbent(t256, 100.0, NAN);
    /* The other way round the more complex one must be really faster. */
    inc = incumbent(t128, 100.0, NAN);
    v = ok_verdict(99.5, NAN);
    ck_assert_int_eq(amk_keep_decide(&inc, &t256, &v, 0.01), 0);
    /* Same threads: less shared memory wins (X odd = 1 KiB, X even = 0), even though its
     * choice indices are lexicographically larger. */
    amk_config odd = make(3, 4, 4, 128), even = make(4, 4, 4, 128);
    inc = incumbent(odd, 100.0, NAN);
    v = ok_verdict(100.4, NAN);
    ck_assert_int_eq(amk_keep_decide(&inc, &even, &v, 0.01), 1);
    inc = incumbent(even, 100.0, NAN);
    ck_assert_int_eq(amk_keep_decide(&inc, &odd, &v, 0.01), 0);
    /* Same threads and shared memory: smaller choice indices win. */
    amk_config a = make(4, 2, 4, 128), b = make(4, 3, 4, 128);
    inc = incumbent(b, 100.0, NAN);
    ck_assert_int_eq(amk_keep_decide(&inc, &a, &v, 0.01), 1);
    inc = incumbent(a, 100.0, NAN);
    ck_assert_int_eq(amk_keep_decide(&inc, &b, &v, 0.01), 0);
}
END_TEST

/* ---- the loop: quality ------------------------------------------------------------------- */

#define N_SEEDS 20

START_TEST(test_amk_loop_run_hillclimb_and_anneal_beat_random)
{
    int64_t count = count_space();
    int64_t hc[N_SEEDS], an[N_SEEDS], rnd[N_SEEDS];
    int hc_found = 0, an_found = 0;
    const int64_t budget = 1500;
    for (int s = 0; s < N_SEEDS; s++) {
        hc[s] = evals_to_optimum("hillclimb", 1000 + (uint64_t)s, budget, NULL);
        hc_found += hc[s] <= budget;
        an[s] = evals_to_optimum("anneal", 1000 + (uint64_t)s, budget, NULL);
        an_found += an[s] <= budget;
        /* random never repeats, so with the whole space as budget it always finds it */
        rnd[s] = evals_to_optimum("random", 1000 + (uint64_t)s, count, NULL);
        ck_assert_int_le(rnd[s], count);
    }
    double mh = median_i64(hc, N_SEEDS), ma = median_i64(an, N_SEEDS);
    double mr = median_i64(rnd, N_SEEDS);
    fprintf(stderr, "quality: evaluations to the optimum of %lld configs, median of %d seeds: "
            "hillclimb %.1f (found by %d within %lld), anneal %.1f (found by %d), random "
            "%.1f\n", (long long)count, N_SEEDS, mh, hc_found, (long long)budget, ma,
            an_found, mr);
    ck_assert_msg(mh < mr, "hillclimb median %.1f is not below random's %.1f", mh, mr);
    ck_assert_msg(mh * 4 < mr, "hillclimb median %.1f is not 4x better than random's %.1f",
                  mh, mr);
    ck_assert_msg(ma < mr, "anneal median %.1f is not below random's %.1f", ma, mr);
    ck_assert_int_ge(hc_found, N_SEEDS - 1);
    ck_assert_int_ge(an_found, N_SEEDS / 2);
}
END_TEST

START_TEST(test_amk_loop_run_evolve_beats_random)
{
    int64_t count = count_space();
    int64_t ev[N_SEEDS], rnd[N_SEEDS];
    int found = 0;
    const int64_t budget = 1500;
    for (int s = 0; s < N_SEEDS; s++) {
        ev[s] = evals_to_optimum("evolve", 1000 + (uint64_t)s, budget, NULL);
        found += ev[s] <= budget;
        rnd[s] = evals_to_optimum("random", 1000 + (uint64_t)s, count, NULL);
    }
    double me = median_i64(ev, N_SEEDS), mr = median_i64(rnd, N_SEEDS);
    fprintf(stderr, "quality: evaluations to the optimum of %lld configs, median of %d seeds: "
            "evolve %.1f (found by %d within %lld), random %.1f\n", (long long)count,
            N_SEEDS, me, found, (long long)budget, mr);
    ck_assert_msg(me * 4 < mr, "evolve median %.1f is not 4x better than random's %.1f", me,
                  mr);
    ck_assert_int_ge(found, N_SEEDS - 1);
}
END_TEST

START_TEST(test_amk_loop_run_hillclimb_batched_finds_optimum)
{
    /* Batches of 8 proposals evaluated together still climb, without repeats. */
    amk_loop_opts o = opts_for("hillclimb", 77, 1500);
    o.batch = 8;
    probe *pr = probe_new();
    o.progress = on_progress;
    o.progress_ud = pr;
    amk_loop_result res;
    amk_diag d = {0};
    ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
    fprintf(stderr, "quality: hillclimb batch 8 found the optimum after %lld evaluations\n",
            (long long)pr->found_at);
    ck_assert_int_gt(pr->found_at, 0);
    char id[17], opt[17];
    amk_config_id(&res.best.config, id);
    optimum_id(opt);
    ck_assert_str_eq(id, opt);
    rowvec rv = read_rows(F.results, NULL);
    ck_assert_int_eq(rv.n, 1500);
    ck_assert_int_eq(distinct_ids(&rv), rv.n);
    free(rv.v);
    free(pr);
}
END_TEST

/* ---- the loop: exhaustive, repeats, exhaustion ------------------------------------------ */

typedef struct order_ctx {
    char (*ids)[17];
    size_t n;
} order_ctx;

static int order_collect(const amk_config *c, void *ud)
{
    order_ctx *o = ud;
    amk_config_id(c, o->ids[o->n++]);
    return 0;
}

START_TEST(test_amk_loop_run_exhaustive_visits_every_config_in_order)
{
    int64_t count = count_space();
    amk_loop_opts o = opts_for("exhaustive", 1, 0);
    o.batch = 16;
    o.best_path = F.best;
    amk_loop_result res;
    amk_diag d = {0};
    ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(res.trials, count);
    ck_assert_int_eq(res.exhausted, 1);
    ck_assert_int_eq(res.first_trial, 1);
    rowvec rv = read_rows(F.results, NULL);
    ck_assert_int_eq((int64_t)rv.n, count);
    ck_assert_int_eq((int64_t)distinct_ids(&rv), count);
    order_ctx oc = {calloc((size_t)count, 17), 0};
    ck_assert_int_eq(amk_space_enumerate(F.sp, order_collect, &oc), AMK_OK);
    for (size_t i = 0; i < rv.n; i++) {
        ck_assert_str_eq(rv.v[i].config_id, oc.ids[i]);
        ck_assert_str_eq(rv.v[i].source, "exhaustive");
        ck_assert_int_eq(rv.v[i].trial, (int64_t)i + 1);
    }
    char id[17], opt[17];
    amk_config_id(&res.best.config, id);
    optimum_id(opt);
    ck_assert_str_eq(id, opt);
    ck_assert_int_eq(res.best.kind, AMK_LAT_PREDICTED);
    free(oc.ids);
    free(rv.v);
}
END_TEST

START_TEST(test_amk_loop_run_strategies_exhaust_without_repeats)
{
    /* Run to the end of the space: no strategy repeats a config and each reports
     * exhaustion exactly when every valid config has been evaluated. */
    int64_t count = count_space();
    const char *names[] = {"hillclimb", "random", "anneal", "evolve"};
    for (int k = 0; k < 4; k++) {
        remove_results();
        amk_loop_opts o = opts_for(names[k], 5, 0);
        o.batch = 32;
        amk_loop_result res;
        amk_diag d = {0};
        ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s: %s", names[k], d.msg);
        ck_assert_msg(res.exhausted == 1, "%s did not report exhaustion", names[k]);
        ck_assert_msg(res.trials == count, "%s: %lld trials for %lld configs", names[k],
                      (long long)res.trials, (long long)count);
        rowvec rv = read_rows(F.results, NULL);
        ck_assert_int_eq((int64_t)distinct_ids(&rv), count);
        free(rv.v);
    }
}
END_TEST

START_TEST(test_amk_loop_run_same_seed_same_sequence)
{
    const char *names[] = {"hillclimb", "random", "anneal", "evolve"};
    for (int k = 0; k < 4; k++) {
        probe *p[3];
        const uint64_t seeds[3] = {7, 7, 8};
        for (int r = 0; r < 3; r++) {
            remove_results();
            p[r] = probe_new();
            amk_loop_opts o = opts_for(names[k], seeds[r], 200);
            o.progress = on_progress;
            o.progress_ud = p[r];
            amk_loop_result res;
            amk_diag d = {0};
            ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
            ck_assert_int_eq(p[r]->calls, 200);
        }
        int same = 1, differ = 0;
        for (int i = 0; i < 200; i++) {
            same &= strcmp(p[0]->ids[i], p[1]->ids[i]) == 0;
            differ |= strcmp(p[0]->ids[i], p[2]->ids[i]) != 0;
        }
        ck_assert_msg(same, "%s: seed 7 twice gave two sequences", names[k]);
        ck_assert_msg(differ, "%s: seeds 7 and 8 gave the same sequence", names[k]);
        for (int r = 0; r < 3; r++)
            free(p[r]);
    }
}
END_TEST

/* ---- the loop: budget, time, options ----------------------------------------------------- */

START_TEST(test_amk_loop_run_budget_respected)
{
    probe *pr = probe_new();
    amk_loop_opts o = opts_for("hillclimb", 3, 37);
    o.batch = 8; /* 37 is not a multiple of 8: the last batch must shrink */
    o.progress = on_progress;
    o.progress_ud = pr;
    amk_loop_result res;
    amk_diag d = {0};
    ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(res.trials, 37);
    ck_assert_int_eq(res.first_trial, 1);
    ck_assert_int_eq(res.exhausted, 0);
    ck_assert_int_eq(pr->calls, 37);
    rowvec rv = read_rows(F.results, NULL);
    ck_assert_int_eq(rv.n, 37);
    for (size_t i = 0; i < rv.n; i++)
        ck_assert_int_eq(rv.v[i].trial, (int64_t)i + 1);
    free(rv.v);
    free(pr);
}
END_TEST

START_TEST(test_amk_loop_run_time_limit_respected)
{
    probe *pr = probe_new();
    pr->sleep_us = 3000; /* a slow "evaluator": 3 ms per trial */
    amk_loop_opts o = opts_for("random", 3, 0);
    o.time_limit_s = 0.25;
    o.progress = on_progress;
    o.progress_ud = pr;
    amk_loop_result res;
    amk_diag d = {0};
    double t0 = amk_now_s();
    ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
    double wall = amk_now_s() - t0;
    fprintf(stderr, "time limit 0.25 s: %lld trials in %.3f s\n", (long long)res.trials, wall);
    ck_assert_int_eq(res.exhausted, 0);
    ck_assert_int_ge(res.trials, 10);
    ck_assert_int_lt(res.trials, count_space());
    ck_assert(wall >= 0.25);
    ck_assert_msg(wall < 0.25 + 0.2, "ran %.3f s past a 0.25 s limit", wall);
    rowvec rv = read_rows(F.results, NULL);
    ck_assert_int_eq((int64_t)rv.n, res.trials);
    free(rv.v);
    free(pr);
}
END_TEST

START_TEST(test_amk_loop_run_rejects_bad_options)
{
    amk_loop_opts o = opts_for("genetic", 1, 10);
    amk_loop_result res;
    amk_diag d = {0};
    ck_assert_int_eq(amk_loop_run(&o, &res, &d), AMK_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "genetic"));
    ck_assert_ptr_nonnull(strstr(d.msg, "hillclimb"));
    o = opts_for(NULL, 1, 10);
    o.results_path = NULL;
    ck_assert_int_eq(amk_loop_run(&o, &res, &d), AMK_EINVAL);
    o = opts_for(NULL, 1, -5);
    ck_assert_int_eq(amk_loop_run(&o, &res, &d), AMK_EINVAL);
    ck_assert_int_eq(access(F.results, F_OK), -1); /* nothing written */
    /* NULL strategy = the default (evolve, starting with hillclimb): its first row is the
     * spec's default config. */
    o = opts_for(NULL, 1, 3);
    ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
    rowvec rv = read_rows(F.results, NULL);
    ck_assert_int_eq(rv.n, 3);
    ck_assert_str_eq(rv.v[0].source, "default");
    free(rv.v);
}
END_TEST

START_TEST(test_amk_loop_run_writes_rows_and_best_json)
{
    amk_loop_opts o = opts_for("hillclimb", 11, 120);
    o.best_path = F.best;
    amk_loop_result res;
    amk_diag d = {0};
    ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
    rowvec rv = read_rows(F.results, NULL);
    ck_assert_int_eq(rv.n, 120);
    char kshape[160];
    amk_shape_format(F.spec, &F.shape, kshape, sizeof kshape);
    double best_lat = INFINITY;
    int64_t last_kept = 0;
    for (size_t i = 0; i < rv.n; i++) {
        const amk_row *r = &rv.v[i];
        ck_assert_str_eq(r->kernel, "landscape");
        ck_assert_str_eq(r->shape, kshape);
        ck_assert_str_eq(r->device, amk_evaluator_device(F.ev));
        ck_assert_int_eq(strlen(r->config_id), 16);
        ck_assert(r->params[0] == '{');
        ck_assert(r->time[0] == '2');
        ck_assert(strcmp(r->source, "sobol") == 0 || strcmp(r->source, "default") == 0 || strcmp(r->source, "mutate") == 0 ||
                  strcmp(r->source, "jump") == 0 || strcmp(r->source, "restart") == 0 ||
                  strcmp(r->source, "random") == 0);
        /* The params column rebuilds the config whose id the row carries. */
        amk_config c;
        ck_assert_int_eq(amk_config_from_params_json(F.spec, &F.shape, r->params, &c, &d),
                         AMK_OK);
        char id[17];
        amk_config_id(&c, id);
        ck_assert_str_eq(id, r->config_id);
        if (r->status == AMK_STATUS_OK) {
            ck_assert_int_eq(r->latency_kind, AMK_LAT_PREDICTED);
            ck_assert(isfinite(r->predicted_us) && isfinite(r->bound_us));
        }
        if (r->kept) { /* faster, or a simpler config inside the 1% margin */
            ck_assert_int_eq(r->status, AMK_STATUS_OK);
            ck_assert(r->latency_us < best_lat * 1.01);
            best_lat = r->latency_us;
            last_kept = r->trial;
        }
    }
    ck_assert_int_eq(res.best.trial, last_kept);
    ck_assert(fabs(res.best.latency_us - best_lat) <= 1e-6 * best_lat); /* text round trip */
    /* best.json names the incumbent. */
    char *text = NULL;
    ck_assert_int_eq(amk_fs_read_all(F.best, &text, NULL, &d), AMK_OK);
    cJSON *j = cJSON_Parse(text);
    ck_assert_ptr_nonnull(j);
    char id[17];
    amk_config_id(&res.best.config, id);
    const cJSON *cid = cJSON_GetObjectItemCaseSensitive(j, "config_id");
    ck_assert(cJSON_IsString(cid));
    ck_assert_str_eq(cid->valuestring, id);
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(j, "trial");
    ck_assert(cJSON_IsNumber(tr));
    ck_assert_int_eq((int64_t)tr->valuedouble, last_kept);
    cJSON_Delete(j);
    free(text);
    free(rv.v);
}
END_TEST

/* ---- resume and crash consistency -------------------------------------------------------- */

START_TEST(test_amk_loop_run_resume_continues_numbering_and_incumbent)
{
    amk_loop_opts o = opts_for("hillclimb", 21, 30);
    amk_loop_result r1, r2;
    amk_diag d = {0};
    ck_assert_msg(amk_loop_run(&o, &r1, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(r1.trials, 30);
    ck_assert(r1.best.has);

    probe *pr = probe_new();
    o = opts_for("hillclimb", 21, 20);
    o.resume = 1;
    o.progress = on_progress;
    o.progress_ud = pr;
    ck_assert_msg(amk_loop_run(&o, &r2, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(r2.trials, 20);
    ck_assert_int_eq(r2.first_trial, 31);

    rowvec rv = read_rows(F.results, NULL);
    ck_assert_int_eq(rv.n, 50);
    ck_assert_int_eq(distinct_ids(&rv), 50);
    for (size_t i = 0; i < rv.n; i++)
        ck_assert_int_eq(rv.v[i].trial, (int64_t)i + 1);
    /* The incumbent came back: no resumed row was kept unless it beat (or tied simpler
     * with) run 1's best, and the best never got worse. */
    for (size_t i = 30; i < rv.n; i++)
        if (rv.v[i].kept)
            ck_assert(rv.v[i].latency_us <= r1.best.latency_us * 1.01);
    ck_assert(r2.best.latency_us <= r1.best.latency_us);
    if (r2.best.trial <= 30) {
        ck_assert_int_eq(r2.best.trial, r1.best.trial);
        ck_assert(amk_config_equal(&r2.best.config, &r1.best.config));
    }
    /* Hillclimb continues from it instead of redoing its initial design. */
    ck_assert_str_ne(rv.v[30].source, "sobol");
    ck_assert(pr->first_best.has);
    free(rv.v);
    free(pr);
}
END_TEST

START_TEST(test_amk_loop_run_resume_exhaustive_completes_the_space)
{
    int64_t count = count_space();
    amk_loop_opts o = opts_for("exhaustive", 1, 1000);
    amk_loop_result r1, r2;
    amk_diag d = {0};
    ck_assert_msg(amk_loop_run(&o, &r1, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(r1.exhausted, 0);
    o = opts_for("exhaustive", 1, 0);
    o.resume = 1;
    o.batch = 64;
    ck_assert_msg(amk_loop_run(&o, &r2, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(r2.exhausted, 1);
    ck_assert_int_eq(r2.first_trial, 1001);
    ck_assert_int_eq(r2.trials, count - 1000);
    rowvec rv = read_rows(F.results, NULL);
    ck_assert_int_eq((int64_t)rv.n, count);
    ck_assert_int_eq((int64_t)distinct_ids(&rv), count);
    char id[17], opt[17];
    amk_config_id(&r2.best.config, id);
    optimum_id(opt);
    ck_assert_str_eq(id, opt);
    free(rv.v);
}
END_TEST

static size_t count_rows_now(const char *path)
{
    amk_tsv_stats st = {0};
    amk_diag d = {0};
    if (amk_tsv_read(path, NULL, NULL, &st, &d) != AMK_OK)
        return 0;
    return st.rows;
}

START_TEST(test_amk_loop_run_survives_sigkill_and_resumes)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        probe *pr = probe_new();
        pr->sleep_us = 1500; /* slow evaluations: the parent kills us mid-run */
        amk_loop_opts o = opts_for("hillclimb", 31, 100000);
        o.batch = 3;
        o.best_path = F.best;
        o.progress = on_progress;
        o.progress_ud = pr;
        amk_loop_result res;
        amk_loop_run(&o, &res, NULL);
        _exit(3); /* never reached in time */
    }
    double t0 = amk_now_s();
    while (count_rows_now(F.results) < 40 && amk_now_s() - t0 < 20)
        usleep(2000);
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    rowvec before = read_rows(F.results, NULL);
    size_t n1 = before.n;
    ck_assert_int_ge(n1, 40);
    ck_assert_int_eq(distinct_ids(&before), n1);
    for (size_t i = 0; i < n1; i++)
        ck_assert_int_eq(before.v[i].trial, (int64_t)i + 1);

    /* A kill inside write(2) leaves a partial row: simulate one (a config never run). */
    amk_row torn = before.v[n1 - 1];
    torn.trial = (int64_t)n1 + 1;
    amk_config fresh = make(0, 0, 0, 64);
    amk_config_id(&fresh, torn.config_id);
    amk_sb sb = {0};
    amk_row_format(&torn, &sb);
    int fd = open(F.results, O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, sb.p, sb.len / 2), (ssize_t)(sb.len / 2));
    close(fd);
    amk_sb_free(&sb);

    amk_loop_opts o = opts_for("hillclimb", 31, 25);
    o.resume = 1;
    o.batch = 3;
    o.best_path = F.best;
    amk_loop_result res;
    amk_diag d = {0};
    ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(res.first_trial, (int64_t)n1 + 1);
    ck_assert_int_eq(res.trials, 25);

    amk_tsv_stats st = {0};
    rowvec after = read_rows(F.results, &st);
    ck_assert_int_eq(after.n, n1 + 25);
    ck_assert_int_ge(st.torn, 1); /* the partial row is skipped, not trusted */
    ck_assert_int_eq(distinct_ids(&after), after.n);
    for (size_t i = 0; i < after.n; i++) {
        ck_assert_int_eq(after.v[i].trial, (int64_t)i + 1);
        if (i < n1) /* every completed row is still there, unchanged */
            ck_assert_str_eq(after.v[i].config_id, before.v[i].config_id);
    }
    /* best.json is whole and names a kept row of the log. */
    char *text = NULL;
    ck_assert_int_eq(amk_fs_read_all(F.best, &text, NULL, &d), AMK_OK);
    cJSON *j = cJSON_Parse(text);
    ck_assert_ptr_nonnull(j);
    const cJSON *cid = cJSON_GetObjectItemCaseSensitive(j, "config_id");
    ck_assert(cJSON_IsString(cid));
    int found = 0;
    for (size_t i = 0; i < after.n; i++)
        found |= after.v[i].kept && strcmp(after.v[i].config_id, cid->valuestring) == 0;
    ck_assert(found);
    cJSON_Delete(j);
    free(text);
    free(before.v);
    free(after.v);
}
END_TEST

/* ---- replayed data (sim backend) --------------------------------------------------------- */

#define SIM_DEVICE "NVIDIA H100 80GB HBM3"

/* Records a sweep of the landscape as if measured: the model's prediction with +-0.3%
 * deterministic jitter, a spread of 1%, a few configs recorded as wrong, and a few never
 * recorded (they replay as not_recorded). The optimum is recorded ok. Every row records
 * cost_s as its trial's cost (NAN: none). */
static void record_sweep(const char *path, size_t *n_wrong, size_t *n_missing, double cost_s)
{
    enum_ctx e = {0};
    ck_assert_int_eq(amk_space_enumerate(F.sp, enum_collect, &e), AMK_OK);
    amk_tsv *t = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_open(path, &t, &d) == AMK_OK, "%s", d.msg);
    char opt[17], shape[160];
    optimum_id(opt);
    amk_shape_format(F.spec, &F.shape, shape, sizeof shape);
    amk_row *rows = calloc(e.n, sizeof *rows);
    size_t n = 0;
    *n_wrong = *n_missing = 0;
    for (size_t i = 0; i < e.n; i++) {
        const amk_config *c = &e.v[i];
        char id[17];
        amk_config_id(c, id);
        uint64_t h = amk_hash64(id, 16);
        int is_opt = strcmp(id, opt) == 0;
        if (!is_opt && h % 29 == 0) {
            (*n_missing)++;
            continue;
        }
        amk_row *r = &rows[n++];
        amk_row_init(r);
        r->trial = (int64_t)n;
        snprintf(r->time, sizeof r->time, "2026-01-01T00:00:00Z");
        snprintf(r->kernel, sizeof r->kernel, "landscape");
        snprintf(r->shape, sizeof r->shape, "%s", shape);
        memcpy(r->config_id, id, 17);
        char *pj = amk_config_params_json(c);
        snprintf(r->params, sizeof r->params, "%s", pj);
        free(pj);
        snprintf(r->source, sizeof r->source, "exhaustive");
        snprintf(r->device, sizeof r->device, SIM_DEVICE);
        r->kept = 0;
        r->cost_s = cost_s;
        if (!is_opt && h % 17 == 0) {
            r->status = AMK_STATUS_WRONG;
            snprintf(r->note, sizeof r->note, "synthetic: recorded as wrong");
            (*n_wrong)++;
            continue;
        }
        double p = predicted(c);
        r->status = AMK_STATUS_OK;
        r->latency_us = p * (1.0 + 0.003 * ((double)(h % 7) - 3.0) / 3.0);
        r->latency_kind = AMK_LAT_MEASURED;
        r->spread = 0.01;
        r->predicted_us = p;
        snprintf(r->note, sizeof r->note, "synthetic sweep generated from the model");
    }
    ck_assert_msg(amk_tsv_append(t, rows, n, &d) == AMK_OK, "%s", d.msg);
    amk_tsv_close(t);
    free(rows);
    free(e.v);
}

/* The sim backend replaying the sweep at path. */
static amk_evaluator *open_sim(const char *path)
{
    char backend[420];
    snprintf(backend, sizeof backend, "sim:%s", path);
    amk_backend_opts bo = {.target = "h100", .sim_path = path};
    amk_evaluator *sim = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_evaluator_create(backend, &bo, F.spec, &F.shape, &sim, &d) == AMK_OK,
                  "%s", d.msg);
    return sim;
}

START_TEST(test_amk_loop_run_replayed_sweep_hillclimb_beats_random)
{
    char sweep[400];
    snprintf(sweep, sizeof sweep, "%s/sweep.tsv", F.dir);
    size_t n_wrong, n_missing;
    record_sweep(sweep, &n_wrong, &n_missing, NAN);
    ck_assert_int_gt(n_wrong, 0);
    ck_assert_int_gt(n_missing, 0);

    amk_evaluator *sim = open_sim(sweep);
    amk_diag d = {0};
    ck_assert_str_eq(amk_evaluator_backend(sim), "sim");
    amk_evaluator *model = F.ev;
    F.ev = sim; /* opts_for() picks it up */

    int64_t count = count_space();
    enum { NS = 10 };
    int64_t hc[NS], rnd[NS];
    for (int s = 0; s < NS; s++) {
        hc[s] = evals_to_optimum("hillclimb", 500 + (uint64_t)s, 1500, NULL);
        rnd[s] = evals_to_optimum("random", 500 + (uint64_t)s, count, NULL);
    }
    double mh = median_i64(hc, NS), mr = median_i64(rnd, NS);
    fprintf(stderr, "quality (sim replay, %zu wrong, %zu unrecorded): median evaluations to "
            "the optimum over %d seeds: hillclimb %.1f, random %.1f\n", n_wrong, n_missing,
            NS, mh, mr);
    ck_assert_msg(mh * 4 < mr, "hillclimb %.1f vs random %.1f on replayed data", mh, mr);

    /* One more run to inspect its rows: replayed latencies, failures and gaps as data. */
    remove_results();
    amk_loop_opts o = opts_for("hillclimb", 500, 1500);
    amk_loop_result res;
    ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
    rowvec rv = read_rows(F.results, NULL);
    size_t n_ok = 0, n_bad = 0;
    for (size_t i = 0; i < rv.n; i++) {
        const amk_row *r = &rv.v[i];
        ck_assert_ptr_nonnull(strstr(r->device, "(replayed)"));
        if (r->status == AMK_STATUS_OK) {
            ck_assert_int_eq(r->latency_kind, AMK_LAT_REPLAYED);
            n_ok++;
        } else {
            ck_assert(r->status == AMK_STATUS_WRONG || r->status == AMK_STATUS_NOT_RECORDED ||
                      r->status == AMK_STATUS_SCREENED || r->status == AMK_STATUS_REJECTED);
            ck_assert_int_eq(r->kept, 0);
            n_bad++;
        }
    }
    ck_assert_int_gt(n_ok, 0);
    ck_assert_int_gt(n_bad, 0);
    char id[17], opt[17];
    amk_config_id(&res.best.config, id);
    optimum_id(opt);
    ck_assert_str_eq(id, opt);
    ck_assert_int_eq(res.best.kind, AMK_LAT_REPLAYED);
    free(rv.v);
    F.ev = model;
    amk_evaluator_free(sim);
}
END_TEST

/* ---- internals --------------------------------------------------------------------------- */

START_TEST(test_amk__sampler_next_serves_every_config_once)
{
    gsl_rng *rng = amk__rng_create(9);
    amk__sampler s;
    amk__sampler_init(&s, F.sp, rng, NULL);
    amk_idset *seen = amk_idset_create();
    int64_t count = count_space(), got = 0;
    amk_config c;
    int rc;
    while ((rc = amk__sampler_next(&s, seen, &c)) == 1) {
        ck_assert(amk__space_valid(F.sp, &c));
        char id[17];
        amk_config_id(&c, id);
        ck_assert_int_eq(amk_idset_add(seen, id), 1);
        got++;
        ck_assert_int_le(got, count);
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(got, count);
    ck_assert_int_eq(s.pooled, 1); /* the tail came from the enumerated pool */
    amk__sampler_clear(&s);
    amk_idset_free(seen);
    gsl_rng_free(rng);
}
END_TEST

START_TEST(test_amk__jump_moves_two_or_three_params)
{
    gsl_rng *rng = amk__rng_create(4);
    amk_config from = make(5, 5, 5, 128), to;
    int n = amk_spec_n_params(F.spec);
    for (int t = 0; t < 200; t++) {
        int k = 2 + t % 2;
        ck_assert_int_eq(amk__jump(F.sp, rng, &from, k, NULL, NULL, 64, &to), 1);
        int moved = 0;
        for (int i = 0; i < n; i++)
            moved += to.choice[i] != from.choice[i];
        ck_assert_int_eq(moved, k);
        ck_assert(amk__space_valid(F.sp, &to));
    }
    gsl_rng_free(rng);
}
END_TEST


/* ---- interleaved re-measure of close calls ------------------------------------------------ */

/* A fake measuring backend: the k-th evaluated config measures fake_lat[k] at SM clock
 * fake_mhz[k] (0: not read); remeasure answers fake_re[0] (incumbent) and fake_re[1]
 * (candidate) at fake_re_mhz and counts its calls. */
static double fake_lat[4], fake_mhz[4], fake_peer[4], fake_re[2], fake_re_mhz, fake_re_gain;
static double fake_spread = 0.001; /* of every evaluated config */
static int fake_calls, fake_re_calls;

static int fake_init(void *st, const amk_backend_opts *o, amk_diag *d)
{
    (void)st, (void)o, (void)d;
    return AMK_OK;
}

static int fake_evaluate(void *st, const amk_config *const *c, size_t n, amk_verdict *out)
{
    (void)st, (void)c;
    for (size_t i = 0; i < n; i++) {
        out[i].status = AMK_STATUS_OK;
        out[i].correct = 1;
        out[i].latency_kind = AMK_LAT_MEASURED;
        out[i].sm_mhz = fake_mhz[fake_calls % 4];
        if (fake_peer[fake_calls % 4] > 0) { /* timed beside a peer */
            snprintf(out[i].peer, sizeof out[i].peer, "cublas");
            out[i].peer_us = fake_peer[fake_calls % 4];
        }
        out[i].latency_us = fake_lat[fake_calls++ % 4];
        out[i].spread = fake_spread;
    }
    return AMK_OK;
}

static int fake_remeasure(void *st, const amk_config *a, const amk_config *b, double decide_gain,
                          double lat[2], double spread[2], double *sm_mhz, amk_diag *d)
{
    (void)st, (void)a, (void)b, (void)d;
    fake_re_gain = decide_gain;
    *sm_mhz = fake_re_mhz;
    fake_re_calls++;
    lat[0] = fake_re[0];
    lat[1] = fake_re[1];
    spread[0] = spread[1] = 0.001;
    return AMK_OK;
}

static void fake_clear(void *st) { (void)st; }

static const amk_backend_type fake_bench = {
    .api_version = 1, .name = "fakebench", .init = fake_init, .evaluate = fake_evaluate,
    .clear = fake_clear, .remeasure = fake_remeasure,
};

/* Runs exhaustive for n trials on the fake backend (fake_lat, fake_mhz, fake_re set);
 * returns the rows. */
static rowvec fake_trials(int n)
{
    amk_evaluator *ev = NULL;
    amk_diag d = {0};
    ck_assert_int_eq(amk__evaluator_create_type(&fake_bench, NULL, &ev, &d), AMK_OK);
    fake_calls = fake_re_calls = 0;
    remove_results();
    amk_loop_opts o = opts_for("exhaustive", 1, n);
    o.ev = ev;
    amk_loop_result res;
    ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
    amk_evaluator_free(ev);
    rowvec rv = read_rows(F.results, NULL);
    ck_assert_int_eq(rv.n, n);
    return rv;
}

static rowvec two_trials(double first, double second, double re_inc, double re_cand)
{
    fake_lat[0] = first;
    fake_lat[1] = second;
    fake_re[0] = re_inc;
    fake_re[1] = re_cand;
    memset(fake_mhz, 0, sizeof fake_mhz);
    return fake_trials(2);
}

START_TEST(test_amk_loop_run_remeasures_close_calls_interleaved)
{
    /* 0.2% apart (inside the 1% margin): re-measured together, the candidate is really 10%
     * faster, so it is kept; the row keeps its first measurement and says what happened. */
    rowvec rv = two_trials(1000.0, 998.0, 1000.0, 900.0);
    ck_assert_int_eq(fake_re_calls, 1);
    /* the window may end once the answer at the loop's margin is known */
    ck_assert_double_eq_tol(fake_re_gain, opts_for("exhaustive", 1, 2).min_gain, 1e-12);
    ck_assert(fake_re_gain > 0);
    ck_assert_int_eq(rv.v[1].kept, 1);
    ck_assert_double_eq_tol(rv.v[1].latency_us, 998.0, 1e-6);
    ck_assert_ptr_nonnull(strstr(rv.v[1].note, "re-measured interleaved"));
    free(rv.v);

    /* Close again, but together the candidate is slower: reverted whatever the tie-break. */
    rv = two_trials(1000.0, 999.0, 1000.0, 1100.0);
    ck_assert_int_eq(fake_re_calls, 1);
    ck_assert_int_eq(rv.v[1].kept, 0);
    free(rv.v);

    /* A clear win needs no re-measure. */
    rv = two_trials(1000.0, 500.0, 0, 0);
    ck_assert_int_eq(fake_re_calls, 0);
    ck_assert_int_eq(rv.v[1].kept, 1);
    ck_assert_ptr_null(strstr(rv.v[1].note, "re-measured"));
    free(rv.v);
}
END_TEST

START_TEST(test_amk_loop_run_remeasure_gives_the_incumbent_the_window_clock)
{
    /* Trial 2 is a close call, re-measured at 1450 MHz and reverted: the incumbent's latency
     * and clock are now the window's. Trial 3 is 5% faster at 1600 MHz: a clock that favours
     * it against the incumbent's 1450, so it is re-measured too (held against trial 2's own
     * 1600 MHz, it would have looked like the same clock). */
    double lat[] = {1000.0, 999.0, 950.0, 0}, mhz[] = {1400, 1600, 1600, 0};
    memcpy(fake_lat, lat, sizeof lat);
    memcpy(fake_mhz, mhz, sizeof mhz);
    fake_re[0] = 1000.0, fake_re[1] = 1100.0, fake_re_mhz = 1450;
    rowvec rv = fake_trials(3);
    ck_assert_int_eq(fake_re_calls, 2);
    ck_assert_int_eq(rv.v[1].kept, 0);
    ck_assert_msg(strstr(rv.v[2].note, "SM clock 1600 MHz (incumbent 1450 MHz)"), "%s",
                  rv.v[2].note);
    free(rv.v);
    fake_re_mhz = 0;
}
END_TEST

START_TEST(test_amk_loop_run_peered_configs_need_no_clock_remeasure)
{
    /* Trial 2 is 10% faster raw at a 14% higher clock, but beside cuBLAS it is 900 x 500 /
     * 400 = 1125 us in trial 1's clock state: reverted without a re-measure, the note says
     * how it was judged. */
    double lat[] = {1000.0, 900.0, 0, 0}, mhz[] = {1400, 1600, 0, 0},
           peer[] = {500.0, 400.0, 0, 0};
    memcpy(fake_lat, lat, sizeof lat);
    memcpy(fake_mhz, mhz, sizeof mhz);
    memcpy(fake_peer, peer, sizeof peer);
    fake_re[0] = fake_re[1] = 0;
    rowvec rv = fake_trials(2);
    ck_assert_int_eq(fake_re_calls, 0);
    ck_assert_int_eq(rv.v[1].kept, 0);
    ck_assert_msg(strstr(rv.v[1].note, "SM clock 1600 MHz (incumbent 1400 MHz): held in the "
                                       "incumbent's clock state beside cublas, 1125.000 us"),
                  "%s", rv.v[1].note);
    free(rv.v);
    memset(fake_peer, 0, sizeof fake_peer);
}
END_TEST

START_TEST(test_amk_loop_run_remeasure_decides_at_its_own_precision)
{
    /* Beside the same peer, 4% launch spreads: trial 2 looks 1% faster, a close call. The
     * interleaved re-measure pins both medians (+-0.1%) and finds it 2.4% faster: kept. Held
     * to the launches' 4% spread instead, it was a tie and reverted (8192^3 on the H100:
     * 2-5% spreads under the power cap, candidates every re-measure found faster lost). */
    double lat[] = {1000.0, 990.0, 0, 0}, peer[] = {1000.0, 1000.0, 0, 0};
    memcpy(fake_lat, lat, sizeof lat);
    memset(fake_mhz, 0, sizeof fake_mhz);
    memcpy(fake_peer, peer, sizeof peer);
    fake_spread = 0.04;
    fake_re[0] = 1000.0, fake_re[1] = 976.0;
    rowvec rv = fake_trials(2);
    ck_assert_int_eq(fake_re_calls, 1);
    ck_assert_int_eq(rv.v[1].kept, 1);
    free(rv.v);
    /* Found within 1% together: not kept (a tie, and the candidate is not simpler). */
    fake_re[1] = 995.0;
    rv = fake_trials(2);
    ck_assert_int_eq(fake_re_calls, 1);
    ck_assert_int_eq(rv.v[1].kept, 0);
    free(rv.v);
    memset(fake_peer, 0, sizeof fake_peer);
    fake_spread = 0.001;
}
END_TEST

/* ---- several devices: configs of a batch finishing out of order --------------------------- */

/* A fake backend of `ndevices` devices (as the gpu backend with several GPUs): a config's
 * latency is a fixed function of its id (ties and close calls included, some configs wrong),
 * but each batch finishes in a scrambled order that depends on the device count, every config
 * on one of the devices, and the notes say which one. */
typedef struct multi_state {
    int ndev;
    uint64_t rng;
} multi_state;
static size_t multi_max_batch;

static int multi_init(void *st, const amk_backend_opts *o, amk_diag *d)
{
    (void)d;
    multi_state *m = st;
    m->ndev = o && o->ndevices > 0 ? o->ndevices : 1;
    m->rng = UINT64_C(0x9e3779b97f4a7c15) * (uint64_t)(m->ndev + 1);
    return AMK_OK;
}

static int multi_parallelism(void *st)
{
    return ((multi_state *)st)->ndev;
}

static uint64_t multi_next(multi_state *m)
{
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    return m->rng;
}

static int multi_evaluate(void *st, const amk_config *const *c, size_t n, amk_verdict *out)
{
    multi_state *m = st;
    size_t order[256];
    (void)c;
    ck_assert_uint_le(n, 256);
    if (n > multi_max_batch)
        multi_max_batch = n;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) { /* Fisher-Yates: the completion order */
        size_t j = (size_t)(multi_next(m) % i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    for (size_t k = 0; k < n; k++) {
        amk_verdict *v = &out[order[k]];
        uint64_t h = amk_hash64(v->config_id, 16);
        v->status = h % 7 == 0 ? AMK_STATUS_WRONG : AMK_STATUS_OK;
        v->correct = v->status == AMK_STATUS_OK;
        if (v->status == AMK_STATUS_OK) {
            v->latency_kind = AMK_LAT_MEASURED;
            v->latency_us = 100.0 + (double)(h % 400) * 0.25; /* 100..200 us, steps of 0.25 */
            v->spread = 0.002;
        }
        snprintf(v->notes, sizeof v->notes, "gpu %d", (int)(k % (size_t)m->ndev));
    }
    return AMK_OK;
}

static const amk_backend_type multi_gpu = {
    .api_version = 1, .name = "fakemulti", .state_size = sizeof(multi_state),
    .init = multi_init, .evaluate = multi_evaluate, .clear = fake_clear,
    .parallelism = multi_parallelism,
};

/* Runs hillclimb (seed 5, batch `batch`) on the fake backend with ndev devices. */
static rowvec multi_rows(int ndev, int batch, int64_t budget)
{
    amk_evaluator *ev = NULL;
    amk_diag d = {0};
    int devs[3] = {0, 1, 2};
    amk_backend_opts bo = {0};
    bo.devices = devs;
    bo.ndevices = ndev;
    ck_assert_int_eq(amk__evaluator_create_type(&multi_gpu, &bo, &ev, &d), AMK_OK);
    ck_assert_int_eq(amk_evaluator_parallelism(ev), ndev);
    remove_results();
    multi_max_batch = 0;
    amk_loop_opts o = opts_for("hillclimb", 5, budget);
    o.ev = ev;
    o.batch = batch;
    amk_loop_result res;
    ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
    amk_evaluator_free(ev);
    rowvec rv = read_rows(F.results, NULL);
    ck_assert_int_eq((int64_t)rv.n, budget);
    return rv;
}

START_TEST(test_amk_loop_run_rows_same_for_any_parallelism)
{
    rowvec one = multi_rows(1, 6, 90);
    rowvec three = multi_rows(3, 6, 90);
    int kept = 0, wrong = 0, notes_differ = 0;
    for (size_t i = 0; i < one.n; i++) {
        const amk_row *a = &one.v[i], *b = &three.v[i];
        ck_assert_int_eq(a->trial, b->trial);
        ck_assert_msg(strcmp(a->config_id, b->config_id) == 0, "trial %lld: %s vs %s",
                      (long long)a->trial, a->config_id, b->config_id);
        ck_assert_str_eq(a->params, b->params);
        ck_assert_str_eq(a->source, b->source);
        ck_assert_int_eq(a->status, b->status);
        ck_assert_int_eq(a->kept, b->kept);
        ck_assert(a->latency_us == b->latency_us ||
                  (isnan(a->latency_us) && isnan(b->latency_us)));
        ck_assert_str_eq(a->device, b->device);
        kept += a->kept;
        wrong += a->status == AMK_STATUS_WRONG;
        notes_differ |= strcmp(a->note, b->note) != 0;
    }
    /* The comparison means something: the search moved, failures happened, and the two runs
     * did not run each trial on the same device. */
    ck_assert_int_ge(kept, 2);
    ck_assert_int_ge(wrong, 1);
    ck_assert(notes_differ);
    free(one.v);
    free(three.v);

    /* Without --batch the loop keeps every device busy: twice the parallelism. */
    rowvec dflt = multi_rows(3, 0, 12);
    ck_assert_uint_eq(multi_max_batch, 6);
    free(dflt.v);
}
END_TEST

/* A replay of a results file whose rows record what their trials cost: the loop's time limit
 * runs on those costs (a simulated clock), and the rows it writes carry each replayed trial's
 * recorded cost (none where nothing was replayed: not_recorded, screened), which a resumed
 * search's strategy hears back (amk_verdict_from_row). */
START_TEST(test_amk_loop_run_replayed_costs_drive_clock_and_rows)
{
    char sweep[400];
    snprintf(sweep, sizeof sweep, "%s/sweep.tsv", F.dir);
    size_t n_wrong, n_missing;
    record_sweep(sweep, &n_wrong, &n_missing, 0.75);
    amk_evaluator *sim = open_sim(sweep);
    amk_diag d = {0};
    ck_assert_int_eq(amk_evaluator_simulated_clock(sim), 1);
    amk_evaluator *model = F.ev;
    F.ev = sim;
    amk_loop_opts o = opts_for("random", 7, 0);
    o.time_limit_s = 5.9; /* 8 replayed trials of 0.75 s: 6.0 s */
    o.batch = 1;
    amk_loop_result res;
    ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
    ck_assert_double_eq(res.elapsed_s, 6.0);
    rowvec rv = read_rows(F.results, NULL);
    ck_assert_int_eq((int64_t)rv.n, res.trials);
    int costed = 0;
    for (size_t i = 0; i < rv.n; i++) {
        const amk_row *r = &rv.v[i];
        if (r->status == AMK_STATUS_OK || r->status == AMK_STATUS_WRONG) {
            ck_assert_msg(r->cost_s == 0.75, "trial %lld (%s): cost %g", (long long)r->trial,
                          amk_status_name(r->status), r->cost_s);
            costed++;
        } else {
            ck_assert_msg(isnan(r->cost_s), "trial %lld (%s): cost %g", (long long)r->trial,
                          amk_status_name(r->status), r->cost_s);
        }
        amk_verdict v;
        amk_verdict_from_row(r, &v);
        ck_assert(isnan(r->cost_s) ? isnan(v.cost_s) : v.cost_s == r->cost_s);
    }
    ck_assert_int_eq(costed, 8);
    free(rv.v);
    F.ev = model;
    amk_evaluator_free(sim);
}
END_TEST

static TCase *tcase(Suite *s, const char *name, int timeout)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, timeout);
    suite_add_tcase(s, tc);
    return tc;
}

static amk_row hist_row(int64_t trial, double us, int kept, amk_status st)
{
    amk_row r;
    amk_row_init(&r);
    r.trial = trial;
    r.latency_us = us;
    r.latency_kind = AMK_LAT_MEASURED;
    r.kept = kept;
    r.status = st;
    return r;
}

/* The trial amk_history_rule picks from rows (file[i] = row i's file; NULL: all file 0),
 * or -1 when it picks none. */
static int64_t history_pick(const amk_row *rows, const size_t *file, size_t n)
{
    void *st = calloc(1, amk_history_rule.state_size);
    ck_assert_ptr_nonnull(st);
    for (size_t i = 0; i < n; i++)
        amk_history_rule.add(st, &rows[i], file ? file[i] : 0);
    const amk_row *b = amk_history_rule.best(st, NULL);
    int64_t t = b ? b->trial : -1;
    free(st);
    return t;
}

/* Rows measured with a 1% spread: the noise that lets the keep rule's choice stand. */
static amk_row noisy_row(int64_t trial, double us, int kept, amk_status st)
{
    amk_row r = hist_row(trial, us, kept, st);
    r.spread = 0.01;
    return r;
}

START_TEST(test_amk_history_rule_honours_kept_then_replays_keep_rule)
{
    /* trial 34 kept; trial 112 is 0.65% faster but was not kept (inside the 1% noise): 34
     * stays */
    amk_row rows[4] = {noisy_row(7, 120.0, 1, AMK_STATUS_OK), noisy_row(34, 100.0, 1, AMK_STATUS_OK),
                       noisy_row(112, 99.35, 0, AMK_STATUS_OK),
                       noisy_row(200, 50.0, 1, AMK_STATUS_WRONG)};
    ck_assert_int_eq(history_pick(rows, NULL, 4), 34);
    /* no recorded decision: the keep rule replayed in file order */
    amk_row sweep[4] = {noisy_row(1, 100.0, 0, AMK_STATUS_OK), noisy_row(2, 130.0, 0, AMK_STATUS_OK),
                        noisy_row(3, 99.35, 0, AMK_STATUS_OK), noisy_row(4, 90.0, 0, AMK_STATUS_OK)};
    ck_assert_int_eq(history_pick(sweep, NULL, 3), 1);
    ck_assert_int_eq(history_pick(sweep, NULL, 4), 4);
    /* 2% faster replaces; a spread wider than the gain keeps the earlier trial */
    sweep[2].latency_us = 98.0;
    ck_assert_int_eq(history_pick(sweep, NULL, 3), 3);
    sweep[2].spread = 0.03;
    ck_assert_int_eq(history_pick(sweep, NULL, 3), 1);
    /* a measurement outranks a prediction, kept or not; a replayed one counts as measured */
    amk_row kinds[2] = {hist_row(1, 10.0, 1, AMK_STATUS_OK), hist_row(2, 100.0, 0, AMK_STATUS_OK)};
    kinds[0].latency_kind = AMK_LAT_PREDICTED;
    ck_assert_int_eq(history_pick(kinds, NULL, 2), 2);
    ck_assert_int_eq(history_pick(kinds, NULL, 1), 1);
    /* several files: each file's incumbent, then the keep rule across files in order */
    amk_row two[3] = {noisy_row(5, 100.0, 1, AMK_STATUS_OK), noisy_row(1, 99.5, 1, AMK_STATUS_OK),
                      noisy_row(2, 90.0, 0, AMK_STATUS_OK)};
    const size_t files[3] = {0, 1, 1};
    ck_assert_int_eq(history_pick(two, files, 2), 5);  /* 0.5% faster: file 0's stays */
    two[1].kept = 0;
    two[2].kept = 1;
    ck_assert_int_eq(history_pick(two, files, 3), 2);  /* 10% faster: file 1's wins */
    amk_row bad[1] = {hist_row(1, 10.0, 1, AMK_STATUS_WRONG)};
    ck_assert_int_eq(history_pick(bad, NULL, 1), -1);
    ck_assert_int_eq(history_pick(NULL, NULL, 0), -1);
}
END_TEST

/* Rows timed beside one peer are compared in one clock state: the fastest row by that
 * measure is handed back, not the fastest raw latency (the H200 race: trial 70's 198.3 us
 * beside a 181.9 us cuBLAS is 219 us in trial 1's state, 209.3 us beside 200.9 us). */
START_TEST(test_amk_history_rule_compares_peered_rows_in_one_clock_state)
{
    amk_row rows[3] = {hist_row(1, 209.3, 1, AMK_STATUS_OK), hist_row(21, 202.4, 0, AMK_STATUS_OK),
                       hist_row(70, 198.3, 0, AMK_STATUS_OK)};
    double peer[3] = {200.9, 180.6, 181.9};
    for (int i = 0; i < 3; i++)
        rows[i].spread = 0.002;
    ck_assert_int_eq(history_pick(rows, NULL, 3), 70); /* raw: the fastest row */
    for (int i = 0; i < 3; i++) {
        snprintf(rows[i].peer, sizeof rows[i].peer, "cublas");
        rows[i].peer_us = peer[i];
    }
    ck_assert_int_eq(history_pick(rows, NULL, 3), 1);
    rows[2].latency_us = 170.0; /* 187.8 us in trial 1's state: 10% faster */
    ck_assert_int_eq(history_pick(rows, NULL, 3), 70);
}
END_TEST

/* Issue 21 item 5: whatever was kept, the best is never slower than another row of the same
 * kind of evidence by more than their measured noise; replayed rows have none, so on them the
 * best is the fastest row. */
/* A row of objective energy (or edp), measured over a counter window of `ticks` ticks. */
static amk_row energy_row(int64_t trial, double us, double uj, int ticks, int kept,
                          amk_objective obj)
{
    amk_row r = hist_row(trial, us, kept, AMK_STATUS_OK);
    r.spread = 0.005;
    r.objective = obj;
    r.energy_uj = uj;
    r.energy_ticks = ticks;
    r.energy_window_ms = ticks * 100.0;
    return r;
}

/* The rule follows the objective the rows were recorded under: the lowest energy (or
 * energy x latency) beyond the counter's noise, not the fastest; replayed rows have no noise,
 * so the lowest-energy row is the best; rows without a window take no part. */
START_TEST(test_amk_history_rule_follows_the_objective)
{
    amk_row rows[4] = {energy_row(1, 100.0, 70000, 10, 0, AMK_OBJ_ENERGY),
                       energy_row(2, 90.0, 76000, 10, 0, AMK_OBJ_ENERGY),  /* fastest */
                       energy_row(3, 120.0, 60000, 10, 0, AMK_OBJ_ENERGY), /* least energy */
                       energy_row(4, 80.0, 50000, 0, 0, AMK_OBJ_ENERGY)};  /* an estimate */
    ck_assert_int_eq(history_pick(rows, NULL, 4), 3);
    /* 6% less energy is inside a 10-tick window's noise: the earlier row stays */
    rows[2].energy_uj = 66000;
    ck_assert_int_eq(history_pick(rows, NULL, 3), 1);
    /* 20 ticks (5%): beyond the noise */
    for (int i = 0; i < 3; i++)
        rows[i].energy_ticks = 20;
    ck_assert_int_eq(history_pick(rows, NULL, 3), 3);
    /* edp: row 1 100 x 70000 = 7.0e6, row 2 90 x 76000 = 6.84e6 (2% better, inside 5.5%),
     * row 3 120 x 66000 = 7.9e6 */
    for (int i = 0; i < 4; i++)
        rows[i].objective = AMK_OBJ_EDP;
    ck_assert_int_eq(history_pick(rows, NULL, 4), 1);
    rows[1].latency_us = 80.0; /* 13% better */
    ck_assert_int_eq(history_pick(rows, NULL, 4), 2);
    /* replayed: the lowest energy, exactly, whatever was kept */
    amk_row rep[3] = {energy_row(1, 100.0, 70000, 10, 1, AMK_OBJ_ENERGY),
                      energy_row(2, 90.0, 69000, 10, 0, AMK_OBJ_ENERGY),
                      energy_row(3, 95.0, 69500, 10, 0, AMK_OBJ_ENERGY)};
    for (int i = 0; i < 3; i++)
        rep[i].latency_kind = AMK_LAT_REPLAYED;
    ck_assert_int_eq(history_pick(rep, NULL, 3), 2);
    /* the same rows under objective time: the fastest */
    for (int i = 0; i < 3; i++)
        rep[i].objective = AMK_OBJ_TIME;
    ck_assert_int_eq(history_pick(rep, NULL, 3), 2);
    rep[1].latency_us = 99.0;
    ck_assert_int_eq(history_pick(rep, NULL, 3), 3);
    /* only estimates: nothing to hand back under energy */
    amk_row est[1] = {energy_row(1, 100.0, 70000, 0, 1, AMK_OBJ_ENERGY)};
    ck_assert_int_eq(history_pick(est, NULL, 1), -1);
}
END_TEST

START_TEST(test_amk_history_rule_hands_back_no_measurably_slower_row)
{
    /* Measured without a spread: the 0.65% faster row that was not kept is the best. */
    amk_row rows[3] = {hist_row(7, 120.0, 1, AMK_STATUS_OK), hist_row(34, 100.0, 1, AMK_STATUS_OK),
                       hist_row(112, 99.35, 0, AMK_STATUS_OK)};
    ck_assert_int_eq(history_pick(rows, NULL, 3), 112);
    /* A 1% spread on either side covers the 0.65%: the kept row stands. */
    rows[1].spread = 0.01;
    ck_assert_int_eq(history_pick(rows, NULL, 3), 34);
    /* Replayed rows: the recorded spread is no noise of a replay; the fastest row wins, also
     * against a margin (min_gain) and a recorded decision, and the earliest of equals. */
    amk_row rep[4] = {hist_row(1, 31.488, 1, AMK_STATUS_OK), hist_row(4, 31.776, 1, AMK_STATUS_OK),
                      hist_row(9, 31.3, 0, AMK_STATUS_OK), hist_row(12, 31.3, 0, AMK_STATUS_OK)};
    for (int i = 0; i < 4; i++) {
        rep[i].latency_kind = AMK_LAT_REPLAYED;
        rep[i].spread = 0.05;
    }
    ck_assert_int_eq(history_pick(rep, NULL, 2), 1);
    ck_assert_int_eq(history_pick(rep, NULL, 4), 9);
    /* Several files: the fastest over all of them. */
    const size_t files[4] = {0, 0, 1, 1};
    ck_assert_int_eq(history_pick(rep, files, 4), 9);
    /* A kept row slower than the incumbent before it (the loop's "simpler config" tie-break
     * steps inside min_gain and the noise) moves the search, not the best. */
    amk_row steps[3] = {hist_row(1, 100.0, 1, AMK_STATUS_OK), hist_row(2, 100.8, 1, AMK_STATUS_OK),
                        hist_row(3, 100.5, 0, AMK_STATUS_OK)};
    for (int i = 0; i < 3; i++)
        steps[i].spread = 0.02;
    ck_assert_int_eq(history_pick(steps, NULL, 3), 1);
    /* A faster prediction is never handed back over a measurement. */
    rep[2].latency_kind = rep[3].latency_kind = AMK_LAT_PREDICTED;
    ck_assert_int_eq(history_pick(rep, NULL, 4), 1);
}
END_TEST

static Suite *search_suite(void)
{
    Suite *s = suite_create("search");
    TCase *tc = tcase(s, "landscape", 60);
    tcase_add_test(tc, test_landscape_has_unique_optimum_and_local_optima);

    tc = tcase(s, "amk_strategy_find", 10);
    tcase_add_test(tc, test_amk_strategy_find_every_listed_strategy);
    tcase_add_test(tc, test_amk_strategy_next_starts_at_the_default_or_its_nearest_valid_config);
    tcase_add_test(tc, test_hillclimb_batch_before_the_defaults_verdict_gets_its_neighbours);
    tcase_add_test(tc, test_hillclimb_repairs_a_single_move_that_breaks_a_restriction);
    tcase_add_test(tc, test_amk_strategy_next_avoids_seen_and_ends);
    tcase_add_test(tc, test_amk_strategy_next_evolve_children_are_valid_and_new);
    tcase_add_test(tc, test_amk_strategy_next_evolve_screen_weighs_recorded_costs);
    tcase_add_test(tc, test_amk_strategy_next_evolve_samples_off_a_plateau);
    tcase_add_test(tc, test_amk_strategy_next_evolve_stalled_walk_hands_over_early);
    tcase_add_test(tc, test_amk__gp_fit_learns_which_params_matter);
    tcase_add_test(tc, test_amk__gp_tune_step_in_pieces_matches_whole);
    tcase_add_test(tc, test_amk__gp_tune_step_skips_params_all_points_share);
    tcase_add_test(tc, test_amk__gp_tune_step_updates_r2_exactly);
    tcase_add_test(tc, test_amk__gp_kernel_memo_matches_formula);
    tcase_add_test(tc, test_amk__gp_fit_vector_paths_match_scalar);
    tcase_add_test(tc, test_amk__gp_fit_kept_kernel_matches_fresh);

    tc = tcase(s, "amk_keep_decide", 10);
    tcase_add_test(tc, test_amk_keep_decide_first_ok_candidate_is_kept);
    tcase_add_test(tc, test_amk_keep_decide_not_ok_never_kept);
    tcase_add_test(tc, test_amk_keep_decide_holds_peered_configs_in_one_clock_state);
    tcase_add_test(tc, test_amk_keep_decide_respects_noise_margin);
    tcase_add_test(tc, test_keep_clock_moved_asks_for_a_remeasure);
    tcase_add_test(tc, test_amk_keep_decide_tie_goes_to_simpler);
    tcase_add_test(tc, test_amk_keep_decide_follows_the_objective);

    tc = tcase(s, "amk_loop_run", 240);
    tcase_add_test(tc, test_amk_loop_run_hillclimb_and_anneal_beat_random);
    tcase_add_test(tc, test_amk_loop_run_evolve_beats_random);
    tcase_add_test(tc, test_amk_loop_run_hillclimb_batched_finds_optimum);
    tcase_add_test(tc, test_amk_loop_run_replayed_sweep_hillclimb_beats_random);
    tcase_add_test(tc, test_amk_loop_run_replayed_costs_drive_clock_and_rows);
    tcase_add_test(tc, test_amk_loop_run_exhaustive_visits_every_config_in_order);
    tcase_add_test(tc, test_amk_loop_run_strategies_exhaust_without_repeats);
    tcase_add_test(tc, test_amk_loop_run_same_seed_same_sequence);
    tcase_add_test(tc, test_amk_loop_run_budget_respected);
    tcase_add_test(tc, test_amk_loop_run_time_limit_respected);
    tcase_add_test(tc, test_amk_loop_run_rejects_bad_options);
    tcase_add_test(tc, test_amk_loop_run_writes_rows_and_best_json);
    tcase_add_test(tc, test_amk_loop_run_resume_continues_numbering_and_incumbent);
    tcase_add_test(tc, test_amk_loop_run_resume_exhaustive_completes_the_space);
    tcase_add_test(tc, test_amk_loop_run_survives_sigkill_and_resumes);
    tcase_add_test(tc, test_amk_loop_run_peered_configs_need_no_clock_remeasure);
    tcase_add_test(tc, test_amk_loop_run_remeasure_decides_at_its_own_precision);
    tcase_add_test(tc, test_amk_loop_run_remeasure_gives_the_incumbent_the_window_clock);
    tcase_add_test(tc, test_amk_loop_run_remeasures_close_calls_interleaved);
    tcase_add_test(tc, test_amk_loop_run_rows_same_for_any_parallelism);

    tc = tcase(s, "internals", 30);
    tcase_add_test(tc, test_amk__sampler_next_serves_every_config_once);
    tcase_add_test(tc, test_amk__jump_moves_two_or_three_params);
    tcase_add_test(tc, test_amk_history_rule_compares_peered_rows_in_one_clock_state);
    tcase_add_test(tc, test_amk_history_rule_honours_kept_then_replays_keep_rule);
    tcase_add_test(tc, test_amk_history_rule_hands_back_no_measurably_slower_row);
    tcase_add_test(tc, test_amk_history_rule_follows_the_objective);
    return s;
}

int main(void)
{
    return amk_test_run(search_suite());
}
