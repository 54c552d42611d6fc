/* `amk export` and `amk lookup`: the tuned-config database (JSON) or C header built from
 * results files, and answers from it. The library (results/export_*.c) does the work; this
 * file parses arguments and hands it the device → vendor/arch table of the cost model. */
#include "cli_int.h"

#include <stdlib.h>
#include <string.h>

/* cost_model's target table as plain data for the results library. */
static amk_export_target *export_targets(size_t *n)
{
    int nt = amk_target_count();
    amk_export_target *t = calloc((size_t)nt + 1, sizeof *t);
    if (!t)
        return NULL;
    for (int i = 0; i < nt; i++) {
        const amk_target *x = amk_target_at(i);
        t[i].key = x->key;
        t[i].name = x->name;
        t[i].vendor = x->vendor;
        t[i].arch = x->arch;
    }
    *n = (size_t)nt;
    return t;
}

/* Library error of export/lookup → exit code: reading results files is 3, the rest 2. */
static int export_exit(int code)
{
    switch (code) {
    case AMK_ENOMEM: return CLI_EXIT_INTERNAL;
    case AMK_ETSV:
    case AMK_EIO: return CLI_EXIT_RESULTS;
    default: return CLI_EXIT_INPUT;
    }
}

int cli_cmd_export(cli_ctx *ctx, int argc, char **argv)
{
    cli_args a;
    int k, rc;
    const char *format = "json", *output = NULL, *kernel = NULL;
    int replayed = 0;
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    size_t n = 0;
    if (!paths)
        return cli_fail(ctx, CLI_EXIT_INTERNAL, "out of memory");
    cli_args_init(&a, "export", argc, argv);
    while ((k = cli_args_next(&a)) != CLI_ARG_END) {
        if (k == CLI_ARG_POS) {
            paths[n++] = a.arg;
            continue;
        }
        if (cli_common_option(ctx, &a) || cli_args_value(&a, "--format", &format) ||
            cli_args_value(&a, "--output", &output) || cli_args_value(&a, "-o", &output) ||
            cli_args_value(&a, "--kernel", &kernel))
            continue;
        if (cli_args_flag(&a, "--include-replayed")) {
            replayed = 1;
            continue;
        }
        cli_args_unknown(&a);
    }
    if (!a.err && format && strcmp(format, "json") && strcmp(format, "c"))
        cli_args_fail(&a, "--format must be json or c (got '%s')", format);
    if (!a.err && !a.help && n == 0)
        cli_args_fail(&a, "missing RESULTS.tsv (one or more)");
    if ((rc = cli_args_done(ctx, &a)) >= 0) {
        free(paths);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp(paths[i], "-") && !amk_fs_exists(paths[i])) {
            rc = cli_fail(ctx, CLI_EXIT_RESULTS, "%s: no such file", paths[i]);
            free(paths);
            return rc;
        }

    amk_diag d;
    amk_diag_clear(&d);
    amk_export_opts o = {.kernel = kernel, .include_replayed = replayed,
                         .rule = &amk_history_rule};
    amk_export_target *t = export_targets(&o.n_targets);
    o.targets = t;
    amk_export_db *db = NULL;
    int e = t ? amk_export_db_build(paths, n, &o, &db, &d) : AMK_ENOMEM;
    free(t);
    free(paths);
    if (e != AMK_OK) {
        if (!d.msg[0])
            amk_diag_set(&d, e, "%s", amk_strerror(e));
        return cli_fail_diag(ctx, export_exit(e), &d);
    }
    char *text = NULL;
    if (!strcmp(format, "c")) {
        amk_sb sb = {0};
        e = amk_export_db_c_header(db, kernel, &sb, &d);
        text = e == AMK_OK ? amk_sb_take(&sb) : NULL;
        amk_sb_free(&sb);
        if (e == AMK_OK && !text)
            e = amk_diag_set(&d, AMK_ENOMEM, "out of memory");
    } else {
        text = amk_export_db_json(db);
        if (!text)
            e = amk_diag_set(&d, AMK_ENOMEM, "out of memory printing the database");
    }
    amk_export_db_free(db);
    if (e != AMK_OK)
        return cli_fail_diag(ctx, export_exit(e), &d);
    size_t len = strlen(text);
    if (!strcmp(format, "json"))
        text[len++] = '\n'; /* over the NUL: written with its length below */
    rc = CLI_EXIT_OK;
    if (output && strcmp(output, "-")) {
        if (amk_fs_write_atomic(output, text, len, &d) != AMK_OK)
            rc = cli_fail(ctx, CLI_EXIT_INPUT, "cannot write %s: %s", output, d.msg);
    } else if (fwrite(text, 1, len, stdout) != len) {
        rc = cli_fail(ctx, CLI_EXIT_INTERNAL, "cannot write standard output");
    }
    free(text);
    return rc;
}

int cli_cmd_lookup(cli_ctx *ctx, int argc, char **argv)
{
    cli_args a;
    int k, rc;
    const char *dbpath = NULL, *device = NULL, *shape = NULL, *dtype = NULL, *kernel = NULL;
    cli_args_init(&a, "lookup", argc, argv);
    while ((k = cli_args_next(&a)) != CLI_ARG_END) {
        if (k == CLI_ARG_POS) {
            if (kernel)
                cli_args_fail(&a, "one KERNEL at most ('%s' is extra)", a.arg);
            kernel = a.arg;
            continue;
        }
        if (cli_common_option(ctx, &a) || cli_args_value(&a, "--db", &dbpath) ||
            cli_args_value(&a, "--device", &device) || cli_args_value(&a, "--shape", &shape) ||
            cli_args_value(&a, "--dtype", &dtype))
            continue;
        cli_args_unknown(&a);
    }
    if (!a.err && !a.help) {
        if (!dbpath)
            cli_args_fail(&a, "missing --db FILE");
        else if (!kernel)
            cli_args_fail(&a, "missing KERNEL");
        else if (!shape)
            cli_args_fail(&a, "missing --shape (M=..,N=..)");
    }
    if ((rc = cli_args_done(ctx, &a)) >= 0)
        return rc;

    amk_diag d;
    amk_diag_clear(&d);
    /* amk_json_parse reports a malformed file with line and column; the export library
     * then takes the text it accepted. */
    char *text = NULL;
    size_t len = 0;
    cJSON *tree = NULL;
    int re = amk_fs_read_all(dbpath, &text, &len, &d);
    if (re == AMK_OK)
        re = amk_json_parse(dbpath, text, len, &tree, &d);
    cJSON_Delete(tree);
    amk_export_db *db = NULL;
    if (re == AMK_OK)
        re = amk_export_db_parse(dbpath, text, len, &db, &d);
    free(text);
    if (re != AMK_OK)
        return cli_fail(ctx, re == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_INPUT, "--db: %s",
                        d.msg);
    char *answer = NULL;
    int e = amk_export_db_lookup(db, kernel, device, shape, dtype, &answer, &d);
    amk_export_db_free(db);
    if (e != AMK_OK) {
        amk_diag_prefix(&d, "--db %s", dbpath);
        return cli_fail_diag(ctx, export_exit(e), &d);
    }
    cJSON *out = cJSON_Parse(answer);
    free(answer);
    return cli_print_json(ctx, out);
}
