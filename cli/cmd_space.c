/* `amk list` and `amk space`: what kernels exist, and what the search space of one looks
 * like on a target (params, derived values, restrictions, raw and valid counts). */
#include "cli_int.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Above this many raw points `space` estimates the counts by sampling (unless --exact). */
#define SPACE_EXACT_LIMIT 2e6
#define SPACE_SAMPLES 200000

static double raw_size(const amk_spec *s)
{
    double n = 1;
    for (int i = 0; i < amk_spec_n_params(s); i++)
        n *= amk_spec_param_n_choices(s, i);
    return n;
}

static void fmt_count(char *out, size_t cap, double n)
{
    if (isnan(n))
        snprintf(out, cap, "?");
    else if (n < 1e15)
        snprintf(out, cap, "%.0f", n);
    else
        snprintf(out, cap, "%.3g", n);
}

int cli_cmd_list(cli_ctx *ctx, int argc, char **argv)
{
    cli_args a;
    int k, rc, json = 0;
    cli_args_init(&a, "list", argc, argv);
    while ((k = cli_args_next(&a)) != CLI_ARG_END) {
        if (k == CLI_ARG_POS) {
            cli_args_fail(&a, "unexpected argument '%s'", a.arg);
            continue;
        }
        if (cli_common_option(ctx, &a))
            continue;
        if (cli_args_flag(&a, "--json")) {
            json = 1;
            continue;
        }
        cli_args_unknown(&a);
    }
    if ((rc = cli_args_done(ctx, &a)) >= 0)
        return rc;

    amk_registry *reg;
    if ((rc = cli_registry(ctx, &reg)) != 0)
        return rc;
    /* One output per run: on a terminal people get the table alone, on stdout; otherwise
     * (piped, or --json, or --quiet) programs get the JSON, and the table goes to stderr only
     * when --tables asks for it. */
    int tty = !json && ctx->tables != 0 && isatty(STDOUT_FILENO);
    FILE *tf = tty ? stdout : ctx->tables == 1 ? stderr : NULL;
    cJSON *arr = cJSON_CreateArray();
    if (tf)
        fprintf(tf, "%-14s %-22s %-14s %6s %12s  %s\n", "KERNEL", "DIMS", "DTYPES",
                "PARAMS", "RAW SIZE", "DESCRIPTION");
    for (int i = 0; arr && i < amk_registry_count(reg); i++) {
        const amk_spec *s = amk_registry_at(reg, i);
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddItemToArray(arr, o);
        cJSON_AddStringToObject(o, "name", amk_spec_name(s));
        cJSON_AddStringToObject(o, "description", amk_spec_description(s));
        cJSON *dims = cJSON_AddArrayToObject(o, "dims");
        char dims_txt[160] = "", dt_txt[80] = "";
        size_t dl = 0, tl = 0;
        for (int j = 0; j < amk_spec_n_dims(s); j++) {
            cJSON_AddItemToArray(dims, cJSON_CreateString(amk_spec_dim_name(s, j)));
            if (dl < sizeof dims_txt)
                dl += (size_t)snprintf(dims_txt + dl, sizeof dims_txt - dl, "%s%s", j ? "," : "",
                                       amk_spec_dim_name(s, j));
        }
        cJSON *dtypes = cJSON_AddArrayToObject(o, "dtypes");
        for (int j = 0; j < amk_spec_n_dtypes(s); j++) {
            cJSON_AddItemToArray(dtypes, cJSON_CreateString(amk_spec_dtype_name(s, j)));
            if (tl < sizeof dt_txt)
                tl += (size_t)snprintf(dt_txt + tl, sizeof dt_txt - tl, "%s%s", j ? "," : "",
                                       amk_spec_dtype_name(s, j));
        }
        char shape[256];
        amk_shape sh;
        amk_spec_shape(s, 0, &sh);
        amk_shape_format(s, &sh, shape, sizeof shape);
        cJSON_AddStringToObject(o, "default_shape", shape);
        cJSON *shapes = cJSON_AddObjectToObject(o, "shapes");
        for (int j = 0; j < amk_spec_n_shapes(s); j++) {
            amk_spec_shape(s, j, &sh);
            amk_shape_format(s, &sh, shape, sizeof shape);
            cJSON_AddStringToObject(shapes, amk_spec_shape_name(s, j), shape);
        }
        cJSON_AddNumberToObject(o, "n_params", amk_spec_n_params(s));
        double raw = raw_size(s);
        cJSON_AddNumberToObject(o, "raw_size", raw);
        cJSON_AddStringToObject(o, "dir", amk_spec_dir(s));
        if (tf) {
            char rawtxt[32];
            fmt_count(rawtxt, sizeof rawtxt, raw);
            const char *desc = amk_spec_description(s);
            fprintf(tf, "%-14s %-22s %-14s %6d %12s  %.60s%s\n", amk_spec_name(s), dims_txt,
                    dt_txt, amk_spec_n_params(s), rawtxt, desc, strlen(desc) > 60 ? "..." : "");
        }
    }
    if (tty) {
        cJSON_Delete(arr);
        return CLI_EXIT_OK;
    }
    return cli_print_json(ctx, arr);
}

