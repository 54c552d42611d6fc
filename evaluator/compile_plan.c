/* `amk compile`'s plan: which units to compile without running anything (the default
 * config and N seeded random valid configs of each kernel, or the configs given, then one
 * reference kernel per kernel and dtype), and compiling them through the compile pool in two
 * passes (configs, then references). A config that is not valid on the target is reported
 * as rejected and never reaches a compiler. */
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
    void (*warn)(const char *msg, void *ud);
    void *ud;
};

/* amk_space_sample draws from the plan's GSL stream through amk's small rng interface. */
static unsigned long gsl_below(void *rng, unsigned long n)
{
    return gsl_rng_uniform_int(rng, n);
}

static void warn(const amk_compile_plan *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warn(const amk_compile_plan *p, const char *fmt, ...)
{
    if (!p->warn)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->warn(msg, p->ud);
}

amk_compile_plan *amk_compile_plan_create(const amk_target *t, uint64_t seed,
                                          void (*warn_cb)(const char *msg, void *ud), void *ud)
{
    amk_compile_plan *p = calloc(1, sizeof *p);
    if (!p || !(p->rng = gsl_rng_alloc(gsl_rng_mt19937))) {
        free(p);
        return NULL;
    }
    gsl_rng_set(p->rng, (unsigned long)seed);
    p->target = t;
    p->warn = warn_cb;
    p->ud = ud;
    return p;
}

void amk_compile_plan_free(amk_compile_plan *p)
{
    if (!p)
        return;
    gsl_rng_free(p->rng);
    free(p->v);
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
        warn(p, "%s: the default config is not valid on %s (%s); skipping it", amk_spec_name(s),
             p->target->key, why.msg);
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
        warn(p, "%s: only %ld distinct valid configs found for --random %ld", amk_spec_name(s),
             got, random);
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
                   p->v[k].cfg.shape.dtype == p->v[i].cfg.shape.dtype;
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
