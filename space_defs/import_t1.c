/* amk import: turns a search space in the tuning community's T1 format (Kernel Tuner's
 * benchmark_hub) into an amk kernel folder. Values and conditions are the Python subset of
 * pyexpr.c; the folder is built beside DIR, loaded back with amk_spec_load and only then
 * renamed onto DIR, so a failed import leaves nothing behind. The kernel section (--kernel):
 * import_t1_kernel.c. */
#include "import_t1_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IMPORT_CHECK_MAX 4000000 /* combinations tried to prove a condition's '/' exact */


static const char *const dim_names[3] = {"problem_size_x", "problem_size_y", "problem_size_z"};

int amk__imp_param_index(const importer *im, const char *name)
{
    for (int i = 0; i < im->nparams; i++)
        if (!strcmp(im->params[i].name, name))
            return i;
    return -1;
}

/* Names in the conditions checked at import: params (bound to one value each) and
 * ProblemSize. */
static int lookup(void *ud, const char *name, py_val *out)
{
    importer *im = ud;
    memset(out, 0, sizeof *out);
    if (!strcmp(name, "ProblemSize") || !strcmp(name, "problem_size")) {
        out->kind = PY_V_LIST;
        if (!(out->ints = malloc(3 * sizeof *out->ints)))
            return AMK_ENOMEM;
        memcpy(out->ints, im->problem, (size_t)im->ndims * sizeof *out->ints);
        out->n = (size_t)im->ndims;
        return AMK_OK;
    }
    int i = amk__imp_param_index(im, name);
    if (i < 0 || im->params[i].vals.strs)
        return AMK_ENOENT;
    out->kind = PY_V_INT;
    out->i = im->env[i];
    return AMK_OK;
}

int amk__imp_fail(importer *im, int code, const char *where, const char *fmt, ...)
{
    char m[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    return amk_diag_set(im->d, code, "%s: %s%s%s", im->path, where ? where : "", where ? ": " : "",
                        m);
}

static const cJSON *get_path(const cJSON *root, const char *a, const char *b)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, a);
    return b ? cJSON_GetObjectItemCaseSensitive(j, b) : j;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Values: a string holding a Python expression that gives a list (or a JSON array). */
static int load_values(importer *im, imp_param *p, const cJSON *vals, const char *where)
{
    if (cJSON_IsArray(vals)) {
        /* a JSON array: the same checks through its text */
        char *txt = cJSON_PrintUnformatted(vals);
        if (!txt)
            return amk__imp_fail(im, AMK_ENOMEM, where, "out of memory");
        cJSON *s = cJSON_CreateString(txt);
        free(txt);
        if (!s)
            return amk__imp_fail(im, AMK_ENOMEM, where, "out of memory");
        int rc = load_values(im, p, s, where);
        cJSON_Delete(s);
        return rc;
    }
    if (!cJSON_IsString(vals))
        return amk__imp_fail(im, AMK_ESPEC, where, "expected a string holding a Python list");
    py_node *n = NULL;
    amk_diag pd = {0};
    int rc = amk_py_parse(vals->valuestring, &n, &pd);
    if (!rc)
        rc = amk_py_eval(n, vals->valuestring, NULL, NULL, &p->vals, &pd);
    amk_py_free(n);
    if (rc)
        return amk__imp_fail(im, rc == AMK_ENOMEM ? AMK_ENOMEM : AMK_ESPEC, where, "%s", pd.msg);
    if (p->vals.kind != PY_V_LIST)
        return amk__imp_fail(im, AMK_ESPEC, where, "'%s' is not a list", vals->valuestring);
    if (p->vals.n < 1 || p->vals.n > AMK_MAX_CHOICES)
        return amk__imp_fail(im, AMK_ESPEC, where,
                             "'%s' gives %zu values; amk takes 1 to %d per param",
                             vals->valuestring, p->vals.n, AMK_MAX_CHOICES);
    if (p->vals.strs) {
        for (size_t i = 0; i < p->vals.n; i++) {
            const char *s = p->vals.strs[i];
            size_t len = strlen(s);
            int ok = len > 0 && len < AMK_NAME_MAX;
            for (const char *c = s; *c; c++)
                if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.')
                    ok = 0;
            if (!ok)
                return amk__imp_fail(im, AMK_ESPEC, where,
                                     "string value '%s' cannot be an amk enum label "
                                     "(1 to %d letters, digits, '_', '-', '.')", s, AMK_NAME_MAX - 1);
            for (size_t j = 0; j < i; j++)
                if (!strcmp(p->vals.strs[j], s))
                    return amk__imp_fail(im, AMK_ESPEC, where, "value '%s' is listed twice", s);
        }
        return AMK_OK;
    }
    for (size_t i = 0; i < p->vals.n; i++) {
        if (p->vals.ints[i] < INT32_MIN || p->vals.ints[i] > INT32_MAX)
            return amk__imp_fail(im, AMK_ESPEC, where, "value %lld is outside the int32 range",
                                 (long long)p->vals.ints[i]);
        for (size_t j = 0; j < i; j++)
            if (p->vals.ints[j] == p->vals.ints[i])
                return amk__imp_fail(im, AMK_ESPEC, where, "value %lld is listed twice (amk params "
                                     "have distinct values)", (long long)p->vals.ints[i]);
    }
    return AMK_OK;
}

