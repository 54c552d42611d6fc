/* The self-contained C header of an export database: the same data and the same lookup
 * rules as amk_export_db_lookup, in plain C99. docs/EXPORT.md. */
#include "export_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A C identifier from a name: other characters become '_', a leading digit gets one. */
static void c_ident(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    if (isdigit((unsigned char)*s) && n + 1 < cap)
        out[n++] = '_';
    for (; *s && n + 1 < cap; s++)
        out[n++] = isalnum((unsigned char)*s) ? *s : '_';
    out[n] = 0;
    if (!n)
        snprintf(out, cap, "_");
}

/* A C string literal (or NULL). Octal escapes for anything unusual; "" ends one after an
 * escape so a following digit is not taken into it. */
static void c_str(amk_sb *sb, const char *s)
{
    if (!s) {
        amk_sb_printf(sb, "NULL");
        return;
    }
    amk_sb_printf(sb, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            amk_sb_printf(sb, "\\%c", c);
        else if (c < 32 || c >= 127 || c == '?')
            amk_sb_printf(sb, "\\%03o\"\"", c);
        else
            amk_sb_printf(sb, "%c", c);
    }
    amk_sb_printf(sb, "\"");
}

static const char c_common_head[] =
    "#ifndef AMK_TUNED_COMMON_V1\n"
    "#define AMK_TUNED_COMMON_V1\n"
    "#include <stddef.h>\n"
    "#include <string.h>\n"
    "\n"
    "/* Which part of the database answered a lookup. */\n"
    "typedef struct amk_tuned_match {\n"
    "    const char *level;  /* \"device\", \"arch\", \"vendor\" or \"default\" */\n"
    "    const char *vendor; /* of the level that answered; NULL above it */\n"
    "    const char *arch;\n"
    "    const char *device;\n"
    "    const char *shape;  /* the tuned shape whose config is returned */\n"
    "    int nearest;        /* 1 when that shape is not the one asked for */\n"
    "    double distance;    /* sum over dims of |log2 ratio|; -1 = the level's default */\n"
    "} amk_tuned_match;\n"
    "\n"
    "typedef struct amk_tuned__node {\n"
    "    int level; /* 3 device, 2 arch, 1 vendor, 0 default */\n"
    "    const char *vendor, *arch, *device, *dflt_shape;\n"
    "    int dflt, first, count;\n"
    "} amk_tuned__node;\n"
    "\n"
    "typedef struct amk_tuned__shape {\n"
    "    const char *shape, *dtype;\n"
    "    int cfg;\n"
    "} amk_tuned__shape;\n"
    "\n"
    "static inline int amk_tuned__lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }\n"
    "\n"
    "static inline int amk_tuned__ieq(const char *a, const char *b)\n"
    "{\n"
    "    for (; *a && *b; a++, b++)\n"
    "        if (amk_tuned__lower((unsigned char)*a) != amk_tuned__lower((unsigned char)*b))\n"
    "            return 0;\n"
    "    return *a == *b;\n"
    "}\n"
    "\n"
    "static inline int amk_tuned__icontains(const char *hay, const char *needle)\n"
    "{\n"
    "    size_t n = strlen(needle), i;\n"
    "    if (!n)\n"
    "        return 0;\n"
    "    for (; *hay; hay++) {\n"
    "        for (i = 0; i < n && hay[i]; i++)\n"
    "            if (amk_tuned__lower((unsigned char)hay[i]) !=\n"
    "                amk_tuned__lower((unsigned char)needle[i]))\n"
    "                break;\n"
    "        if (i == n)\n"
    "            return 1;\n"
    "    }\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "/* log2(x) in units of 1/65536 (x >= 1), exactly as amk computes it. */\n"
    "static inline long long amk_tuned__lg(long long x)\n"
    "{\n"
    "    long long e = 0, f = 0;\n"
    "    unsigned long long u;\n"
    "    double y;\n"
    "    int i;\n"
    "    if (x < 1)\n"
    "        x = 1;\n"
    "    for (u = (unsigned long long)x; u >> 1; u >>= 1)\n"
    "        e++;\n"
    "    y = (double)x / (double)(1ULL << e);\n"
    "    for (i = 15; i >= 0; i--) {\n"
    "        y = y * y;\n"
    "        if (y >= 2.0) {\n"
    "            y = y / 2.0;\n"
    "            f |= 1LL << i;\n"
    "        }\n"
    "    }\n"
    "    return e * 65536 + f;\n"
    "}\n"
    "\n"
    "/* Device name -> vendor/arch: exact key or name, then arch, then a key inside the name\n"
    " * (case-insensitive). Unknown devices get NULLs. */\n"
    "static inline void amk_tuned__resolve(const char *dev, const char **vendor, const char **arch)\n"
    "{\n"
    "    static const char *const t[][4] = {\n";

