/* Kernel spec loading, the kernel part (space_defs/SPEC.md): args, buffers, launch, tensor
 * maps, cost terms, reference, tolerance and requires, each compiled into the amk_spec with
 * its defaults resolved here (the evaluator and cost model never see spec.json). */
#include "spec_load_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Name of a dim or derived value passed as an int argument, or of a buffer. */
static int arg_known(const amk_spec *s, const char *name)
{
    for (int i = 0; i < s->nbuffers; i++)
        if (!strcmp(s->buffers[i].name, name))
            return 1;
    for (int i = 0; i < s->ndims; i++)
        if (!strcmp(s->dims[i], name))
            return 1;
    for (int i = 0; i < s->nderived; i++)
        if (!strcmp(s->derived[i].name, name))
            return 1;
    for (int i = 0; i < s->ntmaps; i++)
        if (!strcmp(s->tmaps[i].name, name))
            return 1;
    for (int i = 0; i < s->nscalars; i++)
        if (!strcmp(s->scalars[i].name, name))
            return 1;
    return 0;
}

/* "data" (an input's bytes) and "answer" (an output's expected bytes): files of the folder,
 * .npy or raw, whose item type must be the buffer's (SPEC.md). */
static int load_buffer_files(loader *L, const cJSON *b, const char *path, amk__buffer *bf)
{
    static const char *const keys[2] = {"data", "answer"};
    for (int k = 0; k < 2; k++) {
        char fpath[96];
        const char *f = amk__ld_get_string(L, b, keys[k], path, 0);
        if (L->err)
            return L->err;
        if (!f)
            continue;
        snprintf(fpath, sizeof fpath, "%s.%s", path, keys[k]);
        if (k == 0 && (bf->role == AMK__ROLE_OUT || bf->role == AMK__ROLE_SCRATCH))
            return amk__ld_fail(L, AMK_ESPEC, fpath, "an %s buffer has no input data",
                                bf->role == AMK__ROLE_OUT ? "output" : "scratch");
        if (k == 1 && (bf->role == AMK__ROLE_IN || bf->role == AMK__ROLE_SCRATCH))
            return amk__ld_fail(L, AMK_ESPEC, fpath, "only outputs have an answer");
        if (k == 0 && cJSON_GetObjectItemCaseSensitive(b, "init"))
            return amk__ld_fail(L, AMK_ESPEC, fpath, "give either 'data' or 'init'");
        if (strlen(f) >= sizeof bf->data)
            return amk__ld_fail(L, AMK_ESPEC, fpath, "file name too long");
        if (amk__ld_check_file(L, fpath, f))
            return L->err;
        char full[4352];
        snprintf(full, sizeof full, "%s/%s", L->s->dir, f);
        amk_data_info in;
        amk_diag dd = {0};
        if (amk_data_probe(full, &in, &dd) != AMK_OK)
            return amk__ld_fail(L, AMK_ESPEC, fpath, "%s", dd.msg);
        if (in.is_npy && bf->dtype >= 0) {
            int size = amk__dtype_sizes[bf->dtype];
            int is_float = strcmp(amk__dtype_names[bf->dtype], "int8") != 0;
            if (in.elt_size != size || (is_float && in.kind != 'f') || (!is_float && in.kind == 'f'))
                return amk__ld_fail(L, AMK_ESPEC, fpath,
                                    "'%s' holds %c%d items, the buffer is %s", f, in.kind,
                                    in.elt_size * 8, amk__dtype_names[bf->dtype]);
        }
        snprintf(k == 0 ? bf->data : bf->answer, sizeof bf->data, "%s", f);
    }
    return 0;
}

/* A buffer's "value" (init "constant" only, and then required) and "memory" / "symbol"
 * (constant memory: an input copied into the kernel's __constant__ symbol before each
 * launch, besides its device buffer). */
static int load_buffer_extras(loader *L, const cJSON *b, const char *path, amk__buffer *bf)
{
    char fpath[96];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, "value");
    snprintf(fpath, sizeof fpath, "%s.value", path);
    if (!strcmp(bf->init, "constant")) {
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
            return amk__ld_fail(L, AMK_ESPEC, fpath,
                                "init 'constant' needs a finite number 'value', got %s",
                                amk__ld_json_type(v));
        bf->value = v->valuedouble;
    } else if (v) {
        return amk__ld_fail(L, AMK_ESPEC, fpath, "'value' is only for init 'constant'");
    }
    const char *mem = amk__ld_get_string(L, b, "memory", path, 0);
    const char *sym = amk__ld_get_string(L, b, "symbol", path, 0);
    if (L->err)
        return L->err;
    snprintf(fpath, sizeof fpath, "%s.memory", path);
    if (mem && strcmp(mem, "global") && strcmp(mem, "constant"))
        return amk__ld_fail(L, AMK_ESPEC, fpath,
                            "unknown memory '%s' (global, constant; texture memory is not "
                            "supported)", mem);
    bf->constant_memory = mem && !strcmp(mem, "constant");
    if (bf->constant_memory && bf->role != AMK__ROLE_IN)
        return amk__ld_fail(L, AMK_ESPEC, fpath,
                            "constant memory is read-only: only an input (role in) can live there");
    snprintf(fpath, sizeof fpath, "%s.symbol", path);
    if (sym && !bf->constant_memory)
        return amk__ld_fail(L, AMK_ESPEC, fpath, "'symbol' is only for memory 'constant'");
    if (sym && !amk__ld_is_identifier(sym))
        return amk__ld_fail(L, AMK_ESPEC, fpath, "'%s' is not an identifier", sym);
    snprintf(bf->symbol, sizeof bf->symbol, "%s", bf->constant_memory ? (sym ? sym : bf->name) : "");
    /* "check": "external": an output judged outside amk (Kernel Tuner's verify=) */
    const char *check = amk__ld_get_string(L, b, "check", path, 0);
    if (L->err)
        return L->err;
    snprintf(fpath, sizeof fpath, "%s.check", path);
    if (check && strcmp(check, "compare") && strcmp(check, "external"))
        return amk__ld_fail(L, AMK_ESPEC, fpath, "unknown check '%s' (compare, external)", check);
    bf->external = check && !strcmp(check, "external");
    if (bf->external && (bf->role == AMK__ROLE_IN || bf->role == AMK__ROLE_SCRATCH))
        return amk__ld_fail(L, AMK_ESPEC, fpath, "only outputs are checked");
    if (bf->external && cJSON_GetObjectItemCaseSensitive(b, "answer"))
        return amk__ld_fail(L, AMK_ESPEC, fpath, "an output checked externally has no answer "
                            "file (the external check has it)");
    return load_buffer_files(L, b, path, bf);
}