static int load_params(importer *im)
{
    const cJSON *tp = get_path(im->root, "ConfigurationSpace", "TuningParameters");
    if (!cJSON_IsArray(tp) || cJSON_GetArraySize(tp) < 1)
        return amk__imp_fail(im, AMK_ESPEC, "ConfigurationSpace.TuningParameters",
                             "expected a non-empty array");
    if (cJSON_GetArraySize(tp) > AMK_MAX_PARAMS)
        return amk__imp_fail(im, AMK_ESPEC, "ConfigurationSpace.TuningParameters", "%d params; amk "
                             "takes at most %d", cJSON_GetArraySize(tp), AMK_MAX_PARAMS);
    int i = 0;
    for (const cJSON *t = tp->child; t; t = t->next, i++) {
        char where[128];
        snprintf(where, sizeof where, "ConfigurationSpace.TuningParameters[%d]", i);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "Name");
        if (!cJSON_IsString(name) || !name->valuestring[0] ||
            strlen(name->valuestring) >= AMK_NAME_MAX)
            return amk__imp_fail(im, AMK_ESPEC, where, "Name: expected a non-empty string");
        if (amk__imp_param_index(im, name->valuestring) >= 0)
            return amk__imp_fail(im, AMK_ESPEC, where, "param '%s' is declared twice",
                                 name->valuestring);
        imp_param *p = &im->params[im->nparams++];
        snprintf(p->name, sizeof p->name, "%s", name->valuestring);
        snprintf(where, sizeof where, "ConfigurationSpace.TuningParameters[%d] (%s).Values", i,
                 p->name);
        int rc = load_values(im, p, cJSON_GetObjectItemCaseSensitive(t, "Values"), where);
        if (rc)
            return rc;
        /* Default: a value, or a one-item list of it. */
        const cJSON *def = cJSON_GetObjectItemCaseSensitive(t, "Default");
        if (cJSON_IsArray(def) && cJSON_GetArraySize(def) == 1)
            def = def->child;
        p->def = -1;
        for (size_t k = 0; k < p->vals.n; k++) {
            if (p->vals.strs ? cJSON_IsString(def) && !strcmp(def->valuestring, p->vals.strs[k])
                             : cJSON_IsNumber(def) && def->valuedouble == (double)p->vals.ints[k])
                p->def = (int)k;
        }
        if (p->def < 0) {
            char *txt = def ? cJSON_PrintUnformatted(def) : NULL;
            amk_log(AMK_LOG_WARN, "%s: param %s: Default %s is not one of its values; the "
                    "first value is the default", im->path, p->name, txt ? txt : "(none)");
            free(txt);
            p->def = 0;
        }
        if (!p->vals.strs) {
            int64_t dv = p->vals.ints[p->def];
            qsort(p->vals.ints, p->vals.n, sizeof *p->vals.ints, cmp_i64);
            for (size_t k = 0; k < p->vals.n; k++)
                if (p->vals.ints[k] == dv)
                    p->def = (int)k;
        }
    }
    return AMK_OK;
}

