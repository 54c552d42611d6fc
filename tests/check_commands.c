/* Check suite for the library calls behind the CLI commands (one call each): amk_tune and
 * amk_tune_groups (loop), amk_propose (propose), amk_evaluate_one and amk_trial_log_*
 * (evaluate), amk_space_size_on (space), amk_compile_plan_build and amk_compile_plan_*
 * (compile, planning only: no compiler runs here) and amk_report_defaults (report). They
 * run on the landscape fixture through the `model` backend; the assertions compare with
 * what can be computed independently (an enumeration, the rows written, the keep rule) and
 * can fail. */
#include "amk_search.h"
#include "amk_test.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    amk_spec *spec;
    amk_shape shape;
    amk_evaluator *ev;
    const amk_target *target;
    char dir[256], results[320], best[320];
} fixture;

static fixture F;

static void setup(void)
{
    amk_diag d = {0};
    memset(&F, 0, sizeof F);
    ck_assert_msg(amk_spec_load(AMK_TEST_FIXTURES "/specs/landscape", &F.spec, &d) == AMK_OK,
                  "%s", d.msg);
    amk_spec_shape(F.spec, 0, &F.shape);
    amk_backend_opts bo = {.target = "h100"};
    ck_assert_msg(amk_evaluator_create("model", &bo, F.spec, &F.shape, &F.ev, &d) == AMK_OK,
                  "%s", d.msg);
    F.target = amk_evaluator_target(F.ev);
    amk_test_tmpdir_make_tmpfs(F.dir, sizeof F.dir, "commands");
    snprintf(F.results, sizeof F.results, "%s/results.tsv", F.dir);
    snprintf(F.best, sizeof F.best, "%s/best.json", F.dir);
}

static void teardown(void)
{
    amk_test_tmpdir_remove(F.dir);
    amk_evaluator_free(F.ev);
    amk_spec_free(F.spec);
    memset(&F, 0, sizeof F);
}

static amk_tune_opts tune_opts(int64_t budget, int resume)
{
    amk_tune_opts o = {.spec = F.spec, .shape = F.shape, .target = F.target, .ev = F.ev,
                       .backend = "model", .strategy = "hillclimb", .seed = 3,
                       .budget = budget, .min_gain = 0.01, .results_path = F.results,
                       .best_path = F.best, .resume = resume};
    return o;
}

typedef struct notes {
    int n, warnings;
    char last[1024];
} notes;

static void take_note(const char *msg, int warning, void *ud)
{
    notes *n = ud;
    n->n++;
    n->warnings += warning;
    snprintf(n->last, sizeof n->last, "%s", msg);
}

/* The rows of F.results, in file order. */
typedef struct rows {
    amk_row v[512];
    size_t n;
} rows;

static int collect(const amk_row *r, void *ud)
{
    rows *rs = ud;
    if (rs->n < 512)
        rs->v[rs->n++] = *r;
    return 0;
}

static void read_rows(rows *rs)
{
    amk_diag d = {0};
    rs->n = 0;
    ck_assert_msg(amk_tsv_read(F.results, collect, rs, NULL, &d) == AMK_OK, "%s", d.msg);
}

/* The config ids of an enumeration, in its order. */
typedef struct id_walk {
    char (*ids)[17];
    size_t k;
} id_walk;

static int test_collect_ids(const amk_config *c, void *ud)
{
    id_walk *w = ud;
    amk_config_id(c, w->ids[w->k++]);
    return 0;
}

/* ---- amk_tune --------------------------------------------------------------------------- */

