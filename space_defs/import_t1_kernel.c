/* amk import, the kernel section: without --kernel a source that stops any compile with the
 * reason; with --kernel the KernelSpecification's launch, buffers and scalar arguments, and the
 * kernel at its default config as the reference (SPEC.md). */
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

/* ---------- the kernel section ------------------------------------------------------------ */

/* Without --kernel: the space alone. Its source stops any compile with the reason, so a GPU
 * run records compile_error rows saying what to do, and replay (sim) and search work. */
static const char no_kernel_src[] =
    "/* Written by amk import without --kernel: the search space of a T1 file, no kernel. */\n"
    "#error \"this kernel folder was imported without --kernel: it describes a search space "
    "for replay (--backend sim:FILE) and search only; to run it on a GPU, import again with "
    "amk import SPACE.json --kernel FILE.cu -o DIR\"\n";

static int add_launch(cJSON *obj, const char *const grid[3], const char *const block[3],
                      const char *shared)
{
    cJSON *l = cJSON_AddObjectToObject(obj, "launch");
    cJSON *g = cJSON_AddArrayToObject(l, "grid");
    cJSON *b = cJSON_AddArrayToObject(l, "block");
    if (!l || !g || !b)
        return AMK_ENOMEM;
    for (int i = 0; i < 3; i++)
        if (!cJSON_AddItemToArray(g, cJSON_CreateString(grid[i])) ||
            !cJSON_AddItemToArray(b, cJSON_CreateString(block[i])))
            return AMK_ENOMEM;
    return cJSON_AddStringToObject(l, "shared_bytes", shared) ? AMK_OK : AMK_ENOMEM;
}

int amk__imp_space_only_kernel(cJSON *spec, const char *name, char **src_name, char **src_text)
{
    static const char *const one[3] = {"1", "1", "1"};
    cJSON *bufs = cJSON_AddArrayToObject(spec, "buffers");
    cJSON *b = cJSON_CreateObject();
    if (!bufs || !b || !cJSON_AddItemToArray(bufs, b))
        return AMK_ENOMEM;
    cJSON_AddStringToObject(b, "name", "out");
    cJSON_AddStringToObject(b, "dtype", "f32");
    cJSON_AddStringToObject(b, "count", "1");
    cJSON_AddStringToObject(b, "role", "out");
    cJSON *args = cJSON_AddArrayToObject(spec, "args");
    cJSON_AddItemToArray(args, cJSON_CreateString("out"));
    cJSON_AddStringToObject(spec, "source", "no_kernel.cu");
    cJSON_AddStringToObject(spec, "entry", name);
    if (add_launch(spec, one, one, "0"))
        return AMK_ENOMEM;
    /* no cost knowledge: a floor of zero is the only true lower bound */
    cJSON *cost = cJSON_AddObjectToObject(spec, "cost");
    cJSON_AddStringToObject(cost, "flops", "0");
    cJSON_AddStringToObject(cost, "min_bytes", "0");
    cJSON_AddStringToObject(cost, "unit", "none");
    cJSON *ref = cJSON_AddObjectToObject(spec, "reference");
    cJSON_AddStringToObject(ref, "source", "no_kernel.cu");
    cJSON_AddStringToObject(ref, "entry", name);
    cJSON_AddItemToObject(ref, "args", cJSON_CreateStringArray((const char *const[]){"out"}, 1));
    if (add_launch(ref, one, one, "0"))
        return AMK_ENOMEM;
    cJSON *tol = cJSON_AddObjectToObject(spec, "tolerance");
    cJSON_AddStringToObject(tol, "reduction", "1");
    *src_name = strdup("no_kernel.cu");
    *src_text = strdup(no_kernel_src);
    return *src_name && *src_text ? AMK_OK : AMK_ENOMEM;
}

/* ---------- with --kernel: the KernelSpecification ---------------------------------------- */



typedef struct launch_leaf {
    importer *im;
    int defaults; /* 1: params become their default values (the reference's launch) */
} launch_leaf;

/* Launch and size expressions: params (or their defaults), ProblemSize[i] as the dims,
 * max(p) / min(p) of one param as the largest / smallest of its values (the T1 meaning). */