typedef struct used_set {
    importer *im;
    unsigned char used[AMK_MAX_PARAMS];
} used_set;

static void mark_name(void *ud, const char *name)
{
    used_set *u = ud;
    int i = amk__imp_param_index(u->im, name);
    if (i >= 0)
        u->used[i] = 1;
}

/* Params pass through under their own names; anything else is not a condition's. */
static int cond_leaf(void *ud, const py_node *n, const char *src, amk_sb *sb, amk_diag *d)
{
    importer *im = ud;
    if (n->kind == PY_NAME) {
        int i = amk__imp_param_index(im, n->str);
        if (i < 0)
            return amk_diag_set(d, AMK_EEXPR, "unknown name '%s' (not a tuning parameter) at "
                                "column %zu in '%s'", n->str, n->col + 1, src);
        if (im->params[i].vals.strs)
            return amk_diag_set(d, AMK_EEXPR, "param '%s' has string values; conditions on "
                                "string params are not supported (column %zu in '%s')", n->str,
                                n->col + 1, src);
        amk_sb_printf(sb, "%s", n->str);
        return AMK_OK;
    }
    return AMK_ENOENT;
}

/* Python gives a float for an inexact '/' or a negative '**' exponent, which amk's integers
 * cannot follow: every combination of the params the condition reads is tried, and an
 * import that would need a float is refused, naming the combination. */
static int check_integral(importer *im, const py_node *n, const char *src, const char *where,
                          int must)
{
    used_set u = {.im = im};
    amk_py_names(n, mark_name, &u);
    int idx[AMK_MAX_PARAMS], m = 0;
    double combos = 1;
    for (int i = 0; i < im->nparams; i++)
        if (u.used[i]) {
            idx[m++] = i;
            combos *= (double)im->params[i].vals.n;
        }
    if (combos > IMPORT_CHECK_MAX && !must)
        return AMK_OK; /* only * + - << can overflow here: checked where affordable */
    if (combos > IMPORT_CHECK_MAX)
        return amk__imp_fail(im, AMK_ESPEC, where,
                             "'%s' uses '/' or '**' over %.0f combinations of its "
                             "params; amk can prove it integral over at most %d", src, combos,
                             IMPORT_CHECK_MAX);
    size_t pos[AMK_MAX_PARAMS] = {0};
    for (;;) {
        for (int k = 0; k < m; k++)
            im->env[idx[k]] = im->params[idx[k]].vals.ints[pos[k]];
        py_val v = {0};
        amk_diag ed = {0};
        int rc = amk_py_eval(n, src, lookup, im, &v, &ed);
        amk_py_val_clear(&v);
        /* a zero divisor makes the config invalid in amk as Python raises; a float or the
         * big integer Python computes past 64 bits cannot be followed */
        if (rc == AMK_EEXPR || rc == AMK_ENOMEM || rc == AMK_EOVERFLOW) {
            char at[512] = "";
            size_t len = 0;
            for (int k = 0; k < m && len < sizeof at; k++)
                len += (size_t)snprintf(at + len, sizeof at - len, "%s%s=%lld", k ? ", " : "",
                                        im->params[idx[k]].name, (long long)im->env[idx[k]]);
            return amk__imp_fail(im, rc == AMK_ENOMEM ? AMK_ENOMEM : AMK_ESPEC, where,
                                 "%s%s (with %s)", ed.msg,
                                 rc == AMK_EOVERFLOW ? "; Python computes the big integer, "
                                                       "amk's 64-bit integers cannot follow"
                                                     : "", at);
        }
        int k = m - 1;
        while (k >= 0 && ++pos[k] == im->params[idx[k]].vals.n)
            pos[k--] = 0;
        if (k < 0)
            return AMK_OK;
    }
}