static const char c_common_tail[] =
    "        {NULL, NULL, NULL, NULL}};\n"
    "    int i;\n"
    "    *vendor = *arch = NULL;\n"
    "    if (!dev || !*dev)\n"
    "        return;\n"
    "    for (i = 0; t[i][0]; i++)\n"
    "        if (amk_tuned__ieq(dev, t[i][0]) || amk_tuned__ieq(dev, t[i][1]))\n"
    "            goto found;\n"
    "    for (i = 0; t[i][0]; i++)\n"
    "        if (amk_tuned__ieq(dev, t[i][3]))\n"
    "            goto found;\n"
    "    for (i = 0; t[i][0]; i++)\n"
    "        if (amk_tuned__icontains(dev, t[i][0]))\n"
    "            goto found;\n"
    "    return;\n"
    "found:\n"
    "    *vendor = t[i][2];\n"
    "    *arch = t[i][3];\n"
    "}\n"
    "\n"
    "/* Level: the device, else its arch, else its vendor, else the default; then the nearest\n"
    " * shape of the same dtype (NULL or \"\" = any) at that level, else the level's default.\n"
    " * Returns the index of the config. */\n"
    "static inline int amk_tuned__lookup(const amk_tuned__node *nodes, int n_nodes,\n"
    "                                    const amk_tuned__shape *shapes, const long long *dims,\n"
    "                                    int nd, const char *device, const long long *q,\n"
    "                                    const char *dtype, amk_tuned_match *m)\n"
    "{\n"
    "    static const char *const names[] = {\"default\", \"vendor\", \"arch\", \"device\"};\n"
    "    const char *vendor = NULL, *arch = NULL;\n"
    "    int i, k, ni = -1, best = -1;\n"
    "    long long bestd = 0;\n"
    "    for (i = 0; device && ni < 0 && i < n_nodes; i++)\n"
    "        if (nodes[i].level == 3 && amk_tuned__ieq(nodes[i].device, device))\n"
    "            ni = i;\n"
    "    if (ni < 0)\n"
    "        amk_tuned__resolve(device, &vendor, &arch);\n"
    "    for (i = 0; vendor && ni < 0 && i < n_nodes; i++)\n"
    "        if (nodes[i].level == 2 && !strcmp(nodes[i].vendor, vendor) &&\n"
    "            !strcmp(nodes[i].arch, arch))\n"
    "            ni = i;\n"
    "    for (i = 0; vendor && ni < 0 && i < n_nodes; i++)\n"
    "        if (nodes[i].level == 1 && !strcmp(nodes[i].vendor, vendor))\n"
    "            ni = i;\n"
    "    for (i = 0; ni < 0 && i < n_nodes; i++)\n"
    "        if (nodes[i].level == 0)\n"
    "            ni = i;\n"
    "    for (k = nodes[ni].first; k < nodes[ni].first + nodes[ni].count; k++) {\n"
    "        long long dist = 0;\n"
    "        if (dtype && *dtype && shapes[k].dtype && *shapes[k].dtype &&\n"
    "            strcmp(dtype, shapes[k].dtype))\n"
    "            continue;\n"
    "        for (i = 0; i < nd; i++) {\n"
    "            long long v = dims[k * nd + i];\n"
    "            if (v < 1) {\n"
    "                dist += 64LL * 65536;\n"
    "            } else {\n"
    "                long long a = amk_tuned__lg(q[i]), b = amk_tuned__lg(v);\n"
    "                dist += a > b ? a - b : b - a;\n"
    "            }\n"
    "        }\n"
    "        if (best < 0 || dist < bestd) {\n"
    "            best = k;\n"
    "            bestd = dist;\n"
    "        }\n"
    "    }\n"
    "    if (m) {\n"
    "        m->level = names[nodes[ni].level];\n"
    "        m->vendor = nodes[ni].vendor;\n"
    "        m->arch = nodes[ni].arch;\n"
    "        m->device = nodes[ni].device;\n"
    "        m->shape = best >= 0 ? shapes[best].shape : nodes[ni].dflt_shape;\n"
    "        m->nearest = best < 0 || bestd != 0;\n"
    "        m->distance = best >= 0 ? (double)bestd / 65536.0 : -1.0;\n"
    "    }\n"
    "    return best >= 0 ? shapes[best].cfg : nodes[ni].dflt;\n"
    "}\n"
    "#endif /* AMK_TUNED_COMMON_V1 */\n";