static int kernel_leaf(void *ud, const py_node *n, const char *src, amk_sb *sb, amk_diag *d)
{
    launch_leaf *ll = ud;
    importer *im = ll->im;
    if (n->kind == PY_NAME) {
        int i = amk__imp_param_index(im, n->str);
        if (i < 0 || im->params[i].vals.strs)
            return amk_diag_set(d, AMK_EEXPR, "unknown name '%s' (not an integer tuning "
                                "parameter) at column %zu in '%s'", n->str, n->col + 1, src);
        if (ll->defaults)
            amk_sb_printf(sb, "%lld", (long long)im->params[i].vals.ints[im->params[i].def]);
        else
            amk_sb_printf(sb, "%s", n->str);
        return AMK_OK;
    }
    if (n->kind == PY_INDEX && (!strcmp(n->str, "ProblemSize") || !strcmp(n->str, "problem_size"))) {
        const py_node *k = n->kids[0];
        if (k->kind != PY_NUM || k->num >= im->ndims)
            return amk_diag_set(d, AMK_EEXPR, "ProblemSize[...] needs a constant index below %d "
                                "at column %zu in '%s'", im->ndims, n->col + 1, src);
        amk_sb_printf(sb, "%s", im->dims[k->num]);
        return AMK_OK;
    }
    if (n->kind == PY_CALL && n->nkids == 1 && n->kids[0]->kind == PY_NAME &&
        (!strcmp(n->str, "max") || !strcmp(n->str, "min"))) {
        int i = amk__imp_param_index(im, n->kids[0]->str);
        if (i >= 0 && !im->params[i].vals.strs) {
            const imp_param *p = &im->params[i];
            amk_sb_printf(sb, "%lld", (long long)(n->str[1] == 'a' ? p->vals.ints[p->vals.n - 1]
                                                                   : p->vals.ints[0]));
            return AMK_OK;
        }
    }
    return AMK_ENOENT;
}

/* A T1 launch or size field (a string holding a Python expression, or a number) as amk
 * text; errors name the field. */
static int kernel_expr(importer *im, const cJSON *j, const char *where, int defaults, char **out)
{
    char num[32];
    const char *src;
    *out = NULL;
    if (cJSON_IsNumber(j) && j->valuedouble == (double)(int64_t)j->valuedouble) {
        snprintf(num, sizeof num, "%lld", (long long)j->valuedouble);
        src = num;
    } else if (cJSON_IsString(j))
        src = j->valuestring;
    else
        return amk__imp_fail(im, AMK_ESPEC, where,
                             "expected an integer or a string holding a Python "
                             "expression");
    py_node *n = NULL;
    amk_diag pd = {0};
    launch_leaf ll = {im, defaults};
    int rc = amk_py_parse(src, &n, &pd);
    if (!rc)
        rc = amk_py_to_amk(n, src, 0, kernel_leaf, &ll, out, &pd);
    amk_py_free(n);
    if (rc)
        return amk__imp_fail(im, rc == AMK_ENOMEM ? AMK_ENOMEM : AMK_ESPEC, where, "%s", pd.msg);
    return AMK_OK;
}

/* Kernel Tuner's launch: the block from LocalSize (default block_size_x/y/z, else 256, 1,
 * 1), the grid cdiv(problem size, product of the GridDiv list) per dimension (default: the
 * block_size param of that dimension). */