/* A condition's "Parameters" names the params Kernel Tuner hands it: each must be one. */
static int check_parameters(importer *im, const cJSON *c, int i)
{
    char where[96];
    snprintf(where, sizeof where, "ConfigurationSpace.Conditions[%d].Parameters", i);
    const cJSON *ps = cJSON_IsObject(c) ? cJSON_GetObjectItemCaseSensitive(c, "Parameters") : NULL;
    if (!ps)
        return AMK_OK;
    if (!cJSON_IsArray(ps))
        return amk__imp_fail(im, AMK_ESPEC, where, "expected an array of parameter names");
    for (const cJSON *p = ps->child; p; p = p->next) {
        if (!cJSON_IsString(p))
            return amk__imp_fail(im, AMK_ESPEC, where, "expected an array of parameter names");
        if (amk__imp_param_index(im, p->valuestring) < 0)
            return amk__imp_fail(im, AMK_ESPEC, where, "'%s' is not a tuning parameter",
                                 p->valuestring);
    }
    return AMK_OK;
}

/* Conditions -> restrictions (amk text). */
static int load_conditions(importer *im, cJSON *out)
{
    const cJSON *cs = get_path(im->root, "ConfigurationSpace", "Conditions");
    if (!cs)
        return AMK_OK;
    if (!cJSON_IsArray(cs))
        return amk__imp_fail(im, AMK_ESPEC, "ConfigurationSpace.Conditions", "expected an array");
    if (cJSON_GetArraySize(cs) > AMK__MAX_RESTRICT)
        return amk__imp_fail(im, AMK_ESPEC, "ConfigurationSpace.Conditions",
                             "%d conditions; amk takes "
                             "at most %d", cJSON_GetArraySize(cs), AMK__MAX_RESTRICT);
    int i = 0;
    for (const cJSON *c = cs->child; c; c = c->next, i++) {
        char where[96];
        snprintf(where, sizeof where, "ConfigurationSpace.Conditions[%d].Expression", i);
        const cJSON *e = cJSON_IsString(c) ? c : cJSON_GetObjectItemCaseSensitive(c, "Expression");
        if (!cJSON_IsString(e))
            return amk__imp_fail(im, AMK_ESPEC, where,
                                 "expected a string holding a Python expression");
        const char *src = e->valuestring;
        py_node *n = NULL;
        char *text = NULL;
        amk_diag pd = {0};
        int rc = amk_py_parse(src, &n, &pd);
        if (!rc)
            rc = amk_py_to_amk(n, src, 1, cond_leaf, im, &text, &pd);
        if (rc) {
            amk_py_free(n);
            return amk__imp_fail(im, rc == AMK_ENOMEM ? AMK_ENOMEM : AMK_ESPEC, where, "%s",
                                 pd.msg);
        }
        if (!rc)
            rc = check_parameters(im, c, i);
        if (!rc)
            rc = check_integral(im, n, src, where, amk_py_may_float(n));
        amk_py_free(n);
        if (!rc && !cJSON_AddItemToArray(out, cJSON_CreateString(text)))
            rc = amk__imp_fail(im, AMK_ENOMEM, where, "out of memory");
        free(text);
        if (rc)
            return rc;
    }
    return AMK_OK;
}

/* How many conditions are false (or cannot be evaluated) at im->env. */
static int conds_false(importer *im, py_node *const *conds, const char *const *srcs, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        py_val v = {0};
        amk_diag ed = {0};
        int rc = amk_py_eval(conds[i], srcs[i], lookup, im, &v, &ed);
        int truth = !rc && ((v.kind == PY_V_INT && v.i != 0) || (v.kind != PY_V_INT && v.n));
        amk_py_val_clear(&v);
        bad += !truth;
    }
    return bad;
}

