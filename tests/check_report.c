/* The report's analysis statistics on tests/fixtures/report (a.tsv, b.tsv with a torn last
 * row): counts, compile time statistics, trials to within 1% of the best, speedup over the
 * default config, Spearman rank correlation, and the SVG plots. Known answers are worked
 * out by hand in the comments. */
#include "amk_search.h" /* amk_history_rule */
#include "amk_test.h"
#include "results_int.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX AMK_TEST_FIXTURES "/report/"

static amk_report *build(void)
{
    const char *paths[] = {FIX "a.tsv", FIX "b.tsv"};
    amk_report *rep = NULL;
    amk_diag d;
    amk_diag_clear(&d);
    ck_assert_msg(amk_report_build(paths, 2, &amk_history_rule, NULL, &rep, &d) == AMK_OK, "%s",
                  d.msg);
    ck_assert_uint_eq(amk_report_ngroups(rep), 2);
    const char *k, *s, *dev;
    ck_assert_int_eq(amk_report_group(rep, 0, &k, &s, &dev), AMK_OK);
    ck_assert_str_eq(k, "k");
    ck_assert_str_eq(s, "M=64,N=64");
    ck_assert_str_eq(dev, "Dev");
    ck_assert_int_eq(amk_report_group(rep, 2, &k, NULL, NULL), AMK_EINVAL);
    return rep;
}

/* The report's JSON text as a tree, for the assertions. */
static cJSON *report_tree(const amk_report *rep)
{
    return amk_test_json_tree(amk_report_json(rep));
}

START_TEST(test_amk_report_build_counts_fixture)
{
    amk_report *rep = build();
    const amk__stat_counts *c = amk__report_state(rep, 0, &amk__stat_counts_type);
    /* a.tsv: 11 rows, b.tsv: 2 of group k (its torn 4th row is skipped). */
    ck_assert_uint_eq(c->trials, 13);
    ck_assert_uint_eq(c->status[AMK_STATUS_OK], 9);
    ck_assert_uint_eq(c->status[AMK_STATUS_REJECTED], 1);
    ck_assert_uint_eq(c->status[AMK_STATUS_SCREENED], 1);
    ck_assert_uint_eq(c->status[AMK_STATUS_COMPILE_ERROR], 1);
    ck_assert_uint_eq(c->status[AMK_STATUS_WRONG], 1);
    ck_assert_uint_eq(c->kept, 4);
    amk_report_free(rep);
}
END_TEST

START_TEST(test_amk_report_build_compile_stats)
{
    amk_report *rep = build();
    const amk__stat_compile *c = amk__report_state(rep, 0, &amk__stat_compile_type);
    /* compiled (compile_ms set, not a cache hit): 10 30 20 70 40 60 (a) + 5 5 (b);
     * sorted 5 5 10 20 30 40 60 70: median (20+30)/2 = 25, p90 at 0.9*7 = 6.3 -> 63. */
    double med, p90, max;
    amk__compile_compute(c, &med, &p90, &max);
    ck_assert_uint_eq(c->n, 8);
    ck_assert_uint_eq(c->cache_hits, 2);
    ck_assert_double_eq_tol(med, 25, 1e-9);
    ck_assert_double_eq_tol(p90, 63, 1e-9);
    ck_assert_double_eq_tol(max, 70, 1e-9);
    amk_report_free(rep);
}
END_TEST

START_TEST(test_amk_report_build_within_1pct)
{
    amk_report *rep = build();
    const amk__stat_trace *t = amk__report_state(rep, 0, &amk__stat_trace_type);
    amk__convergence cv[2];
    ck_assert_int_eq(amk__trace_files(t, 2, cv), 2);
    /* a.tsv: best 60 (row 7); row 5 at 60.5 is within 1% (<= 60.6), the first one. */
    ck_assert_double_eq(cv[0].best_us, 60);
    ck_assert_uint_eq(cv[0].rows, 11);
    ck_assert_uint_eq(cv[0].to_within_1pct, 5);
    ck_assert_int_eq(cv[0].trial, 5);
    ck_assert(isnan(cv[0].cost_to_within_s) && isnan(cv[0].cost_s)); /* rows without cost */
    /* The predicted-only row 11 (1 us) is neither a best nor a point of convergence. */
    ck_assert_double_eq(cv[1].best_us, 65);
    ck_assert_uint_eq(cv[1].to_within_1pct, 2);
    cJSON *j = report_tree(rep);
    cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "groups"), 0);
    ck_assert_double_eq(cJSON_GetObjectItem(g, "trials_to_within_1pct")->valuedouble, 5);
    cJSON_Delete(j);
    amk_report_free(rep);
}
END_TEST

