/* `amk calibrate` without --fit: a device's ceilings measured by tuning the two calibration
 * kernels exhaustively at their default shapes on one backend (every trial checked and
 * logged like any other), then stored where every later run's cost model reads them. copy
 * gives the device-copy bandwidth (minimum bytes / best latency), fma the f32 FMA rate
 * (flops / best latency). */
#include "amk_search.h"

#include <stdio.h>
#include <string.h>

/* Tunes one calibration kernel; fills m (its rate from work / best latency). */
static int measure_one(const amk_registry *reg, const char *backend,
                       const amk_backend_opts *opts, const char *results,
                       amk_ceiling_measure *m, amk_target *target, char *device, size_t devcap,
                       amk_calibrate_stage *stage, amk_diag *d)
{
    const amk_spec *s = amk_registry_find(reg, m->kernel);
    if (!s) {
        *stage = AMK_CALIBRATE_ON_SPEC;
        return amk_diag_set(d, AMK_ENOENT, "the built-in calibration kernel '%s' is missing",
                            m->kernel);
    }
    amk_shape sh;
    amk_spec_shape(s, 0, &sh);
    amk_evaluator *ev = NULL;
    *stage = AMK_CALIBRATE_ON_BACKEND;
    int e = amk_evaluator_create(backend, opts, s, &sh, &ev, d);
    if (e != AMK_OK)
        return e;
    *stage = AMK_CALIBRATE_ON_RUN;
    *target = *amk_evaluator_target(ev);
    snprintf(device, devcap, "%s", amk_evaluator_device(ev));
    amk_space *sp = NULL;
    e = amk_space_create(s, &sh, &target->limits, &sp, d);
    amk_loop_opts lo = {.space = sp, .ev = ev, .strategy = "exhaustive",
                        .results_path = results, .batch = 16,
                        .min_gain = AMK_HISTORY_MIN_GAIN};
    amk_loop_result res;
    if (e == AMK_OK)
        e = amk_loop_run(&lo, &res, d);
    if (e == AMK_OK && !(res.best.has && res.best.kind == AMK_LAT_MEASURED))
        e = amk_diag_set(d, AMK_EBACKEND, "%s: no config was measured correct (see %s)",
                         m->kernel, results);
    amk_cost_terms cost;
    if (e == AMK_OK && (e = amk_config_cost(&res.best.config, &target->limits, &cost, d)) ==
                           AMK_OK) {
        double work = m->flops ? (double)cost.flops : (double)cost.min_bytes;
        m->trials = res.trials;
        m->best_us = res.best.latency_us;
        m->rate = work / (res.best.latency_us * 1e-6);
    }
    amk_space_free(sp);
    amk_evaluator_free(ev);
    return e;
}

int amk_calibrate_measure(const amk_registry *reg, const char *backend,
                          const amk_backend_opts *opts, const char *results,
                          amk_calibration_run *out, amk_diag *d)
{
    memset(out, 0, sizeof *out);
    snprintf(out->results, sizeof out->results, "%s", results ? results : "");
    if (!results) {
        char dir[3072];
        out->stage = AMK_CALIBRATE_ON_RESULTS;
        if (amk_fs_cache_dir(dir, sizeof dir) != AMK_OK)
            return amk_diag_set(d, AMK_EIO, "cannot find a cache directory");
        snprintf(out->results, sizeof out->results, "%s/calibrate", dir);
        int e = amk_fs_mkdir_p(out->results, d);
        if (e != AMK_OK)
            return e;
        snprintf(out->results, sizeof out->results, "%s/calibrate/results.tsv", dir);
    }
    out->copy = (amk_ceiling_measure){.kernel = "copy"};
    out->fma = (amk_ceiling_measure){.kernel = "fma", .flops = 1};
    amk_ceiling_measure *m[2] = {&out->copy, &out->fma};
    static const int device0 = 0;
    amk_backend_opts one = {0};
    if (opts)
        one = *opts;
    if (one.ndevices == 0) {
        one.devices = &device0;
        one.ndevices = 1;
    }
    for (int i = 0; i < 2; i++) {
        int e = measure_one(reg, backend, &one, out->results, m[i], &out->target, out->device,
                            sizeof out->device, &out->stage, d);
        if (e != AMK_OK)
            return e;
    }
    out->target.bw_measured = out->copy.rate;
    out->target.measured[AMK_UNIT_SIMT_F32] = out->fma.rate;
    out->stage = AMK_CALIBRATE_ON_CEILINGS;
    amk_ceilings_path(&out->target, out->ceilings_file, sizeof out->ceilings_file);
    int e = amk_ceilings_save(&out->target, out->ceilings_file, d);
    if (e == AMK_OK)
        out->stage = AMK_CALIBRATE_DONE;
    return e;
}