/* With --kernel the default config is the reference, so it must be valid. A T1 default
 * that breaks conditions (hotspot_milo: loop_unroll_factor_t 2 with temporal_tiling_factor
 * 1; dedispersion_milo: tile_stride_x 1 with tile_size_x 1) is moved, one param at a time,
 * by the move that leaves the fewest false conditions (then the nearest value, then the
 * last param in T1 order), with a warning per move. When no move helps it stays, and the
 * import is refused later with the reason. */
static int fix_default(importer *im)
{
    const cJSON *cs = get_path(im->root, "ConfigurationSpace", "Conditions");
    py_node *conds[AMK__MAX_RESTRICT] = {0};
    const char *srcs[AMK__MAX_RESTRICT];
    int n = 0;
    for (const cJSON *c = cs ? cs->child : NULL; c && n < AMK__MAX_RESTRICT; c = c->next) {
        const cJSON *e = cJSON_IsString(c) ? c : cJSON_GetObjectItemCaseSensitive(c, "Expression");
        amk_diag pd = {0};
        if (cJSON_IsString(e) && amk_py_parse(e->valuestring, &conds[n], &pd) == AMK_OK)
            srcs[n++] = e->valuestring;
    }
    for (int i = 0; i < im->nparams; i++)
        if (im->params[i].vals.strs) /* string params: no kernel import (refused later) */
            goto out;
    for (int i = 0; i < im->nparams; i++)
        im->env[i] = im->params[i].vals.ints[im->params[i].def];
    for (int round = 0; round < im->nparams; round++) {
        int bad = conds_false(im, conds, srcs, n);
        if (bad == 0)
            break;
        int best_p = -1;
        long best_k = 0, best_dist = 0;
        for (int i = 0; i < im->nparams; i++) {
            imp_param *p = &im->params[i];
            for (long k = 0; k < (long)p->vals.n; k++) {
                if (k == p->def)
                    continue;
                im->env[i] = p->vals.ints[k];
                int b = conds_false(im, conds, srcs, n);
                long dist = labs(k - p->def);
                if (b < bad || (b == bad && best_p >= 0 && dist <= best_dist)) {
                    bad = b;
                    best_p = i, best_k = k, best_dist = dist;
                }
            }
            im->env[i] = p->vals.ints[p->def];
        }
        if (best_p < 0)
            break;
        imp_param *p = &im->params[best_p];
        amk_log(AMK_LOG_WARN, "%s: the T1 default config is not valid; with --kernel the "
                "default is the reference, so %s moves from %lld to %lld", im->path, p->name,
                (long long)p->vals.ints[p->def], (long long)p->vals.ints[best_k]);
        p->def = (int)best_k;
        im->env[best_p] = p->vals.ints[best_k];
    }
out:
    for (int i = 0; i < n; i++)
        amk_py_free(conds[i]);
    return AMK_OK;
}

static int load_problem(importer *im)
{
    const cJSON *ps = get_path(im->root, "KernelSpecification", "ProblemSize");
    if (!ps) {
        /* a space without a launch description: one dim of size 1 */
        im->ndims = 1;
        im->problem[0] = 1;
    } else {
        if (cJSON_IsNumber(ps)) {
            im->ndims = 1;
            im->problem[0] = (int64_t)ps->valuedouble;
        } else if (cJSON_IsArray(ps) && cJSON_GetArraySize(ps) >= 1 &&
                   cJSON_GetArraySize(ps) <= 3) {
            for (const cJSON *c = ps->child; c; c = c->next) {
                if (!cJSON_IsNumber(c) || c->valuedouble != (double)(int64_t)c->valuedouble)
                    return amk__imp_fail(im, AMK_ESPEC, "KernelSpecification.ProblemSize",
                                         "expected "
                                         "integers (sizes given by expressions are not supported)");
                im->problem[im->ndims++] = (int64_t)c->valuedouble;
            }
        } else
            return amk__imp_fail(im, AMK_ESPEC, "KernelSpecification.ProblemSize",
                                 "expected 1 to 3 "
                                 "integers");
    }
    for (int i = 0; i < im->ndims; i++) {
        if (im->problem[i] < 1 || im->problem[i] > INT32_MAX)
            return amk__imp_fail(im, AMK_ESPEC, "KernelSpecification.ProblemSize",
                                 "%lld is not a size "
                                 "(1 to 2^31-1)", (long long)im->problem[i]);
        snprintf(im->dims[i], sizeof im->dims[i], "%s", dim_names[i]);
        if (amk__imp_param_index(im, dim_names[i]) >= 0)
            return amk__imp_fail(im, AMK_ESPEC, "KernelSpecification.ProblemSize",
                                 "a tuning parameter "
                                 "is named '%s', the name amk gives this dim", dim_names[i]);
    }
    return AMK_OK;
}

