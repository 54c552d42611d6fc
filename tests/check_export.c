/* Check suite of the export database (results/export_*.c): building from a fixture results
 * file (and through search's amk_export_tuned), reading a database file, the checks on a
 * database, the lookup's levels and nearest-shape fallback, and the C header, compiled with
 * the system C compiler into a small program that must answer as the JSON lookup does. */
#include "amk_cost_model.h"
#include "amk_results.h"
#include "amk_search.h" /* amk_history_rule */
#include "amk_test.h"

#include <cjson/cJSON.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIX AMK_TEST_FIXTURES "/export/"
#define H100 "NVIDIA H100 80GB HBM3"

static char tmpdir[256];

static void setup_tmp(void)
{
    amk_test_tmpdir_make(tmpdir, sizeof tmpdir, "export");
}

static void teardown_tmp(void)
{
    amk_test_tmpdir_remove(tmpdir);
}

static amk_export_target targets[16];

/* The database of the fixture, with the cost model's targets, as the CLI builds it. */
static int build_db(const char *file, const char *kernel, int replayed, amk_export_db **db,
                    amk_diag *d)
{
    amk_export_opts o = {.kernel = kernel, .include_replayed = replayed, .targets = targets,
                         .rule = &amk_history_rule};
    for (int i = 0; i < amk_target_count() && i < 16; i++, o.n_targets++) {
        const amk_target *t = amk_target_at(i);
        targets[i] = (amk_export_target){t->key, t->name, t->vendor, t->arch};
    }
    const char *paths[] = {file};
    return amk_export_db_build(paths, 1, &o, db, d);
}

static amk_export_db *fixture_db(void)
{
    amk_export_db *db = NULL;
    amk_diag d;
    int rc = build_db(FIX "results.tsv", NULL, 0, &db, &d);
    ck_assert_msg(rc == AMK_OK, "%s", d.msg);
    return db;
}

/* The database's JSON text as a tree, to look inside. */
static cJSON *db_tree(const amk_export_db *db)
{
    return amk_test_json_tree(amk_export_db_json(db));
}

/* amk_export_db_lookup with its answer parsed; *look stays NULL on failure. */
static int lookup(const amk_export_db *db, const char *kernel, const char *device,
                  const char *shape, const char *dtype, cJSON **look, amk_diag *d)
{
    char *text = NULL;
    int rc = amk_export_db_lookup(db, kernel, device, shape, dtype, &text, d);
    if (rc == AMK_OK) {
        *look = cJSON_Parse(text);
        ck_assert_ptr_nonnull(*look);
    }
    free(text);
    return rc;
}

static int param(const cJSON *cfg, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, name);
    ck_assert_ptr_nonnull(v);
    return v->valueint;
}

static const char *mstr(const cJSON *look, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(look, "matched"), key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int mbool(const cJSON *look, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(look, "matched"), key));
}

/* ---- amk_export_db_build ---------------------------------------------------------------- */

START_TEST(test_amk_export_build_best_per_device_and_shape)
{
    amk_export_db *h = fixture_db();
    ck_assert_int_eq(amk_export_db_check(h, NULL), AMK_OK);
    cJSON *db = db_tree(h);
    amk_export_db_free(h);
    const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(
                        cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(
                                cJSON_GetObjectItemCaseSensitive(
                                    cJSON_GetObjectItemCaseSensitive(db, "vendors"), "nvidia"),
                                "archs"),
                            "sm_90"),
                        "devices"),
                    H100),
                "kernels"),
            "gemm"),
        "shapes");
    ck_assert_ptr_nonnull(shapes);
    /* predicted (100), replayed (50) and wrong (10) rows are faster but never chosen. */
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(shapes, "M=4096,N=4096,K=4096,dtype=f32");
    ck_assert_ptr_nonnull(a);
    ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(a, "latency_us")->valuedouble, 400);
    ck_assert_int_eq(param(cJSON_GetObjectItemCaseSensitive(a, "params"), "BM"), 128);
    ck_assert_int_eq(cJSON_GetArraySize(shapes), 4);
    /* Devices the targets do not know go under vendor/arch "unknown". */
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(db, "vendors"), "unknown"),
                "archs"),
            "unknown"),
        "devices"));
    /* Default: best on the most entries (cfg BM=128,BN=128 wins 3 of the gemm entries). */
    const cJSON *dflt = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(db, "kernels"), "gemm"),
        "default");
    ck_assert_int_eq(param(cJSON_GetObjectItemCaseSensitive(dflt, "params"), "BN"), 128);
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(dflt, "wins")->valueint, 3);
    cJSON_Delete(db);
}
END_TEST