/* ---------- space -------------------------------------------------------------------------- */

typedef struct count_state {
    const amk_target *t;
    int64_t valid, feasible;
} count_state;

static int count_cb(const amk_config *c, void *ud)
{
    count_state *cs = ud;
    cs->valid++;
    if (amk_cost_feasible(c, cs->t, NULL) == AMK_OK)
        cs->feasible++;
    return 0;
}

/* Uniform raw samples: the valid and feasible fractions times the raw size. */
static int estimate_counts(const amk_space *sp, const amk_target *t, double *valid,
                           double *feasible)
{
    const amk_spec *s = amk_space_spec(sp);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        return AMK_ENOMEM;
    gsl_rng_set(rng, 1);
    long nv = 0, nf = 0;
    amk_config c;
    amk_config_default(s, amk_space_shape(sp), &c);
    for (long i = 0; i < SPACE_SAMPLES; i++) {
        for (int p = 0; p < amk_spec_n_params(s); p++)
            c.choice[p] = (uint8_t)gsl_rng_uniform_int(
                rng, (unsigned long)amk_spec_param_n_choices(s, p));
        if (amk_space_valid(sp, &c, NULL) == AMK_OK) {
            nv++;
            if (amk_cost_feasible(&c, t, NULL) == AMK_OK)
                nf++;
        }
    }
    gsl_rng_free(rng);
    double raw = amk_space_raw_size(sp);
    *valid = raw * (double)nv / SPACE_SAMPLES;
    *feasible = raw * (double)nf / SPACE_SAMPLES;
    return AMK_OK;
}

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "?";
}

static double jnum(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void print_space_table(const cJSON *out)
{
    const cJSON *p;
    fprintf(stderr, "kernel %s  shape %s  target %s\n", jstr(out, "kernel"), jstr(out, "shape"),
            jstr(out, "target"));
    fprintf(stderr, "%-12s %-10s %s\n", "PARAM", "DEFAULT", "CHOICES");
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(out, "params"))
    {
        char *def = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(p, "default"));
        char *ch = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(p, "choices"));
        fprintf(stderr, "%-12s %-10s %s\n", p->string, def ? def : "?", ch ? ch : "?");
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
    fmt_count(raw, sizeof raw, jnum(out, "raw_size"));
    fmt_count(valid, sizeof valid, jnum(out, "valid_count"));
    fmt_count(feas, sizeof feas, jnum(out, "feasible_count"));
    fprintf(stderr, "raw %s  valid %s  feasible %s  (%s)\n", raw, valid, feas,
            jstr(out, "counted"));
    const cJSON *def = cJSON_GetObjectItemCaseSensitive(out, "default_config");
    if (def && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(def, "valid")))
        fprintf(stderr, "default config is not valid here: %s\n", jstr(def, "reason"));
}