/* Convergence is measured against the one best (the rule's), not the raw minimum: a row
 * 1.5% faster than the kept best but inside its 2% measured noise is not the target. */
START_TEST(test_amk_report_build_within_1pct_of_the_one_best)
{
    char dir[256], path[320];
    amk_test_tmpdir_make(dir, sizeof dir, "report-best");
    snprintf(path, sizeof path, "%s/r.tsv", dir);
    const double us[3] = {130, 100, 98.5};
    amk_row rows[3];
    for (int i = 0; i < 3; i++) {
        amk_row_init(&rows[i]);
        rows[i].trial = i + 1;
        snprintf(rows[i].kernel, sizeof rows[i].kernel, "k");
        snprintf(rows[i].shape, sizeof rows[i].shape, "M=1");
        snprintf(rows[i].device, sizeof rows[i].device, "Dev");
        snprintf(rows[i].config_id, sizeof rows[i].config_id, "%016x", i + 1);
        snprintf(rows[i].params, sizeof rows[i].params, "{\"X\":%d}", i);
        rows[i].latency_us = us[i];
        rows[i].latency_kind = AMK_LAT_MEASURED;
        rows[i].spread = 0.02;
        rows[i].kept = i < 2;
        rows[i].cost_s = 0.5 + 0.75 * i; /* 0.5, 1.25, 2.0 */
    }
    amk_test_append_rows(path, rows, 3);
    const char *paths[] = {path};
    amk_report *rep = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_report_build(paths, 1, &amk_history_rule, NULL, &rep, &d) == AMK_OK, "%s",
                  d.msg);
    amk__convergence cv[1];
    ck_assert_int_eq(amk__trace_files(amk__report_state(rep, 0, &amk__stat_trace_type), 1, cv),
                     1);
    ck_assert_double_eq(cv[0].best_us, 100);       /* the raw minimum is 98.5 */
    ck_assert_uint_eq(cv[0].to_within_1pct, 2);    /* against 98.5 it would be 3 */
    /* What the user paid: the recorded cost of the rows until then, and of all of them. */
    ck_assert_double_eq_tol(cv[0].cost_to_within_s, 1.75, 1e-12);
    ck_assert_double_eq_tol(cv[0].cost_s, 3.75, 1e-12);
    cJSON *j = report_tree(rep);
    cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "groups"), 0);
    cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(g, "convergence"), 0);
    ck_assert_double_eq_tol(cJSON_GetObjectItem(c0, "cost_s_to_within_1pct")->valuedouble, 1.75,
                            1e-12);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(g, "best"), "trial")->valueint, 2);
    ck_assert_double_eq(cJSON_GetObjectItem(g, "trials_to_within_1pct")->valuedouble, 2);
    cJSON_Delete(j);
    amk_report_free(rep);
    amk_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_amk_report_set_default_speedup)
{
    amk_report *rep = build();
    const amk__stat_speedup *s = amk__report_state(rep, 0, &amk__stat_speedup_type);
    amk__speedup v;
    amk__speedup_compute(s, &v);
    ck_assert(isnan(v.speedup));
    ck_assert_ptr_nonnull(strstr(v.reason, "not known"));
    /* default = row 1 (100 us), best 60 us: 100/60. */
    ck_assert_int_eq(amk_report_set_default(rep, 0, "0000000000000001", NULL), AMK_OK);
    amk__speedup_compute(s, &v);
    ck_assert_double_eq_tol(v.speedup, 100.0 / 60.0, 1e-12);
    ck_assert_int_eq(v.default_trial, 1);
    cJSON *j = report_tree(rep);
    cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "groups"), 0);
    cJSON *vd = cJSON_GetObjectItem(g, "vs_default");
    ck_assert_double_eq_tol(cJSON_GetObjectItem(vd, "speedup")->valuedouble, 100.0 / 60.0,
                            1e-12);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(vd, "reason")));
    cJSON_Delete(j);
    /* the default tried but wrong (row 6), never tried, no default with a reason */
    ck_assert_int_eq(amk_report_set_default(rep, 0, "0000000000000006", NULL), AMK_OK);
    amk__speedup_compute(s, &v);
    ck_assert(isnan(v.speedup));
    ck_assert_ptr_nonnull(strstr(v.reason, "status wrong"));
    ck_assert_int_eq(amk_report_set_default(rep, 0, "00000000000000ff", NULL), AMK_OK);
    amk__speedup_compute(s, &v);
    ck_assert_ptr_nonnull(strstr(v.reason, "was not measured"));
    ck_assert_int_eq(amk_report_set_default(rep, 0, NULL, "no spec"), AMK_OK);
    amk__speedup_compute(s, &v);
    ck_assert_str_eq(v.reason, "no spec");
    ck_assert_int_eq(amk_report_set_default(rep, 0, "xyz", NULL), AMK_EINVAL);
    ck_assert_int_eq(amk_report_set_default(rep, 9, NULL, "x"), AMK_EINVAL);
    amk_report_free(rep);
}
END_TEST