START_TEST(test_amk_export_build_replayed_only_when_asked)
{
    amk_export_db *db = NULL;
    cJSON *look = NULL;
    amk_diag d;
    ck_assert_int_eq(build_db(FIX "results.tsv", "gemm", 1, &db, &d), AMK_OK);
    ck_assert_int_eq(lookup(db, "gemm", H100, "M=4096,N=4096,K=4096,dtype=f32", NULL, &look, &d),
                     AMK_OK);
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(look, "config");
    ck_assert_int_eq(param(cfg, "BN"), 256); /* the replayed 50 us row */
    cJSON *tree = db_tree(db);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(tree, "kernel_info"), "copy"));
    cJSON_Delete(tree);
    cJSON_Delete(look);
    amk_export_db_free(db);
}
END_TEST

START_TEST(test_amk_export_build_errors)
{
    amk_export_db *db = NULL;
    amk_diag d;
    ck_assert_int_eq(build_db(FIX "no_measured.tsv", NULL, 0, &db, &d), AMK_EEMPTY);
    ck_assert_ptr_nonnull(strstr(d.msg, "measured"));
    ck_assert_int_eq(build_db(FIX "results.tsv", "nosuch", 0, &db, &d), AMK_ENOENT);
    ck_assert_ptr_nonnull(strstr(d.msg, "nosuch"));
    ck_assert_int_eq(build_db(FIX "missing.tsv", NULL, 0, &db, &d), AMK_ENOENT);
    ck_assert_ptr_null(db);
}
END_TEST

/* ---- amk_export_tuned (search: the history rule and the cost model's targets) ------------ */

START_TEST(test_amk_export_tuned_is_the_build_with_every_target)
{
    const char *paths[] = {FIX "results.tsv"};
    for (int replayed = 0; replayed < 2; replayed++) {
        amk_export_db *a = NULL, *b = NULL;
        amk_diag d;
        ck_assert_msg(amk_export_tuned(paths, 1, NULL, replayed, NULL, &a, &d) == AMK_OK, "%s",
                      d.msg);
        ck_assert_int_eq(build_db(FIX "results.tsv", NULL, replayed, &b, &d), AMK_OK);
        char *ta = amk_export_db_json(a), *tb = amk_export_db_json(b);
        ck_assert_str_eq(ta, tb);
        for (int i = 0; i < amk_target_count(); i++)
            ck_assert_ptr_nonnull(strstr(ta, amk_target_at(i)->name));
        free(ta);
        free(tb);
        amk_export_db_free(a);
        amk_export_db_free(b);
    }
    amk_export_db *db = NULL;
    amk_diag d;
    ck_assert_int_eq(amk_export_tuned(paths, 1, "nosuch", 0, NULL, &db, &d), AMK_ENOENT);
    ck_assert_ptr_null(db);
}
END_TEST

/* ---- amk_export_db_check, amk_export_db_parse -------------------------------------------- */

START_TEST(test_amk_export_check_malformed)
{
    amk_diag d;
    char *text;
    size_t len;
    ck_assert_int_eq(amk_fs_read_all(FIX "bad_db.json", &text, &len, &d), AMK_OK);
    amk_export_db *db = NULL;
    ck_assert_int_eq(amk_export_db_parse("bad_db.json", text, len, &db, &d), AMK_OK);
    free(text);
    ck_assert_int_eq(amk_export_db_check(db, &d), AMK_EPARSE);
    ck_assert_ptr_nonnull(strstr(d.msg, "kernels.gemm"));
    cJSON *look = NULL;
    ck_assert_int_eq(lookup(db, "gemm", H100, "M=1", NULL, &look, &d), AMK_EPARSE);
    amk_export_db_free(db);
    static const char hello[] = "{\"hello\": 1}";
    ck_assert_int_eq(amk_export_db_parse("hello", hello, strlen(hello), &db, &d), AMK_OK);
    ck_assert_int_eq(amk_export_db_check(db, &d), AMK_EPARSE);
    ck_assert_ptr_nonnull(strstr(d.msg, "format"));
    amk_export_db_free(db);
    /* Text that is not one JSON document is refused before any check. */
    static const char trunc[] = "{\"format\": ", extra[] = "{} x";
    db = NULL;
    ck_assert_int_eq(amk_export_db_parse("t", trunc, strlen(trunc), &db, &d), AMK_EPARSE);
    ck_assert_ptr_nonnull(strstr(d.msg, "malformed JSON"));
    ck_assert_int_eq(amk_export_db_parse("t", extra, strlen(extra), &db, &d), AMK_EPARSE);
    ck_assert_ptr_null(db);
}
END_TEST

