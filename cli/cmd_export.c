/* `amk export` and `amk lookup`: the tuned-config database (JSON) or C header built from
 * results files (amk_export_tuned), and answers from it (amk_export_db_read, _lookup). The
 * library does the work; this file parses arguments and prints. Its errors come from results/
 * and common/ alone, where cli_exit_for gives export's codes: reading a results file 3, out
 * of memory 5, the rest 2. */
#include "cli_int.h"

#include <stdlib.h>
#include <string.h>

int cli_cmd_export(cli_ctx *ctx, int argc, char **argv)
{
    int rc, n, replayed = 0;
    const char *format = "json", *output = NULL, *kernel = NULL;
    cli_opt opts[] = {
        CLI_STR("--format", &format),
        CLI_STR("--output", &output),
        CLI_STR("-o", &output),
        CLI_STR("--kernel", &kernel),
        CLI_FLAG("--include-replayed", &replayed),
        CLI_END,
    };
    cli_pos pos = {NULL, -1, &n, NULL, NULL};
    if ((rc = cli_parse(ctx, argc, argv, opts, &pos)) >= 0)
        return rc;
    if (strcmp(format, "json") && strcmp(format, "c"))
        return cli_usage(ctx, "--format must be json or c (got '%s')", format);
    if (n == 0)
        return cli_usage(ctx, "missing RESULTS.tsv (one or more)");
    const char *const *paths = (const char *const *)argv + 1;
    if ((rc = cli_results_files(ctx, paths, n, 1)) != 0)
        return rc;

    amk_diag d;
    amk_diag_clear(&d);
    amk_export_db *db = NULL;
    /* The specs read rows recorded before a param joined one; specs that fail to load
     * leave the rows as recorded, not the export undone. */
    amk_registry *reg = NULL;
    int re = amk_registry_open(ctx->spec_dirs, ctx->n_spec_dirs, &reg, &d);
    if (re == AMK_ENOMEM)
        return cli_fail(ctx, CLI_EXIT_INTERNAL, "out of memory");
    if (re != AMK_OK)
        cli_warn(ctx, "warning: the kernel specs did not load (rows exported as recorded): %s",
                 d.msg);
    amk_diag_clear(&d);
    int e = amk_export_tuned(paths, (size_t)n, kernel, replayed, reg, &db, &d);
    amk_registry_free(reg);
    if (e != AMK_OK) {
        if (!d.msg[0])
            amk_diag_set(&d, e, "%s", amk_strerror(e));
        return cli_fail_diag(ctx, cli_exit_for(e), &d);
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
        return cli_fail_diag(ctx, cli_exit_for(e), &d);
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
    int rc;
    const char *dbpath = NULL, *device = NULL, *shape = NULL, *dtype = NULL, *kernel = NULL;
    cli_opt opts[] = {
        CLI_STR("--db", &dbpath),
        CLI_STR("--device", &device),
        CLI_STR("--shape", &shape),
        CLI_STR("--dtype", &dtype),
        CLI_END,
    };
    cli_pos pos = {&kernel, 1, NULL, "one KERNEL at most ('%s' is extra)", NULL};
    if ((rc = cli_parse(ctx, argc, argv, opts, &pos)) >= 0)
        return rc;
    if (!dbpath)
        return cli_usage(ctx, "missing --db FILE");
    if (!kernel)
        return cli_usage(ctx, "missing KERNEL");
    if (!shape)
        return cli_usage(ctx, "missing --shape (M=..,N=..)");

    amk_diag d;
    amk_diag_clear(&d);
    amk_export_db *db = NULL;
    int re = amk_export_db_read(dbpath, &db, &d);
    if (re != AMK_OK)
        return cli_fail(ctx, re == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_INPUT, "--db: %s",
                        d.msg);
    char *answer = NULL;
    int e = amk_export_db_lookup(db, kernel, device, shape, dtype, &answer, &d);
    amk_export_db_free(db);
    if (e != AMK_OK) {
        amk_diag_prefix(&d, "--db %s", dbpath);
        return cli_fail_diag(ctx, cli_exit_for(e), &d);
    }
    cJSON *out = cJSON_Parse(answer);
    free(answer);
    return cli_print_json(ctx, out);
}