/* The default's rows timed beside the best's peer are held in the best's clock state, as the
 * best rule compares them: 209.3 us beside a 200.9 us cuBLAS against a best of 198.3 us
 * beside 181.9 us is 209.3 x 181.9 / 200.9 = 189.5 us in the best's state (0.956x), not the
 * raw 1.056x; the row's own latency is still the one reported. */
START_TEST(test_amk_speedup_compute_holds_peered_default_in_the_best_state)
{
    amk__stat_speedup s;
    memset(&s, 0, sizeof s);
    s.has_default = 1;
    snprintf(s.default_id, sizeof s.default_id, "0000000000000001");
    s.has_best = 1;
    s.best_us = 198.3;
    snprintf(s.best_peer, sizeof s.best_peer, "cublas");
    s.best_peer_us = 181.9;
    s.n = 2;
    s.pts = calloc(2, sizeof *s.pts);
    ck_assert_ptr_nonnull(s.pts);
    s.pts[0].id = 1, s.pts[0].trial = 1, s.pts[0].status = AMK_STATUS_OK;
    s.pts[0].latency_us = 209.3;
    snprintf(s.pts[0].peer, sizeof s.pts[0].peer, "cublas");
    s.pts[0].peer_us = 200.9;
    s.pts[1].id = 2, s.pts[1].trial = 70, s.pts[1].status = AMK_STATUS_OK;
    s.pts[1].latency_us = 198.3;
    amk__speedup v;
    amk__speedup_compute(&s, &v);
    ck_assert_double_eq_tol(v.default_us, 209.3, 1e-9);
    ck_assert_double_eq_tol(v.speedup, 209.3 * 181.9 / 200.9 / 198.3, 1e-9);
    s.pts[0].peer[0] = '\0'; /* no peer beside it: the raw latencies */
    amk__speedup_compute(&s, &v);
    ck_assert_double_eq_tol(v.speedup, 209.3 / 198.3, 1e-9);
    free(s.pts);
}
END_TEST

START_TEST(test_amk__spearman_hand_computed)
{
    /* No ties: ranks differ by one in two places: 1 - 6*2/(6*35) = 0.942857... */
    double x[] = {100, 80, 60.5, 60, 200, 90}, y[] = {50, 40, 35, 20, 100, 55};
    ck_assert_double_eq_tol(amk__spearman(x, y, 6), 1 - 12.0 / 210.0, 1e-12);
    /* Ties get average ranks: y ranks 1.5 1.5 3.5 3.5 -> 4/sqrt(5*4) = 0.894427... */
    double a[] = {1, 2, 3, 4}, b[] = {1, 1, 2, 2};
    ck_assert_double_eq_tol(amk__spearman(a, b, 4), 4 / sqrt(20.0), 1e-12);
    double r[] = {4, 3, 2, 1};
    ck_assert_double_eq_tol(amk__spearman(a, r, 4), -1, 1e-12);
    /* Constant predictions or fewer than two pairs: undefined. */
    double k[] = {7, 7, 7, 7};
    ck_assert(isnan(amk__spearman(a, k, 4)));
    ck_assert(isnan(amk__spearman(a, b, 1)));

    amk_report *rep = build();
    const amk__stat_model *m = amk__report_state(rep, 0, &amk__stat_model_type);
    ck_assert_uint_eq(m->n, 6); /* measured rows with a prediction */
    ck_assert_double_eq_tol(amk__model_spearman(m), 1 - 12.0 / 210.0, 1e-12);
    amk_report_free(rep);
}
END_TEST