/* ---- amk_export_db_read ------------------------------------------------------------------ */

START_TEST(test_amk_export_db_read_file_and_where_it_is_malformed)
{
    char path[320];
    amk_export_db *db = fixture_db();
    char *text = amk_export_db_json(db);
    amk_export_db_free(db);
    snprintf(path, sizeof path, "%s/db.json", tmpdir);
    amk_test_write_file(path, text);
    free(text);
    amk_diag d;
    db = NULL;
    ck_assert_msg(amk_export_db_read(path, &db, &d) == AMK_OK, "%s", d.msg);
    ck_assert_int_eq(amk_export_db_check(db, &d), AMK_OK);
    cJSON *look = NULL;
    ck_assert_int_eq(lookup(db, "gemm", H100, "M=4096,N=4096,K=4096", "f32", &look, &d), AMK_OK);
    ck_assert_int_eq(param(cJSON_GetObjectItemCaseSensitive(look, "config"), "BM"), 128);
    cJSON_Delete(look);
    amk_export_db_free(db);
    /* Malformed JSON is named by file, line and column; *out stays NULL. */
    amk_test_write_file(path, "{\"format\": \"amk-export\",\n  \"kernels\": {,}}\n");
    db = (amk_export_db *)path; /* anything but NULL: a failure must clear it */
    ck_assert_int_eq(amk_export_db_read(path, &db, &d), AMK_EPARSE);
    ck_assert_ptr_null(db);
    char where[340];
    snprintf(where, sizeof where, "%s:2:", path);
    ck_assert_msg(strstr(d.msg, where) != NULL, "%s", d.msg);
    snprintf(path, sizeof path, "%s/none.json", tmpdir);
    ck_assert_int_ne(amk_export_db_read(path, &db, &d), AMK_OK);
    ck_assert_ptr_nonnull(strstr(d.msg, "none.json"));
}
END_TEST

/* ---- amk_export_db_lookup ---------------------------------------------------------------- */

typedef struct query {
    const char *device, *shape, *dtype;
    long long M, N, K;
    const char *level;
    int nearest, BM, BN;
} query;

static const query queries[] = {
    {H100, "M=4096,N=4096,K=4096", "f32", 4096, 4096, 4096, "device", 0, 128, 128},
    {"nvidia h100 80gb hbm3", "M=1024,N=1024,K=1024", "f32", 1024, 1024, 1024, "device", 0, 64,
     64},
    {H100, "M=1000,N=1000,K=1000", "f32", 1000, 1000, 1000, "device", 1, 64, 64},
    {H100, "M=4096,N=4096,K=4096", "f16", 4096, 4096, 4096, "device", 0, 128, 128},
    {H100, "M=4096,N=4096,K=4096", "bf16", 4096, 4096, 4096, "device", 1, 128, 128},
    {"NVIDIA H100 PCIe", "M=8192,N=8192,K=7000", "f32", 8192, 8192, 7000, "arch", 1, 256, 256},
    {"NVIDIA A100 PCIe", "M=4096,N=4096,K=4096", "f32", 4096, 4096, 4096, "arch", 0, 64, 64},
    {"AMD Instinct MI250X", "M=4096,N=4096,K=4096", "f32", 4096, 4096, 4096, "vendor", 0, 64, 128},
    {"Mystery GPU 9000", "M=4096,N=4096,K=4096", "f32", 4096, 4096, 4096, "device", 0, 32, 64},
    {"Some Other GPU", "M=4096,N=4096,K=4096", "f32", 4096, 4096, 4096, "default", 0, 128, 128},
    {"Some Other GPU", "M=600,N=900,K=1100", NULL, 600, 900, 1100, "default", 1, 64, 64},
};
#define NQ (sizeof queries / sizeof queries[0])

