/* amk import, the kernel section: without --kernel a source that stops any compile with the
 * reason; with --kernel the KernelSpecification's launch, buffers and scalar arguments, and the
 * kernel at its default config as the reference (SPEC.md). */
#include "import_t1_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
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

/* 1 when --vary names param `name`: the reference takes it from the checked config. */
static int is_vary(const importer *im, const char *name)
{
    const amk_import_opts *o = im->opts;
    for (int k = 0; o && o->vary && k < o->nvary; k++)
        if (!strcmp(o->vary[k], name))
            return 1;
    return 0;
}

/* --vary: names of integer params, each once. */
static int check_vary(importer *im)
{
    const amk_import_opts *o = im->opts;
    for (int k = 0; o && o->vary && k < o->nvary; k++) {
        int i = amk__imp_param_index(im, o->vary[k]);
        if (i < 0)
            return amk__imp_fail(im, AMK_ESPEC, "--vary", "'%s' is not a tuning parameter",
                                 o->vary[k]);
        for (int j = 0; j < k; j++)
            if (!strcmp(o->vary[j], o->vary[k]))
                return amk__imp_fail(im, AMK_ESPEC, "--vary", "'%s' is named twice",
                                     o->vary[k]);
    }
    return AMK_OK;
}

/* Launch and size expressions: params (or their defaults, --vary params excepted), ProblemSize[i] as the dims,
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
        if (ll->defaults && !is_vary(im, n->str))
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

/* 1 when the kernel text declares a __constant__ variable called name (a token match: the
 * keyword, then the name before the declaration's ';' or '['). */
static int declares_constant(const char *text, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(text, "__constant__"); p; p = strstr(p + 1, "__constant__")) {
        const char *end = strpbrk(p, ";{");
        for (const char *q = p + 12; *q && (!end || q < end); q++)
            if (!strncmp(q, name, nl) && !(isalnum((unsigned char)q[nl]) || q[nl] == '_') &&
                !(isalnum((unsigned char)q[-1]) || q[-1] == '_'))
                return 1;
    }
    return 0;
}

/* A T1 Scalar of a non-int type: a "scalars" entry (float -> f32, double -> f64, ...). */
static const char *scalar_dtype(const char *t)
{
    static const struct {
        const char *t1, *amk;
    } map[] = {{"float", "f32"},     {"float32", "f32"},  {"double", "f64"},
               {"float64", "f64"},   {"uint32", "u32"},   {"uint32_t", "u32"},
               {"unsigned int", "u32"}, {"int64", "i64"}, {"int64_t", "i64"},
               {"long", "i64"},      {"uint64", "u64"},   {"uint64_t", "u64"},
               {NULL, NULL}};
    for (int i = 0; map[i].t1; i++)
        if (!strcmp(t, map[i].t1))
            return map[i].amk;
    return NULL;
}

/* Arguments -> buffers (vectors), derived values (int scalars), scalars (other scalar
 * types) and args, in order. Kernel Tuner's meaning (its T1 reader): a MemType Constant
 * argument is passed as an argument and also copied into the __constant__ symbol of its
 * name; FillType Constant fills with FillValue. */
/* The FILE of the "ARG=FILE" entry of list naming arg, or NULL. */
static const char *file_for(const char *const *list, int n, const char *arg)
{
    size_t len = strlen(arg);
    for (int i = 0; i < n; i++)
        if (!strncmp(list[i], arg, len) && list[i][len] == '=')
            return list[i] + len + 1;
    return NULL;
}

/* Checks every "ARG=FILE" entry names a Vector argument of the T1 file. */
static int files_named(importer *im, const cJSON *as, const char *const *list, int n,
                       const char *opt)
{
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(list[i], '=');
        int found = 0;
        for (const cJSON *a = as->child; a && eq; a = a->next) {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(a, "Name");
            const cJSON *mem = cJSON_GetObjectItemCaseSensitive(a, "MemoryType");
            found |= cJSON_IsString(nm) && strlen(nm->valuestring) == (size_t)(eq - list[i]) &&
                     !strncmp(nm->valuestring, list[i], (size_t)(eq - list[i])) &&
                     !(cJSON_IsString(mem) && !strcmp(mem->valuestring, "Scalar"));
        }
        if (!found || !eq[1])
            return amk__imp_fail(im, AMK_ESPEC, opt, "'%s': expected ARG=FILE naming a Vector "
                                 "argument of KernelSpecification.Arguments", list[i]);
    }
    return AMK_OK;
}