int amk__ld_load_buffers(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *bs = cJSON_GetObjectItemCaseSensitive(root, "buffers");
    if (!cJSON_IsArray(bs))
        return amk__ld_fail(L, AMK_ESPEC, "buffers", "expected an array of buffer objects, got %s",
                            amk__ld_json_type(bs));
    int n = cJSON_GetArraySize(bs);
    if (n < 1 || n > AMK__MAX_BUFFERS)
        return amk__ld_fail(L, AMK_ESPEC, "buffers", "expected 1 to %d buffers, got %d",
                            AMK__MAX_BUFFERS, n);
    static const char *const allowed[] = {"name", "dtype", "count", "role", "init", "value",
                                          "memory", "symbol", "data", "answer",
                                          "tolerance_reduction", "check", NULL};
    static const char *const required[] = {"name", "dtype", "count", "role", NULL};
    int i = 0, nout = 0;
    for (const cJSON *b = bs->child; b; b = b->next, i++) {
        char path[64], fpath[96];
        snprintf(path, sizeof path, "buffers[%d]", i);
        if (!cJSON_IsObject(b))
            return amk__ld_fail(L, AMK_ESPEC, path, "expected an object, got %s",
                                amk__ld_json_type(b));
        if (amk__ld_check_keys(L, b, path, allowed, required))
            return L->err;
        amk__buffer *bf = &s->buffers[s->nbuffers];
        const char *name = amk__ld_get_string(L, b, "name", path, 1);
        if (!name)
            return L->err;
        snprintf(fpath, sizeof fpath, "%s.name", path);
        if (!amk__ld_is_identifier(name))
            return amk__ld_fail(L, AMK_ESPEC, fpath, "'%s' is not an identifier", name);
        if (amk__spec_resolve(s, name, strlen(name)) >= 0)
            return amk__ld_fail(L, AMK_ESPEC, fpath,
                                "'%s' is already a dim, param, derived value or "
                                "reserved name", name);
        for (int j = 0; j < s->nbuffers; j++)
            if (!strcmp(s->buffers[j].name, name))
                return amk__ld_fail(L, AMK_ESPEC, fpath, "duplicate buffer '%s'", name);
        snprintf(bf->name, sizeof bf->name, "%s", name);
        const char *dt = amk__ld_get_string(L, b, "dtype", path, 1);
        if (!dt)
            return L->err;
        snprintf(fpath, sizeof fpath, "%s.dtype", path);
        if (!strcmp(dt, "input"))
            bf->dtype = -1;
        else if ((bf->dtype = amk__dtype_index(dt)) < 0)
            return amk__ld_fail(L, AMK_ESPEC, fpath,
                                "unknown dtype '%s' (\"input\" or one of f32 f16 "
                                "bf16 fp8e4m3 int8)", dt);
        const char *role = amk__ld_get_string(L, b, "role", path, 1);
        if (!role)
            return L->err;
        snprintf(fpath, sizeof fpath, "%s.role", path);
        if (!strcmp(role, "in")) bf->role = AMK__ROLE_IN;
        else if (!strcmp(role, "out")) bf->role = AMK__ROLE_OUT;
        else if (!strcmp(role, "inout")) bf->role = AMK__ROLE_INOUT;
        else if (!strcmp(role, "scratch")) bf->role = AMK__ROLE_SCRATCH;
        else return amk__ld_fail(L, AMK_ESPEC, fpath,
                                 "unknown role '%s' (in, out, inout, scratch)", role);
        if (bf->role == AMK__ROLE_OUT || bf->role == AMK__ROLE_INOUT)
            nout++;
        const char *init = amk__ld_get_string(L, b, "init", path, 0);
        if (L->err)
            return L->err;
        snprintf(fpath, sizeof fpath, "%s.init", path);
        if (init && bf->role == AMK__ROLE_OUT)
            return amk__ld_fail(L, AMK_ESPEC, fpath,
                                "an output buffer has no initial distribution");
        if (init && bf->role == AMK__ROLE_SCRATCH)
            return amk__ld_fail(L, AMK_ESPEC, fpath, "a scratch buffer has no initial contents "
                                "(it is poisoned before every run, as an output is)");
        if (!init)
            init = "uniform";
        if (strcmp(init, "uniform") && strcmp(init, "normal") && strcmp(init, "positive") &&
            strcmp(init, "zero") && strcmp(init, "constant"))
            return amk__ld_fail(L, AMK_ESPEC, fpath,
                                "unknown init '%s' (uniform, normal, positive, "
                                "zero, constant)", init);
        /* "zero" is for workspace (counters, atomics) only: real inputs are never zero. */
        if (!strcmp(init, "zero") && bf->role != AMK__ROLE_INOUT)
            return amk__ld_fail(L, AMK_ESPEC, fpath,
                                "init 'zero' is for inout workspace buffers only");
        snprintf(bf->init, sizeof bf->init, "%s", init);
        if (load_buffer_extras(L, b, path, bf))
            return L->err;
        s->nbuffers++;
        snprintf(fpath, sizeof fpath, "%s.count", path);
        if (!(bf->count = amk__ld_get_expr(L, cJSON_GetObjectItemCaseSensitive(b, "count"), fpath)))
            return L->err;
        const cJSON *tr = cJSON_GetObjectItemCaseSensitive(b, "tolerance_reduction");
        if (tr) {
            snprintf(fpath, sizeof fpath, "%s.tolerance_reduction", path);
            if (bf->role == AMK__ROLE_IN || bf->role == AMK__ROLE_SCRATCH)
                return amk__ld_fail(L, AMK_ESPEC, fpath, "only outputs have a tolerance");
            if (!(bf->tol_reduction = amk__ld_get_expr(L, tr, fpath)))
                return L->err;
        }
    }
    if (nout == 0)
        return amk__ld_fail(L, AMK_ESPEC, "buffers",
                            "no output buffer (role out or inout): nothing "
                            "could be checked");
    return 0;
}

