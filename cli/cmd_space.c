/* `amk list` and `amk space`: what kernels exist, and what the search space of one looks
 * like on a target (params, derived values, restrictions, raw and valid counts). */
#include "cli_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fmt_count(char *out, size_t cap, double n)
{
    if (isnan(n))
        snprintf(out, cap, "?");
    else if (n < 1e15)
        snprintf(out, cap, "%.0f", n);
    else
        snprintf(out, cap, "%.3g", n);
}

/* The name, dims and dtypes columns of `amk list`'s table for one kernel. */
static void list_cells(const amk_spec *s, char dims[160], char dtypes[80])
{
    size_t dl = 0, tl = 0;
    dims[0] = dtypes[0] = '\0';
    for (int j = 0; j < amk_spec_n_dims(s) && dl < 160; j++)
        dl += (size_t)snprintf(dims + dl, 160 - dl, "%s%s", dl ? "," : "",
                               amk_spec_dim_name(s, j));
    for (int j = 0; j < amk_spec_n_dtypes(s) && tl < 80; j++)
        tl += (size_t)snprintf(dtypes + tl, 80 - tl, "%s%s", tl ? "," : "",
                               amk_spec_dtype_name(s, j));
}

/* Column widths of the text columns: each as wide as its longest cell (names like
 * gemm_hopper_fp8 must not push a row's columns out of line). */
typedef struct list_widths {
    int name, dims, dtypes;
} list_widths;

static void list_widen(list_widths *w, const amk_spec *s)
{
    char dims[160], dtypes[80];
    list_cells(s, dims, dtypes);
    int n = (int)strlen(amk_spec_name(s)), m = (int)strlen(dims), k = (int)strlen(dtypes);
    w->name = n > w->name ? n : w->name;
    w->dims = m > w->dims ? m : w->dims;
    w->dtypes = k > w->dtypes ? k : w->dtypes;
}

/* One kernel's line of `amk list`'s table. */
static void print_list_row(FILE *tf, const amk_spec *s, const list_widths *w)
{
    char dims[160], dtypes[80], raw[32];
    list_cells(s, dims, dtypes);
    fmt_count(raw, sizeof raw, amk_spec_raw_size(s));
    const char *desc = amk_spec_description(s);
    fprintf(tf, "%-*s %-*s %-*s %6d %12s  %.60s%s\n", w->name, amk_spec_name(s), w->dims, dims,
            w->dtypes, dtypes, amk_spec_n_params(s), raw, desc, strlen(desc) > 60 ? "..." : "");
}

int cli_cmd_list(cli_ctx *ctx, int argc, char **argv)
{
    int rc, json = 0;
    cli_opt opts[] = {CLI_FLAG("--json", &json), CLI_END};
    if ((rc = cli_parse(ctx, argc, argv, opts, NULL)) >= 0)
        return rc;

    amk_registry *reg = NULL;
    if ((rc = cli_registry(ctx, &reg)) != 0)
        return rc;
    /* One output per run: on a terminal people get the table alone, on stdout; otherwise
     * (piped, or --json, or --quiet) programs get the JSON, and the table goes to stderr only
     * when --tables asks for it. */
    int tty = !json && ctx->tables != 0 && isatty(STDOUT_FILENO);
    FILE *tf = tty ? stdout : ctx->tables == 1 ? stderr : NULL;
    cJSON *arr = cJSON_CreateArray();
    list_widths w = {14, 22, 14};
    for (int i = 0; tf && i < amk_registry_count(reg); i++)
        list_widen(&w, amk_registry_at(reg, i));
    if (tf)
        fprintf(tf, "%-*s %-*s %-*s %6s %12s  %s\n", w.name, "KERNEL", w.dims, "DIMS", w.dtypes,
                "DTYPES", "PARAMS", "RAW SIZE", "DESCRIPTION");
    for (int i = 0; arr && i < amk_registry_count(reg); i++) {
        const amk_spec *s = amk_registry_at(reg, i);
        cJSON *o = amk_spec_summary_json(s);
        if (!o)
            break;
        cJSON_AddItemToArray(arr, o);
        if (tf)
            print_list_row(tf, s, &w);
    }
    if (tty) {
        cJSON_Delete(arr);
        return CLI_EXIT_OK;
    }
    return cli_print_json(ctx, arr);
}

/* ---------- space -------------------------------------------------------------------------- */

/* `amk space`'s table: the params, derived values and restrictions as the JSON out shows
 * them (choices may be labels), then the counts n. */
