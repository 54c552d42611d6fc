/* Check suite for search quality on recorded sweeps. Every <kernel>.tsv of the data directory
 * (space_defs/data, or $AMK_DATA_DIR) is replayed by the `sim` backend through the real loop,
 * for each kernel and shape it holds: over 20 seeds, the median number of trials the default
 * strategy needs before its incumbent is within 3% of the sweep's optimum must be at most 10%
 * of the sweep's configs (or the number of a documented shortfall, see `shortfalls`), and
 * below `random`'s median. New sweeps are picked up without code
 * changes. A sampled sweep (not every valid config recorded) is searched as exactly its
 * sample; a synthetic sampled sweep of the landscape fixture exercises that mode. */
#include "amk_search.h"
#include "amk_test.h"
#include "evaluator_int.h"

#include <check.h>
#include <dirent.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_SEEDS 20     /* $AMK_SWEEP_SEEDS (up to MAX_SEEDS) measures over more */
#define MAX_SEEDS 1000
#define NEAR_FRACTION 0.03  /* "found": the incumbent is within 3% of the sweep's optimum */
#define TRIAL_FRACTION 0.10 /* ... in at most 10% of the sweep's configs (median) */

static char tmpdir[256];

static void setup(void)
{
    amk_test_tmpdir_make_tmpfs(tmpdir, sizeof tmpdir, "sweeps"); /* every trial is fsynced */
}

static void teardown(void)
{
    amk_test_tmpdir_remove(tmpdir);
}

/* ---- small helpers ----------------------------------------------------------------------- */

typedef struct cfgvec {
    amk_config *v;
    size_t n, cap;
} cfgvec;

static int cfg_collect(const amk_config *c, void *ud)
{
    cfgvec *e = ud;
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 1024;
        e->v = realloc(e->v, e->cap * sizeof *e->v);
        ck_assert_ptr_nonnull(e->v);
    }
    e->v[e->n++] = *c;
    return 0;
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

/* ---- what a sweep file holds --------------------------------------------------------------- */

#define MAX_PAIRS 16

/* The kernel/shape pairs of a sweep with at least one measured ok row, and every config id
 * recorded for one of them (any status: a recorded failure is part of the universe too). */
typedef struct sweep_scan {
    char kernel[MAX_PAIRS][64];
    char shape[MAX_PAIRS][160];
    int n_pairs;
    const amk_spec *spec;                 /* second pass: collect ids of this pair */
    const char *want_kernel, *want_shape;
    amk_idset *ids;
    size_t ok_rows;                       /* measured ok rows of this pair */
} sweep_scan;

static int scan_pairs(const amk_row *r, void *ud)
{
    sweep_scan *s = ud;
    if (r->status != AMK_STATUS_OK || r->latency_kind != AMK_LAT_MEASURED ||
        !isfinite(r->latency_us))
        return 0;
    for (int i = 0; i < s->n_pairs; i++)
        if (strcmp(s->kernel[i], r->kernel) == 0 && strcmp(s->shape[i], r->shape) == 0)
            return 0;
    ck_assert_msg(s->n_pairs < MAX_PAIRS, "more than %d kernel/shape pairs", MAX_PAIRS);
    snprintf(s->kernel[s->n_pairs], sizeof s->kernel[0], "%s", r->kernel);
    snprintf(s->shape[s->n_pairs], sizeof s->shape[0], "%s", r->shape);
    s->n_pairs++;
    return 0;
}

static int scan_ids(const amk_row *r, void *ud)
{
    sweep_scan *s = ud;
    if (strcmp(r->kernel, s->want_kernel) != 0 || strcmp(r->shape, s->want_shape) != 0 ||
        !r->config_id[0])
        return 0;
    /* as the sim replays it: a row recorded before a param joined the spec is its default's
     * config; one the spec cannot read keeps its id (and counts as stale below) */
    char id[17];
    amk_row_config_id(s->spec, r, id);
    ck_assert_int_ge(amk_idset_add(s->ids, id), 0);
    if (r->status == AMK_STATUS_OK && r->latency_kind == AMK_LAT_MEASURED)
        s->ok_rows++;
    return 0;
}