int amk__ld_load_args(loader *L, const cJSON *arr, const char *path, char (*out)[AMK_NAME_MAX],
                      int *nout)
{
    amk_spec *s = L->s;
    if (!cJSON_IsArray(arr))
        return amk__ld_fail(L, AMK_ESPEC, path, "expected an array of names, got %s",
                            amk__ld_json_type(arr));
    if (cJSON_GetArraySize(arr) > AMK__MAX_ARGS)
        return amk__ld_fail(L, AMK_ESPEC, path, "at most %d arguments", AMK__MAX_ARGS);
    int i = 0;
    *nout = 0;
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        char ipath[96];
        snprintf(ipath, sizeof ipath, "%s[%d]", path, i);
        if (!cJSON_IsString(c))
            return amk__ld_fail(L, AMK_ESPEC, ipath, "expected a name, got %s",
                                amk__ld_json_type(c));
        if (!arg_known(s, c->valuestring))
            return amk__ld_fail(L, AMK_ESPEC, ipath,
                                "unknown argument '%s' (must name a buffer, a dim, "
                                "a derived value or a tensor map)", c->valuestring);
        snprintf(out[(*nout)++], AMK_NAME_MAX, "%s", c->valuestring);
    }
    return 0;
}

/* A file named by the spec: relative, inside the folder, a regular file. */
/* Does the relative path have a ".." component? */
static int has_dotdot(const char *rel)
{
    for (const char *p = rel; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 1;
        p += n;
        while (*p == '/')
            p++;
    }
    return 0;
}

int amk__ld_check_file(loader *L, const char *path, const char *rel)
{
    if (!*rel || rel[0] == '/' || has_dotdot(rel))
        return amk__ld_fail(L, AMK_ESPEC, path,
                            "'%s' must be a relative path inside the kernel folder",
                            rel);
    char full[4096];
    snprintf(full, sizeof full, "%s/%s", L->s->dir, rel);
    struct stat st;
    if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
        return amk__ld_fail(L, AMK_ESPEC, path, "file '%s' not found in %s", rel, L->s->dir);
    return 0;
}

int amk__ld_load_launch(loader *L, const cJSON *j, const char *path, amk__launch_exprs *out)
{
    static const char *const keys[] = {"grid", "block", "shared_bytes", "cluster", NULL};
    static const char *const required[] = {"grid", "block", "shared_bytes", NULL};
    if (!cJSON_IsObject(j))
        return amk__ld_fail(L, AMK_ESPEC, path,
                            "expected an object with grid, block, shared_bytes, "
                            "got %s", amk__ld_json_type(j));
    if (amk__ld_check_keys(L, j, path, keys, required))
        return L->err;
    static const char *const dims[] = {"grid", "block", "cluster"};
    for (int k = 0; k < 3; k++) {
        char fpath[128];
        snprintf(fpath, sizeof fpath, "%s.%s", path, dims[k]);
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, dims[k]);
        if (k == 2 && !a)
            break; /* no cluster: 1 x 1 x 1 */
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 3)
            return amk__ld_fail(L, AMK_ESPEC, fpath, "expected an array of 3 expressions");
        amk_expr **dst = k == 0 ? out->grid : k == 1 ? out->block : out->cluster;
        int i = 0;
        for (const cJSON *c = a->child; c; c = c->next, i++) {
            char ipath[160];
            snprintf(ipath, sizeof ipath, "%s[%d]", fpath, i);
            if (!(dst[i] = amk__ld_get_expr(L, c, ipath)))
                return L->err;
        }
    }
    char fpath[128];
    snprintf(fpath, sizeof fpath, "%s.shared_bytes", path);
    out->shared = amk__ld_get_expr(L, cJSON_GetObjectItemCaseSensitive(j, "shared_bytes"), fpath);
    return L->err;
}