/* The kernel name from the file name: lower case, [a-z0-9_], starting with a letter. */
static void default_name(const char *path, char *out, size_t cap)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t k = 0;
    if (!isalpha((unsigned char)b[0]) && cap > 3) {
        memcpy(out, "t1_", 3);
        k = 3;
    }
    for (const char *c = b; *c && *c != '.' && k + 1 < cap; c++)
        out[k++] = isalnum((unsigned char)*c) ? (char)tolower((unsigned char)*c) : '_';
    out[k] = '\0';
}

/* ---------- writing the folder ------------------------------------------------------------ */

static int write_file(const char *dir, const out_file *of, amk_diag *d)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, of->name);
    if (of->src && of->link && link(of->src, path) == 0)
        return AMK_OK; /* another filesystem, or no links there: copied below */
    FILE *in = of->src ? fopen(of->src, "rb") : NULL;
    if (of->src && !in)
        return amk_diag_set(d, AMK_EIO, "cannot read %s: %s", of->src, strerror(errno));
    FILE *f = fopen(path, "wb");
    if (!f) {
        if (in)
            fclose(in);
        return amk_diag_set(d, AMK_EIO, "cannot write %s: %s", path, strerror(errno));
    }
    int ok = 1;
    if (in) { /* a data file: copied as it is */
        char buf[1 << 16];
        size_t n;
        while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
            ok = fwrite(buf, 1, n, f) == n;
        ok = ok && !ferror(in);
        fclose(in);
    } else {
        size_t len = strlen(of->text);
        ok = fwrite(of->text, 1, len, f) == len;
    }
    ok = fclose(f) == 0 && ok;
    return ok ? AMK_OK : amk_diag_set(d, AMK_EIO, "cannot write %s: %s", path, strerror(errno));
}

static void remove_tree(const char *dir, const out_file *files, int n)
{
    char path[4096];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        unlink(path);
    }
    rmdir(dir);
}

static int stop_at_first(const amk_config *c, void *ud)
{
    (void)c;
    *(int *)ud = 1;
    return 1;
}

/* Conditions no config satisfies leave Kernel Tuner an empty space and amk a spec every
 * search fails on ("no valid config"): refused. Asked only when the default config is not
 * valid, and only of a space small enough to enumerate (else the warning stands). */
static int check_satisfiable(importer *im, const amk_spec *s)
{
    amk_space *sp = NULL;
    amk_diag sd = {0};
    if (amk_space_create(s, NULL, NULL, &sp, &sd) != AMK_OK)
        return AMK_OK; /* the loader's errors are reported where the spec is used */
    double raw = amk_space_raw_size(sp);
    int found = 0, rc = AMK_OK;
    if (raw <= IMPORT_CHECK_MAX && amk_space_enumerate(sp, stop_at_first, &found) == AMK_OK &&
        !found)
        rc = amk__imp_fail(im, AMK_ESPEC, "ConfigurationSpace.Conditions",
                           "no config satisfies the conditions (all %.0f combinations of the "
                           "values tried): the space is empty", raw);
    amk_space_free(sp);
    return rc;
}