/* Adds FILE (a data or answer file) to the folder's files under its base name; the name in
 * *out. Refuses a name the folder already has. */
static int add_data_file(importer *im, const char *file, const char *where, out_file *files,
                         int *nfiles, const char **out)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    int ok = *base && base[0] != '.' && strlen(base) < 128;
    for (const char *c = base; *c; c++)
        ok &= isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.';
    for (int i = 0; i < *nfiles && ok; i++)
        ok = !files[i].name || strcmp(files[i].name, base) != 0;
    if (!ok || !strcmp(base, "spec.json"))
        return amk__imp_fail(im, AMK_ESPEC, where, "%s: the file name must be a plain name not "
                             "yet in the folder", file);
    if (*nfiles == AMK__IMP_MAX_FILES)
        return amk__imp_fail(im, AMK_ESPEC, where, "too many files");
    files[*nfiles].name = strdup(base);
    files[*nfiles].src = strdup(file);
    files[*nfiles].link = im->opts && im->opts->link_data;
    if (!files[*nfiles].name || !files[*nfiles].src)
        return amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");
    *out = files[(*nfiles)++].name;
    return AMK_OK;
}

/* An .npy item type as an amk buffer dtype (uint8 is int8's bytes, as they are). */
static const char *npy_dtype(const amk_data_info *in)
{
    if (in->kind == 'f')
        return in->elt_size == 4 ? "f32" : in->elt_size == 2 ? "f16" : NULL;
    return in->elt_size == 1 ? "int8" : NULL;
}

