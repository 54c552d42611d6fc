/* `amk import`: a search space in the tuning community's T1 format (Kernel Tuner's
 * benchmark_hub) becomes an amk kernel folder for --spec-dir. space_defs/import_t1.c does
 * the work; this file parses arguments and prints what was written. */
#include "cli_int.h"

#include <stdlib.h>
#include <string.h>

int cli_cmd_import(cli_ctx *ctx, int argc, char **argv)
{
    int rc;
    const char *input = NULL, *output = NULL, *name = NULL, *kernel = NULL;
    const char *data = NULL, *answer = NULL, *vary = NULL;
    cli_opt opts[] = {
        CLI_STR("--output", &output),
        CLI_STR("-o", &output),
        CLI_STR("--name", &name),
        CLI_STR("--kernel", &kernel),
        CLI_STR("--data", &data),
        CLI_STR("--answer", &answer),
        CLI_STR("--vary", &vary),
        CLI_END,
    };
    cli_pos pos = {&input, 1, NULL, "unexpected argument '%s' (one SPACE.json)",
                   "missing SPACE.json (a T1 space file)"};
    if ((rc = cli_parse(ctx, argc, argv, opts, &pos)) >= 0)
        return rc;
    if (!output)
        return cli_usage(ctx, "missing -o DIR (the kernel folder to write)");

    amk_diag d;
    amk_diag_clear(&d);
    if ((data || answer || vary) && !kernel)
        return cli_usage(ctx, "--data, --answer and --vary need --kernel");
    /* "A=f1,B=f2" -> {"A=f1", "B=f2"}; "P,Q" -> {"P", "Q"} */
    const char *given[3] = {data, answer, vary};
    char *lists[3];
    const char *items[3][32];
    int nitems[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++)
        lists[k] = given[k] ? strdup(given[k]) : NULL;
    rc = -1;
    for (int k = 0; k < 3 && rc < 0; k++) {
        if (given[k] && !lists[k])
            rc = cli_fail(ctx, CLI_EXIT_INTERNAL, "out of memory");
        for (char *save = NULL, *t = lists[k] ? strtok_r(lists[k], ",", &save) : NULL;
             t && rc < 0; t = strtok_r(NULL, ",", &save)) {
            if (nitems[k] == 32)
                rc = cli_usage(ctx, "at most 32 entries in --data / --answer / --vary");
            else
                items[k][nitems[k]++] = t;
        }
    }
    int e = AMK_OK;
    if (rc < 0) {
        amk_import_opts io = {.name = name, .kernel_file = kernel, .data = items[0],
                              .ndata = nitems[0], .answers = items[1], .nanswers = nitems[1],
                              .vary = items[2], .nvary = nitems[2]};
        e = amk_import_t1(input, output, &io, &d);
    }
    for (int k = 0; k < 3; k++)
        free(lists[k]);
    if (rc >= 0)
        return rc;
    if (e != AMK_OK)
        return cli_fail_diag(ctx, e == AMK_ENOMEM ? CLI_EXIT_INTERNAL : CLI_EXIT_INPUT, &d);
    amk_spec *s = NULL;
    if ((e = amk_spec_load(output, &s, &d)) != AMK_OK)
        return cli_fail_diag(ctx, CLI_EXIT_INTERNAL, &d);
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kernel", amk_spec_name(s));
    cJSON_AddStringToObject(out, "dir", output);
    cJSON_AddItemToObject(out, "kernel_source",
                          kernel ? cJSON_CreateString(kernel) : cJSON_CreateNull());
    cJSON *params = cJSON_AddArrayToObject(out, "params");
    double raw = amk_spec_raw_size(s);
    for (int i = 0; i < amk_spec_n_params(s); i++)
        cJSON_AddItemToArray(params, cJSON_CreateString(amk_spec_param_name(s, i)));
    cJSON_AddNumberToObject(out, "raw_size", raw);
    cJSON_AddNumberToObject(out, "restrictions", amk_spec_n_restrictions(s));
    if (cli_tables(ctx))
        fprintf(stderr, "imported %s into %s: %d params, %.0f raw points (amk space %s "
                "--spec-dir %s)\n", amk_spec_name(s), output, amk_spec_n_params(s), raw,
                amk_spec_name(s), output);
    amk_spec_free(s);
    return cli_print_json(ctx, out);
}
