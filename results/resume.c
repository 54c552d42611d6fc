/* Resume state: one streaming pass over results.tsv restores what a continued run needs
 * for one (kernel, shape, device): the ids already evaluated, the incumbent (the caller's
 * rule, fed the matching rows), and the trial number to continue from (over all rows of
 * the file, whatever their key). */
#include "results_int.h"

#include <stdlib.h>
#include <string.h>

struct amk_resume {
    int64_t last_trial;
    size_t rows;
    amk_idset *seen;
    const amk_best_rule *rule;
    void *rule_state; /* rule->state_size bytes, NULL without a rule */
};

typedef struct load_ctx {
    amk_resume *r;
    const char *kernel, *shape, *device;
    const char *path;
    amk_diag *d;
} load_ctx;

static int on_row(const amk_row *row, void *ud)
{
    load_ctx *c = ud;
    amk_resume *r = c->r;
    if (row->trial > r->last_trial)
        r->last_trial = row->trial;
    if ((c->kernel && strcmp(row->kernel, c->kernel) != 0) ||
        (c->shape && strcmp(row->shape, c->shape) != 0) ||
        (c->device && strcmp(row->device, c->device) != 0))
        return 0;
    r->rows++;
    if (row->config_id[0] && amk_idset_add(r->seen, row->config_id) < 0)
        return amk_diag_set(c->d, AMK_ENOMEM, "%s: out of memory", c->path);
    if (r->rule)
        r->rule->add(r->rule_state, row, 0);
    return 0;
}

int amk_resume_load(const char *path, const char *kernel, const char *shape,
                    const char *device, const amk_best_rule *rule, amk_resume **out,
                    amk_diag *d)
{
    if (!path || !out)
        return amk_diag_set(d, AMK_EINVAL, "amk_resume_load: NULL argument");
    *out = NULL;
    amk_resume *r = calloc(1, sizeof *r);
    if (!r || !(r->seen = amk_idset_create()) ||
        (rule && !(r->rule_state = calloc(1, rule->state_size ? rule->state_size : 1)))) {
        amk_resume_free(r);
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path);
    }
    r->rule = rule;
    load_ctx c = {r, kernel, shape, device, path, d};
    int rc = amk_tsv_read(path, on_row, &c, NULL, d);
    if (rc == AMK_ENOENT) { /* nothing recorded yet: resuming starts from scratch */
        amk_diag_clear(d);
        rc = AMK_OK;
    }
    if (rc) {
        amk_resume_free(r);
        return rc;
    }
    *out = r;
    return AMK_OK;
}

void amk_resume_free(amk_resume *r)
{
    if (!r)
        return;
    amk_idset_free(r->seen);
    free(r->rule_state);
    free(r);
}

int64_t amk_resume_last_trial(const amk_resume *r)
{
    return r ? r->last_trial : 0;
}

size_t amk_resume_rows(const amk_resume *r)
{
    return r ? r->rows : 0;
}

int amk_resume_seen(const amk_resume *r, const char *config_id)
{
    return r ? amk_idset_has(r->seen, config_id) : 0;
}

const amk_row *amk_resume_incumbent(const amk_resume *r)
{
    return r && r->rule ? r->rule->best(r->rule_state, NULL) : NULL;
}

struct amk_idset *amk_resume_take_seen(amk_resume *r)
{
    if (!r)
        return NULL;
    amk_idset *fresh = amk_idset_create();
    if (!fresh)
        return NULL;
    amk_idset *seen = r->seen;
    r->seen = fresh;
    return seen;
}