typedef struct cgen {
    amk_sb cfg, shapes, dims, nodes;
    char **cfg_keys; /* canonical params text of each config */
    int n_cfg, cap_cfg, n_shapes, n_nodes;
    const cJSON *info;
    int oom;
} cgen;

/* Index of the config of entry e, adding its initializer the first time. */
static int cgen_cfg(cgen *g, const cJSON *e)
{
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(e, "params"), *t;
    char *key = cJSON_PrintUnformatted(params);
    if (!key) {
        g->oom = 1;
        return 0;
    }
    for (int i = 0; i < g->n_cfg; i++)
        if (!strcmp(g->cfg_keys[i], key)) {
            free(key);
            return i;
        }
    if (g->n_cfg == g->cap_cfg) {
        int cap = g->cap_cfg ? 2 * g->cap_cfg : 16;
        char **k = realloc(g->cfg_keys, (size_t)cap * sizeof *k);
        if (!k) {
            free(key);
            g->oom = 1;
            return 0;
        }
        g->cfg_keys = k;
        g->cap_cfg = cap;
    }
    g->cfg_keys[g->n_cfg] = key;
    amk_sb_printf(&g->cfg, "        {");
    int first = 1;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(g->info, "params"))
    {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, t->string);
        amk_sb_printf(&g->cfg, "%s", first ? "" : ", ");
        first = 0;
        if (!strcmp(t->valuestring, "int")) {
            amk_sb_printf(&g->cfg, "%lldLL", v ? (long long)v->valuedouble : 0LL);
        } else if (cJSON_IsString(v)) {
            c_str(&g->cfg, v->valuestring);
        } else if (v) {
            char num[64];
            snprintf(num, sizeof num, "%.17g", v->valuedouble);
            c_str(&g->cfg, num);
        } else {
            amk_sb_printf(&g->cfg, "NULL");
        }
    }
    if (first)
        amk_sb_printf(&g->cfg, "0");
    amk_sb_printf(&g->cfg, "}, /* %d */\n", g->n_cfg);
    return g->n_cfg++;
}

static void cgen_node(cgen *g, int level, const char *vendor, const char *arch,
                      const char *device, const cJSON *kn)
{
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(g->info, "dims"), *s, *x;
    const cJSON *dflt = cJSON_GetObjectItemCaseSensitive(kn, "default");
    int first = g->n_shapes, count = 0;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(kn, "shapes"))
    {
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(s, "dtype");
        const cJSON *ed = cJSON_GetObjectItemCaseSensitive(s, "dims");
        amk_sb_printf(&g->shapes, "        {");
        c_str(&g->shapes, cJSON_GetObjectItemCaseSensitive(s, "shape")->valuestring);
        amk_sb_printf(&g->shapes, ", ");
        c_str(&g->shapes, cJSON_IsString(dt) ? dt->valuestring : NULL);
        amk_sb_printf(&g->shapes, ", %d},\n", cgen_cfg(g, s));
        amk_sb_printf(&g->dims, "       ");
        cJSON_ArrayForEach(x, dims)
        {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(ed, x->valuestring);
            amk_sb_printf(&g->dims, " %lldLL,", v ? (long long)v->valuedouble : -1LL);
        }
        amk_sb_printf(&g->dims, "\n");
        g->n_shapes++;
        count++;
    }
    amk_sb_printf(&g->nodes, "        {%d, ", level);
    c_str(&g->nodes, vendor);
    amk_sb_printf(&g->nodes, ", ");
    c_str(&g->nodes, arch);
    amk_sb_printf(&g->nodes, ", ");
    c_str(&g->nodes, device);
    amk_sb_printf(&g->nodes, ", ");
    c_str(&g->nodes, cJSON_GetObjectItemCaseSensitive(dflt, "shape")->valuestring);
    amk_sb_printf(&g->nodes, ", %d, %d, %d},\n", cgen_cfg(g, dflt), first, count);
    g->n_nodes++;
}