static int kernel_launch(importer *im, const cJSON *ks, int defaults, cJSON *dst)
{
    static const char *const ax[3] = {"X", "Y", "Z"};
    static const char *const bnames[3] = {"block_size_x", "block_size_y", "block_size_z"};
    static const char *const bdef[3] = {"256", "1", "1"};
    char *grid[3] = {NULL, NULL, NULL}, *block[3] = {NULL, NULL, NULL}, *shared = NULL;
    int rc = AMK_OK;
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(ks, "LocalSize");
    for (int i = 0; i < 3 && !rc; i++) {
        char where[64];
        snprintf(where, sizeof where, "KernelSpecification.LocalSize.%s", ax[i]);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(ls, ax[i]);
        if (e)
            rc = kernel_expr(im, e, where, defaults, &block[i]);
        else {
            const char *text = amk__imp_param_index(im, bnames[i]) >= 0 ? bnames[i] : bdef[i];
            cJSON *t = cJSON_CreateString(text);
            rc = t ? kernel_expr(im, t, where, defaults, &block[i]) : AMK_ENOMEM;
            cJSON_Delete(t);
        }
    }
    for (int i = 0; i < 3 && !rc; i++) {
        if (i >= im->ndims) {
            grid[i] = strdup("1");
            rc = grid[i] ? AMK_OK : AMK_ENOMEM;
            continue;
        }
        char key[16], where[64];
        snprintf(key, sizeof key, "GridDiv%s", ax[i]);
        snprintf(where, sizeof where, "KernelSpecification.%s", key);
        const cJSON *div = cJSON_GetObjectItemCaseSensitive(ks, key);
        amk_sb sb = {0};
        amk_sb_printf(&sb, "cdiv(%s, ", im->dims[i]);
        if (div && !cJSON_IsArray(div))
            rc = amk__imp_fail(im, AMK_ESPEC, where, "expected a list of expressions");
        else if (!div || cJSON_GetArraySize(div) == 0)
            amk_sb_printf(&sb, "%s", block[i]); /* Kernel Tuner's default: the block size */
        int k = 0;
        for (const cJSON *e = div ? div->child : NULL; e && !rc; e = e->next, k++) {
            char *t = NULL;
            char w[96];
            snprintf(w, sizeof w, "%s[%d]", where, k);
            if (!(rc = kernel_expr(im, e, w, defaults, &t)))
                amk_sb_printf(&sb, "%s(%s)", k ? " * " : "", t);
            free(t);
        }
        amk_sb_printf(&sb, ")");
        grid[i] = sb.oom ? NULL : amk_sb_take(&sb);
        amk_sb_free(&sb);
        if (!rc && !grid[i])
            rc = AMK_ENOMEM;
    }
    const cJSON *sm = cJSON_GetObjectItemCaseSensitive(ks, "SharedMemory");
    if (!rc) {
        cJSON *zero = sm ? NULL : cJSON_CreateNumber(0);
        rc = kernel_expr(im, sm ? sm : zero, "KernelSpecification.SharedMemory", defaults,
                         &shared);
        cJSON_Delete(zero);
    }
    if (!rc && add_launch(dst, (const char *const *)grid, (const char *const *)block, shared))
        rc = AMK_ENOMEM;
    if (rc == AMK_ENOMEM)
        amk__imp_fail(im, rc, NULL, "out of memory");
    for (int i = 0; i < 3; i++) {
        free(grid[i]);
        free(block[i]);
    }
    free(shared);
    return rc;
}

static const char *buffer_dtype(const char *t)
{
    static const struct {
        const char *t1, *amk;
    } map[] = {{"float", "f32"},     {"float32", "f32"}, {"half", "f16"},
               {"float16", "f16"},   {"__half", "f16"},  {"int8", "int8"},
               {"int8_t", "int8"},   {"char", "int8"},   {NULL, NULL}};
    for (int i = 0; map[i].t1; i++)
        if (!strcmp(t, map[i].t1))
            return map[i].amk;
    return NULL;
}

static int is_int_type(const char *t)
{
    return !strcmp(t, "int") || !strcmp(t, "int32") || !strcmp(t, "int32_t");
}