/* An expression array of exactly n entries at obj[key] into out[]. */
static int load_expr_array(loader *L, const cJSON *obj, const char *key, const char *path,
                           int n, amk_expr **out)
{
    char fpath[160];
    snprintf(fpath, sizeof fpath, "%s.%s", path, key);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return amk__ld_fail(L, AMK_ESPEC, fpath, "expected an array of %d expression%s (one per "
                            "dim%s), got %s", n, n == 1 ? "" : "s",
                            strcmp(key, "strides") ? "" : " after the innermost",
                            cJSON_IsArray(a) ? "another length" : amk__ld_json_type(a));
    int i = 0;
    for (const cJSON *c = a->child; c; c = c->next, i++) {
        char ipath[192];
        snprintf(ipath, sizeof ipath, "%s[%d]", fpath, i);
        if (!(out[i] = amk__ld_get_expr(L, c, ipath)))
            return L->err;
    }
    return 0;
}

/* Optional "tensor_maps": {"tmA": {"buffer", "dims", "strides", "box", "swizzle",
 * "l2_promotion", "oob"}}: TMA descriptors the GPU layer encodes; args may name them. Their
 * per-config rules are amk_config_tensor_map's. */
int amk__ld_load_tensor_maps(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    static const char *const keys[] = {"buffer", "dims", "strides", "box", "swizzle",
                                       "l2_promotion", "oob", NULL};
    static const char *const required[] = {"buffer", "dims", "strides", "box", "swizzle", NULL};
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(root, "tensor_maps");
    if (!tm)
        return 0;
    if (!cJSON_IsObject(tm))
        return amk__ld_fail(L, AMK_ESPEC, "tensor_maps",
                            "expected an object (name -> descriptor), got "
                            "%s", amk__ld_json_type(tm));
    if (cJSON_GetArraySize(tm) > AMK__MAX_TMAPS)
        return amk__ld_fail(L, AMK_ESPEC, "tensor_maps", "at most %d tensor maps", AMK__MAX_TMAPS);
    for (const cJSON *m = tm->child; m; m = m->next) {
        char path[128];
        snprintf(path, sizeof path, "tensor_maps.%s", m->string);
        if (amk__ld_check_new_name(L, path, m->string))
            return L->err;
        for (int i = 0; i < s->nbuffers; i++)
            if (!strcmp(s->buffers[i].name, m->string))
                return amk__ld_fail(L, AMK_ESPEC, path, "'%s' is already declared as a buffer",
                                    m->string);
        for (int i = 0; i < s->ntmaps; i++)
            if (!strcmp(s->tmaps[i].name, m->string))
                return amk__ld_fail(L, AMK_ESPEC, path, "duplicate tensor map '%s'", m->string);
        if (!cJSON_IsObject(m))
            return amk__ld_fail(L, AMK_ESPEC, path, "expected an object, got %s",
                                amk__ld_json_type(m));
        if (amk__ld_check_keys(L, m, path, keys, required))
            return L->err;
        amk__tmap *t = &s->tmaps[s->ntmaps++];
        snprintf(t->name, sizeof t->name, "%s", m->string);
        const char *buf = amk__ld_get_string(L, m, "buffer", path, 1);
        if (!buf)
            return L->err;
        t->buffer = -1;
        for (int i = 0; i < s->nbuffers; i++)
            if (!strcmp(s->buffers[i].name, buf))
                t->buffer = i;
        char fpath[160];
        snprintf(fpath, sizeof fpath, "%s.buffer", path);
        if (t->buffer < 0)
            return amk__ld_fail(L, AMK_ESPEC, fpath, "unknown buffer '%s'", buf);
        const cJSON *dims = cJSON_GetObjectItemCaseSensitive(m, "dims");
        int rank = cJSON_IsArray(dims) ? cJSON_GetArraySize(dims) : 0;
        snprintf(fpath, sizeof fpath, "%s.dims", path);
        if (rank < 1 || rank > AMK_TMAP_MAX_RANK)
            return amk__ld_fail(L, AMK_ESPEC, fpath, "expected an array of 1 to %d expressions "
                                "(elements, innermost dim first), got %s", AMK_TMAP_MAX_RANK,
                                cJSON_IsArray(dims) ? "another length" : amk__ld_json_type(dims));
        t->rank = rank;
        if (load_expr_array(L, m, "dims", path, rank, t->dims) ||
            load_expr_array(L, m, "strides", path, rank - 1, t->strides) ||
            load_expr_array(L, m, "box", path, rank, t->box))
            return L->err;
        int64_t v;
        snprintf(fpath, sizeof fpath, "%s.swizzle", path);
        const cJSON *sw = cJSON_GetObjectItemCaseSensitive(m, "swizzle");
        if (!amk__ld_json_int(sw, 0, 128, &v) || (v != 0 && v != 32 && v != 64 && v != 128))
            return amk__ld_fail(L, AMK_ESPEC, fpath, "expected 0 (none), 32, 64 or 128 (bytes)");
        t->swizzle = (int)v;
        t->l2_promotion = 256;
        const cJSON *l2 = cJSON_GetObjectItemCaseSensitive(m, "l2_promotion");
        snprintf(fpath, sizeof fpath, "%s.l2_promotion", path);
        if (l2 && (!amk__ld_json_int(l2, 0, 256,
                                     &v) || (v != 0 && v != 64 && v != 128 && v != 256)))
            return amk__ld_fail(L, AMK_ESPEC, fpath, "expected 0 (none), 64, 128 or 256 (bytes)");
        if (l2)
            t->l2_promotion = (int)v;
        const char *oob = amk__ld_get_string(L, m, "oob", path, 0);
        if (L->err)
            return L->err;
        snprintf(fpath, sizeof fpath, "%s.oob", path);
        if (oob && strcmp(oob, "zero"))
            return amk__ld_fail(L, AMK_ESPEC, fpath, "unknown value '%s' (\"zero\": out-of-bounds "
                                "elements load as zero and are not stored)", oob);
    }
    return 0;
}