static int kernel_args(importer *im, const cJSON *ks, const char *text, cJSON *spec,
                       cJSON *args, out_file *files, int *nfiles)
{
    const amk_import_opts *o = im->opts;
    const char *const *dl = o ? o->data : NULL, *const *al = o ? o->answers : NULL;
    int nd = o && dl ? o->ndata : 0, na = o && al ? o->nanswers : 0;
    const cJSON *as = cJSON_GetObjectItemCaseSensitive(ks, "Arguments");
    if (!cJSON_IsArray(as) || cJSON_GetArraySize(as) < 1)
        return amk__imp_fail(im, AMK_ESPEC, "KernelSpecification.Arguments",
                             "expected a non-empty list");
    if (files_named(im, as, dl, nd, "--data") || files_named(im, as, al, na, "--answer"))
        return im->d ? im->d->code : AMK_ESPEC;
    cJSON *bufs = cJSON_AddArrayToObject(spec, "buffers");
    cJSON *derived = cJSON_AddObjectToObject(spec, "derived");
    cJSON *scalars = cJSON_CreateObject();
    if (!bufs || !derived || !scalars) {
        cJSON_Delete(scalars);
        return amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");
    }
    int i = 0, nout = 0, rc = AMK_OK;
    for (const cJSON *a = as->child; a && !rc; a = a->next, i++) {
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
        if (!cJSON_IsString(name) || !cJSON_IsString(type)) {
            rc = amk__imp_fail(im, AMK_ESPEC, where, "Name and Type must be strings");
            break;
        }
        const char *nm = name->valuestring;
        int ok = (isalpha((unsigned char)nm[0]) || nm[0] == '_') && strlen(nm) < AMK_NAME_MAX;
        for (const char *c = nm; *c; c++)
            ok &= isalnum((unsigned char)*c) || *c == '_';
        if (!ok) {
            rc = amk__imp_fail(im, AMK_ESPEC, where, "'%s' is not an identifier", nm);
            break;
        }
        if (amk__imp_param_index(im, nm) >= 0 || !strncmp(nm, "problem_size_", 13)) {
            rc = amk__imp_fail(im, AMK_ESPEC, where, "argument '%s' has the name of a tuning "
                               "parameter or dim", nm);
            break;
        }
        const char *mt = cJSON_IsString(memtype) ? memtype->valuestring : "Global";
        int cmem = !strcmp(mt, "Constant");
        if (!strcmp(mt, "Texture")) {
            rc = amk__imp_fail(im, AMK_ESPEC, where,
                               "%s: MemType 'Texture' is not supported: amk does not bind "
                               "texture objects (pass the data as a Vector argument)", nm);
            break;
        }
        if (!cmem && strcmp(mt, "Vector") && strcmp(mt, "Global")) {
            rc = amk__imp_fail(im, AMK_ESPEC, where,
                               "%s: unknown MemType '%s' (Global, Constant; Texture is not "
                               "supported)", nm, mt);
            break;
        }
        int scalar = cJSON_IsString(mem) && !strcmp(mem->valuestring, "Scalar");
        if (scalar) {
            if (cmem) {
                rc = amk__imp_fail(im, AMK_ESPEC, where,
                                   "%s: a Scalar in constant memory is not supported", nm);
                break;
            }
            if (!cJSON_IsNumber(value) || !isfinite(value->valuedouble)) {
                rc = amk__imp_fail(im, AMK_ESPEC, where, "%s: FillValue must be a number", nm);
                break;
            }
            if (is_int_type(type->valuestring)) {
                if (value->valuedouble != (double)(int32_t)value->valuedouble) {
                    rc = amk__imp_fail(im, AMK_ESPEC, where,
                                       "%s: FillValue must be a 32-bit integer", nm);
                    break;
                }
                char txt[32];
                snprintf(txt, sizeof txt, "%d", (int32_t)value->valuedouble);
                cJSON_AddStringToObject(derived, nm, txt);
            } else {
                const char *st = scalar_dtype(type->valuestring);
                if (!st) {
                    rc = amk__imp_fail(im, AMK_ESPEC, where,
                                       "%s: a scalar of type '%s' is not supported (int, "
                                       "float, double, uint32, int64, uint64)", nm,
                                       type->valuestring);
                    break;
                }
                cJSON *so = cJSON_AddObjectToObject(scalars, nm);
                cJSON_AddStringToObject(so, "dtype", st);
                cJSON_AddNumberToObject(so, "value", value->valuedouble);
            }
            cJSON_AddItemToArray(args, cJSON_CreateString(nm));
            continue;
        }
        if (mem && !(cJSON_IsString(mem) && !strcmp(mem->valuestring, "Vector"))) {
            rc = amk__imp_fail(im, AMK_ESPEC, where, "%s: MemoryType must be Vector or Scalar",
                               nm);
            break;
        }
        const char *dt = buffer_dtype(type->valuestring);
        const char *dfile = file_for(dl, nd, nm), *afile = file_for(al, na, nm);
        amk_data_info din = {0};
        if (dfile) { /* the data decide the element type and count (.npy) */
            amk_diag dd = {0};
            if (amk_data_probe(dfile, &din, &dd) != AMK_OK) {
                rc = amk__imp_fail(im, AMK_ESPEC, "--data", "%s", dd.msg);
                break;
            }
            if (din.is_npy && !(dt = npy_dtype(&din))) {
                rc = amk__imp_fail(im, AMK_ESPEC, "--data", "%s: %c%d items are not an amk "
                                   "buffer type (float32, float16, int8, uint8)", dfile,
                                   din.kind, din.elt_size * 8);
                break;
            }
        }
        if (!dt) {
            rc = amk__imp_fail(im, AMK_ESPEC, where,
                               "%s: element type '%s' is not supported (amk "
                               "buffers hold float, half or int8)", nm, type->valuestring);
            break;
        }
        int is_out = cJSON_IsTrue(output) || (cJSON_IsNumber(output) && output->valuedouble != 0);
        int rw = cJSON_IsString(access) && !strcmp(access->valuestring, "ReadWrite");
        const char *ft = cJSON_IsString(fill) ? fill->valuestring : "missing";
        int random = !strcmp(ft, "Random"), constant = !strcmp(ft, "Constant");
        if (dfile && is_out && !rw) {
            rc = amk__imp_fail(im, AMK_ESPEC, "--data", "%s is an output (WriteOnly): it has "
                               "no input data", nm);
            break;
        }
        if (afile && !is_out) {
            rc = amk__imp_fail(im, AMK_ESPEC, "--answer", "%s is not an Output argument", nm);
            break;
        }
        if (dfile)
            random = 1, constant = 0; /* the file replaces the fill */
        if (!(is_out && !rw) && !random && !constant) {
            rc = amk__imp_fail(im, AMK_ESPEC, where,
                               "%s: FillType '%s' is not supported (Random, Constant)", nm, ft);
            break;
        }
        if (constant && !(cJSON_IsNumber(value) && isfinite(value->valuedouble)) &&
            !(is_out && !rw)) {
            rc = amk__imp_fail(im, AMK_ESPEC, where,
                               "%s: FillType Constant needs a numeric FillValue", nm);
            break;
        }
        if (cmem && is_out) {
            rc = amk__imp_fail(im, AMK_ESPEC, where,
                               "%s: an output cannot live in constant memory", nm);
            break;
        }
        cJSON *b = cJSON_CreateObject();
        if (!b || !cJSON_AddItemToArray(bufs, b)) {
            cJSON_Delete(b);
            rc = amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");
            break;
        }
        cJSON_AddStringToObject(b, "name", nm);
        cJSON_AddStringToObject(b, "dtype", dt);
        char *count = NULL;
        char w[128];
        snprintf(w, sizeof w, "%s.Size", where);
        if ((rc = kernel_expr(im, cJSON_GetObjectItemCaseSensitive(a, "Size"), w, 0, &count)))
            break;
        if (dfile) {
            int esz = !strcmp(dt, "f32") ? 4 : !strcmp(dt, "f16") ? 2 : 1;
            char n[32];
            if (din.bytes % esz) {
                free(count);
                rc = amk__imp_fail(im, AMK_ESPEC, "--data", "%s: %lld bytes are not whole %s "
                                   "elements", dfile, (long long)din.bytes, dt);
                break;
            }
            snprintf(n, sizeof n, "%lld", (long long)(din.bytes / esz));
            if (strcmp(n, count))
                amk_log(AMK_LOG_WARN, "%s: %s: %s: the data file holds %s elements; the T1 "
                        "Size says %s: the file's count is used", im->path, where, nm, n, count);
            free(count);
            count = strdup(n);
        }
        cJSON_AddStringToObject(b, "count", count);
        free(count);
        if (is_out && !rw) {
            /* the kernel writes it: amk poisons it instead of filling (FillType unused) */
            cJSON_AddStringToObject(b, "role", "out");
            nout++;
        } else {
            cJSON_AddStringToObject(b, "role", is_out ? "inout" : "in");
            if (!dfile)
                cJSON_AddStringToObject(b, "init", constant ? "constant" : "uniform");
            if (constant)
                cJSON_AddNumberToObject(b, "value", value->valuedouble);
            nout += is_out;
        }
        const char *fname = NULL;
        if (dfile && !(rc = add_data_file(im, dfile, "--data", files, nfiles, &fname)))
            cJSON_AddStringToObject(b, "data", fname);
        if (!rc && afile && !(rc = add_data_file(im, afile, "--answer", files, nfiles, &fname)))
            cJSON_AddStringToObject(b, "answer", fname);
        if (rc)
            break;
        if (cmem && declares_constant(text, nm))
            cJSON_AddStringToObject(b, "memory", "constant");
        else if (cmem)
            amk_log(AMK_LOG_WARN, "%s: %s: MemType Constant, but the kernel declares no "
                    "__constant__ '%s': passed as a kernel argument only", im->path, where, nm);
        cJSON_AddItemToArray(args, cJSON_CreateString(nm));
    }
    if (!rc && cJSON_GetArraySize(scalars) > 0)
        cJSON_AddItemToObject(spec, "scalars", scalars);
    else
        cJSON_Delete(scalars);
    if (!rc && !nout)
        return amk__imp_fail(im, AMK_ESPEC, "KernelSpecification.Arguments",
                             "no argument has Output "
                             "set: there is nothing to check");
    return rc;
}