static size_t count_in(const char *path, const char *needle)
{
    char *data = NULL;
    size_t len = 0, n = 0;
    ck_assert_int_eq(amk_fs_read_all(path, &data, &len, NULL), AMK_OK);
    for (const char *p = data; (p = strstr(p, needle)); p++)
        n++;
    free(data);
    return n;
}

static void collect_path(const char *path, void *ud)
{
    cJSON_AddItemToArray(ud, cJSON_CreateString(path));
}

START_TEST(test_amk_report_svg_writes_plots)
{
    amk_report *rep = build();
    char dir[256], sub[300], path[400];
    amk_test_tmpdir_make(dir, sizeof dir, "report");
    snprintf(sub, sizeof sub, "%s/plots", dir);
    cJSON *w = cJSON_CreateArray();
    amk_report_written hear = {collect_path, w};
    amk_diag d;
    amk_diag_clear(&d);
    ck_assert_msg(amk_report_svg(rep, sub, &hear, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(cJSON_GetArraySize(w), 6);
    snprintf(path, sizeof path, "%s/k-M_64_N_64-Dev-progress.svg", sub);
    ck_assert_uint_eq(count_in(path, "<path class=\"line\""), 2);
    ck_assert_uint_eq(count_in(path, "<svg "), 1);
    ck_assert_uint_eq(count_in(path, "</svg>"), 1);
    snprintf(path, sizeof path, "%s/k-M_64_N_64-Dev-model.svg", sub);
    ck_assert_uint_eq(count_in(path, "<circle class=\"point\""), 6);
    ck_assert_uint_eq(count_in(path, "Spearman rho = 0.943"), 1);
    snprintf(path, sizeof path, "%s/k-M_64_N_64-Dev-status.svg", sub);
    ck_assert_uint_eq(count_in(path, "<circle class=\"point\""), 8);
    ck_assert_uint_eq(count_in(path, "compile_error (1)"), 1);
    amk_test_tmpdir_remove(dir);
    cJSON_Delete(w);
    amk_report_free(rep);
}
END_TEST

START_TEST(test_amk__svg_plot_escapes_and_handles_empty)
{
    amk_sb sb = {0};
    amk__plot p = {"a<b & \"c\"", "x", "y", 1, 1, NULL, 0, NULL, 0};
    amk__svg_plot(&p, &sb);
    ck_assert(!sb.oom);
    ck_assert_ptr_nonnull(strstr(sb.p, "a&lt;b &amp; &quot;c&quot;"));
    ck_assert_ptr_nonnull(strstr(sb.p, "no data"));
    ck_assert_ptr_null(strstr(sb.p, "nan"));
    ck_assert_ptr_null(strstr(sb.p, "inf"));
    amk_sb_free(&sb);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("report");
    TCase *t = tcase_create("report");
    tcase_add_test(t, test_amk_report_build_counts_fixture);
    tcase_add_test(t, test_amk_report_build_compile_stats);
    tcase_add_test(t, test_amk_report_build_within_1pct);
    tcase_add_test(t, test_amk_report_build_within_1pct_of_the_one_best);
    tcase_add_test(t, test_amk_report_set_default_speedup);
    tcase_add_test(t, test_amk_speedup_compute_holds_peered_default_in_the_best_state);
    tcase_add_test(t, test_amk__spearman_hand_computed);
    tcase_add_test(t, test_amk_report_svg_writes_plots);
    tcase_add_test(t, test_amk__svg_plot_escapes_and_handles_empty);
    suite_add_tcase(s, t);
    return amk_test_run(s);
}