int amk__ld_load_cost(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "cost");
    static const char *const allowed[] = {"flops", "min_bytes", "traffic_bytes", "regs", "unit",
                                          "uniform_blocks", "inflight_bytes", "latency_rounds",
                                          "sync_steps", "reread_bytes", "block_footprint",
                                          "segment_bytes", NULL};
    static const char *const required[] = {"flops", "min_bytes", "unit", NULL};
    if (!cJSON_IsObject(c))
        return amk__ld_fail(L, AMK_ESPEC, "cost", "expected an object, got %s",
                            amk__ld_json_type(c));
    if (amk__ld_check_keys(L, c, "cost", allowed, required))
        return L->err;
    /* The memory terms, allowed[6..] in amk_memory_term order. */
    for (int k = 0; k < AMK_MEMORY_TERMS; k++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(c, allowed[6 + k]);
        char path[48];
        snprintf(path, sizeof path, "cost.%s", allowed[6 + k]);
        if (m && !(s->memory[k] = amk__ld_get_expr(L, m, path)))
            return L->err;
    }
    if (!(s->flops = amk__ld_get_expr(L, cJSON_GetObjectItemCaseSensitive(c, "flops"),
                                      "cost.flops")))
        return L->err;
    if (!(s->min_bytes = amk__ld_get_expr(L, cJSON_GetObjectItemCaseSensitive(c, "min_bytes"),
                                          "cost.min_bytes")))
        return L->err;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "traffic_bytes");
    if (t && !(s->traffic = amk__ld_get_expr(L, t, "cost.traffic_bytes")))
        return L->err;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(c, "regs");
    if (r && !(s->regs = amk__ld_get_expr(L, r, "cost.regs")))
        return L->err;
    const cJSON *ub = cJSON_GetObjectItemCaseSensitive(c, "uniform_blocks");
    if (ub) {
        /* a string only, as SPEC.md has always documented it */
        if (!cJSON_IsString(ub))
            return amk__ld_fail(L, AMK_ESPEC, "cost.uniform_blocks",
                                "expected an expression (string), "
                                "got %s", amk__ld_json_type(ub));
        if (!(s->uniform_blocks = amk__ld_get_expr(L, ub, "cost.uniform_blocks")))
            return L->err;
    }
    const char *unit = amk__ld_get_string(L, c, "unit", "cost", 1);
    if (!unit)
        return L->err;
    static const char *const units[] = {"simt_f32", "tf32", "f16", "bf16", "fp8", "int8",
                                        "none", NULL};
    for (const char *const *u = units; *u; u++)
        if (!strcmp(unit, *u)) {
            snprintf(s->unit, sizeof s->unit, "%s", unit);
            return 0;
        }
    return amk__ld_fail(L, AMK_ESPEC, "cost.unit", "unknown unit '%s' (simt_f32 tf32 f16 bf16 fp8 "
                        "int8 none)", unit);
}

/* "reference.vary": the params that change what the kernel computes, which the reference
 * (the template at its default config) takes from the config it checks. Names of params,
 * each once; only with "default_config": true (an independent reference computes the one
 * right answer itself). */
static int load_vary(loader *L, const cJSON *v)
{
    amk_spec *s = L->s;
    s->nref_vary = 0;
    if (!v)
        return 0;
    if (!cJSON_IsArray(v))
        return amk__ld_fail(L, AMK_ESPEC, "reference.vary", "expected a list of param names, "
                            "got %s", amk__ld_json_type(v));
    if (!s->ref_default_config && cJSON_GetArraySize(v) > 0)
        return amk__ld_fail(L, AMK_ESPEC, "reference.vary", "needs \"default_config\": true "
                            "(an independent reference computes every config's answer)");
    int k = 0;
    for (const cJSON *e = v->child; e; e = e->next, k++) {
        int i = cJSON_IsString(e) ? amk_spec_param_index(s, e->valuestring) : -1;
        if (i < 0)
            return amk__ld_fail(L, AMK_ESPEC, "reference.vary", "[%d]: %s%s%s is not a param",
                                k, cJSON_IsString(e) ? "'" : "",
                                cJSON_IsString(e) ? e->valuestring : amk__ld_json_type(e),
                                cJSON_IsString(e) ? "'" : "");
        for (int j = 0; j < s->nref_vary; j++)
            if (s->ref_vary[j] == i)
                return amk__ld_fail(L, AMK_ESPEC, "reference.vary", "[%d]: '%s' is named "
                                    "twice", k, e->valuestring);
        s->ref_vary[s->nref_vary++] = i;
    }
    return 0;
}