/* The spec's kernel section from the KernelSpecification and the kernel file; the reference
 * is the kernel itself at the default config (reference.cu: the defaults as #defines, then
 * the kernel text), which no independent reference backs. */
/* The headers the kernel includes from its own folder (`#include "name"`, a plain file name
 * that exists beside kernel_file): copied into the folder and listed in "headers" (SPEC.md),
 * as Kernel Tuner's compiler_options=["-I<dir>"] would find them. */
static int copy_headers(importer *im, const char *kernel_file, const char *text, cJSON *spec,
                        out_file *files, int *nfiles)
{
    char dir[4096];
    const char *slash = strrchr(kernel_file, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - kernel_file) : 1,
             slash ? kernel_file : ".");
    cJSON *hs = NULL;
    for (const char *p = strstr(text, "#include"); p; p = strstr(p + 1, "#include")) {
        const char *q = p + 8;
        while (*q == ' ' || *q == '\t')
            q++;
        const char *c = *q == '"' ? strchr(q + 1, '"') : NULL;
        const char *nl = strchr(q, '\n');
        if (!c || (nl && c > nl) || c - q - 1 < 1 || c - q - 1 >= 128)
            continue;
        char name[128], path[4352];
        snprintf(name, sizeof name, "%.*s", (int)(c - q - 1), q + 1);
        int plain = name[0] != '.';
        for (const char *k = name; *k; k++)
            plain &= isalnum((unsigned char)*k) || *k == '_' || *k == '-' || *k == '.';
        snprintf(path, sizeof path, "%s/%s", dir, name);
        struct stat st;
        if (!plain || stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !strcmp(name, "spec.json") ||
            !strcmp(name, "reference.cu") || !strcmp(name, files[1].name))
            continue;
        int dup = 0;
        for (int i = 3; i < *nfiles; i++)
            dup |= !strcmp(files[i].name, name);
        if (dup)
            continue;
        if (*nfiles == AMK__IMP_MAX_FILES)
            return amk__imp_fail(im, AMK_ESPEC, "--kernel", "the kernel includes more than %d "
                                 "headers from its folder", AMK__MAX_HEADERS);
        char *ht = NULL;
        size_t hl;
        amk_diag fd = {0};
        if (amk_fs_read_all(path, &ht, &hl, &fd))
            return amk__imp_fail(im, fd.code, "--kernel", "%s", fd.msg);
        files[*nfiles].name = strdup(name);
        files[*nfiles].text = ht;
        (*nfiles)++;
        if (!files[*nfiles - 1].name || (!hs && !(hs = cJSON_AddArrayToObject(spec, "headers"))))
            return amk__imp_fail(im, AMK_ENOMEM, NULL, "out of memory");
        cJSON_AddItemToArray(hs, cJSON_CreateString(name));
    }
    return AMK_OK;
}