/* ---- one kernel/shape of a sweep ----------------------------------------------------------- */

/* The search universe of a sweep at one kernel and shape: the valid configs it recorded.
 * Valid configs it did not record (a sampled sweep) are excluded from the loop. `near` holds
 * the configs the sim replays as ok within 3% of the best replayed latency. */
typedef struct universe {
    amk_evaluator *ev;
    amk_space *sp;
    size_t n_valid;          /* valid configs of the space */
    size_t n;                /* of them recorded: the universe */
    size_t n_ok;             /* of those, replayed as ok */
    size_t n_stale;          /* recorded ids that match no valid config */
    double opt_us;
    double spearman;         /* cost model's prediction vs replayed latency over the ok
                              * configs; NAN when the model predicts them all alike */
    amk_idset *near;
    size_t n_near;
    char (*excluded)[17];
    size_t n_excluded;
} universe;

/* Spearman rank correlation between the cost model's predicted_us and the latency of the
 * configs whose lat is finite: how well the model orders this sweep. NAN when fewer than
 * three configs are ok or the model predicts every one alike (no order at all). */
static double model_spearman(const amk_target *t, const amk_config *cfg, const double *lat,
                             size_t n)
{
    double *pred = calloc(n ? 4 * n : 1, sizeof *pred); /* pred, meas, 2n of work */
    ck_assert_ptr_nonnull(pred);
    double *meas = pred + n, *work = pred + 2 * n;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        amk_estimate e;
        if (!isfinite(lat[i]))
            continue;
        amk_diag d = {0};
        ck_assert_msg(amk_cost_estimate(&cfg[i], t, &e, &d) == AMK_OK, "%s", d.msg);
        pred[m] = e.predicted_us;
        meas[m++] = lat[i];
    }
    int spread = 0;
    for (size_t i = 1; i < m; i++)
        spread |= pred[i] != pred[0];
    double rho = m >= 3 && spread ? gsl_stats_spearman(pred, 1, meas, 1, m, work) : NAN;
    free(pred);
    return rho;
}

