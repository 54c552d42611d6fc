/* `amk report`: what the results files say (the best per kernel/shape/device by the one
 * rule, counts by status, analysis statistics, SVG plots). */
#include "cli_int.h"

#include <stdlib.h>

/* The kernels: rows recorded before a param joined a spec read as today's, and the speedup
 * over each group's default config. Not cli_registry: a spec that fails to load costs the
 * upgrade and the speedup (the report says why), not the report. *reg NULL then. */
static int open_specs(cli_ctx *ctx, amk_registry **reg, amk_diag *why)
{
    amk_diag_clear(why);
    if (amk_registry_open(ctx->spec_dirs, ctx->n_spec_dirs, reg, why) == AMK_ENOMEM)
        return cli_fail(ctx, CLI_EXIT_INTERNAL, "out of memory");
    return CLI_EXIT_OK;
}

/* Collects the SVG paths amk_report_svg wrote, for the JSON or the "wrote" lines. */
static void add_written(const char *path, void *ud)
{
    cJSON_AddItemToArray(ud, cJSON_CreateString(path));
}

int cli_cmd_report(cli_ctx *ctx, int argc, char **argv)
{
    int rc, n, json = 0;
    const char *svg_dir = NULL;
    cli_opt opts[] = {CLI_FLAG("--json", &json), CLI_STR("--svg", &svg_dir), CLI_END};
    cli_pos pos = {NULL, -1, &n, NULL, "missing FILE (one or more results.tsv)"};
    if ((rc = cli_parse(ctx, argc, argv, opts, &pos)) >= 0)
        return rc;
    const char *const *paths = (const char *const *)argv + 1;
    if ((rc = cli_results_files(ctx, paths, n, 0)) != 0)
        return rc;
    amk_diag d, why;
    amk_diag_clear(&d);
    amk_registry *reg = NULL;
    if ((rc = open_specs(ctx, &reg, &why)) != CLI_EXIT_OK)
        return rc;
    amk_report *rep = NULL;
    amk_row_upgrader up = amk_registry_upgrader(reg);
    int e = amk_report_build(paths, (size_t)n, &amk_history_rule, &up, &rep, &d);
    if (e != AMK_OK) {
        amk_registry_free(reg);
        if (!d.msg[0])
            amk_diag_set(&d, e, "%s", amk_strerror(e));
        return cli_fail_diag(ctx, cli_exit_for_results(e), &d);
    }
    if (amk_report_ngroups(rep))
        amk_report_defaults(rep, reg, why.msg);
    amk_registry_free(reg);
    cJSON *written = svg_dir ? cJSON_CreateArray() : NULL;
    amk_report_written hear = {add_written, written};
    if (svg_dir && (e = amk_report_svg(rep, svg_dir, &hear, &d)) != AMK_OK) {
        cJSON_Delete(written);
        amk_report_free(rep);
        return cli_fail_diag(ctx, e == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_RESULTS, &d);
    }
    if (json) {
        if (cli_tables(ctx))
            amk_report_print(rep, stderr);
        char *text = amk_report_json(rep);
        cJSON *j = text ? cJSON_Parse(text) : NULL;
        free(text);
        if (j && written)
            cJSON_AddItemToObject(j, "svg", written);
        else
            cJSON_Delete(written);
        rc = cli_print_json(ctx, j);
    } else {
        amk_report_print(rep, stdout);
        if (written) {
            cJSON *w;
            cJSON_ArrayForEach(w, written)
                printf("wrote %s\n", w->valuestring);
        }
        cJSON_Delete(written);
        rc = CLI_EXIT_OK;
    }
    amk_report_free(rep);
    return rc;
}
