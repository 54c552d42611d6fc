/* Compile units (parent side; no compiler call): the vendor and option set of a target arch
 * ("sm_90" -> --gpu-architecture=..., "gfx90a" -> --offload-arch=...), and the unit of a
 * config, of a spec's reference, or of a given text (vendor prelude + template + the config's
 * defines and dtype macros). The compile service that compiles them is compile_api.c. */
#include "compile_int.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---------- arch and units --------------------------------------------------------------- */

/* "90", "90a", "100f": at least two digits, then at most one lowercase feature letter. */
static int sm_number(const char *s)
{
    size_t n = 0;
    while (isdigit((unsigned char)s[n]))
        n++;
    if (n < 2 || n > 4)
        return 0;
    return s[n] == '\0' || (islower((unsigned char)s[n]) && s[n + 1] == '\0');
}

const char *amk__arch_vendor(const char *arch)
{
    if (!arch)
        return NULL;
    if (strncmp(arch, "sm_", 3) == 0 && sm_number(arch + 3))
        return "nvidia";
    if (strncmp(arch, "gfx", 3) == 0 && strlen(arch) >= 6 && strlen(arch) < 16) {
        for (const char *p = arch + 3; *p; p++)
            if (!isalnum((unsigned char)*p))
                return NULL;
        return "amd";
    }
    return NULL;
}

int amk__arch_options(const char *arch, char out[][64], int cap, amk_diag *d)
{
    const char *v = amk__arch_vendor(arch);
    if (!v)
        return amk_diag_set(d, AMK_EUNSUPPORTED,
                            "unknown GPU architecture '%s' (expected sm_NN or gfxNNN)",
                            arch ? arch : "(null)");
    int n = 0;
    if (strcmp(v, "nvidia") == 0) {
        /* A real sm_NN makes NVRTC produce a CUBIN (no PTX JIT at load time). */
        if (n < cap)
            snprintf(out[n++], 64, "--gpu-architecture=%s", arch);
        if (n < cap)
            snprintf(out[n++], 64, "-std=c++17");
    } else {
        if (n < cap)
            snprintf(out[n++], 64, "--offload-arch=%s", arch);
        if (n < cap)
            snprintf(out[n++], 64, "-O3");
        if (n < cap)
            snprintf(out[n++], 64, "-std=c++17");
    }
    return n;
}

void amk__compile_unit_clear(amk_compile_unit *u)
{
    if (!u)
        return;
    free(u->source);
    for (int i = 0; i < u->n_options; i++)
        free(u->options[i]);
    free(u->options);
    memset(u, 0, sizeof *u);
}

static int add_option(amk_compile_unit *u, const char *opt, amk_diag *d)
{
    char **no = realloc(u->options, (size_t)(u->n_options + 1) * sizeof *no);
    if (!no)
        return amk_diag_set(d, AMK_ENOMEM, "compile unit: out of memory");
    u->options = no;
    if (!(no[u->n_options] = strdup(opt)))
        return amk_diag_set(d, AMK_ENOMEM, "compile unit: out of memory");
    u->n_options++;
    return AMK_OK;
}

/* source = prelude + "\n#line 1 \"file\"\n" + text. */
static int set_source(amk_compile_unit *u, const char *vendor, const char *file,
                      const char *text, size_t text_len, amk_diag *d)
{
    const char *pre = amk_prelude(vendor);
    if (!pre)
        return amk_diag_set(d, AMK_EUNSUPPORTED, "no kernel prelude for vendor '%s'", vendor);
    amk_sb sb = {0};
    amk_sb_printf(&sb, "%s\n#line 1 \"%s\"\n", pre, file);
    amk_sb_putn(&sb, text, text_len);
    if (text_len == 0 || text[text_len - 1] != '\n')
        amk_sb_putn(&sb, "\n", 1);
    if (sb.oom) {
        amk_sb_free(&sb);
        return amk_diag_set(d, AMK_ENOMEM, "compile unit: out of memory");
    }
    u->source_len = sb.len;
    u->source = amk_sb_take(&sb);
    return AMK_OK;
}

static int add_arch_options(amk_compile_unit *u, const char *arch, amk_diag *d)
{
    char opts[8][64];
    int n = amk__arch_options(arch, opts, 8, d);
    if (n < 0)
        return n;
    for (int i = 0; i < n; i++) {
        int rc = add_option(u, opts[i], d);
        if (rc != AMK_OK)
            return rc;
    }
    return AMK_OK;
}