static void cgen_kernel(amk_sb *out, const cJSON *db, const char *kernel, const cJSON *info)
{
    cgen g;
    memset(&g, 0, sizeof g);
    g.info = info;
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(info, "dims");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(info, "params"), *x, *vo, *ao, *dv;
    int nd = cJSON_GetArraySize(dims);
    char id[160], up[160], f[160];
    c_ident(id, sizeof id, kernel);
    for (size_t i = 0; i <= strlen(id); i++)
        up[i] = (char)toupper((unsigned char)id[i]);

    /* Nodes in the order the JSON lookup visits them: devices, then the rest. */
    cJSON_ArrayForEach(vo, cJSON_GetObjectItemCaseSensitive(db, "vendors"))
        cJSON_ArrayForEach(ao, cJSON_GetObjectItemCaseSensitive(vo, "archs"))
            cJSON_ArrayForEach(dv, cJSON_GetObjectItemCaseSensitive(ao, "devices"))
                if (amk__export_kernel_node(dv, kernel))
                    cgen_node(&g, 3, vo->string, ao->string, dv->string,
                              amk__export_kernel_node(dv, kernel));
    cJSON_ArrayForEach(vo, cJSON_GetObjectItemCaseSensitive(db, "vendors"))
    {
        if (amk__export_kernel_node(vo, kernel))
            cgen_node(&g, 1, vo->string, NULL, NULL, amk__export_kernel_node(vo, kernel));
        cJSON_ArrayForEach(ao, cJSON_GetObjectItemCaseSensitive(vo, "archs"))
            if (amk__export_kernel_node(ao, kernel))
                cgen_node(&g, 2, vo->string, ao->string, NULL, amk__export_kernel_node(ao, kernel));
    }
    cgen_node(&g, 0, NULL, NULL, NULL, amk__export_kernel_node(db, kernel));

    amk_sb_printf(out, "\n/* ---- kernel %s: %d shape entr%s, %d distinct config%s ---- */\n",
                  kernel, g.n_shapes, g.n_shapes == 1 ? "y" : "ies", g.n_cfg,
                  g.n_cfg == 1 ? "" : "s");
    amk_sb_printf(out, "#ifndef AMK_TUNED_%s_DEFINED\n#define AMK_TUNED_%s_DEFINED\n", up, up);
    amk_sb_printf(out, "typedef struct amk_tuned_%s_params {\n", id);
    cJSON_ArrayForEach(x, params)
    {
        c_ident(f, sizeof f, x->string);
        amk_sb_printf(out, "    %s%s;\n",
                      strcmp(x->valuestring, "int") ? "const char *" : "long long ", f);
    }
    if (!params->child)
        amk_sb_printf(out, "    int amk_no_params_;\n");
    amk_sb_printf(out, "} amk_tuned_%s_params;\n\n", id);

    amk_sb sig = {0}, call = {0};
    cJSON_ArrayForEach(x, dims)
    {
        c_ident(f, sizeof f, x->valuestring);
        if (!strcmp(f, "device_name") || !strcmp(f, "dtype") || !strcmp(f, "match"))
            strcat(f, "_");
        amk_sb_printf(&sig, "long long %s, ", f);
        amk_sb_printf(&call, "%s, ", f);
    }
    amk_sb_printf(out,
                  "/* Tuned params of %s for a device and a shape; never NULL. device_name as\n"
                  " * the runtime reports it; dtype NULL or \"\" matches any. */\n"
                  "static inline const amk_tuned_%s_params *\n"
                  "amk_tuned_%s_ex(const char *device_name, %sconst char *dtype,\n"
                  "    amk_tuned_match *match)\n{\n",
                  kernel, id, id, sig.p ? sig.p : "");
    amk_sb_printf(out, "    static const amk_tuned_%s_params amk__cfg[] = {\n%s    };\n", id,
                  g.cfg.p);
    amk_sb_printf(out, "    static const amk_tuned__shape amk__shapes[] = {\n%s    };\n",
                  g.shapes.p);
    amk_sb_printf(out, "    static const long long amk__dims[] = {\n%s    };\n",
                  nd ? g.dims.p : "        0\n");
    amk_sb_printf(out, "    static const amk_tuned__node amk__nodes[] = {\n%s    };\n",
                  g.nodes.p);
    amk_sb_printf(out, "    const long long amk__q[] = {");
    int first = 1;
    cJSON_ArrayForEach(x, dims)
    {
        c_ident(f, sizeof f, x->valuestring);
        if (!strcmp(f, "device_name") || !strcmp(f, "dtype") || !strcmp(f, "match"))
            strcat(f, "_");
        amk_sb_printf(out, "%s%s", first ? "" : ", ", f);
        first = 0;
    }
    amk_sb_printf(out,
                  "%s};\n"
                  "    return &amk__cfg[amk_tuned__lookup(amk__nodes,\n"
                  "        (int)(sizeof amk__nodes / sizeof amk__nodes[0]), amk__shapes,\n"
                  "        amk__dims, %d, device_name, amk__q, dtype, match)];\n}\n\n",
                  first ? "0" : "", nd);
    amk_sb_printf(out,
                  "static inline const amk_tuned_%s_params *\n"
                  "amk_tuned_%s(const char *device_name, %sconst char *dtype)\n{\n"
                  "    return amk_tuned_%s_ex(device_name, %sdtype, NULL);\n}\n"
                  "#endif /* AMK_TUNED_%s_DEFINED */\n",
                  id, id, sig.p ? sig.p : "", id, call.p ? call.p : "", up);
    if (sig.oom || call.oom || g.cfg.oom || g.shapes.oom || g.dims.oom || g.nodes.oom || g.oom)
        out->oom = 1;
    amk_sb_free(&sig);
    amk_sb_free(&call);
    amk_sb_free(&g.cfg);
    amk_sb_free(&g.shapes);
    amk_sb_free(&g.dims);
    amk_sb_free(&g.nodes);
    for (int i = 0; i < g.n_cfg; i++)
        free(g.cfg_keys[i]);
    free(g.cfg_keys);
}