/* Writes the files into a fresh folder beside out_dir, checks it loads, renames it. */
static int publish(importer *im, const char *out_dir, const out_file *files, int n)
{
    amk_diag *d = im->d;
    struct stat st;
    if (stat(out_dir, &st) == 0) {
        DIR *dd = S_ISDIR(st.st_mode) ? opendir(out_dir) : NULL;
        int empty = dd != NULL;
        for (struct dirent *e; dd && (e = readdir(dd));)
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                empty = 0;
        if (dd)
            closedir(dd);
        if (!empty)
            return amk_diag_set(d, AMK_EEXIST, "%s already exists (amk import writes a new "
                                "folder; remove it first)", out_dir);
    }
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", out_dir) >= (int)sizeof tmp)
        return amk_diag_set(d, AMK_EINVAL, "output path too long");
    size_t len = strlen(out_dir);
    while (len > 1 && out_dir[len - 1] == '/') /* "DIR/" -> "DIR.tmp-..." */
        len--;
    snprintf(tmp, sizeof tmp, "%.*s.tmp-XXXXXX", (int)len, out_dir);
    if (!mkdtemp(tmp))
        return amk_diag_set(d, AMK_EIO, "cannot create a folder beside %s: %s", out_dir,
                            strerror(errno));
    int rc = AMK_OK;
    for (int i = 0; i < n && !rc; i++)
        rc = write_file(tmp, &files[i], d);
    if (!rc) {
        amk_spec *s = NULL;
        rc = amk_spec_load(tmp, &s, d);
        if (rc)
            amk_diag_prefix(d, "%s: the imported spec does not load", im->path);
        amk_config c;
        amk_diag cd = {0};
        if (!rc)
            amk_config_default(s, NULL, &c);
        if (!rc && amk_config_check(&c, NULL, &cd) != AMK_OK) {
            /* with --kernel the default config is the reference: it must be one the kernel
             * can run; without, a search that starts from it (hillclimb) starts elsewhere */
            if (im->kernel)
                rc = amk__imp_fail(im, AMK_ESPEC, "TuningParameters.Default",
                                   "the default config is "
                                   "not valid (%s): with --kernel it is the reference, so it must be "
                                   "one the kernel can run", cd.msg);
            else if (!(rc = check_satisfiable(im, s)))
                amk_log(AMK_LOG_WARN, "%s: the default config is not valid (%s); searches "
                        "that start from it start from another config", im->path, cd.msg);
        }
        amk_spec_free(s);
    }
    if (!rc && rename(tmp, out_dir) != 0)
        rc = amk_diag_set(d, AMK_EIO, "cannot rename %s to %s: %s", tmp, out_dir,
                          strerror(errno));
    if (rc)
        remove_tree(tmp, files, n);
    return rc;
}

