/* The compiled spec (amk_space_defs.h): the dtype and limit tables, name resolution and the
 * slots expressions read, and read-only views of everything amk_spec_load resolved once
 * (params, kernel, reference, buffers, tolerance, cost terms), so no other module reads
 * spec.json. */
#include "spec_load_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *const amk__dtype_names[] = {"f32", "f16", "bf16", "fp8e4m3", "int8", NULL};
const int amk__dtype_sizes[] = {4, 2, 2, 1, 1, 0};

const char *const amk__limit_names[AMK__N_LIMITS] = {
#define XX(name, doc) #name,
    AMK_LIMITS_MAP(XX)
#undef XX
};

int amk__dtype_index(const char *name)
{
    for (int i = 0; name && amk__dtype_names[i]; i++)
        if (!strcmp(name, amk__dtype_names[i]))
            return i;
    return -1;
}

int amk_dtype_size(const char *dtype)
{
    int i = amk__dtype_index(dtype);
    return i < 0 ? 0 : amk__dtype_sizes[i];
}

const amk_limits *amk__limits_generous(void)
{
    static const amk_limits lim = {
        .max_threads = 1024,
        .max_smem = 49152,
        .max_smem_optin = 232448,
        .smem_per_sm = 233472,
        .warp = 32,
        .sm_count = 132,
        .regs_per_sm = 65536,
        .max_regs_per_thread = 255,
        .max_blocks_per_sm = 32,
        .max_threads_per_sm = 2048,
        .max_grid_x = 2147483647,
        .max_grid_yz = 65535,
        .l2_bytes = 52428800,
    };
    return &lim;
}

int amk__ld_name_eq(const char *a, const char *name, size_t len)
{
    return strlen(a) == len && memcmp(a, name, len) == 0;
}

int amk__spec_resolve(void *spec, const char *name, size_t len)
{
    const amk_spec *s = spec;
    for (int i = 0; i < s->ndims; i++)
        if (amk__ld_name_eq(s->dims[i], name, len))
            return i;
    if (amk__ld_name_eq("dtype", name, len))
        return s->slot_dtype;
    if (amk__ld_name_eq("elt", name, len))
        return s->slot_elt;
    for (int i = 0; i < AMK__N_LIMITS; i++)
        if (amk__ld_name_eq(amk__limit_names[i], name, len))
            return s->slot_limits + i;
    for (int i = 0; i < s->nparams; i++)
        if (amk__ld_name_eq(s->params[i].name, name, len))
            return s->slot_params + i;
    for (int i = 0; i < s->nderived; i++)
        if (amk__ld_name_eq(s->derived[i].name, name, len))
            return s->slot_derived + i;
    return -1;
}

void amk__slots_base(const amk_spec *s, const amk_shape *sh, const amk_limits *lim,
                     int64_t *slots)
{
    if (!lim)
        lim = amk__limits_generous();
    for (int i = 0; i < s->ndims; i++)
        slots[i] = sh->dims[i];
    slots[s->slot_dtype] = sh->dtype;
    int dt = sh->dtype >= 0 && sh->dtype < s->ndtypes ? s->dtypes[sh->dtype] : 0;
    slots[s->slot_elt] = amk__dtype_sizes[dt];
    int64_t *l = slots + s->slot_limits;
    int k = 0;
#define XX(name, doc) l[k++] = lim->name;
    AMK_LIMITS_MAP(XX)
#undef XX
    (void)k;
}

/* ------------------------------------------------------------------------------------ */
/* accessors */

const char *amk_spec_name(const amk_spec *s) { return s->name; }
const char *amk_spec_description(const amk_spec *s) { return s->description; }
const char *amk_spec_dir(const amk_spec *s) { return s->dir; }
const char *amk_spec_text(const amk_spec *s) { return s->text; }
int amk_spec_n_params(const amk_spec *s) { return s->nparams; }

const char *amk_spec_param_name(const amk_spec *s, int i)
{
    return i >= 0 && i < s->nparams ? s->params[i].name : NULL;
}

int amk_spec_param_index(const amk_spec *s, const char *name)
{
    for (int i = 0; name && i < s->nparams; i++)
        if (!strcmp(s->params[i].name, name))
            return i;
    return -1;
}

int amk_spec_param_n_choices(const amk_spec *s, int i)
{
    return i >= 0 && i < s->nparams ? s->params[i].n : 0;
}

double amk_spec_raw_size(const amk_spec *s)
{
    double r = 1;
    for (int i = 0; i < s->nparams; i++)
        r *= s->params[i].n;
    return r;
}

int64_t amk_spec_param_value(const amk_spec *s, int i, int choice)
{
    if (i < 0 || i >= s->nparams || choice < 0 || choice >= s->params[i].n)
        return 0;
    return s->params[i].values[choice];
}

