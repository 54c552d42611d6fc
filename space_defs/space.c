/* The space of one spec at one shape on one device: enumeration (odometer order, only
 * the values that depend on the changed param are recomputed, and a restriction that fails
 * on a prefix of params skips every config sharing that prefix), rejection sampling,
 * neighbours and the mapping of unit-cube points to valid configs. */
#include "space_defs_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Derived values and restrictions are grouped by level + 1: group 0 depends on no param
 * (computed once at create), group g on params 0..g-1 with param g-1 among them. */
struct amk_space {
    const amk_spec *spec;
    amk_shape shape;
    amk_limits lim;
    int n; /* params */
    int base_ok;
    int64_t base[AMK__MAX_SLOTS]; /* dims, limits, group-0 derived, params at choice 0 */
    int dstart[AMK_MAX_PARAMS + 2];
    const amk__derived *dlist[AMK__MAX_DERIVED];
    int rstart[AMK_MAX_PARAMS + 2];
    const amk_expr *rlist[AMK__MAX_RESTRICT];
};

/* Evaluates groups g0..n on slots; returns 1 when all pass, else 0 with the failing group
 * in *fail_g (an arithmetic error counts as a failure: the config is invalid). */
static int eval_groups(const amk_space *sp, int64_t *slots, int g0, int *fail_g)
{
    const int last = sp->n;
    for (int g = g0; g <= last; g++) {
        for (int k = sp->dstart[g]; k < sp->dstart[g + 1]; k++) {
            const amk__derived *dv = sp->dlist[k];
            if (amk__expr_run(dv->e, slots, &slots[dv->slot], NULL)) {
                *fail_g = g;
                return 0;
            }
        }
        for (int k = sp->rstart[g]; k < sp->rstart[g + 1]; k++) {
            int64_t v;
            if (amk__expr_run(sp->rlist[k], slots, &v, NULL) || !v) {
                *fail_g = g;
                return 0;
            }
        }
    }
    if (amk__launch_check(sp->spec, slots, &sp->lim, NULL) != AMK_OK) {
        *fail_g = last;
        return 0;
    }
    return 1;
}

int amk_space_create(const amk_spec *s, const amk_shape *sh, const amk_limits *lim,
                     amk_space **out, amk_diag *d)
{
    *out = NULL;
    if (!s)
        return amk_diag_set(d, AMK_EINVAL, "amk_space_create: spec is NULL");
    amk_space *sp = calloc(1, sizeof *sp);
    if (!sp)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory creating the space of %s", s->name);
    sp->spec = s;
    sp->shape = sh ? *sh : s->shapes[0];
    sp->lim = lim ? *lim : *amk__limits_generous();
    sp->n = s->nparams;
    amk_config c;
    amk_config_default(s, &sp->shape, &c);
    int rc = amk__config_choices_ok(&c, d);
    if (rc) {
        free(sp);
        amk_diag_prefix(d, "space of %s", s->name);
        return rc;
    }
    /* group by level; dorder is already sorted by level, so topological order holds */
    int nd = 0, nr = 0;
    for (int g = 0; g <= sp->n; g++) {
        sp->dstart[g] = nd;
        for (int k = 0; k < s->nderived; k++)
            if (s->derived[s->dorder[k]].level + 1 == g)
                sp->dlist[nd++] = &s->derived[s->dorder[k]];
        sp->rstart[g] = nr;
        for (int k = 0; k < s->nrestrict; k++)
            if (s->restrict_[k].level + 1 == g)
                sp->rlist[nr++] = s->restrict_[k].e;
    }
    sp->dstart[sp->n + 1] = nd;
    sp->rstart[sp->n + 1] = nr;
    amk__slots_base(s, &sp->shape, &sp->lim, sp->base);
    for (int i = 0; i < sp->n; i++)
        sp->base[s->slot_params + i] = s->params[i].values[0];
    /* group 0 once: if it fails, no config of this shape on this device is valid */
    sp->base_ok = 1;
    for (int k = sp->dstart[0]; k < sp->dstart[1] && sp->base_ok; k++)
        if (amk__expr_run(sp->dlist[k]->e, sp->base, &sp->base[sp->dlist[k]->slot], NULL))
            sp->base_ok = 0;
    for (int k = sp->rstart[0]; k < sp->rstart[1] && sp->base_ok; k++) {
        int64_t v;
        if (amk__expr_run(sp->rlist[k], sp->base, &v, NULL) || !v)
            sp->base_ok = 0;
    }
    *out = sp;
    return AMK_OK;
}