static void universe_build(universe *u, const amk_spec *spec, const amk_shape *sh,
                           const char *shape_text, const char *path)
{
    memset(u, 0, sizeof *u);
    char backend[4200];
    snprintf(backend, sizeof backend, "sim:%s", path);
    amk_backend_opts bo = {.sim_path = path};
    amk_diag d = {0};
    int rc = amk_evaluator_create(backend, &bo, spec, sh, &u->ev, &d);
    ck_assert_msg(rc == AMK_OK, "%s: %s", path, d.msg);
    rc = amk_space_create(spec, sh, &amk_evaluator_target(u->ev)->limits, &u->sp, &d);
    ck_assert_msg(rc == AMK_OK, "%s: space: %s", path, d.msg);

    sweep_scan s = {.spec = spec, .want_kernel = amk_spec_name(spec), .want_shape = shape_text};
    s.ids = amk_idset_create();
    ck_assert_ptr_nonnull(s.ids);
    ck_assert_int_eq(amk_tsv_read(path, scan_ids, &s, NULL, &d), AMK_OK);

    cfgvec all = {0};
    ck_assert_int_eq(amk_space_enumerate(u->sp, cfg_collect, &all), AMK_OK);
    u->n_valid = all.n;
    amk_config *in = calloc(all.n ? all.n : 1, sizeof *in);
    u->excluded = calloc(all.n ? all.n : 1, sizeof *u->excluded);
    ck_assert(in && u->excluded);
    for (size_t i = 0; i < all.n; i++) {
        char id[17];
        amk_config_id(&all.v[i], id);
        if (amk_idset_has(s.ids, id))
            in[u->n++] = all.v[i];
        else
            memcpy(u->excluded[u->n_excluded++], id, 17);
    }
    u->n_stale = amk_idset_size(s.ids) - u->n;

    /* What each recorded config replays as, through the same pipeline the loop uses. */
    enum { CHUNK = 256 };
    const amk_config *ptrs[CHUNK];
    amk_verdict *v = calloc(CHUNK, sizeof *v);
    double *lat = calloc(u->n ? u->n : 1, sizeof *lat);
    ck_assert(v && lat);
    u->opt_us = INFINITY;
    for (size_t i = 0; i < u->n; i += CHUNK) {
        size_t m = u->n - i < CHUNK ? u->n - i : CHUNK;
        for (size_t j = 0; j < m; j++)
            ptrs[j] = &in[i + j];
        ck_assert_int_eq(amk_evaluator_run(u->ev, u->sp, ptrs, m, NAN, v), AMK_OK);
        for (size_t j = 0; j < m; j++) {
            int ok = v[j].status == AMK_STATUS_OK && v[j].latency_kind == AMK_LAT_REPLAYED &&
                     isfinite(v[j].latency_us);
            lat[i + j] = ok ? v[j].latency_us : NAN;
            if (ok) {
                u->n_ok++;
                if (v[j].latency_us < u->opt_us)
                    u->opt_us = v[j].latency_us;
            }
        }
    }
    u->spearman = model_spearman(amk_evaluator_target(u->ev), in, lat, u->n);
    u->near = amk_idset_create();
    ck_assert_ptr_nonnull(u->near);
    for (size_t i = 0; i < u->n; i++)
        if (isfinite(lat[i]) && lat[i] <= u->opt_us * (1.0 + NEAR_FRACTION)) {
            char id[17];
            amk_config_id(&in[i], id);
            ck_assert_int_eq(amk_idset_add(u->near, id), 1);
            u->n_near++;
        }
    free(lat);
    free(v);
    free(in);
    free(all.v);
    amk_idset_free(s.ids);
}

static void universe_clear(universe *u)
{
    amk_idset_free(u->near);
    free(u->excluded);
    amk_space_free(u->sp);
    amk_evaluator_free(u->ev);
    memset(u, 0, sizeof *u);
}

/* Watches a run: the first trial after which the incumbent is a near-optimal config, and
 * every row that the sweep could not answer. */
typedef struct watch {
    const universe *u;
    int64_t calls, found_at, not_recorded;
} watch;

static void on_progress(const amk_loop_progress *p, void *ud)
{
    watch *w = ud;
    w->calls++;
    if (p->last->status == AMK_STATUS_NOT_RECORDED)
        w->not_recorded++;
    if (w->found_at || !p->best->has)
        return;
    char id[17];
    amk_config_id(&p->best->config, id);
    if (amk_idset_has(w->u->near, id)) {
        /* Only a replayed measurement can be an optimum found. */
        ck_assert_int_eq(p->best->kind, AMK_LAT_REPLAYED);
        ck_assert(p->best->latency_us <= w->u->opt_us * (1.0 + NEAR_FRACTION));
        w->found_at = w->calls;
    }
}

/* Trials until the incumbent is within 3% of the optimum (budget + 1 when never), with the
 * universe's other configs excluded; *not_recorded counts rows the sweep could not answer.
 * The budget is the universe (no repeats: enough to see every recorded config), or `cap`
 * when smaller: a run past the last trial the criterion can use decides nothing. */