const char *amk_spec_param_label(const amk_spec *s, int i, int choice)
{
    if (i < 0 || i >= s->nparams || choice < 0 || choice >= s->params[i].n)
        return NULL;
    return s->params[i].labels[choice];
}

int amk_spec_param_default(const amk_spec *s, int i)
{
    return i >= 0 && i < s->nparams ? s->params[i].def : 0;
}

int amk_spec_compile_arch(const amk_spec *s, const char *vendor, const char *arch, char *out,
                          size_t cap, amk_diag *d)
{
    if (!arch || !vendor)
        return amk_diag_set(d, AMK_EINVAL, "%s: no target arch/vendor given", s->name);
    /* Tensor maps (TMA) and thread-block clusters exist on NVIDIA sm_90+ only. */
    const char *hopper = s->ntmaps ? "tensor_maps"
                         : s->launch.cluster[0] ? "launch.cluster"
                         : s->ref_launch.cluster[0] ? "reference.launch.cluster" : NULL;
    if (hopper && strcmp(vendor, "nvidia") != 0)
        return amk_diag_set(d, AMK_EUNSUPPORTED, "%s uses %s, an NVIDIA (sm_90+) feature; the "
                            "target is %s %s", s->name, hopper, vendor, arch);
    if (!s->has_requires) {
        snprintf(out, cap, "%s", arch);
        return AMK_OK;
    }
    const char *req = NULL;
    for (int v = 0; amk__spec_vendors[v]; v++)
        if (!strcmp(vendor, amk__spec_vendors[v]))
            req = s->requires[v];
    /* On NVIDIA, code for the arch-specific sm_NNa runs on sm_NN devices only. */
    size_t n = strlen(arch);
    int base = req && !strcmp(vendor, "nvidia") && strlen(req) == n + 1 && req[n] == 'a' &&
               !strncmp(req, arch, n);
    if (!req || !req[0] || (strcmp(req, arch) != 0 && !base)) {
        /* The message only: amk_cost_feasible asks for every config of a space. */
        char want[64] = "";
        for (int v = 0; amk__spec_vendors[v]; v++)
            if (s->requires[v][0])
                snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s %s",
                         want[0] ? " or " : "", amk__spec_vendors[v], s->requires[v]);
        if (!req || !req[0])
            return amk_diag_set(d, AMK_EUNSUPPORTED, "%s requires %s (spec field "
                                "'requires'); the target is %s %s", s->name, want, vendor,
                                arch);
        return amk_diag_set(d, AMK_EUNSUPPORTED, "%s requires %s (spec field 'requires'); the "
                            "target's arch is %s", s->name, want, arch);
    }
    if (strlen(req) >= cap)
        return amk_diag_set(d, AMK_EINVAL, "%s: arch buffer too small", s->name);
    snprintf(out, cap, "%s", req);
    return AMK_OK;
}

int amk_spec_n_dims(const amk_spec *s) { return s->ndims; }
int amk_spec_n_tensor_maps(const amk_spec *s) { return s->ntmaps; }

const char *amk_spec_tensor_map_name(const amk_spec *s, int i)
{
    return i >= 0 && i < s->ntmaps ? s->tmaps[i].name : NULL;
}

const char *amk_spec_dim_name(const amk_spec *s, int i)
{
    return i >= 0 && i < s->ndims ? s->dims[i] : NULL;
}

int amk_spec_n_dtypes(const amk_spec *s) { return s->ndtypes; }

const char *amk_spec_dtype_name(const amk_spec *s, int i)
{
    return i >= 0 && i < s->ndtypes ? amk__dtype_names[s->dtypes[i]] : NULL;
}

static const char *const memory_term_names[AMK_MEMORY_TERMS] = {
    "inflight_bytes", "latency_rounds", "sync_steps", "reread_bytes", "block_footprint",
    "segment_bytes"};

const char *amk_memory_term_name(amk_memory_term t)
{
    return (unsigned)t < AMK_MEMORY_TERMS ? memory_term_names[t] : NULL;
}

const char *amk_spec_param_doc(const amk_spec *s, int i)
{
    return i >= 0 && i < s->nparams ? s->params[i].doc : NULL;
}

int amk_spec_n_derived(const amk_spec *s) { return s->nderived; }

int amk_spec_derived(const amk_spec *s, int i, amk_spec_named_expr *out)
{
    if (i < 0 || i >= s->nderived)
        return AMK_EINVAL;
    out->name = s->derived[i].name;
    out->expr = s->derived[i].e;
    out->written_as_number = s->derived[i].written_as_number;
    return AMK_OK;
}

int amk_spec_n_restrictions(const amk_spec *s) { return s->nrestrict; }

int amk_spec_restriction(const amk_spec *s, int i, amk_spec_named_expr *out)
{
    if (i < 0 || i >= s->nrestrict)
        return AMK_EINVAL;
    out->name = NULL;
    out->expr = s->restrict_[i].e;
    out->written_as_number = s->restrict_[i].written_as_number;
    return AMK_OK;
}