void amk_space_free(amk_space *sp) { free(sp); }
const amk_spec *amk_space_spec(const amk_space *sp) { return sp->spec; }
const amk_shape *amk_space_shape(const amk_space *sp) { return &sp->shape; }
const amk_limits *amk_space_limits(const amk_space *sp) { return &sp->lim; }

double amk_space_raw_size(const amk_space *sp)
{
    double r = 1;
    for (int i = 0; i < sp->n; i++)
        r *= sp->spec->params[i].n;
    return r;
}

static int same_shape(const amk_spec *s, const amk_shape *a, const amk_shape *b)
{
    if (a->dtype != b->dtype)
        return 0;
    for (int i = 0; i < s->ndims; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

int amk_space_valid(const amk_space *sp, const amk_config *c, amk_diag *d)
{
    if (!c || c->spec != sp->spec)
        return amk_diag_set(d, AMK_ECONFIG, "config is not of kernel %s", sp->spec->name);
    if (!same_shape(sp->spec, &c->shape, &sp->shape)) {
        char a[256], b[256];
        amk_shape_format(sp->spec, &c->shape, a, sizeof a);
        amk_shape_format(sp->spec, &sp->shape, b, sizeof b);
        return amk_diag_set(d, AMK_ECONFIG, "config shape %s differs from the space's shape %s",
                            a, b);
    }
    return amk_config_check(c, &sp->lim, d);
}

/* Fast validity of a choice vector (no messages). */
static int point_valid(const amk_space *sp, const uint8_t *choice)
{
    if (!sp->base_ok)
        return 0;
    int64_t slots[AMK__MAX_SLOTS];
    const amk_spec *s = sp->spec;
    memcpy(slots, sp->base, (size_t)s->nslots * sizeof slots[0]);
    for (int i = 0; i < sp->n; i++) {
        if (choice[i] >= s->params[i].n)
            return 0;
        slots[s->slot_params + i] = s->params[i].values[choice[i]];
    }
    int fg;
    return eval_groups(sp, slots, 1, &fg);
}

int amk_space_enumerate(const amk_space *sp, int (*cb)(const amk_config *c, void *ud), void *ud)
{
    if (!sp || !cb)
        return AMK_EINVAL;
    if (!sp->base_ok)
        return AMK_OK;
    const amk_spec *s = sp->spec;
    const int n = sp->n;
    const int pbase = s->slot_params;
    int64_t slots[AMK__MAX_SLOTS];
    memcpy(slots, sp->base, (size_t)s->nslots * sizeof slots[0]);
    amk_config c;
    amk_config_default(s, &sp->shape, &c);
    memset(c.choice, 0, sizeof c.choice);
    int nch[AMK_MAX_PARAMS];
    for (int i = 0; i < n; i++)
        nch[i] = s->params[i].n;
    int g = 1;
    for (;;) {
        int fg;
        if (eval_groups(sp, slots, g, &fg)) {
            if (cb(&c, ud))
                return AMK_OK;
            fg = n; /* advance the fastest param */
        }
        /* Group fg failed: it depends on params 0..fg-1 only, so every config with this
         * prefix fails too; advance param fg-1 and reset the faster ones. */
        int L = fg - 1;
        for (int k = L + 1; k < n; k++)
            if (c.choice[k]) {
                c.choice[k] = 0;
                slots[pbase + k] = s->params[k].values[0];
            }
        while (L >= 0) {
            if (++c.choice[L] < nch[L])
                break;
            c.choice[L] = 0;
            slots[pbase + L] = s->params[L].values[0];
            L--;
        }
        if (L < 0)
            return AMK_OK;
        slots[pbase + L] = s->params[L].values[c.choice[L]];
        g = L + 1;
    }
}

static int count_cb(const amk_config *c, void *ud)
{
    (void)c;
    (*(int64_t *)ud)++;
    return 0;
}

int64_t amk_space_count(const amk_space *sp)
{
    int64_t n = 0;
    int rc = amk_space_enumerate(sp, count_cb, &n);
    return rc ? rc : n;
}

int amk_space_sample(const amk_space *sp, const amk_rng *rng, amk_config *out, long max_tries)
{
    if (!sp || !rng || !rng->below || !out || max_tries <= 0)
        return AMK_EINVAL;
    if (!sp->base_ok)
        return AMK_EEMPTY;
    amk_config c;
    amk_config_default(sp->spec, &sp->shape, &c);
    for (long t = 0; t < max_tries; t++) {
        for (int i = 0; i < sp->n; i++)
            c.choice[i] = (uint8_t)rng->below(rng->state, (unsigned long)sp->spec->params[i].n);
        if (point_valid(sp, c.choice)) {
            *out = c;
            return AMK_OK;
        }
    }
    return AMK_EEMPTY;
}

int amk_space_neighbours(const amk_space *sp, const amk_config *c, amk_config *out, int cap)
{
    if (!sp || !c || c->spec != sp->spec || cap < 0)
        return AMK_EINVAL;
    int k = 0;
    for (int i = 0; i < sp->n && k < cap; i++) {
        for (int delta = -1; delta <= 1 && k < cap; delta += 2) {
            int ch = (int)c->choice[i] + delta;
            if (ch < 0 || ch >= sp->spec->params[i].n)
                continue;
            amk_config nb = *c;
            nb.shape = sp->shape;
            nb.choice[i] = (uint8_t)ch;
            if (point_valid(sp, nb.choice))
                out[k++] = nb;
        }
    }
    return k;
}

/* Breadth-first search over neighbour moves (through invalid points too) from `start`:
 * finds a valid config nearest in choice-index steps. Bounded by max_nodes. */
#define BFS_MAX_NODES 4096
#define BFS_TABLE 8192 /* power of two, > 2 * BFS_MAX_NODES */

typedef struct bfs {
    int n;
    uint8_t (*nodes)[AMK_MAX_PARAMS];
    int *table; /* node index + 1, 0 = empty */
} bfs;

static int bfs_insert(bfs *b, int *count, const uint8_t *key)
{
    uint64_t h = amk_hash64(key, (size_t)b->n) & (BFS_TABLE - 1);
    for (;;) {
        int e = b->table[h];
        if (!e)
            break;
        if (!memcmp(b->nodes[e - 1], key, (size_t)b->n))
            return 0;
        h = (h + 1) & (BFS_TABLE - 1);
    }
    memcpy(b->nodes[*count], key, (size_t)b->n);
    b->table[h] = ++*count;
    return 1;
}

static int bfs_nearest(const amk_space *sp, const uint8_t *start, uint8_t *found)
{
    bfs b = {.n = sp->n};
    b.nodes = malloc(BFS_MAX_NODES * sizeof *b.nodes);
    b.table = calloc(BFS_TABLE, sizeof *b.table);
    int rc = AMK_EEMPTY;
    if (!b.nodes || !b.table) {
        rc = AMK_ENOMEM;
        goto done;
    }
    int count = 0, head = 0;
    bfs_insert(&b, &count, start);
    while (head < count) {
        const uint8_t *cur = b.nodes[head++];
        if (point_valid(sp, cur)) {
            memcpy(found, cur, (size_t)sp->n);
            rc = AMK_OK;
            goto done;
        }
        for (int i = 0; i < sp->n; i++)
            for (int delta = -1; delta <= 1; delta += 2) {
                int ch = (int)cur[i] + delta;
                if (ch < 0 || ch >= sp->spec->params[i].n)
                    continue;
                if (count >= BFS_MAX_NODES)
                    continue;
                uint8_t nb[AMK_MAX_PARAMS];
                memcpy(nb, cur, (size_t)sp->n);
                nb[i] = (uint8_t)ch;
                bfs_insert(&b, &count, nb);
            }
    }
done:
    free(b.nodes);
    free(b.table);
    return rc;
}

int amk_space_from_unit(const amk_space *sp, const double *u, const amk_rng *rng,
                        amk_config *out)
{
    if (!sp || !u || !out)
        return AMK_EINVAL;
    if (!sp->base_ok)
        return AMK_EEMPTY;
    amk_config c;
    amk_config_default(sp->spec, &sp->shape, &c);
    for (int i = 0; i < sp->n; i++) {
        int nc = sp->spec->params[i].n;
        double x = u[i];
        int k = isfinite(x) && x > 0 ? (int)floor(x * nc) : 0;
        c.choice[i] = (uint8_t)(k < 0 ? 0 : k >= nc ? nc - 1 : k);
    }
    if (sp->n == 0 || point_valid(sp, c.choice)) {
        *out = c;
        return AMK_OK;
    }
    int rc = bfs_nearest(sp, c.choice, c.choice);
    if (rc == AMK_OK) {
        *out = c;
        return AMK_OK;
    }
    if (rc != AMK_EEMPTY || !rng)
        return rc;
    return amk_space_sample(sp, rng, out, 100000);
}