int amk__export_c(const cJSON *db, const char *kernel, amk_sb *out, amk_diag *d)
{
    int rc;
    const cJSON *info, *x;
    if ((rc = amk__export_check(db, d)))
        return rc;
    if (kernel && (rc = amk__export_known_kernel(db, kernel, &info, d)))
        return rc;
    amk_sb_printf(out,
                  "/* Generated by amk %s (`amk export --format c`): tuned configs as a "
                  "dispatch\n * table. Self-contained C99; include it where needed. Lookup "
                  "rules in amk's\n * docs/EXPORT.md: device -> arch -> vendor -> default, "
                  "then the nearest tuned\n * shape of the same dtype (sum over dims of "
                  "|log2 ratio|). Sources:\n",
                  AMK_VERSION);
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(db, "sources"))
    {
        if (cJSON_IsString(x) && !strstr(x->valuestring, "*/"))
            amk_sb_printf(out, " *   %s\n", x->valuestring);
    }
    amk_sb_printf(out, " */\n%s", c_common_head);
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(db, "targets"))
    {
        static const char *const keys[] = {"key", "name", "vendor", "arch"};
        amk_sb_printf(out, "        {");
        for (int i = 0; i < 4; i++) {
            c_str(out, cJSON_GetObjectItemCaseSensitive(x, keys[i])->valuestring);
            amk_sb_printf(out, "%s", i < 3 ? ", " : "},\n");
        }
    }
    amk_sb_printf(out, "%s", c_common_tail);
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(db, "kernel_info"))
    {
        if (!kernel || !strcmp(kernel, x->string))
            cgen_kernel(out, db, x->string, x);
    }
    if (out->oom)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory writing the C header");
    return AMK_OK;
}