static int64_t trials_to_near(const universe *u, const char *strategy, uint64_t seed,
                              int64_t cap, int64_t *not_recorded)
{
    char results[320];
    snprintf(results, sizeof results, "%s/results.tsv", tmpdir);
    unlink(results);
    watch w = {.u = u};
    amk_loop_opts o = {0};
    o.space = u->sp;
    o.ev = u->ev;
    o.strategy = strategy;
    o.strategy_opts.seed = seed;
    o.budget = cap > 0 && cap < (int64_t)u->n ? cap : (int64_t)u->n;
    o.results_path = results;
    o.min_gain = AMK_HISTORY_MIN_GAIN; /* `amk loop`'s */
    o.progress = on_progress;
    o.progress_ud = &w;
    o.exclude = (const char (*)[17])u->excluded;
    o.n_exclude = u->n_excluded;
    amk_loop_result res;
    amk_diag d = {0};
    int rc = amk_loop_run(&o, &res, &d);
    ck_assert_msg(rc == AMK_OK, "%s seed %llu: %s", strategy ? strategy : "default",
                  (unsigned long long)seed, d.msg);
    *not_recorded += w.not_recorded;
    return w.found_at ? w.found_at : o.budget + 1;
}

/* Sweeps where the default strategy cannot meet the 10% limit, each with the reason. For
 * these the test asserts instead that the default still beats random and that its median
 * (20 seeds) does not exceed the number recorded here: a regression fails, an improvement
 * prints a request to tighten it. Listed in space_defs/data/README.md too. */
static const struct shortfall {
    const char *kernel, *shape;
    double max_median;
    const char *reason;
} shortfalls[] = {
    /* None at present. The quant_per_tensor sweep of 39 configs was one (the 4th of 4
     * near-optimal configs sat beyond 10%); its 146-config space since meets the limit. */
    {NULL, NULL, 0, NULL},
};

/* How well the cost model must at least order a sweep (Spearman rank correlation of its
 * prediction and the measured latency), for the sweeps whose specs declare the memory terms
 * (SPEC.md): a change to the model or to those terms that loses this order fails. Measured
 * 2026-11-22 on the H100 sweeps: rmsnorm +0.779, softmax +0.663, gemv +0.830 (all-alike
 * bytes/bandwidth before: none, none, +0.550). */
static const struct model_floor {
    const char *kernel, *shape;
    double min_spearman;
} model_floors[] = {
    {"rmsnorm", "M=4096,N=4096,dtype=bf16", 0.70},
    {"softmax", "M=32768,N=4096,dtype=f16", 0.60},
    {"gemv", "N=14336,K=4096,dtype=bf16", 0.75},
    /* 2026-11-24, 2001 sampled configs: +0.715 with L2-discounted re-reads and the 2-stage
     * round trips (+0.541 with every tile re-read counted as HBM traffic). */
    {"gemm_hopper", "M=4096,N=4096,K=4096,dtype=bf16", 0.65},
};

static const struct shortfall *shortfall_find(const char *kernel, const char *shape)
{
    for (size_t i = 0; i < sizeof shortfalls / sizeof shortfalls[0]; i++)
        if (shortfalls[i].kernel && strcmp(shortfalls[i].kernel, kernel) == 0 &&
            strcmp(shortfalls[i].shape, shape) == 0)
            return &shortfalls[i];
    return NULL;
}

typedef struct verdict_line {
    double med_default, med_random, limit;
    int64_t not_recorded;
    int pass;
} verdict_line;