/* Arguments -> buffers (vectors), derived values (int scalars) and args, in order. */
static int kernel_args(importer *im, const cJSON *ks, cJSON *spec, cJSON *args)
{
    const cJSON *as = cJSON_GetObjectItemCaseSensitive(ks, "Arguments");
    if (!cJSON_IsArray(as) || cJSON_GetArraySize(as) < 1)
        return amk__imp_fail(im, AMK_ESPEC, "KernelSpecification.Arguments",
                             "expected a non-empty list");
    cJSON *bufs = cJSON_AddArrayToObject(spec, "buffers");
    cJSON *derived = cJSON_AddObjectToObject(spec, "derived");
    if (!bufs || !derived)
        return amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");
    int i = 0, nout = 0;
    for (const cJSON *a = as->child; a; a = a->next, i++) {
        char where[96];
        snprintf(where, sizeof where, "KernelSpecification.Arguments[%d]", i);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(a, "Name");
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(a, "Type");
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(a, "MemoryType");
        const cJSON *memtype = cJSON_GetObjectItemCaseSensitive(a, "MemType");
        const cJSON *fill = cJSON_GetObjectItemCaseSensitive(a, "FillType");
        const cJSON *access = cJSON_GetObjectItemCaseSensitive(a, "AccessType");
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(a, "FillValue");
        const cJSON *output = cJSON_GetObjectItemCaseSensitive(a, "Output");
        if (!cJSON_IsString(name) || !cJSON_IsString(type))
            return amk__imp_fail(im, AMK_ESPEC, where, "Name and Type must be strings");
        const char *nm = name->valuestring;
        int ok = (isalpha((unsigned char)nm[0]) || nm[0] == '_') && strlen(nm) < AMK_NAME_MAX;
        for (const char *c = nm; *c; c++)
            ok &= isalnum((unsigned char)*c) || *c == '_';
        if (!ok)
            return amk__imp_fail(im, AMK_ESPEC, where, "'%s' is not an identifier", nm);
        if (amk__imp_param_index(im, nm) >= 0 || !strncmp(nm, "problem_size_", 13))
            return amk__imp_fail(im, AMK_ESPEC, where, "argument '%s' has the name of a tuning "
                                 "parameter or dim", nm);
        if (cJSON_IsString(memtype) && strcmp(memtype->valuestring, "Vector") &&
            strcmp(memtype->valuestring, "Global"))
            return amk__imp_fail(im, AMK_ESPEC, where,
                                 "%s: MemType '%s' (constant or texture memory "
                                 "filled by the host) is not supported: amk passes buffers as kernel "
                                 "arguments", nm, memtype->valuestring);
        int scalar = cJSON_IsString(mem) && !strcmp(mem->valuestring, "Scalar");
        if (scalar) {
            if (!is_int_type(type->valuestring))
                return amk__imp_fail(im, AMK_ESPEC, where,
                                     "%s: a scalar of type '%s' is not supported "
                                     "(amk passes scalar arguments as 32-bit int)", nm,
                                     type->valuestring);
            if (!cJSON_IsNumber(value) || value->valuedouble != (double)(int32_t)value->valuedouble)
                return amk__imp_fail(im, AMK_ESPEC, where,
                                     "%s: FillValue must be a 32-bit integer", nm);
            char txt[32];
            snprintf(txt, sizeof txt, "%d", (int32_t)value->valuedouble);
            cJSON_AddStringToObject(derived, nm, txt);
            cJSON_AddItemToArray(args, cJSON_CreateString(nm));
            continue;
        }
        if (mem && !(cJSON_IsString(mem) && !strcmp(mem->valuestring, "Vector")))
            return amk__imp_fail(im, AMK_ESPEC, where, "%s: MemoryType must be Vector or Scalar",
                                 nm);
        const char *dt = buffer_dtype(type->valuestring);
        if (!dt)
            return amk__imp_fail(im, AMK_ESPEC, where,
                                 "%s: element type '%s' is not supported (amk "
                                 "buffers hold float, half or int8)", nm, type->valuestring);
        int is_out = cJSON_IsTrue(output) || (cJSON_IsNumber(output) && output->valuedouble != 0);
        int rw = cJSON_IsString(access) && !strcmp(access->valuestring, "ReadWrite");
        int random = cJSON_IsString(fill) && !strcmp(fill->valuestring, "Random");
        cJSON *b = cJSON_CreateObject();
        if (!b || !cJSON_AddItemToArray(bufs, b))
            return amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");
        cJSON_AddStringToObject(b, "name", nm);
        cJSON_AddStringToObject(b, "dtype", dt);
        char *count = NULL;
        char w[128];
        snprintf(w, sizeof w, "%s.Size", where);
        int rc = kernel_expr(im, cJSON_GetObjectItemCaseSensitive(a, "Size"), w, 0, &count);
        if (rc)
            return rc;
        cJSON_AddStringToObject(b, "count", count);
        free(count);
        if (is_out && !rw) {
            cJSON_AddStringToObject(b, "role", "out");
            nout++;
        } else if (!random) {
            return amk__imp_fail(im, AMK_ESPEC, where,
                                 "%s: an input filled with a constant (FillType "
                                 "%s) is not supported: amk fills every input with random values and "
                                 "poisons outputs before each run", nm,
                                 cJSON_IsString(fill) ? fill->valuestring : "missing");
        } else {
            cJSON_AddStringToObject(b, "role", is_out ? "inout" : "in");
            cJSON_AddStringToObject(b, "init", "uniform");
            nout += is_out;
        }
        cJSON_AddItemToArray(args, cJSON_CreateString(nm));
    }
    if (!nout)
        return amk__imp_fail(im, AMK_ESPEC, "KernelSpecification.Arguments",
                             "no argument has Output "
                             "set: there is nothing to check");
    return AMK_OK;
}

/* The spec's kernel section from the KernelSpecification and the kernel file; the reference
 * is the kernel itself at the default config (reference.cu: the defaults as #defines, then
 * the kernel text), which no independent reference backs. */
