/* `amk compile`'s plan: which units to compile without running anything (the default
 * config and N seeded random valid configs of each kernel, or the configs given, then one
 * reference kernel per kernel and dtype), and compiling them through the compile pool in two
 * passes (configs, then references). A config that is not valid on the target is reported
 * as rejected and never reaches a compiler. amk_compile_plan_build makes the whole plan of
 * one command line: the target, the kernels, the units. */
#include "amk_evaluator.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Draws per wanted random config before giving up on finding more distinct ones. */
#define PLAN_TRIES_PER_CONFIG 20
#define PLAN_SAMPLE_TRIES 100000

struct amk_compile_plan {
    const amk_target *target;
    gsl_rng *rng;
    amk_compile_job *v;
    size_t n, cap;
    void (*note)(const char *msg, int warning, void *ud);
    void *ud;
    /* Owned by a plan amk_compile_plan_build made: */
    amk_target own_target;
    amk_registry *reg;
    char *arch;
};

/* amk_space_sample draws from the plan's GSL stream through amk's small rng interface. */
static unsigned long gsl_below(void *rng, unsigned long n)
{
    return gsl_rng_uniform_int(rng, n);
}

static void note(const amk_compile_plan *p, int warning, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(const amk_compile_plan *p, int warning, const char *fmt, ...)
{
    if (!p->note)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->note(msg, warning, p->ud);
}

amk_compile_plan *amk_compile_plan_create(const amk_target *t, uint64_t seed,
                                          void (*note_cb)(const char *msg, int warning,
                                                          void *ud),
                                          void *ud)
{
    amk_compile_plan *p = calloc(1, sizeof *p);
    if (!p || !(p->rng = gsl_rng_alloc(gsl_rng_mt19937))) {
        free(p);
        return NULL;
    }
    gsl_rng_set(p->rng, (unsigned long)seed);
    p->target = t;
    p->note = note_cb;
    p->ud = ud;
    return p;
}

void amk_compile_plan_free(amk_compile_plan *p)
{
    if (!p)
        return;
    gsl_rng_free(p->rng);
    free(p->v);
    amk_registry_free(p->reg);
    free(p->arch);
    free(p);
}

const amk_compile_job *amk_compile_plan_units(const amk_compile_plan *p, size_t *n)
{
    *n = p->n;
    return p->v;
}

static amk_compile_job *push(amk_compile_plan *p, const amk_config *c, int reference)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        amk_compile_job *nv = realloc(p->v, cap * sizeof *nv);
        if (!nv)
            return NULL;
        p->v = nv;
        p->cap = cap;
    }
    amk_compile_job *u = &p->v[p->n++];
    memset(u, 0, sizeof *u);
    u->spec = c->spec;
    u->cfg = *c;
    u->reference = reference;
    return u;
}

static int planned(const amk_compile_plan *p, const amk_config *c)
{
    for (size_t i = 0; i < p->n; i++)
        if (!p->v[i].reference && p->v[i].spec == c->spec && amk_config_equal(&p->v[i].cfg, c))
            return 1;
    return 0;
}

int amk_compile_plan_kernel(amk_compile_plan *p, const amk_spec *s, const amk_shape *sh,
                            long random, amk_diag *d)
{
    amk_space *sp;
    int e = amk_space_create(s, sh, &p->target->limits, &sp, d);
    if (e != AMK_OK) {
        amk_diag_prefix(d, "%s", amk_spec_name(s));
        return e;
    }
    amk_config c;
    amk_config_default(s, sh, &c);
    amk_diag why;
    amk_diag_clear(&why);
    if (amk_space_valid(sp, &c, &why) == AMK_OK) {
        if (!push(p, &c, 0))
            goto oom;
    } else {
        note(p, 1, "%s: the default config is not valid on %s (%s); skipping it",
             amk_spec_name(s), p->target->key, why.msg);
    }
    long got = 0;
    for (long tries = 0; got < random && tries < PLAN_TRIES_PER_CONFIG * random + 100; tries++) {
        e = amk_space_sample(sp, &(amk_rng){gsl_below, p->rng}, &c, PLAN_SAMPLE_TRIES);
        if (e == AMK_EEMPTY)
            break;
        if (e != AMK_OK || planned(p, &c))
            continue;
        if (!push(p, &c, 0))
            goto oom;
        got++;
    }
    if (got < random)
        note(p, 1, "%s: only %ld distinct valid configs found for --random %ld",
             amk_spec_name(s), got, random);
    amk_space_free(sp);
    return AMK_OK;
oom:
    amk_space_free(sp);
    return amk_diag_set(d, AMK_ENOMEM, "out of memory");
}