/* Runs the criterion on one kernel/shape of a sweep and prints its line. */
static verdict_line check_pair(const amk_spec *spec, const char *shape_text, const char *path)
{
    amk_shape sh;
    amk_diag d = {0};
    ck_assert_msg(amk_shape_parse(spec, shape_text, &sh, &d) == AMK_OK, "%s: shape %s: %s",
                  path, shape_text, d.msg);
    universe u;
    universe_build(&u, spec, &sh, shape_text, path);
    ck_assert_msg(u.n_stale == 0, "%s: %zu recorded config ids of %s %s match no valid "
                  "config of the current spec: re-record the sweep", path, u.n_stale,
                  amk_spec_name(spec), shape_text);
    ck_assert_msg(u.n_ok > 0, "%s: nothing replays as ok for %s", path, shape_text);

    static int64_t dflt[MAX_SEEDS], rnd[MAX_SEEDS];
    const char *env = getenv("AMK_SWEEP_SEEDS");
    int n_seeds = env && atoi(env) > 0 ? atoi(env) : N_SEEDS;
    if (n_seeds > MAX_SEEDS)
        n_seeds = MAX_SEEDS;
    verdict_line L = {0};
    L.limit = TRIAL_FRACTION * (double)u.n;
    /* The default's runs stop past what its median is held to (the limit, or a shortfall's
     * recorded median): a median within it is the same, one beyond it fails either way. The
     * default strategy's surrogate made full-universe runs take minutes (4 under ASan). */
    const struct shortfall *sf = shortfall_find(amk_spec_name(spec), shape_text);
    int64_t cap = (int64_t)ceil(sf && sf->max_median > L.limit ? sf->max_median : L.limit) + 1;
    for (int s = 0; s < n_seeds; s++) {
        dflt[s] = trials_to_near(&u, NULL, 1 + (uint64_t)s, cap, &L.not_recorded);
        rnd[s] = trials_to_near(&u, "random", 1 + (uint64_t)s, 0, &L.not_recorded);
    }
    L.med_default = median_i64(dflt, n_seeds);
    L.med_random = median_i64(rnd, n_seeds);
    /* Beating random means fewer trials, except where random needs one (half the sweep is
     * within 3%): nothing can do better than that, and the default must match it. */
    L.pass = L.med_default <= (sf ? sf->max_median : L.limit) &&
             (L.med_default < L.med_random || (L.med_default <= 1 && L.med_random <= 1));
    for (size_t i = 0; i < sizeof model_floors / sizeof model_floors[0]; i++)
        if (strcmp(model_floors[i].kernel, amk_spec_name(spec)) == 0 &&
            strcmp(model_floors[i].shape, shape_text) == 0 &&
            !(u.spearman >= model_floors[i].min_spearman)) {
            fprintf(stderr, "sweeps: %s %s: the cost model's Spearman %.3f is below %.2f\n",
                    amk_spec_name(spec), shape_text, u.spearman, model_floors[i].min_spearman);
            L.pass = 0;
        }
    if (sf)
        fprintf(stderr, "sweeps: %s %s is a recorded shortfall (default median at most %.1f, "
                "not %.1f: %s)%s\n", amk_spec_name(spec), shape_text, sf->max_median, L.limit,
                sf->reason, L.med_default < sf->max_median ? ": it improved, tighten the "
                "number in tests/check_sweeps.c and space_defs/data/README.md" : "");
    char kind[96];
    if (u.n_excluded)
        snprintf(kind, sizeof kind, "sampled %zu of %zu valid", u.n, u.n_valid);
    else
        snprintf(kind, sizeof kind, "exhaustive");
    char rho[32];
    if (isfinite(u.spearman))
        snprintf(rho, sizeof rho, "%+.3f", u.spearman);
    else
        snprintf(rho, sizeof rho, "n/a (all alike)");
    fprintf(stderr, "sweeps: %-16s %-28s universe %5zu (%s, %zu ok), optimum %.4g us, %zu "
            "within 3%%; model spearman %s; median trials to within 3%% over %d seeds: %s "
            "%.1f, random %.1f; limit %.1f (10%%): %s\n", amk_spec_name(spec), shape_text,
            u.n, kind, u.n_ok, u.opt_us, u.n_near, rho, n_seeds, amk_strategies[0]->name,
            L.med_default, L.med_random,
            L.limit, !L.pass ? "FAIL" : sf && L.med_default > L.limit ? "MISSED (recorded "
            "shortfall)" : "pass");
    universe_clear(&u);
    return L;
}