/* -DAMK_DTYPE=<idx> -DAMK_ELT=<bytes> -DAMK_T_<DTYPE>=1 for the shape's dtype. */
static int add_dtype_defines(amk_compile_unit *u, const amk_config *c, amk_diag *d)
{
    const char *dt = amk_spec_dtype_name(c->spec, c->shape.dtype);
    if (!dt)
        return amk_diag_set(d, AMK_ECONFIG, "%s: shape dtype index %d is not declared",
                            amk_spec_name(c->spec), c->shape.dtype);
    char opt[96], up[32];
    size_t k = 0;
    for (; dt[k] && k + 1 < sizeof up; k++) {
        if (!isalnum((unsigned char)dt[k]))
            return amk_diag_set(d, AMK_ESPEC, "dtype name '%s' is not alphanumeric", dt);
        up[k] = (char)toupper((unsigned char)dt[k]);
    }
    up[k] = '\0';
    int rc;
    snprintf(opt, sizeof opt, "-DAMK_DTYPE=%d", c->shape.dtype);
    if ((rc = add_option(u, opt, d)) != AMK_OK)
        return rc;
    snprintf(opt, sizeof opt, "-DAMK_ELT=%d", amk_dtype_size(dt));
    if ((rc = add_option(u, opt, d)) != AMK_OK)
        return rc;
    snprintf(opt, sizeof opt, "-DAMK_T_%s=1", up);
    return add_option(u, opt, d);
}

/* The spec's "defines" as -DNAME=<value>, evaluated at c (the template's config, or the
 * config the reference runs at). */
static int add_spec_defines(amk_compile_unit *u, const amk_config *at, amk_diag *d)
{
    for (int i = 0; i < amk_spec_n_defines(at->spec); i++) {
        const char *name;
        const amk_expr *e;
        int64_t v;
        char opt[128];
        amk_spec_define_at(at->spec, i, &name, &e);
        int rc = amk_config_eval_expr(at, NULL, e, &v, d);
        if (rc != AMK_OK)
            return amk_diag_prefix(d, "defines.%s", name);
        snprintf(opt, sizeof opt, "-D%s=%lld", name, (long long)v);
        if ((rc = add_option(u, opt, d)) != AMK_OK)
            return rc;
    }
    return AMK_OK;
}

/* Reads DIR/<file> of a spec, refusing names that leave the folder. */
static int read_spec_file(const amk_spec *s, const char *file, char **text, size_t *len,
                          amk_diag *d)
{
    if (!file || !*file || file[0] == '/' || strstr(file, ".."))
        return amk_diag_set(d, AMK_ESPEC, "%s: bad source file name '%s'", amk_spec_name(s),
                            file ? file : "");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", amk_spec_dir(s), file);
    return amk_fs_read_all(path, text, len, d);
}

/* Appends text to sb with every line `#include "H"` (H one of the spec's "headers") replaced
 * by H's text between #line markers, recursively (depth <= 4). */
static int put_expanded(amk_sb *sb, const amk_spec *s, const char *file, const char *text,
                        size_t len, int depth, amk_diag *d)
{
    const char *p = text, *end = text + len;
    int line = 1;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *q = p;
        while (q < le && (*q == ' ' || *q == '\t'))
            q++;
        const char *hit = NULL;
        size_t hn = 0;
        if (q < le && *q == '#' && amk_spec_n_headers(s) > 0) {
            q++;
            while (q < le && (*q == ' ' || *q == '\t'))
                q++;
            if ((size_t)(le - q) > 9 && !strncmp(q, "include", 7)) {
                const char *o = memchr(q, '"', (size_t)(le - q));
                const char *c = o ? memchr(o + 1, '"', (size_t)(le - o - 1)) : NULL;
                for (int i = 0; c && i < amk_spec_n_headers(s); i++) {
                    const char *h = amk_spec_header(s, i);
                    if (strlen(h) == (size_t)(c - o - 1) && !strncmp(o + 1, h, (size_t)(c - o - 1)))
                        hit = h, hn = strlen(h);
                }
            }
        }
        if (hit && depth < 4) {
            char *ht = NULL;
            size_t hl = 0;
            int rc = read_spec_file(s, hit, &ht, &hl, d);
            if (rc != AMK_OK)
                return rc;
            amk_sb_printf(sb, "#line 1 \"%.*s\"\n", (int)hn, hit);
            rc = put_expanded(sb, s, hit, ht, hl, depth + 1, d);
            free(ht);
            if (rc != AMK_OK)
                return rc;
            amk_sb_printf(sb, "\n#line %d \"%s\"\n", line + 1, file);
        } else {
            amk_sb_putn(sb, p, (size_t)(le - p));
            if (nl)
                amk_sb_putn(sb, "\n", 1);
        }
        p = nl ? nl + 1 : end;
        line++;
    }
    return AMK_OK;
}

