/* How big a search space is on a target: raw points, configs valid there (restrictions and
 * launch limits) and configs the cost model also finds feasible (registers, blocks per SM).
 * Small spaces are enumerated; large ones are estimated from uniform raw samples, with a
 * fixed seed so the same space always gives the same estimate. */
#include "amk_cost_model.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Above this many raw points the counts are estimated (unless exact is asked for). */
#define SPACE_EXACT_LIMIT 2e6

typedef struct count_state {
    const amk_target *t;
    int64_t valid, feasible;
} count_state;

static int count_cb(const amk_config *c, void *ud)
{
    count_state *cs = ud;
    cs->valid++;
    if (amk_cost_feasible(c, cs->t, NULL) == AMK_OK)
        cs->feasible++;
    return 0;
}

/* Uniform raw samples: the valid and feasible fractions times the raw size. */
static int estimate(const amk_space *sp, const amk_target *t, amk_space_counts *out)
{
    const amk_spec *s = amk_space_spec(sp);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        return AMK_ENOMEM;
    gsl_rng_set(rng, 1);
    long nv = 0, nf = 0;
    amk_config c;
    amk_config_default(s, amk_space_shape(sp), &c);
    for (long i = 0; i < AMK_SPACE_SAMPLES; i++) {
        for (int p = 0; p < amk_spec_n_params(s); p++)
            c.choice[p] = (uint8_t)gsl_rng_uniform_int(
                rng, (unsigned long)amk_spec_param_n_choices(s, p));
        if (amk_space_valid(sp, &c, NULL) == AMK_OK) {
            nv++;
            if (amk_cost_feasible(&c, t, NULL) == AMK_OK)
                nf++;
        }
    }
    gsl_rng_free(rng);
    out->valid = round(out->raw * (double)nv / AMK_SPACE_SAMPLES);
    out->feasible = round(out->raw * (double)nf / AMK_SPACE_SAMPLES);
    out->samples = AMK_SPACE_SAMPLES;
    return AMK_OK;
}

/* Can an agent start from the spec's default config here? */
static void check_default(const amk_space *sp, const amk_target *t, amk_space_counts *out)
{
    amk_config def;
    amk_diag d;
    amk_diag_clear(&d);
    amk_config_default(amk_space_spec(sp), amk_space_shape(sp), &def);
    amk_config_id(&def, out->default_id);
    out->default_ok = amk_space_valid(sp, &def, &d) == AMK_OK &&
                      amk_cost_feasible(&def, t, &d) == AMK_OK;
    if (!out->default_ok)
        snprintf(out->default_reason, sizeof out->default_reason, "%s", d.msg);
}

int amk_space_size_on(const amk_space *sp, const amk_target *t, int exact, amk_space_counts *out,
                      amk_diag *d)
{
    memset(out, 0, sizeof *out);
    out->raw = amk_space_raw_size(sp);
    out->exact = exact || out->raw <= SPACE_EXACT_LIMIT;
    if (out->exact) {
        count_state cs = {t, 0, 0};
        int e = amk_space_enumerate(sp, count_cb, &cs);
        if (e != AMK_OK)
            return amk_diag_set(d, e, "kernel %s: enumerating the space failed: %s",
                                amk_spec_name(amk_space_spec(sp)), amk_strerror(e));
        out->valid = (double)cs.valid;
        out->feasible = (double)cs.feasible;
    } else if (estimate(sp, t, out) != AMK_OK) {
        return amk_diag_set(d, AMK_ENOMEM, "%s", amk_strerror(AMK_ENOMEM));
    }
    check_default(sp, t, out);
    return AMK_OK;
}