/* Every kernel/shape pair of every sweep in dir; returns how many were checked. */
static int check_dir(const char *dir)
{
    amk_registry *reg = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_registry_create(&reg, &d) == AMK_OK, "%s", d.msg);
    DIR *dh = opendir(dir);
    ck_assert_msg(dh != NULL, "cannot open the sweep directory %s", dir);
    char failures[2048] = "";
    int checked = 0;
    struct dirent *e;
    while ((e = readdir(dh))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".tsv") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        sweep_scan s = {0};
        ck_assert_msg(amk_tsv_read(path, scan_pairs, &s, NULL, &d) == AMK_OK, "%s: %s", path,
                      d.msg);
        ck_assert_msg(s.n_pairs > 0, "%s: no measured ok row", path);
        for (int i = 0; i < s.n_pairs; i++) {
            const amk_spec *spec = amk_registry_find(reg, s.kernel[i]);
            ck_assert_msg(spec != NULL, "%s: unknown kernel %s", path, s.kernel[i]);
            verdict_line L = check_pair(spec, s.shape[i], path);
            checked++;
            ck_assert_msg(L.not_recorded == 0, "%s: %s %s: %lld rows not recorded", path,
                          s.kernel[i], s.shape[i], (long long)L.not_recorded);
            if (!L.pass) {
                size_t fl = strlen(failures);
                snprintf(failures + fl, sizeof failures - fl, "%s %s %s: default median %.1f "
                         "(limit %.1f), random median %.1f", fl ? ";" : "", s.kernel[i],
                         s.shape[i], L.med_default, L.limit, L.med_random);
            }
        }
    }
    closedir(dh);
    amk_registry_free(reg);
    ck_assert_msg(failures[0] == '\0', "search quality on recorded sweeps:%s", failures);
    return checked;
}

START_TEST(test_amk_loop_run_default_strategy_meets_criterion_on_every_sweep)
{
    const char *env = getenv("AMK_DATA_DIR");
    const char *dir = env && *env ? env : AMK_SOURCE_DATA_DIR;
    int n = check_dir(dir);
    ck_assert_msg(n > 0, "no sweep in %s", dir);
}
END_TEST

/* ---- sampled mode, on a synthetic sweep of the landscape fixture ---------------------------- */

/* Records about a fifth of the landscape's valid configs (by config id hash) as measured,
 * with the cost model's prediction as latency: a stand-in for a sampled GPU sweep. Returns
 * the number of configs recorded. */
static size_t record_sampled(const amk_spec *spec, const amk_shape *sh, const char *path)
{
    amk_backend_opts bo = {.target = "h100"};
    amk_evaluator *model = NULL;
    amk_space *sp = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_evaluator_create("model", &bo, spec, sh, &model, &d) == AMK_OK, "%s",
                  d.msg);
    ck_assert_int_eq(amk_space_create(spec, sh, &amk_evaluator_target(model)->limits, &sp, &d),
                     AMK_OK);
    cfgvec all = {0};
    ck_assert_int_eq(amk_space_enumerate(sp, cfg_collect, &all), AMK_OK);
    char shape[160];
    amk_shape_format(spec, sh, shape, sizeof shape);
    amk_row *rows = calloc(all.n, sizeof *rows);
    ck_assert_ptr_nonnull(rows);
    size_t n = 0;
    for (size_t i = 0; i < all.n; i++) {
        char id[17];
        amk_config_id(&all.v[i], id);
        if (amk_hash64(id, 16) % 5 != 0)
            continue;
        const amk_config *pc = &all.v[i];
        amk_verdict v;
        ck_assert_int_eq(amk_evaluator_run(model, sp, &pc, 1, NAN, &v), AMK_OK);
        ck_assert_int_eq(v.status, AMK_STATUS_OK);
        v.latency_kind = AMK_LAT_MEASURED; /* synthetic: recorded as if measured */
        v.spread = 0.01;
        ck_assert_int_eq(amk_verdict_to_row(&v, pc, (int64_t)n + 1, shape, "random",
                                            "NVIDIA H100 80GB HBM3", 0, &rows[n], &d),
                         AMK_OK);
        n++;
    }
    amk_test_append_rows(path, rows, n);
    free(rows);
    free(all.v);
    amk_space_free(sp);
    amk_evaluator_free(model);
    return n;
}