int cli_cmd_space(cli_ctx *ctx, int argc, char **argv)
{
    cli_args a;
    int k, rc, exact = 0;
    const char *kernel = NULL, *shape_txt = NULL;
    cli_args_init(&a, "space", argc, argv);
    while ((k = cli_args_next(&a)) != CLI_ARG_END) {
        if (k == CLI_ARG_POS) {
            if (kernel)
                cli_args_fail(&a, "unexpected argument '%s' (one KERNEL)", a.arg);
            kernel = a.arg;
            continue;
        }
        if (cli_common_option(ctx, &a) || cli_args_value(&a, "--shape", &shape_txt))
            continue;
        if (cli_args_flag(&a, "--exact")) {
            exact = 1;
            continue;
        }
        cli_args_unknown(&a);
    }
    if ((rc = cli_args_done(ctx, &a)) >= 0)
        return rc;
    if (!kernel) {
        cli_args_fail(&a, "missing KERNEL (see `amk list`)");
        return a.err;
    }

    const amk_spec *s;
    const amk_target *t;
    amk_shape sh;
    if ((rc = cli_kernel(ctx, kernel, &s)) || (rc = cli_resolve_target(ctx, &t)) ||
        (rc = cli_shape(ctx, s, shape_txt, &sh)))
        return rc;

    amk_diag d;
    amk_diag_clear(&d);
    amk_space *sp = NULL;
    int e = amk_space_create(s, &sh, &t->limits, &sp, &d);
    if (e != AMK_OK)
        return cli_fail_diag(ctx, cli_exit_for(e), &d);

    double raw = amk_space_raw_size(sp), valid, feasible;
    const char *counted;
    if (exact || raw <= SPACE_EXACT_LIMIT) {
        count_state cs = {t, 0, 0};
        e = amk_space_enumerate(sp, count_cb, &cs);
        if (e != AMK_OK) {
            amk_space_free(sp);
            return cli_fail(ctx, cli_exit_for(e), "kernel %s: enumerating the space failed: %s",
                            amk_spec_name(s), amk_strerror(e));
        }
        valid = (double)cs.valid;
        feasible = (double)cs.feasible;
        counted = "exact";
    } else {
        e = estimate_counts(sp, t, &valid, &feasible);
        if (e != AMK_OK) {
            amk_space_free(sp);
            return cli_fail(ctx, CLI_EXIT_INTERNAL, "%s", amk_strerror(e));
        }
        counted = "estimated";
    }

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
    cJSON_AddNumberToObject(out, "raw_size", raw);
    cJSON_AddNumberToObject(out, "valid_count", round(valid));
    cJSON_AddNumberToObject(out, "feasible_count", round(feasible));
    cJSON_AddStringToObject(out, "counted", counted);
    if (!strcmp(counted, "estimated"))
        cJSON_AddNumberToObject(out, "samples", SPACE_SAMPLES);

    /* Is the default config usable here? Agents start from it. */
    amk_config def;
    amk_config_default(s, &sh, &def);
    amk_diag_clear(&d);
    int ok = amk_space_valid(sp, &def, &d) == AMK_OK;
    if (ok && amk_cost_feasible(&def, t, &d) != AMK_OK)
        ok = 0;
    cJSON *dj = cJSON_AddObjectToObject(out, "default_config");
    if (dj) {
        char id[17];
        amk_config_id(&def, id);
        cJSON_AddStringToObject(dj, "config_id", id);
        cJSON_AddBoolToObject(dj, "valid", ok);
        if (!ok)
            cJSON_AddStringToObject(dj, "reason", d.msg);
    }
    amk_space_free(sp);
    if (cli_tables(ctx))
        print_space_table(out);
    return cli_print_json(ctx, out);
}