const char *amk_spec_source(const amk_spec *s) { return s->source; }
const char *amk_spec_entry(const amk_spec *s) { return s->entry; }
int amk_spec_n_args(const amk_spec *s) { return s->nargs; }

const char *amk_spec_arg(const amk_spec *s, int i)
{
    return i >= 0 && i < s->nargs ? s->args[i] : NULL;
}

void amk_spec_get_peer(const amk_spec *s, amk_spec_peer *out)
{
    out->op = (amk_peer_op)s->peer_op;
    out->a = s->peer_a;
    out->b = s->peer_b;
    out->c = s->peer_c;
    out->m = s->peer_m;
    out->n = s->peer_n;
    out->k = s->peer_k;
}

const char *amk_peer_op_name(amk_peer_op op)
{
    return op == AMK_PEER_GEMM ? "gemm" : op == AMK_PEER_COPY ? "copy" : "";
}

void amk_spec_get_reference(const amk_spec *s, amk_spec_reference *out)
{
    out->source = s->ref_source;
    out->entry = s->ref_entry;
    out->host = s->ref_host;
    out->default_config = s->ref_default_config;
}

int amk_spec_n_reference_args(const amk_spec *s) { return s->nref_args; }

int amk_spec_n_reference_vary(const amk_spec *s) { return s->nref_vary; }

int amk_spec_reference_vary(const amk_spec *s, int i)
{
    return i >= 0 && i < s->nref_vary ? s->ref_vary[i] : -1;
}

const char *amk_spec_reference_arg(const amk_spec *s, int i)
{
    return i >= 0 && i < s->nref_args ? s->ref_args[i] : NULL;
}

int amk_spec_n_buffers(const amk_spec *s) { return s->nbuffers; }

int amk_spec_buffer_at(const amk_spec *s, int i, amk_spec_buffer *out)
{
    if (i < 0 || i >= s->nbuffers)
        return AMK_EINVAL;
    const amk__buffer *b = &s->buffers[i];
    static const amk_buffer_role roles[] = {[AMK__ROLE_IN] = AMK_BUFFER_IN,
                                            [AMK__ROLE_OUT] = AMK_BUFFER_OUT,
                                            [AMK__ROLE_INOUT] = AMK_BUFFER_INOUT,
                                            [AMK__ROLE_SCRATCH] = AMK_BUFFER_SCRATCH};
    out->name = b->name;
    out->dtype = b->dtype < 0 ? "input" : amk__dtype_names[b->dtype];
    out->role = roles[b->role];
    out->init = b->init;
    out->count = b->count;
    out->tolerance_reduction = b->tol_reduction;
    out->value = b->value;
    out->constant_memory = b->constant_memory;
    out->symbol = b->constant_memory ? b->symbol : NULL;
    out->data = b->data[0] ? b->data : NULL;
    out->answer = b->answer[0] ? b->answer : NULL;
    out->external = b->external;
    return AMK_OK;
}

int amk_spec_n_scalars(const amk_spec *s)
{
    return s->nscalars;
}

int amk_spec_scalar_at(const amk_spec *s, int i, amk_spec_scalar *out)
{
    if (i < 0 || i >= s->nscalars)
        return AMK_EINVAL;
    out->name = s->scalars[i].name;
    out->dtype = s->scalars[i].dtype;
    out->value = s->scalars[i].value;
    out->ivalue = s->scalars[i].ivalue;
    return AMK_OK;
}

int amk_spec_n_headers(const amk_spec *s)
{
    return s->nheaders;
}

const char *amk_spec_header(const amk_spec *s, int i)
{
    return i >= 0 && i < s->nheaders ? s->headers[i] : NULL;
}

int amk_spec_n_defines(const amk_spec *s)
{
    return s->ndefines;
}

int amk_spec_define_at(const amk_spec *s, int i, const char **name, const amk_expr **e)
{
    if (i < 0 || i >= s->ndefines)
        return AMK_EINVAL;
    *name = s->defines[i].name;
    *e = s->defines[i].e;
    return AMK_OK;
}

void amk_spec_get_tolerance(const amk_spec *s, amk_spec_tolerance *out)
{
    out->reduction = s->tol_reduction;
    out->rtol_scale = s->rtol_scale;
    out->atol = s->atol;
}

const amk_expr *amk_spec_cost_expr(const amk_spec *s, const char *field)
{
    if (!field)
        return NULL;
    static const char *const named[] = {"flops", "min_bytes", "traffic_bytes", "regs",
                                        "uniform_blocks"};
    const amk_expr *const exprs[] = {s->flops, s->min_bytes, s->traffic, s->regs,
                                     s->uniform_blocks};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (!strcmp(field, named[i]))
            return exprs[i];
    for (int k = 0; k < AMK_MEMORY_TERMS; k++)
        if (!strcmp(field, memory_term_names[k]))
            return s->memory[k];
    return NULL;
}