int amk__imp_with_kernel(importer *im, cJSON *spec, const char *kernel_file, out_file *files)
{
    const cJSON *ks = cJSON_GetObjectItemCaseSensitive(im->root, "KernelSpecification");
    if (!cJSON_IsObject(ks))
        return amk__imp_fail(im, AMK_ESPEC, "KernelSpecification",
                             "missing: --kernel needs the launch "
                             "description");
    const cJSON *lang = cJSON_GetObjectItemCaseSensitive(ks, "Language");
    if (lang && !(cJSON_IsString(lang) && !strcmp(lang->valuestring, "CUDA")))
        return amk__imp_fail(im, AMK_ESPEC, "KernelSpecification.Language",
                             "'%s': only CUDA kernels "
                             "can be imported", cJSON_IsString(lang) ? lang->valuestring : "?");
    for (int i = 0; i < im->nparams; i++)
        if (im->params[i].vals.strs)
            return amk__imp_fail(im, AMK_ESPEC, "ConfigurationSpace.TuningParameters",
                                 "param %s has "
                                 "string values: a kernel receives params as integer #defines",
                                 im->params[i].name);
    const cJSON *kn = cJSON_GetObjectItemCaseSensitive(ks, "KernelName");
    int ok = cJSON_IsString(kn) && kn->valuestring[0] && strlen(kn->valuestring) < AMK_NAME_MAX;
    for (const char *c = ok ? kn->valuestring : ""; *c; c++)
        ok &= isalnum((unsigned char)*c) || *c == '_';
    if (!ok || isdigit((unsigned char)kn->valuestring[0]))
        return amk__imp_fail(im, AMK_ESPEC, "KernelSpecification.KernelName",
                             "expected the kernel's "
                             "function name (an identifier; templates are not supported)");
    char *text = NULL;
    size_t len;
    amk_diag fd = {0};
    if (amk_fs_read_all(kernel_file, &text, &len, &fd))
        return amk__imp_fail(im, fd.code, "--kernel", "%s", fd.msg);
    if (strlen(text) != len) {
        free(text);
        return amk__imp_fail(im, AMK_ESPEC, "--kernel", "%s holds a NUL byte: not a kernel source",
                             kernel_file);
    }
    /* the template keeps its file name (compiler messages name it) unless it would clash */
    const char *base = strrchr(kernel_file, '/');
    base = base ? base + 1 : kernel_file;
    int good = *base && strcmp(base, "spec.json") && strcmp(base, "reference.cu") &&
               base[0] != '.' && strlen(base) < 128;
    for (const char *c = base; *c; c++)
        good &= isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.';
    files[1].name = strdup(good ? base : "kernel.cu");
    files[1].text = text;
    if (!files[1].name)
        return amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");
    amk_sb ref = {0};
    amk_sb_printf(&ref, "/* The reference of the kernel %s imported by amk import: the kernel "
                  "itself\n * at its default config (no independent reference exists; a config "
                  "is checked\n * against the default config's output only, which is weaker). "
                  "*/\n",
                  kn->valuestring);
    for (int i = 0; i < im->nparams; i++)
        amk_sb_printf(&ref, "#define %s %lld\n", im->params[i].name,
                      (long long)im->params[i].vals.ints[im->params[i].def]);
    amk_sb_printf(&ref, "#line 1 \"%s\"\n%s", files[1].name, text);
    files[2].name = strdup("reference.cu");
    files[2].text = ref.oom ? NULL : amk_sb_take(&ref);
    amk_sb_free(&ref);
    if (!files[2].name || !files[2].text)
        return amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");

    cJSON *args = cJSON_CreateArray();
    if (!args)
        return amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");
    int rc = kernel_args(im, ks, spec, args);
    if (rc) {
        cJSON_Delete(args);
        return rc;
    }
    cJSON_AddItemToObject(spec, "args", args);
    cJSON_AddStringToObject(spec, "source", files[1].name);
    cJSON_AddStringToObject(spec, "entry", kn->valuestring);
    if ((rc = kernel_launch(im, ks, 0, spec)))
        return rc;
    cJSON *cost = cJSON_AddObjectToObject(spec, "cost");
    cJSON_AddStringToObject(cost, "flops", "0");
    cJSON_AddStringToObject(cost, "min_bytes", "0");
    cJSON_AddStringToObject(cost, "unit", "none");
    cJSON *refj = cJSON_AddObjectToObject(spec, "reference");
    cJSON_AddStringToObject(refj, "source", "reference.cu");
    cJSON_AddStringToObject(refj, "entry", kn->valuestring);
    cJSON_AddItemToObject(refj, "args", cJSON_Duplicate(args, 1));
    if ((rc = kernel_launch(im, ks, 1, refj)))
        return rc;
    cJSON_AddBoolToObject(refj, "default_config", 1);
    /* the reduction length the tolerance allows for: the largest problem dimension (a
     * reassociated sum over at most that many terms) */
    int64_t red = 1;
    for (int i = 0; i < im->ndims; i++)
        if (im->problem[i] > red)
            red = im->problem[i];
    char rtxt[32];
    snprintf(rtxt, sizeof rtxt, "%lld", (long long)red);
    cJSON *tol = cJSON_AddObjectToObject(spec, "tolerance");
    cJSON_AddStringToObject(tol, "reduction", rtxt);
    return AMK_OK;
}