int amk__imp_with_kernel(importer *im, cJSON *spec, const char *kernel_file, out_file *files,
                         int *nfiles)
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
    int vrc = check_vary(im);
    if (vrc)
        return vrc;
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
    const amk_import_opts *vo = im->opts;
    for (int k = 0; vo && vo->vary && k < vo->nvary; k++)
        amk_sb_printf(&ref, "%s%s", k ? ", " : "/* With the checked config's ", vo->vary[k]);
    if (vo && vo->vary && vo->nvary > 0)
        amk_sb_printf(&ref, " (spec reference.vary: -D defines per config). */\n");
    for (int i = 0; i < im->nparams; i++)
        if (!is_vary(im, im->params[i].name)) /* --vary params come as -D, per config */
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
    int rc = copy_headers(im, kernel_file, text, spec, files, nfiles);
    if (!rc)
        rc = kernel_args(im, ks, text, spec, args, files, nfiles);
    if (rc) {
        cJSON_Delete(args);
        return rc;
    }
    cJSON_AddItemToObject(spec, "args", args);
    /* Kernel Tuner defines kernel_tuner in every compile; kernels test it (hotspot_milo
     * defines its params itself when it is missing) */
    cJSON *defs = cJSON_AddObjectToObject(spec, "defines");
    cJSON_AddNumberToObject(defs, "kernel_tuner", 1);
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
    if (vo && vo->vary && vo->nvary > 0) {
        cJSON *v = cJSON_AddArrayToObject(refj, "vary");
        for (int k = 0; v && k < vo->nvary; k++)
            cJSON_AddItemToArray(v, cJSON_CreateString(vo->vary[k]));
    }
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