START_TEST(test_amk_export_lookup_levels_and_nearest)
{
    amk_export_db *db = fixture_db();
    for (size_t i = 0; i < NQ; i++) {
        const query *q = &queries[i];
        cJSON *look = NULL;
        amk_diag d;
        int rc = lookup(db, "gemm", q->device, q->shape, q->dtype, &look, &d);
        ck_assert_msg(rc == AMK_OK, "query %zu: %s", i, d.msg);
        ck_assert_msg(!strcmp(mstr(look, "level"), q->level), "query %zu: level %s, want %s", i,
                      mstr(look, "level"), q->level);
        ck_assert_msg(mbool(look, "nearest") == q->nearest, "query %zu: nearest", i);
        const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(look, "config");
        ck_assert_msg(param(cfg, "BM") == q->BM && param(cfg, "BN") == q->BN,
                      "query %zu: BM %d BN %d", i, param(cfg, "BM"), param(cfg, "BN"));
        cJSON_Delete(look);
    }
    amk_export_db_free(db);
}
END_TEST

START_TEST(test_amk_export_lookup_bad_query)
{
    amk_export_db *db = fixture_db();
    cJSON *look = NULL;
    amk_diag d;
    ck_assert_int_eq(lookup(db, "nosuch", H100, "M=1", NULL, &look, &d), AMK_ENOENT);
    ck_assert_ptr_nonnull(strstr(d.msg, "gemm"));
    ck_assert_int_eq(lookup(db, "gemm", H100, "M=1,N=2", NULL, &look, &d),
                     AMK_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "missing dimension K"));
    ck_assert_int_eq(lookup(db, "gemm", H100, "M=1,N=2,K=3,Q=4", NULL, &look, &d),
                     AMK_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "unknown dimension Q"));
    ck_assert_int_eq(lookup(db, "gemm", H100, "M=x,N=2,K=3", NULL, &look, &d),
                     AMK_EINVAL);
    ck_assert_ptr_null(look);
    amk_export_db_free(db);
}
END_TEST

/* ---- amk_export_db_c_header -------------------------------------------------------------- */