int amk__ld_load_reference(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "reference");
    static const char *const allowed[] = {"source", "entry", "args", "launch", "host",
                                          "default_config", "vary", NULL};
    static const char *const required[] = {"source", "entry", "args", "launch", NULL};
    if (!cJSON_IsObject(r))
        return amk__ld_fail(L, AMK_ESPEC, "reference", "expected an object, got %s",
                            amk__ld_json_type(r));
    if (amk__ld_check_keys(L, r, "reference", allowed, required))
        return L->err;
    const cJSON *dc = cJSON_GetObjectItemCaseSensitive(r, "default_config");
    if (dc && !cJSON_IsBool(dc))
        return amk__ld_fail(L, AMK_ESPEC, "reference.default_config",
                            "expected true or false, got %s",
                            amk__ld_json_type(dc));
    s->ref_default_config = cJSON_IsTrue(dc);
    if (load_vary(L, cJSON_GetObjectItemCaseSensitive(r, "vary")))
        return L->err;
    const char *src = amk__ld_get_string(L, r, "source", "reference", 1);
    if (!src || amk__ld_check_file(L, "reference.source", src))
        return L->err;
    const char *entry = amk__ld_get_string(L, r, "entry", "reference", 1);
    if (!entry)
        return L->err;
    if (!amk__ld_is_identifier(entry))
        return amk__ld_fail(L, AMK_ESPEC, "reference.entry", "'%s' is not an identifier", entry);
    const char *host = amk__ld_get_string(L, r, "host", "reference", 0);
    if (L->err)
        return L->err;
    if (host && !amk__ld_is_identifier(host))
        return amk__ld_fail(L, AMK_ESPEC, "reference.host", "'%s' is not an identifier", host);
    if (!(s->ref_source = amk__ld_dup_or_fail(L, src)) ||
        !(s->ref_entry = amk__ld_dup_or_fail(L, entry)) ||
        (host && !(s->ref_host = amk__ld_dup_or_fail(L, host))))
        return L->err;
    if (amk__ld_load_args(L, cJSON_GetObjectItemCaseSensitive(r, "args"), "reference.args",
                          s->ref_args,
                          &s->nref_args))
        return L->err;
    return amk__ld_load_launch(L, cJSON_GetObjectItemCaseSensitive(r, "launch"), "reference.launch",
                               &s->ref_launch);
}

/* Index of the buffer that member `key` of the peer object names; -1 (L->err set) when it
 * is missing or names no buffer. */
static int peer_buffer(loader *L, const cJSON *p, const char *key)
{
    char path[32];
    snprintf(path, sizeof path, "peer.%s", key);
    const char *name = amk__ld_get_string(L, p, key, "peer", 1);
    if (!name)
        return -1;
    for (int i = 0; i < L->s->nbuffers; i++)
        if (strcmp(L->s->buffers[i].name, name) == 0)
            return i;
    amk__ld_fail(L, AMK_ESPEC, path, "'%s' is not one of the spec's buffers", name);
    return -1;
}

int amk__ld_load_peer(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    s->peer_op = AMK_PEER_NONE;
    s->peer_a = s->peer_b = s->peer_c = -1;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "peer");
    if (!p)
        return AMK_OK;
    if (!cJSON_IsObject(p))
        return amk__ld_fail(L, AMK_ESPEC, "peer", "expected an object, got %s",
                            amk__ld_json_type(p));
    const char *op = amk__ld_get_string(L, p, "op", "peer", 1);
    if (!op)
        return L->err;
    if (strcmp(op, "gemm") == 0) {
        static const char *const keys[] = {"op", "a", "b", "c", "m", "n", "k", NULL};
        if (amk__ld_check_keys(L, p, "peer", keys, keys))
            return L->err;
        s->peer_op = AMK_PEER_GEMM;
        if ((s->peer_a = peer_buffer(L, p, "a")) < 0 || (s->peer_b = peer_buffer(L, p, "b")) < 0 ||
            (s->peer_c = peer_buffer(L, p, "c")) < 0)
            return L->err;
        if (!(s->peer_m = amk__ld_get_expr(L, cJSON_GetObjectItemCaseSensitive(p, "m"), "peer.m")) ||
            !(s->peer_n = amk__ld_get_expr(L, cJSON_GetObjectItemCaseSensitive(p, "n"), "peer.n")) ||
            !(s->peer_k = amk__ld_get_expr(L, cJSON_GetObjectItemCaseSensitive(p, "k"), "peer.k")))
            return L->err;
        return AMK_OK;
    }
    if (strcmp(op, "copy") == 0) {
        static const char *const keys[] = {"op", "src", "dst", NULL};
        if (amk__ld_check_keys(L, p, "peer", keys, keys))
            return L->err;
        s->peer_op = AMK_PEER_COPY;
        if ((s->peer_a = peer_buffer(L, p, "src")) < 0 || (s->peer_c = peer_buffer(L, p, "dst")) < 0)
            return L->err;
        return AMK_OK;
    }
    return amk__ld_fail(L, AMK_ESPEC, "peer.op", "unknown peer '%s' (gemm or copy)", op);
}

