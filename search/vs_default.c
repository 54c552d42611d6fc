/* The speedup of a search's best over the spec's default config: the default's fastest
 * measured (or replayed) row of this kernel/shape/device in the results file; a sim backend
 * that did not visit it is asked for its recorded latency (no row is written). Without a
 * number the speedup is NAN and reason says why: a prediction is never compared as if it
 * were a measurement. Rows timed beside the same peer as the best are compared in the
 * best's clock state (amk_peer_scaled), as the best rule compares them (history.c). */
#include "amk_search.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct default_scan {
    const amk_spec *spec;
    const char *kernel, *shape, *device, *id;
    const amk_incumbent *best;
    double held; /* the default's latency in the best's clock state */
    amk_vs_default *out;
} default_scan;

static int default_row(const amk_row *r, void *ud)
{
    default_scan *s = ud;
    amk_vs_default *o = s->out;
    if (!amk_row_has_evidence(r) || strcmp(r->kernel, s->kernel) ||
        strcmp(r->shape, s->shape) || strcmp(r->device, s->device))
        return 0;
    char id[17];
    amk_row_config_id(s->spec, r, id); /* a row older than a param: its default's id */
    if (strcmp(id, s->id))
        return 0;
    double held = s->best ? amk_peer_scaled(r->latency_us, r->peer, r->peer_us, s->best->peer,
                                            s->best->peer_us)
                          : NAN;
    if (!isfinite(held))
        held = r->latency_us;
    if (!isfinite(s->held) || held < s->held) {
        s->held = held;
        snprintf(o->beside, sizeof o->beside, "%s", held != r->latency_us ? r->peer : "");
        o->default_us = r->latency_us;
        o->kind = r->latency_kind;
        o->trial = r->trial;
    }
    return 0;
}

void amk_loop_vs_default(const char *results, amk_evaluator *ev, const amk_space *sp,
                         const char *device, const amk_incumbent *best, amk_vs_default *out)
{
    const amk_spec *s = amk_space_spec(sp);
    char shape[256];
    amk_shape_format(s, amk_space_shape(sp), shape, sizeof shape);
    memset(out, 0, sizeof *out);
    out->default_us = out->speedup = NAN;
    out->kind = AMK_LAT_NONE;
    amk_config def;
    amk_config_default(s, amk_space_shape(sp), &def);
    amk_config_id(&def, out->config_id);
    default_scan sc = {s, amk_spec_name(s), shape, device, out->config_id, best, NAN, out};
    amk_diag d;
    amk_diag_clear(&d);
    amk_tsv_read(results, default_row, &sc, NULL, &d); /* a missing file: no number */
    const char *used = amk_evaluator_backend(ev);
    int sim = used && !strcmp(used, "sim");
    if (!isfinite(out->default_us) && sim) {
        amk_verdict v;
        amk_verdict_init(&v);
        const amk_config *cp = &def;
        if (amk_evaluator_run(ev, sp, &cp, 1, NAN, &v) == AMK_OK &&
            v.status == AMK_STATUS_OK && isfinite(v.latency_us)) {
            out->default_us = sc.held = v.latency_us;
            out->kind = v.latency_kind;
        }
    }
    int comparable = best && best->has && isfinite(best->latency_us) && best->latency_us > 0 &&
                     amk_latency_is_evidence(best->kind);
    if (isfinite(out->default_us) && comparable)
        out->speedup = round(sc.held / best->latency_us * 1e4) / 1e4;
    else if (!isfinite(out->default_us))
        snprintf(out->reason, sizeof out->reason, "the default config %s was not measured%s",
                 out->config_id, sim ? " in the recorded sweep or in the results file"
                                     : " in the results file");
    else
        snprintf(out->reason, sizeof out->reason, "the best config has no measured latency");
}

void amk_report_defaults(amk_report *rep, const amk_registry *reg, const char *reg_error)
{
    for (size_t g = 0; g < amk_report_ngroups(rep); g++) {
        const char *kernel, *shape;
        char why[1200], id[17];
        amk_report_group(rep, g, &kernel, &shape, NULL);
        const amk_spec *s = reg ? amk_registry_find(reg, kernel) : NULL;
        amk_shape sh;
        amk_diag d;
        amk_diag_clear(&d);
        if (!reg)
            snprintf(why, sizeof why, "the kernel specs did not load: %s", reg_error);
        else if (!s)
            snprintf(why, sizeof why, "kernel '%s' is not known here (add its folder with "
                     "--spec-dir)", kernel);
        else if (amk_shape_parse(s, shape, &sh, &d) != AMK_OK)
            snprintf(why, sizeof why, "shape '%s' does not parse for %s: %s", shape, kernel,
                     d.msg);
        else {
            amk_config cfg;
            amk_config_default(s, &sh, &cfg);
            amk_config_id(&cfg, id);
            amk_report_set_default(rep, g, id, NULL);
            continue;
        }
        amk_report_set_default(rep, g, NULL, why);
    }
}
