/* Helpers shared by the Check suites (tests/check_*.c): temporary folders, writing and
 * appending test files, and the runner with honest skips.
 *
 * Skips: a group of cases that needs something a host may lack (pandas, a runtime compiler,
 * two GPUs of one model) goes in its own TCase tagged with the need, and the suite names the
 * need with AMK_TEST_NEED(tag, why_not). amk_test_main runs the suite without tagged cases;
 * `check_X --needs TAG` runs only those, and exits 77 (CTest's SKIP_RETURN_CODE) with
 * "SKIP: TAG: <why>" where why_not says they cannot run here. CMakeLists.txt finds the
 * AMK_TEST_NEED lines of each suite and registers `check_X --needs TAG` as test check_X_TAG,
 * so a case that cannot run is counted as skipped, never as passed. */
#ifndef AMK_TEST_H
#define AMK_TEST_H

#include "amk_results.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- temporary folders ------------------------------------------------------------------ */

static inline int amk_test__rm_entry(const char *p, const struct stat *sb, int flag,
                                     struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

/* Makes BASE/amk-check-NAME-XXXXXX into dir (cap >= 64 bytes), or fails the case. */
static inline void amk_test__tmpdir_make_in(const char *base, char *dir, size_t cap,
                                            const char *name)
{
    snprintf(dir, cap, "%s/amk-check-%s-XXXXXX", base, name);
    ck_assert_msg(mkdtemp(dir) != NULL, "cannot make %s", dir);
}

/* A new folder under /tmp, named after the suite, in dir. */
static inline void amk_test_tmpdir_make(char *dir, size_t cap, const char *name)
{
    amk_test__tmpdir_make_in("/tmp", dir, cap, name);
}

/* The same on tmpfs (/dev/shm) when there is one: for suites that append thousands of
 * fsynced rows. */
static inline void amk_test_tmpdir_make_tmpfs(char *dir, size_t cap, const char *name)
{
    amk_test__tmpdir_make_in(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", dir, cap,
                             name);
}

/* Removes dir and everything below it (no-op for ""), and clears dir. */
static inline void amk_test_tmpdir_remove(char *dir)
{
    if (dir[0])
        nftw(dir, amk_test__rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    dir[0] = '\0';
}

/* ---- files --------------------------------------------------------------------------------- */

/* Writes text to path (replacing it), or fails the case. */
static inline void amk_test_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* Appends rows to the results file path through the library's appender, or fails the case. */
static inline void amk_test_append_rows(const char *path, const amk_row *rows, size_t n)
{
    amk_tsv *t = NULL;
    amk_diag d = {0};
    ck_assert_msg(amk_tsv_open(path, &t, &d) == AMK_OK, "%s", d.msg);
    ck_assert_msg(amk_tsv_append(t, rows, n, &d) == AMK_OK, "%s", d.msg);
    amk_tsv_close(t);
}

/* ---- the runner ---------------------------------------------------------------------------- */

typedef struct amk_test_need {
    const char *tag;
    const char *(*why_not)(void); /* NULL when the tagged cases can run here, else why not */
} amk_test_need;

/* JSON text from the library (taken: freed here) as a tree for assertions; never NULL. */
static inline cJSON *amk_test_json_tree(char *text)
{
    ck_assert_ptr_nonnull(text);
    cJSON *tree = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(tree);
    return tree;
}

/* One entry of a suite's needs table; CMakeLists.txt reads these lines (one per line). */
#define AMK_TEST_NEED(tag, why_not) {#tag, why_not}

/* Runs s: without `--needs TAG`, every case but the tagged ones; with it, only the cases
 * tagged TAG, or exit 77 with the reason when they cannot run here. Returns the exit code:
 * 0 all passed, 1 a case failed, 2 bad arguments, 77 skipped. */
static inline int amk_test_main(int argc, char **argv, Suite *s, const amk_test_need *needs,
                                size_t n_needs)
{
    const amk_test_need *only = NULL;
    char exclude[512] = "";
    SRunner *sr = srunner_create(s); /* owns s: freed on every return (LeakSanitizer) */
    if (argc == 3 && !strcmp(argv[1], "--needs")) {
        for (size_t i = 0; i < n_needs && !only; i++)
            if (!strcmp(needs[i].tag, argv[2]))
                only = &needs[i];
        if (!only) {
            fprintf(stderr, "%s: no cases need '%s'\n", argv[0], argv[2]);
            srunner_free(sr);
            return 2;
        }
        const char *why = only->why_not();
        if (why) {
            printf("SKIP: %s: %s\n", only->tag, why);
            srunner_free(sr);
            return 77;
        }
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [--needs TAG]\n", argv[0]);
        srunner_free(sr);
        return 2;
    }
    for (size_t i = 0; i < n_needs; i++)
        snprintf(exclude + strlen(exclude), sizeof exclude - strlen(exclude), "%s%s",
                 i ? " " : "", needs[i].tag);
    srunner_run_tagged(sr, NULL, NULL, only ? only->tag : NULL,
                       only || !n_needs ? NULL : exclude, CK_NORMAL);
    int ran = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (only && !ran) {
        fprintf(stderr, "%s: no case is tagged '%s'\n", argv[0], only->tag);
        return 1;
    }
    return failed ? 1 : 0;
}

/* amk_test_main for a suite without needs. */
static inline int amk_test_run(Suite *s)
{
    static char name[] = "check";
    char *argv[] = {name, NULL};
    return amk_test_main(1, argv, s, NULL, 0);
}

#endif