int amk__ld_load_tolerance(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
    static const char *const allowed[] = {"reduction", "rtol_scale", "atol", NULL};
    static const char *const required[] = {"reduction", NULL};
    if (!cJSON_IsObject(t))
        return amk__ld_fail(L, AMK_ESPEC, "tolerance", "expected an object, got %s",
                            amk__ld_json_type(t));
    if (amk__ld_check_keys(L, t, "tolerance", allowed, required))
        return L->err;
    if (!(s->tol_reduction = amk__ld_get_expr(L, cJSON_GetObjectItemCaseSensitive(t, "reduction"),
                                              "tolerance.reduction")))
        return L->err;
    s->rtol_scale = 1.0;
    s->atol = NAN; /* not given: the check derives it from max|ref| (SPEC.md) */
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(t, "rtol_scale");
    if (rs) {
        if (!cJSON_IsNumber(rs) || !isfinite(rs->valuedouble) || rs->valuedouble <= 0)
            return amk__ld_fail(L, AMK_ESPEC, "tolerance.rtol_scale", "expected a number > 0");
        s->rtol_scale = rs->valuedouble;
    }
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(t, "atol");
    if (at) {
        if (!cJSON_IsNumber(at) || !isfinite(at->valuedouble) || at->valuedouble < 0)
            return amk__ld_fail(L, AMK_ESPEC, "tolerance.atol", "expected a number >= 0");
        s->atol = at->valuedouble;
    }
    return 0;
}

/* Vendors a "requires" object may name, in amk_spec.requires order. */
const char *const amk__spec_vendors[] = {"nvidia", "amd", NULL};

/* "sm_90", "sm_90a", "sm_100a": an NVIDIA arch, at most one feature letter 'a' at the end. */
static int is_sm_arch(const char *a)
{
    size_t n = 0;
    if (strncmp(a, "sm_", 3) != 0)
        return 0;
    while (isdigit((unsigned char)a[3 + n]))
        n++;
    return n >= 2 && n <= 3 && (a[3 + n] == '\0' || (a[3 + n] == 'a' && a[4 + n] == '\0'));
}

/* "gfx90a", "gfx942", "gfx1100": "gfx" and 3 or 4 lowercase letters or digits. */
static int is_gfx_arch(const char *a)
{
    size_t n = 0;
    if (strncmp(a, "gfx", 3) != 0)
        return 0;
    while (isdigit((unsigned char)a[3 + n]) || islower((unsigned char)a[3 + n]))
        n++;
    return n >= 3 && n <= 4 && a[3 + n] == '\0';
}

/* Optional "requires": {"nvidia": "sm_90a", "amd": "gfx942"}: the exact arch the kernel's
 * code must be compiled for, per supported vendor (e.g. wgmma exists only in sm_90a). */
int amk__ld_load_requires(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "requires");
    if (!r)
        return 0;
    if (!cJSON_IsObject(r) || !r->child)
        return amk__ld_fail(L, AMK_ESPEC, "requires",
                            "expected an object naming at least one vendor "
                            "(\"nvidia\": \"sm_90a\", \"amd\": \"gfx942\"), got %s",
                            cJSON_IsObject(r) ? "an empty object" : amk__ld_json_type(r));
    if (amk__ld_check_keys(L, r, "requires", amk__spec_vendors, NULL))
        return L->err;
    for (int v = 0; amk__spec_vendors[v]; v++) {
        const char *arch = amk__ld_get_string(L, r, amk__spec_vendors[v], "requires", 0);
        if (L->err)
            return L->err;
        if (!arch)
            continue;
        char path[32];
        snprintf(path, sizeof path, "requires.%s", amk__spec_vendors[v]);
        if (v == 0 && !is_sm_arch(arch))
            return amk__ld_fail(L, AMK_ESPEC, path, "'%s' is not an NVIDIA arch (sm_NN or sm_NNa, "
                                "e.g. sm_90a)", arch);
        if (v == 1 && !is_gfx_arch(arch))
            return amk__ld_fail(L, AMK_ESPEC, path, "'%s' is not an AMD arch (gfxNNN, e.g. gfx942)",
                                arch);
        snprintf(s->requires[v], sizeof s->requires[v], "%s", arch);
    }
    s->has_requires = 1;
    return 0;
}

/* The names a scalar or define may not take: every other named thing of the spec. */
static int name_taken(const amk_spec *s, const char *name)
{
    if (amk__spec_resolve((void *)s, name, strlen(name)) >= 0)
        return 1;
    for (int i = 0; i < s->nbuffers; i++)
        if (!strcmp(s->buffers[i].name, name))
            return 1;
    for (int i = 0; i < s->ntmaps; i++)
        if (!strcmp(s->tmaps[i].name, name))
            return 1;
    for (int i = 0; i < s->nscalars; i++)
        if (!strcmp(s->scalars[i].name, name))
            return 1;
    return 0;
}

/* "scalars": name -> {"dtype": f32|f64|i32|u32|i64|u64, "value": number}: by-value kernel
 * arguments of a fixed type (Kernel Tuner's numpy scalars, T1 Scalar arguments). */