int amk_compile_plan_config(amk_compile_plan *p, const amk_config *c, amk_diag *d)
{
    if (planned(p, c))
        return AMK_OK;
    amk_compile_job *u = push(p, c, 0);
    if (!u)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    amk_space *sp;
    amk_diag why;
    amk_diag_clear(&why);
    if (amk_space_create(c->spec, &c->shape, &p->target->limits, &sp, &why) != AMK_OK)
        return AMK_OK; /* the compile itself says what is wrong */
    if (amk_space_valid(sp, c, &why) != AMK_OK) {
        u->res.status = AMK_STATUS_REJECTED;
        amk_config_id(c, u->res.config_id);
        u->res.compile_ms = NAN;
        snprintf(u->res.reason, sizeof u->res.reason, "not valid on %s: %s", p->target->key,
                 why.msg);
    }
    amk_space_free(sp);
    return AMK_OK;
}

int amk_compile_plan_references(amk_compile_plan *p, amk_diag *d)
{
    size_t n_cfg = p->n;
    for (size_t i = 0; i < n_cfg; i++) {
        if (p->v[i].res.status == AMK_STATUS_REJECTED)
            continue;
        int dup = 0;
        for (size_t k = n_cfg; k < p->n; k++)
            dup |= p->v[k].spec == p->v[i].spec &&
                   amk_config_same_reference(&p->v[k].cfg, &p->v[i].cfg);
        amk_config c = p->v[i].cfg; /* push may move p->v */
        if (!dup && !push(p, &c, 1))
            return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    }
    return AMK_OK;
}

int amk_compile_plan_run(amk_compile_plan *p, const char *arch, const amk_backend_opts *opts,
                         amk_diag *d)
{
    size_t cap = p->n ? p->n : 1;
    amk_compile_result *res = calloc(cap, sizeof *res);
    const amk_config **cfgs = calloc(cap, sizeof *cfgs);
    size_t *idx = calloc(cap, sizeof *idx);
    int e = res && cfgs && idx ? AMK_OK : amk_diag_set(d, AMK_ENOMEM, "out of memory");
    for (int pass = 0; e == AMK_OK && pass < 2; pass++) {
        size_t m = 0;
        for (size_t i = 0; i < p->n; i++)
            if (p->v[i].reference == pass && p->v[i].res.status != AMK_STATUS_REJECTED) {
                cfgs[m] = &p->v[i].cfg;
                idx[m++] = i;
            }
        if (m == 0)
            continue;
        e = pass ? amk_compile_references(cfgs, m, arch, opts, res, d)
                 : amk_compile_batch(cfgs, m, arch, opts, res, d);
        for (size_t k = 0; e == AMK_OK && k < m; k++)
            p->v[idx[k]].res = res[k];
    }
    free(res);
    free(cfgs);
    free(idx);
    return e;
}

/* ---------- the plan of one command line ------------------------------------------------ */

/* The target whose limits decide validity: o->target, else the target of o->arch (the
 * default's limits, with a note, when no known target has that arch), else the default. */
static int plan_target(amk_compile_plan *p, const amk_compile_plan_opts *o, amk_diag *d)
{
    const amk_target *t;
    if (o->target || !o->arch) {
        int e = amk_target_resolve(o->target, &t, d);
        if (e != AMK_OK)
            return e;
        amk_target_with_ceilings(t, &p->own_target);
    } else if ((t = amk_target_find(o->arch)) != NULL) {
        p->own_target = *t;
    } else {
        t = amk_target_default();
        p->own_target = *t;
        note(p, 0, "no known target has arch %s; using %s's limits to pick valid configs",
             o->arch, t->key);
    }
    p->target = &p->own_target;
    p->arch = strdup(o->arch ? o->arch : t->arch);
    return p->arch ? AMK_OK : amk_diag_set(d, AMK_ENOMEM, "out of memory");
}