int amk_import_t1(const char *t1_path, const char *out_dir, const amk_import_opts *opts,
                  amk_diag *d)
{
    if (!t1_path || !out_dir)
        return amk_diag_set(d, AMK_EINVAL, "amk_import_t1: NULL path");
    importer *im = calloc(1, sizeof *im);
    cJSON *spec = NULL;
    out_file files[AMK__IMP_MAX_FILES] = {{0}};
    int nfiles = 0;
    char *data = NULL;
    size_t len;
    if (!im)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    im->path = t1_path;
    im->d = d;
    im->opts = opts;
    int rc = amk_fs_read_all(t1_path, &data, &len, d);
    if (rc)
        goto done;
    const char *end = NULL;
    im->root = cJSON_ParseWithOpts(data, &end, 1);
    if (!im->root) {
        rc = amk__imp_fail(im, AMK_EPARSE, NULL, "malformed JSON near byte %ld",
                           end ? (long)(end - data) : 0L);
        goto done;
    }
    if ((rc = load_params(im)) || (rc = load_problem(im)))
        goto done;

    char name[AMK_NAME_MAX];
    if (opts && opts->name)
        snprintf(name, sizeof name, "%s", opts->name);
    else
        default_name(t1_path, name, sizeof name);
    spec = cJSON_CreateObject();
    if (!spec) {
        rc = amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");
        goto done;
    }
    const cJSON *bn = get_path(im->root, "General", "BenchmarkName");
    char desc[512];
    snprintf(desc, sizeof desc, "imported by amk import from the T1 space '%s' (%s); params in "
             "the T1 file's order", cJSON_IsString(bn) ? bn->valuestring : name, t1_path);
    cJSON_AddNumberToObject(spec, "amk_spec", 1);
    cJSON_AddStringToObject(spec, "name", name);
    cJSON_AddStringToObject(spec, "description", desc);
    cJSON *dims = cJSON_AddArrayToObject(spec, "dims");
    cJSON *shapes = cJSON_AddObjectToObject(spec, "shapes");
    cJSON *defshape = cJSON_AddObjectToObject(shapes, "default");
    for (int i = 0; i < im->ndims; i++) {
        cJSON_AddItemToArray(dims, cJSON_CreateString(im->dims[i]));
        cJSON_AddNumberToObject(defshape, im->dims[i], (double)im->problem[i]);
    }
    cJSON_AddItemToObject(spec, "dtypes", cJSON_CreateStringArray((const char *const[]){"f32"}, 1));
    cJSON *params = cJSON_AddObjectToObject(spec, "params");
    for (int i = 0; i < im->nparams; i++) {
        const imp_param *p = &im->params[i];
        cJSON *po = cJSON_AddObjectToObject(params, p->name);
        cJSON *vals = cJSON_AddArrayToObject(po, "values");
        for (size_t k = 0; k < p->vals.n; k++)
            cJSON_AddItemToArray(vals, p->vals.strs ? cJSON_CreateString(p->vals.strs[k])
                                                    : cJSON_CreateNumber((double)p->vals.ints[k]));
        if (p->vals.strs)
            cJSON_AddStringToObject(po, "default", p->vals.strs[p->def]);
        else
            cJSON_AddNumberToObject(po, "default", (double)p->vals.ints[p->def]);
    }
    cJSON *restr = cJSON_AddArrayToObject(spec, "restrictions");
    if (!restr) {
        rc = amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");
        goto done;
    }
    if ((rc = load_conditions(im, restr)))
        goto done;
    if (opts && opts->kernel_file) {
        im->kernel = 1;
        rc = fix_default(im);
        nfiles = 3;
        if (!rc) { /* the spec's defaults follow a moved default */
            for (int i = 0; i < im->nparams; i++) {
                cJSON *po = cJSON_GetObjectItemCaseSensitive(params, im->params[i].name);
                if (!im->params[i].vals.strs)
                    cJSON_ReplaceItemInObjectCaseSensitive(
                        po, "default",
                        cJSON_CreateNumber((double)im->params[i].vals.ints[im->params[i].def]));
            }
            rc = amk__imp_with_kernel(im, spec, opts->kernel_file, files, &nfiles);
        }
    } else if (opts && opts->nvary > 0) {
        rc = amk__imp_fail(im, AMK_EINVAL, "--vary", "needs --kernel (the reference is the "
                           "kernel at its default config)");
    } else {
        if (amk__imp_space_only_kernel(spec, name, &files[1].name, &files[1].text))
            rc = amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");
        nfiles = 2;
    }
    if (rc)
        goto done;
    files[0].name = strdup("spec.json");
    files[0].text = cJSON_Print(spec);
    if (!files[0].name || !files[0].text) {
        rc = amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");
        goto done;
    }
    rc = publish(im, out_dir, files, nfiles);
done:
    for (int i = 0; i < AMK__IMP_MAX_FILES; i++) {
        free(files[i].src);
        free(files[i].name);
        free(files[i].text);
    }
    cJSON_Delete(spec);
    for (int i = 0; i < im->nparams; i++)
        amk_py_val_clear(&im->params[i].vals);
    cJSON_Delete(im->root);
    free(im);
    free(data);
    return rc;
}