static int load_scalars(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "scalars");
    if (!obj)
        return 0;
    if (!cJSON_IsObject(obj))
        return amk__ld_fail(L, AMK_ESPEC, "scalars", "expected an object, got %s",
                            amk__ld_json_type(obj));
    static const char *const allowed[] = {"dtype", "value", NULL};
    for (const cJSON *e = obj->child; e; e = e->next) {
        char path[96];
        snprintf(path, sizeof path, "scalars.%.60s", e->string);
        if (s->nscalars == AMK__MAX_SCALARS)
            return amk__ld_fail(L, AMK_ESPEC, "scalars", "at most %d scalars", AMK__MAX_SCALARS);
        if (!amk__ld_is_identifier(e->string))
            return amk__ld_fail(L, AMK_ESPEC, path, "'%s' is not an identifier", e->string);
        if (name_taken(s, e->string))
            return amk__ld_fail(L, AMK_ESPEC, path,
                                "'%s' is already a dim, param, derived value, "
                                "buffer, tensor map or scalar", e->string);
        if (!cJSON_IsObject(e))
            return amk__ld_fail(L, AMK_ESPEC, path, "expected {\"dtype\": ..., \"value\": ...}");
        if (amk__ld_check_keys(L, e, path, allowed, allowed))
            return L->err;
        amk__scalar *sc = &s->scalars[s->nscalars];
        const char *dt = amk__ld_get_string(L, e, "dtype", path, 1);
        if (!dt)
            return L->err;
        char fpath[128];
        snprintf(fpath, sizeof fpath, "%s.dtype", path);
        static const char *const types[] = {"f32", "f64", "i32", "u32", "i64", "u64", NULL};
        int t = 0;
        while (types[t] && strcmp(types[t], dt))
            t++;
        if (!types[t])
            return amk__ld_fail(L, AMK_ESPEC, fpath,
                                "unknown scalar dtype '%s' (f32 f64 i32 u32 i64 u64)", dt);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
        snprintf(fpath, sizeof fpath, "%s.value", path);
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
            return amk__ld_fail(L, AMK_ESPEC, fpath, "expected a finite number");
        double x = v->valuedouble;
        if (t >= 2) { /* integers: exact and in range of the type */
            static const double lo[] = {0, 0, -2147483648.0, 0, -9223372036854775808.0, 0};
            static const double hi[] = {0, 0, 2147483647.0, 4294967295.0,
                                        9223372036854775807.0, 18446744073709551615.0};
            if (x != floor(x) || x < lo[t] || x > hi[t])
                return amk__ld_fail(L, AMK_ESPEC, fpath, "%g is not a %s", x, dt);
            sc->ivalue = t == 5 && x >= 9223372036854775808.0
                             ? (int64_t)(uint64_t)x
                             : (int64_t)x;
        }
        snprintf(sc->name, sizeof sc->name, "%s", e->string);
        snprintf(sc->dtype, sizeof sc->dtype, "%s", dt);
        sc->value = x;
        s->nscalars++;
    }
    return 0;
}

/* "defines": name -> integer expression, passed to the compiler as -DNAME=<value> for the
 * template (at the config) and the reference (at the default params), e.g. Kernel Tuner's
 * `kernel_tuner`. Names may not be params (those are defined already) or other names. */
static int load_defines(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "defines");
    if (!obj)
        return 0;
    if (!cJSON_IsObject(obj))
        return amk__ld_fail(L, AMK_ESPEC, "defines", "expected an object, got %s",
                            amk__ld_json_type(obj));
    for (const cJSON *e = obj->child; e; e = e->next) {
        char path[96];
        snprintf(path, sizeof path, "defines.%.60s", e->string);
        if (s->ndefines == AMK__MAX_DEFINES)
            return amk__ld_fail(L, AMK_ESPEC, "defines", "at most %d defines", AMK__MAX_DEFINES);
        if (!amk__ld_is_identifier(e->string) || !strncmp(e->string, "AMK_", 4))
            return amk__ld_fail(L, AMK_ESPEC, path,
                                "'%s' is not an identifier outside amk's AMK_ names", e->string);
        if (name_taken(s, e->string))
            return amk__ld_fail(L, AMK_ESPEC, path,
                                "'%s' is already a dim, param, derived value, buffer, "
                                "tensor map or scalar", e->string);
        for (int i = 0; i < s->ndefines; i++)
            if (!strcmp(s->defines[i].name, e->string))
                return amk__ld_fail(L, AMK_ESPEC, path, "duplicate define");
        amk__define *df = &s->defines[s->ndefines];
        snprintf(df->name, sizeof df->name, "%s", e->string);
        if (!(df->e = amk__ld_get_expr(L, e, path)))
            return L->err;
        s->ndefines++;
    }
    return 0;
}

/* "headers": files of the kernel folder that the sources include as `#include "name"`;
 * the compile unit puts their text in place of those lines (the runtime compilers get one
 * source, and the compile cache key covers the headers' contents). */
static int load_headers(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "headers");
    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > AMK__MAX_HEADERS)
        return amk__ld_fail(L, AMK_ESPEC, "headers", "expected an array of at most %d file "
                            "names", AMK__MAX_HEADERS);
    int i = 0;
    for (const cJSON *h = arr->child; h; h = h->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "headers[%d]", i);
        if (!cJSON_IsString(h) || strlen(h->valuestring) >= sizeof s->headers[0] ||
            strpbrk(h->valuestring, "\"\n"))
            return amk__ld_fail(L, AMK_ESPEC, path, "expected a file name");
        if (amk__ld_check_file(L, path, h->valuestring))
            return L->err;
        snprintf(s->headers[s->nheaders++], sizeof s->headers[0], "%s", h->valuestring);
    }
    return 0;
}

int amk__ld_load_scalars_defines(loader *L, const cJSON *root)
{
    return load_scalars(L, root) || load_defines(L, root) || load_headers(L, root) ? L->err : 0;
}