static void print_space_table(const cJSON *out, const amk_spec *s, const char *shape,
                              const amk_target *t, const amk_space_counts *n)
{
    const cJSON *p;
    fprintf(stderr, "kernel %s  shape %s  target %s\n", amk_spec_name(s), shape, t->key);
    /* the name and default columns as wide as their longest cell (filter_height) */
    int wn = 12, wd = 10;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(out, "params"))
    {
        char *def = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(p, "default"));
        int ln = (int)strlen(p->string), ld = def ? (int)strlen(def) : 1;
        wn = ln > wn ? ln : wn;
        wd = ld > wd ? ld : wd;
        free(def);
    }
    fprintf(stderr, "%-*s %-*s %s\n", wn, "PARAM", wd, "DEFAULT", "CHOICES");
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(out, "params"))
    {
        char *def = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(p, "default"));
        char *ch = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(p, "choices"));
        fprintf(stderr, "%-*s %-*s %s\n", wn, p->string, wd, def ? def : "?", ch ? ch : "?");
        free(def);
        free(ch);
    }
    const cJSON *derived = cJSON_GetObjectItemCaseSensitive(out, "derived");
    if (cJSON_GetArraySize(derived) > 0) {
        fprintf(stderr, "derived:\n");
        cJSON_ArrayForEach(p, derived)
            if (cJSON_IsString(p))
                fprintf(stderr, "  %s = %s\n", p->string, p->valuestring);
    }
    const cJSON *restr = cJSON_GetObjectItemCaseSensitive(out, "restrictions");
    if (cJSON_GetArraySize(restr) > 0) {
        fprintf(stderr, "restrictions:\n");
        cJSON_ArrayForEach(p, restr)
            if (cJSON_IsString(p))
                fprintf(stderr, "  %s\n", p->valuestring);
    }
    char raw[32], valid[32], feas[32];
    fmt_count(raw, sizeof raw, n->raw);
    fmt_count(valid, sizeof valid, round(n->valid));
    fmt_count(feas, sizeof feas, round(n->feasible));
    fprintf(stderr, "raw %s  valid %s  feasible %s  (%s)\n", raw, valid, feas,
            n->exact ? "exact" : "estimated");
    if (!n->default_ok)
        fprintf(stderr, "default config is not valid here: %s\n", n->default_reason);
}

int cli_cmd_space(cli_ctx *ctx, int argc, char **argv)
{
    int rc, exact = 0;
    const char *kernel = NULL, *shape_txt = NULL, *dtype = NULL;
    cli_opt opts[] = {CLI_STR("--shape", &shape_txt), CLI_STR("--dtype", &dtype),
                      CLI_FLAG("--exact", &exact), CLI_END};
    cli_pos pos = CLI_ONE_KERNEL(&kernel);
    if ((rc = cli_parse(ctx, argc, argv, opts, &pos)) >= 0)
        return rc;

    const amk_spec *s;
    const amk_target *t;
    amk_shape sh;
    if ((rc = cli_kernel(ctx, kernel, &s)) || (rc = cli_resolve_target(ctx, &t)) ||
        (rc = cli_shape(ctx, s, shape_txt, dtype, &sh)))
        return rc;

    amk_diag d;
    amk_diag_clear(&d);
    amk_space *sp = NULL;
    int e = amk_space_create(s, &sh, &t->limits, &sp, &d);
    if (e != AMK_OK)
        return cli_fail_diag(ctx, cli_exit_for(e), &d);

    amk_space_counts n;
    e = amk_space_size_on(sp, t, exact, &n, &d);
    amk_space_free(sp);
    if (e != AMK_OK)
        return cli_fail_diag(ctx, cli_exit_for(e), &d);

    char shape[256];
    amk_shape_format(s, &sh, shape, sizeof shape);
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kernel", amk_spec_name(s));
    cJSON_AddStringToObject(out, "shape", shape);
    cJSON_AddStringToObject(out, "target", t->key);
    cJSON *ss = amk_space_to_json(s);
    if (ss) {
        static const char *const keys[] = {"params", "derived", "restrictions"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            cJSON *item = cJSON_DetachItemFromObjectCaseSensitive(ss, keys[i]);
            if (item)
                cJSON_AddItemToObject(out, keys[i], item);
        }
        cJSON_Delete(ss);
    }
    cJSON_AddNumberToObject(out, "raw_size", n.raw);
    cJSON_AddNumberToObject(out, "valid_count", round(n.valid));
    cJSON_AddNumberToObject(out, "feasible_count", round(n.feasible));
    cJSON_AddStringToObject(out, "counted", n.exact ? "exact" : "estimated");
    if (!n.exact)
        cJSON_AddNumberToObject(out, "samples", (double)n.samples);
    /* Is the default config usable here? Agents start from it. */
    cJSON *dj = cJSON_AddObjectToObject(out, "default_config");
    if (dj) {
        cJSON_AddStringToObject(dj, "config_id", n.default_id);
        cJSON_AddBoolToObject(dj, "valid", n.default_ok);
        if (!n.default_ok)
            cJSON_AddStringToObject(dj, "reason", n.default_reason);
    }
    if (cli_tables(ctx))
        print_space_table(out, s, shape, t, &n);
    return cli_print_json(ctx, out);
}