START_TEST(test_amk_loop_run_sampled_sweep_searches_only_its_sample)
{
    amk_spec *spec = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_spec_load(AMK_TEST_FIXTURES "/specs/landscape", &spec, &d) == AMK_OK,
                  "%s", d.msg);
    amk_shape sh;
    amk_spec_shape(spec, 0, &sh);
    char path[400], shape[160];
    snprintf(path, sizeof path, "%s/landscape.tsv", tmpdir);
    amk_shape_format(spec, &sh, shape, sizeof shape);
    size_t recorded = record_sampled(spec, &sh, path);

    universe u;
    universe_build(&u, spec, &sh, shape, path);
    ck_assert_int_eq(u.n, recorded);
    ck_assert_int_eq(u.n_ok, recorded);
    ck_assert_int_eq(u.n + u.n_excluded, u.n_valid);
    ck_assert_int_gt(u.n_excluded, 3 * recorded); /* really a sample */

    /* Without the exclusion the search wastes trials on configs the sweep cannot answer;
     * with it, it never proposes one and still covers the whole sample. */
    char results[320];
    snprintf(results, sizeof results, "%s/results.tsv", tmpdir);
    for (int excl = 0; excl < 2; excl++) {
        unlink(results);
        watch w = {.u = &u};
        amk_loop_opts o = {.space = u.sp, .ev = u.ev, .strategy = "random",
                           .budget = (int64_t)u.n, .results_path = results,
                           .min_gain = AMK_HISTORY_MIN_GAIN, .progress = on_progress, .progress_ud = &w};
        o.strategy_opts.seed = 7;
        if (excl) {
            o.exclude = (const char (*)[17])u.excluded;
            o.n_exclude = u.n_excluded;
        }
        amk_loop_result res;
        ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
        if (!excl) {
            ck_assert_int_gt(w.not_recorded, 0);
            continue;
        }
        ck_assert_int_eq(w.not_recorded, 0);
        ck_assert_int_eq(res.trials, (int64_t)u.n);
        ck_assert_int_gt(w.found_at, 0);
        /* One more proposal would have to leave the sample: the space reads exhausted. */
        o.budget = 0;
        o.resume = 1;
        ck_assert_msg(amk_loop_run(&o, &res, &d) == AMK_OK, "%s", d.msg);
        ck_assert_int_eq(res.trials, 0);
        ck_assert_int_eq(res.exhausted, 1);
    }
    universe_clear(&u);

    /* The criterion itself, as for a recorded sweep. */
    verdict_line L = check_pair(spec, shape, path);
    ck_assert_int_eq(L.not_recorded, 0);
    ck_assert_msg(L.pass, "sampled landscape: default median %.1f (limit %.1f), random %.1f",
                  L.med_default, L.limit, L.med_random);
    amk_spec_free(spec);
}
END_TEST

START_TEST(test_amk_loop_run_exclude_without_list_is_rejected)
{
    amk_loop_opts o = {.space = (const amk_space *)1, .ev = (amk_evaluator *)1,
                       .results_path = "unused", .n_exclude = 3};
    amk_loop_result res;
    amk_diag d = {0};
    ck_assert_int_eq(amk_loop_run(&o, &res, &d), AMK_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "excluded"));
}
END_TEST

static Suite *sweeps_suite(void)
{
    Suite *s = suite_create("sweeps");
    TCase *tc = tcase_create("amk_loop_run");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_amk_loop_run_exclude_without_list_is_rejected);
    tcase_add_test(tc, test_amk_loop_run_sampled_sweep_searches_only_its_sample);
    tcase_add_test(tc, test_amk_loop_run_default_strategy_meets_criterion_on_every_sweep);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return amk_test_run(sweeps_suite());
}