/* Default + random configs of one kernel at o->shape (NULL: its default shape). */
static int plan_kernel(amk_compile_plan *p, const amk_compile_plan_opts *o, const amk_spec *s,
                       amk_diag *d)
{
    amk_shape sh;
    if (!o->shape) {
        amk_spec_shape(s, 0, &sh);
    } else {
        int e = amk_shape_parse(s, o->shape, &sh, d);
        if (e != AMK_OK) {
            amk_diag_prefix(d, "%s: --shape", amk_spec_name(s));
            return e;
        }
    }
    return amk_compile_plan_kernel(p, s, &sh, o->random, d);
}

/* The configs of o->config_path (an object or an array of them), each of o->kernel when
 * one is named. Adding one can only fail for memory: *on is then the units step. */
static int plan_config_file(amk_compile_plan *p, const amk_compile_plan_opts *o,
                            amk_compile_plan_stage *on, amk_diag *d)
{
    amk_config *v = NULL;
    size_t n = 0;
    int e = amk_configs_read(p->reg, o->config_path, 1, &v, &n, d);
    for (size_t i = 0; e == AMK_OK && i < n; i++) {
        const char *name = amk_spec_name(v[i].spec);
        if (o->kernel && strcmp(o->kernel, name) != 0)
            e = amk_diag_set(d, AMK_EINVAL, "%s: config %zu is for kernel '%s', not '%s'",
                             o->config_path, i, name, o->kernel);
        else if ((e = amk_compile_plan_config(p, &v[i], d)) != AMK_OK)
            *on = AMK_COMPILE_PLAN_ON_UNITS;
    }
    free(v);
    return e;
}

/* The units of the command line, in order: a config file, or every kernel, or one. */
static int plan_units(amk_compile_plan *p, const amk_compile_plan_opts *o,
                      amk_compile_plan_stage *on, amk_diag *d)
{
    if (o->config_path)
        return plan_config_file(p, o, on, d);
    int e = AMK_OK;
    if (o->all) {
        for (int i = 0; e == AMK_OK && i < amk_registry_count(p->reg); i++)
            e = plan_kernel(p, o, amk_registry_at(p->reg, i), d);
        return e;
    }
    const amk_spec *s;
    if (!o->kernel)
        return amk_diag_set(d, AMK_EINVAL, "name a kernel, all kernels or a config file");
    if ((e = amk_registry_lookup(p->reg, o->kernel, &s, d)) != AMK_OK)
        return e;
    return plan_kernel(p, o, s, d);
}

int amk_compile_plan_build(const amk_compile_plan_opts *o, amk_compile_plan **out,
                           amk_compile_plan_stage *failed_on, amk_diag *d)
{
    amk_compile_plan_stage on = AMK_COMPILE_PLAN_ON_INPUT;
    amk_compile_plan *p = amk_compile_plan_create(NULL, o->seed, o->note, o->ud);
    int e = p ? plan_target(p, o, d) : amk_diag_set(d, AMK_ENOMEM, "out of memory");
    if (e == AMK_OK)
        e = amk_registry_open(o->spec_dirs, o->n_spec_dirs, &p->reg, d);
    if (e == AMK_OK)
        e = plan_units(p, o, &on, d);
    if (e == AMK_OK && !o->no_reference && (e = amk_compile_plan_references(p, d)) != AMK_OK)
        on = AMK_COMPILE_PLAN_ON_UNITS;
    *failed_on = e == AMK_OK ? AMK_COMPILE_PLAN_DONE : on;
    if (e != AMK_OK) {
        amk_compile_plan_free(p);
        p = NULL;
    }
    *out = p;
    return e;
}

const char *amk_compile_plan_arch(const amk_compile_plan *p)
{
    return p->arch ? p->arch : p->target->arch;
}