/* Shared body of the config and reference unit builders. */
static int build_unit(const amk_config *c, const char *arch, const char *name,
                      const char *file, const char *entry, int with_params,
                      amk_compile_unit *u, amk_diag *d)
{
    memset(u, 0, sizeof *u);
    const char *vendor = amk__arch_vendor(arch);
    if (!vendor)
        return amk__arch_options(arch, NULL, 0, d);
    /* The effective arch (sm_90 -> sm_90a for a spec that requires it) goes into the unit,
     * hence into the options and the cache key. */
    char eff[sizeof u->arch];
    int rc = amk_spec_compile_arch(c->spec, vendor, arch, eff, sizeof eff, d);
    if (rc != AMK_OK)
        return rc;
    arch = eff;
    if (!file || !entry)
        return amk_diag_set(d, AMK_ESPEC, "%s: spec names no %s source/entry",
                            amk_spec_name(c->spec), with_params ? "template" : "reference");
    snprintf(u->name, sizeof u->name, "%s", name);
    snprintf(u->kernel, sizeof u->kernel, "%s", amk_spec_name(c->spec));
    snprintf(u->arch, sizeof u->arch, "%s", arch);
    snprintf(u->entry, sizeof u->entry, "%s", entry);
    char *text = NULL;
    size_t len = 0;
    rc = read_spec_file(c->spec, file, &text, &len, d);
    if (rc == AMK_OK && amk_spec_n_headers(c->spec) > 0) {
        amk_sb sb = {0};
        rc = put_expanded(&sb, c->spec, file, text, len, 0, d);
        free(text);
        text = NULL;
        if (rc == AMK_OK && sb.oom)
            rc = amk_diag_set(d, AMK_ENOMEM, "compile unit: out of memory");
        len = sb.len;
        text = rc == AMK_OK ? amk_sb_take(&sb) : NULL;
        amk_sb_free(&sb);
    }
    if (rc == AMK_OK)
        rc = set_source(u, vendor, file, text, len, d);
    free(text);
    if (rc == AMK_OK && with_params) {
        char defs[AMK_MAX_PARAMS][96];
        int n = amk_config_defines(c, defs, AMK_MAX_PARAMS);
        for (int i = 0; i < n && rc == AMK_OK; i++)
            rc = add_option(u, defs[i], d);
    }
    /* A reference gets the "vary" params only (the rest of its config is in its text). */
    for (int k = 0; rc == AMK_OK && !with_params && k < amk_spec_n_reference_vary(c->spec);
         k++) {
        int i = amk_spec_reference_vary(c->spec, k);
        char opt[96];
        snprintf(opt, sizeof opt, "-D%s=%lld", amk_spec_param_name(c->spec, i),
                 (long long)amk_config_param(c, i));
        rc = add_option(u, opt, d);
    }
    if (rc == AMK_OK)
        rc = add_spec_defines(u, c, d);
    if (rc == AMK_OK)
        rc = add_dtype_defines(u, c, d);
    if (rc == AMK_OK)
        rc = add_arch_options(u, arch, d);
    if (rc != AMK_OK)
        amk__compile_unit_clear(u);
    return rc;
}

int amk__compile_unit_config(const amk_config *c, const char *arch, amk_compile_unit *u,
                             amk_diag *d)
{
    char id[17];
    amk_config_id(c, id);
    return build_unit(c, arch, id, amk_spec_source(c->spec), amk_spec_entry(c->spec), 1, u, d);
}

int amk__compile_unit_reference(const amk_config *c, const char *arch, amk_compile_unit *u,
                                amk_diag *d)
{
    amk_spec_reference ref;
    amk_spec_get_reference(c->spec, &ref);
    char name[64];
    const char *dt = amk_spec_dtype_name(c->spec, c->shape.dtype);
    snprintf(name, sizeof name, "%s.reference.%s", amk_spec_name(c->spec), dt ? dt : "?");
    /* Its code must not change with the config: built at the default config (an
     * independent reference) or at the config it runs at (the template's default with the
     * checked config's "vary" params). */
    amk_config at;
    memset(u, 0, sizeof *u);
    if (!ref.default_config)
        amk_config_default(c->spec, &c->shape, &at);
    else {
        int rc = amk_config_reference_config(c, NULL, &at, d);
        if (rc != AMK_OK)
            return rc;
    }
    return build_unit(&at, arch, name, ref.source, ref.entry, 0, u, d);
}

int amk__compile_unit_text(const char *name, const char *entry, const char *text,
                           const char *const *extra, int n_extra, const char *arch,
                           amk_compile_unit *u, amk_diag *d)
{
    memset(u, 0, sizeof *u);
    const char *vendor = amk__arch_vendor(arch);
    if (!vendor)
        return amk__arch_options(arch, NULL, 0, d);
    if (!name || !text)
        return amk_diag_set(d, AMK_EINVAL, "compile unit: name and text are required");
    snprintf(u->name, sizeof u->name, "%s", name);
    snprintf(u->arch, sizeof u->arch, "%s", arch);
    snprintf(u->entry, sizeof u->entry, "%s", entry ? entry : "");
    int rc = set_source(u, vendor, name, text, strlen(text), d);
    for (int i = 0; i < n_extra && rc == AMK_OK; i++)
        rc = add_option(u, extra[i], d);
    if (rc == AMK_OK)
        rc = add_arch_options(u, arch, d);
    if (rc != AMK_OK)
        amk__compile_unit_clear(u);
    return rc;
}

void amk__code_clear(amk_code *c)
{
    if (!c)
        return;
    free(c->image);
    memset(c, 0, sizeof *c);
}