START_TEST(test_amk_tune_exclude_never_proposes_the_listed_configs)
{
    /* Exclude every valid config but a few: an exhaustive search may only log those. */
    amk_space *sp = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_space_create(F.spec, &F.shape, &F.target->limits, &sp, &d) == AMK_OK,
                  "%s", d.msg);
    int64_t n = amk_space_count(sp);
    ck_assert(n > 8);
    char(*ids)[17] = calloc((size_t)n, sizeof *ids);
    ck_assert_ptr_nonnull(ids);
    id_walk w = {ids, 0};
    ck_assert_int_eq(amk_space_enumerate(sp, test_collect_ids, &w), AMK_OK);
    size_t k = w.k;
    ck_assert_uint_eq(k, (size_t)n);
    amk_tune_opts o = tune_opts(0, 0);
    o.strategy = "exhaustive";
    o.exclude = (const char(*)[17])(ids + 3); /* the first three stay */
    o.n_exclude = k - 3;
    amk_tune_result r;
    ck_assert_msg(amk_tune(&o, &r, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(r.loop.trials, 3);
    rows rs;
    read_rows(&rs);
    ck_assert_uint_eq(rs.n, 3);
    for (size_t i = 0; i < rs.n; i++) {
        int kept = 0;
        for (size_t j = 0; j < 3; j++)
            kept |= !strcmp(rs.v[i].config_id, ids[j]);
        ck_assert_msg(kept, "row %zu: %s was excluded", i, rs.v[i].config_id);
    }
    /* A count without a list is refused before anything runs. */
    o.exclude = NULL;
    ck_assert_int_eq(amk_tune(&o, &r, &d), AMK_EINVAL);
    free(ids);
    amk_space_free(sp);
}
END_TEST

START_TEST(test_amk_err_exit_code_matches_the_cli_categories)
{
    ck_assert_int_eq(amk_err_exit_code(AMK_OK), 0);
    ck_assert_int_eq(amk_err_exit_code(AMK_ENOENT), 2);
    ck_assert_int_eq(amk_err_exit_code(AMK_ESPEC), 2);
    ck_assert_int_eq(amk_err_exit_code(AMK_ETSV), 3);
    ck_assert_int_eq(amk_err_exit_code(AMK_EIO), 3);
    ck_assert_int_eq(amk_err_exit_code(AMK_ENODEV), 4);
    ck_assert_int_eq(amk_err_exit_code(AMK_EUNSUPPORTED), 4);
    ck_assert_int_eq(amk_err_exit_code(AMK_ENOMEM), 5);
    ck_assert_int_eq(amk_err_exit_code(AMK_EWORKER), 5);
    ck_assert_int_eq(amk_err_exit_code(-999), 2);
}
END_TEST

START_TEST(test_amk_tune_runs_logs_and_resumes)
{
    amk_tune_opts o = tune_opts(20, 0);
    notes nt = {0};
    o.note = take_note;
    o.ud = &nt;
    amk_tune_result r;
    amk_diag d = {0};
    ck_assert_msg(amk_tune(&o, &r, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(r.failed_on, AMK_TUNE_DONE);
    ck_assert_str_eq(r.backend, "model");
    ck_assert_str_eq(r.device, amk_evaluator_device(F.ev));
    ck_assert_int_eq(r.loop.trials, 20);
    ck_assert(r.loop.best.has);
    ck_assert_int_eq(nt.n, 0); /* a fresh file: nothing to point out */
    rows rs;
    read_rows(&rs);
    ck_assert_uint_eq(rs.n, 20);
    /* The best is the fastest ok row within the keep margin, and it is in the file. */
    double fastest = INFINITY;
    int found = 0;
    for (size_t i = 0; i < rs.n; i++) {
        if (rs.v[i].status == AMK_STATUS_OK && rs.v[i].latency_us < fastest)
            fastest = rs.v[i].latency_us;
        found |= rs.v[i].trial == r.loop.best.trial;
    }
    ck_assert(found);
    ck_assert(r.loop.best.latency_us <= fastest * 1.0101);
    ck_assert(amk_fs_exists(F.best));
    /* The default config was not measured: vs_default says why instead of a number. */
    ck_assert(isnan(r.vs_default.speedup));
    ck_assert(r.vs_default.reason[0]);

    /* A fresh run over the same search is pointed out and appends after the old rows. */
    ck_assert_msg(amk_tune(&o, &r, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(nt.n, 1);
    ck_assert_int_eq(nt.warnings, 0);
    ck_assert_ptr_nonnull(strstr(nt.last, "already holds 20 trial(s)"));
    ck_assert_int_eq(r.loop.first_trial, 21);

    /* --resume continues the numbering and the incumbent. */
    amk_tune_opts ro = tune_opts(5, 1);
    amk_tune_result rr;
    ck_assert_msg(amk_tune(&ro, &rr, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(rr.loop.first_trial, 41);
    ck_assert_int_eq(rr.loop.trials, 5);
    ck_assert(rr.loop.best.latency_us <= r.loop.best.latency_us * 1.0101);
}
END_TEST

START_TEST(test_amk_tune_refuses_a_foreign_file_before_appending)
{
    amk_test_write_file(F.results, "this is not a results file\n");
    amk_tune_opts o = tune_opts(5, 0);
    amk_tune_result r;
    amk_diag d = {0};
    int e = amk_tune(&o, &r, &d);
    ck_assert_int_ne(e, AMK_OK);
    ck_assert_int_eq(r.failed_on, AMK_TUNE_ON_RESULTS);
    ck_assert_ptr_nonnull(strstr(d.msg, F.results));
    char *text = NULL;
    ck_assert_int_eq(amk_fs_read_all(F.results, &text, NULL, &d), AMK_OK);
    ck_assert_str_eq(text, "this is not a results file\n"); /* nothing appended */
    free(text);
    ck_assert(!amk_fs_exists(F.best));
}
END_TEST

/* The landscape spec with restriction `old` replaced by `new`, loaded from a copy in F.dir. */
static amk_spec *landscape_with(const char *old, const char *new_restriction)
{
    char src[512], dst[512], dir[384];
    char *text = NULL;
    amk_diag d = {0};
    snprintf(dir, sizeof dir, "%s/landscape", F.dir);
    ck_assert_int_eq(amk_fs_mkdir_p(dir, &d), AMK_OK);
    const char *files[2] = {"spec.json", "landscape.hip"};
    for (int i = 0; i < 2; i++) {
        snprintf(src, sizeof src, "%s/specs/landscape/%s", AMK_TEST_FIXTURES, files[i]);
        snprintf(dst, sizeof dst, "%s/%s", dir, files[i]);
        ck_assert_int_eq(amk_fs_read_all(src, &text, NULL, &d), AMK_OK);
        char *at = i == 0 ? strstr(text, old) : NULL;
        ck_assert(i == 1 || at != NULL);
        if (at) {
            char buf[8192];
            snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - text), text, new_restriction,
                     at + strlen(old));
            amk_test_write_file(dst, buf);
        } else {
            amk_test_write_file(dst, text);
        }
        free(text);
    }
    amk_spec *s = NULL;
    ck_assert_msg(amk_spec_load(dir, &s, &d) == AMK_OK, "%s", d.msg);
    return s;
}

START_TEST(test_amk_tune_empty_space_fails_on_setup_and_writes_nothing)
{
    amk_spec *s = landscape_with("X + Y + Z <= 30", "X + Y + Z >= 40");
    amk_tune_opts o = tune_opts(5, 0);
    o.spec = s;
    amk_tune_result r;
    amk_diag d = {0};
    int e = amk_tune(&o, &r, &d);
    ck_assert_int_eq(e, AMK_EEMPTY);
    ck_assert_int_eq(r.failed_on, AMK_TUNE_ON_SETUP);
    ck_assert_msg(strstr(d.msg, "landscape") != NULL, "%s", d.msg);
    rows rs;
    rs.n = 0;
    if (amk_fs_exists(F.results))
        read_rows(&rs);
    ck_assert_uint_eq(rs.n, 0);
    ck_assert(!amk_fs_exists(F.best));
    amk_spec_free(s);
}
END_TEST

/* ---- amk_tune_groups -------------------------------------------------------------------- */

typedef struct groups_seen {
    int n, ndevices;
    amk_tune_result r;
} groups_seen;

static void take_group(const amk_tune_result *r, const amk_device_group *g, void *ud)
{
    groups_seen *gs = ud;
    gs->n++;
    gs->ndevices = g->n;
    gs->r = *r;
}

START_TEST(test_amk_tune_groups_without_a_best_path_writes_no_best_file)
{
    amk_tune_opts o = tune_opts(5, 0);
    o.ev = NULL;
    o.best_path = NULL;
    o.done = take_group;
    groups_seen gs = {0};
    o.ud = &gs;
    amk_tune_result r;
    amk_diag d = {0};
    char cwd_null[512];
    ck_assert_msg(amk_tune_groups(&o, &r, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(gs.n, 1);
    ck_assert_str_eq(gs.r.best_file, "");
    ck_assert(!amk_fs_exists(F.best));
    ck_assert(!amk_fs_exists("(null)")); /* once, a NULL path was printed as a file name */
    snprintf(cwd_null, sizeof cwd_null, "%s/(null)", F.dir);
    ck_assert(!amk_fs_exists(cwd_null));
    rows rs;
    read_rows(&rs);
    ck_assert_uint_eq(rs.n, 5);
}
END_TEST

START_TEST(test_amk_tune_groups_runs_one_search_as_amk_tune_does)
{
    amk_tune_opts o = tune_opts(20, 0);
    o.ev = NULL; /* it creates its own, from the backend's name and the options */
    o.done = take_group;
    groups_seen gs = {0};
    o.ud = &gs;
    amk_tune_result r;
    amk_diag d = {0};
    ck_assert_msg(amk_tune_groups(&o, &r, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(r.failed_on, AMK_TUNE_DONE);
    ck_assert_int_eq(r.ngroups, 0); /* the model backend has no devices to group */
    ck_assert_int_eq(gs.n, 1);
    ck_assert_int_eq(gs.ndevices, 0);
    ck_assert_str_eq(gs.r.best_file, F.best); /* one model: the best file as named */
    ck_assert(amk_fs_exists(F.best));

    /* The same search through amk_tune, on an evaluator made with the same options. */
    char results2[384], best2[384];
    snprintf(results2, sizeof results2, "%s/results2.tsv", F.dir);
    snprintf(best2, sizeof best2, "%s/best2.json", F.dir);
    amk_backend_opts bo = {.target = F.target->key, .seed = o.seed};
    amk_evaluator *ev = NULL;
    ck_assert_msg(amk_evaluator_create("model", &bo, F.spec, &F.shape, &ev, &d) == AMK_OK,
                  "%s", d.msg);
    amk_tune_opts t = tune_opts(20, 0);
    t.ev = ev;
    t.results_path = results2;
    t.best_path = best2;
    amk_tune_result tr;
    ck_assert_msg(amk_tune(&t, &tr, &d) == AMK_OK, "%s", d.msg);
    amk_evaluator_free(ev);
    ck_assert_str_eq(gs.r.device, tr.device);
    ck_assert_int_eq(gs.r.loop.trials, tr.loop.trials);
    ck_assert(gs.r.loop.best.has && tr.loop.best.has);
    char id1[17], id2[17];
    amk_config_id(&gs.r.loop.best.config, id1);
    amk_config_id(&tr.loop.best.config, id2);
    ck_assert_str_eq(id1, id2);
    ck_assert_int_eq(gs.r.loop.best.trial, tr.loop.best.trial);
    ck_assert(gs.r.loop.best.latency_us == tr.loop.best.latency_us);
}
END_TEST

START_TEST(test_amk_tune_groups_backend_failure_is_named_and_nothing_runs)
{
    char missing[384];
    snprintf(missing, sizeof missing, "sim:%s/no-such-sweep.tsv", F.dir);
    amk_tune_opts o = tune_opts(5, 0);
    o.ev = NULL;
    o.backend = missing;
    o.done = take_group;
    groups_seen gs = {0};
    o.ud = &gs;
    amk_tune_result r;
    amk_diag d = {0};
    ck_assert_int_ne(amk_tune_groups(&o, &r, &d), AMK_OK);
    ck_assert_int_eq(r.failed_on, AMK_TUNE_ON_BACKEND);
    ck_assert(d.msg[0]);
    ck_assert_int_eq(gs.n, 0);
    ck_assert(!amk_fs_exists(F.results));
    ck_assert(!amk_fs_exists(F.best));
}
END_TEST

/* ---- amk_propose ---------------------------------------------------------------------- */

START_TEST(test_amk_propose_default_then_unseen_with_incumbent)
{
    const amk_strategy_type *st = amk_strategy_find("hillclimb");
    amk_propose_opts po = {F.spec, F.shape, F.target, st, 1, F.results, AMK_OBJ_TIME};
    amk_proposal_result p;
    amk_diag d = {0};
    /* No file yet: the default config, and the file is said to be missing. */
    ck_assert_msg(amk_propose(&po, &p, &d) == AMK_OK, "%s", d.msg);
    ck_assert(p.no_file);
    ck_assert_str_eq(p.source, "default");
    ck_assert(!p.has_incumbent);
    amk_config def;
    amk_config_default(F.spec, &F.shape, &def);
    ck_assert(amk_config_equal(&p.config, &def));

    /* After a loop: a config not recorded yet, and the loop's best as the incumbent. */
    amk_tune_opts o = tune_opts(25, 0);
    amk_tune_result r;
    ck_assert_msg(amk_tune(&o, &r, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_propose(&po, &p, &d) == AMK_OK, "%s", d.msg);
    ck_assert(!p.no_file);
    ck_assert_uint_eq(p.history_rows, 25);
    ck_assert(p.has_incumbent);
    ck_assert_int_eq(p.incumbent.trial, r.loop.best.trial);
    ck_assert(amk_config_equal(&p.incumbent_config, &r.loop.best.config));
    char id[17];
    amk_config_id(&p.config, id);
    rows rs;
    read_rows(&rs);
    for (size_t i = 0; i < rs.n; i++)
        ck_assert_str_ne(rs.v[i].config_id, id);
    ck_assert(!p.exhausted);
}
END_TEST

/* A resumed loop and amk_propose give the strategy the same view of a file (every row
 * observed), so the next config the loop tries is the one propose names. */
START_TEST(test_amk_propose_names_what_a_resumed_loop_tries_next)
{
    amk_tune_opts o = tune_opts(25, 0);
    amk_tune_result r;
    amk_diag d = {0};
    ck_assert_msg(amk_tune(&o, &r, &d) == AMK_OK, "%s", d.msg);
    amk_propose_opts po = {F.spec, F.shape, F.target, amk_strategy_find("hillclimb"), o.seed,
                           F.results, AMK_OBJ_TIME};
    amk_proposal_result p;
    ck_assert_msg(amk_propose(&po, &p, &d) == AMK_OK, "%s", d.msg);
    char id[17];
    amk_config_id(&p.config, id);
    o = tune_opts(1, 1);
    ck_assert_msg(amk_tune(&o, &r, &d) == AMK_OK, "%s", d.msg);
    rows rs;
    read_rows(&rs);
    ck_assert_uint_eq(rs.n, 26);
    ck_assert_str_eq(rs.v[25].config_id, id);
    ck_assert_str_eq(rs.v[25].source, p.source);
}
END_TEST

START_TEST(test_amk_propose_bad_file_fails_on_results)
{
    amk_test_write_file(F.results, "not\ta\tresults\tfile\n");
    amk_propose_opts po = {F.spec, F.shape, F.target, amk_strategy_find("random"), 1,
                           F.results, AMK_OBJ_TIME};
    amk_proposal_result p;
    amk_diag d = {0};
    ck_assert_int_ne(amk_propose(&po, &p, &d), AMK_OK);
    ck_assert_int_eq(p.failed_on, AMK_PROPOSE_ON_RESULTS);
}
END_TEST

/* ---- amk_trial_log --------------------------------------------------------------------- */

START_TEST(test_amk_trial_log_numbers_and_keeps_by_the_history_rule)
{
    amk_tune_opts o = tune_opts(10, 0);
    amk_tune_result r;
    amk_diag d = {0};
    ck_assert_msg(amk_tune(&o, &r, &d) == AMK_OK, "%s", d.msg);
    const char *dev = amk_evaluator_device(F.ev);
    /* Another config than the incumbent (the keep rule never replaces a config by itself). */
    rows rs;
    read_rows(&rs);
    amk_config other;
    int have_other = 0;
    for (size_t i = 0; i < rs.n && !have_other; i++)
        have_other = rs.v[i].trial != r.loop.best.trial &&
                     amk_config_from_params_json(F.spec, &F.shape, rs.v[i].params, &other,
                                                 NULL) == AMK_OK &&
                     !amk_config_equal(&other, &r.loop.best.config);
    ck_assert(have_other);
    /* Judged against the file's best each time: `other` 5% faster than the loop's best is
     * kept; the loop's best config 2% slower than that new best is not; 5% faster than it,
     * it is kept again. Numbers continue the file. */
    const double b = r.loop.best.latency_us;
    const amk_config *cfg[3] = {&other, &r.loop.best.config, &r.loop.best.config};
    const double lat[3] = {b * 0.95, b * 0.95 * 1.02, b * 0.95 * 0.95};
    const int want_kept[3] = {1, 0, 1};
    for (int k = 0; k < 3; k++) {
        amk_trial_log *lg = NULL;
        ck_assert_msg(amk_trial_log_open(F.results, cfg[k], dev, AMK_OBJ_TIME, &lg, &d) == AMK_OK, "%s",
                      d.msg);
        amk_verdict v;
        amk_verdict_init(&v);
        v.status = AMK_STATUS_OK;
        v.valid = v.correct = 1;
        v.latency_us = lat[k];
        v.latency_kind = AMK_LAT_PREDICTED;
        v.spread = 0;
        amk_row row;
        ck_assert_msg(amk_trial_log_append(lg, cfg[k], dev, &v, &row, &d) == AMK_OK, "%s",
                      d.msg);
        amk_trial_log_close(lg);
        ck_assert_int_eq(row.trial, 11 + k);
        ck_assert_str_eq(row.source, "user");
        ck_assert_int_eq(row.kept, want_kept[k]);
    }
    /* A file that is not a results file is refused at open, before any evaluation. */
    amk_test_write_file(F.results, "garbage\n");
    amk_trial_log *lg = NULL;
    ck_assert_int_ne(amk_trial_log_open(F.results, &r.loop.best.config, dev, AMK_OBJ_TIME, &lg,
                                       &d), AMK_OK);
    ck_assert_ptr_null(lg);
    ck_assert_ptr_nonnull(strstr(d.msg, F.results));
}
END_TEST

/* ---- amk_evaluate_one ------------------------------------------------------------------ */

START_TEST(test_amk_evaluate_one_logs_a_row_and_refuses_a_foreign_file_first)
{
    amk_config def;
    amk_config_default(F.spec, &F.shape, &def);
    amk_backend_opts bo = {.target = "h100"};
    amk_evaluate_opts eo = {&def, "model", &bo, F.target, F.results};
    amk_evaluate_result r;
    amk_diag d = {0};
    ck_assert_msg(amk_evaluate_one(&eo, &r, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(r.failed_on, AMK_EVALUATE_DONE);
    ck_assert_int_eq(r.verdict.status, AMK_STATUS_OK);
    ck_assert_int_eq(r.verdict.latency_kind, AMK_LAT_PREDICTED);
    ck_assert(r.logged);
    ck_assert_int_eq(r.row.trial, 1);
    ck_assert_int_eq(r.row.kept, 1); /* the first ok row of the file */
    ck_assert_str_eq(r.backend, "model");
    char id[17];
    amk_config_id(&def, id);
    ck_assert_str_eq(r.verdict.config_id, id);
    rows rs;
    read_rows(&rs);
    ck_assert_uint_eq(rs.n, 1);
    ck_assert_str_eq(rs.v[0].config_id, id);
    ck_assert_str_eq(rs.v[0].source, "user");

    /* A file that is not a results file: refused on the results step, left as it was. */
    amk_test_write_file(F.results, "garbage\n");
    ck_assert_int_ne(amk_evaluate_one(&eo, &r, &d), AMK_OK);
    ck_assert_int_eq(r.failed_on, AMK_EVALUATE_ON_RESULTS);
    char *text = NULL;
    ck_assert_int_eq(amk_fs_read_all(F.results, &text, NULL, &d), AMK_OK);
    ck_assert_str_eq(text, "garbage\n");
    free(text);

    /* An unknown backend fails on the backend step. */
    eo.backend = "nosuch";
    eo.results_path = NULL;
    ck_assert_int_ne(amk_evaluate_one(&eo, &r, &d), AMK_OK);
    ck_assert_int_eq(r.failed_on, AMK_EVALUATE_ON_BACKEND);
}
END_TEST

/* ---- amk_space_size_on ----------------------------------------------------------------- */

typedef struct tally {
    const amk_target *t;
    double valid, feasible;
} tally;

static int tally_cb(const amk_config *c, void *ud)
{
    tally *ty = ud;
    ty->valid++;
    ty->feasible += amk_cost_feasible(c, ty->t, NULL) == AMK_OK;
    return 0;
}

START_TEST(test_amk_space_size_on_exact_matches_enumeration_and_estimate_is_close)
{
    amk_space *sp = NULL;
    amk_diag d = {0};
    ck_assert_int_eq(amk_space_create(F.spec, &F.shape, &F.target->limits, &sp, &d), AMK_OK);
    tally ty = {F.target, 0, 0};
    ck_assert_int_eq(amk_space_enumerate(sp, tally_cb, &ty), AMK_OK);
    amk_space_counts exact, est;
    ck_assert_msg(amk_space_size_on(sp, F.target, 0, &exact, &d) == AMK_OK, "%s", d.msg);
    ck_assert(exact.exact); /* 5184 raw points: under the limit */
    ck_assert(exact.raw == 12.0 * 12 * 12 * 3);
    ck_assert(exact.valid == ty.valid);
    ck_assert(exact.feasible == ty.feasible);
    ck_assert(exact.valid > 0 && exact.valid < exact.raw); /* X+Y+Z <= 30 cuts some */
    ck_assert(exact.default_ok);
    amk_space_free(sp);

    /* A shape whose launch limits reject the default is reported with a reason. */
    amk_target tiny = *F.target;
    tiny.limits.max_threads = 64;
    ck_assert_int_eq(amk_space_create(F.spec, &F.shape, &tiny.limits, &sp, &d), AMK_OK);
    ck_assert_int_eq(amk_space_size_on(sp, &tiny, 1, &est, &d), AMK_OK);
    ck_assert(!est.default_ok); /* default T=256 > 64 threads */
    ck_assert(est.default_reason[0]);
    ck_assert(est.valid < exact.valid);
    amk_space_free(sp);
}
END_TEST

/* ---- amk_compile_plan (planning only) ------------------------------------------------- */

static void count_warning(const char *msg, int warning, void *ud)
{
    (void)msg;
    *(int *)ud += warning;
}

START_TEST(test_amk_compile_plan_random_distinct_valid_and_references)
{
    int warnings = 0;
    amk_compile_plan *p = amk_compile_plan_create(F.target, 7, count_warning, &warnings);
    ck_assert_ptr_nonnull(p);
    amk_diag d = {0};
    ck_assert_msg(amk_compile_plan_kernel(p, F.spec, &F.shape, 12, &d) == AMK_OK, "%s", d.msg);
    /* The same config given again is not planned twice; an invalid one is rejected. */
    amk_config def;
    amk_config_default(F.spec, &F.shape, &def);
    ck_assert_int_eq(amk_compile_plan_config(p, &def, &d), AMK_OK);
    amk_config bad = def;
    int x = amk_spec_param_index(F.spec, "X"), y = amk_spec_param_index(F.spec, "Y"),
        z = amk_spec_param_index(F.spec, "Z");
    bad.choice[x] = bad.choice[y] = bad.choice[z] = 11; /* X+Y+Z = 33 > 30 */
    ck_assert_int_eq(amk_compile_plan_config(p, &bad, &d), AMK_OK);
    ck_assert_int_eq(amk_compile_plan_references(p, &d), AMK_OK);
    size_t n;
    const amk_compile_job *v = amk_compile_plan_units(p, &n);
    ck_assert_uint_eq(n, 1 + 12 + 1 + 1); /* default, 12 random, the rejected one, 1 ref */
    ck_assert_int_eq(warnings, 0);
    amk_space *sp = NULL;
    ck_assert_int_eq(amk_space_create(F.spec, &F.shape, &F.target->limits, &sp, &d), AMK_OK);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++)
            if (!v[i].reference && !v[j].reference)
                ck_assert(!amk_config_equal(&v[i].cfg, &v[j].cfg));
        int rejected = v[i].res.status == AMK_STATUS_REJECTED;
        ck_assert_int_eq(rejected, i == 13);
        ck_assert_int_eq(amk_space_valid(sp, &v[i].cfg, NULL) == AMK_OK, !rejected);
        ck_assert_int_eq(v[i].reference, i == 14);
    }
    ck_assert_ptr_nonnull(strstr(v[13].res.reason, "not valid on h100"));
    amk_space_free(sp);
    /* Same seed, same plan. */
    amk_compile_plan *q = amk_compile_plan_create(F.target, 7, NULL, NULL);
    ck_assert_int_eq(amk_compile_plan_kernel(q, F.spec, &F.shape, 12, &d), AMK_OK);
    size_t m;
    const amk_compile_job *w = amk_compile_plan_units(q, &m);
    ck_assert_uint_eq(m, 13);
    for (size_t i = 0; i < m; i++)
        ck_assert(amk_config_equal(&v[i].cfg, &w[i].cfg));
    amk_compile_plan_free(q);
    amk_compile_plan_free(p);
}
END_TEST

static amk_compile_plan_opts build_opts(notes *pn)
{
    static const char *const dirs[1] = {AMK_TEST_FIXTURES "/specs/landscape"};
    amk_compile_plan_opts o = {.target = "h100", .spec_dirs = dirs, .n_spec_dirs = 1,
                               .kernel = "landscape", .random = 12, .seed = 7,
                               .note = take_note, .ud = pn};
    return o;
}

START_TEST(test_amk_compile_plan_build_is_the_piecewise_plan)
{
    notes seen = {0};
    amk_compile_plan_opts o = build_opts(&seen);
    amk_compile_plan *p = NULL;
    amk_compile_plan_stage on;
    amk_diag d = {0};
    ck_assert_msg(amk_compile_plan_build(&o, &p, &on, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(on, AMK_COMPILE_PLAN_DONE);
    ck_assert_str_eq(amk_compile_plan_arch(p), "sm_90");
    /* The same units as the plan made step by step on h100. */
    amk_compile_plan *q = amk_compile_plan_create(F.target, 7, NULL, NULL);
    ck_assert_int_eq(amk_compile_plan_kernel(q, F.spec, &F.shape, 12, &d), AMK_OK);
    ck_assert_int_eq(amk_compile_plan_references(q, &d), AMK_OK);
    size_t n, m;
    const amk_compile_job *v = amk_compile_plan_units(p, &n), *w = amk_compile_plan_units(q, &m);
    ck_assert_uint_eq(n, 14);
    ck_assert_uint_eq(n, m);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(v[i].reference, w[i].reference);
        ck_assert_str_eq(amk_spec_name(v[i].spec), "landscape");
        char a[17], b[17];
        amk_config_id(&v[i].cfg, a);
        amk_config_id(&w[i].cfg, b);
        ck_assert_str_eq(a, b);
    }
    ck_assert_int_eq(seen.n, 0);
    amk_compile_plan_free(q);
    amk_compile_plan_free(p);
    /* An arch no target has: the default's limits, with a note that is not a warning. */
    o.target = NULL;
    o.arch = "sm_999";
    o.no_reference = 1;
    ck_assert_msg(amk_compile_plan_build(&o, &p, &on, &d) == AMK_OK, "%s", d.msg);
    ck_assert_str_eq(amk_compile_plan_arch(p), "sm_999");
    ck_assert_int_eq(seen.n, 1);
    ck_assert_int_eq(seen.warnings, 0);
    ck_assert_ptr_nonnull(strstr(seen.last, "no known target has arch sm_999"));
    amk_compile_plan_units(p, &n);
    ck_assert_uint_eq(n, 13);
    amk_compile_plan_free(p);
}
END_TEST

START_TEST(test_amk_compile_plan_build_config_file_and_failed_steps)
{
    notes seen = {0};
    amk_compile_plan_opts o = build_opts(&seen);
    char path[400];
    snprintf(path, sizeof path, "%s/configs.json", F.dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("[{\"kernel\": \"landscape\", \"shape\": {\"N\": 4096, \"dtype\": \"f32\"},"
          " \"params\": {\"X\": 5, \"Y\": 5, \"Z\": 5, \"T\": 256}},"
          " {\"kernel\": \"landscape\", \"shape\": {\"N\": 4096, \"dtype\": \"f32\"},"
          " \"params\": {\"X\": 11, \"Y\": 11, \"Z\": 11, \"T\": 256}}]\n", f);
    fclose(f);
    o.config_path = path;
    amk_compile_plan *p = NULL;
    amk_compile_plan_stage on;
    amk_diag d = {0};
    ck_assert_msg(amk_compile_plan_build(&o, &p, &on, &d) == AMK_OK, "%s", d.msg);
    size_t n;
    const amk_compile_job *v = amk_compile_plan_units(p, &n);
    ck_assert_uint_eq(n, 3); /* two configs (the second rejected: X+Y+Z > 30), one reference */
    ck_assert_int_eq(v[0].res.status, AMK_STATUS_OK);
    ck_assert_int_eq(v[1].res.status, AMK_STATUS_REJECTED);
    ck_assert_int_eq(v[2].reference, 1);
    ck_assert_int_eq((int)v[0].cfg.shape.dims[0], 4096);
    amk_compile_plan_free(p);
    /* Each step's failure: bad input, with *out NULL and the step named. */
    struct {
        const char *target, *kernel, *shape, *config, *says;
    } bad[] = {
        {"h100", "other", NULL, path, "config 0 is for kernel 'landscape', not 'other'"},
        {"h100", "no_such_kernel", NULL, NULL, "unknown kernel 'no_such_kernel'"},
        {"h100", "landscape", "Q=3", NULL, "landscape: --shape"},
        {"no_such_target", "landscape", NULL, NULL, "unknown target"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.target = bad[i].target;
        o.kernel = bad[i].kernel;
        o.shape = bad[i].shape;
        o.config_path = bad[i].config;
        amk_diag_clear(&d);
        p = (amk_compile_plan *)&o; /* anything but NULL: a failure must clear it */
        ck_assert_int_ne(amk_compile_plan_build(&o, &p, &on, &d), AMK_OK);
        ck_assert_ptr_null(p);
        ck_assert_int_eq(on, AMK_COMPILE_PLAN_ON_INPUT);
        ck_assert_msg(strstr(d.msg, bad[i].says) != NULL, "%zu: %s", i, d.msg);
    }
}
END_TEST

/* ---- amk_report_defaults -------------------------------------------------------------- */

START_TEST(test_amk_report_defaults_names_the_default_or_why_not)
{
    amk_tune_opts o = tune_opts(8, 0);
    amk_tune_result r;
    amk_diag d = {0};
    ck_assert_msg(amk_tune(&o, &r, &d) == AMK_OK, "%s", d.msg);
    const char *paths[1] = {F.results};
    amk_report *rep = NULL;
    ck_assert_msg(amk_report_build(paths, 1, &amk_history_rule, NULL, &rep, &d) == AMK_OK, "%s",
                  d.msg);
    ck_assert_uint_eq(amk_report_ngroups(rep), 1);
    amk_registry *reg = NULL;
    ck_assert_int_eq(amk_registry_create(&reg, &d), AMK_OK);
    /* The landscape fixture is not a built-in kernel: the reason names it. */
    amk_report_defaults(rep, reg, NULL);
    cJSON *j = amk_test_json_tree(amk_report_json(rep));
    char *text = cJSON_PrintUnformatted(j);
    ck_assert_ptr_nonnull(strstr(text, "kernel 'landscape' is not known here"));
    free(text);
    cJSON_Delete(j);
    ck_assert_int_eq(amk_registry_add_dir(reg, AMK_TEST_FIXTURES "/specs/landscape", &d),
                     AMK_OK);
    amk_report_defaults(rep, reg, NULL);
    j = amk_test_json_tree(amk_report_json(rep));
    text = cJSON_PrintUnformatted(j);
    ck_assert_ptr_null(strstr(text, "is not known here"));
    ck_assert_ptr_nonnull(strstr(text, r.vs_default.config_id));
    free(text);
    cJSON_Delete(j);
    amk_registry_free(reg);
    amk_report_free(rep);
}
END_TEST

static Suite *commands_suite(void)
{
    Suite *s = suite_create("commands");
    TCase *tc = tcase_create("commands");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_amk_tune_runs_logs_and_resumes);
    tcase_add_test(tc, test_amk_tune_exclude_never_proposes_the_listed_configs);
    tcase_add_test(tc, test_amk_err_exit_code_matches_the_cli_categories);
    tcase_add_test(tc, test_amk_tune_refuses_a_foreign_file_before_appending);
    tcase_add_test(tc, test_amk_tune_empty_space_fails_on_setup_and_writes_nothing);
    tcase_add_test(tc, test_amk_tune_groups_runs_one_search_as_amk_tune_does);
    tcase_add_test(tc, test_amk_tune_groups_without_a_best_path_writes_no_best_file);
    tcase_add_test(tc, test_amk_tune_groups_backend_failure_is_named_and_nothing_runs);
    tcase_add_test(tc, test_amk_propose_default_then_unseen_with_incumbent);
    tcase_add_test(tc, test_amk_propose_names_what_a_resumed_loop_tries_next);
    tcase_add_test(tc, test_amk_propose_bad_file_fails_on_results);
    tcase_add_test(tc, test_amk_trial_log_numbers_and_keeps_by_the_history_rule);
    tcase_add_test(tc, test_amk_evaluate_one_logs_a_row_and_refuses_a_foreign_file_first);
    tcase_add_test(tc, test_amk_space_size_on_exact_matches_enumeration_and_estimate_is_close);
    tcase_add_test(tc, test_amk_compile_plan_random_distinct_valid_and_references);
    tcase_add_test(tc, test_amk_compile_plan_build_is_the_piecewise_plan);
    tcase_add_test(tc, test_amk_compile_plan_build_config_file_and_failed_steps);
    tcase_add_test(tc, test_amk_report_defaults_names_the_default_or_why_not);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    return amk_test_main(argc, argv, commands_suite(), NULL, 0);
}
