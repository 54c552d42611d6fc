/* The compiled spec's kernel, reference, buffers, tolerance and cost terms (amk_space_defs.h):
 * read-only views of what amk_spec_load resolved once, so no other module reads spec.json. */
#include "space_defs_int.h"

#include <string.h>

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

void amk_spec_get_reference(const amk_spec *s, amk_spec_reference *out)
{
    out->source = s->ref_source;
    out->entry = s->ref_entry;
    out->host = s->ref_host;
    out->default_config = s->ref_default_config;
}

int amk_spec_n_reference_args(const amk_spec *s) { return s->nref_args; }

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
                                            [AMK__ROLE_INOUT] = AMK_BUFFER_INOUT};
    out->name = b->name;
    out->dtype = b->dtype < 0 ? "input" : amk__dtype_names[b->dtype];
    out->role = roles[b->role];
    out->init = b->init;
    out->count = b->count;
    out->tolerance_reduction = b->tol_reduction;
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
