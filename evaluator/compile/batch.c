/* `amk compile` (public API): amk_compile_batch and amk_compile_references compile configs
 * or their references for an arch through a compile service of their own (compile_api.c)
 * and return per-config results. */
#include "compile_int.h"

#include <stdlib.h>
#include <string.h>

/* ---------- public: amk compile ------------------------------------------------------------ */

static const char *default_arch(void)
{
    const amk_target *t = amk_target_default();
    return t ? t->arch : "sm_90";
}

static void to_result(const amk_code *o, const amk_config *cfg, amk_compile_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = o->status;
    amk_config_id(cfg, r->config_id);
    r->compile_ms = o->compile_ms;
    r->cache_hit = o->cache_hit;
    r->code_bytes = o->status == AMK_STATUS_OK ? o->size : 0;
    snprintf(r->reason, sizeof r->reason, "%s", o->reason);
    snprintf(r->notes, sizeof r->notes, "%s", o->notes);
}

/* Checks arch against this build before forking anything. */
static int check_arch(const char *arch, amk_diag *d)
{
    const char *v = amk__arch_vendor(arch);
    if (!v)
        return amk__arch_options(arch, NULL, 0, d);
#if defined(AMK_HAVE_GPU)
    if (strcmp(v, amk__rtc_vendor()) != 0)
        return amk_diag_set(d, AMK_EUNSUPPORTED,
                            "this amk compiles with %s (%s GPUs); '%s' is an %s architecture "
                            "(name an architecture of this vendor)",
                            amk__rtc_name(), amk__rtc_vendor(), arch,
                            strcmp(v, "amd") == 0 ? "AMD" : "NVIDIA");
#endif
    return AMK_OK;
}

/* Shared body of amk_compile_batch and amk_compile_references. */
static int compile_public(const amk_config *const *cfgs, size_t n, const char *arch,
                          const amk_backend_opts *opts, int reference,
                          amk_compile_result *out, amk_diag *d)
{
    if (n && (!cfgs || !out))
        return amk_diag_set(d, AMK_EINVAL, "amk compile: invalid arguments");
    if (!arch)
        arch = default_arch();
    int rc = check_arch(arch, d);
    amk_compiler *c = NULL;
    if (rc == AMK_OK)
        rc = amk__compiler_create(opts, &c, d);
    if (rc != AMK_OK)
        return rc;
    amk_code *codes = calloc(n ? n : 1, sizeof *codes);
    amk_compile_unit *units = calloc(n ? n : 1, sizeof *units);
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    if (!codes || !units || !idx) {
        rc = amk_diag_set(d, AMK_ENOMEM, "amk compile: out of memory");
        goto done;
    }
    if (!reference) {
        rc = amk__compiler_configs(c, cfgs, n, arch, codes, d);
    } else {
        size_t nu = 0;
        for (size_t i = 0; i < n && rc == AMK_OK; i++) {
            amk_diag ud;
            amk_diag_clear(&ud);
            int u = amk__compile_unit_reference(cfgs[i], arch, &units[nu], &ud);
            if (u == AMK_ENOMEM)
                rc = amk_diag_set(d, u, "%s", ud.msg);
            else if (u == AMK_EUNSUPPORTED) { /* arch checked above: the spec's "requires" */
                codes[i].status = AMK_STATUS_REJECTED;
                snprintf(codes[i].reason, sizeof codes[i].reason, "%s", ud.msg);
            } else if (u != AMK_OK) {
                codes[i].status = AMK_STATUS_COMPILE_ERROR;
                snprintf(codes[i].reason, sizeof codes[i].reason,
                         "cannot build the reference source: %s", ud.msg);
            } else
                idx[nu++] = i;
        }
        amk_code *tmp = rc == AMK_OK ? calloc(nu ? nu : 1, sizeof *tmp) : NULL;
        if (rc == AMK_OK && !tmp)
            rc = amk_diag_set(d, AMK_ENOMEM, "amk compile: out of memory");
        if (rc == AMK_OK)
            rc = amk__compiler_run(c, units, nu, tmp, d);
        for (size_t k = 0; rc == AMK_OK && k < nu; k++)
            codes[idx[k]] = tmp[k]; /* moves the image */
        free(tmp);
        for (size_t k = 0; k < nu; k++)
            amk__compile_unit_clear(&units[k]);
    }
    for (size_t i = 0; i < n && rc == AMK_OK; i++)
        to_result(&codes[i], cfgs[i], &out[i]);
done:
    for (size_t i = 0; codes && i < n; i++)
        amk__code_clear(&codes[i]);
    free(codes);
    free(units);
    free(idx);
    amk__compiler_free(c);
    return rc;
}

int amk_compile_batch(const amk_config *const *cfgs, size_t n, const char *arch,
                      const amk_backend_opts *opts, amk_compile_result *out, amk_diag *d)
{
    return compile_public(cfgs, n, arch, opts, 0, out, d);
}

int amk_compile_references(const amk_config *const *cfgs, size_t n, const char *arch,
                           const amk_backend_opts *opts, amk_compile_result *out, amk_diag *d)
{
    return compile_public(cfgs, n, arch, opts, 1, out, d);
}

/* ---------- public: the source of a config, for another runtime ---------------------------- */

int amk_compile_source_get(const amk_config *c, const char *arch, amk_compile_source *out,
                           amk_diag *d)
{
    memset(out, 0, sizeof *out);
    amk_compile_unit u;
    memset(&u, 0, sizeof u);
    int rc = amk__compile_unit_config(c, arch ? arch : default_arch(), &u, d);
    if (rc != AMK_OK)
        return rc;
    snprintf(out->arch, sizeof out->arch, "%s", u.arch);
    snprintf(out->entry, sizeof out->entry, "%s", u.entry);
    out->text = u.source; /* the unit's allocations change hands */
    out->options = u.options;
    out->n_options = u.n_options;
    u.source = NULL;
    u.options = NULL;
    u.n_options = 0;
    amk__compile_unit_clear(&u);
    return AMK_OK;
}

void amk_compile_source_clear(amk_compile_source *s)
{
    if (!s)
        return;
    free(s->text);
    for (int i = 0; i < s->n_options; i++)
        free(s->options[i]);
    free(s->options);
    memset(s, 0, sizeof *s);
}