START_TEST(test_amk_export_c_compiles_and_answers_like_lookup)
{
    amk_export_db *db = fixture_db();
    amk_sb h = {0}, prog = {0};
    amk_diag d;
    char path[512], cmd[2048];
    ck_assert_int_eq(amk_export_db_c_header(db, NULL, &h, &d), AMK_OK);
    snprintf(path, sizeof path, "%s/tuned.h", tmpdir);
    amk_test_write_file(path, h.p);
    amk_sb_printf(&prog, "#include \"tuned.h\"\n#include <stdio.h>\nint main(void)\n{\n"
                         "    amk_tuned_match m;\n    const amk_tuned_gemm_params *p;\n");
    for (size_t i = 0; i < NQ; i++) {
        const query *q = &queries[i];
        amk_sb_printf(&prog,
                      "    p = amk_tuned_gemm_ex(\"%s\", %lld, %lld, %lld, %s%s%s, &m);\n"
                      "    printf(\"%%s %%s %%d %%lld %%lld %%lld %%lld\\n\", m.level, m.shape, "
                      "m.nearest, p->BM, p->BN, p->BK, p->STAGES);\n",
                      q->device, q->M, q->N, q->K, q->dtype ? "\"" : "",
                      q->dtype ? q->dtype : "NULL", q->dtype ? "\"" : "");
    }
    amk_sb_printf(&prog,
                  "    p = amk_tuned_gemm(NULL, 4096, 4096, 4096, \"f32\");\n"
                  "    printf(\"null %%lld\\n\", p->BM);\n"
                  "    {\n        const amk_tuned_copy_params *c = amk_tuned_copy(\"" H100
                  "\", 1 << 20, \"f32\");\n"
                  "        printf(\"copy %%lld %%s %%lld\\n\", c->BLOCK, c->MODE, c->VEC);\n"
                  "    }\n    return 0;\n}\n");
    snprintf(path, sizeof path, "%s/prog.c", tmpdir);
    amk_test_write_file(path, prog.p);
    snprintf(cmd, sizeof cmd,
             "cd %s && cc -std=c99 -pedantic -Wall -Wextra -Werror -o prog prog.c 2>cc.log && "
             "./prog > out.txt",
             tmpdir);
    int rc = system(cmd);
    if (rc != 0) {
        char *log = NULL;
        size_t len;
        snprintf(path, sizeof path, "%s/cc.log", tmpdir);
        amk_fs_read_all(path, &log, &len, NULL);
        ck_abort_msg("compiling/running the generated header failed: %s", log ? log : "");
    }
    char *out = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/out.txt", tmpdir);
    ck_assert_int_eq(amk_fs_read_all(path, &out, &len, &d), AMK_OK);
    char *line = out, *save = NULL;
    for (size_t i = 0; i < NQ; i++) {
        const query *q = &queries[i];
        line = strtok_r(i ? NULL : out, "\n", &save);
        ck_assert_ptr_nonnull(line);
        cJSON *look = NULL;
        ck_assert_int_eq(lookup(db, "gemm", q->device, q->shape, q->dtype, &look, &d), AMK_OK);
        const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(look, "config");
        char want[512];
        snprintf(want, sizeof want, "%s %s %d %d %d %d %d", mstr(look, "level"),
                 mstr(look, "shape"), mbool(look, "nearest"), param(cfg, "BM"),
                 param(cfg, "BN"), param(cfg, "BK"), param(cfg, "STAGES"));
        ck_assert_msg(!strcmp(line, want), "query %zu: header says '%s', lookup '%s'", i, line,
                      want);
        /* and both give what the TSV says */
        char lead[128];
        snprintf(lead, sizeof lead, "%s ", q->level);
        ck_assert_msg(!strncmp(line, lead, strlen(lead)), "query %zu: %s", i, line);
        cJSON_Delete(look);
    }
    line = strtok_r(NULL, "\n", &save);
    ck_assert_str_eq(line, "null 128");
    line = strtok_r(NULL, "\n", &save);
    ck_assert_str_eq(line, "copy 256 fast 4");
    free(out);
    amk_sb_free(&h);
    amk_sb_free(&prog);
    amk_export_db_free(db);
}
END_TEST

START_TEST(test_amk_export_c_one_kernel)
{
    amk_export_db *db = fixture_db();
    amk_sb h = {0};
    amk_diag d;
    ck_assert_int_eq(amk_export_db_c_header(db, "copy", &h, &d), AMK_OK);
    ck_assert_ptr_nonnull(strstr(h.p, "amk_tuned_copy("));
    ck_assert_ptr_null(strstr(h.p, "amk_tuned_gemm"));
    amk_sb_free(&h);
    ck_assert_int_eq(amk_export_db_c_header(db, "nosuch", &h, &d), AMK_ENOENT);
    amk_sb_free(&h);
    amk_export_db_free(db);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("export");
    TCase *t = tcase_create("amk_export_build");
    tcase_add_test(t, test_amk_export_build_best_per_device_and_shape);
    tcase_add_test(t, test_amk_export_build_replayed_only_when_asked);
    tcase_add_test(t, test_amk_export_build_errors);
    suite_add_tcase(s, t);
    t = tcase_create("amk_export_tuned");
    tcase_add_test(t, test_amk_export_tuned_is_the_build_with_every_target);
    suite_add_tcase(s, t);
    t = tcase_create("amk_export_check");
    tcase_add_test(t, test_amk_export_check_malformed);
    suite_add_tcase(s, t);
    t = tcase_create("amk_export_db_read");
    tcase_add_checked_fixture(t, setup_tmp, teardown_tmp);
    tcase_add_test(t, test_amk_export_db_read_file_and_where_it_is_malformed);
    suite_add_tcase(s, t);
    t = tcase_create("amk_export_lookup");
    tcase_add_test(t, test_amk_export_lookup_levels_and_nearest);
    tcase_add_test(t, test_amk_export_lookup_bad_query);
    suite_add_tcase(s, t);
    t = tcase_create("amk_export_c");
    tcase_add_checked_fixture(t, setup_tmp, teardown_tmp);
    tcase_add_test(t, test_amk_export_c_compiles_and_answers_like_lookup);
    tcase_add_test(t, test_amk_export_c_one_kernel);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return amk_test_run(suite());
}
